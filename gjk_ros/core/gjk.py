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
The GJK distance loop, warm-started from a tracked simplex (Cameron 1997 sections 3 and 3.4).

All coordinates inside a query are in A's body frame: only B's points are transformed, by the
relative transform ``rel = [R | t]`` (B frame -> A frame), and a support query on B turns the
direction into B's frame with ``R^T``. Sign convention (stated once for the whole core, see
``gjk_ros.core``): a Minkowski point is ``w = a - b``.

Simplex work arrays (allocated once per caller, never inside the loop):
``simplex`` (4, 4, 3): [0] the points w, [1] the points a on A, [2] the points b on B (A frame),
[3] the points b in B's own frame; ``simplex_index`` (2, 4): the vertex ids on A and B (-1 on a
smooth body); ``weights`` (4,): the barycentric weights;
``counters`` (4,): GJK iterations, support calls, hill-climb steps, EPA iterations.
"""

import math

from ._jit import njit
from .scene import B_CX, B_CY, B_CZ, B_KIND, B_VCOUNT, B_VSTART
from .simplex import solve_simplex
from .support import body_support, KIND_POLYTOPE
from .tolerances import CONTACT_REL, GJK_MAX_ITERATIONS, GJK_POLYTOPE_REL, GJK_SMOOTH_REL

__all__ = ['GJK_BEYOND', 'GJK_CONTACT', 'GJK_MAX_ITERATIONS_HIT', 'GJK_SEPARATED', 'GJK_WITHIN',
           'gjk', 'is_smooth', 'load_simplex', 'minkowski_support', 'set_simplex_vertex']

# Outcomes of gjk(). SEPARATED: converged, |v| is the distance. CONTACT: the origin is in (or
# within CONTACT_REL of) the simplex. MAX_ITERATIONS_HIT: stopped by the iteration cap, |v| is an
# upper bound only. WITHIN / BEYOND: stopped early because a bound settled the caller's question
# (``within`` / ``beyond`` arguments), before the distance itself was known.
GJK_SEPARATED = 0
GJK_CONTACT = 1
GJK_MAX_ITERATIONS_HIT = 2
GJK_WITHIN = 3
GJK_BEYOND = 4


@njit(inline=True)
def is_smooth(body_a, body_b):
    """Return True when either body has a smooth support (no vertex ids, linear convergence)."""
    return body_a[B_KIND] != KIND_POLYTOPE or body_b[B_KIND] != KIND_POLYTOPE


@njit(inline=True)
def to_a_frame(rel, x, y, z):
    """Map a point of B's frame into A's frame."""
    return (rel[0, 0] * x + rel[0, 1] * y + rel[0, 2] * z + rel[0, 3],
            rel[1, 0] * x + rel[1, 1] * y + rel[1, 2] * z + rel[1, 3],
            rel[2, 0] * x + rel[2, 1] * y + rel[2, 2] * z + rel[2, 3])


@njit(inline=True)
def minkowski_support(geom_a, body_a, geom_b, body_b, rel, dx, dy, dz, seed_a, seed_b,
                      hill_climb, counters):
    """
    Support of A - B along ``d`` (A frame): ``s_A(d) - s_B(-d)``.

    Returns ``(index_a, ax, ay, az, index_b, lx, ly, lz, bx, by, bz)`` with ``l`` the point on B in
    B's frame and ``b`` the same point in A's frame.
    """
    index_a, ax, ay, az, steps_a = body_support(geom_a, body_a, dx, dy, dz, seed_a, hill_climb)
    ldx = -(rel[0, 0] * dx + rel[1, 0] * dy + rel[2, 0] * dz)
    ldy = -(rel[0, 1] * dx + rel[1, 1] * dy + rel[2, 1] * dz)
    ldz = -(rel[0, 2] * dx + rel[1, 2] * dy + rel[2, 2] * dz)
    index_b, lx, ly, lz, steps_b = body_support(geom_b, body_b, ldx, ldy, ldz, seed_b, hill_climb)
    bx, by, bz = to_a_frame(rel, lx, ly, lz)
    counters[1] += 1
    counters[2] += steps_a + steps_b
    return index_a, ax, ay, az, index_b, lx, ly, lz, bx, by, bz


@njit(inline=True)
def set_simplex_vertex(simplex, simplex_index, slot, index_a, ax, ay, az, index_b,
                       lx, ly, lz, bx, by, bz):
    simplex[0, slot, 0] = ax - bx
    simplex[0, slot, 1] = ay - by
    simplex[0, slot, 2] = az - bz
    simplex[1, slot, 0], simplex[1, slot, 1], simplex[1, slot, 2] = ax, ay, az
    simplex[2, slot, 0], simplex[2, slot, 1], simplex[2, slot, 2] = bx, by, bz
    simplex[3, slot, 0], simplex[3, slot, 1], simplex[3, slot, 2] = lx, ly, lz
    simplex_index[0, slot] = index_a
    simplex_index[1, slot] = index_b


@njit(inline=True)
def _compact(simplex, simplex_index, weights, count, mask):
    """Keep the simplex vertices whose bit is set in ``mask``, in order; return the new count."""
    kept = 0
    for i in range(count):
        if mask & (1 << i):
            if kept != i:
                for layer in range(4):
                    for c in range(3):
                        simplex[layer, kept, c] = simplex[layer, i, c]
                simplex_index[0, kept] = simplex_index[0, i]
                simplex_index[1, kept] = simplex_index[1, i]
                weights[kept] = weights[i]
            kept += 1
    return kept


@njit(inline=True)
def load_simplex(geom_a, body_a, geom_b, body_b, rel, cache_count, cache_index, cache_local,
                 simplex,
                 simplex_index):
    """
    Rebuild last step's simplex at the new poses (Box2D's ``b2MakeSimplexFromCache``).

    The cache holds vertex ids (points on a smooth body are kept in that body's own frame, which
    is what "the same points relative to the objects on which they lie" means for them); the
    coordinates are recomputed from the current transform. Returns the count, 0 when the cache is
    empty or does not fit these bodies (a cold start).
    """
    count = cache_count
    verts_a, verts_b = geom_a[0], geom_b[0]
    for s in range(count):
        index_a = cache_index[s, 0]
        index_b = cache_index[s, 1]
        if body_a[B_KIND] != KIND_POLYTOPE:
            ax, ay, az = cache_local[s, 0, 0], cache_local[s, 0, 1], cache_local[s, 0, 2]
        elif 0 <= index_a < body_a[B_VCOUNT]:
            r = body_a[B_VSTART] + index_a
            ax, ay, az = verts_a[r, 0], verts_a[r, 1], verts_a[r, 2]
        else:
            return 0
        if body_b[B_KIND] != KIND_POLYTOPE:
            lx, ly, lz = cache_local[s, 1, 0], cache_local[s, 1, 1], cache_local[s, 1, 2]
        elif 0 <= index_b < body_b[B_VCOUNT]:
            r = body_b[B_VSTART] + index_b
            lx, ly, lz = verts_b[r, 0], verts_b[r, 1], verts_b[r, 2]
        else:
            return 0
        bx, by, bz = to_a_frame(rel, lx, ly, lz)
        set_simplex_vertex(simplex, simplex_index, s, index_a, ax, ay, az, index_b,
                           lx, ly, lz, bx, by, bz)
    return count


@njit(inline=True)
def _in_simplex(simplex_index, count, index_a, index_b):
    """Return True when the vertex pair is already a simplex vertex (never for smooth points)."""
    if index_a < 0 or index_b < 0:
        return False
    for s in range(count):
        if simplex_index[0, s] == index_a and simplex_index[1, s] == index_b:
            return True
    return False


@njit(inline=True)
def gjk(geom_a, body_a, geom_b, body_b, rel, simplex, simplex_index, count, weights, seeds,
        hill_climb, counters, scale, within, beyond):
    """
    Run GJK from ``count`` simplex vertices (0: cold): ``(outcome, count, vx, vy, vz, gap)``.

    ``v`` is the best point of A - B found, ``gap`` Cameron's G-test ``v.v - v.w`` of its support
    point (the distance lies in ``[|v| - gap / |v|, |v|]``). ``GJK_CONTACT``: the origin is in (or
    within ``CONTACT_REL`` of) the simplex, EPA takes over. ``seeds`` are Cameron's ``last_best``.

    Early stops, for questions that need a bound rather than the distance (the separation
    problem of the GJK implementation notes; coal's ``distance_upper_bound``): ``GJK_WITHIN`` as
    soon as ``|v| <= within`` (the distance is at most ``within``), ``GJK_BEYOND`` as soon as the
    plane of a support point proves the distance above ``beyond`` (Cameron 1997 section 3.3's
    G-test as a lower bound, ``v.w / |v| > beyond``). ``within = -inf`` and ``beyond = inf`` ask
    for the distance itself.
    """
    tolerance = GJK_SMOOTH_REL if is_smooth(body_a, body_b) else GJK_POLYTOPE_REL
    contact2 = (CONTACT_REL * scale) ** 2
    # Step 1: a cold start seeds the simplex with the support point along the centre line,
    # climbing from the seed direction nearest to it (seed -1, see support.py).
    if count == 0:
        cx, cy, cz = to_a_frame(rel, body_b[B_CX], body_b[B_CY], body_b[B_CZ])
        dx, dy, dz = body_a[B_CX] - cx, body_a[B_CY] - cy, body_a[B_CZ] - cz
        if dx == 0.0 and dy == 0.0 and dz == 0.0:
            dx = 1.0
        r = minkowski_support(geom_a, body_a, geom_b, body_b, rel, -dx, -dy, -dz, -1, -1,
                              hill_climb, counters)
        set_simplex_vertex(simplex, simplex_index, 0, r[0], r[1], r[2], r[3], r[4], r[5],
                           r[6], r[7], r[8], r[9], r[10])
        seeds[0], seeds[1] = max(r[0], 0), max(r[4], 0)
        count = 1
    # The last accepted v, its squared length and G-test value: the answer when no progress.
    previous2, gap = -1.0, 0.0
    px = py = pz = 0.0
    while True:
        # Step 2: best_simplex. Reduce the simplex to the sub-simplex nearest the origin; the
        # last accepted simplex is w[:count - 1] with the weights saved here.
        l0, l1, l2, l3 = weights[0], weights[1], weights[2], weights[3]
        mask, vx, vy, vz = solve_simplex(simplex[0], count, weights)
        v2 = vx * vx + vy * vy + vz * vz
        if mask == 15 or v2 <= contact2:
            count = _compact(simplex, simplex_index, weights, count, mask)
            return GJK_CONTACT, count, vx, vy, vz, 0.0
        # Step 3: |v| must decrease (GJK88 theorem 2). When round-off stops it, the previous v
        # is the best seen: return it with its own simplex, weights and G-test value, so that
        # the witnesses are its own and [|v| - gap / |v|, |v|] still holds the distance.
        if previous2 >= 0.0 and v2 >= previous2:
            weights[0], weights[1], weights[2], weights[3] = l0, l1, l2, l3
            return GJK_SEPARATED, count - 1, px, py, pz, gap
        count = _compact(simplex, simplex_index, weights, count, mask)
        if v2 <= within * abs(within):  # |v| bounds the distance from above
            return GJK_WITHIN, count, vx, vy, vz, 0.0
        counters[0] += 1
        # Step 4: the support point along -v, and Cameron's G-test g(v) = v.v - v.w.
        r = minkowski_support(geom_a, body_a, geom_b, body_b, rel, -vx, -vy, -vz, seeds[0],
                              seeds[1], hill_climb, counters)
        seeds[0], seeds[1] = max(r[0], 0), max(r[4], 0)
        wx, wy, wz = r[1] - r[8], r[2] - r[9], r[3] - r[10]
        vw = vx * wx + vy * wy + vz * wz
        gap = v2 - vw
        # The plane through w normal to v separates by v.w / |v|: a distance, never a depth.
        if beyond < math.inf and vw > 0.0 and vw > beyond * math.sqrt(v2):
            return GJK_BEYOND, count, vx, vy, vz, gap
        # Step 5: exact for polytopes when the support vertex pair repeats; otherwise relative.
        if gap <= tolerance * v2 or _in_simplex(simplex_index, count, r[0], r[4]):
            return GJK_SEPARATED, count, vx, vy, vz, gap
        if counters[0] >= GJK_MAX_ITERATIONS:
            return GJK_MAX_ITERATIONS_HIT, count, vx, vy, vz, gap
        # Step 6: refine_simplex. Add the new point and iterate.
        set_simplex_vertex(simplex, simplex_index, count, r[0], r[1], r[2], r[3], r[4], r[5],
                           r[6], r[7], r[8], r[9], r[10])
        count += 1
        previous2, px, py, pz = v2, vx, vy, vz
