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
``DistanceListener``: the README's consumer example against a real node, and its QoS/naming.

The README example is extracted from README.md and run verbatim as its own process, against a
``gjk_distance_node`` process started by the test on the test's own ROS domain.
"""

import json
import math
import pathlib
import re
import subprocess
import sys
import threading

from node_harness import (box_urdf, LATCHED_QOS, marker, NodeProcess, Scene, SpinThread,
                          STARTUP_TIMEOUT, wait_until)
import pytest

from gjk_ros.ros.listener import DistanceListener  # noqa: I100
from gjk_ros.ros.outputs.publishers import make_cloud
from gjk_ros.ros.records import new_records, PairStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Float64, Header, String

pytestmark = pytest.mark.ros

README = pathlib.Path(__file__).resolve().parent.parent / 'README.md'
# The node's output QoS (node.py): ~/distances and ~/min_distance reliable, volatile, depth 10.
STREAM_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)


def readme_example():
    """Return the Python block of README.md that uses DistanceListener."""
    blocks = re.findall(r'```python\n(.*?)```', README.read_text(encoding='utf-8'), re.S)
    (example,) = [block for block in blocks if 'DistanceListener(' in block]
    return example


class OutputLines:
    """The stdout lines of a child process, collected by a thread."""

    def __init__(self, process):
        self.lines = []
        self._thread = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line.rstrip('\n'))

    def text(self):
        return '\n'.join(self.lines)


@pytest.mark.slow
def test_readme_example_prints_a_close_pair_of_a_real_node(ros_env, ros_domain_id, tmp_path):
    script = tmp_path / 'readme_example.py'
    script.write_text(readme_example())
    with NodeProcess(ros_env, tmp_path / 'node', {'rate_hz': 20.0}) as node, \
            Scene(ros_domain_id) as scene:
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(box_urdf('readmebot', {'arm': [('box', (0.2, 0.2, 0.2), (0, 0, 0))]}))
        scene.wait_for_subscribers('obstacles', node_process=node)
        # A 0.1 m cube whose face is 3 cm from the arm's.
        scene.send_markers([marker('readme', 0, xyz=(0.18, 0.0, 0.0))])
        scene.wait_for_records(lambda records: records and records[0].distance > 0.0,
                               STARTUP_TIMEOUT, 'the first distance', node_process=node)
        example = subprocess.Popen([sys.executable, str(script)], env=ros_env, cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            output = OutputLines(example)
            wait_until(lambda: 'arm is 0.030 m from readme/0' in output.lines and
                       'slow down: closest: arm to readme/0 (VALID)' in output.lines, what=(
                           'the README example to print the pair and the summary (output so '
                           'far: %r)' % output.lines), node_process=node)
        finally:
            example.kill()
            example.wait()


@pytest.fixture
def graph(rclpy_context):
    """Yield a node playing the distance node and a consumer node, spun in a thread."""
    executor = SingleThreadedExecutor(context=rclpy_context)
    nodes = [Node(name, namespace=namespace, context=rclpy_context)
             for name, namespace in (('gjk_distance', '/left'), ('consumer', '/'))]
    for node in nodes:
        executor.add_node(node)
    spinner = SpinThread(executor)
    try:
        yield nodes
    finally:
        spinner.stop()
        for node in nodes:
            node.destroy_node()


def records(link_id, obstacle_id, distance):
    result = new_records(1)
    result['link_id'], result['obstacle_id'], result['distance'] = link_id, obstacle_id, distance
    result['status'] = PairStatus.VALID
    return result


def test_listener_names_records_with_the_latest_names(graph):
    publisher_node, consumer = graph
    names_pub = publisher_node.create_publisher(String, '~/names', LATCHED_QOS)
    cloud_pub = publisher_node.create_publisher(PointCloud2, '~/distances', STREAM_QOS)
    min_pub = publisher_node.create_publisher(Float64, '~/min_distance', STREAM_QOS)
    # Published before the listener exists: only a transient local subscription gets it.
    names_pub.publish(String(data=json.dumps({'links': {'4': 'arm'},
                                              'obstacles': {'9': 'cup/0'}})))
    received, minimum = [], []
    listener = DistanceListener(consumer, lambda recs, header: received.append((recs, header)),
                                '/left/gjk_distance', on_min_distance=minimum.append)
    wait_until(lambda: listener.names is not None, what='the latched names')
    assert listener.names == ({4: 'arm'}, {9: 'cup/0'})
    wait_until(lambda: cloud_pub.get_subscription_count() and min_pub.get_subscription_count(),
               what='the listener subscriptions')

    cloud_pub.publish(make_cloud(records(4, 9, 0.25), Header(frame_id='world')))
    min_pub.publish(Float64(data=-math.inf))
    wait_until(lambda: received and minimum, what='a cloud and a min_distance')
    (record,), header = received[0]
    assert (record.link, record.obstacle, record.distance) == ('arm', 'cup/0', 0.25)
    assert header.frame_id == 'world' and minimum == [-math.inf]

    # A cloud naming a body the names do not know yet (its names message delivered after it)
    # is held, then named when the names arrive.
    cloud_pub.publish(make_cloud(records(5, 9, 0.5), Header(frame_id='second')))
    wait_until(lambda: listener._held is not None, what='the second cloud held')
    assert len(received) == 1
    names_pub.publish(String(data=json.dumps({'links': {'5': 'hand'},
                                              'obstacles': {'9': 'cup/0'}})))
    wait_until(lambda: len(received) == 2, what='the held cloud, named')
    assert received[1][0][0].link == 'hand' and received[1][1].frame_id == 'second'
    # An id no names message ever names: delivered as is when the next cloud comes.
    cloud_pub.publish(make_cloud(records(7, 9, 0.7), Header(frame_id='third')))
    wait_until(lambda: listener._held is not None, what='the third cloud held')
    cloud_pub.publish(make_cloud(records(5, 9, 0.6), Header(frame_id='fourth')))
    wait_until(lambda: len(received) == 4, what='the third and fourth clouds')
    assert [header.frame_id for _, header in received[2:]] == ['third', 'fourth']
    assert received[2][0][0].link is None and received[2][0][0].link_id == 7
    assert received[3][0][0].link == 'hand' and listener.unnamed == 1
    listener.destroy(consumer)
    wait_until(lambda: cloud_pub.get_subscription_count() == 0, what='the unsubscription')


def test_clouds_before_the_names_are_dropped(graph):
    publisher_node, consumer = graph
    cloud_pub = publisher_node.create_publisher(PointCloud2, '~/distances', STREAM_QOS)
    names_pub = publisher_node.create_publisher(String, '~/names', LATCHED_QOS)
    received = []
    listener = DistanceListener(consumer, lambda recs, header: received.append(recs),
                                '/left/gjk_distance/')
    wait_until(lambda: cloud_pub.get_subscription_count() and names_pub.get_subscription_count(),
               what='the listener subscriptions')
    cloud_pub.publish(make_cloud(records(0, 0, 0.1), Header()))
    wait_until(lambda: listener.dropped == 1, what='the cloud without names')
    names_pub.publish(String(data=json.dumps({'links': ['arm'], 'obstacles': ['box/0']})))
    wait_until(lambda: listener.names is not None, what='the names')
    cloud_pub.publish(make_cloud(records(0, 0, 0.2), Header()))
    wait_until(lambda: received, what='the cloud after the names')
    assert [recs[0].distance for recs in received] == [0.2]
    assert received[0][0].link == 'arm'  # the old list form of ~/names is read too
