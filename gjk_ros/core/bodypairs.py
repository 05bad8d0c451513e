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
Body pairs made of piece pairs: the one reduction from convex pieces to bodies.

A body (a robot link, an obstacle) is a union of convex pieces. Every (piece of the first body,
piece of the second body) is one tracked pair of a single core :class:`PairSet`, and a body
pair's answer is that of its closest measured piece pair: exact when the bodies are apart; when
pieces overlap it is the deepest piece overlap, the usual measure for unions of convex pieces.
A piece pair marked ``unsigned`` (a link against a flat piece of an open mesh surface, which
has no inside: ``mesh_pieces``) counts a negative distance as 0, TOUCHING, with both witnesses
at the flat piece's point deepest in the link.

Padding is an inflation of each body (the node's ``padding``, MoveIt's ``link_padding``): a
body pair's padding is the sum of its two bodies' inflations. It comes off the signed distance;
the witness on the first body moves along the normal by the first body's inflation and the
witness on the second against it by its own, so ``witness_b - witness_a == distance * normal``
still holds.

Conventions are the core's: normals from the first body towards the second, world frame.
"""

import math

import numpy as np

from ._jit import njit
from .pairset import PairSet
from .query import VALUE_COLUMNS
from .status import Status

__all__ = ['BodyPairs', 'MEASURED', 'padded_row', 'reduce_pairs', 'unsigned_row']

# Core statuses that carry a measured distance, indexed by status value.
MEASURED = np.array([s in (Status.SEPARATED, Status.TOUCHING, Status.PENETRATING,
                           Status.MAX_ITERATIONS, Status.DEGENERATE) for s in range(8)])
_BEYOND, _INACTIVE = int(Status.BEYOND), int(Status.INACTIVE)
_TOUCHING = int(Status.TOUCHING)
# Configurations per compiled PairSet call in update_sequence: the piece-level work arrays of a
# chunk stay in cache and are reused, so a long sequence allocates only its results.
CHUNK = 64


@njit(inline=True)
def padded_row(source, pad_first, pad_second, row):
    """Copy a value row, applying both inflations (module docstring)."""
    row[0] = source[0] - pad_first - pad_second
    for c in range(3):
        normal = source[7 + c]
        row[1 + c] = source[1 + c] + pad_first * normal
        row[4 + c] = source[4 + c] - pad_second * normal
        row[7 + c] = normal
    row[10] = source[10]


@njit(inline=True)
def unsigned_row(source, pad_first, pad_second, row):
    """Overwrite a padded row with contact at the flat piece's witness (``unsigned`` pairs)."""
    row[0] = -pad_first - pad_second
    for c in range(3):
        normal = source[7 + c]
        row[1 + c] = source[4 + c] + pad_first * normal
        row[4 + c] = source[4 + c] - pad_second * normal
    row[10] = 0.0


@njit
def reduce_pairs(values, status, counts, groups, sizes, pad_first, pad_second, measured,
                 unsigned, rows, pair_status, totals, best):
    """
    Closest piece pair of every body pair, padded; one compiled pass over N steps.

    ``values``, ``status``, ``counts`` (N, m, ...) are PairSet rows; ``groups[k, :sizes[k]]``
    the piece pairs of body pair ``k``. The closest measured piece pair gives the row (an
    ``unsigned`` piece pair's value never below 0); with none measured the row is NaN and the
    status BEYOND if any piece pair was, else INACTIVE.
    Counters (GJK iterations, support calls) are summed over the group.
    """
    for n in range(values.shape[0]):
        for k in range(groups.shape[0]):
            chosen, beyond, iterations, supports = -1, False, 0, 0
            closest = math.inf
            for g in range(sizes[k]):
                p = groups[k, g]
                iterations += counts[n, p, 0]
                supports += counts[n, p, 1]
                if measured[status[n, p]]:
                    value = values[n, p, 0]
                    if unsigned[p] and value < 0.0:
                        value = 0.0
                    if chosen < 0 or value < closest:
                        chosen, closest = p, value
                elif status[n, p] == _BEYOND:
                    beyond = True
            totals[n, k, 0], totals[n, k, 1] = iterations, supports
            best[n, k] = chosen
            if chosen < 0:
                for c in range(rows.shape[2]):
                    rows[n, k, c] = math.nan
                pair_status[n, k] = _BEYOND if beyond else _INACTIVE
                continue
            pair_status[n, k] = status[n, chosen]
            padded_row(values[n, chosen], pad_first[k], pad_second[k], rows[n, k])
            if unsigned[chosen] and values[n, chosen, 0] < 0.0:
                unsigned_row(values[n, chosen], pad_first[k], pad_second[k], rows[n, k])
                pair_status[n, k] = _TOUCHING


class BodyPairs:
    """
    Tracked signed distances of body pairs, each the closest of its piece pairs.

    Parameters
    ----------
    pieces : sequence of ConvexPolytope
        Every piece once; piece ``i`` is posed by ``poses[i]`` in :meth:`update`.
    groups : sequence of sequences of (int, int)
        The (first piece, second piece) pairs of each body pair; an empty group is a body pair
        with nothing to measure (status INACTIVE).
    pad_first, pad_second : sequence of float
        Inflation of the first and of the second body of each body pair (metres).
    piece_keys : sequence of hashable, optional
        Identity of each piece across rebuilds (for :meth:`carry_over`); default the pieces.
    unsigned : sequence of bool, optional
        Per piece: True for a flat piece of an open surface; a piece pair with one counts a
        negative distance as 0 (module docstring). Default none.
    hill_climb, tracking : bool
        Passed to the PairSet.
    broad_phase : bool
        Cull a body pair's piece pairs together when the bodies' bounding spheres are beyond
        ``max_distance`` (the PairSet's groups: same answers, less work). False: pair by pair.
    broad_groups : sequence of sequences of int, optional
        Per body pair, the sizes of the consecutive runs of its piece pairs culled together
        (summing to its piece pair count): finer bounds than the whole body's for a large
        mesh, the answers unchanged. Default one run per body pair.
    threads : int
        1, or 2 to share a large update with a worker thread (``PairSet``; same answers).
    reuse_unchanged : bool
        A piece pair whose two poses are bit for bit those it was last answered at keeps that
        answer without a query (``PairSet``; same answers, less work).

    After :meth:`update`, ``rows`` (K, 11) hold each body pair's padded answer (distance,
    witness_a, witness_b, normal, error_bound), ``status`` (K,) its core status, ``best`` (K,)
    the index of its closest piece pair (-1 when none was measured) and ``totals`` (K, 2) GJK
    iterations and support calls summed over its piece pairs.

    """

    def __init__(self, pieces, groups, pad_first, pad_second, *, piece_keys=None,
                 unsigned=None, hill_climb=True, tracking=True, broad_phase=True,
                 threads=1, reuse_unchanged=False, broad_groups=None):
        """Lay out the piece pairs group by group and allocate every answer array once."""
        self.pieces = tuple(pieces)
        groups = [list(map(tuple, group)) for group in groups]
        piece_pairs = [pair for group in groups for pair in group]
        self.piece_pairs = np.array(piece_pairs, np.int64).reshape(-1, 2)
        self.owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups]).astype(np.int64)
        width = max((len(g) for g in groups), default=1)
        self.groups = np.zeros((len(groups), max(width, 1)), np.int64)
        self.group_sizes = np.array([len(g) for g in groups], np.int64)
        starts = np.concatenate([[0], np.cumsum(self.group_sizes)]).astype(np.int64)
        for k in range(len(groups)):
            self.groups[k, :self.group_sizes[k]] = np.arange(starts[k], starts[k + 1])
        self.pad_first = np.array(pad_first, np.float64).reshape(len(groups))
        self.pad_second = np.array(pad_second, np.float64).reshape(len(groups))
        self.pair_padding = (self.pad_first + self.pad_second)[self.owner]
        flat = np.zeros(len(self.pieces), bool) if unsigned is None else \
            np.asarray(unsigned, bool).reshape(len(self.pieces))
        self.unsigned = np.ascontiguousarray(
            flat[self.piece_pairs].any(axis=1) if len(piece_pairs) else np.zeros(0, bool))
        self.max_padding = float((self.pad_first + self.pad_second).max(initial=0.0))
        keys = self.pieces if piece_keys is None else tuple(piece_keys)
        self._keys = [(keys[a], keys[b]) for a, b in piece_pairs]
        self.pair_set = PairSet(self.pieces or _placeholder(), self.piece_pairs,
                                hill_climb=hill_climb, tracking=tracking,
                                groups=_cull_starts(starts, broad_groups) if broad_phase
                                else None,
                                threads=threads, reuse_unchanged=reuse_unchanged)
        self.rows, self.status, self.totals, self.best = self.answer_arrays(1)
        self._buffers = None

    @property
    def num_body_pairs(self) -> int:
        return self.groups.shape[0]

    def answer_arrays(self, count):
        """Allocate ``(rows, status, totals, best)`` for ``count`` steps (first axis)."""
        k = self.num_body_pairs
        return (np.full((count, k, VALUE_COLUMNS), np.nan),
                np.full((count, k), _INACTIVE, np.int8),
                np.zeros((count, k, 2), np.int64), np.full((count, k), -1, np.int64))

    def carry_over(self, previous):
        """Load the tracked state of every piece pair that ``previous`` also had (same keys)."""
        if previous is None or not self.pair_set.tracking:
            return
        old = {key: k for k, key in enumerate(previous._keys)}
        for k, key in enumerate(self._keys):
            if key in old:
                self.pair_set.set_cache(k, previous.pair_set.get_cache(old[key]))

    def reset(self):
        """Forget every tracked state: the next update starts cold."""
        self.pair_set.reset_cache()

    def update(self, poses, active=None, max_distance=math.inf):
        """
        Measure every active piece pair at ``poses`` (P, 4, 4) and reduce to body pairs.

        ``max_distance`` culls a pair by bounding spheres when its padded distance is surely
        beyond it (the cull distance is raised by the largest padding). Results go to
        :attr:`rows`, :attr:`status`, :attr:`totals`, :attr:`best` (views of step 0).
        """
        self.pair_set.update(poses, active=active, max_distance=max_distance + self.max_padding)
        p = self.pair_set
        values, status, counts = p._out
        reduce_pairs(values[None], status[None], counts[None], self.groups, self.group_sizes,
                     self.pad_first, self.pad_second, MEASURED, self.unsigned, self.rows,
                     self.status, self.totals, self.best)
        return self.rows[0], self.status[0]

    def update_sequence(self, poses, answers, active=None, max_distance=math.inf):
        """
        :meth:`update` for N pose sets in turn (each tracked from the one before).

        ``poses`` (N, P, 4, 4); ``answers`` the arrays of :meth:`answer_arrays` (N), filled.
        """
        for start in range(0, poses.shape[0], CHUNK):
            stop = min(start + CHUNK, poses.shape[0])
            values, status, counts = self._piece_buffers(stop - start)
            self.pair_set.update_sequence(poses[start:stop], active=active,
                                          max_distance=max_distance + self.max_padding,
                                          out=(values, status, counts))
            reduce_pairs(values, status, counts, self.groups, self.group_sizes, self.pad_first,
                         self.pad_second, MEASURED, self.unsigned,
                         *(a[start:stop] for a in answers))
        return answers

    def _piece_buffers(self, count):
        if self._buffers is None or self._buffers[0].shape[0] < count:
            m, size = self.pair_set.num_pairs, max(count, CHUNK)
            self._buffers = (np.empty((size, m, VALUE_COLUMNS)), np.empty((size, m), np.int8),
                             np.empty((size, m, 4), np.int64))
        return tuple(array[:count] for array in self._buffers)


def _cull_starts(starts, broad_groups):
    """Return the PairSet's group starts: ``starts`` cut by each body pair's ``broad_groups``."""
    if broad_groups is None:
        return starts
    runs = [list(map(int, sizes)) for sizes in broad_groups]
    if len(runs) != starts.shape[0] - 1:
        raise ValueError(f'broad_groups: expected {starts.shape[0] - 1} body pairs, '
                         f'got {len(runs)}')
    for k, sizes in enumerate(runs):
        if any(size < 0 for size in sizes) or sum(sizes) != starts[k + 1] - starts[k]:
            raise ValueError(f'broad_groups: body pair {k} needs sizes summing to '
                             f'{starts[k + 1] - starts[k]}')
    cuts = np.cumsum([0] + [size for sizes in runs for size in sizes if size > 0])
    return cuts.astype(np.int64)


def _placeholder():
    """Return one body for a PairSet with nothing to pair (a PairSet needs a body)."""
    from .polytope import ConvexPolytope
    return [ConvexPolytope.sphere(1.0)]
