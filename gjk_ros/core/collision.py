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
Yes/no collision checks of a kinematic chain: configurations and certified joint-space segments.

A planner asks "is any body pair within ``margin``?", not "how far is every pair?". That is the
separation problem of GJK (the GJK implementation notes, "basic use cases" 1 versus 2): a pair
is settled as soon as a plane separates the bodies by more than the margin, with no distance,
and the whole check ends at the first pair found within it. One compiled call poses the chain
(core.chain), places its pieces, culls piece pairs by bounding spheres and runs the separation
test pair after pair; the pair that hit last is tested first next time (tracking across calls)
and every pair starts GJK from its tracked simplex.

Broad phase: the first time a configuration reaches a piece pair of a body pair, the body
pair's bounding spheres (pairset's set spheres: each body's pieces at their poses) are tested
against the largest threshold of its piece pairs; beyond it, every piece pair of the body pair
is apart by its own spheres too, and all are skipped (a far mesh's pieces at once). The verdicts
are those of the piece-by-piece test; only the work changes.

The separation test is the distance loop of gjk.gjk with its early stops: GJK's current simplex
point ``v`` of A - B bounds the distance from above (``|v|``), and the support point ``w`` along
``-v`` from below (``v.w / |v|``, the separating plane of Cameron 1997 section 3.3's G-test).
The test answers "within" as soon as ``|v| <= threshold``, "apart" as soon as ``v.w > threshold
|v|``, and otherwise when GJK converges, where ``|v|`` is the distance the full query reports
(so both agree on every verdict).

Segments (conservative certification). Along ``q(t) = q0 + t (q1 - q0)`` no point of a link
moves farther than ``t`` times its motion bound (``KinematicModel.motion_bounds``), so a pair
of clearance above ``h * rate`` at ``t`` stays clear on ``[t - h, t + h]``: a separation test
with every pair's margin raised by its rate times the half-width certifies a whole interval
(the bound of Schwarzer, Saha and Latombe; the conservative advancement of Mirtich applied as
bisection). Intervals that fail are tested exactly at their midpoint and split, left first, so
the first colliding sample found is the earliest.
"""

import math

import numpy as np

from ._jit import njit
from .chain import chain_pose, place_pieces
from .gjk import gjk, GJK_BEYOND, GJK_SEPARATED, load_simplex
from .pairset import _beyond, _set_sphere, SET_BOUNDS, sets_gap
from .query import _relative_pose, _save_simplex, workspace
from .scene import B_BOUND, B_SWEEP, scene_body, scene_geometry
from .tolerances import SCALE_FLOOR

__all__ = ['check_arrays', 'CheckArrays', 'configurations_hit', 'order_runs', 'segment_hit',
           'STATS']

# Work counters of the checks (machine-independent): separation tests run, piece pairs culled
# by their bounding spheres, GJK iterations, support calls, body pairs culled by theirs (their
# piece pairs are then neither tested nor culled one by one).
STATS = 5
_TESTED, _CULLED, _ITERATIONS, _SUPPORTS, _BODIES_CULLED = range(STATS)
# Broad-phase verdicts of a body pair within one configuration.
_UNKNOWN, _APART, _NEAR = 0, 1, 2
# Deepest interval split of a segment check (a 2^-60 sub-interval is below any tolerance).
_MAX_DEPTH = 60


@njit(inline=True)
def separated_beyond(geom_a, body_a, geom_b, body_b, rel, simplex, simplex_index, count,
                     weights, seeds, hill_climb, counters, scale, threshold):
    """
    Return ``(apart, count)``: True when the cores are farther apart than ``threshold``.

    The distance loop itself (gjk.gjk), from a simplex of ``count`` vertices (0 = cold), stopped
    by the first bound that decides (module docstring); ``count`` is the final simplex size, for
    the tracked cache. Only a proof says apart: a converged ``|v|`` (the distance the full query
    reports, so that both agree on every verdict) or a separating plane; a loop stopped by the
    iteration cap, whose ``|v|`` bounds the distance only from above, answers "within".
    """
    outcome, count, vx, vy, vz, gap = gjk(geom_a, body_a, geom_b, body_b, rel, simplex,
                                          simplex_index, count, weights, seeds, hill_climb,
                                          counters, scale, threshold, threshold)
    if outcome == GJK_BEYOND:
        return True, count
    if outcome == GJK_SEPARATED:
        return math.sqrt(vx * vx + vy * vy + vz * vz) > threshold, count
    return False, count


@njit(inline=True)
def _pair_apart(scene, i, j, poses, threshold, k, cache, ws, hill_climb, stats):
    """Separation test of piece pair ``k`` = (i, j), tracked through its cache row."""
    geometry = scene_geometry(scene)
    body_a, body_b = scene_body(scene, i), scene_body(scene, j)
    if _beyond(body_a, body_b, poses[i], poses[j], threshold):
        stats[_CULLED] += 1
        return True
    cache_count, cache_index, cache_local, cache_seeds = cache[0], cache[1], cache[2], cache[3]
    simplex, simplex_index, weights, counters, rel, seeds = ws
    _relative_pose(poses[i], poses[j], rel)
    for c in range(4):
        counters[c] = 0
    seeds[0], seeds[1] = cache_seeds[k, 0], cache_seeds[k, 1]
    count = load_simplex(geometry, body_a, geometry, body_b, rel, cache_count[k],
                         cache_index[k], cache_local[k], simplex, simplex_index)
    scale = max(body_a[B_BOUND] + body_b[B_BOUND], SCALE_FLOOR)
    core_threshold = threshold + body_a[B_SWEEP] + body_b[B_SWEEP]
    apart, count = separated_beyond(geometry, body_a, geometry, body_b, rel, simplex,
                                    simplex_index, count, weights, seeds, hill_climb, counters,
                                    scale, core_threshold)
    _save_simplex(cache_count, cache_index, cache_local, cache_seeds, k, simplex, simplex_index,
                  count, seeds)
    stats[_TESTED] += 1
    stats[_ITERATIONS] += counters[0]
    stats[_SUPPORTS] += counters[1]
    return apart


@njit
def _pose_pieces(q, chain, placement, work):
    """Pose the links at ``q`` and every piece (a link's or an obstacle's) in the world."""
    kernel, origins, axes, scalars = chain
    piece_link, piece_obstacle, piece_origins, base, obstacle_poses = placement
    link_poses, piece_poses, scratch = work
    chain_pose(q, base, kernel, origins, axes, scalars, link_poses, scratch)
    place_pieces(link_poses, obstacle_poses, piece_link, piece_obstacle, piece_origins,
                 piece_poses)


@njit(inline=True)
def _body_verdict(scene, poses, broad, g, margin, half_width, stats):
    """_APART when body pair ``g``'s spheres are beyond all its piece pairs' margins, or _NEAR."""
    group_sets, set_start, members, spheres, set_done = broad[1], broad[2], broad[3], broad[4], \
        broad[5]
    group_padding, group_rate = broad[7], broad[8]
    threshold = margin + group_padding[g]  # the largest of its pairs' (rounding is monotone)
    if half_width > 0.0:
        threshold += half_width * group_rate[g]
    for side in range(2):
        s = group_sets[g, side]
        if not set_done[s]:
            _set_sphere(scene, poses, members, set_start[s], set_start[s + 1], spheres, s)
            set_done[s] = True
    if sets_gap(spheres, group_sets[g, 0], group_sets[g, 1]) > threshold:
        stats[_BODIES_CULLED] += 1
        return _APART
    return _NEAR


@njit
def _first_hit(scene, pairs, poses, margin, padding, order, half_width, rates, cache, ws,
               hill_climb, broad, stats):
    """
    Index of the first piece pair within its margin, or -1; it moves to the front of ``order``.

    Pair ``k``'s margin is ``margin + padding[k] + half_width * rates[k]``; ``broad`` (see
    :class:`CheckArrays`) skips the piece pairs of body pairs that are apart as a whole.
    """
    owner, verdict, run_end = broad[0], broad[6], broad[9]
    grouped = owner.shape[0] > 0
    if grouped:
        for g in range(verdict.shape[0]):
            verdict[g] = _UNKNOWN
        _forget_moving_sets(broad)
    r = 0
    while r < order.shape[0]:
        k = order[r]
        if grouped:
            g = owner[k]
            if verdict[g] == _UNKNOWN:
                verdict[g] = _body_verdict(scene, poses, broad, g, margin, half_width, stats)
            if verdict[g] == _APART:
                r = run_end[r]  # the rest of this cull group's run is apart too
                continue
        threshold = margin + padding[k]
        if half_width > 0.0:  # rates may be inf (an unbounded motion): never 0 * inf
            threshold += half_width * rates[k]
        if not _pair_apart(scene, pairs[k, 0], pairs[k, 1], poses, threshold, k, cache, ws,
                           hill_climb, stats):
            for s in range(r, 0, -1):
                order[s] = order[s - 1]
            order[0] = k
            if grouped:
                order_runs(order, owner, run_end, r)
            return k
        r += 1
    return -1


@njit(inline=True)
def _forget_moving_sets(broad):
    """
    Mark the bounds of the piece sets to recompute for a new configuration.

    A set of pieces that do not move with the configuration (``static``: an obstacle's) keeps
    its bounds until its poses change, which bumps ``poses_version`` (the caller's counter).
    """
    set_done, static, version, seen = broad[5], broad[10], broad[11], broad[12]
    fresh = version[0] == seen[0]
    seen[0] = version[0]
    for s in range(set_done.shape[0]):
        if not (fresh and static[s]):
            set_done[s] = False


@njit
def order_runs(order, owner, run_end, last):
    """
    Set ``run_end[i]`` for ``i <= last``: one past the end of the run of ``order[i]``'s group.

    A run is a stretch of consecutive positions of ``order`` whose piece pairs have the same
    ``owner`` (cull group): a group found apart skips its run at once. Positions after ``last``
    must already hold their runs (they are filled backwards).
    """
    n = order.shape[0]
    for i in range(min(last, n - 1), -1, -1):
        if i + 1 < n and owner[order[i]] == owner[order[i + 1]]:
            run_end[i] = run_end[i + 1]
        else:
            run_end[i] = i + 1


@njit
def configurations_hit(qs, chain, placement, work, scene, pairs, padding, order, rates, cache, ws,
                       hill_climb, broad, margin, hits, stats):
    """
    For each configuration of ``qs`` (N, dof), the first piece pair within ``margin`` (or -1).

    ``chain`` = (kernel, origins, axes, scalars) of core.chain; ``placement`` = (piece link
    index or -1, piece obstacle index, piece origins, base pose, obstacle poses); ``work`` =
    (link poses, piece poses, chain scratch); ``pairs`` (m, 2) piece indices, ``padding`` (m,)
    their pair padding, ``order`` the pairs to test, ``rates`` (m,) unused here (zero
    half-width); the tracked ``cache`` is a PairSet's; ``ws`` query.workspace(); ``broad`` the
    body pairs (:class:`CheckArrays`). Writes
    ``hits`` (N,) and adds to ``stats`` (STATS,).
    """
    piece_poses = work[1]
    for n in range(qs.shape[0]):
        _pose_pieces(qs[n], chain, placement, work)
        hits[n] = _first_hit(scene, pairs, piece_poses, margin, padding, order, 0.0, rates,
                             cache, ws, hill_climb, broad, stats)


@njit
def _segment_rates(q0, q1, bounds, rates, broad):
    """
    Set ``rates[k] = sum_v bounds[k, v] |q1_v - q0_v|`` (moving variables only: inf bounds).

    Each body pair's rate (``broad``) is the largest of its piece pairs'.
    """
    owner, group_rate = broad[0], broad[8]
    for g in range(group_rate.shape[0]):
        group_rate[g] = 0.0
    for k in range(bounds.shape[0]):
        total = 0.0
        for v in range(bounds.shape[1]):
            step = abs(q1[v] - q0[v])
            if step > 0.0:
                total += bounds[k, v] * step
        rates[k] = total
        if owner.shape[0] > 0 and not total <= group_rate[owner[k]]:
            group_rate[owner[k]] = total


@njit
def segment_hit(q0, q1, chain, placement, work, scene, pairs, padding, order, rates, cache, ws,
                hill_climb, broad, bounds, q, stack, result, margin, tolerance, stats):
    """
    Certify the segment ``q0 -> q1`` free of pairs within ``margin``, or find a contact.

    ``bounds`` (m, dof): pair ``k`` closes in by at most ``sum_v bounds[k, v] |dq_v|``;
    ``rates`` (m,), ``q`` (dof,) and ``stack`` (2, _MAX_DEPTH + 2) are work arrays; the other
    arguments are those of :func:`configurations_hit`. ``result`` (3,) receives (1 when free
    else 0, the fraction of the first contact found (1 when free), the certified prefix).
    A sub-interval whose failing pair would need a half-width below ``tolerance`` metres of
    motion is reported as a contact: the answer is conservative, never optimistic.
    """
    _segment_rates(q0, q1, bounds, rates, broad)
    piece_poses = work[1]
    stack[0, 0], stack[1, 0], size = 0.0, 1.0, 1
    covered = 0.0
    while size > 0:
        size -= 1
        low, high = stack[0, size], stack[1, size]
        t, half = 0.5 * (low + high), 0.5 * (high - low)
        for v in range(q.shape[0]):
            q[v] = q0[v] + t * (q1[v] - q0[v])
        _pose_pieces(q, chain, placement, work)
        k = _first_hit(scene, pairs, piece_poses, margin, padding, order, half, rates, cache,
                       ws, hill_climb, broad, stats)
        if k < 0:
            covered = high
            continue
        exact = _first_hit(scene, pairs, piece_poses, margin, padding, order, 0.0, rates, cache,
                           ws, hill_climb, broad, stats)
        if exact >= 0 or half * rates[k] <= tolerance or size + 2 > stack.shape[1]:
            result[0], result[1], result[2] = 0.0, t, covered
            return
        stack[0, size], stack[1, size] = t, high
        stack[0, size + 1], stack[1, size + 1] = low, t
        size += 2
    result[0], result[1], result[2] = 1.0, 1.0, 1.0


class CheckArrays:
    """
    The work arrays of the checks over one BodyPairs engine, and their argument tuples.

    ``order`` holds the piece pairs to test (a selection, in test order, reordered by the
    checks); the tracked cache is the engine's PairSet's, shared with its distance queries.
    ``broad`` is ``(owner, group_sets, set_start, members, spheres, set_done, verdict,
    group_padding, group_rate, run_end, static, poses_version, seen_version)``: the cull group
    of each piece pair and the PairSet's groups (empty when it has none: no broad phase), with
    the work arrays of the checks' cull. ``run_end`` (len(order),) ends each position's run of
    one group in ``order``; ``static`` marks the piece sets whose bounds outlive a
    configuration (no piece of them is ``moving``); they are recomputed whenever the caller
    bumps ``poses_version`` (1,) (the poses of unmoving pieces changed).
    """

    def __init__(self, engine, dof, order=None, moving=None, poses_version=None):
        """Bind the engine's scene, pairs, padding and cache; allocate the work arrays."""
        pair_set = engine.pair_set
        m = pair_set.num_pairs
        self.order = np.arange(m, dtype=np.int64) if order is None else \
            np.array(order, dtype=np.int64)  # its own: the checks reorder it
        self.rates = np.zeros(m)
        self.stats = np.zeros(STATS, np.int64)
        self.q = np.zeros(dof)
        self.stack = np.zeros((2, _MAX_DEPTH + 2))
        self.result = np.zeros(3)
        self.hits = np.empty(0, np.int64)
        padding = np.ascontiguousarray(engine.pair_padding, dtype=np.float64)
        self._pairs = (pair_set._scene, pair_set._pairs, padding, self.order, self.rates,
                       pair_set._cache[:4], workspace(), pair_set.hill_climb,
                       _broad_arrays(pair_set.groups, padding, self.order, moving,
                                     poses_version))

    def pair_arguments(self):
        """Return ``(scene, pairs, padding, order, rates, cache, ws, hill_climb, broad)``."""
        return self._pairs

    def segment_arguments(self, bounds):
        """Return :meth:`pair_arguments` followed by ``(bounds, q, stack, result)``."""
        return self._pairs + (bounds, self.q, self.stack, self.result)

    def hit_buffer(self, count):
        """Return a reused (count,) int64 array for the verdicts of ``count`` configurations."""
        if self.hits.shape[0] < count:
            self.hits = np.empty(max(count, 64), np.int64)
        return self.hits[:count]


def _broad_arrays(groups, padding, order, moving, poses_version):
    """Return the ``broad`` tuple of :class:`CheckArrays` from a PairSet's ``groups``."""
    group_start, group_sets, set_start, members = groups
    count = max(group_start.shape[0] - 1, 0)
    sizes = np.diff(group_start) if count else np.zeros(0, np.int64)
    owner = np.repeat(np.arange(count, dtype=np.int64), sizes)
    group_padding = np.full(count, -np.inf)
    if count:
        np.maximum.at(group_padding, owner, padding)
    sets = set_start.shape[0] - 1
    run_end = np.zeros(order.shape[0], np.int64)
    if count and order.shape[0]:
        order_runs(order, owner, run_end, order.shape[0] - 1)
    static = np.zeros(sets, np.bool_)
    if moving is not None:
        still = ~np.asarray(moving, bool)
        static = np.array([still[members[set_start[s]:set_start[s + 1]]].all()
                           for s in range(sets)], np.bool_).reshape(sets)
    version = np.zeros(1, np.int64) if poses_version is None else poses_version
    return (owner, group_sets, set_start, members, np.zeros((sets, SET_BOUNDS)),
            np.zeros(sets, np.bool_), np.zeros(count, np.int8), group_padding, np.zeros(count),
            run_end, static, version, version - 1)


def check_arrays(engine, dof, order=None, moving=None, poses_version=None):
    """
    Return the :class:`CheckArrays` of ``engine`` for a chain of ``dof`` variables.

    ``moving`` (P,) marks the pieces the checks place at each configuration (default all);
    the caller bumps ``poses_version`` (1,) int64 whenever it moves the others.
    """
    return CheckArrays(engine, dof, order, moving, poses_version)
