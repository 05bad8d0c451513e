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

A body handed to the kernels is a tuple of scalars locating it in the scene's arrays
``geometry = (vertices, neighbor_offsets, neighbor_indices)`` (see ``scene.scene_body``); vertex
ids are local to the body. Polytopes answer with a vertex id; the smooth primitives (cylinder,
cone, ellipsoid) answer with id -1 and the exact point of their closed-form support mapping
(Jovanoski 2008 section 3.2; van den Bergen 2003 section 4.3.1): a rim point or a cap centre for
a cylinder, the apex or a base rim point for a cone, ``D^2 d / |D d|`` for an ellipsoid of
semi-axes ``D``. A half-space has no support along most directions (it is unbounded): it never
enters GJK or EPA, the query measures it in closed form (``query._half_space_row``).
Sweep radii are not part of the support: GJK runs on the core shapes and the radii are added to
the result (Minkowski sum with a ball).

Hill climbing (Cameron 1997 section 3.2): start from the vertex returned last time and move to the
neighbour with the largest support value while that value strictly improves. On a convex
polytope a vertex that no neighbour improves on is a global maximum, so the walk ends at a
support vertex; strict improvement means it cannot cycle on a plateau (coplanar faces) and stops
on the first plateau vertex of maximal value. A tracked query moves 0 or 1 edges, so the cost no
longer depends on the number of vertices.

A cold query has no vertex from last time. Walking from vertex 0 took about 40 steps on a
2,048-vertex hull, each a cache miss on a body nobody touched recently (a cold query cost 20 us
where a tracked one costs 0.6 us). So a polytope stores its vertices with the extreme vertex
along each of the 26 ``SEED_DIRECTIONS`` first (``polytope.seed_order``; vertex ``k`` is the
extreme along direction ``k`` unless an earlier direction already placed it), and a cold
support query (seed -1) starts from vertex ``k`` of the direction nearest to ``d``: at most
about 35 degrees off, a few steps from the answer. Only the start changes, so the result does
not.
"""

import math

import numpy as np

from ._jit import njit
from .tolerances import HILL_CLIMB_MIN_VERTICES

__all__ = ['KIND_POLYTOPE', 'KIND_CYLINDER', 'KIND_CONE', 'KIND_ELLIPSOID', 'KIND_HALF_SPACE',
           'SEED_DIRECTIONS', 'support_brute_force', 'support_hill_climb', 'body_support',
           'directional_seed', 'support_cylinder', 'support_cone', 'support_ellipsoid']

# Body kinds. Every kind but KIND_POLYTOPE is smooth: no vertex ids, points kept as coordinates.
KIND_POLYTOPE = 0
KIND_CYLINDER = 1     # z axis, radius and half length in the body's params
KIND_CONE = 2         # z axis, apex at +half length, base disc of the radius at -half length
KIND_ELLIPSOID = 3    # semi-axes a, b, c: its vertices are (+-a, 0, 0), (0, +-b, 0), (0, 0, +-c)
KIND_HALF_SPACE = 4   # the solid z <= 0 of its frame (outward normal +z)


def _seed_directions():
    """Return the 26 unit directions towards the faces, edges and corners of a cube."""
    steps = (-1.0, 0.0, 1.0)
    directions = np.array([(x, y, z) for x in steps for y in steps for z in steps
                           if (x, y, z) != (0.0, 0.0, 0.0)])
    return directions / np.linalg.norm(directions, axis=1)[:, None]


SEED_DIRECTIONS = _seed_directions()


@njit(inline=True)
def directional_seed(dx, dy, dz, count):
    """Return the vertex to start a cold climb from: that of the seed direction nearest d."""
    best_index = 0
    best = -math.inf
    for k in range(min(SEED_DIRECTIONS.shape[0], count)):
        value = SEED_DIRECTIONS[k, 0] * dx + SEED_DIRECTIONS[k, 1] * dy + \
            SEED_DIRECTIONS[k, 2] * dz
        if value > best:
            best = value
            best_index = k
    return best_index


@njit(inline=True)
def support_brute_force(vertices, start, count, dx, dy, dz):
    """Local index of the first of ``vertices[start:start + count]`` maximal along ``d``."""
    best_index = 0
    best = vertices[start, 0] * dx + vertices[start, 1] * dy + vertices[start, 2] * dz
    for i in range(1, count):
        r = start + i
        value = vertices[r, 0] * dx + vertices[r, 1] * dy + vertices[r, 2] * dz
        if value > best:
            best = value
            best_index = i
    return best_index


@njit(inline=True)
def support_hill_climb(vertices, neighbor_offsets, neighbor_indices, vertex_start, offset_start,
                       index_start, dx, dy, dz, seed):
    """
    Walk the vertex adjacency graph from vertex ``seed`` to a support vertex for ``d``.

    Returns ``(index, steps)`` where ``steps`` counts the edges walked. Steepest ascent over the
    neighbours, moving only on strict improvement (Cameron's ``if (thisv > maxv)``). Ids are local
    to the body whose rows start at the given offsets.
    """
    current = seed
    r = vertex_start + current
    best = vertices[r, 0] * dx + vertices[r, 1] * dy + vertices[r, 2] * dz
    steps = 0
    while True:
        following = -1
        first = index_start + neighbor_offsets[offset_start + current]
        last = index_start + neighbor_offsets[offset_start + current + 1]
        for e in range(first, last):
            j = neighbor_indices[e]
            r = vertex_start + j
            value = vertices[r, 0] * dx + vertices[r, 1] * dy + vertices[r, 2] * dz
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
def support_cone(radius, half_length, dx, dy, dz):
    """
    Exact support point of a z-axis cone, apex at ``+half_length``, base at ``-half_length``.

    The apex wins when its value ``h d_z`` is at least the best base rim value
    ``r |d_xy| - h d_z``; the base centre answers a direction along -z.
    """
    rho = math.sqrt(dx * dx + dy * dy)
    if half_length * dz >= radius * rho - half_length * dz:
        return 0.0, 0.0, half_length
    if rho == 0.0:
        return 0.0, 0.0, -half_length
    return radius * dx / rho, radius * dy / rho, -half_length


@njit
def support_ellipsoid(a, b, c, dx, dy, dz):
    """Exact support point ``D^2 d / |D d|`` of the ellipsoid of semi-axes ``diag(a, b, c)``."""
    ex, ey, ez = a * dx, b * dy, c * dz
    length = math.sqrt(ex * ex + ey * ey + ez * ez)
    if length == 0.0:
        return a, 0.0, 0.0
    return a * ex / length, b * ey / length, c * ez / length


@njit(inline=True)
def _smooth_support(geometry, body, dx, dy, dz):
    """Support point of a smooth primitive (kind > KIND_POLYTOPE, not a half-space)."""
    if body[4] == KIND_CYLINDER:
        return support_cylinder(body[6], body[7], dx, dy, dz)
    if body[4] == KIND_CONE:
        return support_cone(body[6], body[7], dx, dy, dz)
    vertices, start = geometry[0], body[0]
    return support_ellipsoid(vertices[start, 0], vertices[start + 2, 1],
                             vertices[start + 4, 2], dx, dy, dz)


@njit(inline=True)
def body_support(geometry, body, dx, dy, dz, seed, hill_climb):
    """
    Support of a kernel body along ``d`` (body frame).

    Returns ``(index, x, y, z, steps)``; ``index`` is -1 for a smooth body. ``seed`` is the vertex
    to climb from, -1 for a cold query (``directional_seed``); small polytopes are scanned
    instead (``HILL_CLIMB_MIN_VERTICES``).
    """
    if body[4] != KIND_POLYTOPE:
        x, y, z = _smooth_support(geometry, body, dx, dy, dz)
        return -1, x, y, z, 0
    vertices = geometry[0]
    start, count = body[0], body[1]
    steps = 0
    if hill_climb and count >= HILL_CLIMB_MIN_VERTICES:
        if seed < 0 or seed >= count:
            seed = directional_seed(dx, dy, dz, count)
        index, steps = support_hill_climb(vertices, geometry[1], geometry[2], start, body[2],
                                          body[3], dx, dy, dz, seed)
    else:
        index = support_brute_force(vertices, start, count, dx, dy, dz)
    r = start + index
    return index, vertices[r, 0], vertices[r, 1], vertices[r, 2], steps
