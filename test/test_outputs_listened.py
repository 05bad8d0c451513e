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
Outputs packed only for someone listening, on a real rclpy graph in this process.

The record clouds and ``~/safety_detail`` cost their packing only while subscribed; the
minimum, ``~/safety`` and the speed scaling are published every cycle regardless.
"""

import math

from gjk_ros.ros.compute.bodies import LINK, NameRegistry, OBSTACLE
from gjk_ros.ros.outputs import publishers
from gjk_ros.ros.outputs.publishers import Outputs
from gjk_ros.ros.params import Config
from gjk_ros.ros.qos import OUTPUT_QOS
from gjk_ros.ros.records import new_records, PairStatus
import numpy
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Float64, Header
from test_node_latest_wins import spin_until


@pytest.fixture
def graph(rclpy_context):
    node = rclpy.create_node('outputs_listened_test', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    outputs = Outputs(node, 30.0)
    outputs.configure(Config())
    try:
        yield node, executor, outputs
    finally:
        outputs.close()
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()


def _records():
    names = NameRegistry()
    records = new_records(2)
    records['link_id'] = names.id_of(LINK, 'arm')[0]
    records['obstacle_id'] = [names.id_of(OBSTACLE, 'a')[0], names.id_of(OBSTACLE, 'b')[0]]
    records['status'] = PairStatus.VALID
    records['distance'] = [0.4, 0.25]
    return records, names


def test_clouds_are_packed_only_while_someone_listens(graph, monkeypatch):
    node, executor, outputs = graph
    packed = []
    real = publishers.make_cloud
    monkeypatch.setattr(publishers, 'make_cloud', lambda *a: packed.append(1) or real(*a))
    records, names = _records()
    minimums, clouds = [], []
    node.create_subscription(Float64, '~/min_distance', lambda m: minimums.append(m.data),
                             OUTPUT_QOS)

    def publish():
        outputs.publish(records, numpy.zeros(2, bool), [], Header(frame_id='world'), names, {})

    spin_until(executor, lambda: outputs.min_distance.get_subscription_count(), 'a reader')
    publish()
    spin_until(executor, lambda: minimums, 'the minimum')
    assert minimums == [pytest.approx(0.25)] and packed == []
    node.create_subscription(PointCloud2, '~/distances', clouds.append, OUTPUT_QOS)
    spin_until(executor, lambda: outputs.distances.get_subscription_count(), 'a cloud reader')
    publish()
    spin_until(executor, lambda: clouds, 'the cloud')
    assert len(packed) == 1 and clouds[0].width == 2
    assert minimums[-1] == pytest.approx(0.25) and not math.isinf(minimums[-1])
