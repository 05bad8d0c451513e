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
When the real ``scene_publisher`` process publishes: once a subscriber matches, and on request.

Subscribers in this process stand for the distance node and move_group (volatile, reliable,
depth 100, as theirs) and for a latched listener (transient-local). A subscriber that joins
later must not make the publisher send the files again to everyone: that would add back an
object another node removed since. The ``~/publish`` service is the barrier: the publisher
handles its requests in order, so once a requested copy has arrived, any copy sent before it
has too.
"""

import signal
import subprocess
import sys
import threading

from node_harness import node_environment, TIMEOUT, wait_until
import pytest

rclpy = pytest.importorskip('rclpy')
moveit_msgs = pytest.importorskip('moveit_msgs.msg')

from rclpy.executors import SingleThreadedExecutor  # noqa: E402, I100
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

TOPIC = '/scene_files_test'
SCENE = """
world:
  collision_objects:
    - id: crate
      header: {frame_id: world}
      primitives: [{type: box, dimensions: [0.2, 0.2, 0.2]}]
      primitive_poses: [{position: [0.5, 0, 0], orientation: [0, 0, 0, 1]}]
"""
VOLATILE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Listeners:
    """Subscriptions of this process, each counting the scenes it received."""

    def __init__(self, context):
        self.node = rclpy.node.Node('scene_listeners', context=context)
        self.received, self._lock = {}, threading.Lock()
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.client = self.node.create_client(Trigger, '/scene_publisher/publish')
        self._thread = threading.Thread(target=self.executor.spin, daemon=True)
        self._thread.start()

    def listen(self, name, qos):
        """Subscribe ``name``; return once it has matched the publisher."""
        self.received[name] = []

        def keep(message):
            with self._lock:
                self.received[name].append(message)
        subscription = self.node.create_subscription(moveit_msgs.PlanningScene, TOPIC, keep,
                                                     qos)
        wait_until(lambda: subscription.get_publisher_count() > 0, TIMEOUT,
                   '%s matched to the scene publisher' % name)

    def count(self, name):
        with self._lock:
            return len(self.received[name])

    def request(self):
        """Call ``~/publish``; return its answer."""
        assert self.client.wait_for_service(timeout_sec=TIMEOUT)
        future = self.client.call_async(Trigger.Request())
        wait_until(future.done, TIMEOUT, 'the answer of ~/publish')
        return future.result()

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture
def publisher(ros_env, tmp_path, request):
    """Start the scene_publisher process on one file; stop it after the test."""
    path = tmp_path / 'crate.yaml'
    path.write_text(SCENE)
    log_path = tmp_path / 'scene_publisher.log'
    command = [sys.executable, '-m', 'gjk_ros.ros.scene_publisher', '--ros-args',
               '-p', 'scene_files:=["%s"]' % path, '-p', 'topic:=%s' % TOPIC,
               '-p', 'republish_on_subscribe:=%s' % getattr(request, 'param', 'false')]
    with open(log_path, 'wb') as log:
        process = subprocess.Popen(command, env=node_environment(ros_env, tmp_path / 'log'),
                                   stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    try:
        yield process, log_path
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(TIMEOUT)


@pytest.fixture
def listeners(rclpy_context):
    made = Listeners(rclpy_context)
    try:
        yield made
    finally:
        made.close()


def test_a_late_subscriber_gets_no_copy_and_undoes_no_removal(publisher, listeners):
    process, log_path = publisher
    listeners.listen('node', VOLATILE)
    wait_until(lambda: listeners.count('node') == 1, TIMEOUT, 'the scene, once matched')
    scene = listeners.received['node'][0]
    assert scene.is_diff and scene.robot_state.is_diff
    assert [(o.id, o.operation) for o in scene.world.collision_objects] == [
        ('crate', moveit_msgs.CollisionObject.ADD)]
    # Another node removes the crate now (the publisher never hears of it). A subscriber
    # that joins later gets nothing on its own, so nothing adds the crate back.
    listeners.listen('move_group', VOLATILE)
    listeners.listen('latched', LATCHED)
    wait_until(lambda: listeners.count('latched') == 1, TIMEOUT,
               'the latched copy for a transient-local late joiner')
    # Two requests as barriers: a copy sent for the late joiners would be before them.
    for expected in (2, 3):
        answer = listeners.request()
        assert answer.success and '1 objects and 0 attached objects' in answer.message
        assert 'on request' in answer.message
        wait_until(lambda: listeners.count('node') == expected and
                   listeners.count('move_group') == expected - 1, TIMEOUT,
                   'the requested copy %d' % expected)
    assert (listeners.count('node'), listeners.count('move_group')) == (3, 2)
    assert process.poll() is None, log_path.read_text(errors='replace')
    log = log_path.read_text(errors='replace')
    assert log.count('once a subscriber matched') == 1 and log.count('on request') == 2


def test_nothing_is_published_before_a_subscriber_matches(publisher, listeners):
    process, log_path = publisher
    wait_until(lambda: listeners.client.service_is_ready() or process.poll() is not None,
               TIMEOUT, 'the scene publisher up')
    assert process.poll() is None, log_path.read_text(errors='replace')
    # Up, with nobody listening: nothing sent yet. The first (volatile) subscriber gets it.
    assert 'once a subscriber matched' not in log_path.read_text(errors='replace')
    listeners.listen('node', VOLATILE)
    wait_until(lambda: listeners.count('node') == 1, TIMEOUT, 'the scene, once matched')


@pytest.mark.parametrize('publisher', ['true'], indirect=True)
def test_republish_on_subscribe_sends_every_new_subscriber_the_scene(publisher, listeners):
    process, log_path = publisher
    listeners.listen('node', VOLATILE)
    wait_until(lambda: listeners.count('node') == 1, TIMEOUT, 'the scene, once matched')
    # Opted in: a restarted node gets the scene, and so does everyone else again.
    listeners.listen('restarted', VOLATILE)
    wait_until(lambda: listeners.count('restarted') == 1 and listeners.count('node') == 2,
               TIMEOUT, 'the scene again, for the new subscriber')
    assert 'republish_on_subscribe' in log_path.read_text(errors='replace')
