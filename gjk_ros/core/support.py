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
Support mappings: the point of a body farthest along a direction, in the body's own frame.

A body handed to the kernels is the tuple ``(vertices, neighbor_offsets, neighbor_indices, kind,
sweep_radius, cylinder_radius, cylinder_half_length)`` (see ``ConvexPolytope.kernel_body``).
Polytopes answer with a vertex index; a cylinder is smooth and answers with index -1 and the
exact point (its support is a rim point, or a cap centre when the direction is along the axis).
Sweep radii are not part of the support: GJK runs on the core shapes and the radii are added to
the result (Minkowski sum with a ball).

Hill climbing (Cameron 1997 section 3.2): start from the vertex returned last time and move to the
neighbour with the largest support value while that value strictly improves. On a convex
polytope a vertex that no neighbour improves on is a global maximum, so the walk ends at a
support vertex; strict improvement means it cannot cycle on a plateau (coplanar faces) and stops
on the first plateau vertex of maximal value. A tracked query moves 0 or 1 edges, so the cost no
longer depends on the number of vertices.
"""

import math

from ._jit import njit
from .tolerances import HILL_CLIMB_MIN_VERTICES

__all__ = ['KIND_POLYTOPE', 'KIND_CYLINDER', 'support_brute_force', 'support_hill_climb',
           'body_support']

KIND_POLYTOPE = 0
KIND_CYLINDER = 1


@njit
def support_brute_force(vertices, dx, dy, dz):
    """Index of the first vertex of maximal ``vertices[i] . d``, scanning all of them."""
    best_index = 0
    best = vertices[0, 0] * dx + vertices[0, 1] * dy + vertices[0, 2] * dz
    for i in range(1, vertices.shape[0]):
        value = vertices[i, 0] * dx + vertices[i, 1] * dy + vertices[i, 2] * dz
        if value > best:
            best = value
            best_index = i
    return best_index


@njit
def support_hill_climb(vertices, neighbor_offsets, neighbor_indices, dx, dy, dz, start):
    """
    Walk the vertex adjacency graph from ``start`` to a support vertex for ``d``.

    Returns ``(index, steps)`` where ``steps`` counts the edges walked. Steepest ascent over the
    neighbours, moving only on strict improvement (Cameron's ``if (thisv > maxv)``).
    """
    current = start
    best = vertices[current, 0] * dx + vertices[current, 1] * dy + vertices[current, 2] * dz
    steps = 0
    while True:
        following = -1
        for e in range(neighbor_offsets[current], neighbor_offsets[current + 1]):
            j = neighbor_indices[e]
            value = vertices[j, 0] * dx + vertices[j, 1] * dy + vertices[j, 2] * dz
            if value > best:
                best = value
                following = j
        if following < 0:
            return current, steps
        current = following
        steps += 1


@njit
def support_cylinder(radius, half_length, dx, dy, dz):
    """Exact support point of a z-axis cylinder centred at the origin."""
    z = half_length if dz >= 0.0 else -half_length
    rho = math.sqrt(dx * dx + dy * dy)
    if rho == 0.0:
        return 0.0, 0.0, z
    return radius * dx / rho, radius * dy / rho, z


@njit
def body_support(body, dx, dy, dz, seed, hill_climb):
    """
    Support of a kernel body along ``d`` (body frame).

    Returns ``(index, x, y, z, steps)``; ``index`` is -1 for a smooth body. ``seed`` is the vertex
    to climb from; small polytopes are scanned instead (``HILL_CLIMB_MIN_VERTICES``).
    """
    vertices = body[0]
    if body[3] == KIND_CYLINDER:
        x, y, z = support_cylinder(body[5], body[6], dx, dy, dz)
        return -1, x, y, z, 0
    steps = 0
    if hill_climb and vertices.shape[0] >= HILL_CLIMB_MIN_VERTICES:
        if seed < 0 or seed >= vertices.shape[0]:
            seed = 0
        index, steps = support_hill_climb(vertices, body[1], body[2], dx, dy, dz, seed)
    else:
        index = support_brute_force(vertices, dx, dy, dz)
    return index, vertices[index, 0], vertices[index, 1], vertices[index, 2], steps
