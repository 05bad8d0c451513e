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
Consume a ``gjk_distance`` node's outputs from any rclpy node.

``DistanceListener`` makes the subscriptions with the QoS the node publishes with and calls
back with named records::

    listener = DistanceListener(node, on_distances, '/gjk_distance')

    def on_distances(records, header):
        ...  # list of DistanceRecord, names filled from the latest ~/names

It is the subscriber side of the node's topic table: ``~/names`` is latched (reliable,
transient local, depth 1, as robot_state_publisher's ``robot_description``), so a listener
that starts late still gets the names; ``~/distances``, ``~/min_distance`` and the safety
summary are reliable, volatile, depth 10 (a listener requests no deadline; see
``gjk_ros.ros.qos.safety_qos`` to request one).

``on_summary`` receives the stamped safety summary: ``~/safety`` (sensor_msgs/Range, the
fail-safe minimum) joined with ``~/safety_detail`` of the same cycle (which pair, or which input
is missing)::

    def on_summary(summary):
        if summary.minimum < STOP_DISTANCE or summary.age(node) > 0.2:
            stop()  # -inf (unknown) is below every threshold
"""

from dataclasses import dataclass
import math

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros.qos import LATCHED_QOS, OUTPUT_QOS
from gjk_ros.ros.records import names_from_json, read_distances
from sensor_msgs.msg import PointCloud2, Range
from std_msgs.msg import Float64, String

__all__ = ['DEFAULT_SOURCE', 'DistanceListener', 'NAMES_QOS', 'SafetySummary', 'STREAM_QOS']

DEFAULT_SOURCE = '/gjk_distance'

# The node's own profiles: ~/names is latched, the outputs are volatile.
NAMES_QOS = LATCHED_QOS
STREAM_QOS = OUTPUT_QOS


@dataclass(frozen=True)
class SafetySummary:
    """
    One cycle's fail-safe minimum, as ``~/safety`` and ``~/safety_detail`` carry it.

    Attributes
    ----------
    minimum : float
        Metres; -inf when anything in scope is unknown (treat as contact), +inf only when
        nothing is in scope and the node allows it.
    stamp_ns : int
        The oldest datum the minimum rests on (ROS time, ns); 0 when no datum is known.
    frame_id : str
        The node's ``fixed_frame``.
    link, obstacle : str
        The pair behind the minimum ('' when it is not a pair).
    cause : str
        'closest: <link> to <obstacle> (VALID)', 'not ready: <reason>', or the pair that is
        not measured.
    ready : bool
        Whether the node could vouch for its whole scope.

    """

    minimum: float
    stamp_ns: int
    frame_id: str
    link: str
    obstacle: str
    cause: str
    ready: bool

    def age(self, node):
        """Return seconds from the oldest datum to ``node``'s clock now (inf without one)."""
        if not self.stamp_ns:
            return math.inf
        return (node.get_clock().now().nanoseconds - self.stamp_ns) * 1e-9


class DistanceListener:
    """
    Subscribe to a ``gjk_distance`` node and call back with named records.

    Parameters
    ----------
    node : rclpy.node.Node
        The node that owns the subscriptions (spin it as usual).
    callback : callable(list of DistanceRecord, std_msgs.msg.Header)
        Called for every ``~/distances`` message once a ``~/names`` message has arrived
        (earlier clouds are dropped: their records could not be named), in order. The node
        publishes a new body's name before the first cloud that has it, but the two topics
        may be delivered in either order: a cloud with an id the names do not know is held
        until the next names message (then named) or the next cloud (then delivered as is,
        that record's ``link`` or ``obstacle`` None: a body gone since, or names lost).
    source : str
        Fully qualified name of the distance node, which prefixes its topics:
        ``'/gjk_distance'``, or ``'/left/gjk_distance'`` for a node launched with
        ``namespace:=left``. A relative name is resolved in ``node``'s namespace.
    on_min_distance : callable(float), optional
        Also subscribe to ``~/min_distance`` (fail-safe: -inf when anything is unknown).
    on_summary : callable(SafetySummary), optional
        Also subscribe to the stamped safety summary (``~/safety`` with ``~/safety_detail``).

    Attributes
    ----------
    names : tuple of (dict, dict) or None
        The latest ``~/names``: link and obstacle names by id.
    dropped : int
        Clouds dropped because no names had arrived yet.
    unnamed : int
        Clouds delivered with a record that no names message named.

    """

    def __init__(self, node, callback, source=DEFAULT_SOURCE, on_min_distance=None,
                 on_summary=None):
        self.names = None
        self.dropped = 0
        self.unnamed = 0
        self._held = None
        self._logger = node.get_logger()
        self._callback = callback
        self._on_min_distance = on_min_distance
        prefix = source.rstrip('/')
        self.subscriptions = [
            node.create_subscription(String, f'{prefix}/names', self._on_names, NAMES_QOS),
            node.create_subscription(PointCloud2, f'{prefix}/distances', self._on_distances,
                                     STREAM_QOS),
        ]
        if on_min_distance is not None:
            self.subscriptions.append(node.create_subscription(
                Float64, f'{prefix}/min_distance', self._on_min, STREAM_QOS))
        self._on_summary = on_summary
        self._halves = {}
        if on_summary is not None:
            self.subscriptions += [
                node.create_subscription(Range, f'{prefix}/safety', self._on_half,
                                         STREAM_QOS),
                node.create_subscription(DiagnosticArray, f'{prefix}/safety_detail',
                                         self._on_half, STREAM_QOS)]

    def _on_names(self, message):
        try:
            self.names = names_from_json(message.data)
        except ValueError as error:
            self._logger.warning(f'ignoring a malformed ~/names message: {error}',
                                 throttle_duration_sec=5.0)
            return
        if self._held is not None:
            self._deliver(self._held, hold=False)

    def _on_distances(self, message):
        if self.names is None:
            self.dropped += 1
            return
        if self._held is not None:
            self._deliver(self._held, hold=False)
        self._deliver(message, hold=True)

    def _deliver(self, message, hold):
        """Call back with the records of a cloud, or hold it if some id is not named yet."""
        self._held = None
        try:
            records = read_distances(message, self.names)
        except ValueError as error:
            self._logger.warning(f'ignoring a ~/distances message: {error}',
                                 throttle_duration_sec=5.0)
            return
        unnamed = any(record.link is None or record.obstacle is None for record in records)
        if unnamed and hold:
            self._held = message
            return
        self.unnamed += unnamed
        self._callback(records, message.header)

    def _on_min(self, message):
        self._on_min_distance(message.data)

    def _on_half(self, message):
        """Join ~/safety and ~/safety_detail of one cycle (same stamp), in either order."""
        stamp = (message.header.stamp.sec, message.header.stamp.nanosec)
        halves = self._halves.setdefault(stamp, {})
        halves[type(message).__name__] = message
        if len(halves) < 2:
            if len(self._halves) > 4:  # a lost half: forget the oldest cycles
                for old in sorted(self._halves)[:-4]:
                    del self._halves[old]
            return
        del self._halves[stamp]
        status = halves['DiagnosticArray'].status[0]
        values = {item.key: item.value for item in status.values}
        range_message = halves['Range']
        # The detail carries the float64 minimum; Range.range is float32.
        self._on_summary(SafetySummary(
            minimum=float(values.get('min_distance', range_message.range)),
            stamp_ns=stamp[0] * 1_000_000_000 + stamp[1],
            frame_id=range_message.header.frame_id, link=values.get('link', ''),
            obstacle=values.get('obstacle', ''), cause=status.message,
            ready=values.get('ready') == 'true'))

    def destroy(self, node):
        """Destroy the subscriptions (``node`` is the one given to the constructor)."""
        for subscription in self.subscriptions:
            node.destroy_subscription(subscription)
        self.subscriptions = []
