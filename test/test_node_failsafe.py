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
Fail-safe inputs: nothing missing, late or dead may read as "clear".

Each test starts the real node (one shared process where the parameters allow it) and checks
``~/min_distance``, the pair statuses, and that a healthy pair (``healthy/0``, a static
namespace) keeps being served while something else goes wrong.
"""

import math
import os
import threading
import time

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus, read_distances
from node_harness import (box_urdf, find_record, marker, matrix, NodeProcess, Scene,
                          session_domain_id, STARTUP_TIMEOUT, TIMEOUT, wait_until)
import pytest

pytestmark = pytest.mark.ros

HALF = 0.1
URDF = box_urdf('failbot', {'arm': [('box', (2 * HALF,) * 3, (0.0, 0.0, 0.0))]})
HEALTHY = 'healthy/0'
HEALTHY_CENTRE = (0.0, 0.6, 0.0)
OBSTACLE_TIMEOUT = 1.0
PARAMETERS = {'rate_hz': 20.0, 'tf_timeout': 0.5, 'obstacle_timeout': OBSTACLE_TIMEOUT,
              'static_obstacle_namespaces': ['healthy'], 'max_distance': 5.0,
              'robot_description_timeout': 1.0}


def arm_distance(shape, pose):
    """Exact signed distance between the arm (a 0.2 m cube at the origin) and a body."""
    return signed_distance(ConvexPolytope.box([HALF] * 3), matrix(), shape, pose).distance


def cube(centre, frame_quaternion=(0.0, 0.0, 0.0, 1.0)):
    return ConvexPolytope.box([0.05] * 3), matrix(centre, frame_quaternion)


def status_of(name, *statuses):
    def check(records):
        record = find_record(records, 'arm', name)
        healthy = find_record(records, 'arm', HEALTHY)
        return record is not None and record.status in statuses and \
            healthy is not None and healthy.status == PairStatus.VALID
    return check


def min_distance(scene):
    message = scene.message('min_distance')
    return None if message is None else message.data


def level(status):
    """Return a DiagnosticStatus level as an int (rclpy gives one byte)."""
    return ord(status.level) if isinstance(status.level, bytes) else int(status.level)


def inputs_entry(scene):
    for name, status in scene.diagnostic_statuses().items():
        if name.endswith(': inputs'):
            return status
    return None


def start_scene(scene, node, urdf=True):
    scene.send_static_tf('world', 'arm')
    if urdf:
        scene.send_urdf(URDF)
    scene.wait_for_subscribers('obstacles', node_process=node)
    scene.send_markers([marker('healthy', 0, xyz=HEALTHY_CENTRE)])


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('failsafe'), PARAMETERS) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        start_scene(scene, node)
        scene.wait_for_records(status_of(HEALTHY, PairStatus.VALID), STARTUP_TIMEOUT,
                               'the healthy pair', node_process=node)
        yield scene


@pytest.mark.parametrize('lifetime', [0.0, 0.5], ids=['no_lifetime', 'lifetime'])
def test_dead_source_is_stale_never_absent(scene, node, lifetime):
    """A source that stops publishing: STALE after obstacle_timeout, never gone, never +inf."""
    namespace = 'dead%d' % int(lifetime * 10)
    name = namespace + '/0'
    centre = (0.5, 0.0, 0.0)
    scene.send_markers([marker(namespace, 0, xyz=centre, lifetime=lifetime)])
    scene.wait_for_records(status_of(name, PairStatus.VALID), node_process=node)
    before = min_distance(scene)
    scene.start_history('distances')
    scene.start_history('min_distance')
    scene.forget_markers(namespace=namespace)  # the publisher dies
    records = scene.wait_for_records(status_of(name, PairStatus.STALE),
                                     what='%s to go STALE' % name, node_process=node)
    assert math.isnan(find_record(records, 'arm', name).distance)
    scene.wait_for_more('distances', 3)
    # Never absent, and ~/min_distance never grew above what it was while the source lived.
    for cloud in scene.history('distances'):
        assert find_record(read_distances(cloud, scene.message('names')), 'arm', name)
    assert all(message.data <= before for message in scene.history('min_distance'))
    wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf')
    wait_until(lambda: inputs_entry(scene) is not None and namespace in
               inputs_entry(scene).message, what='the silent source in /diagnostics')
    assert level(inputs_entry(scene)) >= 1
    # The source comes back: the pair is measured again.
    scene.send_markers([marker(namespace, 0, xyz=centre, lifetime=lifetime)])
    scene.wait_for_records(status_of(name, PairStatus.VALID), what='recovery',
                           node_process=node)
    scene.send_markers([marker(namespace, 0, action=marker(namespace, 0).DELETE)])


def test_live_source_may_let_a_marker_expire(scene, node):
    """Let a marker expire, as RViz does, while its source publishes other markers."""
    scene.send_markers([marker('alive', 0, xyz=(0.5, 0.0, 0.0), lifetime=0.3)], repeat=False)
    scene.send_markers([marker('alive', 1, xyz=(-0.5, 0.0, 0.0))])  # keeps 'alive' fresh
    scene.wait_for_records(lambda records: find_record(records, 'arm', 'alive/0') is None and
                           find_record(records, 'arm', 'alive/1') is not None,
                           what='alive/0 to expire while alive/1 stays', node_process=node)
    scene.send_markers([marker('alive', 1, action=marker('alive', 1).DELETE)])


def test_out_of_order_tf_never_overwrites_newer(scene, node):
    scene.send_markers([marker('slid', 0, frame_id='slider', frame_locked=True)])
    expected = arm_distance(*cube((0.6, 0.0, 0.0)))
    seen = []

    def newer_then_older():
        # Each round sends a fresh pair, so a loaded machine cannot let both go stale; every
        # cloud measured after a round must use the newer transform.
        newer = scene.now_ns()
        scene.send_tf_once('world', 'slider', (0.6, 0.0, 0.0), stamp_ns=newer)
        scene.send_tf_once('world', 'slider', (0.9, 0.0, 0.0), stamp_ns=newer - 200_000_000)
        record = find_record(scene.records() or [], 'arm', 'slid/0')
        if record is not None and record.status == PairStatus.VALID:
            seen.append(record.distance)
        return len(seen) >= 5
    wait_until(newer_then_older, what='slid/0 measured', period=0.05, node_process=node)
    assert seen == pytest.approx([expected] * len(seen), abs=1e-9)
    scene.send_markers([marker('slid', 0, action=marker('slid', 0).DELETE)])


@pytest.mark.parametrize('w, status', [(1.2, PairStatus.VALID), (1.004, PairStatus.VALID),
                                       (0.0, PairStatus.INVALID)],
                         ids=['normalised_as_tf2', 'nearly_unit', 'zero'])
def test_denormalised_quaternion(scene, node, w, status):
    frame = 'tilted%d' % int(w * 1000)
    scene.send_tf('world', frame, (0.0, -0.6, 0.0), (0.0, 0.0, 0.0, w))
    scene.send_markers([marker(frame, 0, frame_id=frame, frame_locked=True)])
    records = scene.wait_for_records(status_of(frame + '/0', status), node_process=node)
    if status == PairStatus.VALID:
        distance = find_record(records, 'arm', frame + '/0').distance
        assert distance == pytest.approx(arm_distance(*cube((0.0, -0.6, 0.0))), abs=1e-9)
    else:
        wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf')
    scene.forget_tf(frame)
    scene.send_markers([marker(frame, 0, action=marker(frame, 0).DELETE)])


@pytest.mark.parametrize('frame_locked', [False, True], ids=['stays', 'moves'])
def test_frame_locked_with_a_turning_sensor(scene, node, frame_locked):
    """frame_locked false keeps the obstacle where the sensor saw it (RViz's meaning)."""
    frame = 'head%d' % frame_locked
    scene.send_tf('world', frame, (0.0, 0.0, 0.5))
    seen = marker(frame, 0, frame_id=frame, xyz=(0.6, 0.0, 0.0))
    seen.frame_locked = frame_locked
    seen.header.stamp.sec, seen.header.stamp.nanosec = divmod(scene.now_ns(), 1_000_000_000)
    scene.send_markers([seen], repeat=False)
    scene.send_markers([marker(frame, 1, frame_id=frame, xyz=(9.0, 9.0, 9.0))])  # heartbeat
    straight = arm_distance(*cube((0.6, 0.0, 0.5)))
    name = frame + '/0'
    scene.wait_for_records(lambda records: status_of(name, PairStatus.VALID)(records) and
                           abs(find_record(records, 'arm', name).distance - straight) < 1e-9,
                           what='the obstacle in front of the head', node_process=node)
    turned = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))  # 90 deg about z
    scene.send_tf('world', frame, (0.0, 0.0, 0.5), turned)
    expected = arm_distance(*cube((0.0, 0.6, 0.5))) if frame_locked else straight
    scene.wait_for_more('distances', 10)
    scene.wait_for_records(lambda records: abs(find_record(records, 'arm', name).distance -
                                               expected) < 1e-9,
                           what='the obstacle after the head turned', node_process=node)
    scene.forget_tf(frame)
    scene.send_markers([marker(frame, 0, action=3)])


def test_marker_older_than_the_tf_history_is_stale(scene, node):
    frame = 'oldhead'
    scene.send_tf('world', frame, (0.0, 0.0, 0.5))
    old = marker(frame, 0, frame_id=frame, xyz=(0.6, 0.0, 0.0))
    old.header.stamp.sec = int(scene.now_ns() // 1_000_000_000) - 60  # beyond the 10 s buffer
    scene.send_markers([old])
    scene.wait_for_records(status_of(frame + '/0', PairStatus.STALE), node_process=node)
    wait_until(lambda: node.lines_with("'%s/0'" % frame, 'cannot be placed at its stamp'),
               what='the placement failure in the log')
    scene.forget_tf(frame)
    scene.send_markers([marker(frame, 0, action=3)])


def test_required_source_never_started(ros_env, tmp_path):
    parameters = dict(PARAMETERS, required_obstacle_sources=['perception'])
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_scene(scene, node)
        scene.wait_for_records(status_of(HEALTHY, PairStatus.VALID), STARTUP_TIMEOUT,
                               node_process=node)
        scene.wait_for_more('min_distance', 3)
        assert min_distance(scene) == -math.inf
        wait_until(lambda: inputs_entry(scene) is not None and
                   "'perception' has not published" in inputs_entry(scene).message,
                   what='the reason in /diagnostics')
        assert level(inputs_entry(scene)) == 2  # ERROR
        scene.send_markers([marker('perception', 0, xyz=(0.0, -2.0, 0.0))])
        wait_until(lambda: min_distance(scene) is not None and
                   math.isfinite(min_distance(scene)), what='a finite min_distance')


def test_no_model_then_a_late_model(ros_env, tmp_path):
    with NodeProcess(ros_env, tmp_path, PARAMETERS) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_scene(scene, node, urdf=False)
        wait_until(lambda: inputs_entry(scene) is not None and
                   'no robot_description after' in inputs_entry(scene).message,
                   STARTUP_TIMEOUT, 'the missing model in /diagnostics', node_process=node)
        assert level(inputs_entry(scene)) == 2
        scene.wait_for_more('min_distance', 3)  # /diagnostics (1 Hz) may come first
        assert min_distance(scene) == -math.inf
        assert len(node.lines_with('no robot_description after')) == 1
        scene.send_urdf(URDF)
        scene.wait_for_records(status_of(HEALTHY, PairStatus.VALID), node_process=node)
        expected = arm_distance(*cube(HEALTHY_CENTRE))
        wait_until(lambda: min_distance(scene) == pytest.approx(expected, abs=1e-9),
                   what='min_distance of the healthy pair')


def test_namespaced_start_without_a_remap(ros_env, tmp_path):
    with NodeProcess(ros_env, tmp_path, PARAMETERS, namespace='/left') as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID']), '/left') as scene:
        start_scene(scene, node)  # publishes the global /robot_description: not remapped
        wait_until(lambda: inputs_entry(scene) is not None and
                   '/left/robot_description' in inputs_entry(scene).message,
                   STARTUP_TIMEOUT, 'the remap hint in /diagnostics', node_process=node)
        assert 'remap' in inputs_entry(scene).message
        scene.wait_for_more('min_distance', 3)  # /diagnostics (1 Hz) may come first
        assert min_distance(scene) == -math.inf
        assert inputs_entry(scene).name == 'left/gjk_distance: inputs'
        assert inputs_entry(scene).hardware_id == 'none'


class SimClock:
    """Publish /clock from a thread: sim time advances with wall time from a settable base."""

    def __init__(self, scene, start_s):
        from rosgraph_msgs.msg import Clock
        self._message_type = Clock
        self._publisher = scene.node.create_publisher(Clock, '/clock', 10)
        self._base_ns, self._wall = int(start_s * 1e9), time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def jump_to(self, seconds):
        self._base_ns, self._wall = int(seconds * 1e9), time.monotonic()

    def pause(self):
        """Keep publishing /clock, frozen at its current time (a paused simulator)."""
        self._base_ns, self._wall = self.now_ns(), None

    def now_ns(self):
        if self._wall is None:
            return self._base_ns
        return self._base_ns + int((time.monotonic() - self._wall) * 1e9)

    def _run(self):
        while not self._stop.wait(0.02):
            message = self._message_type()
            message.clock.sec, message.clock.nanosec = divmod(self.now_ns(), 1_000_000_000)
            self._publisher.publish(message)

    def stop(self):
        self._stop.set()
        self._thread.join(TIMEOUT)


def test_clock_jump_back_clears_the_tf_history(ros_env, tmp_path):
    parameters = dict(PARAMETERS, use_sim_time=True)
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        clock = SimClock(scene, 1000.0)
        try:
            start_scene(scene, node)
            scene.send_markers([marker('sim', 0, frame_id='sim_frame', frame_locked=True)])

            def publish_tf():
                scene.send_tf_once('world', 'sim_frame', (0.5, 0.0, 0.0),
                                   stamp_ns=clock.now_ns())
                return True
            wait_until(lambda: publish_tf() and status_of('sim/0', PairStatus.VALID)(
                scene.records() or []), STARTUP_TIMEOUT, 'sim/0 measured in sim time',
                period=0.05, node_process=node)
            clock.jump_to(500.0)
            wait_until(lambda: node.lines_with('time jumped back'), what='the jump in the log')
            # History cleared: TF stamped in the new time is used at once.
            wait_until(lambda: publish_tf() and status_of('sim/0', PairStatus.VALID)(
                scene.records() or []) and scene.message('distances').header.stamp.sec < 600,
                what='sim/0 measured after the jump', period=0.05, node_process=node)
        finally:
            clock.stop()


def test_sim_time_without_clock_or_with_a_frozen_clock_is_unknown(ros_env, tmp_path):
    """use_sim_time: no /clock, then a live /clock, then a paused one, while TF keeps coming."""
    parameters = dict(PARAMETERS, use_sim_time=True, clock_timeout=0.5)
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_scene(scene, node)
        scene.send_tf('world', 'unrelated')  # inputs keep arriving throughout
        # No /clock: ROS time is zero. Outputs and diagnostics still come (steady timers).
        wait_until(lambda: inputs_entry(scene) is not None and
                   "'/clock'" in inputs_entry(scene).message,
                   STARTUP_TIMEOUT, 'the /clock reason in /diagnostics', node_process=node)
        assert 'ROS time is zero' in inputs_entry(scene).message
        scene.wait_for_more('min_distance', 3)
        assert min_distance(scene) == -math.inf
        clock = SimClock(scene, 1000.0)
        try:
            scene.wait_for_records(status_of(HEALTHY, PairStatus.VALID), STARTUP_TIMEOUT,
                                   'the healthy pair on a live /clock', node_process=node)
            wait_until(lambda: min_distance(scene) is not None and
                       math.isfinite(min_distance(scene)), what='a measured min_distance')
            clock.pause()  # the simulator freezes; TF and markers keep arriving
            scene.wait_for_records(
                lambda records: find_record(records, 'arm', HEALTHY).status ==
                PairStatus.STALE, what='every pair STALE on a frozen /clock', node_process=node)
            wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf')
            wait_until(lambda: 'ROS time stands still' in inputs_entry(scene).message,
                       what='the frozen clock in /diagnostics', node_process=node)
            assert node.lines_with('ROS time stands still')
            clock.jump_to(clock.now_ns() * 1e-9)  # runs again
            scene.wait_for_records(status_of(HEALTHY, PairStatus.VALID),
                                   what='recovery when /clock runs again', node_process=node)
        finally:
            clock.stop()
