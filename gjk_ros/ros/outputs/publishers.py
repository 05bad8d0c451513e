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
The node's publishers, except ``/diagnostics`` (``diagnostics.py``).

``~/distances``, ``~/self_distances``, ``~/min_distance``, ``~/safety`` with
``~/safety_detail``, ``~/speed_scaling`` (and ``~/speed_scaling/<group>``), the separation
groups' ``~/separation_margin/<group>`` and ``~/separation_scaling/<group>``
(``separation_margins.py``), ``~/names`` and ``~/markers``. Every output of a cycle carries
one header (``safety.data_stamp``).

``make_cloud`` packs a record array into ``~/distances``; ``Outputs`` owns the publishers;
``~/markers`` is built by ``hull_markers.MarkerBuilder``.
"""

import collections
import fnmatch
import json
import math
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.managed import scaling_settings
from gjk_ros.ros.outputs.hull_markers import distance_colour, MarkerBuilder, swept_segment
from gjk_ros.ros.outputs.safety import min_distance, safety_cause, safety_minimum
from gjk_ros.ros.outputs.separation_margins import SeparationOutputs
from gjk_ros.ros.outputs.speed_scaling import ScalingSettings, SpeedScaler
from gjk_ros.ros.qos import LATCHED_QOS, OUTPUT_QOS, safety_period, safety_qos
from gjk_ros.ros.records import PairStatus, RECORD_DTYPE, RECORD_FIELDS
import numpy
from sensor_msgs.msg import PointCloud2, PointField, Range
from std_msgs.msg import Float64, String
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['make_cloud', 'Outputs', 'ScalingOutputs']

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
        self.separation = SeparationOutputs(node, safety)
        self._status_name = '%s: safety' % node.get_fully_qualified_name().lstrip('/')
        self._builder = MarkerBuilder()
        self._last_markers = -math.inf
        self._config = None

    def configure(self, config):
        self._config = config
        self.scaling.configure(config)
        self.separation.configure(config)

    def close(self):
        """Destroy every publisher made here (cleanup, shutdown)."""
        publishers = [self.distances, self.self_distances, self.names, self.min_distance,
                      self.safety, self.safety_detail, self.markers]
        self.separation.close()
        for publisher in publishers + self.scaling.publishers() + self.separation.publishers():
            try:
                self._node.destroy_publisher(publisher)
            except Exception:  # noqa: B902 -- already gone, or the context shut down
                pass

    def publish_names(self, names):
        """``~/names``: the id -> name tables (latched)."""
        self.names.publish(String(data=json.dumps(names)))

    def publish(self, records, self_mask, reasons, header, names, link_groups,
                robot_speeds=None):
        """
        Publish one cycle's clouds, fail-safe minimum and safety summary with one header.

        ``reasons`` are why the node is not ready (empty when ready); ``names`` is the
        world's NameRegistry and ``link_groups`` its SRDF groups (the scaling groups);
        ``robot_speeds`` each record's ``v_r`` for the separation groups
        (``ClosingSpeeds.robot_speeds``; None: unknown).
        """
        config = self._config
        # What a stop rests on goes first: the minimum, ~/safety and the speed scaling (always
        # published) and the safety detail are small, and go before the record clouds, whose
        # packing, serialization and hand-over to the middleware (a megabyte for a thousand
        # obstacles) would delay them. The clouds and the safety detail are packed only for
        # someone listening (volatile topics: a subscriber that comes later gets the next
        # cycle's message). Each selection is made once: a masked copy of 11,000 records is
        # 1.76 MB.
        obstacle_records = _selected(records, ~self_mask)
        in_minimum = slice(None) if config.self_collision_in_min_distance else ~self_mask
        counted = records if config.self_collision_in_min_distance else obstacle_records
        found = safety_minimum(counted, not reasons, config.max_distance,
                               config.allow_no_obstacles)
        minimum = found.value
        self.min_distance.publish(Float64(data=minimum))
        self.safety.publish(Range(header=header, radiation_type=Range.INFRARED,
                                  field_of_view=0.0, min_range=-math.inf,
                                  max_range=config.max_distance, range=minimum))
        link_names = names.names_by_id(LINK)
        both = (link_names, names.names_by_id(OBSTACLE))
        limit, separation = 1.0, {}
        if self.separation.groups:
            # Separation monitoring is of obstacles: self pairs are not in any group.
            limit, separation = self.separation.evaluate(
                obstacle_records, not reasons, both,
                None if robot_speeds is None else robot_speeds[~self_mask])
            self.separation.publish(header)
        scaling = self.scaling.publish(
            minimum, counted, lambda subset: min_distance(
                subset, not reasons, config.max_distance, config.allow_no_obstacles),
            link_names, link_groups, limit)
        scaling.update(separation)
        if self.safety_detail.get_subscription_count():
            self._publish_detail(counted, self_mask[in_minimum], found, reasons, header, both,
                                 scaling)
        if self.distances.get_subscription_count():
            self.distances.publish(make_cloud(obstacle_records, header))
        if config.self_collision and self.self_distances.get_subscription_count():
            self.self_distances.publish(make_cloud(records[self_mask], header))

    def _publish_detail(self, records, self_mask, found, reasons, header, names, scaling):
        """``~/safety_detail``: the minimum, the pair or reason behind it, and the scaling."""
        max_distance, minimum = self._config.max_distance, found.value
        link, obstacle, cause = safety_cause(records, self_mask, found, reasons, names)
        level = DiagnosticStatus.OK if minimum > 0.0 else \
            DiagnosticStatus.WARN if math.isfinite(minimum) else DiagnosticStatus.ERROR
        # max_distance: ~/safety's max_range, so that a reader of this topic alone (the shards'
        # aggregator) has the whole summary.
        values = {'min_distance': repr(minimum), 'link': link, 'obstacle': obstacle,
                  'ready': str(not reasons).lower(), 'frame_id': header.frame_id,
                  'max_distance': repr(max_distance)}
        values.update(scaling)
        self.safety_detail.publish(DiagnosticArray(header=header, status=[DiagnosticStatus(
            level=level, name=self._status_name, message=cause, hardware_id='none',
            values=[KeyValue(key=key, value=value) for key, value in values.items()])]))

    def publish_markers(self, records, self_mask, header, views, swept_witnesses=None):
        """
        ``~/markers``, for eyes: at most every MARKERS_PERIOD, and only when someone listens.

        ``views()`` gives the PieceViews of the pieces in use; it is called only when the
        markers are published. ``swept_witnesses`` (r, 6) are the records' witness points at
        their swept minimum (None without swept distances): the closest is drawn.
        """
        monotonic = time.monotonic()
        if not self._config.publish_markers or \
                monotonic - self._last_markers < MARKERS_PERIOD or \
                not self.markers.get_subscription_count():
            return
        self._last_markers = monotonic
        markers = self._builder.build(records[~self_mask], header, views(),
                                      self._config.max_distance)
        markers.markers.append(swept_segment(
            records[~self_mask], None if swept_witnesses is None else
            swept_witnesses[~self_mask], header, self._config.max_distance))
        markers.markers.append(scaling_label(records, header, self.scaling.factor))
        self.markers.publish(markers)


def _selected(records, mask):
    """Return ``records[mask]``, or ``records`` itself when the mask keeps every record."""
    return records if mask.all() else records[mask]


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
        self.factor = 0.0  # the last published ~/speed_scaling
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
        self.factor = 0.0
        self.overall.reset()
        for group in self.groups.values():
            group.scaler.reset()

    def publish(self, minimum, records, minimum_of, link_names, link_groups, limit=1.0):
        """
        Step every scaler with this cycle's minima and publish; return the detail values.

        ``minimum_of(records)`` is the fail-safe minimum of a subset; ``link_names`` maps
        link ids to names; ``link_groups`` is ``World.link_groups``. ``~/speed_scaling`` is
        at most ``limit``, the separation groups' smallest scaling: a driver listens to one
        topic (docs/motion.md).
        """
        self.factor = min(self.overall.step(minimum), limit)
        factor = self.factor
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
