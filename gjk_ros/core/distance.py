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

"""The single-pair entry point, ``signed_distance``, and pose validation."""

import threading

import numpy as np

from ._jit import njit
from .cache import SimplexCache
from .query import _valid_pose, posed_buffers, posed_outputs, query_posed
from .status import DistanceResult, Status

__all__ = ['signed_distance', 'check_poses', 'first_invalid_pose']

# Rotation blocks must be orthonormal to this accuracy (poses from TF are normalised
# quaternions, good to ~1e-15; 1e-6 only rejects matrices that are not rotations at all).
ROTATION_TOLERANCE = 1e-6

_local = threading.local()


@njit
def first_invalid_pose(poses, tolerance):
    """
    Index of the first pose that is not a finite rigid transform, or -1.

    Compiled so that validating every pose of every update costs about 10 ns per body (the
    numpy version cost 30 us per update, more than the tracked queries of 100 pairs).
    """
    for b in range(poses.shape[0]):
        if not _valid_pose(poses[b], tolerance):
            return b
    return -1


def check_poses(poses, name, shape=None):
    """
    Validate homogeneous rigid transforms; return them as a float64 C array.

    ``poses`` is (..., 4, 4), or exactly ``shape`` when given. The test is the compiled
    ``first_invalid_pose`` (one definition of a valid pose, cheap enough for every update); only
    when it fails are the poses checked one by one to name the offenders. Raises ValueError
    naming ``name``.
    """
    try:
        array = np.ascontiguousarray(poses, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f'{name}: not an array of numbers ({error})') from None
    if shape is not None and array.shape != shape:
        raise ValueError(f'{name}: expected shape {shape}, got {array.shape}')
    if array.shape[-2:] != (4, 4):
        raise ValueError(f'{name}: expected (4, 4) homogeneous transforms, got {array.shape}')
    stack = array.reshape(-1, 4, 4)
    if first_invalid_pose(stack, ROTATION_TOLERANCE) >= 0:
        bad = [i for i in range(stack.shape[0])
               if first_invalid_pose(stack[i:i + 1], ROTATION_TOLERANCE) >= 0]
        where = '' if array.ndim == 2 else f' at {bad[:10]}'
        raise ValueError(f'{name}: not a finite rigid transform{where} (rotation must be '
                         'orthonormal with determinant +1, last row [0, 0, 0, 1])')
    return array


def _thread_buffers():
    """
    Work arrays reused by every call in this thread (the kernels never allocate).

    The last item is the cache of a cold call: an untracked query empties and ignores it, so a
    call without a SimplexCache allocates none.
    """
    buffers = getattr(_local, 'buffers', None)
    if buffers is None:
        work = posed_buffers()
        buffers = (work, posed_outputs(work), SimplexCache()._buffers)
        _local.buffers = buffers
    return buffers


def _is_plain_pose(pose):
    """Return True for a float64 C-contiguous (4, 4) ndarray: the kernel takes it as it is."""
    return (type(pose) is np.ndarray and pose.dtype == np.float64 and pose.shape == (4, 4)
            and pose.flags.c_contiguous)


_STATUSES = tuple(Status)


def _result(out):
    """Build the DistanceResult of output row 0 (one copy; the vectors are views of it)."""
    values, status, counts = out
    row = values[0].copy()
    n = counts[0].tolist()
    result = object.__new__(DistanceResult)
    # The dataclass is frozen: its __init__ sets each field through object.__setattr__, which
    # cost more than the tracked query itself; the fields are the same.
    result.__dict__.update(distance=float(row[0]), witness_a=row[1:4], witness_b=row[4:7],
                           normal=row[7:10], status=_STATUSES[status[0]], iterations=n[0],
                           error_bound=float(row[10]), support_calls=n[1],
                           hill_climb_steps=n[2], epa_iterations=n[3])
    return result


def signed_distance(a, pose_a, b, pose_b, cache=None, *, hill_climb=True):
    """
    Signed distance (the MTD) between two convex bodies.

    Parameters
    ----------
    a, b : ConvexPolytope
        The bodies.
    pose_a, pose_b : (4, 4) float
        Body-to-world homogeneous transforms.
    cache : SimplexCache, optional
        Tracked state of this ordered pair, read and updated (None: a cold start). Reusing it
        over time steps makes a query cost about one GJK iteration (Cameron 1997 section 4).
    hill_climb : bool
        Find support vertices by walking the vertex graph (True) or by scanning all vertices.

    Returns
    -------
    DistanceResult
        Distance, witness points, normal (A to B), status, error bound and counters.

    """
    # Plain float64 matrices go to the kernel as they are and are validated there; anything
    # else (lists, other dtypes, views) is converted and checked first.
    if not _is_plain_pose(pose_a):
        pose_a = check_poses(pose_a, 'pose_a', (4, 4))
    if not _is_plain_pose(pose_b):
        pose_b = check_poses(pose_b, 'pose_b', (4, 4))
    work, out, cold = _thread_buffers()
    if cache is None:
        arrays, tracking = cold, False
    else:
        cache._bind(a, b)
        arrays, tracking = cache._buffers, True
    if not query_posed(*a._kernel, *b._kernel, pose_a, pose_b, ROTATION_TOLERANCE, *arrays,
                       *work, bool(hill_climb), tracking):
        check_poses(pose_a, 'pose_a', (4, 4))  # raises, naming the invalid pose
        check_poses(pose_b, 'pose_b', (4, 4))
    return _result(out)
