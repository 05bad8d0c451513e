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
Exact penetration depth: the expanding polytope algorithm (EPA) and its tracked form.

When GJK finds the origin inside A - B, the minimum translational distance is the distance from
the origin to the boundary of A - B (Cameron 1997 section 2). EPA grows a polytope P inside
A - B that contains the origin: take P's face closest to the origin, ask for the support point
along its outward normal; if that point is no farther than the face, the face lies on a facet of
A - B and, since P is inside A - B, no boundary point is closer. Otherwise add the point and
remove every face it sees, stitching the horizon to it, so P stays convex (deleting only the
closest face does not: FCL#305). For polytopes the loop ends on a facet of A - B, so the depth is
exact up to round-off; the gap between the support value and the face distance is returned as
the error bound.

Tracking (Cameron 1997 section 5): "the routine 'remembers' to check whether this surface feature
from the last call is still a surface feature at this call". We keep last step's whole polytope P
as vertex id pairs and faces. At the new poses its points are still points of A - B, so if P is
still convex and still contains the origin (both checked, in O(faces)), EPA simply continues from
it: usually the old closest face is still a facet and one support call proves it. This keeps the
answer exact where Cameron's local test alone could miss a jump of the witness to a far face
(his Fig. 6b), because P certifies every direction, not just the old one.

Work arrays (``epa_workspace()``), sized up front (coal): see the ``EP_*`` indices below.
"""

import math

import numpy as np

from ._jit import njit
from .gjk import minkowski_support
from .scene import B_KIND, B_VCOUNT, B_VSTART
from .simplex import solve_segment, solve_simplex, solve_triangle
from .support import KIND_POLYTOPE
from .tolerances import (EPA_MAX_FACES, EPA_MAX_VERTICES, EPA_TRACK_MAX_VERTICES,
                         EPA_VISIBLE_REL, FOOT_STEPS, FOOT_TILT, WITNESS_REL)

__all__ = ['EPA_DONE', 'EPA_CAPPED', 'EPA_DEGENERATE', 'EPA_FLAT', 'epa_workspace', 'epa_seed',
           'epa_restore', 'epa_expand', 'epa_witness', 'epa_cover_foot', 'epa_store',
           'epa_store_arrays', 'epa_vertex_count']

EPA_DONE = 0        # the closest face is a facet of A - B: exact
EPA_CAPPED = 1      # out of vertices or faces: the depth is a bound (error_bound says how tight)
EPA_DEGENERATE = 2  # no usable face (numerically flat polytope)
EPA_FLAT = 3        # A - B has no interior: the origin is on it, depth 0 (touching)

# Workspace tuple fields.
EP_POINTS, EP_IDS, EP_FACES, EP_ADJ, EP_PLANES, EP_ALIVE, EP_FREE = 0, 1, 2, 3, 4, 5, 6
EP_STACK, EP_HORIZON, EP_STATE, EP_WEIGHTS, EP_REMAP = 7, 8, 9, 10, 11
EP_CREATED, EP_FACE_MAP = 12, 13
# EP_STATE fields: number of vertices, face slots in use, free slots.
ST_VERTICES, ST_SLOTS, ST_FREE = 0, 1, 2


def epa_workspace():
    """
    Allocate the EPA work arrays once.

    points (4, V, 3): w, a, b (A frame), b (B frame); ids (V, 2) vertex ids on A and B;
    faces (F, 3) counter-clockwise seen from outside; adj (F, 3) neighbour across edge e encoded
    as 3 * face + edge; planes (F, 4) outward unit normal and distance from the origin.
    """
    v, f = EPA_MAX_VERTICES, EPA_MAX_FACES
    return (np.zeros((4, v, 3)), np.zeros((v, 2), np.int64), np.zeros((f, 3), np.int64),
            np.zeros((f, 3), np.int64), np.zeros((f, 4)), np.zeros(f, np.bool_),
            np.zeros(f, np.int64), np.zeros((2 * f + 8, 2), np.int64),
            np.zeros((v + 8, 2), np.int64), np.zeros(4, np.int64),
            np.zeros((3, 4)), np.zeros(v, np.int64), np.zeros(v + 8, np.int64),
            np.zeros(f, np.int64))


def epa_store_arrays(count):
    """Per-pair storage of the tracked polytope: sizes, vertex id pairs, faces, adjacency."""
    v, f = EPA_MAX_VERTICES, EPA_MAX_FACES
    return (np.zeros((count, 2), np.int32), np.zeros((count, v, 2), np.int32),
            np.zeros((count, f, 3), np.int32), np.zeros((count, f, 3), np.int32))


# The helpers of an expansion are inlined (njit(inline=True)): each takes the EP tuple, whose
# fourteen arrays numba passes as about a hundred scalars per call, which cost more than most
# helpers' work. Rotating overlaps at 2,048 vertices (36 expansions per step, bench.epa_tracking):
# 50 -> 38-41 us per tracked step (measured 2026-11-22). A binary heap for the closest face
# was tried as well and gained nothing: the face scan is not where the time goes.
@njit(inline=True)
def _add_vertex(ep, index_a, ax, ay, az, index_b, lx, ly, lz, bx, by, bz):
    points, state = ep[EP_POINTS], ep[EP_STATE]
    v = state[ST_VERTICES]
    points[0, v, 0], points[0, v, 1], points[0, v, 2] = ax - bx, ay - by, az - bz
    points[1, v, 0], points[1, v, 1], points[1, v, 2] = ax, ay, az
    points[2, v, 0], points[2, v, 1], points[2, v, 2] = bx, by, bz
    points[3, v, 0], points[3, v, 1], points[3, v, 2] = lx, ly, lz
    ep[EP_IDS][v, 0] = index_a
    ep[EP_IDS][v, 1] = index_b
    state[ST_VERTICES] = v + 1
    return v


@njit
def epa_vertex_count(ep):
    """Return the number of vertices of the polytope in ``ep``."""
    return ep[EP_STATE][ST_VERTICES]


@njit(inline=True)
def _has_vertex(ep, index_a, index_b):
    if index_a < 0 or index_b < 0:
        return False
    ids = ep[EP_IDS]
    for v in range(ep[EP_STATE][ST_VERTICES]):
        if ids[v, 0] == index_a and ids[v, 1] == index_b:
            return True
    return False


@njit(inline=True)
def _compute_plane(ep, f):
    """Outward unit normal and origin distance of face f; False (and d = inf) if it has no area."""
    w, face, plane = ep[EP_POINTS][0], ep[EP_FACES][f], ep[EP_PLANES][f]
    i, j, k = face[0], face[1], face[2]
    ux, uy, uz = w[j, 0] - w[i, 0], w[j, 1] - w[i, 1], w[j, 2] - w[i, 2]
    vx, vy, vz = w[k, 0] - w[i, 0], w[k, 1] - w[i, 1], w[k, 2] - w[i, 2]
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if length == 0.0:
        plane[0], plane[1], plane[2], plane[3] = 0.0, 0.0, 0.0, math.inf
        return False
    nx, ny, nz = nx / length, ny / length, nz / length
    plane[0], plane[1], plane[2] = nx, ny, nz
    plane[3] = nx * w[i, 0] + ny * w[i, 1] + nz * w[i, 2]
    return True


@njit(inline=True)
def _new_face(ep, i, j, k):
    state = ep[EP_STATE]
    if state[ST_FREE] > 0:
        state[ST_FREE] -= 1
        f = ep[EP_FREE][state[ST_FREE]]
    else:
        f = state[ST_SLOTS]
        state[ST_SLOTS] = f + 1
    ep[EP_FACES][f, 0], ep[EP_FACES][f, 1], ep[EP_FACES][f, 2] = i, j, k
    ep[EP_ALIVE][f] = True
    _compute_plane(ep, f)
    return f


@njit(inline=True)
def _delete_face(ep, f):
    state = ep[EP_STATE]
    ep[EP_ALIVE][f] = False
    ep[EP_FREE][state[ST_FREE]] = f
    state[ST_FREE] += 1


@njit
def _reset(ep):
    state = ep[EP_STATE]
    state[ST_VERTICES], state[ST_SLOTS], state[ST_FREE] = 0, 0, 0


@njit
def _build_tetrahedron(ep):
    """Faces of the tetrahedron on vertices 0..3, oriented outwards, with their adjacency."""
    w = ep[EP_POINTS][0]
    ux, uy, uz = w[1, 0] - w[0, 0], w[1, 1] - w[0, 1], w[1, 2] - w[0, 2]
    vx, vy, vz = w[2, 0] - w[0, 0], w[2, 1] - w[0, 1], w[2, 2] - w[0, 2]
    qx, qy, qz = w[3, 0] - w[0, 0], w[3, 1] - w[0, 1], w[3, 2] - w[0, 2]
    volume6 = ux * (vy * qz - vz * qy) + uy * (vz * qx - vx * qz) + uz * (vx * qy - vy * qx)
    # With a negative volume, these four faces have outward normals (each is an even
    # permutation of the orientation (0, 1, 2, 3) with its opposite vertex first).
    a, b = (1, 2) if volume6 <= 0.0 else (2, 1)
    faces = ((0, a, b), (0, 3, a), (0, b, 3), (a, 3, b))
    for i, j, k in faces:
        _new_face(ep, i, j, k)
    _link_faces(ep)


@njit
def _link_faces(ep):
    """Set adjacency by matching each directed edge u->v with the reverse edge v->u."""
    faces, adj, alive = ep[EP_FACES], ep[EP_ADJ], ep[EP_ALIVE]
    slots = ep[EP_STATE][ST_SLOTS]
    for f in range(slots):
        if not alive[f]:
            continue
        for e in range(3):
            u, v = faces[f, e], faces[f, (e + 1) % 3]
            for g in range(slots):
                if not alive[g] or g == f:
                    continue
                for h in range(3):
                    if faces[g, h] == v and faces[g, (h + 1) % 3] == u:
                        adj[f, e] = 3 * g + h


@njit
def _distance_from_hull(ep, count, wx, wy, wz, ux, uy, uz):
    """Distance of w from the affine hull of the first ``count`` (1 to 3) vertices."""
    p = ep[EP_POINTS][0]
    rx, ry, rz = wx - p[0, 0], wy - p[0, 1], wz - p[0, 2]
    if count == 1:
        return math.sqrt(rx * rx + ry * ry + rz * rz)
    if count == 2:
        # Remove the component along the unit edge direction u.
        t = rx * ux + ry * uy + rz * uz
        rx, ry, rz = rx - t * ux, ry - t * uy, rz - t * uz
        return math.sqrt(rx * rx + ry * ry + rz * rz)
    return abs(rx * ux + ry * uy + rz * uz)


@njit
def _hull_frame(ep, count):
    """Return unit vectors for the blow-up of a point, segment or triangle: (u, p1, p2)."""
    p = ep[EP_POINTS][0]
    ux, uy, uz = 1.0, 0.0, 0.0
    if count == 2:
        ux, uy, uz = p[1, 0] - p[0, 0], p[1, 1] - p[0, 1], p[1, 2] - p[0, 2]
    elif count == 3:
        ax, ay, az = p[1, 0] - p[0, 0], p[1, 1] - p[0, 1], p[1, 2] - p[0, 2]
        bx, by, bz = p[2, 0] - p[0, 0], p[2, 1] - p[0, 1], p[2, 2] - p[0, 2]
        ux, uy, uz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    length = math.sqrt(ux * ux + uy * uy + uz * uz)
    if length == 0.0:
        ux, uy, uz, length = 1.0, 0.0, 0.0, 1.0
    ux, uy, uz = ux / length, uy / length, uz / length
    # p1 perpendicular to u (cross with the axis least aligned with u), p2 = u x p1.
    if abs(ux) <= abs(uy) and abs(ux) <= abs(uz):
        px, py, pz = 0.0, uz, -uy
    elif abs(uy) <= abs(uz):
        px, py, pz = -uz, 0.0, ux
    else:
        px, py, pz = uy, -ux, 0.0
    length = math.sqrt(px * px + py * py + pz * pz)
    px, py, pz = px / length, py / length, pz / length
    qx, qy, qz = uy * pz - uz * py, uz * px - ux * pz, ux * py - uy * px
    return ux, uy, uz, px, py, pz, qx, qy, qz


@njit(inline=True)
def _face_seeds(ep, f, nx, ny, nz):
    """
    Return where to start the climbs along face ``f``'s normal n, on A and on B.

    On A the face vertex farthest along n, on B the one farthest along -n. The three vertices
    of a face share their support value on A - B, not on A and B apart: the best of the three on
    each body is the nearer start (4-10 % fewer hill-climb steps in overlapping scenes than the
    face's first vertex).
    """
    points, ids, face = ep[EP_POINTS], ep[EP_IDS], ep[EP_FACES][f]
    best_a, best_b = face[0], face[0]
    value_a, value_b = -math.inf, math.inf
    for k in range(3):
        v = face[k]
        along_a = nx * points[1, v, 0] + ny * points[1, v, 1] + nz * points[1, v, 2]
        along_b = nx * points[2, v, 0] + ny * points[2, v, 1] + nz * points[2, v, 2]
        if along_a > value_a:
            value_a, best_a = along_a, v
        if along_b < value_b:
            value_b, best_b = along_b, v
    return max(ids[best_a, 0], 0), max(ids[best_b, 1], 0)


@njit
def _support_along(geom_a, body_a, geom_b, body_b, rel, direction, hill_climb, counters):
    return minkowski_support(geom_a, body_a, geom_b, body_b, rel, direction[0], direction[1],
                             direction[2], 0, 0, hill_climb, counters)


@njit
def epa_seed(geom_a, body_a, geom_b, body_b, rel, simplex, simplex_index, count, ep, hill_climb,
             counters, scale):
    """
    Build EPA's first polytope from GJK's final simplex (the origin is in or on it).

    GJK stops with fewer than four points when the origin lies on a vertex, edge or triangle of
    the simplex (contact); such a simplex is blown up to a tetrahedron with support points in
    directions off its affine hull. If no direction leaves the hull, A - B is flat (or a segment
    or point) and the origin on it means touching: ``(EPA_FLAT, normal)``.
    Returns ``(outcome, nx, ny, nz)``; the normal is only meaningful for EPA_FLAT.
    """
    _reset(ep)
    for s in range(count):
        _add_vertex(ep, simplex_index[0, s], simplex[1, s, 0], simplex[1, s, 1],
                    simplex[1, s, 2], simplex_index[1, s], simplex[3, s, 0], simplex[3, s, 1],
                    simplex[3, s, 2], simplex[2, s, 0], simplex[2, s, 1], simplex[2, s, 2])
    flat_tolerance = EPA_VISIBLE_REL * scale
    while count < 4:
        ux, uy, uz, px, py, pz, qx, qy, qz = _hull_frame(ep, count)
        if count == 1:
            directions = ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
                          (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))
        elif count == 2:
            directions = ((px, py, pz), (-px, -py, -pz), (qx, qy, qz), (-qx, -qy, -qz),
                          (px + qx, py + qy, pz + qz), (-px - qx, -py - qy, -pz - qz))
        else:  # only the first two (the triangle's normal, both ways) are used
            directions = ((ux, uy, uz), (-ux, -uy, -uz), (ux, uy, uz), (ux, uy, uz),
                          (ux, uy, uz), (ux, uy, uz))
        candidates = 2 if count == 3 else 6
        best, chosen = -1.0, _support_along(geom_a, body_a, geom_b, body_b, rel, directions[0],
                                            hill_climb, counters)
        for m in range(candidates):
            r = chosen if m == 0 else _support_along(geom_a, body_a, geom_b, body_b, rel,
                                                     directions[m], hill_climb, counters)
            far = _distance_from_hull(ep, count, r[1] - r[8], r[2] - r[9], r[3] - r[10],
                                      ux, uy, uz)
            if far > best:
                best, chosen = far, r
        found = best > flat_tolerance
        if not found:
            if count == 3:
                return EPA_FLAT, ux, uy, uz
            return EPA_FLAT, px, py, pz
        _add_vertex(ep, chosen[0], chosen[1], chosen[2], chosen[3], chosen[4], chosen[5],
                    chosen[6], chosen[7], chosen[8], chosen[9], chosen[10])
        count += 1
    _build_tetrahedron(ep)
    return EPA_DONE, 0.0, 0.0, 0.0


@njit(inline=True)
def _closest_face(ep):
    planes, alive = ep[EP_PLANES], ep[EP_ALIVE]
    best, best_face = math.inf, -1
    for f in range(ep[EP_STATE][ST_SLOTS]):
        if alive[f] and planes[f, 3] < best:
            best, best_face = planes[f, 3], f
    return best_face


@njit(inline=True)
def _carve_horizon(ep, start, wx, wy, wz, visible_tolerance):
    """
    Delete the faces that w sees, starting from ``start`` (which it sees).

    The faces are found by a depth-first walk over the face adjacency. Returns the number of
    horizon edges, stored in ``ep[EP_HORIZON]`` as (kept face, edge of that face on the horizon).
    """
    adj, planes, alive = ep[EP_ADJ], ep[EP_PLANES], ep[EP_ALIVE]
    stack, horizon = ep[EP_STACK], ep[EP_HORIZON]
    _delete_face(ep, start)
    top = 0
    for e in range(3):
        stack[top, 0], stack[top, 1] = adj[start, e] // 3, adj[start, e] % 3
        top += 1
    edges = 0
    while top > 0:
        top -= 1
        g, edge = stack[top, 0], stack[top, 1]
        if not alive[g]:
            continue
        height = planes[g, 0] * wx + planes[g, 1] * wy + planes[g, 2] * wz - planes[g, 3]
        if height > visible_tolerance:
            _delete_face(ep, g)
            for step in (1, 2):
                e = (edge + step) % 3
                stack[top, 0], stack[top, 1] = adj[g, e] // 3, adj[g, e] % 3
                top += 1
        else:
            horizon[edges, 0], horizon[edges, 1] = g, edge
            edges += 1
    return edges


@njit(inline=True)
def _stitch(ep, apex, edges):
    """Connect every horizon edge to the new vertex ``apex`` and link the new faces."""
    faces, adj, horizon = ep[EP_FACES], ep[EP_ADJ], ep[EP_HORIZON]
    created = ep[EP_CREATED]
    for h in range(edges):
        g, e = horizon[h, 0], horizon[h, 1]
        # The kept face runs u -> v along this edge; the new face runs v -> u -> apex.
        u, v = faces[g, e], faces[g, (e + 1) % 3]
        f = _new_face(ep, v, u, apex)
        adj[f, 0] = 3 * g + e
        adj[g, e] = 3 * f
        created[h] = f
    # New face f = (x, y, apex): its edge y -> apex meets the new face whose edge apex -> x'
    # has x' == y, i.e. the face that starts at y.
    for h in range(edges):
        f = created[h]
        y = faces[f, 1]
        for m in range(edges):
            q = created[m]
            if faces[q, 0] == y:
                adj[f, 1] = 3 * q + 2
                adj[q, 2] = 3 * f + 1
                break


@njit
def epa_expand(geom_a, body_a, geom_b, body_b, rel, ep, hill_climb, counters, scale, tolerance):
    """
    Expand the polytope in ``ep`` until its closest face is a facet of A - B.

    Returns ``(outcome, face, gap)`` where ``face`` is the closest face (its plane in
    ``ep[EP_PLANES]``) and ``gap >= 0`` the support value minus the face distance (the error
    bound of the depth).
    """
    visible_tolerance = EPA_VISIBLE_REL * scale
    planes = ep[EP_PLANES]
    while True:
        # Step 1: the face of P closest to the origin.
        f = _closest_face(ep)
        if f < 0:
            return EPA_DEGENERATE, f, math.inf
        nx, ny, nz, d = planes[f, 0], planes[f, 1], planes[f, 2], planes[f, 3]
        # Step 2: the support point along its normal, climbing from the face's own vertices.
        seed_a, seed_b = _face_seeds(ep, f, nx, ny, nz)
        counters[3] += 1
        r = minkowski_support(geom_a, body_a, geom_b, body_b, rel, nx, ny, nz, seed_a, seed_b,
                              hill_climb, counters)
        wx, wy, wz = r[1] - r[8], r[2] - r[9], r[3] - r[10]
        gap = nx * wx + ny * wy + nz * wz - d
        # Step 3: the face is a facet of A - B (a repeated vertex is the exact form).
        if gap <= tolerance or _has_vertex(ep, r[0], r[4]):
            return EPA_DONE, f, max(gap, 0.0)
        if ep[EP_STATE][ST_VERTICES] >= EPA_MAX_VERTICES:
            return EPA_CAPPED, f, gap
        # Step 4: add w, carve away what it sees and stitch the horizon to it.
        apex = _add_vertex(ep, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                           r[10])
        edges = _carve_horizon(ep, f, wx, wy, wz, visible_tolerance)
        _stitch(ep, apex, edges)


@njit
def _face_weights(ep, f):
    """Closest point of face f to the origin, written as barycentric weights (EP_WEIGHTS[0])."""
    w, weights = ep[EP_POINTS][0], ep[EP_WEIGHTS]
    i, j, k = ep[EP_FACES][f, 0], ep[EP_FACES][f, 1], ep[EP_FACES][f, 2]
    mask, l0, l1, l2, vx, vy, vz = solve_triangle(w[i, 0], w[i, 1], w[i, 2], w[j, 0], w[j, 1],
                                                  w[j, 2], w[k, 0], w[k, 1], w[k, 2])
    weights[0, 0], weights[0, 1], weights[0, 2] = l0, l1, l2
    return mask, vx, vy, vz


@njit
def _containing_face(ep, f, scale):
    """
    Return the face, among f and the faces whose foot point is f's, containing its own foot.

    Facets of A - B are often polygons (an edge-edge facet is a parallelogram) which EPA holds
    as several coplanar triangles, and on a smooth body neighbouring faces differ by 1e-13 of
    the scale in distance; the closest-face search picks any of them, and the witness points
    must come from one the foot point falls in. A face qualifies when its own foot point is
    within ``WITNESS_REL`` of the scale of f's (the opposite face of a symmetric A - B ties in
    distance, not in foot point). Returns f when none contains it (then the closest point of f
    itself is used).
    """
    mask, vx, vy, vz = _face_weights(ep, f)
    if mask == 7:
        return f
    planes, alive = ep[EP_PLANES], ep[EP_ALIVE]
    reach2 = (WITNESS_REL * scale) ** 2
    px, py, pz = planes[f, 3] * planes[f, 0], planes[f, 3] * planes[f, 1], \
        planes[f, 3] * planes[f, 2]
    for g in range(ep[EP_STATE][ST_SLOTS]):
        if not alive[g] or g == f:
            continue
        qx, qy, qz = planes[g, 3] * planes[g, 0], planes[g, 3] * planes[g, 1], \
            planes[g, 3] * planes[g, 2]
        if (qx - px) ** 2 + (qy - py) ** 2 + (qz - pz) ** 2 > reach2:
            continue
        if _face_weights(ep, g)[0] == 7:
            return g
    return f


@njit
def _nearest_to_foot(ep, g, fx, fy, fz):
    """
    Replace face g's weights by an edge's when that combination lands nearer the foot point f.

    On a sliver face the barycentric weights of the foot point are ill-conditioned, and their
    combination of the vertices missed it by 1e-7 of the bodies' size; ``witness_b - witness_a``
    is minus that combination, so it must be the foot point. The closest point to f of each edge
    is well-conditioned and within the sliver's height of f: the nearest of the four wins.
    Returns its squared distance from f (the witnesses' miss).
    """
    w, weights, face = ep[EP_POINTS][0], ep[EP_WEIGHTS], ep[EP_FACES][g]
    ex = ey = ez = 0.0
    for s in range(3):
        ex += weights[0, s] * w[face[s], 0]
        ey += weights[0, s] * w[face[s], 1]
        ez += weights[0, s] * w[face[s], 2]
    best = (ex - fx) ** 2 + (ey - fy) ** 2 + (ez - fz) ** 2
    for e in range(3):
        i, j = face[e], face[(e + 1) % 3]
        m, li, lj, qx, qy, qz = solve_segment(w[i, 0] - fx, w[i, 1] - fy, w[i, 2] - fz,
                                              w[j, 0] - fx, w[j, 1] - fy, w[j, 2] - fz)
        miss = qx * qx + qy * qy + qz * qz
        if miss < best:
            best = miss
            weights[0, e], weights[0, (e + 1) % 3], weights[0, (e + 2) % 3] = li, lj, 0.0
    return best


@njit
def epa_witness(ep, f, scale):
    """
    Return the witness points (A frame) of the closest face f, and their squared miss.

    They are the origin's projection ``d n`` onto the face plane, in barycentric weights of the
    face (or of the coplanar face containing it), applied to the vertices' points on A and on B.
    The miss is the squared distance between ``d n`` and that combination: it is large only
    when the origin lies outside the face, which happens at a smooth contact, where the origin
    is on the boundary of A - B and may lie just outside the inscribed polytope.
    """
    points, weights = ep[EP_POINTS], ep[EP_WEIGHTS]
    g = _containing_face(ep, f, scale)
    _face_weights(ep, g)
    plane = ep[EP_PLANES][f]
    miss2 = _nearest_to_foot(ep, g, plane[3] * plane[0], plane[3] * plane[1],
                             plane[3] * plane[2])
    face = ep[EP_FACES][g]
    ax = ay = az = bx = by = bz = 0.0
    for s in range(3):
        lam, v = weights[0, s], face[s]
        ax += lam * points[1, v, 0]
        ay += lam * points[1, v, 1]
        az += lam * points[1, v, 2]
        bx += lam * points[2, v, 0]
        by += lam * points[2, v, 1]
        bz += lam * points[2, v, 2]
    return ax, ay, az, bx, by, bz, miss2


@njit
def _set_foot_point(work, slot, ax, ay, az, bx, by, bz, fx, fy, fz):
    """Store the points a, b and a - b - foot as simplex point ``slot`` of ``work``."""
    work[0, slot, 0], work[0, slot, 1], work[0, slot, 2] = ax - bx - fx, ay - by - fy, az - bz - fz
    work[1, slot, 0], work[1, slot, 1], work[1, slot, 2] = ax, ay, az
    work[2, slot, 0], work[2, slot, 1], work[2, slot, 2] = bx, by, bz


@njit
def epa_cover_foot(geom_a, body_a, geom_b, body_b, rel, ep, f, witnesses, hill_climb, counters,
                   scale):
    """
    Move the witnesses towards the foot point d n of face f; return them and their squared miss.

    On a smooth body the facet of A - B along n (a cylinder's cap disc) is wider than P's face,
    and the foot may lie outside P near its rim. GJK's own loop then runs on that facet with the
    foot as the origin: the facet's point farthest towards the foot is the support along n
    tilted towards it (``FOOT_TILT``), and the closest point to the foot of the triangle of the
    current point and the last two supports is a combination of points on A and B. The work
    rows are three free vertex rows of P (P is not changed). ``witnesses`` is ``epa_witness``'s
    answer.
    """
    ax, ay, az, bx, by, bz, miss2 = witnesses
    plane = ep[EP_PLANES][f]
    fx, fy, fz = plane[3] * plane[0], plane[3] * plane[1], plane[3] * plane[2]
    reach2 = (WITNESS_REL * scale) ** 2
    # work[:, s] is simplex point s: its w - foot, a and b, in three free vertex rows of P.
    base = ep[EP_STATE][ST_VERTICES]
    if base + 3 > EPA_MAX_VERTICES:
        return witnesses
    work, weights = ep[EP_POINTS][:, base:base + 3], ep[EP_WEIGHTS][1]
    _set_foot_point(work, 0, ax, ay, az, bx, by, bz, fx, fy, fz)
    count = 1
    for _ in range(FOOT_STEPS):
        if miss2 <= reach2:
            break
        tilt = FOOT_TILT / math.sqrt(miss2)
        r = minkowski_support(geom_a, body_a, geom_b, body_b, rel,
                              plane[0] - tilt * (ax - bx - fx), plane[1] - tilt * (ay - by - fy),
                              plane[2] - tilt * (az - bz - fz), 0, 0, hill_climb, counters)
        _set_foot_point(work, count, r[1], r[2], r[3], r[8], r[9], r[10], fx, fy, fz)
        mask, vx, vy, vz = solve_simplex(work[0], count + 1, weights)
        if vx * vx + vy * vy + vz * vz >= miss2:
            break
        miss2 = vx * vx + vy * vy + vz * vz
        ax = ay = az = bx = by = bz = 0.0
        kept = 0
        for i in range(count + 1):
            ax += weights[i] * work[1, i, 0]
            ay += weights[i] * work[1, i, 1]
            az += weights[i] * work[1, i, 2]
            bx += weights[i] * work[2, i, 0]
            by += weights[i] * work[2, i, 1]
            bz += weights[i] * work[2, i, 2]
            if mask & (1 << i):
                for layer in range(3):
                    for c in range(3):
                        work[layer, kept, c] = work[layer, i, c]
                kept += 1
        count = min(kept, 2)
    return ax, ay, az, bx, by, bz, miss2


@njit
def epa_store(ep, store, k):
    """Keep P for the next step as vertex id pairs, faces and adjacency (compacted)."""
    sizes, store_ids, store_faces, store_adj = store
    faces, adj, alive, ids = ep[EP_FACES], ep[EP_ADJ], ep[EP_ALIVE], ep[EP_IDS]
    remap = ep[EP_REMAP]
    state = ep[EP_STATE]
    sizes[k, 0], sizes[k, 1] = 0, 0
    if state[ST_VERTICES] > EPA_TRACK_MAX_VERTICES:
        return
    for v in range(state[ST_VERTICES]):
        if ids[v, 0] < 0 or ids[v, 1] < 0:
            return  # a smooth body has no vertex ids to track
        remap[v] = -1
    vertices = 0
    for f in range(state[ST_SLOTS]):
        if alive[f]:
            for e in range(3):
                v = faces[f, e]
                if remap[v] < 0:
                    remap[v] = vertices
                    store_ids[k, vertices, 0], store_ids[k, vertices, 1] = ids[v, 0], ids[v, 1]
                    vertices += 1
    # Face slots are renumbered in order of appearance.
    face_map = ep[EP_FACE_MAP]
    count = 0
    for f in range(state[ST_SLOTS]):
        face_map[f] = count if alive[f] else -1
        if alive[f]:
            count += 1
    for f in range(state[ST_SLOTS]):
        if alive[f]:
            g = face_map[f]
            for e in range(3):
                store_faces[k, g, e] = remap[faces[f, e]]
                store_adj[k, g, e] = 3 * face_map[adj[f, e] // 3] + adj[f, e] % 3
    sizes[k, 0], sizes[k, 1] = vertices, count


@njit
def epa_restore(geom_a, body_a, geom_b, body_b, rel, store, k, ep, scale):
    """
    Rebuild last step's polytope at the new poses; True when it is usable.

    Usable means: every face still has area, the origin is on the inner side of every face and
    every edge is still convex (the opposite vertex of each neighbour lies below the face). A
    closed, locally convex surface is convex, so P is a convex subset of A - B containing the
    origin, which is all EPA's exactness argument needs.
    """
    sizes, store_ids, store_faces, store_adj = store
    vertices, count = sizes[k, 0], sizes[k, 1]
    if vertices < 4 or body_a[B_KIND] != KIND_POLYTOPE or body_b[B_KIND] != KIND_POLYTOPE:
        return False
    _reset(ep)
    verts_a, verts_b = geom_a[0], geom_b[0]
    for v in range(vertices):
        ia, ib = store_ids[k, v, 0], store_ids[k, v, 1]
        if not (0 <= ia < body_a[B_VCOUNT] and 0 <= ib < body_b[B_VCOUNT]):
            return False
        ra, rb = body_a[B_VSTART] + ia, body_b[B_VSTART] + ib
        lx, ly, lz = verts_b[rb, 0], verts_b[rb, 1], verts_b[rb, 2]
        bx = rel[0, 0] * lx + rel[0, 1] * ly + rel[0, 2] * lz + rel[0, 3]
        by = rel[1, 0] * lx + rel[1, 1] * ly + rel[1, 2] * lz + rel[1, 3]
        bz = rel[2, 0] * lx + rel[2, 1] * ly + rel[2, 2] * lz + rel[2, 3]
        _add_vertex(ep, ia, verts_a[ra, 0], verts_a[ra, 1], verts_a[ra, 2], ib, lx, ly, lz,
                    bx, by, bz)
    faces, adj, planes = ep[EP_FACES], ep[EP_ADJ], ep[EP_PLANES]
    tolerance = EPA_VISIBLE_REL * scale
    for f in range(count):
        for e in range(3):
            faces[f, e] = store_faces[k, f, e]
            adj[f, e] = store_adj[k, f, e]
        ep[EP_ALIVE][f] = True
        if not _compute_plane(ep, f) or planes[f, 3] < -tolerance:
            return False
    ep[EP_STATE][ST_SLOTS] = count
    w = ep[EP_POINTS][0]
    for f in range(count):
        for e in range(3):
            g, h = adj[f, e] // 3, adj[f, e] % 3
            if g < f:
                continue  # a dihedral is convex from both sides or neither: check it once
            o = faces[g, (h + 2) % 3]
            height = planes[f, 0] * w[o, 0] + planes[f, 1] * w[o, 1] + planes[f, 2] * w[o, 2]
            if height - planes[f, 3] > tolerance:
                return False
    return True
