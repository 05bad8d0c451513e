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
Speed and separation monitoring per obstacle group: ISO/TS 15066's margin and scaling.

Each cycle, for each group of ``separation_groups`` (``params/separation.py``), the core's
``evaluate_group`` (``gjk_ros.core.separation``) takes the group's link-obstacle records:

- ``d``: the record's fail-safe bound, as ``~/min_distance`` takes it (the swept lower bound
  when lower, ``distance - error_bound`` when APPROXIMATE, ``max_distance`` when BEYOND);
  -inf when the record is unknown (STALE, INVALID, PENDING) or the node is not ready;
- ``v_r``: the link's speed towards the obstacle at the witnesses (the record's closing speed
  without the obstacle's own motion, which ``v_h`` covers), and for a BEYOND pair (no
  witnesses) the bound on its link's point speeds (``ClosingSpeeds.robot_speeds``); NaN
  (unknown: scaling 0) when the link's velocity is unknown.

``~/separation_margin/<group>`` (sensor_msgs/Range, as ``~/safety``: ``range`` the smallest
``d - S_p`` rounded down to float32, -inf when unknown; ``~/safety_detail`` has it exactly)
and ``~/separation_scaling/<group>`` (std_msgs/Float64, the largest factor in [0, 1] of the
current speeds that keeps every margin non-negative, 0 when unknown) are published every
cycle under the cycle's header; ``~/speed_scaling`` takes the smallest of them
(``ScalingOutputs.publish``'s ``limit``). A convenience, not a rated safety
function: docs/motion.md says which terms must come from rated data.

The groups come built (``Config.separations``): their ``<group>.*`` parameters are declared,
validated and routed by the node's parameters (``gjk_ros.ros.node_parameters``), as the
observation sources' are (Nav2's layout).
"""

import collections
from dataclasses import dataclass
import math

from gjk_ros.core.separation import evaluate_group, separation_margin
from gjk_ros.ros.outputs.safety import lower_bounds, UNKNOWN_STATUS
from gjk_ros.ros.records import PairStatus
import numpy
from sensor_msgs.msg import Range
from std_msgs.msg import Float64

__all__ = ['evaluate_records', 'GroupVerdict', 'SeparationOutputs']


@dataclass(frozen=True)
class GroupVerdict:
    """
    One group's cycle: its margin (m), scaling, limiting record (-1: none), and why unknown.

    ``missing`` the rated terms still unset, ``reason`` why the verdict is unknown otherwise
    (a parameter problem, the node not ready, a record not measured), '' when known.
    """

    margin: float
    scaling: float
    row: int = -1
    missing: tuple = ()
    reason: str = ''


def float32_below(value):
    """
    Return the largest float32 not above ``value`` (``Range.range`` is a float32).

    Rounding to nearest could publish a margin up to half a float32 step larger than the
    one computed; a margin is only ever rounded down.
    """
    rounded = numpy.float32(value)
    if float(rounded) > value:  # in float64: numpy would compare in float32
        rounded = numpy.nextafter(rounded, numpy.float32(-numpy.inf))
    return float(rounded)


def group_distances(records, max_distance):
    """Return each record's ``d`` for the group's formula (module docstring)."""
    distances = lower_bounds(records, max_distance)
    distances[UNKNOWN_STATUS[records['status']]] = -math.inf
    return distances


def evaluate_records(group, records, robot_speeds, ready, max_distance, allow_no_obstacles):
    """
    Return the GroupVerdict of a SeparationGroup over its records.

    ``records`` the group's link-obstacle records of this cycle, ``robot_speeds`` their
    ``v_r`` (``ClosingSpeeds.robot_speeds``), ``ready`` whether the node vouches
    for its scope; ``max_distance`` and ``allow_no_obstacles`` as for ``~/min_distance``.
    """
    settings = group.settings
    if group.problem:
        return GroupVerdict(-math.inf, 0.0, reason=group.problem)
    verdict = evaluate_group(settings, [], [])
    if verdict.missing:
        return GroupVerdict(-math.inf, 0.0, missing=verdict.missing,
                            reason='unset: %s' % ', '.join(verdict.missing))
    if not ready:
        return GroupVerdict(-math.inf, 0.0, reason='not ready')
    if not len(records):
        if allow_no_obstacles:
            return GroupVerdict(math.inf, 1.0)
        return GroupVerdict(-math.inf, 0.0, reason='no obstacle of the group in scope')
    distances = group_distances(records, max_distance)
    speeds = numpy.asarray(robot_speeds, dtype=numpy.float64)
    # The group's verdict is its worst pairs': evaluate_group searches the scaling of the
    # pairs whose margin is negative now, and of the smallest margin (the others keep 1).
    margins = numpy.atleast_1d(separation_margin(settings, distances, speeds))
    candidates = numpy.union1d(numpy.flatnonzero(margins < 0.0), [int(numpy.argmin(margins))])
    verdict = evaluate_group(settings, distances[candidates], speeds[candidates])
    row = int(candidates[verdict.pair]) if verdict.pair >= 0 else -1
    reason = ''
    if verdict.margin == -math.inf:
        status = int(records['status'][row])
        reason = 'a pair is %s' % PairStatus(status).name if UNKNOWN_STATUS[status] else \
            'a robot speed is unknown' if math.isnan(speeds[row]) else \
            'a robot speed (%.3f m/s) is beyond the stopping table' % speeds[row]
    return GroupVerdict(verdict.margin, verdict.scaling, row, reason=reason)


# What the groups' members were matched for: the names mapping (by identity) and the groups.
_MatchedFor = collections.namedtuple('_MatchedFor', 'names groups')


class SeparationOutputs:
    """
    The separation groups of one node: their publishers and cycle.

    Parameters
    ----------
    node : rclpy.node.Node
        Creates the publishers.
    qos : rclpy.qos.QoSProfile
        The safety outputs' QoS.

    """

    def __init__(self, node, qos):
        self._node, self._qos = node, qos
        self.groups = {}  # name -> (SeparationGroup, margin publisher, scaling publisher)
        self.verdicts = {}  # name -> GroupVerdict of the last cycle
        self._config = None
        self._members, self._members_of = {}, None

    def configure(self, config):
        """Take the groups of ``config.separations``; make or drop their publishers."""
        self._config = config
        groups = {group.name: group for group in config.separations}
        for name in set(self.groups) - set(groups):
            for publisher in self.groups.pop(name)[1:]:
                self._node.destroy_publisher(publisher)
        for name, group in groups.items():
            if group.problem:
                self._node.get_logger().error('separation group %s: %s' % (name, group.problem))
            _, margin, scaling = self.groups.get(name, (None, None, None))
            if margin is None:
                margin = self._node.create_publisher(Range, '~/separation_margin/' + name,
                                                     self._qos)
                scaling = self._node.create_publisher(Float64, '~/separation_scaling/' + name,
                                                      self._qos)
            self.groups[name] = (group, margin, scaling)
        self._members_of = None

    def publishers(self):
        """Return every publisher made here."""
        return [publisher for _, *publishers in self.groups.values() for publisher in publishers]

    def close(self):
        """
        Forget the last verdicts (cleanup, shutdown).

        The parameters are the node's (``NodeParameters``), the publishers the caller's to
        destroy (``publishers``): nothing else is held.
        """
        self.verdicts = {}

    def evaluate(self, records, ready, names, robot_speeds):
        """
        Evaluate every group over this cycle's link-obstacle records.

        ``names`` are ``(links, obstacles)`` by id (``NameRegistry.names_by_id``). Returns the
        smallest scaling (1 without groups) and the ``~/safety_detail`` values.
        """
        config = self._config
        links, obstacles = names
        members = self._group_members(obstacles)
        if robot_speeds is None or len(robot_speeds) != len(records):
            robot_speeds = numpy.full(len(records), numpy.nan)
        limit, values = 1.0, {}
        self.verdicts = {}
        for name, (group, _, _) in sorted(self.groups.items()):
            chosen = numpy.isin(records['obstacle_id'], members[name])
            subset = records[chosen]
            verdict = evaluate_records(group, subset, robot_speeds[chosen], ready,
                                       config.max_distance, config.allow_no_obstacles)
            self.verdicts[name] = verdict
            limit = min(limit, verdict.scaling)
            prefix = 'separation %s ' % name
            values[prefix + 'margin'] = repr(verdict.margin)
            values[prefix + 'scaling'] = repr(verdict.scaling)
            if verdict.row >= 0:
                record = subset[verdict.row]
                values[prefix + 'pair'] = '%s to %s' % (
                    links.get(int(record['link_id']), str(int(record['link_id']))),
                    obstacles.get(int(record['obstacle_id']), str(int(record['obstacle_id']))))
                values[prefix + 'robot_speed'] = repr(float(robot_speeds[chosen][verdict.row]))
            if verdict.missing:
                values[prefix + 'missing'] = ', '.join(verdict.missing)
            if verdict.reason:
                values[prefix + 'reason'] = verdict.reason
        return limit, values

    def publish(self, header):
        """Publish the last evaluation's margins and scalings under the cycle's header."""
        for name, verdict in self.verdicts.items():
            _, margin, scaling = self.groups[name]
            margin.publish(Range(header=header, radiation_type=Range.INFRARED,
                                 field_of_view=0.0, min_range=-math.inf, max_range=math.inf,
                                 range=float32_below(verdict.margin)))
            scaling.publish(Float64(data=verdict.scaling))

    def _group_members(self, obstacle_names):
        """``{group: obstacle ids}``: matched again only when the names or groups change."""
        groups = tuple(self.groups)
        if self._members_of is None or self._members_of.names is not obstacle_names or \
                self._members_of.groups != groups:
            self._members = {
                name: numpy.array([obstacle_id for obstacle_id, obstacle in
                                   obstacle_names.items() if group.watches(obstacle)],
                                  dtype=numpy.int64)
                for name, (group, _, _) in self.groups.items()}
            self._members_of = _MatchedFor(obstacle_names, groups)
        return self._members
