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
Flat arrays that hand a set of bodies to the compiled kernels.

A scene is the tuple ``(vertices, vertex_start, offsets, offset_start, indices, index_start,
kinds, params)``: every body's arrays concatenated, body ``i`` owning the slices
``[start[i]:start[i + 1]]``. ``params[i]`` is ``(sweep radius, cylinder radius, cylinder half
length, bounding centre x, y, z, bounding radius)``. A single ``ConvexPolytope`` carries a
one-body scene, so a single query and a batch go through the same compiled code.
"""

import numpy as np

from ._jit import njit

__all__ = ['build_scene', 'scene_body', 'scene_geometry', 'layout', 'view']


def build_scene(bodies):
    """Concatenate the kernel arrays of a sequence of ConvexPolytope."""
    bodies = list(bodies)
    if not bodies:
        raise ValueError('bodies: a scene needs at least one body')

    def starts(sizes):
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    vertices = np.ascontiguousarray(np.concatenate([b.vertices for b in bodies]))
    offsets = np.ascontiguousarray(np.concatenate([b.neighbor_offsets for b in bodies]))
    indices = np.ascontiguousarray(
        np.concatenate([b.neighbor_indices for b in bodies]).astype(np.int32))
    kinds = np.array([b._kind for b in bodies], dtype=np.int64)
    params = np.array([[b.radius, b.cylinder_radius, b.cylinder_half_length,
                        *b.bounding_center, b.bounding_radius] for b in bodies])
    return (vertices, starts([b.num_vertices for b in bodies]), offsets.astype(np.int32),
            starts([b.neighbor_offsets.size for b in bodies]), indices,
            starts([b.neighbor_indices.size for b in bodies]), kinds, params)


# Fields of a kernel body tuple: where its rows start in the scene arrays, then its scalars.
B_VSTART, B_VCOUNT, B_OSTART, B_ISTART, B_KIND, B_SWEEP, B_CYL_R, B_CYL_H = range(8)
B_CX, B_CY, B_CZ, B_BOUND = 8, 9, 10, 11


@njit(inline=True)
def scene_geometry(scene):
    """Return the arrays the kernels read: (vertices, neighbor offsets, neighbor indices)."""
    return scene[0], scene[2], scene[4]


@njit(inline=True)
def scene_body(scene, i):
    """
    Return the kernel tuple of body ``i``, scalars only.

    The tuple is ``(vertex_start, vertex_count, offset_start, index_start, kind, sweep_radius,
    cylinder_radius, cylinder_half_length, centre_x, centre_y, centre_z, bounding_radius)``.
    Scalars, not array slices: making three array views per body per pair cost more than a
    tracked GJK step (numba reference-counts every view).
    """
    vertex_start, offset_start, index_start, kinds, params = scene[1], scene[3], scene[5], \
        scene[6], scene[7]
    return (vertex_start[i], vertex_start[i + 1] - vertex_start[i], offset_start[i],
            index_start[i], kinds[i], params[i, 0], params[i, 1], params[i, 2], params[i, 3],
            params[i, 4], params[i, 5], params[i, 6])


def layout(shapes):
    """Return (start, shape) of each array packed one after the other, and the total size."""
    starts, total = [], 0
    for shape in shapes:
        starts.append((total, shape))
        total += int(np.prod(shape))
    return tuple(starts), total


@njit(inline=True)
def view(buffer, start_shape):
    """Return the array at ``start_shape`` (from ``layout``) of a packed buffer."""
    start, shape = start_shape
    size = 1
    for extent in shape:
        size *= extent
    return buffer[start:start + size].reshape(shape)
