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
Forward kinematics of a joint tree as a compiled kernel, callable from the other core kernels.

The tree comes as flat arrays built by ``gjk_ros.models.kinematics.KinematicModel`` (its module
docstring gives the joint conventions): per joint ``kernel[j]`` = (parent link index, motion
code, variable index with mimic resolved, first variable), ``scalars[j]`` = (mimic multiplier,
offset), ``origins[j]`` (4, 4) and ``axes[j]`` (3,). Link ``j + 1`` is moved by joint ``j``;
link 0 is the root, posed by ``base``. A link's pose is ``T_parent @ origin @ motion(q)``.
Living in the core lets a collision kernel pose the robot and test it in one compiled call.
"""

import math

from ._jit import njit
from .rigid import quaternion_into

__all__ = ['MOTION_FIXED', 'MOTION_REVOLUTE', 'MOTION_PRISMATIC', 'MOTION_PLANAR',
           'MOTION_FLOATING', 'chain_forward', 'chain_pose', 'place_pieces', 'place_sequence',
           'rigid_product']

MOTION_FIXED, MOTION_REVOLUTE, MOTION_PRISMATIC, MOTION_PLANAR, MOTION_FLOATING = range(5)


@njit(inline=True)
def rigid_product(a, b, out):
    """``out = a @ b`` for rigid (4, 4) transforms (last row 0 0 0 1)."""
    for i in range(3):
        for j in range(4):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]
        out[i, 3] += a[i, 3]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(inline=True)
def _axis_angle(x, y, z, angle, out):
    """Rotation by ``angle`` about the unit axis (x, y, z) (Rodrigues) into out[:3, :3]."""
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + t * x * x, t * x * y - s * z, t * x * z + s * y
    out[1, 0], out[1, 1], out[1, 2] = t * x * y + s * z, c + t * y * y, t * y * z - s * x
    out[2, 0], out[2, 1], out[2, 2] = t * x * z - s * y, t * y * z + s * x, c + t * z * z


@njit(inline=True)
def _motion(q, codes, axis, scalars, motion):
    """Set ``motion`` to the joint's transform at configuration ``q``."""
    for i in range(4):
        for j in range(4):
            motion[i, j] = 1.0 if i == j else 0.0
    kind = codes[1]
    if kind == MOTION_REVOLUTE or kind == MOTION_PRISMATIC:
        value = scalars[0] * q[codes[2]] + scalars[1]
        if kind == MOTION_PRISMATIC:
            for c in range(3):
                motion[c, 3] = axis[c] * value
        else:
            _axis_angle(axis[0], axis[1], axis[2], value, motion)
    elif kind == MOTION_PLANAR:
        first = codes[3]
        _axis_angle(0.0, 0.0, 1.0, q[first + 2], motion)
        motion[0, 3], motion[1, 3] = q[first], q[first + 1]
    elif kind == MOTION_FLOATING:
        first = codes[3]
        quaternion_into(q[first + 3], q[first + 4], q[first + 5], q[first + 6], motion)
        for c in range(3):
            motion[c, 3] = q[first + c]


@njit(inline=True)
def chain_pose(q, base, kernel, origins, axes, scalars, poses, scratch):
    """Pose every link for one configuration ``q`` (dof,) into ``poses`` (L, 4, 4)."""
    frame, motion = scratch[0], scratch[1]
    for r in range(4):
        for c in range(4):
            poses[0, r, c] = base[r, c]
    for j in range(kernel.shape[0]):
        rigid_product(poses[kernel[j, 0]], origins[j], frame)
        _motion(q, kernel[j], axes[j], scalars[j], motion)
        rigid_product(frame, motion, poses[j + 1])


@njit
def chain_forward(qs, base, kernel, origins, axes, scalars, poses, scratch):
    """
    Pose every link for N configurations: ``qs`` (N, dof) into ``poses`` (N, L, 4, 4).

    ``scratch`` (2, 4, 4) holds the joint frame and the motion; nothing is allocated.
    """
    for n in range(qs.shape[0]):
        chain_pose(qs[n], base, kernel, origins, axes, scalars, poses[n], scratch)


@njit(inline=True)
def place_pieces(link_poses, frames, piece_link, piece_obstacle, origins, poses):
    """
    World pose of every piece: its frame's pose @ its origin.

    Piece ``p`` rides on link ``piece_link[p]``, or on obstacle ``piece_obstacle[p]`` (posed
    by ``frames``) when ``piece_link[p]`` is -1.
    """
    for p in range(piece_link.shape[0]):
        if piece_link[p] >= 0:
            rigid_product(link_poses[piece_link[p]], origins[p], poses[p])
        else:
            rigid_product(frames[piece_obstacle[p]], origins[p], poses[p])


@njit
def place_sequence(link_poses, frames, piece_link, piece_obstacle, origins, poses):
    """:func:`place_pieces` for N configurations; ``frames`` (1 or N, O, 4, 4)."""
    for n in range(poses.shape[0]):
        place_pieces(link_poses[n], frames[min(n, frames.shape[0] - 1)], piece_link,
                     piece_obstacle, origins, poses[n])
