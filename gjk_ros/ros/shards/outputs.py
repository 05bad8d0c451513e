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
The aggregator's outputs: the node's safety topics for the whole robot, and ``/diagnostics``.

``~/min_distance`` (std_msgs/Float64), ``~/safety`` (sensor_msgs/Range), ``~/safety_detail``
(diagnostic_msgs/DiagnosticArray) and ``~/speed_scaling`` (std_msgs/Float64) have the types,
keys and QoS of a ``gjk_distance`` node's (``outputs/publishers.py``), so a consumer, an RViz
display or another aggregator (a robot of robots) reads an aggregator as it reads one node.
Every output of one aggregate carries one header: the oldest shard stamp it rests on.

``/diagnostics`` entries follow the node's naming (``outputs/diagnostics.py``):
``<aggregator>: aggregate`` (the answer and what it rests on) and ``<aggregator>: shard
<shard>`` per shard (heard, silent and why, unknown and why, incompatible QoS).
"""

import math
import os
import socket

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from gjk_ros.ros.qos import OUTPUT_QOS, safety_qos
from sensor_msgs.msg import Range
from std_msgs.msg import Float64, Header

__all__ = ['AggregatorOutputs', 'aggregate_status', 'level_of', 'shard_status']

# The node's conventions (outputs/diagnostics.py), restated: importing that module would load
# the geometry core into a process that measures nothing. diagnostic_updater asks software
# without a device for 'none'; ``instance`` tells apart two processes that share a name.
HARDWARE_ID = 'none'
INSTANCE = '%s:%d' % (socket.gethostname(), os.getpid())

OK = DiagnosticStatus.OK
WARN = DiagnosticStatus.WARN
ERROR = DiagnosticStatus.ERROR


def level_of(minimum):
    """Return the node's ``~/safety_detail`` level: OK apart, WARN in contact, ERROR unknown."""
    return OK if minimum > 0.0 else WARN if math.isfinite(minimum) else ERROR


def _values(**items):
    return [KeyValue(key=key, value=str(value)) for key, value in items.items()]


def header_of(aggregate):
    """Return the header of an aggregate's outputs (stamp: the oldest shard stamp)."""
    header = Header(frame_id=aggregate.frame_id)
    header.stamp.sec, header.stamp.nanosec = divmod(aggregate.stamp_ns, 1_000_000_000)
    return header


class AggregatorOutputs:
    """
    The publishers of one aggregator.

    Parameters
    ----------
    node : rclpy.node.Node
        Creates the publishers (``~/...`` relative to it).
    deadline : float
        Seconds: the deadline and liveliness lease the safety outputs offer (the aggregator
        publishes at least every half deadline, ``board.ShardBoard.on_tick``).

    """

    def __init__(self, node, deadline):
        self._name = node.get_fully_qualified_name().lstrip('/')
        qos = safety_qos(deadline)
        self.min_distance = node.create_publisher(Float64, '~/min_distance', qos)
        self.safety = node.create_publisher(Range, '~/safety', qos)
        self.safety_detail = node.create_publisher(DiagnosticArray, '~/safety_detail', qos)
        self.speed_scaling = node.create_publisher(Float64, '~/speed_scaling', qos)
        self.diagnostics = node.create_publisher(DiagnosticArray, '/diagnostics', OUTPUT_QOS)

    def publish(self, aggregate, max_range):
        """Publish one aggregate on every safety output, under one header."""
        header = header_of(aggregate)
        minimum = aggregate.minimum
        self.min_distance.publish(Float64(data=minimum))
        self.safety.publish(Range(header=header, radiation_type=Range.INFRARED,
                                  field_of_view=0.0, min_range=-math.inf,
                                  max_range=max_range, range=minimum))
        self.speed_scaling.publish(Float64(data=aggregate.factor))
        values = _values(min_distance=repr(minimum), link=aggregate.link,
                         obstacle=aggregate.obstacle, ready=str(aggregate.ready).lower(),
                         frame_id=aggregate.frame_id, speed_scaling=repr(aggregate.factor),
                         max_distance=repr(max_range), shard=aggregate.shard)
        self.safety_detail.publish(DiagnosticArray(header=header, status=[DiagnosticStatus(
            level=level_of(minimum), name='%s: safety' % self._name, message=aggregate.cause,
            hardware_id=HARDWARE_ID, values=values)]))

    def publish_diagnostics(self, board, steady_now, stamp):
        """Publish the aggregate entry and one entry per shard, stamped ``stamp`` (ROS now)."""
        aggregate = board.aggregate(steady_now)
        statuses = [aggregate_status(self._name, aggregate, board.deadline)]
        statuses += [shard_status(self._name, watch, steady_now)
                     for watch in board.watches.values()]
        message = DiagnosticArray(status=statuses)
        message.header.stamp = stamp
        self.diagnostics.publish(message)
        for watch in board.watches.values():
            watch.arrival_ages.restart()


def aggregate_status(node_name, aggregate, deadline):
    """Return the ``<aggregator>: aggregate`` entry: ERROR while any shard is silent/unknown."""
    level = level_of(aggregate.minimum) if aggregate.ready else ERROR
    message = aggregate.cause
    if len(aggregate.frames) > 1:
        level = max(level, WARN)
        message += '; shards stamp different frames: %s' % ', '.join(aggregate.frames)
    return DiagnosticStatus(
        level=level, name='%s: aggregate' % node_name, message=message,
        hardware_id=HARDWARE_ID, values=_values(
            min_distance=repr(aggregate.minimum), speed_scaling=repr(aggregate.factor),
            shard=aggregate.shard, silent=' '.join(aggregate.silent),
            unknown=' '.join(aggregate.unknown), frames=' '.join(aggregate.frames),
            deadline_s=deadline, instance=INSTANCE))


def shard_status(node_name, watch, steady_now):
    """
    Return one shard's entry: heard (OK), silent or unknown (ERROR), and why.

    Its values include how old the shard's summaries arrived since the last entry
    (``arrival_age_ms_mean`` and ``_max``: ROS time at arrival minus the stamp), what the
    aggregator's ``deadline`` must cover.
    """
    silence = watch.silence(steady_now)
    summary = watch.summary
    if silence is not None:
        level, message = ERROR, 'silent: %s' % silence
    elif summary.unknown:
        level, message = ERROR, 'unknown: %s' % summary.cause
    else:
        level, message = level_of(summary.minimum), summary.cause
    if watch.incompatible and silence is None:
        level = max(level, WARN)
        message += '; incompatible QoS offered by another publisher: %s' % watch.incompatible
    age = math.inf if watch.received is None else steady_now - watch.received
    ages = watch.arrival_ages
    mean = ages.mean()
    return DiagnosticStatus(
        level=level, name='%s: shard %s' % (node_name, watch.name), message=message,
        hardware_id=HARDWARE_ID, values=_values(
            received_age_s='never' if watch.received is None else '%.3f' % age,
            arrival_age_ms_mean='' if mean is None else '%.2f' % (mean * 1e3),
            arrival_age_ms_max='' if mean is None else '%.2f' % (ages.largest * 1e3),
            messages=watch.messages, unreadable=watch.unreadable,
            deadlines_missed=watch.deadlines_missed, alive=str(watch.alive).lower(),
            incompatible_qos=watch.incompatible,
            min_distance='' if summary is None else repr(summary.minimum),
            speed_scaling='' if summary is None else repr(summary.factor),
            frame_id='' if summary is None else summary.frame_id))
