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
From bodies to per-(link, obstacle) records through the core's body-pair engine.

A link's distance to an obstacle is that of its closest (link piece, obstacle piece) pair, with
both bodies' padding: ``gjk_ros.core.bodypairs.BodyPairs``, the one implementation the planner
API uses too (one compiled PairSet call per cycle). This module adds what only the node has:
the records' ids and the input states (STALE, INVALID, PENDING) that override a measurement.
When the body set changes the engine is rebuilt and the simplex caches of surviving piece
pairs carry over, so a new obstacle does not cold-start every other pair.

A sensor cloud's pieces are the cloud points nearest to each link piece, and the search that
found a point already measured it exactly (``gjk_ros.core.point_grid``): such a pair is never
measured again. The pair of a link piece and its own nearest point takes the search's answer
(``TrackerLayout.measured``, the layout's ``measure``); the pairs of a link piece and other
link pieces' nearest points are never nearer, and are not measured at all. They keep their
part in the record's input states and data times, as every pair does.
"""

from dataclasses import dataclass, field
import math
import os

from gjk_ros.core import Status
from gjk_ros.core.bodypairs import BodyPairs, MEASURED, reduce_pairs
from gjk_ros.core.query import output_arrays, VALUE_COLUMNS
from gjk_ros.core.record_passes import fold_answers
from gjk_ros.ros.records import field_column, packed_views, PairStatus, RECORD_DTYPE
import numpy

# Threads of the engine's update (``PairSet``: a worker thread shares large updates, same
# answers): two where this process may run on two cores.
ENGINE_THREADS = 2 if len(os.sched_getaffinity(0)) > 1 else 1

__all__ = ['InputState', 'PairTracker', 'RecordSpec', 'TrackerLayout', 'value_rows',
           'VALUE_FIELDS']


class InputState:
    """Per-piece input quality, worst wins (values match PairStatus where they overlap)."""

    OK = 0
    STALE = 1
    INVALID = 2


@dataclass(frozen=True)
class RecordSpec:
    """
    One (link, obstacle) record and the slice of piece pairs it reduces.

    ``state`` is the worse body state of the two: VALID when both bodies are complete,
    PENDING when some geometry is still being built, INVALID when some geometry was rejected.
    A record that is not VALID here has no piece pairs (a missing piece could be the closest)
    and is published with that status. ``link_padding`` inflates the link (the first link of
    a self pair), ``obstacle_padding`` the obstacle (the second link): both come off the
    distance (see ``PairTracker.compute``).
    """

    link: str
    obstacle: str
    link_id: int
    obstacle_id: int
    start: int
    stop: int
    state: int
    self_pair: bool = False
    link_padding: float = 0.0
    obstacle_padding: float = 0.0


@dataclass(frozen=True)
class TrackerLayout:
    """
    What the tracker computes: pieces, piece pairs and records.

    Attributes
    ----------
    piece_uids : list of int
        Uid of each PairSet body (a piece may appear once even if several records use it).
    pairs : (m, 2) int
        Piece indices (link piece, obstacle piece) of each core pair, grouped by record.
    records : list of RecordSpec
        Sorted by (link_id, obstacle_id).
    points : (m,) bool
        The pairs whose obstacle piece is a cloud's nearest point: never measured by the core.
    measured : (k, 4) int
        (record, link piece, point piece, pair) of each link piece and its own nearest point:
        measured by the search that found the point.
    orphans : (j,) int
        A pair of each link piece that has nearest points but none of its own: it cannot be
        measured, and its record is STALE.

    """

    piece_uids: list
    pairs: numpy.ndarray
    records: list
    points: numpy.ndarray = field(default_factory=lambda: numpy.zeros(0, dtype=bool))
    measured: numpy.ndarray = field(
        default_factory=lambda: numpy.zeros((0, 4), dtype=numpy.int64))
    orphans: numpy.ndarray = field(default_factory=lambda: numpy.zeros(0, dtype=numpy.int64))


def _no_padding(name):
    return 0.0


def build_layout(links, obstacles, pair_allowed, self_pairs=(), link_padding=_no_padding,
                 obstacle_padding=_no_padding):
    """
    Enumerate the records and piece pairs of the bodies in scope.

    Parameters
    ----------
    links, obstacles : list of (str, int, list of TrackedPiece, int)
        (name, id, pieces, state) of each body in scope; state is PairStatus.VALID,
        PENDING or INVALID (see ``RecordSpec``).
    pair_allowed : callable(str, str) -> bool
        The allowed-pairs filter.
    self_pairs : iterable of (str, str)
        (link, link) pairs measured for self-collision; their records follow the
        link-obstacle ones, with ``self_pair`` set and ``obstacle_id`` the second link's id.
    link_padding, obstacle_padding : callable(str) -> float
        Metres by which a link (either link of a self pair) and an obstacle are inflated.

    Returns
    -------
    TrackerLayout

    """
    piece_index, piece_uids = {}, []

    def index_of(tracked):
        if tracked.uid not in piece_index:
            piece_index[tracked.uid] = len(piece_uids)
            piece_uids.append(tracked.uid)
        return piece_index[tracked.uid]

    pairs, records = [], []
    for link, link_id, link_pieces, link_state in sorted(links, key=lambda body: body[1]):
        for obstacle, obstacle_id, obstacle_pieces, obstacle_state in sorted(
                obstacles, key=lambda body: body[1]):
            if not pair_allowed(link, obstacle):
                continue
            start = len(pairs)
            state = _worse_state(link_state, obstacle_state)
            if state == PairStatus.VALID:
                pairs += [(index_of(a), index_of(b)) for a in link_pieces
                          for b in obstacle_pieces]
            records.append(RecordSpec(link, obstacle, link_id, obstacle_id, start, len(pairs),
                                      state, link_padding=link_padding(link),
                                      obstacle_padding=obstacle_padding(obstacle)))
    by_name = {body[0]: body for body in links}
    for first, second in self_pairs:
        (_, first_id, first_pieces, first_state) = by_name[first]
        (_, second_id, second_pieces, second_state) = by_name[second]
        start, state = len(pairs), _worse_state(first_state, second_state)
        if state == PairStatus.VALID:
            pairs += [(index_of(a), index_of(b)) for a in first_pieces for b in second_pieces]
        records.append(RecordSpec(first, second, first_id, second_id, start, len(pairs), state,
                                  self_pair=True, link_padding=link_padding(first),
                                  obstacle_padding=link_padding(second)))
    pair_array = numpy.array(pairs, dtype=numpy.int64).reshape(-1, 2)
    return TrackerLayout(piece_uids, pair_array, records)


def _worse_state(first, second):
    """INVALID wins over PENDING, which wins over VALID."""
    rank = {PairStatus.VALID: 0, PairStatus.PENDING: 1, PairStatus.INVALID: 2}
    return first if rank[first] >= rank[second] else second


class PairTracker:
    """
    The body pairs of the current layout (the core's ``BodyPairs``), reduced to records.

    Parameters
    ----------
    hill_climb, tracking : bool
        Passed to the core PairSet. With tracking, a piece pair whose two poses are bit for
        bit those of its last answer keeps it without a query (``PairSet``'s
        ``reuse_unchanged``: ``reused_pairs`` counts them); without, every pair is queried
        cold every cycle.

    """

    def __init__(self, hill_climb=True, tracking=True):
        self.hill_climb = hill_climb
        self.tracking = tracking
        self.layout = TrackerLayout([], numpy.zeros((0, 2), dtype=numpy.int64), [])
        self._specs = _SpecArrays(self.layout.records)
        self._engine = None
        self._measure = None
        self._shapes = []
        self._max_padding = 0.0
        self._points = numpy.zeros(0, dtype=bool)
        self._with_points = False
        self._cloud = None
        self._pair_keys = []
        self._computed_last = numpy.zeros(0, dtype=bool)
        self.warm_pairs = 0
        self.computed_pairs = 0
        self.reused_pairs = 0
        self.iterations = 0

    @property
    def num_piece_pairs(self):
        """Return the number of core pairs."""
        return len(self.layout.pairs)

    @property
    def engine(self):
        """Return the core ``BodyPairs`` (None without piece pairs): body pair k is record k."""
        return self._engine

    def rebuild(self, layout, shapes, measure=None, unsigned=None):
        """
        Switch to a new layout, carrying the caches of surviving piece pairs over.

        Parameters
        ----------
        layout : TrackerLayout
            From ``build_layout``.
        shapes : list of ConvexPolytope
            The shape of each piece in ``layout.piece_uids``.
        measure : callable(int, ConvexPolytope, (4, 4) float), optional
            For ``layout.measured``: the ``NearestPoint`` of a point piece's cloud to a link
            shape at a pose (None: no answer, the pair is STALE).
        unsigned : sequence of bool, optional
            Per piece: a flat piece of an open surface (``CollisionPiece.unsigned``), which a
            body crossing is at 0 from, never negative.

        """
        points = layout.points if len(layout.points) == len(layout.pairs) else \
            numpy.zeros(len(layout.pairs), dtype=bool)
        engine_pairs = layout.pairs[~points]
        engine = None
        if len(engine_pairs):
            engine = BodyPairs(shapes, [layout.pairs[spec.start:spec.stop][
                                            ~points[spec.start:spec.stop]]
                                        for spec in layout.records],
                               [spec.link_padding for spec in layout.records],
                               [spec.obstacle_padding for spec in layout.records],
                               piece_keys=layout.piece_uids,
                               unsigned=unsigned, hill_climb=self.hill_climb,
                               tracking=self.tracking, threads=ENGINE_THREADS,
                               reuse_unchanged=self.tracking)
            engine.carry_over(self._engine)
        # BodyPairs' cull margin: the largest padding of any record.
        self._max_padding = max((spec.link_padding + spec.obstacle_padding
                                 for spec in layout.records), default=0.0)
        self._measure, self._shapes, self._points = measure, list(shapes), points
        self._with_points = bool(points.any())
        self._cloud = _CloudPairs(layout, shapes) if len(layout.measured) else None
        # Which surviving piece pairs were measured last cycle (the warm-start count), by the
        # same identity the engine carries its caches over by: the two pieces' uids.
        pair_keys = [(layout.piece_uids[first], layout.piece_uids[second])
                     for first, second in engine_pairs.tolist()]
        computed_last = numpy.zeros(len(engine_pairs), dtype=bool)
        if self._engine is not None and engine is not None and self.tracking:
            old = {key: k for k, key in enumerate(self._pair_keys)}
            for k, key in enumerate(pair_keys):
                if key in old:
                    computed_last[k] = self._computed_last[old[key]]
        self.layout, self._engine, self._pair_keys = layout, engine, pair_keys
        self._specs = _SpecArrays(layout.records, layout.pairs)
        self._computed_last = computed_last

    def compute(self, poses, piece_inputs, max_distance):
        """
        Update every pair whose inputs are good and reduce to records.

        Parameters
        ----------
        poses : (n, 4, 4) float
            World pose of each piece of the layout (anything where the input is not OK).
        piece_inputs : (n,) int
            InputState of each piece.
        max_distance : float
            Pairs whose padded distance is surely beyond this are skipped (bounding spheres).
            Padding comes off each record's distance and moves its witnesses
            (``gjk_ros.core.bodypairs``), so ``obstacle - link == distance * normal``.

        Returns
        -------
        (r,) numpy array of RECORD_DTYPE

        """
        specs = self._specs
        # One copy of the layout's template (ids set, every float NaN, status INVALID: without
        # piece pairs nothing is computed, and a VALID body state alone is no measurement).
        records = specs.new_records()
        if len(self.layout.pairs):
            pair_inputs = self._pair_inputs(piece_inputs)
            orphans = self.layout.orphans
            pair_inputs[orphans] = numpy.maximum(pair_inputs[orphans], InputState.STALE)
            self.computed_pairs = self.warm_pairs = self.iterations = self.reused_pairs = 0
            if self._engine is not None:
                engine_ok = pair_inputs == InputState.OK
                if self._with_points:
                    engine_ok = engine_ok[~self._points]
                rows, core_status = self._engine.update(poses, engine_ok, max_distance)
                self._count_work()
                if self._cloud is not None:  # the answers below are merged in place
                    rows, core_status = rows.copy(), core_status.copy()
            else:
                rows = numpy.full((specs.count, VALUE_COLUMNS), numpy.nan)
                core_status = numpy.full(specs.count, Status.INACTIVE, dtype=numpy.int8)
            self._measure_points(poses, piece_inputs, pair_inputs, max_distance, rows,
                                 core_status)
            self._reduce(records, pair_inputs, rows, core_status)
        return records

    def _pair_inputs(self, piece_inputs):
        """Each pair's worse piece input (all OK, the usual cycle, without a per-pair pass)."""
        if not piece_inputs.any():
            return numpy.zeros(len(self.layout.pairs), dtype=piece_inputs.dtype)
        return numpy.maximum(piece_inputs[self._specs.first], piece_inputs[self._specs.second])

    def _measure_points(self, poses, piece_inputs, pair_inputs, max_distance, rows, status):
        """
        Take each link piece's nearest-point answer as its pair's measurement (in place).

        The answers go through the engine's own reduction (``bodypairs.reduce_pairs``: the
        padding, the nearest pair of each record) and cull (a pair is BEYOND when the piece's
        bounding sphere is farther from the point than ``max_distance`` plus the largest
        padding, as ``BodyPairs.update`` culls); a record keeps the nearer of its engine row
        and its answers. A pair without an answer becomes STALE.
        """
        cloud = self._cloud
        if cloud is None:
            return
        values, pair_status = cloud.values, cloud.status
        values[:] = numpy.nan
        pair_status[:] = _INACTIVE
        good = (piece_inputs[cloud.links] == InputState.OK) & \
            (piece_inputs[cloud.points] == InputState.OK)
        links, points, shapes, measure = cloud.links, cloud.points, self._shapes, self._measure
        answered, rows_of = [], []
        for i in numpy.flatnonzero(good).tolist():
            link = links[i]
            answer = None if measure is None else measure(points[i], shapes[link], poses[link])
            if answer is None or not math.isfinite(answer.distance):
                pair = cloud.pairs[i]
                pair_inputs[pair] = max(pair_inputs[pair], InputState.STALE)
                continue
            answered.append(i)
            rows_of.append(answer.row)
        if answered:
            values[answered] = rows_of
        found = ~numpy.isnan(values[:, 0])
        pair_status[found] = numpy.choose(numpy.sign(values[found, 0]).astype(int) + 1,
                                          _SIGNED)
        link_poses = poses[cloud.links]
        centres = numpy.einsum('kij,kj->ki', link_poses[:, :3, :3], cloud.centres) + \
            link_poses[:, :3, 3]
        gaps = numpy.linalg.norm(values[:, 4:7] - centres, axis=1) - cloud.radii
        beyond = found & (gaps > max_distance + self._max_padding)
        pair_status[beyond] = _BEYOND
        values[beyond] = numpy.nan
        self.computed_pairs += int((found & ~beyond).sum())
        answer_rows, answer_status, totals, best = cloud.answers
        specs = self._specs
        reduce_pairs(values[None], pair_status[None], cloud.counts[None], cloud.groups,
                     cloud.sizes, specs.link_padding, specs.obstacle_padding, MEASURED,
                     cloud.unsigned, answer_rows, answer_status, totals, best)
        answer_rows, answer_status = answer_rows[0], answer_status[0]
        by_answer, by_engine = MEASURED[answer_status], MEASURED[status]
        take = by_answer & (~by_engine | (answer_rows[:, 0] < rows[:, 0]))
        rows[take], status[take] = answer_rows[take], answer_status[take]
        status[~by_engine & ~by_answer & (answer_status == _BEYOND)] = _BEYOND

    def record_times(self, piece_times):
        """
        Return the oldest datum of each record's pieces.

        Parameters
        ----------
        piece_times : (n,) float
            Per layout piece, nanoseconds of ROS time: +inf for timeless data (static
            transforms and geometry), -inf for missing data.

        Returns
        -------
        (r,) float
            The minimum over the record's piece pairs; NaN for a record without piece pairs.

        """
        specs = self._specs
        times = numpy.full(specs.count, numpy.inf)
        pairs = self.layout.pairs
        if len(pairs):
            numpy.minimum.at(times, specs.owner, numpy.minimum(piece_times[pairs[:, 0]],
                                                               piece_times[pairs[:, 1]]))
        times[specs.empty] = numpy.nan
        return times

    def _count_work(self):
        """Count the engine's work (the pairs the nearest-point searches measured add theirs)."""
        pair_set = self._engine.pair_set
        # A pair that kept last cycle's answer (neither piece moved) was not computed.
        computed = MEASURED[pair_set.status] & ~pair_set.reused
        self.computed_pairs = int(computed.sum())
        self.reused_pairs = int(pair_set.reused.sum())
        self.warm_pairs = int((computed & self._computed_last).sum()) if self.tracking else 0
        self.iterations = int(pair_set.iterations[computed].sum())
        self._computed_last = MEASURED[pair_set.status]  # computed or kept: a warm cache

    def _reduce(self, records, pair_inputs, rows, core_status):
        """
        Record statuses, worst input first; measured records take the engine's rows.

        One compiled pass over the records (``record_passes.fold_answers``), written into
        their memory in place (``records`` are a fresh packed copy, ``new_records``).
        """
        specs = self._specs
        fold_answers(specs.state, specs.starts, specs.stops, pair_inputs, _INPUT_CODES,
                     numpy.ascontiguousarray(rows, dtype=numpy.float64), core_status,
                     MEASURED, _APPROXIMATE, _STATUS_CODES, *_record_memory(records))


# The record fields of a value row, and the row columns they take (query.VALUE_COLUMNS order:
# distance, witness_a, witness_b, normal, error_bound).
VALUE_FIELDS = ('link_x', 'link_y', 'link_z', 'obstacle_x', 'obstacle_y', 'obstacle_z',
                'normal_x', 'normal_y', 'normal_z', 'distance', 'error_bound')
_RECORD_COLUMNS = numpy.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 10])


def value_rows(records, rows):
    """
    Return the value fields of ``records[rows]`` as an (n, 11) float64 array (``VALUE_FIELDS``).

    One gather through ``value_view_or_none`` instead of a strided one per field.
    """
    view = value_view_or_none(records)
    if view is None:
        return numpy.stack([records[name][rows] for name in VALUE_FIELDS], axis=1)
    return view[rows]


def value_view_or_none(records):
    """
    Return the value fields of ``records`` as one (r, 11) float64 view, or None.

    A view only when RECORD_DTYPE stores them as consecutive float64 in ``VALUE_FIELDS``
    order (records.py's layout); otherwise the caller writes them field by field.
    """
    if _VALUE_OFFSET is None or not records.flags.c_contiguous or not len(records):
        return None  # (no record: numpy refuses a view at an offset into an empty buffer)
    return numpy.ndarray((len(records), len(VALUE_FIELDS)), numpy.float64, records.data,
                         _VALUE_OFFSET, (RECORD_DTYPE.itemsize, 8))


def _consecutive_offset():
    fields = [RECORD_DTYPE.fields[name] for name in VALUE_FIELDS]
    first = fields[0][1]
    if all(kind == numpy.float64 and offset == first + 8 * i
           for i, (kind, offset) in enumerate(fields)):
        return first
    return None


_VALUE_OFFSET = _consecutive_offset()
# fold_answers' arguments: the input and status codes, the core statuses that carry a bound
# (APPROXIMATE), and where each value field, x, y, z and the status are in a packed record.
_INPUT_CODES = numpy.array([InputState.STALE, InputState.INVALID], dtype=numpy.int64)
_STATUS_CODES = numpy.array([PairStatus.VALID, PairStatus.APPROXIMATE, PairStatus.BEYOND,
                             PairStatus.STALE, PairStatus.INVALID, PairStatus.PENDING],
                            dtype=numpy.int64)
_APPROXIMATE = numpy.array([s in (Status.MAX_ITERATIONS, Status.DEGENERATE)
                            for s in range(len(MEASURED))])
_WORD_COLUMNS = numpy.array([field_column(name) for name in VALUE_FIELDS])
_SINGLE_COLUMNS = numpy.array([field_column(name) for name in 'xyz'])
_STATUS_BYTE = field_column('status')


def _record_memory(records):
    """``fold_answers``' record arguments: the value fields as words, x, y, z, the status."""
    words, singles, octets = packed_views(records)
    return (words, _WORD_COLUMNS, _RECORD_COLUMNS, singles, _SINGLE_COLUMNS, octets,
            _STATUS_BYTE)


_FLOAT_FIELDS = [name for name in RECORD_DTYPE.names if RECORD_DTYPE[name].kind == 'f']
# The core status of an exact answer of sign -1, 0, +1.
_INACTIVE, _BEYOND = int(Status.INACTIVE), int(Status.BEYOND)
_SIGNED = numpy.array([Status.PENETRATING, Status.TOUCHING, Status.SEPARATED], dtype=numpy.int8)


class _CloudPairs:
    """
    The pairs of link pieces and their own nearest points, laid out for ``reduce_pairs``.

    Built once per rebuild: which pieces and layout pairs they are, each record's group of
    them, each link piece's bounding sphere (the cull), and the arrays the answers are
    written to and reduced into (the engine's dtypes and shapes, so its compiled reduction
    serves them too).
    """

    def __init__(self, layout, shapes):
        records, self.links, self.points, self.pairs = layout.measured.T.copy()
        count, total = len(self.links), len(layout.records)
        sizes = numpy.bincount(records, minlength=total).astype(numpy.int64)
        self.groups = numpy.zeros((total, max(int(sizes.max()), 1)), dtype=numpy.int64)
        filled = numpy.zeros(total, dtype=numpy.int64)
        for i, record in enumerate(records.tolist()):
            self.groups[record, filled[record]] = i
            filled[record] += 1
        self.sizes = sizes
        self.centres = numpy.array([shapes[link].bounding_center for link in self.links],
                                   dtype=float).reshape(-1, 3)
        self.radii = numpy.array([shapes[link].bounding_radius for link in self.links],
                                 dtype=float)
        self.values, self.status, self.counts = output_arrays(count)
        self.unsigned = numpy.zeros(count, dtype=bool)
        self.answers = (numpy.full((1, total, VALUE_COLUMNS), numpy.nan),
                        numpy.full((1, total), Status.INACTIVE, numpy.int8),
                        numpy.zeros((1, total, 2), numpy.int64),
                        numpy.full((1, total), -1, numpy.int64))


class _SpecArrays:
    """
    The record specs of a layout as arrays, built once per rebuild.

    Building them from the spec list every cycle would be O(records) Python work per cycle.
    """

    def __init__(self, specs, pairs=None):
        # Each pair's two pieces, contiguous (a column of ``pairs`` is strided).
        pairs = numpy.zeros((0, 2), numpy.int64) if pairs is None else pairs
        self.first = numpy.ascontiguousarray(pairs[:, 0])
        self.second = numpy.ascontiguousarray(pairs[:, 1])
        counts = numpy.array([spec.stop - spec.start for spec in specs], dtype=numpy.int64)
        self.link_id = numpy.array([spec.link_id for spec in specs], dtype=numpy.uint32)
        self.obstacle_id = numpy.array([spec.obstacle_id for spec in specs],
                                       dtype=numpy.uint32)
        self.owner = numpy.repeat(numpy.arange(len(specs)), counts)
        self.starts = numpy.array([spec.start for spec in specs], dtype=numpy.int64)
        self.stops = numpy.array([spec.stop for spec in specs], dtype=numpy.int64)
        self.empty = counts == 0
        self.state = numpy.array([spec.state for spec in specs], dtype=numpy.int64)
        self.self_pair = numpy.array([spec.self_pair for spec in specs], dtype=bool)
        self.link_padding = numpy.array([spec.link_padding for spec in specs], dtype=float)
        self.obstacle_padding = numpy.array([spec.obstacle_padding for spec in specs],
                                            dtype=float)
        self.count = len(specs)
        template = numpy.zeros(self.count, dtype=RECORD_DTYPE)
        for name in _FLOAT_FIELDS:
            template[name] = numpy.nan
        template['link_id'] = self.link_id
        template['obstacle_id'] = self.obstacle_id
        template['status'] = numpy.where(self.state == PairStatus.VALID, PairStatus.INVALID,
                                         self.state)
        self._template = template.view(numpy.uint8)

    def new_records(self):
        """
        Return a fresh copy of the layout's records before any measurement.

        Copied as bytes: numpy copies a structured array with padding field by field, ten
        times slower than filling a new one (measured 2026-11-26: 0.8 against 0.03 ms for
        11,000 records).
        """
        return self._template.copy().view(RECORD_DTYPE)
