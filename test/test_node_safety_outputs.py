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
The stamped safety outputs through the real node.

``~/safety`` (sensor_msgs/Range) and ``~/safety_detail`` (diagnostic_msgs/DiagnosticArray) carry
the fail-safe minimum with the stamp of the oldest datum it rests on and the pair (or missing
input) behind it; the safety outputs offer a deadline and a liveliness lease that a consumer
can request, so that a frozen node (SIGSTOP) is detected by the middleware alone.
"""

import math
import os
import signal
import threading

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros import PairStatus
from gjk_ros.ros.listener import DistanceListener
from gjk_ros.ros.qos import safety_period, safety_qos
from node_harness import (box_urdf, find_record, marker, NodeProcess, Scene, STARTUP_TIMEOUT,
                          TIMEOUT, wait_until)
import pytest
from rclpy.event_handler import SubscriptionEventCallbacks
from sensor_msgs.msg import Range
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros

RATE_HZ = 20.0
URDF = box_urdf('safebot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
PARAMETERS = {'rate_hz': RATE_HZ, 'obstacle_timeout': 1.0, 'max_distance': 5.0}


def start(scene, node):
    scene.send_static_tf('world', 'arm')
    scene.send_urdf(URDF)
    scene.wait_for_subscribers('obstacles', node_process=node)
    scene.send_markers([marker('near', 0, xyz=(0.5, 0.0, 0.0))])


def test_summary_names_the_pair_and_is_stamped_with_the_oldest_datum(ros_env, tmp_path):
    with NodeProcess(ros_env, tmp_path, PARAMETERS) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        prefix = '/gjk_distance/'
        scene.subscribe('safety', Range, prefix + 'safety')
        scene.subscribe('detail', DiagnosticArray, prefix + 'safety_detail')
        summaries = []
        DistanceListener(scene.node, lambda records, header: None, on_summary=summaries.append)
        start(scene, node)
        scene.wait_for_records(lambda records: find_record(records, 'arm', 'near/0') is not None
                               and find_record(records, 'arm', 'near/0').status ==
                               PairStatus.VALID, STARTUP_TIMEOUT, node_process=node)
        wait_until(lambda: scene.message('safety') is not None and
                   math.isfinite(scene.message('safety').range), what='a measured summary')
        safety, detail = scene.message('safety'), scene.message('detail')
        assert safety.header.frame_id == 'world'
        status = detail.status[0]
        assert status.name == 'gjk_distance: safety'
        assert 'closest: arm to near/0' in status.message
        values = {item.key: item.value for item in status.values}
        assert values['link'] == 'arm' and values['obstacle'] == 'near/0'
        assert float(values['min_distance']) == pytest.approx(safety.range, abs=1e-6)
        assert float(values['max_distance']) == safety.max_range  # the aggregator reads it
        # The markers' source is the only ageing input (static TF): the stamp is its last
        # message, never later than the receive, and the records carry the same age.
        cloud_stamp = scene.message('distances').header.stamp
        assert (cloud_stamp.sec, cloud_stamp.nanosec) != (0, 0)
        record = find_record(scene.records(), 'arm', 'near/0')
        assert 0.0 <= record.age < 5.0 and record.ready
        # The listener joins both halves of a cycle into one summary.
        wait_until(lambda: summaries and summaries[-1].link == 'arm', what='a joined summary')
        summary = summaries[-1]
        assert summary.obstacle == 'near/0' and summary.ready and summary.frame_id == 'world'
        assert summary.minimum == pytest.approx(record.distance, abs=1e-9)
        assert 0.0 <= summary.age(scene.node) < 5.0
        # The source dies: the summary goes -inf, names the pair and keeps an old stamp.
        scene.forget_markers(namespace='near')
        wait_until(lambda: scene.message('safety').range == -math.inf,
                   what='-inf when the source is silent', node_process=node)
        wait_until(lambda: 'STALE' in scene.message('detail').status[0].message,
                   what='the stale pair named')
        stale = scene.message('safety').header.stamp
        assert (stale.sec, stale.nanosec) <= (cloud_stamp.sec + 5, cloud_stamp.nanosec)
        assert scene.message('detail').status[0].level == b'\x02'


class QosConsumer:
    """A subscriber requesting the deadline and lease the node offers, counting events."""

    def __init__(self, scene, topic, message_type, period):
        self.received = 0
        self.deadline_missed = 0
        self.not_alive = 0
        self.incompatible = 0
        self._lock = threading.Lock()
        callbacks = SubscriptionEventCallbacks(
            deadline=self._on_deadline, liveliness=self._on_liveliness,
            incompatible_qos=self._on_incompatible)
        scene.node.create_subscription(message_type, topic, self._on_message,
                                       safety_qos(period), event_callbacks=callbacks)

    def _on_message(self, message):
        with self._lock:
            self.received += 1

    def _on_deadline(self, event):
        with self._lock:
            self.deadline_missed = event.total_count

    def _on_liveliness(self, event):
        with self._lock:
            self.not_alive = event.not_alive_count

    def _on_incompatible(self, event):
        with self._lock:
            self.incompatible += 1


def test_a_frozen_node_is_detected_by_deadline_and_liveliness(ros_env, tmp_path):
    period = safety_period(RATE_HZ)
    with NodeProcess(ros_env, tmp_path, PARAMETERS) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        consumers = [QosConsumer(scene, '/gjk_distance/min_distance', Float64, period),
                     QosConsumer(scene, '/gjk_distance/safety', Range, period)]
        start(scene, node)
        wait_until(lambda: all(consumer.received >= 10 for consumer in consumers),
                   STARTUP_TIMEOUT, 'messages on the QoS-requesting subscriptions',
                   node_process=node)
        assert not any(consumer.incompatible for consumer in consumers)
        os.kill(node.process.pid, signal.SIGSTOP)
        try:
            # Detected by the middleware alone, within a few periods of the freeze.
            wait_until(lambda: all(consumer.deadline_missed >= 1 for consumer in consumers),
                       4 * period + TIMEOUT / 5, 'a missed deadline on every consumer')
            wait_until(lambda: all(consumer.not_alive >= 1 for consumer in consumers),
                       TIMEOUT, 'the node no longer alive on every consumer')
        finally:
            os.kill(node.process.pid, signal.SIGCONT)
