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
Heavy, hostile and absurd input through the real node, at sizes fit for make test.

The large sizes, with figures (longest output gap, peak memory, recovery time), are in
``python -m bench.stress``. Each test checks that the offending body is rejected by name (or its
pairs are INVALID), that the healthy pair keeps being measured and that outputs keep coming.
"""

import math
import os
import signal
import subprocess
import time

from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, Marker, marker, NodeProcess, Parameter, Scene,
                          session_domain_id, STARTUP_TIMEOUT, TIMEOUT, VENV_BIN, wait_until)
import pytest

pytestmark = pytest.mark.ros

URDF = box_urdf('hostilebot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
HEALTHY = 'healthy/0'
RATE_HZ = 20.0
PARAMETERS = {'rate_hz': RATE_HZ, 'static_obstacle_namespaces': ['healthy'],
              'max_distance': 5.0, 'ingest_timeout': 3.0, 'max_points': 50_000,
              'max_markers_per_message': 500}


def healthy(records):
    record = find_record(records, 'arm', HEALTHY)
    return record is not None and record.status == PairStatus.VALID


def status_of(name, *statuses):
    def check(records):
        record = find_record(records, 'arm', name)
        return healthy(records) and record is not None and record.status in statuses
    return check


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('hostile'), PARAMETERS) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('healthy', 0, xyz=(0.0, 0.6, 0.0))])
        scene.wait_for_records(healthy, STARTUP_TIMEOUT, 'the healthy pair', node_process=node)
        yield scene


def test_overflowing_pose_makes_one_body_invalid_not_the_cycle(scene, node):
    """A marker at 1.5e308 in a rotated frame: that body is rejected, every other pair served."""
    scene.send_static_tf('world', 'rotated', (0.0, 0.0, 0.0), (0.0, 0.0, 0.3826834, 0.9238795))
    scene.send_markers([marker('far', 0, frame_id='rotated', xyz=(1.5e308, 0.0, 0.0))])
    scene.wait_for_records(status_of('far/0', PairStatus.INVALID), node_process=node)
    scene.wait_for_more('min_distance', 3)
    assert scene.message('min_distance').data == -math.inf
    scene.send_markers([marker('far', 0, action=Marker.DELETE)])


def test_huge_quaternion_is_rejected_not_turned_into_identity(scene, node):
    scene.send_markers([marker('spin', 0, xyz=(0.5, 0.0, 0.0),
                               quaternion=(1e154, 1e154, 0.0, 1e154))])
    scene.wait_for_records(status_of('spin/0', PairStatus.INVALID), node_process=node)
    wait_until(lambda: node.lines_with("'spin/0' rejected", 'orientation'),
               what='the rejection in the log')
    scene.send_markers([marker('spin', 0, action=Marker.DELETE)])


def test_heavy_marker_never_stops_the_outputs(scene, node):
    """A 30k-point TRIANGLE_LIST is built off the compute path; outputs keep their rate."""
    points = [(math.cos(k * 0.001) * 0.1 + 0.8, math.sin(k * 0.001) * 0.1, (k % 3) * 0.01)
              for k in range(30_000)]
    heavy = marker('heavy', 0, Marker.TRIANGLE_LIST, xyz=(0.0, 0.0, 0.0), scale=(1, 1, 1),
                   points=points)
    scene.start_history('distances')
    scene.send_markers([heavy], repeat=False)
    scene.send_markers([marker('heavy', 1, xyz=(9.0, 9.0, 9.0))])  # keeps the source alive
    scene.wait_for_records(status_of('heavy/0', PairStatus.VALID, PairStatus.INVALID),
                           timeout=60.0, what='the heavy marker built', node_process=node)
    gaps = scene.history_gaps('distances')
    # A stall would be seconds (7-12 s before the worker); a loose bound, figures in the bench.
    assert max(gaps) < 1.0, max(gaps)
    scene.send_markers([marker('heavy', 0, action=Marker.DELETEALL)])


def test_too_many_points_is_rejected_by_name(scene, node):
    points = [(0.0, 0.0, float(k)) for k in range(60_000)]  # over max_points (50k here)
    scene.send_markers([marker('many', 0, Marker.POINTS, points=points)])
    scene.wait_for_records(status_of('many/0', PairStatus.INVALID), timeout=30.0,
                           node_process=node)
    wait_until(lambda: node.lines_with("'many/0' rejected", 'max_points'),
               what='the rejection naming the body')
    scene.send_markers([marker('many', 0, action=Marker.DELETE)])


def test_too_many_markers_in_one_message_is_rejected_by_topic(scene, node):
    """An array over max_markers_per_message is dropped whole, at once, with the reason."""
    scene.start_history('distances')
    scene.send_markers([marker('crowd', k, xyz=(3.0, 0.0, 0.0)) for k in range(501)],
                       repeat=False)
    wait_until(lambda: node.lines_with('obstacles', '501 markers exceeds max_markers_per_message'),
               what='the rejection naming the topic')
    scene.wait_for_more('distances', 3)
    assert all(find_record(scene.records(), 'arm', 'crowd/%d' % k) is None for k in (0, 500))
    assert healthy(scene.records())
    assert max(scene.history_gaps('distances')) < 1.0


@pytest.mark.parametrize('text, reason', [
    ('[' * 5000 + ']' * 5000, 'nested deeper than 32'),
    ('a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
     'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n'
     'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n'
     'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n'
     'i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]', ''),
    ('{' * 100 + 'broken', ''),
], ids=['deep_nesting', 'alias_bomb', 'malformed'])
def test_hostile_parameter_is_rejected_and_the_node_lives(scene, node, text, reason):
    started = time.monotonic()
    (result,) = scene.set_node_parameters([Parameter('static_obstacles', value=text)])
    assert not result.successful and reason in result.reason
    assert time.monotonic() - started < TIMEOUT
    scene.wait_for_more('distances', 3)
    assert node.alive() and healthy(scene.records())


def test_churn_keeps_names_and_memory_bounded(scene, node):
    """DELETEALL + 20 new ids per message: ~/names holds the live bodies only."""
    for step in range(60):
        markers = [marker('churn', 0, action=Marker.DELETEALL)]
        markers += [marker('churn', step * 20 + k, xyz=(2.0, 0.1 * k, 0.0)) for k in range(20)]
        scene.send_markers(markers, repeat=False)
        time.sleep(1.0 / 30.0)  # the publisher's own pace, 30 Hz
    wait_until(lambda: len([n for n in scene.name_list('obstacles') if n.startswith('churn/')])
               == 20, what='~/names to hold the 20 live churn obstacles')
    names = scene.message('names').data
    assert len(names) < 4000, len(names)
    scene.send_markers([marker('churn', 0, action=Marker.DELETEALL)], repeat=False)


def test_parser_errors_never_echo_file_content(scene, node, tmp_path):
    secret = 'TOP_SECRET_TOKEN_4711'
    for index, extension in enumerate(('ply', 'off', 'obj', 'stl')):
        path = tmp_path / ('not_a_mesh.%s' % extension)
        path.write_text('%s garbage %s\n' % (secret, secret) * 10)
        scene.send_markers([marker('secret', index, Marker.MESH_RESOURCE,
                                   mesh_resource='file://%s' % path, scale=(1, 1, 1))])
    wait_until(lambda: len(node.lines_with("'secret/")) >= 4, what='four rejections')
    assert secret not in node.output()
    for status in scene.diagnostic_statuses().values():
        assert secret not in status.message
    scene.send_markers([marker('secret', 0, action=Marker.DELETEALL)])


def test_duplicate_node_name_is_warned(ros_env, tmp_path):
    domain = int(ros_env['ROS_DOMAIN_ID'])
    with NodeProcess(ros_env, tmp_path / 'one', PARAMETERS) as one, \
            NodeProcess(ros_env, tmp_path / 'two', PARAMETERS) as two, Scene(domain):
        for process in (one, two):
            wait_until(lambda process=process: process.lines_with('another node named'),
                       STARTUP_TIMEOUT, 'the duplicate warning', node_process=process)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
def test_shutdown_under_load_exits_cleanly(ros_env, tmp_path, sig):
    """Stop the node while 1 kHz /tf arrives: exit 0, no traceback, no 'cycle failed'."""
    domain = int(ros_env['ROS_DOMAIN_ID'])
    for attempt in range(3):
        with NodeProcess(ros_env, tmp_path / str(attempt), PARAMETERS) as node, \
                Scene(domain) as scene:
            scene.send_static_tf('world', 'arm')
            scene.send_urdf(URDF)
            scene.wait_for_subscribers('tf', node_process=node)
            flood = subprocess.Popen([str(VENV_BIN / 'python'), '-m', 'bench.tf_flood',
                                      '--rate-hz', '1000', '--frames', '50'],
                                     env=dict(ros_env), cwd=_repo_root(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_until(lambda: scene.count('distances') > 20, STARTUP_TIMEOUT,
                           'outputs under load', node_process=node)
                node.process.send_signal(sig)
                node.process.wait(TIMEOUT)
            finally:
                flood.kill()
                flood.wait()
            output = node.output()
            assert node.process.returncode == 0, output[-3000:]
            assert 'Traceback' not in output and 'cycle failed' not in output, output[-3000:]


def _repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
