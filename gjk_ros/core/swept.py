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
Swept distances: the minimum signed distance of body pairs over the motion between two samples.

A distance measured at two instants says nothing about the motion between them: a link that
moves 33 mm per cycle passes through a 5 mm plate with both samples positive. Here each frame
moves from its start to its end pose as tf2 interpolates it (``core.interpolation``), pieces
ride their frames at fixed origins, and the minimum of the exact signed distance over the
interval is bracketed by conservative advancement.

The bound from one sample. The signed distance (the MTD, also in penetration) is the largest
separating-axis gap, ``d = max_n gap(n)`` with ``gap(n) = min_b n.b - max_a n.a``, and the
pair's normal ``n_a`` at a sample ``a`` attains it within the sample's ``error_bound`` (the
support certificate of docs/contract.md: the G-test plane apart, EPA's support gap in
penetration, both to the contract's round-off). Each piece moves like the translation
by the chord ``T`` of its bounding centre, give or take ``rho |s - a|`` per point
(``FrameMotion.sphere_motion``). Under that translation ``gap(n_a)`` changes linearly, by
``sigma_a = n_a . (T_B - T_A)`` per unit of ``s``, and the deviation costs at most the sum of
both ``rho``. So for every ``s`` of the interval

    d(s) >= d(a) - error_bound(a) + sigma_a (s - a) - rho |s - a|,

a tent below the sample, flat where the motion slides along the normal. No point moves faster
than ``|T_B - T_A| + rho`` relative to the other body, which bounds the distance's rate
(``SweptPairs.rates``) and the bounding spheres' approach.

The search (Mirtich's conservative advancement run from both ends of an interval at once: the
Piyavskii-Shubert method for Lipschitz minimisation). Between two neighbouring samples the two
tents bound the distance from below; their upper envelope bottoms out at one point. Every piece
pair of a body pair starts from its two end samples; the interval whose envelope is lowest over
all the body pair's piece pairs is measured exactly where its envelope bottoms out and split
there, until no envelope is lower than the smallest measured distance minus the tolerance. The
answer is that smallest measured distance, exact at its instant, with ``error_bound`` = the
distance minus the lowest envelope: the true minimum over the interval lies in ``[distance -
error_bound, distance]``, and ``error_bound <= tolerance + relative_tolerance * |distance|``
unless the sample cap was reached (status ``MAX_ITERATIONS`` then, the bound still certified).
Contact is never missed for the relative share: while no sample is negative the search goes on
until no envelope dips below ``-tolerance``. A pair translating without turning is settled by
its end samples alone: its tents are exact.

Open surfaces. A piece pair marked ``unsigned`` (a link against a flat piece of an open mesh,
which has no inside: ``core.bodypairs``) measures ``max(d, 0)``: its swept minimum is 0,
TOUCHING, as soon as one sample reaches contact, with the witnesses of the instantaneous answer
(the flat piece's point deepest in the link). Its tents still bound ``d`` from below, so their
envelope clamped at 0 bounds ``max(d, 0)``: the search stops at the first contact sample instead
of bracketing a depth that is not reported.

The end samples are the node's own measurements of the two cycles (``start``, ``end``); a piece
pair without one is measured here. A piece pair whose bounding spheres stay farther apart than
``max_distance`` over the whole interval is BEYOND, as in ``PairSet.update``.
"""

import math

import numpy as np

from ._jit import njit
from .bodypairs import MEASURED, padded_row, unsigned_row
from .distance import check_poses
from .interpolation import frame_at, FrameMotion, sphere_motion_into
from .pairset import PairSet, sphere_gap
from .query import query_pair, V_BOUND, V_DISTANCE, V_NORMAL, VALUE_COLUMNS
from .scene import scene_body, scene_geometry
from .status import Status

__all__ = ['DEFAULT_RELATIVE_TOLERANCE', 'DEFAULT_TOLERANCE', 'MAX_SAMPLES', 'pair_rows',
           'PieceRows', 'SweptPairs']

# Metres: the swept minimum is bracketed this tightly at contact. The planner's edge_free
# certifies segments to the same 0.1 mm.
DEFAULT_TOLERANCE = 1e-4
# The share of |distance| the bracket may add: a pair far from contact (or deep in it) needs its
# minimum to a few per cent, not to 0.1 mm. Whatever the share, the lower end of a bracket never
# exceeds the truth. `python -m bench.motion_bench`: on the Panda among 13 obstacles at 30 Hz,
# 0 costs 600 queries per cycle against 3 at 0.05, and 0.5 saves little more.
DEFAULT_RELATIVE_TOLERANCE = 0.05
# Exact samples per piece pair and interval, the end samples included. A V-shaped minimum needs
# about log2(rho / tolerance) of them; a pair gliding along a surface while turning needs about
# rho / tolerance over the flat stretch (25 for a 0.2 m finger 2 mm above a plate, turning 1
# rad/s at 30 Hz, to 0.1 mm). Past the cap the bracket stays certified and the status says so.
MAX_SAMPLES = 64
# A split point is kept this fraction of the interval's width away from its ends, so that every
# split shrinks the interval even where the envelope bottoms out at an end.
SPLIT_MARGIN = 1.0 / 16.0

_MAX_ITERATIONS, _DEGENERATE = int(Status.MAX_ITERATIONS), int(Status.DEGENERATE)
_SEPARATED, _TOUCHING = int(Status.SEPARATED), int(Status.TOUCHING)
_BEYOND, _INACTIVE = int(Status.BEYOND), int(Status.INACTIVE)
# Piece pair states of the search.
_SKIPPED, _LIVE = 0, 1


def piece_spheres(pieces, origins):
    """
    Return the (P, 3) centres, in their frames, and (P,) radii of the pieces' bounding spheres.

    ``origins`` (P, 4, 4) are the pieces' poses in their frames. A half-space's radius is
    infinite.
    """
    centres = np.array([origin[:3, :3] @ piece.bounding_center + origin[:3, 3]
                        for piece, origin in zip(pieces, origins)]).reshape(-1, 3)
    return centres, np.array([piece.bounding_radius for piece in pieces], dtype=np.float64)


class PieceRows:
    """
    Piece pair answers at one instant: an end sample of :meth:`SweptPairs.update`.

    ``values`` (m, 11) rows as a PairSet's (distance, witness_a, witness_b, normal,
    error_bound) and ``status`` (m,) core statuses. Built from arrays it checks them (ValueError
    naming ``values`` or ``status``); :func:`pair_rows` copies a PairSet's, which need no check.
    """

    __slots__ = ('values', 'status')

    def __init__(self, values, status):
        """Check and keep the two arrays (as float64 and int8 C arrays)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        status = np.ascontiguousarray(status, dtype=np.int8)
        if values.ndim != 2 or values.shape[1] != VALUE_COLUMNS:
            raise ValueError(f'values: expected (m, {VALUE_COLUMNS}) rows, got {values.shape}')
        if status.shape != values.shape[:1]:
            raise ValueError(f'status: expected ({values.shape[0]},), got {status.shape}')
        if status.size and (status.min() < 0 or status.max() >= MEASURED.size):
            raise ValueError('status: values must be core Status values')
        self.values, self.status = values, status

    def __len__(self):
        return self.values.shape[0]


def pair_rows(pair_set):
    """
    Return a copy of a PairSet's last answers as :class:`PieceRows`.

    A PairSet's rows are overwritten by its next update, so the last cycle's must be copied to
    serve as the next cycle's start sample.
    """
    rows = object.__new__(PieceRows)
    rows.values, rows.status = pair_set._out[0].copy(), pair_set._out[1].copy()
    return rows


@njit(inline=True)
def _envelope(a, low_a, slope_a, b, low_b, slope_b, turn):
    """
    Return ``(lowest, at)``: how low the distance can dip on ``[a, b]``, and where.

    The tent of ``a``, ``low_a + (slope_a - turn) (s - a)``, and that of ``b``, ``low_b +
    (slope_b + turn) (s - b)``, both bound the distance from below (module docstring); their
    maximum is convex, lowest at an end or where they cross. An unknown end (NaN, -inf) or an
    unbounded turn leaves no bound (-inf, split in the middle).
    """
    middle = 0.5 * (a + b)
    if not (low_a > -math.inf and low_b > -math.inf) or turn == math.inf:
        return -math.inf, middle
    width = b - a
    rise_a, rise_b = slope_a - turn, slope_b + turn
    at_a = max(low_a, low_b - rise_b * width)
    at_b = max(low_a + rise_a * width, low_b)
    lowest, at = (at_a, a) if at_a <= at_b else (at_b, b)
    if rise_a < rise_b:
        cross = (low_b - low_a + rise_a * a - rise_b * b) / (rise_a - rise_b)
        if a < cross < b:
            value = low_a + rise_a * (cross - a)
            if value < lowest:
                lowest, at = value, cross
    return lowest, at


@njit(inline=True)
def _piece_pose(motion, piece_frames, origins, piece, s, frame, pose):
    """Write ``piece``'s world pose at fraction ``s`` into ``pose`` (its frame, then origin)."""
    start, delta, axis, angle = motion
    frame_at(start, delta, axis, angle, piece_frames[piece], s, frame)
    origin = origins[piece]
    for i in range(3):
        for j in range(4):
            pose[i, j] = (frame[i, 0] * origin[0, j] + frame[i, 1] * origin[1, j]
                          + frame[i, 2] * origin[2, j] + (frame[i, 3] if j == 3 else 0.0))
        pose[3, i] = 0.0
    pose[3, 3] = 1.0


@njit(inline=True)
def _sphere_low(scene, i, j, motion, piece_frames, origins, rate, poses):
    """Return how close the two pieces' bounding spheres can come over the whole interval."""
    frame, pose_a, pose_b = poses
    _piece_pose(motion, piece_frames, origins, i, 0.0, frame, pose_a)
    _piece_pose(motion, piece_frames, origins, j, 0.0, frame, pose_b)
    gap0 = sphere_gap(scene_body(scene, i), scene_body(scene, j), pose_a, pose_b)
    _piece_pose(motion, piece_frames, origins, i, 1.0, frame, pose_a)
    _piece_pose(motion, piece_frames, origins, j, 1.0, frame, pose_b)
    gap1 = sphere_gap(scene_body(scene, i), scene_body(scene, j), pose_a, pose_b)
    return _envelope(0.0, gap0, 0.0, 1.0, gap1, 0.0, rate)[0]


@njit
def _measure(scene, pairs, p, s, motion, piece_frames, origins, engine, poses):
    """Measure piece pair ``p`` exactly at fraction ``s``; its row lands in row ``p`` of out."""
    cache, ws, ep, out, hill_climb, tracking = engine
    frame, pose_a, pose_b = poses
    i, j = pairs[p, 0], pairs[p, 1]
    _piece_pose(motion, piece_frames, origins, i, s, frame, pose_a)
    _piece_pose(motion, piece_frames, origins, j, s, frame, pose_b)
    geometry = scene_geometry(scene)
    simplex, simplex_index, weights, counters, rel, seeds = ws
    values, status, counts = out
    query_pair(geometry, scene_body(scene, i), geometry, scene_body(scene, j), pose_a, pose_b, p,
               cache[0], cache[1], cache[2], cache[3], cache[4:], simplex, simplex_index,
               weights, counters, rel, seeds, ep, values, status, counts, hill_climb, tracking)


@njit(inline=True)
def _slope(values, p, chord, i, j):
    """Return ``sigma``: the rate of the gap along the row's normal under the chords."""
    total = 0.0
    for c in range(3):
        total += values[p, V_NORMAL + c] * (chord[j, c] - chord[i, c])
    return total


@njit(inline=True)
def _piece_bound(samples, w):
    """Set the lowest envelope of piece pair ``w``'s intervals, which interval, and where."""
    at_s, high, low, slope, count, lowest, interval, split, turn, state = samples
    best, best_interval, best_at = math.inf, 0, 0.0
    for r in range(count[w] - 1):
        value, at = _envelope(at_s[w, r], low[w, r], slope[w, r], at_s[w, r + 1],
                              low[w, r + 1], slope[w, r + 1], turn[w])
        if value < best:
            best, best_interval, best_at = value, r, at
    lowest[w], interval[w], split[w] = best, best_interval, best_at


@njit(inline=True)
def _unsigned_low(samples, w, flat):
    """Clamp piece pair ``w``'s lowest envelope at 0 when it measures ``max(d, 0)``."""
    if flat and samples[5][w] < 0.0:
        samples[5][w] = 0.0


@njit(inline=True)
def _insert(samples, w, r, s, hi, lo, sigma):
    """Insert a sample into piece pair ``w``'s sorted samples after position ``r``."""
    at_s, high, low, slope, count = samples[0], samples[1], samples[2], samples[3], samples[4]
    for q in range(count[w], r + 1, -1):
        at_s[w, q], high[w, q] = at_s[w, q - 1], high[w, q - 1]
        low[w, q], slope[w, q] = low[w, q - 1], slope[w, q - 1]
    at_s[w, r + 1], high[w, r + 1], low[w, r + 1], slope[w, r + 1] = s, hi, lo, sigma
    count[w] += 1


@njit(inline=True)
def _copy_row(source, k, row):
    for c in range(row.shape[0]):
        row[c] = source[k, c]


@njit(inline=True)
def _sweep_group(g, scene, pairs, groups, sizes, pad, motion, piece_frames, origins, chord,
                 turns, ends, active, unsigned, measured, max_distance, tolerance, relative,
                 engine, poses, samples, row):
    """
    Bracket body pair ``g``'s swept minimum; return ``(status, fraction, piece pair, steps)``.

    ``row`` receives the unpadded row of the smallest sample with ``error_bound`` replaced by
    its gap to the lowest envelope (module docstring); an ``unsigned`` piece pair's samples
    count as ``max(d, 0)``.
    """
    start_values, start_status, end_values, end_status = ends
    out_values, out_status = engine[3][0], engine[3][1]
    at_s, high, low, slope, count, lowest, interval, split, turn, state = samples
    best_hi, best_s, best_piece, best_status = math.inf, math.nan, -1, _INACTIVE
    floor, beyond, steps = math.inf, False, 0  # floor: the lowest sample or beyond bound
    for w in range(sizes[g]):
        p = groups[g, w]
        state[w] = _SKIPPED
        if not active[p]:
            continue
        i, j = pairs[p, 0], pairs[p, 1]
        turn[w] = turns[i] + turns[j]
        if max_distance < math.inf:
            approach = 0.0
            for c in range(3):
                approach += (chord[j, c] - chord[i, c]) ** 2
            sphere = _sphere_low(scene, i, j, motion, piece_frames, origins,
                                 math.sqrt(approach) + turn[w], poses)
            if sphere > max_distance + pad:
                beyond = True
                floor = min(floor, sphere)
                continue
        count[w] = 0
        for end in range(2):
            given_values = start_values if end == 0 else end_values
            given_status = start_status if end == 0 else end_status
            s = float(end)
            if measured[given_status[p]]:
                source_values, source_status = given_values, given_status
            else:
                _measure(scene, pairs, p, s, motion, piece_frames, origins, engine, poses)
                steps += 1
                source_values, source_status = out_values, out_status
            hi = source_values[p, V_DISTANCE]
            lo = hi - source_values[p, V_BOUND]
            at_s[w, end], high[w, end], low[w, end] = s, hi, lo
            slope[w, end] = _slope(source_values, p, chord, i, j)
            count[w] += 1
            if unsigned[p]:
                hi, lo = max(hi, 0.0), max(lo, 0.0)
            floor = min(floor, lo)
            if hi < best_hi:
                best_hi, best_s, best_piece = hi, s, p
                best_status = source_status[p]
                _copy_row(source_values, p, row)
        state[w] = _LIVE
        _piece_bound(samples, w)
        _unsigned_low(samples, w, unsigned[p])
    if best_piece < 0:
        return (_BEYOND if beyond else _INACTIVE), math.nan, -1, steps
    while True:
        # The bracket asked for, on the padded distance the caller publishes.
        target = min(best_hi - tolerance - relative * abs(best_hi - pad), floor)
        chosen, bound = -1, math.inf
        for w in range(sizes[g]):
            if state[w] == _LIVE and lowest[w] < bound:
                chosen, bound = w, lowest[w]
        # Done when no envelope dips below the target; stuck when the lowest cannot be split
        # further (the sample cap) or bounds nothing (a turning half-space: no sphere holds it).
        if bound >= target or count[chosen] >= at_s.shape[1] or turn[chosen] == math.inf:
            break
        r = interval[chosen]
        a, b = at_s[chosen, r], at_s[chosen, r + 1]
        margin = SPLIT_MARGIN * (b - a)
        s = min(max(split[chosen], a + margin), b - margin)
        p = groups[g, chosen]
        _measure(scene, pairs, p, s, motion, piece_frames, origins, engine, poses)
        steps += 1
        hi = out_values[p, V_DISTANCE]
        lo = hi - out_values[p, V_BOUND]
        _insert(samples, chosen, r, s, hi, lo, _slope(out_values, p, chord, pairs[p, 0],
                                                      pairs[p, 1]))
        if unsigned[p]:
            hi, lo = max(hi, 0.0), max(lo, 0.0)
        floor = min(floor, lo)
        if hi < best_hi:
            best_hi, best_s, best_piece, best_status = hi, s, p, out_status[p]
            _copy_row(out_values, p, row)
        _piece_bound(samples, chosen)
        _unsigned_low(samples, chosen, unsigned[p])
    lower = floor
    for w in range(sizes[g]):
        if state[w] == _LIVE:
            lower = min(lower, lowest[w])
    row[V_BOUND] = best_hi - lower
    outcome = best_status
    if unsigned[best_piece] and row[V_DISTANCE] < 0.0:
        outcome = _TOUCHING  # a sheet crossed: distance 0 (_sweep writes its row)
    if row[V_BOUND] > tolerance + relative * abs(best_hi - pad) and outcome != _DEGENERATE:
        outcome = _MAX_ITERATIONS
    elif outcome == _SEPARATED and lower <= 0.0:
        outcome = _TOUCHING  # the bracket reaches contact: never certify the pair apart
    return outcome, best_s, best_piece, steps


@njit
def _sweep(scene, pairs, groups, sizes, pad_first, pad_second, motion, piece_frames, origins,
           chord, turns, ends, active, unsigned, measured, max_distance, tolerance, relative,
           engine, poses, samples, row, rows, fractions, status, best, steps):
    """Bracket every body pair's swept minimum (``_sweep_group``) and write its padded row."""
    for g in range(groups.shape[0]):
        outcome, fraction, piece, work = _sweep_group(
            g, scene, pairs, groups, sizes, pad_first[g] + pad_second[g], motion, piece_frames,
            origins, chord, turns, ends, active, unsigned, measured, max_distance, tolerance,
            relative, engine, poses, samples, row)
        status[g], fractions[g], best[g], steps[g] = outcome, fraction, piece, work
        if piece < 0:
            for c in range(rows.shape[1]):
                rows[g, c] = math.nan
            continue
        padded_row(row, pad_first[g], pad_second[g], rows[g])
        if unsigned[piece] and row[V_DISTANCE] < 0.0:
            unsigned_row(row, pad_first[g], pad_second[g], rows[g])
            rows[g, V_BOUND] = row[V_BOUND]  # the bracket of max(d, 0), not 0


class SweptPairs:
    """
    Swept minimum signed distances of body pairs, each the closest over its piece pairs.

    The layout is a :class:`~gjk_ros.core.bodypairs.BodyPairs`' (pieces, groups of piece pairs,
    padding), plus where each piece rides: frame ``piece_frames[i]`` at ``piece_origins[i]``.
    The piece pairs keep tracked caches of their own, apart from the engine's; like a PairSet,
    one object serves one thread.

    Parameters
    ----------
    pieces : sequence of ConvexPolytope
        Every piece once.
    groups : sequence of sequences of (int, int)
        The (first piece, second piece) pairs of each body pair.
    piece_frames : (P,) int
        The frame (of the :class:`FrameMotion` given to :meth:`update`) each piece moves with.
    piece_origins : (P, 4, 4) float, optional
        Each piece's pose in its frame (identity by default).
    pad_first, pad_second : (K,) float, optional
        Inflation of the first and of the second body of each body pair (0 by default).
    unsigned : (P,) bool, optional
        Per piece, as for a BodyPairs: a flat piece of an open surface; a piece pair with one
        measures ``max(d, 0)`` (module docstring). Default none.
    hill_climb, tracking : bool
        As for a PairSet.

    After :meth:`update`: ``rows`` (K, 11) the padded row (distance, witness_a, witness_b,
    normal, error_bound) of each body pair at the instant of its smallest measured distance,
    ``fraction`` (K,) that instant as a fraction of the interval, ``status`` (K,) the core status
    there (``MAX_ITERATIONS`` when the bracket is wider than asked, ``BEYOND`` / ``INACTIVE``
    with NaN), ``best`` (K,) the piece pair that gave it (-1 when none), ``steps`` (K,) the exact
    queries it took (the machine-independent work: 0 for a pair its end samples settle).
    ``lower_bound`` is ``distance - error_bound``: never above the true swept minimum.

    """

    def __init__(self, pieces, groups, piece_frames, piece_origins=None, pad_first=None,
                 pad_second=None, *, unsigned=None, hill_climb=True, tracking=True):
        """Lay out the piece pairs, take each piece's bounding sphere, allocate the work arrays."""
        self.pieces = tuple(pieces)
        groups = [[tuple(map(int, pair)) for pair in group] for group in groups]
        count = len(groups)
        sizes = [len(group) for group in groups]
        self.piece_pairs = np.array([pair for group in groups for pair in group],
                                    np.int64).reshape(-1, 2)
        self.groups = np.zeros((count, max(sizes, default=1) or 1), np.int64)
        self.group_sizes = np.array(sizes, np.int64)
        start = 0
        for k, size in enumerate(sizes):
            self.groups[k, :size] = np.arange(start, start + size)
            start += size
        num_pieces = len(self.pieces)
        if self.piece_pairs.size and (self.piece_pairs.min() < 0
                                      or self.piece_pairs.max() >= num_pieces):
            raise ValueError(f'groups: piece indices must be in [0, {num_pieces})')
        self.piece_frames = np.ascontiguousarray(piece_frames, dtype=np.int64).reshape(-1)
        if self.piece_frames.shape != (num_pieces,) or (
                num_pieces and self.piece_frames.min() < 0):
            raise ValueError(f'piece_frames: expected {num_pieces} non-negative frame indices')
        if piece_origins is None:
            piece_origins = np.tile(np.eye(4), (num_pieces, 1, 1))
        self.piece_origins = check_poses(piece_origins, 'piece_origins',
                                         (num_pieces, 4, 4)).copy()
        self.centres, self.radii = piece_spheres(self.pieces, self.piece_origins)
        self._chord, self._turn = np.zeros((num_pieces, 3)), np.zeros(num_pieces)
        self.pad_first = _lengths(pad_first, count, 'pad_first')
        self.pad_second = _lengths(pad_second, count, 'pad_second')
        self.unsigned = _unsigned_pairs(unsigned, num_pieces, self.piece_pairs)
        self._pair_set = PairSet(self.pieces or _placeholder(), self.piece_pairs,
                                 hill_climb=hill_climb, tracking=tracking)
        m = self.piece_pairs.shape[0]
        self._unknown = PieceRows(np.full((m, VALUE_COLUMNS), np.nan),
                                  np.full(m, _INACTIVE, np.int8))
        width = self.groups.shape[1]
        # Per piece pair of a group: sample fractions, distances, lower ends and slopes; the
        # sample count; the lowest envelope, its interval and split point; the turn; the state.
        self._samples = (np.zeros((width, MAX_SAMPLES)), np.zeros((width, MAX_SAMPLES)),
                         np.zeros((width, MAX_SAMPLES)), np.zeros((width, MAX_SAMPLES)),
                         np.zeros(width, np.int64), np.zeros(width), np.zeros(width, np.int64),
                         np.zeros(width), np.zeros(width), np.zeros(width, np.int64))
        self._poses = (np.eye(4), np.eye(4), np.eye(4))
        self._row = np.zeros(VALUE_COLUMNS)
        self._all_active = np.ones(m, np.bool_)
        self.rows = np.full((count, VALUE_COLUMNS), np.nan)
        self.fraction = np.full(count, np.nan)
        self.status = np.full(count, _INACTIVE, np.int8)
        self.best = np.full(count, -1, np.int64)
        self.steps = np.zeros(count, np.int64)

    @classmethod
    def from_engine(cls, engine, piece_frames, piece_origins=None, *, hill_climb=True,
                    tracking=True):
        """
        Return the swept counterpart of a BodyPairs ``engine``: same pieces, pairs, padding.

        Piece pair ``p`` here is the engine's piece pair ``p``, so the engine's PairSet rows
        (:func:`pair_rows`) serve as the end samples of :meth:`update`; its unsigned piece
        pairs are unsigned here.
        """
        groups = [engine.piece_pairs[engine.groups[k, :engine.group_sizes[k]]]
                  for k in range(engine.num_body_pairs)]
        swept = cls(engine.pieces, groups, piece_frames, piece_origins, engine.pad_first,
                    engine.pad_second, hill_climb=hill_climb, tracking=tracking)
        swept.unsigned = np.ascontiguousarray(engine.unsigned, dtype=np.bool_)
        return swept

    @property
    def num_body_pairs(self):
        return self.groups.shape[0]

    @property
    def num_piece_pairs(self):
        return self.piece_pairs.shape[0]

    distance = property(lambda self: self.rows[:, 0])
    error_bound = property(lambda self: self.rows[:, 10])
    lower_bound = property(lambda self: self.rows[:, 0] - self.rows[:, 10])

    def rates(self, motion):
        """Return each piece pair's motion bound over ``motion`` (metres per unit fraction)."""
        chord, turn = motion.sphere_motion(self.piece_frames, self.centres, self.radii)
        first, second = self.piece_pairs[:, 0], self.piece_pairs[:, 1]
        return np.linalg.norm(chord[second] - chord[first], axis=1) + turn[first] + turn[second]

    def update(self, motion, start=None, end=None, active=None, max_distance=math.inf,
               tolerance=DEFAULT_TOLERANCE, relative_tolerance=DEFAULT_RELATIVE_TOLERANCE):
        """
        Bracket every body pair's minimum signed distance over ``motion``.

        Parameters
        ----------
        motion : FrameMotion
            The frames' start and end poses.
        start, end : PieceRows, optional
            Piece pair rows measured at the start and end poses (:func:`pair_rows` of a
            PairSet over the same piece pairs, or ``PieceRows(values, status)``); a row whose
            status is not a measurement, or no rows at all, is measured here.
        active : (m,) bool, optional
            Piece pairs to consider; a body pair with none is INACTIVE.
        max_distance : float
            Piece pairs whose bounding spheres stay farther apart (plus the padding) over the
            whole interval are not measured; a body pair with nothing else is BEYOND.
        tolerance, relative_tolerance : float
            The bracket asked for: ``error_bound <= tolerance + relative_tolerance *
            |distance|`` (metres, and a fraction in [0, 1)). A relative share lets far pairs
            settle from their end samples alone.

        Returns
        -------
        (rows, status)
            The arrays :attr:`rows` and :attr:`status` (see the class docstring).

        """
        if not isinstance(motion, FrameMotion):
            raise TypeError(f'motion: expected a FrameMotion, got {type(motion).__name__}')
        if len(self.piece_frames) and self.piece_frames.max() >= motion.num_frames:
            raise ValueError(f'motion: {motion.num_frames} frames, but pieces ride frame '
                             f'{int(self.piece_frames.max())}')
        tolerance = float(tolerance)
        relative_tolerance = float(relative_tolerance)
        if not (math.isfinite(tolerance) and tolerance > 0.0):
            raise ValueError(f'tolerance must be a finite positive length, got {tolerance!r}')
        if not 0.0 <= relative_tolerance < 1.0:
            raise ValueError(f'relative_tolerance must be in [0, 1), got {relative_tolerance!r}')
        max_distance = float(max_distance)
        if math.isnan(max_distance):
            raise ValueError('max_distance must not be NaN')
        start, end = self._end_rows(start, 'start'), self._end_rows(end, 'end')
        ends = (start.values, start.status, end.values, end.status)
        active = self._active(active)
        sphere_motion_into(motion.start, motion.end, motion.angle, self.piece_frames,
                           self.centres, self.radii, self._chord, self._turn)
        pair_set = self._pair_set
        engine = (pair_set._cache, pair_set._ws, pair_set._ep, pair_set._out,
                  pair_set.hill_climb, pair_set.tracking)
        _sweep(pair_set._scene, self.piece_pairs, self.groups, self.group_sizes, self.pad_first,
               self.pad_second, motion.arrays(), self.piece_frames, self.piece_origins,
               self._chord, self._turn, ends, active, self.unsigned, MEASURED,
               max_distance, tolerance, relative_tolerance, engine, self._poses, self._samples,
               self._row, self.rows, self.fraction, self.status, self.best, self.steps)
        return self.rows, self.status

    def reset(self):
        """Forget every tracked state: the next queries start cold."""
        self._pair_set.reset_cache()

    def _end_rows(self, rows, name):
        if rows is None:
            return self._unknown
        if not isinstance(rows, PieceRows):
            raise TypeError(f'{name}: expected PieceRows (pair_rows of a PairSet), got '
                            f'{type(rows).__name__}')
        if len(rows) != self.num_piece_pairs:
            raise ValueError(f'{name}: {len(rows)} rows for {self.num_piece_pairs} piece pairs')
        return rows

    def _active(self, active):
        if active is None:
            return self._all_active
        active = np.ascontiguousarray(active, dtype=np.bool_)
        if active.shape != (self.num_piece_pairs,):
            raise ValueError(f'active: expected shape ({self.num_piece_pairs},), got '
                             f'{active.shape}')
        return active


def _unsigned_pairs(unsigned, num_pieces, piece_pairs):
    """Return (m,) bool: piece pairs with a piece of an open surface (``unsigned`` per piece)."""
    if unsigned is None:
        return np.zeros(piece_pairs.shape[0], np.bool_)
    flat = np.asarray(unsigned, dtype=np.bool_).reshape(-1)
    if flat.shape != (num_pieces,):
        raise ValueError(f'unsigned: expected {num_pieces} flags, one per piece')
    return np.ascontiguousarray(flat[piece_pairs].any(axis=1) if piece_pairs.size else
                                np.zeros(0, np.bool_))


def _lengths(values, count, name):
    if values is None:
        return np.zeros(count)
    array = np.array(values, dtype=np.float64).reshape(-1)
    if array.shape != (count,) or not np.isfinite(array).all():
        raise ValueError(f'{name}: expected {count} finite lengths')
    return array


def _placeholder():
    """Return one body for a PairSet with nothing to pair (a PairSet needs a body)."""
    from .polytope import ConvexPolytope
    return [ConvexPolytope.sphere(1.0)]
