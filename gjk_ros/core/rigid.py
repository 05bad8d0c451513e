# Copyright 2026 gjk_ros maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Rigid transforms: the one home of rotations, pose validity and the coordinate bound.

Every input with an orientation goes through here, each under its own convention:

- **Planning-scene poses** (MoveIt collision objects): a quaternion whose squared norm is off
  unit by more than ``TF2_QUATERNION_TOLERANCE`` is rejected, within it normalised
  (``tf2_quaternion``). ``/tf`` itself follows tf2's own rule, which normalises any finite,
  non-zero quaternion (``gjk_ros.ros.inputs.tf_buffer``).
- **RViz** (markers): any finite quaternion within ``MARKER_NORM_RANGE`` of unit length is
  normalised, as RViz does with a warning; a zero or absurd one is rejected
  (``marker_quaternion``).
- **Descriptions** (URDF floating joints, parameter bodies, planner poses): normalised unless
  shorter than ``MIN_QUATERNION_NORM`` (``unit_quaternion``).

All three normalise by scaling with the largest component first, so that components near
1e154 cannot overflow a squared norm into an identity rotation. A valid pose is a finite
homogeneous transform whose rotation is orthonormal with determinant +1
(``valid_pose_mask``, the compiled test the core applies to every pose it is given), and a
coordinate beyond ``MAX_COORDINATE`` is no sane robot or obstacle position.
"""

import math

import numpy as np

from ._jit import njit
from .query import _valid_pose
from .tolerances import ROTATION_TOLERANCE

__all__ = ['MAX_COORDINATE', 'marker_quaternion', 'matrix_to_quaternion', 'MIN_QUATERNION_NORM',
           'pose_matrix', 'quaternion_into', 'quaternion_matrix', 'tf2_quaternion',
           'unit_quaternion', 'valid_pose_mask']

# Metres. Beyond this a coordinate is not a sane robot or obstacle position; float64 still
# resolves 1e-10 m there, far below any distance a robot cares about.
MAX_COORDINATE = 1e6
# tf2's QUATERNION_NORMALIZATION_TOLERANCE (tf2/buffer_core.cpp), on |q.q - 1|.
TF2_QUATERNION_TOLERANCE = 1e-2
# A marker quaternion is normalised when its norm is within this factor of 1.
MARKER_NORM_RANGE = 1e3
# A quaternion shorter than this carries no rotation; normalising it would amplify noise.
MIN_QUATERNION_NORM = 1e-6


def _norm(quaternion):
    """Return the norm of a finite 4-vector without overflow (scaled by its largest part)."""
    largest = max(abs(v) for v in quaternion)
    if largest == 0.0:
        return 0.0
    return largest * math.sqrt(sum((v / largest) ** 2 for v in quaternion))


def _finite(quaternion):
    return all(math.isfinite(v) for v in quaternion)


def tf2_quaternion(quaternion):
    """
    Return the normalised (x, y, z, w) of a planning-scene quaternion and '', or None and why.

    Written so that NaN fails (every comparison with NaN is false) and an overflowing squared
    norm fails the tolerance instead of normalising into an identity rotation.
    """
    squared = sum(v * v for v in quaternion)
    if not abs(squared - 1.0) <= TF2_QUATERNION_TOLERANCE:
        if not _finite(quaternion):
            return None, 'non-finite quaternion'
        return None, ('quaternion squared norm %.6g is off by more than tf2 allows (%g)'
                      % (squared, TF2_QUATERNION_TOLERANCE))
    norm = math.sqrt(squared)
    return tuple(v / norm for v in quaternion), ''


def marker_quaternion(quaternion):
    """Return the normalised (x, y, z, w) of a marker orientation and '', or None and why."""
    if not _finite(quaternion):
        return None, 'orientation is not finite'
    norm = _norm(quaternion)
    if not 1.0 / MARKER_NORM_RANGE <= norm <= MARKER_NORM_RANGE:
        return None, ('orientation quaternion norm %.3g is not a rotation (normalised only '
                      'within [%g, %g])' % (norm, 1.0 / MARKER_NORM_RANGE, MARKER_NORM_RANGE))
    return _scaled(quaternion, norm), ''


def unit_quaternion(quaternion):
    """Return the normalised (x, y, z, w) of a described orientation and '', or None and why."""
    if not _finite(quaternion):
        return None, 'orientation is not finite'
    norm = _norm(quaternion)
    if norm < MIN_QUATERNION_NORM:
        return None, 'orientation quaternion has zero length'
    return _scaled(quaternion, norm), ''


def _scaled(quaternion, norm):
    largest = max(abs(v) for v in quaternion)
    scaled = [v / largest for v in quaternion]
    inner = norm / largest
    return tuple(v / inner for v in scaled)


@njit(inline=True)
def quaternion_into(x, y, z, w, out):
    """
    Write the rotation of a non-zero quaternion (x, y, z, w) into ``out[:3, :3]``.

    Normalised here, scaled by its largest component first (module docstring). Compiled for the
    kernels (the planner's forward kinematics); ``quaternion_matrix`` runs the same source as
    plain Python.
    """
    largest = max(abs(x), abs(y), abs(z), abs(w))
    x, y, z, w = x / largest, y / largest, z / largest, w / largest
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    out[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[0, 1] = 2.0 * (x * y - z * w)
    out[0, 2] = 2.0 * (x * z + y * w)
    out[1, 0] = 2.0 * (x * y + z * w)
    out[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[1, 2] = 2.0 * (y * z - x * w)
    out[2, 0] = 2.0 * (x * z - y * w)
    out[2, 1] = 2.0 * (y * z + x * w)
    out[2, 2] = 1.0 - 2.0 * (x * x + y * y)


# The plain-Python body of quaternion_into (the function itself when numba's JIT is disabled).
_quaternion_into_python = getattr(quaternion_into, 'py_func', quaternion_into)


def quaternion_matrix(x, y, z, w):
    """Return the (3, 3) rotation of a non-zero quaternion (x, y, z, w), normalised here."""
    out = np.empty((3, 3))
    _quaternion_into_python(float(x), float(y), float(z), float(w), out)
    return out


def pose_matrix(translation, quaternion):
    """Return the (4, 4) transform of a translation and a unit quaternion (x, y, z, w)."""
    matrix = np.eye(4)
    matrix[:3, :3] = quaternion_matrix(*quaternion)
    matrix[:3, 3] = translation
    return matrix


@njit
def _valid_poses(poses, tolerance, max_coordinate, out):
    for b in range(poses.shape[0]):
        p = poses[b]
        out[b] = _valid_pose(p, tolerance) and abs(p[0, 3]) <= max_coordinate and \
            abs(p[1, 3]) <= max_coordinate and abs(p[2, 3]) <= max_coordinate


def valid_pose_mask(poses):
    """
    Return which of (n, 4, 4) poses are valid rigid transforms within ``MAX_COORDINATE``.

    Finite, last row [0, 0, 0, 1], rotation orthonormal to ``ROTATION_TOLERANCE`` with
    determinant +1: the same test as the core's ``first_invalid_pose``.
    """
    poses = np.ascontiguousarray(poses, dtype=np.float64).reshape(-1, 4, 4)
    out = np.empty(poses.shape[0], dtype=np.bool_)
    _valid_poses(poses, ROTATION_TOLERANCE, MAX_COORDINATE, out)
    return out


def matrix_to_quaternion(rotation):
    """
    Return the unit quaternion (x, y, z, w) of a rotation matrix.

    Uses the largest diagonal term as pivot so it stays accurate for every rotation.

    Parameters
    ----------
    rotation : (3, 3) float
        A proper rotation matrix.

    Returns
    -------
    tuple of 4 float
        (x, y, z, w), unit length.

    """
    m = rotation
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        quat = ((m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s,
                0.25 * s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        quat = (0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s,
                (m[2, 1] - m[1, 2]) / s)
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        quat = ((m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s,
                (m[0, 2] - m[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        quat = ((m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s,
                (m[1, 0] - m[0, 1]) / s)
    norm = math.sqrt(sum(q * q for q in quat))
    return tuple(q / norm for q in quat)
