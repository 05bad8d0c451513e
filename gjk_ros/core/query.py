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
One pair query: tracked EPA, else GJK from the tracked simplex, then EPA on contact.

``query_pair`` is the single compiled implementation behind both ``signed_distance`` and
``PairSet.update``. It works in A's body frame, on the core shapes (sweep radii are added at the
end: the signed distance of two swept bodies is that of their cores minus both radii, also in
penetration), and writes one output row in the world frame.

Performance note (measured 2026-11-21): numba reference-counts every array each time it is taken
out of a tuple or handed to a function, and on this class of machine each count is an atomic
call of 10-15 ns. The tracked query itself is a few hundred floating-point operations, so the
hot path takes plain arrays, unpacked once per batch; tuples (EPA's work arrays and stored
polytope) are only handed down on the penetration path. Outputs are three arrays, not seven.
"""

import math

import numpy as np

from ._jit import njit
from .cache import unpack_cache
from .epa import (EP_PLANES, EP_POINTS, EP_WEIGHTS, EPA_CAPPED, epa_cover_foot, EPA_DONE,
                  epa_expand, EPA_FLAT, epa_restore, epa_seed,
                  epa_store as epa_store_polytope, epa_vertex_count, epa_witness,
                  epa_workspace)
from .gjk import gjk, GJK_CONTACT, GJK_MAX_ITERATIONS_HIT, is_smooth, load_simplex, to_a_frame
from .scene import (B_BOUND, B_CYL_H, B_CYL_R, B_KIND, B_SWEEP, layout, numpy_view, packed_body,
                    view)
from .status import Status
from .support import body_support, KIND_CYLINDER, KIND_HALF_SPACE
from .tolerances import (EPA_POLYTOPE_REL, EPA_SMOOTH_REL, PARALLEL_SINE, ROTATION_TOLERANCE,
                         SCALE_FLOOR, TOUCHING_REL, WITNESS_REL)

__all__ = ['query_pair', 'query_posed', 'workspace', 'output_arrays', 'scratch_buffer',
           'out_buffer', 'out_views', 'MODE_HILL_CLIMB', 'MODE_TRACKING']

# Columns of the output ``values`` array.
V_DISTANCE, V_WITNESS_A, V_WITNESS_B, V_NORMAL, V_BOUND = 0, 1, 4, 7, 10
VALUE_COLUMNS = 11

SEPARATED, TOUCHING, PENETRATING = int(Status.SEPARATED), int(Status.TOUCHING), \
    int(Status.PENETRATING)
MAX_ITERATIONS, DEGENERATE = int(Status.MAX_ITERATIONS), int(Status.DEGENERATE)


def workspace():
    """
    Allocate the per-query work arrays.

    simplex (4, 4, 3) (see gjk), simplex vertex ids (2, 4), barycentric weights (4,), counters
    (4,), relative transform (3, 4), hill-climbing seeds (2,).
    """
    return (np.zeros((4, 4, 3)), np.zeros((2, 4), np.int64), np.zeros(4),
            np.zeros(4, np.int64), np.zeros((3, 4)), np.zeros(2, np.int64))


def output_arrays(count):
    """
    Allocate result rows for ``count`` pairs.

    values (m, 11): distance, witness_a (3), witness_b (3), normal (3), error_bound; status (m,)
    int8; counters (m, 4): GJK iterations, support calls, hill-climb steps, EPA iterations.
    """
    values = np.full((count, VALUE_COLUMNS), np.nan)
    return values, np.full(count, int(Status.INACTIVE), np.int8), np.zeros((count, 4), np.int64)


@njit(inline=True)
def _relative_pose(pose_a, pose_b, rel):
    """Set ``rel = inverse(pose_a) @ pose_b`` as [R | t]: B's frame expressed in A's frame."""
    for i in range(3):
        for j in range(3):
            rel[i, j] = (pose_a[0, i] * pose_b[0, j] + pose_a[1, i] * pose_b[1, j]
                         + pose_a[2, i] * pose_b[2, j])
        rel[i, 3] = (pose_a[0, i] * (pose_b[0, 3] - pose_a[0, 3])
                     + pose_a[1, i] * (pose_b[1, 3] - pose_a[1, 3])
                     + pose_a[2, i] * (pose_b[2, 3] - pose_a[2, 3]))


@njit(inline=True)
def _write_row(values, status, counts, k, pose_a, body_a, body_b, core_distance, nx, ny, nz,
               ax, ay, az, bx, by, bz, outcome, bound, counters, scale):
    """Add the sweep radii, classify, and store row ``k`` in world coordinates."""
    ra, rb = body_a[B_SWEEP], body_b[B_SWEEP]
    distance = core_distance - ra - rb
    ax, ay, az = ax + ra * nx, ay + ra * ny, az + ra * nz
    bx, by, bz = bx - rb * nx, by - rb * ny, bz - rb * nz
    # A certified status never contradicts the truth, which lies in [distance - bound,
    # distance]: SEPARATED needs that interval above 0, otherwise the bodies may touch.
    if outcome == SEPARATED:
        if abs(distance) <= TOUCHING_REL * scale or (distance > 0.0 and distance <= bound):
            outcome = TOUCHING
        elif distance < 0.0:
            outcome = PENETRATING
    values[k, V_DISTANCE] = distance
    for c in range(3):
        values[k, V_WITNESS_A + c] = (pose_a[c, 0] * ax + pose_a[c, 1] * ay + pose_a[c, 2] * az
                                      + pose_a[c, 3])
        values[k, V_WITNESS_B + c] = (pose_a[c, 0] * bx + pose_a[c, 1] * by + pose_a[c, 2] * bz
                                      + pose_a[c, 3])
        values[k, V_NORMAL + c] = pose_a[c, 0] * nx + pose_a[c, 1] * ny + pose_a[c, 2] * nz
    values[k, V_BOUND] = bound
    status[k] = outcome
    for c in range(4):
        counts[k, c] = counters[c]


@njit(inline=True)
def _simplex_witnesses(simplex, weights, count):
    """Witness points (A frame) of GJK's simplex: the weights applied to its points on A, B."""
    ax = ay = az = bx = by = bz = 0.0
    for s in range(count):
        lam = weights[s]
        ax += lam * simplex[1, s, 0]
        ay += lam * simplex[1, s, 1]
        az += lam * simplex[1, s, 2]
        bx += lam * simplex[2, s, 0]
        by += lam * simplex[2, s, 1]
        bz += lam * simplex[2, s, 2]
    return ax, ay, az, bx, by, bz


@njit(inline=True)
def _save_simplex(cache_count, cache_index, cache_local, cache_seeds, k, simplex,
                  simplex_index, count, seeds):
    cache_count[k] = count
    for s in range(count):
        cache_index[k, s, 0] = simplex_index[0, s]
        cache_index[k, s, 1] = simplex_index[1, s]
        for c in range(3):
            cache_local[k, s, 0, c] = simplex[1, s, c]
            cache_local[k, s, 1, c] = simplex[3, s, c]
    cache_seeds[k, 0], cache_seeds[k, 1] = seeds[0], seeds[1]


@njit
def _penetration_row(geom_a, body_a, geom_b, body_b, rel, values, status, counts, k, pose_a, ep,
                     outcome, face, gap, hill_climb, counters, scale, simplex, weights, count):
    """
    Write EPA's answer: depth = distance of the closest face, normal = its outward normal.

    Returns False, having written nothing, when the face's witnesses miss its foot point by more
    than ``WITNESS_REL`` of the scale and no GJK contact simplex (``count`` 0) can replace them.
    GJK's contact simplex has a point within ``CONTACT_REL`` of the scale of the origin, with
    witnesses of its own: at a contact (depth 0 within round-off), the only place the face's
    can miss (see ``epa_witness``), the pair that misses less is written.
    """
    plane = ep[EP_PLANES][face]
    ax, ay, az, bx, by, bz, miss2 = epa_witness(ep, face, scale)
    if miss2 > (WITNESS_REL * scale) ** 2:
        ax, ay, az, bx, by, bz, miss2 = epa_cover_foot(
            geom_a, body_a, geom_b, body_b, rel, ep, face, (ax, ay, az, bx, by, bz, miss2),
            hill_climb, counters, scale)
    if miss2 > (WITNESS_REL * scale) ** 2:
        if count == 0:
            return False
        # The nearer of the two to the foot point d n (d n = b - a would be exact).
        sx, sy, sz, tx, ty, tz = _simplex_witnesses(simplex, weights, count)
        fx, fy, fz = -plane[3] * plane[0], -plane[3] * plane[1], -plane[3] * plane[2]
        if (tx - sx - fx) ** 2 + (ty - sy - fy) ** 2 + (tz - sz - fz) ** 2 < miss2:
            ax, ay, az, bx, by, bz = sx, sy, sz, tx, ty, tz
    result = SEPARATED if outcome == EPA_DONE else MAX_ITERATIONS
    _write_row(values, status, counts, k, pose_a, body_a, body_b, -plane[3], plane[0], plane[1],
               plane[2], ax, ay, az, bx, by, bz, result, gap, counters, scale)
    return True


@njit
def _tracked_penetration(geom_a, body_a, geom_b, body_b, pose_a, rel, k, epa_store, ep, values,
                         status, counts, hill_climb, counters, scale, tolerance):
    """
    Continue EPA from last step's polytope when it is still valid (Cameron section 5).

    Returns True when that settled the query (row written, polytope kept for the next step).
    """
    if epa_restore(geom_a, body_a, geom_b, body_b, rel, epa_store, k, ep, scale):
        restored = epa_vertex_count(ep)
        outcome, face, gap = epa_expand(geom_a, body_a, geom_b, body_b, rel, ep, hill_climb,
                                        counters, scale, tolerance)
        if outcome == EPA_DONE and ep[EP_PLANES][face, 3] >= 0.0 and _penetration_row(
                geom_a, body_a, geom_b, body_b, rel, values, status, counts, k, pose_a, ep,
                outcome, face, gap, hill_climb, counters, scale, ep[EP_POINTS],
                ep[EP_WEIGHTS][0], 0):
            if epa_vertex_count(ep) != restored:  # unchanged topology: the stored copy holds
                epa_store_polytope(ep, epa_store, k)
            return True
    return False


@njit
def _penetration(geom_a, body_a, geom_b, body_b, pose_a, rel, k, simplex, simplex_index,
                 weights, count, epa_store, ep, values, status, counts, hill_climb, tracking,
                 counters, scale, tolerance):
    """Measure contact or overlap with EPA, started from GJK's simplex."""
    seeded, nx, ny, nz = epa_seed(geom_a, body_a, geom_b, body_b, rel, simplex, simplex_index,
                                  count, ep, hill_climb, counters, scale)
    if seeded == EPA_FLAT:
        ax, ay, az, bx, by, bz = _simplex_witnesses(simplex, weights, count)
        _write_row(values, status, counts, k, pose_a, body_a, body_b, 0.0, nx, ny, nz,
                   ax, ay, az, bx, by, bz, SEPARATED, 0.0, counters, scale)
        return
    outcome, face, gap = epa_expand(geom_a, body_a, geom_b, body_b, rel, ep, hill_climb,
                                    counters, scale, tolerance)
    if outcome == EPA_DONE or outcome == EPA_CAPPED:
        _penetration_row(geom_a, body_a, geom_b, body_b, rel, values, status, counts, k,
                         pose_a, ep, outcome, face, gap, hill_climb, counters, scale, simplex,
                         weights, count)
        if tracking and outcome == EPA_DONE:
            epa_store_polytope(ep, epa_store, k)
        return
    # No usable face: the bodies touch or overlap (GJK proved it) by an unknown depth, which
    # cannot exceed the sum of the bounding radii: report that honestly.
    ax, ay, az, bx, by, bz = _simplex_witnesses(simplex, weights, count)
    _write_row(values, status, counts, k, pose_a, body_a, body_b, 0.0, 1.0, 0.0, 0.0,
               ax, ay, az, bx, by, bz, DEGENERATE, 2.0 * scale, counters, scale)


@njit
def _half_space_row(geom_a, body_a, geom_b, body_b, pose_a, rel, k, values, status, counts,
                    hill_climb, counters, seeds):
    """
    Signed distance between a half-space and a body, in closed form (no GJK, no EPA).

    A half-space ``{x : n . x <= c}`` (z <= 0 of its frame) is unbounded, so A - B has no
    support along most directions. Its distance from a convex body is exact without iterating:
    the body point deepest along -n is ``s = s_body(-n)``, and the signed distance is
    ``n . s - c`` (the body's support value; Drake's and coal's half-space pairs do the same).
    The normal from A to B is n when A is the half-space, -n when B is; the witness on the plane
    is ``s`` projected onto it. Two half-spaces are never apart unless opposite and disjoint,
    and then the distance is not a body's: DEGENERATE, with an infinite bound.
    """
    counters[1] += 1
    # The length scale: the body's bound and the plane's distance from A's frame origin, whose
    # round-off enters the distance.
    reach = math.sqrt(rel[0, 3] ** 2 + rel[1, 3] ** 2 + rel[2, 3] ** 2)
    scale = max(body_a[B_BOUND] if body_b[B_KIND] == KIND_HALF_SPACE else body_b[B_BOUND],
                SCALE_FLOOR) + reach
    if body_a[B_KIND] == KIND_HALF_SPACE and body_b[B_KIND] == KIND_HALF_SPACE:
        _write_row(values, status, counts, k, pose_a, body_a, body_b, 0.0, 1.0, 0.0, 0.0, 0.0,
                   0.0, 0.0, 0.0, 0.0, 0.0, DEGENERATE, math.inf, counters, 1.0)
        return
    if body_a[B_KIND] == KIND_HALF_SPACE:
        # n = +z of A's frame; B's deepest point along -n, direction turned into B's frame.
        index, lx, ly, lz, steps = body_support(geom_b, body_b, -rel[2, 0], -rel[2, 1],
                                                -rel[2, 2], seeds[1], hill_climb)
        seeds[1] = max(index, 0)
        bx, by, bz = to_a_frame(rel, lx, ly, lz)
        counters[2] += steps
        _write_row(values, status, counts, k, pose_a, body_a, body_b, bz, 0.0, 0.0, 1.0,
                   bx, by, 0.0, bx, by, bz, SEPARATED, 0.0, counters, scale)
        return
    # n = B's +z in A's frame, c = n . (B's origin); A's deepest point along -n.
    nx, ny, nz = rel[0, 2], rel[1, 2], rel[2, 2]
    index, ax, ay, az, steps = body_support(geom_a, body_a, -nx, -ny, -nz, seeds[0], hill_climb)
    seeds[0] = max(index, 0)
    counters[2] += steps
    d = nx * (ax - rel[0, 3]) + ny * (ay - rel[1, 3]) + nz * (az - rel[2, 3])
    _write_row(values, status, counts, k, pose_a, body_a, body_b, d, -nx, -ny, -nz, ax, ay, az,
               ax - d * nx, ay - d * ny, az - d * nz, SEPARATED, 0.0, counters, scale)


@njit(inline=True)
def _parallel_cylinders(body_a, body_b, rel):
    """Return True when both bodies are cylinders whose axes agree to ``PARALLEL_SINE``."""
    return (body_a[B_KIND] == KIND_CYLINDER and body_b[B_KIND] == KIND_CYLINDER
            and rel[0, 2] ** 2 + rel[1, 2] ** 2 <= PARALLEL_SINE ** 2)


@njit
def _overlap_middle(low_a, high_a, low_b, high_b):
    """Return the middle of the overlap of two intervals (of the gap between them if none)."""
    return 0.5 * (max(low_a, low_b) + min(high_a, high_b))


@njit
def _parallel_cylinders_row(body_a, body_b, pose_a, rel, k, values, status, counts, counters,
                            scale):
    """
    Signed distance of two cylinders with parallel axes, in closed form.

    A - B is then a cylinder too, of radius ``R = r_a + r_b`` and half length ``H = h_a + h_b``
    about B's centre c (A frame, A's axis z). With ``dr = |c_xy| - R`` and ``dz = |c_z| - H``:
    inside both (overlap) the depth is the smaller of ``-dr`` and ``-dz``, along the radial or
    the axial direction; apart, the distance is ``hypot(dr, dz)`` over the positive ones. The
    witnesses lie on the contact region: the middle of the overlap of the two discs (axial) or
    of the two height intervals (radial), and A's rim or cap on the other coordinate.
    """
    ra, ha, rb, hb = body_a[B_CYL_R], body_a[B_CYL_H], body_b[B_CYL_R], body_b[B_CYL_H]
    cx, cy, cz = rel[0, 3], rel[1, 3], rel[2, 3]
    rho = math.sqrt(cx * cx + cy * cy)
    ux, uy = (cx / rho, cy / rho) if rho > 0.0 else (1.0, 0.0)
    side = 1.0 if cz >= 0.0 else -1.0
    dr, dz = rho - (ra + rb), abs(cz) - (ha + hb)
    # Radial and axial components of the normal (from A to B).
    if dr > 0.0 and dz > 0.0:
        distance = math.sqrt(dr * dr + dz * dz)
        nr, nz = dr / distance, side * dz / distance
    elif dr > dz:
        distance, nr, nz = dr, 1.0, 0.0
    else:
        distance, nr, nz = dz, 0.0, side
    # A's witness: its rim along u where the normal has a radial part, else the middle of the
    # discs' overlap; its cap where the normal has an axial part, else the heights' overlap.
    radial = ra if nr > 0.0 else _overlap_middle(-ra, ra, rho - rb, rho + rb)
    height = side * ha if nz != 0.0 else _overlap_middle(-ha, ha, cz - hb, cz + hb)
    ax, ay, az = radial * ux, radial * uy, height
    nx, ny = nr * ux, nr * uy
    _write_row(values, status, counts, k, pose_a, body_a, body_b, distance, nx, ny, nz,
               ax, ay, az, ax + distance * nx, ay + distance * ny, az + distance * nz,
               SEPARATED, 0.0, counters, scale)


@njit(inline=True)
def _closed_form(geom_a, body_a, geom_b, body_b, pose_a, rel, k, values, status, counts,
                 hill_climb, counters, seeds, scale, cache_count, epa_sizes, cache_seeds):
    """Write row ``k`` of a pair with a closed form (half-space, parallel cylinders), or False."""
    if body_a[B_KIND] == KIND_HALF_SPACE or body_b[B_KIND] == KIND_HALF_SPACE:
        _half_space_row(geom_a, body_a, geom_b, body_b, pose_a, rel, k, values, status, counts,
                        hill_climb, counters, seeds)
        cache_seeds[k, 0], cache_seeds[k, 1] = seeds[0], seeds[1]
    elif _parallel_cylinders(body_a, body_b, rel):
        _parallel_cylinders_row(body_a, body_b, pose_a, rel, k, values, status, counts,
                                counters, scale)
    else:
        return False
    cache_count[k], epa_sizes[k, 0], epa_sizes[k, 1] = 0, 0, 0  # no tracked state to keep
    return True


@njit(inline=True)
def query_pair(geom_a, body_a, geom_b, body_b, pose_a, pose_b, k, cache_count, cache_index,
               cache_local, cache_seeds, epa_store, simplex, simplex_index, weights, counters,
               rel, seeds, ep, values, status, counts, hill_climb, tracking):
    """
    Signed distance of one pair, tracked through cache row ``k``; writes output row ``k``.

    The cache rows are the flat arrays of ``cache.cache_arrays`` (``epa_store`` its last four,
    as a tuple); ``simplex`` to ``seeds`` the work arrays of ``workspace()``; ``ep`` EPA's.
    """
    epa_sizes = epa_store[0]
    _relative_pose(pose_a, pose_b, rel)
    for c in range(4):
        counters[c] = 0
    scale = max(body_a[B_BOUND] + body_b[B_BOUND], SCALE_FLOOR)
    tolerance = (EPA_SMOOTH_REL if is_smooth(body_a, body_b) else EPA_POLYTOPE_REL) * scale
    if not tracking:
        cache_count[k] = 0
        epa_sizes[k, 0], epa_sizes[k, 1] = 0, 0
        cache_seeds[k, 0], cache_seeds[k, 1] = 0, 0
    seeds[0], seeds[1] = cache_seeds[k, 0], cache_seeds[k, 1]
    if _closed_form(geom_a, body_a, geom_b, body_b, pose_a, rel, k, values, status, counts,
                    hill_climb, counters, seeds, scale, cache_count, epa_sizes, cache_seeds):
        return

    # Step 1: last step's penetration polytope, if it is still valid (Cameron section 5).
    if tracking and epa_sizes[k, 0] > 0:
        if _tracked_penetration(geom_a, body_a, geom_b, body_b, pose_a, rel, k, epa_store, ep,
                                values, status, counts, hill_climb, counters, scale,
                                tolerance):
            return
        epa_sizes[k, 0], epa_sizes[k, 1] = 0, 0

    # Step 2: GJK from the tracked simplex (cold when the cache is empty).
    count = load_simplex(geom_a, body_a, geom_b, body_b, rel, cache_count[k], cache_index[k],
                         cache_local[k], simplex, simplex_index)
    outcome, count, vx, vy, vz, gap = gjk(geom_a, body_a, geom_b, body_b, rel, simplex,
                                          simplex_index, count, weights, seeds, hill_climb,
                                          counters, scale, -math.inf, math.inf)
    _save_simplex(cache_count, cache_index, cache_local, cache_seeds, k, simplex, simplex_index,
                  count, seeds)
    if outcome != GJK_CONTACT:
        # Apart: distance |v|, normal -v/|v| (w = a - b, so -v points from A to B).
        epa_sizes[k, 0], epa_sizes[k, 1] = 0, 0
        length = math.sqrt(vx * vx + vy * vy + vz * vz)
        ax, ay, az, bx, by, bz = _simplex_witnesses(simplex, weights, count)
        result = MAX_ITERATIONS if outcome == GJK_MAX_ITERATIONS_HIT else SEPARATED
        _write_row(values, status, counts, k, pose_a, body_a, body_b, length, -vx / length,
                   -vy / length, -vz / length, ax, ay, az, bx, by, bz, result,
                   max(gap, 0.0) / length, counters, scale)
        return

    # Step 3: contact or overlap: EPA from GJK's simplex for the exact depth.
    _penetration(geom_a, body_a, geom_b, body_b, pose_a, rel, k, simplex, simplex_index, weights,
                 count, epa_store, ep, values, status, counts, hill_climb, tracking, counters,
                 scale, tolerance)


@njit(inline=True)
def _valid_pose(p, tolerance):
    """Return True when ``p`` is a finite rigid transform (``distance.first_invalid_pose``)."""
    if p.shape[0] != 4 or p.shape[1] != 4:  # any 2-d array reaches query_posed: never read past it
        return False
    for i in range(4):
        for j in range(4):
            if not math.isfinite(p[i, j]):
                return False
    if p[3, 0] != 0.0 or p[3, 1] != 0.0 or p[3, 2] != 0.0 or p[3, 3] != 1.0:
        return False
    for i in range(3):
        for j in range(3):
            dot = p[0, i] * p[0, j] + p[1, i] * p[1, j] + p[2, i] * p[2, j]
            if abs(dot - (1.0 if i == j else 0.0)) > tolerance:
                return False
    det = (p[0, 0] * (p[1, 1] * p[2, 2] - p[1, 2] * p[2, 1])
           - p[0, 1] * (p[1, 0] * p[2, 2] - p[1, 2] * p[2, 0])
           + p[0, 2] * (p[1, 0] * p[2, 1] - p[1, 1] * p[2, 0]))
    return det >= 0.0


# The single query's arrays as views of byte buffers (scene.layout): numba's dispatch costs about
# 80 ns per array argument, and 23 separate arrays cost more than the tracked query. The scratch
# (workspace() and epa_workspace(), about 100 kB) is one buffer shared by every single query of
# the process, which is safe because query_posed holds the GIL; the answer (output_arrays(1))
# has a buffer per pair or per thread, since it is read after the call.
_SCRATCH, SCRATCH_BYTES = layout([(array.dtype, array.shape)
                                  for array in (*workspace(), *epa_workspace())])
_OUT, OUT_BYTES = layout([(array.dtype, array.shape) for array in output_arrays(1)])
# query_posed's ``mode`` bits.
MODE_HILL_CLIMB, MODE_TRACKING = 1, 2


def scratch_buffer():
    """Allocate ``query_posed``'s scratch buffer."""
    return np.zeros(SCRATCH_BYTES, np.uint8)


def out_buffer():
    """Allocate ``query_posed``'s answer buffer (status INACTIVE until the first query)."""
    buffer = np.zeros(OUT_BYTES, np.uint8)
    values, status, _ = out_views(buffer)
    values[:] = np.nan
    status[:] = int(Status.INACTIVE)
    return buffer


def out_views(buffer):
    """Return ``(values, status, counts)`` (``output_arrays(1)``) as views of ``out_buffer()``."""
    return tuple(numpy_view(buffer, field, array.dtype)
                 for field, array in zip(_OUT, output_arrays(1)))


@njit(inline=True)
def _unpack_scratch(buffer):
    """Rebuild workspace() and epa_workspace() as views of the scratch buffer."""
    f, i, w = np.float64, np.int64, _SCRATCH
    ws = (view(buffer, w[0], f), view(buffer, w[1], i), view(buffer, w[2], f),
          view(buffer, w[3], i), view(buffer, w[4], f), view(buffer, w[5], i))
    ep = (view(buffer, w[6], f), view(buffer, w[7], i), view(buffer, w[8], i),
          view(buffer, w[9], i), view(buffer, w[10], f), view(buffer, w[11], np.bool_),
          view(buffer, w[12], i), view(buffer, w[13], i), view(buffer, w[14], i),
          view(buffer, w[15], i), view(buffer, w[16], f), view(buffer, w[17], i),
          view(buffer, w[18], i), view(buffer, w[19], i))
    return ws, ep


@njit(hold_gil=True)
def query_posed(body_a, body_b, cache, out, scratch, mode, pose_a, pose_b):
    """
    Validate both poses and run one single-pair query in one compiled call; return its distance.

    The bodies come packed (``ConvexPolytope._packed``, see ``scene.pack_body``), the tracked
    state as a SimplexCache's buffer, the answer in ``out_buffer()``, the work arrays in
    ``scratch_buffer()``, the options as ``MODE_*`` bits and the poses last, so that a caller
    binds everything else once. Returns NaN, having computed nothing, when a pose is not a finite
    rigid transform (the caller then names it): a query itself never answers NaN. Seven arrays,
    not twenty: numba's dispatch, not the query, is most of a tracked single query's cost. It
    holds the GIL, as the scratch is shared (a microsecond query gains nothing from releasing
    it).
    """
    if not (_valid_pose(pose_a, ROTATION_TOLERANCE) and
            _valid_pose(pose_b, ROTATION_TOLERANCE)):
        return math.nan
    ws, ep = _unpack_scratch(scratch)
    simplex, simplex_index, weights, counters, rel, seeds = ws
    c = unpack_cache(cache)
    f, w = np.float64, _OUT
    values, status, counts = view(out, w[0], f), view(out, w[1], np.int8), \
        view(out, w[2], np.int64)
    geom_a, kernel_a = packed_body(body_a)
    geom_b, kernel_b = packed_body(body_b)
    query_pair(geom_a, kernel_a, geom_b, kernel_b, pose_a, pose_b, 0, c[0], c[1], c[2], c[3],
               c[4:], simplex, simplex_index, weights, counters, rel, seeds, ep, values, status,
               counts, (mode & MODE_HILL_CLIMB) != 0, (mode & MODE_TRACKING) != 0)
    return values[0, 0]
