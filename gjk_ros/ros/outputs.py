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
The node's outputs, except ``/diagnostics`` (``diagnostics.py``).

``~/distances``, ``~/self_distances``, ``~/min_distance``, ``~/safety`` with
``~/safety_detail``, ``~/speed_scaling`` (and ``~/speed_scaling/<group>``), ``~/names`` and
``~/markers``.

Time: every output of a cycle carries one header whose stamp is the oldest datum the cycle's
records rest on (``data_stamp``): a transform's latest common time, an obstacle source's last
message. Static transforms and geometry do not age. Stamps are integer nanoseconds from the
datum to the header (``timekeeping``), so the header is that datum's stamp to the nanosecond.
Each record's own ``age`` says the same per pair, and its ``ready`` flag lets a consumer
rebuild the fail-safe minimum from the cloud.

``make_cloud`` and ``min_distance`` are pure functions of a record array; ``Outputs`` owns the
publishers. ``~/markers`` is built by ``gjk_ros.ros.markers.MarkerBuilder``.
"""

import collections
import fnmatch
import json
import math
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from gjk_ros.ros.bodies import LINK, OBSTACLE
from gjk_ros.ros.managed import scaling_settings
from gjk_ros.ros.markers import distance_colour, MarkerBuilder
from gjk_ros.ros.qos import LATCHED_QOS, OUTPUT_QOS, safety_period, safety_qos
from gjk_ros.ros.records import PairStatus, RECORD_DTYPE, RECORD_FIELDS, status_table
from gjk_ros.ros.speed_scaling import ScalingSettings, SpeedScaler
from gjk_ros.ros.timekeeping import TIMELESS, UNKNOWN
import numpy
from sensor_msgs.msg import PointCloud2, PointField, Range
from std_msgs.msg import Float64, String
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['data_stamp', 'make_cloud', 'min_distance', 'Outputs', 'record_ages',
           'record_stamps', 'safety_cause', 'ScalingOutputs']

# ~/markers is for eyes: at most this rate, whatever rate_hz is.
MARKERS_PERIOD = 0.1
# The speed-scaling label in ~/markers: its namespace, height above the closest link point
# and text size (metres), and lifetime (seconds: it vanishes when cycles stop).
SCALING_NAMESPACE = 'speed_scaling'
SCALING_LABEL_LIFT = 0.15
SCALING_LABEL_HEIGHT = 0.06
SCALING_LABEL_LIFETIME = 0.5


# Built once: 17 PointField constructions per cycle were a tenth of the node's Python time.
_FIELDS = [PointField(name=name, offset=RECORD_DTYPE.fields[name][1], datatype=datatype,
                      count=1) for name, datatype in RECORD_FIELDS]


def make_cloud(records, header):
    """
    Pack records into a ``~/distances`` PointCloud2.

    Parameters
    ----------
    records : (r,) numpy array of RECORD_DTYPE
        One record per pair.
    header : std_msgs.msg.Header
        Frame ``fixed_frame``, stamp of the newest input used.

    Returns
    -------
    sensor_msgs.msg.PointCloud2
        height 1, width r, dense only if every record is VALID.

    """
    records = numpy.ascontiguousarray(records, dtype=RECORD_DTYPE)
    cloud = PointCloud2()
    cloud.header = header
    cloud.height = 1
    cloud.width = len(records)
    cloud.fields = _FIELDS
    cloud.is_bigendian = sys.byteorder == 'big'
    cloud.point_step = RECORD_DTYPE.itemsize
    cloud.row_step = cloud.point_step * cloud.width
    cloud.data = records.tobytes()
    cloud.is_dense = bool((records['status'] == PairStatus.VALID).all())
    return cloud


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
        VALID distances, APPROXIMATE ``distance - error_bound`` and BEYOND ``max_distance``;
        with no record, +inf if ``allow_no_obstacles`` else -inf.

    """
    status = records['status']
    if not ready or _UNKNOWN[status].any():
        return -math.inf
    if not len(records):
        return math.inf if allow_no_obstacles else -math.inf
    approximate = status == PairStatus.APPROXIMATE
    values = numpy.concatenate([
        records['distance'][status == PairStatus.VALID],
        records['distance'][approximate] - records['error_bound'][approximate],
        numpy.full(int((status == PairStatus.BEYOND).sum()), max_distance),
    ])
    return float(values.min())


# Statuses that carry no measurement and no bound: unknown is treated as contact.
_UNKNOWN = status_table([PairStatus.STALE, PairStatus.INVALID, PairStatus.PENDING])


def record_stamps(tracker, piece_stamps):
    """
    Return the oldest datum of each record's pieces, exactly (``PairTracker.record_times``).

    ``record_times`` reduces floats by their minimum, and a float cannot hold a stamp in
    nanoseconds (2^53 ns is 104 days). A minimum only depends on order, so the stamps go through
    it as the ranks of their distinct values, which a float holds exactly, and come back as the
    integers they rank.

    Parameters
    ----------
    tracker : gjk_ros.ros.pairs.PairTracker
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


def safety_cause(records, is_self, minimum, reasons, names, max_distance):
    """
    Say what the fail-safe minimum rests on: (link, obstacle, text).

    The closest pair when the minimum is a measurement (or the ``max_distance`` bound); else
    the first reason the node is not ready, or the first pair that is not measured.
    ``is_self`` marks self pairs (their obstacle id is a link's); ``names`` is
    ``(links, obstacles)`` by id.
    """
    status = records['status']
    if math.isfinite(minimum):
        bound = numpy.where(status == PairStatus.APPROXIMATE,
                            records['distance'] - records['error_bound'], records['distance'])
        bound = numpy.where(status == PairStatus.BEYOND, max_distance, bound)
        row = int(numpy.nanargmin(numpy.where(_UNKNOWN[status], numpy.nan, bound)))
        link, obstacle = _pair_names(records[row], is_self[row], names)
        name = PairStatus(status[row]).name
        return link, obstacle, 'closest: %s to %s (%s)' % (link, obstacle, name)
    unknown = numpy.flatnonzero(_UNKNOWN[status])
    if minimum == math.inf or not (reasons or unknown.size):
        return '', '', 'no pair in scope'
    if reasons:
        return '', '', 'not ready: %s' % reasons[0]
    row = int(unknown[0])
    link, obstacle = _pair_names(records[row], is_self[row], names)
    return link, obstacle, '%s to %s is %s' % (link, obstacle, PairStatus(status[row]).name)


def _pair_names(record, is_self, names):
    links, obstacles = names
    second = links if is_self else obstacles
    return (links.get(int(record['link_id']), str(int(record['link_id']))),
            second.get(int(record['obstacle_id']), str(int(record['obstacle_id']))))


class Outputs:
    """
    The publishers of one node, and what each cycle publishes.

    Parameters
    ----------
    node : rclpy.node.Node
        Creates the publishers (names relative to the node: ``~/...``).
    rate_hz : float
        The start-up rate, which sets the deadline and liveliness lease the safety outputs
        offer (``qos.safety_period``; QoS cannot change after creation).

    """

    def __init__(self, node, rate_hz):
        self._node = node
        self.period = safety_period(rate_hz)
        safety = safety_qos(self.period)
        self.distances = node.create_publisher(PointCloud2, '~/distances', safety)
        self.self_distances = node.create_publisher(PointCloud2, '~/self_distances', safety)
        self.names = node.create_publisher(String, '~/names', LATCHED_QOS)
        self.min_distance = node.create_publisher(Float64, '~/min_distance', safety)
        self.safety = node.create_publisher(Range, '~/safety', safety)
        self.safety_detail = node.create_publisher(DiagnosticArray, '~/safety_detail', safety)
        self.markers = node.create_publisher(MarkerArray, '~/markers', OUTPUT_QOS)
        self.scaling = ScalingOutputs(node, safety)
        self._status_name = '%s: safety' % node.get_fully_qualified_name().lstrip('/')
        self._builder = MarkerBuilder()
        self._last_markers = -math.inf
        self._config = None

    def configure(self, config):
        self._config = config
        self.scaling.configure(config)

    def close(self):
        """Destroy every publisher made here (cleanup, shutdown)."""
        publishers = [self.distances, self.self_distances, self.names, self.min_distance,
                      self.safety, self.safety_detail, self.markers]
        for publisher in publishers + self.scaling.publishers():
            try:
                self._node.destroy_publisher(publisher)
            except Exception:  # noqa: B902 -- already gone, or the context shut down
                pass

    def publish_names(self, names):
        """``~/names``: the id -> name tables (latched)."""
        self.names.publish(String(data=json.dumps(names)))

    def publish(self, records, self_mask, reasons, header, names, link_groups):
        """
        Publish one cycle's clouds, fail-safe minimum and safety summary with one header.

        ``reasons`` are why the node is not ready (empty when ready); ``names`` is the
        world's NameRegistry and ``link_groups`` its SRDF groups (the scaling groups).
        """
        config = self._config
        self.distances.publish(make_cloud(records[~self_mask], header))
        if config.self_collision:
            self.self_distances.publish(make_cloud(records[self_mask], header))
        counted = slice(None) if config.self_collision_in_min_distance else ~self_mask
        minimum = min_distance(records[counted], not reasons, config.max_distance,
                               config.allow_no_obstacles)
        self.min_distance.publish(Float64(data=minimum))
        link_names = names.names_by_id(LINK)
        link, obstacle, cause = safety_cause(
            records[counted], self_mask[counted], minimum, reasons,
            (link_names, names.names_by_id(OBSTACLE)), config.max_distance)
        self.safety.publish(Range(header=header, radiation_type=Range.INFRARED,
                                  field_of_view=0.0, min_range=-math.inf,
                                  max_range=config.max_distance, range=minimum))
        level = DiagnosticStatus.OK if minimum > 0.0 else \
            DiagnosticStatus.WARN if math.isfinite(minimum) else DiagnosticStatus.ERROR
        values = {'min_distance': repr(minimum), 'link': link, 'obstacle': obstacle,
                  'ready': str(not reasons).lower(), 'frame_id': header.frame_id}
        values.update(self.scaling.publish(
            minimum, records[counted], lambda subset: min_distance(
                subset, not reasons, config.max_distance, config.allow_no_obstacles),
            link_names, link_groups))
        self.safety_detail.publish(DiagnosticArray(header=header, status=[DiagnosticStatus(
            level=level, name=self._status_name, message=cause, hardware_id='none',
            values=[KeyValue(key=key, value=value) for key, value in values.items()])]))

    def publish_markers(self, records, self_mask, header, views):
        """
        ``~/markers``, for eyes: at most every MARKERS_PERIOD, and only when someone listens.

        ``views()`` gives the PieceViews of the pieces in use; it is called only when the
        markers are published.
        """
        monotonic = time.monotonic()
        if not self._config.publish_markers or \
                monotonic - self._last_markers < MARKERS_PERIOD or \
                not self.markers.get_subscription_count():
            return
        self._last_markers = monotonic
        markers = self._builder.build(records[~self_mask], header, views(),
                                      self._config.max_distance)
        markers.markers.append(scaling_label(records, header, self.scaling.overall.factor))
        self.markers.publish(markers)


def scaling_label(records, header, factor):
    """
    Return the ``~/speed_scaling`` factor as a TEXT_VIEW_FACING marker, for RViz.

    Above the link point of the closest measured pair (the origin of the header's frame when
    none is measured), red at 0 through yellow to green at 1.
    """
    measured = records[numpy.isin(records['status'], (PairStatus.VALID, PairStatus.APPROXIMATE))]
    position = numpy.zeros(3)
    if len(measured):
        closest = measured[int(numpy.argmin(measured['distance']))]
        position = numpy.array([closest['link_x'], closest['link_y'], closest['link_z']])
    label = Marker(header=header, ns=SCALING_NAMESPACE, id=0, type=Marker.TEXT_VIEW_FACING,
                   action=Marker.ADD, text='speed scaling %.2f' % factor)
    label.lifetime.sec, label.lifetime.nanosec = 0, int(SCALING_LABEL_LIFETIME * 1e9)
    label.pose.position.x, label.pose.position.y, label.pose.position.z = (
        float(value) for value in position + (0.0, 0.0, SCALING_LABEL_LIFT))
    label.pose.orientation.w = 1.0
    label.scale.z = SCALING_LABEL_HEIGHT
    label.color = distance_colour(factor, 1.0)
    return label


class ScalingOutputs:
    """
    ``~/speed_scaling`` and ``~/speed_scaling/<group>``: std_msgs/Float64 in [0, 1].

    One ``SpeedScaler`` (speed_scaling.py) for the whole minimum and one per group of
    ``scaling_groups``; each group's minimum is the fail-safe minimum over the records of its
    links: an SRDF group's links as MoveIt reads them (``World.link_groups``), or those that
    match its patterns. A group the SRDF does not have (yet) is unknown: its factor is 0.
    Published with the safety QoS every cycle, and the same values go into
    ``~/safety_detail`` (``speed_scaling``, ``speed_scaling <group>``) under the cycle's header.
    """

    def __init__(self, node, qos):
        self._node, self._qos = node, qos
        self.overall = SpeedScaler()
        self.publisher = node.create_publisher(Float64, '~/speed_scaling', qos)
        self.groups = {}  # name -> _Group
        self.settings = ScalingSettings()
        # Each group's link ids, and the (link names, SRDF groups) they were matched for: the
        # patterns are matched again only when the links or the groups change, not per cycle.
        self._members, self._members_of = {}, None

    def configure(self, config):
        """Take the scaling parameters; make or drop the group publishers they name."""
        settings = scaling_settings(config)
        problem = settings.problem()
        if problem is not None:
            # The combination is refused at run time; from a parameter file it falls back.
            self._node.get_logger().error('speed scaling: %s; using the defaults %s'
                                          % (problem, ScalingSettings()))
            settings = ScalingSettings()
        self.settings = settings
        self.overall.configure(settings)
        patterns = {}
        for entry in config.scaling_groups:
            name, colon, pattern = entry.partition(':')
            if colon:
                patterns.setdefault(name, []).append(pattern)
            else:
                patterns[name] = None  # the SRDF group of that name
        for name in set(self.groups) - set(patterns):
            self._node.destroy_publisher(self.groups.pop(name).publisher)
        for name, group_patterns in patterns.items():
            _, scaler, publisher = self.groups.get(name, _Group(None, SpeedScaler(settings),
                                                                None))
            if publisher is None:
                publisher = self._node.create_publisher(Float64, '~/speed_scaling/' + name,
                                                        self._qos)
            scaler.configure(settings)
            self.groups[name] = _Group(group_patterns and tuple(group_patterns), scaler,
                                       publisher)
        self._members_of = None

    def publishers(self):
        """Return every publisher made here: the overall one and one per group."""
        return [self.publisher] + [group.publisher for group in self.groups.values()]

    def reset(self):
        """Every factor back to 0 (activation: nothing measured yet)."""
        self.overall.reset()
        for group in self.groups.values():
            group.scaler.reset()

    def publish(self, minimum, records, minimum_of, link_names, link_groups):
        """
        Step every scaler with this cycle's minima and publish; return the detail values.

        ``minimum_of(records)`` is the fail-safe minimum of a subset; ``link_names`` maps
        link ids to names; ``link_groups`` is ``World.link_groups``.
        """
        factor = self.overall.step(minimum)
        self.publisher.publish(Float64(data=factor))
        values = {'speed_scaling': repr(factor)}
        members = self._group_members(link_names, link_groups)
        for name, (_, scaler, publisher) in sorted(self.groups.items()):
            group_minimum = -math.inf
            if members[name] is not None:
                group_minimum = minimum_of(records[numpy.isin(records['link_id'],
                                                              members[name])])
            group_factor = scaler.step(group_minimum)
            publisher.publish(Float64(data=group_factor))
            values['speed_scaling ' + name] = repr(group_factor)
        return values

    def _group_members(self, link_names, link_groups):
        """``{group: link ids}``, None for an SRDF group the SRDF does not have (unknown)."""
        if self._members_of != (link_names, link_groups):
            self._members = {
                name: None if patterns is None and name not in link_groups else numpy.array(
                    [link_id for link_id, link in link_names.items()
                     if _in_group(link, patterns, link_groups.get(name))], dtype=numpy.int64)
                for name, patterns in ((name, group.patterns)
                                       for name, group in self.groups.items())}
            self._members_of = (link_names, link_groups)
        return self._members


# A scaling group: its patterns (None: the SRDF group of its name), its scaler, its publisher.
_Group = collections.namedtuple('_Group', 'patterns scaler publisher')


def _in_group(link, patterns, srdf_links):
    """Whether ``link`` belongs to a scaling group: its patterns, or its SRDF group's links."""
    if patterns is None:
        return link in srdf_links
    return any(fnmatch.fnmatchcase(link, pattern) for pattern in patterns)
