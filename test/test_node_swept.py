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
Nothing missed between cycles: the node's swept distances, in this process.

A hand passes through a 5 mm plate between two TF samples, both of them 17.5 mm clear: with
``swept_distances`` the cycle that covers it reports contact (the records' swept bound and the
fail-safe minimum), without it the samples alone stand.
"""

import math
import time

from component_fakes import Recorder
import pytest
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
import yaml

from geometry_msgs.msg import TransformStamped  # noqa: I100
from gjk_ros.ros.node import DistanceNode
from gjk_ros.ros.outputs.hull_markers import swept_segment
from gjk_ros.ros.records import PairStatus
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker

HAND = yaml.safe_dump([{'name': 'hand', 'frame_id': 'hand', 'type': 'box',
                        'size': [0.02, 0.02, 0.02]}])
PLATE = yaml.safe_dump([{'name': 'plate', 'frame_id': 'world', 'type': 'box',
                         'size': [0.6, 0.6, 0.005], 'xyz': [0.0, 0.0, 0.0]}])
BUILD_S = 60.0


@pytest.fixture
def node(rclpy_context):
    parameters = [Parameter('link_geometry', value=HAND),
                  Parameter('static_obstacles', value=PLATE),
                  Parameter('require_robot_description', value=False),
                  Parameter('tf_timeout', value=30.0), Parameter('rate_hz', value=1000.0),
                  Parameter('swept_distances', value=True)]
    node = DistanceNode(context=rclpy_context, parameter_overrides=parameters)
    node.cycle.outputs.markers = Recorder(listeners=0)
    try:
        yield node
    finally:
        node.close()
        node.destroy_node()


def _hand_at(node, z, stamp_ns):
    transform = TransformStamped()
    transform.header.frame_id, transform.child_frame_id = 'world', 'hand'
    transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(stamp_ns, 10 ** 9)
    transform.transform.translation.z = z
    transform.transform.rotation.w = 1.0
    node.cycle.frames.store(serialize_message(TFMessage(transforms=[transform])), False)
    node._run_cycle()
    records = node.cycle.last_records
    return records[0] if len(records) else None


def _built(node):
    deadline = time.monotonic() + BUILD_S
    while True:
        record = _hand_at(node, 0.03, node.get_clock().now().nanoseconds)
        if record is not None and record['status'] == PairStatus.VALID and \
                node.cycle.readiness.ready:
            return
        assert time.monotonic() < deadline, 'the hand and the plate were never built'
        time.sleep(0.01)


def test_a_hand_through_a_thin_plate_between_two_samples_reads_as_contact(node):
    _built(node)
    now = node.get_clock().now().nanoseconds
    above = _hand_at(node, 0.03, now)
    below = _hand_at(node, -0.03, now + 1_000_000)
    for sample in (above, below):
        assert sample['distance'] == pytest.approx(0.0175, abs=1e-9)
        assert sample['status'] == PairStatus.VALID
    assert below['swept_distance'] <= -0.0125 + 1e-9
    assert below['swept_fraction'] == pytest.approx(0.5, abs=0.05)
    # 60 mm down in 1 ms, leaving the plate above: it recedes at 60 m/s, no contact ahead.
    assert below['closing_speed'] == pytest.approx(-60.0, rel=1e-9)
    assert below['time_to_contact'] == math.inf
    from gjk_ros.ros.outputs.safety import min_distance
    assert min_distance(node.cycle.last_records, True, node.config.max_distance) < 0.0
    # ~/markers draws the witness pair at the swept minimum: the hand is in the plate there.
    marker = swept_segment(node.cycle.last_records, node.cycle.swept_witnesses,
                           Header(frame_id='world'), node.config.max_distance)
    assert marker.ns == 'swept_segment' and marker.action == Marker.ADD
    (link, obstacle) = [(point.x, point.y, point.z) for point in marker.points]
    assert abs(link[2]) <= 0.0125 + 1e-3 and abs(obstacle[2]) <= 0.0125 + 1e-3
    # Moving on clear of the plate: the next interval is apart again.
    after = _hand_at(node, -0.05, now + 2_000_000)
    assert after['swept_distance'] > 0.0 and after['distance'] > 0.0


def test_without_swept_distances_the_samples_alone_stand(node):
    _built(node)
    node.set_parameters([Parameter('swept_distances', value=False)])
    now = node.get_clock().now().nanoseconds
    _hand_at(node, 0.03, now)
    below = _hand_at(node, -0.03, now + 1_000_000)
    assert math.isnan(below['swept_distance']) and math.isnan(below['swept_fraction'])
    marker = swept_segment(node.cycle.last_records, node.cycle.swept_witnesses,
                           Header(frame_id='world'), node.config.max_distance)
    assert marker.ns == 'swept_segment' and marker.action == Marker.DELETE
    assert below['distance'] == pytest.approx(0.0175, abs=1e-9)
