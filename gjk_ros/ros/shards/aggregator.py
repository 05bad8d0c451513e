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
The ``gjk_aggregator`` node: the whole robot's fail-safe minimum from its shards' summaries.

Per shard (a ``gjk_distance`` node named in ``shards``) it subscribes to ``<shard>/safety_detail``
(the stamped summary: float64 minimum, speed scaling, readiness, and ``max_distance``, the range
limit of ``~/safety``) with the QoS deadline and liveliness lease ``deadline`` and their event
callbacks. It publishes ``~/min_distance``, ``~/safety``, ``~/safety_detail`` and
``~/speed_scaling`` on a summary that is bad news or completes a round of the shards, and from a
steady-clock watchdog (``board.py``), and ``/diagnostics`` every second (``outputs.py``). One
``SingleThreadedExecutor``: every callback is a few dictionary updates.

Example::

    gjk_aggregator --ros-args -p shards:="['/arm/gjk_distance', '/hand/gjk_distance']"
"""

import sys

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros.qos import safety_qos
from gjk_ros.ros.shards.board import ShardBoard
from gjk_ros.ros.shards.outputs import AggregatorOutputs
from gjk_ros.ros.shards.settings import PARAMETERS, resolved, settings_from
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter

__all__ = ['Aggregator', 'main', 'NODE_NAME']

NODE_NAME = 'gjk_aggregator'
DIAGNOSTICS_PERIOD = 1.0
# The watchdog runs five times per deadline: a silence is published at most a fifth of the
# deadline after the steady clock sees it.
WATCHDOG_FRACTION = 0.2

_TYPES = {'double': Parameter.Type.DOUBLE, 'string_array': Parameter.Type.STRING_ARRAY}
_KINDS = {'double': 'double, written with a decimal point (0.5, 1.0)',
          'string_array': "list of strings (['/ns/gjk_distance'])"}


class Aggregator(Node):
    """
    Aggregate the shards named by the ``shards`` parameter (module docstring).

    Raises
    ------
    ValueError
        When a parameter is refused (``settings.settings_from``), naming it.

    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.settings = settings_from(self._declare_parameters())
        deadline = self.settings.deadline
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.shard_names = resolved(self.settings.shards, self.get_namespace())
        self.board = ShardBoard(self.shard_names, deadline)
        self.outputs = AggregatorOutputs(self, deadline)
        requested = safety_qos(deadline)
        for name in self.shard_names:
            self._subscribe(name, requested)
        self.create_timer(deadline * WATCHDOG_FRACTION, self._on_watchdog, clock=self._steady)
        self.create_timer(DIAGNOSTICS_PERIOD, self._on_diagnostics, clock=self._steady)
        self.get_logger().info('aggregating %d shard(s) with a %g s deadline: %s'
                               % (len(self.shard_names), deadline,
                                  ', '.join(self.shard_names)))

    def _declare_parameters(self):
        """Declare read-only parameters with descriptors; return their values (None: unset)."""
        values = {}
        for spec in PARAMETERS:
            descriptor = ParameterDescriptor(description=spec.description,
                                             type=_TYPES[spec.kind].value, read_only=True)
            if spec.kind == 'double':
                descriptor.floating_point_range = [FloatingPointRange(
                    from_value=spec.low, to_value=spec.high, step=0.0)]
            # A required list has no default: declared by type, it stays unset until given.
            default = spec.default if spec.default != [] else _TYPES[spec.kind]
            try:
                self.declare_parameter(spec.name, default, descriptor)
                values[spec.name] = self.get_parameter(spec.name).value
            except ParameterUninitializedException:
                values[spec.name] = []
            except (InvalidParameterTypeException, InvalidParameterValueException):
                raise ValueError('parameter %s must be a %s' % (spec.name, _KINDS[spec.kind])) \
                    from None
        return values

    def _subscribe(self, name, qos):
        watch = self.board.watches[name]
        callbacks = SubscriptionEventCallbacks(
            deadline=lambda event: self._on_event(watch.on_deadline_missed, event.total_count),
            liveliness=lambda event: self._on_event(watch.on_liveliness, event.alive_count),
            incompatible_qos=lambda event: self._on_event(
                watch.on_incompatible, _policy_name(event.last_policy_kind)))
        self.create_subscription(DiagnosticArray, name + '/safety_detail',
                                 lambda message: self._on_summary(name, message), qos,
                                 event_callbacks=callbacks)

    def _now(self):
        return self._steady.now().nanoseconds * 1e-9

    def _publish(self, aggregate):
        if aggregate is not None:
            self.outputs.publish(aggregate, self.board.max_range())

    def _on_summary(self, name, message):
        self._publish(self.board.on_summary(name, message, self._now(),
                                            self.get_clock().now().nanoseconds))

    def _on_event(self, handler, value):
        """Take a middleware event about a shard; publish if a silence changed."""
        handler(value)
        self._publish(self.board.on_tick(self._now()))

    def _on_watchdog(self):
        self._publish(self.board.on_tick(self._now()))

    def _on_diagnostics(self):
        self.outputs.publish_diagnostics(self.board, self._now(),
                                         self.get_clock().now().to_msg())


def _policy_name(kind):
    """Return a QoS policy kind's name ('DEADLINE', ...), whatever rclpy hands over."""
    return getattr(kind, 'name', str(kind))


def main(args=None):
    """Run the aggregator until Ctrl-C, SIGTERM or shutdown; return the process exit code."""
    rclpy.init(args=args)
    node, executor = None, None
    try:
        try:
            node = Aggregator()
        except ValueError as error:
            rclpy.logging.get_logger(NODE_NAME).fatal('bad parameter: %s' % error)
            return 1
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for step in (lambda: executor.shutdown(timeout_sec=1.0), lambda: node.destroy_node(),
                     rclpy.try_shutdown):
            try:
                step()
            except Exception:  # noqa: B902 -- a half-built node or a shut-down context
                pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
