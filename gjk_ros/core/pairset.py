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
Many tracked pairs updated in one compiled call: what the node runs every cycle.

Bodies live in one scene (flat arrays), pairs in an (m, 2) index array and every pair's tracked
cache in flat (m, ...) arrays, so ``update`` is a single loop in compiled code with no Python
per pair and no allocation.

Broad phase. Pairs may come in groups: consecutive runs of pairs between two sets of bodies
(the pieces of a robot link and of an obstacle). Each update bounds every set by one sphere
and one axis-aligned box enclosing its members' bounding spheres at their poses (the box is
the tighter bound of a long or flat body: a counter, an open door); a group whose two sets
are farther apart than ``max_distance`` by either bound is BEYOND in one step, its pairs
marked without being looked at. A member's sphere lies inside its set's bounds, so every pair
of such a group would have been culled by its own spheres: the cull changes no status and no
value, only the work (``broad_stats``). The bounds are widened by a relative 1e-12 so that
rounding never makes one smaller than a member's (the cull only ever skips pairs the pair test
culls).

Unchanged pairs (``reuse_unchanged``). A pair's answer is a function of its two bodies' poses
(the bodies are fixed for the PairSet's life): a pair whose two poses are bit for bit those of
the update that last answered it, at the same ``max_distance``, keeps that answer without a
query. Its row is not touched (the exact answer for these poses, as its status says), its
counters read 0 (no work this update) and ``reused`` flags it. A robot at rest among static
obstacles then costs one pass over the flags.

Two threads (``threads=2``). The groups are cut into ``CHUNKS`` runs of about equal pair
counts; the calling thread and one worker thread (one per process, shared) each take the next
run until none is left, each with work arrays of its own, in compiled code that releases the
GIL. A pair's answer depends only on its own poses and tracked cache, so the rows, statuses,
counters and caches are bit for bit those of one thread; when the worker is busy elsewhere the
calling thread takes every run, and never waits for a run nobody started.
"""

from concurrent.futures import ThreadPoolExecutor
import itertools
import math
import threading

import numpy as np

from ._jit import njit
from .cache import cache_arrays, clear_row, copy_row, SimplexCache
from .distance import check_poses
from .epa import epa_workspace
from .query import (output_arrays, query_pair, V_BOUND, V_DISTANCE, V_NORMAL, V_WITNESS_A,
                    V_WITNESS_B, workspace)
from .scene import B_BOUND, B_CX, B_CY, B_CZ, build_scene, scene_body, scene_geometry
from .status import DistanceResult, Status

__all__ = ['bounding_sets', 'PairSet', 'set_spheres', 'sphere_gap']

BEYOND, INACTIVE = int(Status.BEYOND), int(Status.INACTIVE)
# Work counters of the broad phase (machine-independent, summed over updates): groups culled by
# their set spheres, pairs skipped with them, pairs whose own spheres were tested, pairs that
# kept their answer because neither body moved (module docstring).
BROAD_STATS = 4
GROUPS_CULLED, PAIRS_SKIPPED, PAIRS_TESTED, PAIRS_REUSED = range(BROAD_STATS)
# Columns of a set's bounds: sphere centre (3), radius, box low (3), box high (3).
SET_BOUNDS = 10
# Relative widening of a set sphere (module docstring): far above rounding, far below any gap.
_WIDEN = 1e-12
# Two threads (module docstring): runs of groups per update, and the fewest pairs worth it (a
# run's compiled call costs some microseconds).
CHUNKS = 8
PARALLEL_MIN_PAIRS = 2048
_WORKER = None
_WORKER_LOCK = threading.Lock()


def _worker():
    """Return the process's one worker thread (started on first use)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix='gjk_pairset')
        return _WORKER


@njit(inline=True)
def _mark(values, status, counts, k, outcome):
    """Write a record that is not a measurement: NaN values and a status that says why."""
    for c in range(values.shape[1]):
        values[k, c] = math.nan
    for c in range(4):
        counts[k, c] = 0
    status[k] = outcome


@njit(inline=True)
def sphere_gap(body_a, body_b, pose_a, pose_b):
    """Distance between the two bounding spheres (a lower bound of the signed distance)."""
    gap2 = 0.0
    for c in range(3):
        ca = (pose_a[c, 0] * body_a[B_CX] + pose_a[c, 1] * body_a[B_CY]
              + pose_a[c, 2] * body_a[B_CZ] + pose_a[c, 3])
        cb = (pose_b[c, 0] * body_b[B_CX] + pose_b[c, 1] * body_b[B_CY]
              + pose_b[c, 2] * body_b[B_CZ] + pose_b[c, 3])
        gap2 += (ca - cb) ** 2
    return math.sqrt(gap2) - body_a[B_BOUND] - body_b[B_BOUND]


@njit(inline=True)
def _beyond(body_a, body_b, pose_a, pose_b, max_distance):
    """Bounding-sphere test: True when the bodies are certainly farther than max_distance."""
    return sphere_gap(body_a, body_b, pose_a, pose_b) > max_distance


@njit(inline=True)
def _member_centre(scene, poses, piece, c):
    """Coordinate ``c`` of a piece's bounding-sphere centre at its pose."""
    params, pose = scene[7], poses[piece]
    return (pose[c, 0] * params[piece, 3] + pose[c, 1] * params[piece, 4]
            + pose[c, 2] * params[piece, 5] + pose[c, 3])


@njit(inline=True)
def _set_sphere(scene, poses, members, lo, hi, spheres, s):
    """
    Write the bounds of ``members[lo:hi]``'s spheres at their poses to ``spheres[s]``.

    ``spheres[s]`` is (centre (3), radius, box low (3), box high (3)): a sphere and an
    axis-aligned box each enclosing every member's sphere. The centre is the middle of the box
    of the members' centres (two passes, no storage); both bounds are widened (module
    docstring). Anything non-finite makes the radius NaN, which culls nothing.
    """
    lx = ly = lz = math.inf
    hx = hy = hz = -math.inf
    bl0 = bl1 = bl2 = math.inf
    bh0 = bh1 = bh2 = -math.inf
    for m in range(lo, hi):
        x = _member_centre(scene, poses, members[m], 0)
        y = _member_centre(scene, poses, members[m], 1)
        z = _member_centre(scene, poses, members[m], 2)
        r = scene[7][members[m], 6]
        lx, ly, lz = min(lx, x), min(ly, y), min(lz, z)
        hx, hy, hz = max(hx, x), max(hy, y), max(hz, z)
        bl0, bl1, bl2 = min(bl0, x - r), min(bl1, y - r), min(bl2, z - r)
        bh0, bh1, bh2 = max(bh0, x + r), max(bh1, y + r), max(bh2, z + r)
    cx, cy, cz = 0.5 * (lx + hx), 0.5 * (ly + hy), 0.5 * (lz + hz)
    radius = 0.0
    for m in range(lo, hi):
        reach = math.sqrt((_member_centre(scene, poses, members[m], 0) - cx) ** 2
                          + (_member_centre(scene, poses, members[m], 1) - cy) ** 2
                          + (_member_centre(scene, poses, members[m], 2) - cz) ** 2) \
            + scene[7][members[m], 6]
        if not reach <= math.inf:  # NaN: max() would drop it
            radius = math.nan
            break
        radius = max(radius, reach)
    widen = _WIDEN * (radius + abs(cx) + abs(cy) + abs(cz))
    spheres[s, 0], spheres[s, 1], spheres[s, 2] = cx, cy, cz
    spheres[s, 3] = radius + widen
    spheres[s, 4], spheres[s, 5], spheres[s, 6] = bl0 - widen, bl1 - widen, bl2 - widen
    spheres[s, 7], spheres[s, 8], spheres[s, 9] = bh0 + widen, bh1 + widen, bh2 + widen


@njit
def set_spheres(scene, poses, set_start, members, spheres):
    """Bounds of every set (``members[set_start[s]:set_start[s + 1]]``) at ``poses``."""
    for s in range(set_start.shape[0] - 1):
        _set_sphere(scene, poses, members, set_start[s], set_start[s + 1], spheres, s)


@njit(inline=True)
def sets_gap(spheres, a, b):
    """
    Return a lower bound of the sphere gap of every (member of set a, member of set b).

    The larger of the sets' sphere gap and, when their boxes are apart, the boxes' distance.
    Two spheres inside two separated boxes are at least the boxes' distance apart (the sum of
    the radii is at most their reach along the separating axes); boxes that overlap bound
    nothing, as a sphere gap can be negative. A NaN set bound gives NaN (never beyond).
    """
    gap2 = 0.0
    for c in range(3):
        gap2 += (spheres[a, c] - spheres[b, c]) ** 2
    gap = math.sqrt(gap2) - spheres[a, 3] - spheres[b, 3]
    if not gap == gap:
        return gap
    box2 = 0.0
    for c in range(3):
        apart = max(spheres[b, 4 + c] - spheres[a, 7 + c], spheres[a, 4 + c] - spheres[b, 7 + c])
        if apart > 0.0:
            box2 += apart * apart
    return max(gap, math.sqrt(box2)) if box2 > 0.0 else gap


@njit(inline=True)
def _update_range(scene, pairs, poses, active, max_distance, cache, ws, ep, out, hill_climb,
                  tracking, lo, hi, stats, reuse):
    # Unpack every tuple once: inside the loop each array is then used without reference-count
    # traffic (see query.py's performance note).
    geometry = scene_geometry(scene)
    cache_count, cache_index, cache_local, cache_seeds = cache[0], cache[1], cache[2], cache[3]
    epa_store = cache[4:]
    simplex, simplex_index, weights, counters, rel, seeds = ws
    values, status, counts = out
    moved, answered, reused = reuse
    for k in range(lo, hi):
        reused[k] = False
        if not active[k]:
            _mark(values, status, counts, k, INACTIVE)
            answered[k] = False
            continue
        i, j = pairs[k, 0], pairs[k, 1]
        if answered[k] and not moved[i] and not moved[j]:
            # Both poses are those of the update that answered it (module docstring).
            reused[k] = True
            for c in range(4):
                counts[k, c] = 0
            stats[PAIRS_REUSED] += 1
            continue
        answered[k] = True
        body_a, body_b = scene_body(scene, i), scene_body(scene, j)
        if max_distance < math.inf:
            stats[PAIRS_TESTED] += 1
            if _beyond(body_a, body_b, poses[i], poses[j], max_distance):
                _mark(values, status, counts, k, BEYOND)
                continue
        query_pair(geometry, body_a, geometry, body_b, poses[i], poses[j], k, cache_count,
                   cache_index, cache_local, cache_seeds, epa_store, simplex, simplex_index,
                   weights, counters, rel, seeds, ep, values, status, counts, hill_climb,
                   tracking)


@njit
def _update_pairs(scene, pairs, poses, active, max_distance, cache, ws, ep, out, hill_climb,
                  tracking, broad, reuse):
    group_start, group_sets, set_start, members, spheres, stats = broad
    groups = group_start.shape[0] - 1
    if groups < 1 or not max_distance < math.inf:
        _update_range(scene, pairs, poses, active, max_distance, cache, ws, ep, out,
                      hill_climb, tracking, 0, pairs.shape[0], stats, reuse)
        return
    set_spheres(scene, poses, set_start, members, spheres)
    _update_groups(scene, pairs, poses, active, max_distance, cache, ws, ep, out, hill_climb,
                   tracking, broad, reuse, stats, 0, groups)


@njit
def _update_groups(scene, pairs, poses, active, max_distance, cache, ws, ep, out, hill_climb,
                   tracking, broad, reuse, stats, first, last):
    """Update the pairs of groups ``first`` to ``last - 1``, their set bounds already made."""
    group_start, group_sets, spheres = broad[0], broad[1], broad[4]
    values, status, counts = out
    answered, reused = reuse[1], reuse[2]
    for g in range(first, last):
        lo, hi = group_start[g], group_start[g + 1]
        if sets_gap(spheres, group_sets[g, 0], group_sets[g, 1]) > max_distance:
            # Every pair of the group is beyond by its own spheres too (module docstring).
            for k in range(lo, hi):
                _mark(values, status, counts, k, BEYOND if active[k] else INACTIVE)
                answered[k], reused[k] = active[k], False
            stats[GROUPS_CULLED] += 1
            stats[PAIRS_SKIPPED] += hi - lo
            continue
        _update_range(scene, pairs, poses, active, max_distance, cache, ws, ep, out,
                      hill_climb, tracking, lo, hi, stats, reuse)


@njit
def _update_sequence(scene, pairs, poses, active, max_distance, cache, ws, ep, out, hill_climb,
                     tracking, broad, reuse, values, status, counts):
    # One configuration after the other, each tracked from the one before (Cameron section 4);
    # every step's rows are copied out before the next step overwrites them. ``reuse`` says
    # every body moved: no step keeps an answer.
    for n in range(poses.shape[0]):
        _update_pairs(scene, pairs, poses[n], active, max_distance, cache, ws, ep, out,
                      hill_climb, tracking, broad, reuse)
        _copy_rows(out, values, status, counts, n)


@njit
def _copy_rows(out, values, status, counts, n):
    """Copy the output rows of one update into step ``n`` of the sequence arrays."""
    step_values, step_status, step_counts = out
    for k in range(step_values.shape[0]):
        for c in range(step_values.shape[1]):
            values[n, k, c] = step_values[k, c]
        status[n, k] = step_status[k]
        for c in range(step_counts.shape[1]):
            counts[n, k, c] = step_counts[k, c]


class PairSet:
    """
    Tracked signed distances of many body pairs.

    Parameters
    ----------
    bodies : sequence of ConvexPolytope
        Body ``i`` is posed by ``poses[i]`` in ``update``.
    pairs : (m, 2) int
        Body indices (A, B) of each pair; the distance is measured from A to B.
    hill_climb : bool
        Walk the vertex graph for support vertices (Cameron section 3.2).
    tracking : bool
        Carry each pair's simplex (and penetration polytope) across updates.
    groups : sequence of int, optional
        ``G + 1`` increasing pair indices from 0 to m: group ``g`` is the pairs
        ``[groups[g], groups[g + 1])``, culled together when the bodies they pair cannot be
        within ``max_distance`` (module docstring). Default no groups: every pair on its own.
    threads : int
        1, or 2: with groups, at least ``PARALLEL_MIN_PAIRS`` pairs and a finite
        ``max_distance``, ``update`` shares the groups with a worker thread (module docstring).
    reuse_unchanged : bool
        A pair whose two poses are bit for bit those of the update that last answered it, at
        the same ``max_distance``, keeps that answer without a query (module docstring).

    After ``update`` the arrays ``distance`` (m,), ``witness_a`` / ``witness_b`` / ``normal``
    (m, 3), ``status`` (m,), ``error_bound`` (m,), ``iterations``, ``support_calls``,
    ``hill_climb_steps`` and ``epa_iterations`` (m,) hold the answers (world frame, same
    conventions as ``DistanceResult``). They are overwritten by the next update. ``broad_stats``
    (BROAD_STATS,) counts the broad phase's work over every update so far; ``reused`` (m,)
    flags the pairs the last update kept unchanged (their counters are 0).

    """

    def __init__(self, bodies, pairs, *, hill_climb=True, tracking=True, groups=None,
                 threads=1, reuse_unchanged=False):
        """Lay out the bodies and allocate every pair's cache once."""
        self._bodies = list(bodies)
        self._scene = build_scene(self._bodies)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= len(self._bodies)):
            raise ValueError(f'pairs: body indices must be in [0, {len(self._bodies)})')
        self._pairs = np.ascontiguousarray(pairs)
        self.hill_climb = bool(hill_climb)
        self.tracking = bool(tracking)
        self._cache = cache_arrays(self.num_pairs)
        self._out = output_arrays(self.num_pairs)
        self._ws = workspace()
        self._ep = epa_workspace()
        self._all_active = np.ones(self.num_pairs, dtype=np.bool_)
        self.broad_stats = np.zeros(BROAD_STATS, np.int64)
        self.groups = bounding_sets(self._pairs, groups)
        self._broad = self.groups + (np.zeros((self.groups[2].shape[0] - 1, SET_BOUNDS)),
                                     self.broad_stats)
        self.reuse_unchanged = bool(reuse_unchanged)
        # Per body: moved since the last update (NaN last poses: everything moves first); per
        # pair: its row answers the last poses, and it was kept by the last update.
        self._last_poses = np.full((self.num_bodies, 4, 4), np.nan)
        self._reuse = (np.ones(self.num_bodies, np.bool_), np.zeros(self.num_pairs, np.bool_),
                       np.zeros(self.num_pairs, np.bool_))
        self._answers_for = None  # (max_distance, hill_climb, tracking) of the answered rows
        if threads not in (1, 2):
            raise ValueError(f'threads must be 1 or 2, got {threads!r}')
        self.threads = threads
        self._runs = _runs(self.groups[0], CHUNKS)
        # The worker's own work arrays and counters (module docstring).
        self._worker_arrays = (workspace(), epa_workspace(), np.zeros(BROAD_STATS, np.int64))

    @property
    def num_pairs(self):
        return self._pairs.shape[0]

    @property
    def num_bodies(self):
        return len(self._bodies)

    @property
    def pairs(self):
        return self._pairs.copy()

    @property
    def bodies(self):
        return tuple(self._bodies)

    @property
    def reused(self):
        """Return which pairs the last update kept unchanged (``reuse_unchanged``)."""
        return self._reuse[2]

    def update(self, poses, active=None, max_distance=math.inf):
        """
        Recompute every active pair for new body poses, in one compiled call.

        Parameters
        ----------
        poses : (num_bodies, 4, 4) float
            Body-to-world transforms.
        active : (m,) bool, optional
            Pairs to compute; the others get Status.INACTIVE and NaN, and keep their cache.
        max_distance : float
            Pairs whose bounding spheres are farther apart get Status.BEYOND and NaN.

        """
        poses = check_poses(poses, 'poses', (self.num_bodies, 4, 4))
        active, max_distance = self._options(active, max_distance)
        self._moved(poses, max_distance)
        if self.threads > 1 and len(self._runs) > 1 and max_distance < math.inf and \
                self.num_pairs >= PARALLEL_MIN_PAIRS:
            self._update_shared(poses, active, max_distance)
            return
        _update_pairs(self._scene, self._pairs, poses, active, max_distance, self._cache,
                      self._ws, self._ep, self._out, self.hill_climb, self.tracking,
                      self._broad, self._reuse)

    def _update_shared(self, poses, active, max_distance):
        """Share the groups' runs between this thread and the worker (module docstring)."""
        set_spheres(self._scene, poses, self._broad[2], self._broad[3], self._broad[4])
        runs, taken = self._runs, itertools.count()  # next() is atomic under the GIL
        arguments = (self._scene, self._pairs, poses, active, max_distance, self._cache)
        options = (self._out, self.hill_climb, self.tracking, self._broad, self._reuse)

        def work(ws, ep, stats):
            run = next(taken)
            while run < len(runs) - 1:
                _update_groups(*arguments, ws, ep, *options, stats, runs[run], runs[run + 1])
                run = next(taken)

        ws, ep, stats = self._worker_arrays
        stats[:] = 0
        helper = _worker().submit(work, ws, ep, stats)
        work(self._ws, self._ep, self.broad_stats)
        if not helper.cancel():  # it started: wait for the run it took
            helper.result()
        self.broad_stats += stats

    def _moved(self, poses, max_distance):
        """
        Flag the bodies whose pose is not bit for bit the last update's (every one without reuse).

        Answers given under other options (``max_distance``, hill climbing, tracking) are
        not kept: the answered rows are forgotten.
        """
        moved, answered, _ = self._reuse
        options = (max_distance, self.hill_climb, self.tracking)
        if not self.reuse_unchanged or options != self._answers_for:
            answered[:] = False
            self._answers_for = options if self.reuse_unchanged else None
        if self.reuse_unchanged:
            np.any(poses.view(np.int64) != self._last_poses.view(np.int64), axis=(1, 2),
                   out=moved)
            self._last_poses[...] = poses

    def update_sequence(self, poses, active=None, max_distance=math.inf, out=None):
        """
        Run :meth:`update` for N pose sets in turn, in one compiled call.

        Each step is tracked from the one before, as N calls of ``update`` would be (a
        trajectory), without a Python call per step.

        Parameters
        ----------
        poses : (N, num_bodies, 4, 4) float
            Body-to-world transforms of each step.
        active, max_distance
            As in :meth:`update`, for every step.
        out : tuple of numpy.ndarray, optional
            ``(values, status, counts)`` of the shapes below to write into (for reuse).

        Returns
        -------
        tuple of numpy.ndarray
            ``values`` (N, m, 11): distance, witness_a (3), witness_b (3), normal (3),
            error_bound; ``status`` (N, m) int8; ``counts`` (N, m, 4): GJK iterations, support
            calls, hill-climb steps, EPA iterations. The PairSet's own arrays hold the last step.

        """
        poses = check_poses(poses, 'poses')
        if poses.ndim != 4 or poses.shape[1:] != (self.num_bodies, 4, 4):
            raise ValueError(f'poses: expected shape (N, {self.num_bodies}, 4, 4), got '
                             f'{poses.shape}')
        active, max_distance = self._options(active, max_distance)
        values, status, counts = self._sequence_arrays(poses.shape[0], out)
        # Every body moves at every step, and the next update starts without kept answers.
        self._forget_answers()
        self._reuse[0][:] = True
        _update_sequence(self._scene, self._pairs, poses, active, max_distance, self._cache,
                         self._ws, self._ep, self._out, self.hill_climb, self.tracking,
                         self._broad, self._reuse, values, status, counts)
        self._forget_answers()
        return values, status, counts

    def _forget_answers(self, k=None):
        """Make the next update query pair ``k`` (every pair when None) whatever the poses."""
        if k is None:
            self._reuse[1][:] = False
            self._last_poses[...] = np.nan
        else:
            self._reuse[1][k] = False

    def _sequence_arrays(self, count, out):
        expected = [((count,) + a.shape, a.dtype) for a in self._out]
        if out is None:
            return tuple(np.empty(shape, dtype) for shape, dtype in expected)
        out = tuple(out)
        if len(out) != 3 or any(a.shape != shape or a.dtype != dtype or not a.flags.c_contiguous
                                for a, (shape, dtype) in zip(out, expected)):
            raise ValueError(f'out: expected C-contiguous arrays {expected}')
        return out

    def _options(self, active, max_distance):
        if active is None:
            active = self._all_active
        else:
            active = np.ascontiguousarray(active, dtype=np.bool_)
            if active.shape != (self.num_pairs,):
                raise ValueError(f'active: expected shape ({self.num_pairs},), '
                                 f'got {active.shape}')
        max_distance = float(max_distance)
        if math.isnan(max_distance):
            raise ValueError('max_distance must not be NaN')
        return active, max_distance

    # Results -----------------------------------------------------------------------------------

    distance = property(lambda self: self._out[0][:, V_DISTANCE])
    witness_a = property(lambda self: self._out[0][:, V_WITNESS_A:V_WITNESS_A + 3])
    witness_b = property(lambda self: self._out[0][:, V_WITNESS_B:V_WITNESS_B + 3])
    normal = property(lambda self: self._out[0][:, V_NORMAL:V_NORMAL + 3])
    status = property(lambda self: self._out[1])
    error_bound = property(lambda self: self._out[0][:, V_BOUND])
    iterations = property(lambda self: self._out[2][:, 0])
    support_calls = property(lambda self: self._out[2][:, 1])
    hill_climb_steps = property(lambda self: self._out[2][:, 2])
    epa_iterations = property(lambda self: self._out[2][:, 3])

    def result(self, k):
        """Return the DistanceResult of pair ``k`` from the last update."""
        return DistanceResult.from_row(self._out, int(k))

    # Caches ------------------------------------------------------------------------------------

    def reset_cache(self, k=None):
        """Forget the tracked state of pair ``k`` (all pairs when None)."""
        for row in (range(self.num_pairs) if k is None else [int(k)]):
            clear_row(self._cache, row)
        self._forget_answers(None if k is None else int(k))

    def get_cache(self, k):
        """Return a SimplexCache holding a copy of pair ``k``'s tracked state."""
        cache = SimplexCache()
        copy_row(self._cache, int(k), cache._arrays, 0)
        i, j = self._pairs[int(k)]
        cache._bodies = (self._bodies[i]._key, self._bodies[j]._key)
        return cache

    def set_cache(self, k, cache):
        """
        Load a tracked state into pair ``k`` (e.g. carried over when bodies were rebuilt).

        The cache must come from the same two bodies (same ConvexPolytope objects); otherwise
        the pair starts cold.
        """
        i, j = self._pairs[int(k)]
        self._forget_answers(int(k))
        if cache._bodies not in (None, (self._bodies[i]._key, self._bodies[j]._key)):
            clear_row(self._cache, int(k))
            return
        copy_row(cache._arrays, 0, self._cache, int(k))


def _runs(group_start, count):
    """Return group indices cutting the groups into up to ``count`` runs of about equal pairs."""
    groups = group_start.shape[0] - 1
    if groups < 1:
        return np.zeros(1, np.int64)
    targets = np.linspace(0, group_start[-1], count + 1)[1:-1]
    cuts = np.searchsorted(group_start, targets)
    return np.unique(np.concatenate([[0], np.clip(cuts, 0, groups), [groups]])).astype(np.int64)


def bounding_sets(pairs, groups):
    """
    Return ``(group_start, group_sets, set_start, members)``: the broad phase's layout.

    Group ``g`` pairs set ``group_sets[g, 0]`` (every first body of its pairs) with set
    ``group_sets[g, 1]`` (every second body); set ``s`` is ``members[set_start[s]:set_start[s +
    1]]``. Equal sets are stored once (a link's pieces serve all its groups). Without groups,
    every array is empty.
    """
    if groups is None:
        return (np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros(1, np.int64),
                np.zeros(0, np.int64))
    start = np.ascontiguousarray(groups, dtype=np.int64).reshape(-1)
    if start.size < 1 or start[0] != 0 or start[-1] != len(pairs) or (np.diff(start) < 0).any():
        raise ValueError(f'groups: expected increasing pair indices from 0 to {len(pairs)}')
    index, sets = {}, []

    def set_of(bodies):
        key = tuple(sorted(set(bodies)))
        if key not in index:
            index[key] = len(sets)
            sets.append(key)
        return index[key]

    firsts, seconds = pairs[:, 0].tolist(), pairs[:, 1].tolist()
    bounds = start.tolist()
    group_sets = np.array([(set_of(firsts[lo:hi]), set_of(seconds[lo:hi]))
                           for lo, hi in zip(bounds[:-1], bounds[1:])], np.int64).reshape(-1, 2)
    set_start = np.concatenate([[0], np.cumsum([len(key) for key in sets])]).astype(np.int64)
    members = np.array([body for key in sets for body in key], np.int64)
    return start, group_sets, set_start, members
