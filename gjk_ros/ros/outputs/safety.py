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
The fail-safe minimum and the time of the records: pure functions of a record array.

- ``min_distance``: the smallest signed distance over the records, where anything unknown is
  contact; ``safety_cause``: what that minimum rests on (``~/safety_detail``).
- Time: every output of a cycle carries one header whose stamp is the oldest datum the cycle's
  records rest on (``data_stamp``): a transform's latest common time, an obstacle source's last
  message. Static transforms and geometry do not age. Stamps are integer nanoseconds from the
  datum to the header (``timekeeping``), so the header is that datum's stamp to the
  nanosecond. Each record's own ``age`` says the same per pair, and its ``ready`` flag lets a
  consumer rebuild the fail-safe minimum from the cloud.
"""

import collections
import math

from gjk_ros.core.record_passes import smallest_bound
from gjk_ros.ros.inputs.timekeeping import TIMELESS, UNKNOWN
from gjk_ros.ros.records import field_column, packed_views, PairStatus, status_table
import numpy

__all__ = ['data_stamp', 'lower_bounds', 'min_distance', 'record_ages', 'record_stamps',
           'safety_cause', 'safety_minimum', 'SafetyMinimum', 'UNKNOWN_STATUS']


class SafetyMinimum(collections.namedtuple('SafetyMinimum', 'value row unknown')):
    """
    The fail-safe minimum (``value``) and what it rests on (``safety_minimum``).

    ``row`` is the first record whose bound is the minimum, ``unknown`` the first record that
    carries no measurement (-1: none, or not looked for because the node was not ready).
    """


def min_distance(records, ready=True, max_distance=math.inf, allow_no_obstacles=False):
    """
    Smallest signed distance over the records, fail-safe: anything unknown is contact.

    Parameters
    ----------
    records : (r,) RECORD_DTYPE array
        This cycle's records.
    ready : bool
        False while the node cannot vouch for its scope (no robot model, a link without a
        transform, a silent required source, parameter bodies not built): the result is -inf.
    max_distance : float
        A BEYOND record is at least this far (its bounding spheres are farther apart), so it
        counts as this lower bound, never as +inf.
    allow_no_obstacles : bool
        Whether an empty scope (no record) may read +inf; otherwise it is -inf.

    Returns
    -------
    float
        -inf if not ready or if any record is STALE, INVALID or PENDING; else the minimum of
        VALID distances, APPROXIMATE ``distance - error_bound``, BEYOND ``max_distance`` and
        every ``swept_distance`` there is (the motion since the last cycle, docs/motion.md);
        -inf too if a VALID or APPROXIMATE record's bound is not a number (never made by the
        node: PairTracker refuses it); with no record, +inf if ``allow_no_obstacles`` else
        -inf.

    """
    return safety_minimum(records, ready, max_distance, allow_no_obstacles).value


def safety_minimum(records, ready=True, max_distance=math.inf, allow_no_obstacles=False):
    """
    Return ``min_distance`` (same arguments) with the records it rests on (``SafetyMinimum``).

    One compiled pass over the records (``record_passes.smallest_bound``), for the minimum and
    ``safety_cause`` alike.
    """
    if not ready:
        return SafetyMinimum(-math.inf, -1, -1)
    words, _, octets = packed_views(numpy.ascontiguousarray(records))
    bound, row, unknown = smallest_bound(octets, _STATUS_BYTE, words, _BOUND_WORDS, _UNKNOWN,
                                         int(PairStatus.APPROXIMATE), int(PairStatus.BEYOND),
                                         float(max_distance))
    if unknown >= 0:
        bound = -math.inf
    elif not len(records):
        bound = math.inf if allow_no_obstacles else -math.inf
    return SafetyMinimum(float(bound), int(row), int(unknown))


def lower_bounds(records, max_distance):
    """Return each record's bound for the minimum: its sample's, or its swept one if lower."""
    status = records['status']
    bound = numpy.where(status == PairStatus.APPROXIMATE,
                        records['distance'] - records['error_bound'], records['distance'])
    bound = numpy.where(status == PairStatus.BEYOND, max_distance, bound)
    return numpy.fmin(bound, records['swept_distance'])


# Statuses that carry no measurement and no bound: unknown is treated as contact.
UNKNOWN_STATUS = _UNKNOWN = status_table([PairStatus.STALE, PairStatus.INVALID,
                                          PairStatus.PENDING])
# Where smallest_bound reads a record: its status byte and the words of its bound's fields.
_STATUS_BYTE = field_column('status')
_BOUND_WORDS = numpy.array([field_column(name) for name in
                            ('distance', 'error_bound', 'swept_distance')])


def record_stamps(tracker, piece_stamps):
    """
    Return the oldest datum of each record's pieces, exactly (``PairTracker.record_times``).

    ``record_times`` reduces floats by their minimum, and a float cannot hold a stamp in
    nanoseconds (2^53 ns is 104 days). A minimum only depends on order, so the stamps go through
    it as the ranks of their distinct values, which a float holds exactly, and come back as the
    integers they rank.

    Parameters
    ----------
    tracker : gjk_ros.ros.compute.pairs.PairTracker
        The layout's tracker: its records and their piece pairs.
    piece_stamps : (n,) int64
        Per layout piece: its data's stamp in ns, ``TIMELESS`` or ``UNKNOWN``.

    Returns
    -------
    tuple of ((r,) int64, (r,) bool)
        Per record: the stamp (``TIMELESS``, ``UNKNOWN``), and whether it has no piece pairs
        (no datum at all).

    """
    piece_stamps = numpy.asarray(piece_stamps, dtype=numpy.int64)
    distinct, ranks = numpy.unique(piece_stamps, return_inverse=True)
    ranks = ranks.reshape(-1).astype(numpy.float64)
    ranks[piece_stamps == TIMELESS] = numpy.inf
    ranks[piece_stamps == UNKNOWN] = -numpy.inf
    reduced = tracker.record_times(ranks)
    stamps = numpy.full(len(reduced), TIMELESS, dtype=numpy.int64)
    known = numpy.isfinite(reduced)
    stamps[known] = distinct[reduced[known].astype(numpy.int64)]
    stamps[reduced == -numpy.inf] = UNKNOWN
    return stamps, numpy.isnan(reduced)


def record_ages(stamps, empty, now_ns):
    """
    Return each record's age in seconds from its oldest datum (``record_stamps``).

    The difference is taken in integer nanoseconds and only then made seconds. Timeless data is
    0 s old, unknown data infinitely old, and a record without piece pairs has no age (NaN).
    """
    timeless, unknown = stamps == TIMELESS, stamps == UNKNOWN
    ages = (now_ns - numpy.where(timeless | unknown, now_ns, stamps)) * 1e-9
    ages[unknown] = numpy.inf
    ages[empty] = numpy.nan
    return ages


def data_stamp(stamps, empty, now_ns):
    """
    Return the stamp (int ns) of a cycle's outputs: the oldest datum its records rest on.

    ``now_ns`` when every datum is timeless; 0 ("no time") when the only data are unknown.
    """
    used = stamps[~empty]
    dated = used[(used != TIMELESS) & (used != UNKNOWN)]
    if dated.size:
        return int(dated.min())
    return 0 if (used == UNKNOWN).any() else int(now_ns)


def safety_cause(records, is_self, minimum, reasons, names):
    """
    Say what the fail-safe minimum rests on: (link, obstacle, text).

    ``minimum`` is the records' ``SafetyMinimum``. The closest pair when the minimum is a
    measurement (or the ``max_distance`` bound); else the first reason the node is not ready,
    or the first pair that is not measured. ``is_self`` marks self pairs (their obstacle id is
    a link's); ``names`` is ``(links, obstacles)`` by id.
    """
    bound, row, unknown = minimum
    if math.isfinite(bound):
        record = records[row]
        link, obstacle = _pair_names(record, is_self[row], names)
        name = PairStatus(record['status']).name
        if bound == record['swept_distance'] and not bound == record['distance']:
            name += ', swept at %.2f of the interval' % record['swept_fraction']
        return link, obstacle, 'closest: %s to %s (%s)' % (link, obstacle, name)
    if bound == math.inf or not (reasons or unknown >= 0):
        return '', '', 'no pair in scope'
    if reasons:
        return '', '', 'not ready: %s' % reasons[0]
    record = records[unknown]
    link, obstacle = _pair_names(record, is_self[unknown], names)
    name = PairStatus(record['status']).name
    if not _UNKNOWN[record['status']]:
        name += ' without a distance'
    return link, obstacle, '%s to %s is %s' % (link, obstacle, name)


def _pair_names(record, is_self, names):
    links, obstacles = names
    second = links if is_self else obstacles
    return (links.get(int(record['link_id']), str(int(record['link_id']))),
            second.get(int(record['obstacle_id']), str(int(record['obstacle_id']))))
