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
Settings and inputs that must never do nothing silently, through the real node.

Patterns that match nothing, the exclusion form of pairs, best-effort publishers, empty frame
ids, mesh paths that are not regular files, and a second node of the same name.
"""

import os

from gjk_ros.ros import PairStatus
from gjk_ros.ros.params import Config
from node_harness import (find_record, Marker, marker, NodeProcess, Parameter, Scene,
                          STARTUP_TIMEOUT, wait_until)
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2
from visualization_msgs.msg import MarkerArray
import yaml

pytestmark = pytest.mark.ros

LINKS = yaml.safe_dump([
    {'name': 'arm', 'frame_id': 'arm', 'type': 'box', 'size': [0.2, 0.2, 0.2]},
    {'name': 'hand', 'frame_id': 'hand', 'type': 'box', 'size': [0.1, 0.1, 0.1]},
])
PARAMETERS = {'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 5.0,
              'require_robot_description': False, 'link_geometry': LINKS,
              # Far above the time a refusal takes: a FIFO must not wait for it.
              'ingest_timeout': 60.0}
BEST_EFFORT = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)


def start_scene(scene, node):
    scene.send_tf('world', 'arm', (0.0, 0.0, 0.5))
    scene.send_tf('world', 'hand', (0.0, 0.3, 0.5))
    scene.wait_for_subscribers('obstacles', node_process=node)
    scene.send_markers([marker('boxes', 0, xyz=(0.5, 0.0, 0.5), scale=(0.2, 0.2, 0.2))])
    scene.wait_for_records(lambda records: status(records, 'boxes/0') == PairStatus.VALID,
                           STARTUP_TIMEOUT, 'the first pair', node_process=node)


@pytest.fixture
def running(ros_env, tmp_path):
    """Return a started node and scene (PARAMETERS), stopped after the test."""
    with NodeProcess(ros_env, tmp_path, PARAMETERS) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_scene(scene, node)
        yield node, scene


def status(records, obstacle, link='arm'):
    record = find_record(records, link, obstacle)
    return None if record is None else record.status


def inputs_entry(scene, instance=None):
    """Return the latest inputs entry (of one process when ``instance`` is given), or None."""
    with scene._lock:
        messages = list(reversed(scene.diagnostics[-20:]))
    for message in messages:
        for entry in message.status:
            if entry.name.endswith(': inputs') and \
                    (instance is None or value(entry, 'instance').endswith(':%d' % instance)):
                return entry
    return None


def level(entry):
    return ord(entry.level) if isinstance(entry.level, bytes) else int(entry.level)


def value(entry, key):
    if entry is None:  # no /diagnostics message yet
        return ''
    return {item.key: item.value for item in entry.values}.get(key, '')


def wait_for_log(node, *fragments, timeout=10.0):
    wait_until(lambda: node.lines_with(*fragments), timeout,
               'a log line with %s' % (fragments,), node_process=node)


def set_parameters(scene, **values):
    answers = scene.set_node_parameters([
        Parameter(name, Parameter.Type.STRING_ARRAY, list(item))
        if isinstance(item, list) else Parameter(name, value=item)
        for name, item in values.items()])
    assert all(answer.successful for answer in answers), [a.reason for a in answers]


def test_excluded_pairs_win_over_allowed_pairs_and_drop_self_pairs_in_either_order():
    config = Config.from_values({'allowed_pairs': ['tool:*', 'arm:*'],
                                 'excluded_pairs': ['tool:workpiece*', 'hand:arm']})
    assert config.pair_allowed('tool', 'table') and config.pair_allowed('arm', 'workpiece/1')
    assert not config.pair_allowed('tool', 'workpiece/1')
    assert not config.pair_allowed('base', 'table')   # not in allowed_pairs
    assert not config.self_pair_allowed('hand', 'arm')
    assert not config.self_pair_allowed('arm', 'hand')
    assert config.self_pair_allowed('arm', 'tool')
    assert Config.from_values({'excluded_pairs': ['*:people/*']}).pair_allowed('arm', 'table')


def test_unmatched_patterns_are_judged_against_the_bodies_present():
    config = Config.from_values({
        'link_padding': ['hnad:0.02', 'hand:0.01'], 'obstacle_exclude': ['people/*'],
        'allowed_pairs': ['hand:table', 'arm:tabel'], 'static_obstacle_namespaces': ['map'],
        'excluded_pairs': ['hand:arm']})
    assert config.unmatched_patterns(['arm', 'hand'], ['table'], {'boxes'}) == [
        ('link_padding', 'hnad:0.02'), ('obstacle_exclude', 'people/*'),
        ('static_obstacle_namespaces', 'map'), ('allowed_pairs', 'arm:tabel'),
        ('excluded_pairs', 'hand:arm')]
    # A self pair entry matches links when self pairs are measured.
    with_self = Config.from_values({'excluded_pairs': ['hand:arm'], 'self_collision': True})
    assert with_self.unmatched_patterns(['arm', 'hand'], ['table'], ()) == []
    # Nothing of a kind yet: not judged; the defaults never appear.
    assert config.unmatched_patterns([], [], ()) == []
    assert Config().unmatched_patterns(['arm'], ['table'], {'boxes'}) == []


def test_patterns_that_match_nothing_warn_once_and_resolve(running):
    node, scene = running
    set_parameters(scene, link_padding=['hnad:0.02'], obstacle_padding=['people/*:0.3'],
                   excluded_pairs=['arm:tabel'])
    for parameter, entry in (('link_padding', 'hnad:0.02'),
                             ('obstacle_padding', 'people/*:0.3'),
                             ('excluded_pairs', 'arm:tabel')):
        wait_for_log(node, parameter, "'%s' matches nothing" % entry)
    wait_until(lambda: 'obstacle_padding people/*:0.3' in
               value(inputs_entry(scene), 'unmatched_patterns'), what='the entry in /diagnostics')
    entry = inputs_entry(scene)
    assert level(entry) == 1 and 'patterns matching nothing' in entry.message
    # Obstacles arrive over time: once one matches, the warning resolves.
    scene.send_markers([marker('people', 0, xyz=(-0.5, 0.0, 0.5))])
    wait_for_log(node, "obstacle_padding entry 'people/*:0.3' matches something now")
    wait_until(lambda: 'people' not in value(inputs_entry(scene), 'unmatched_patterns'),
               what='the entry gone from /diagnostics')
    scene.wait_for_more('distances', 20)  # a second of cycles and diagnostics
    assert len(node.lines_with("'hnad:0.02' matches nothing")) == 1  # once, not per cycle
    # The defaults ('*' includes, empty lists) never warn.
    assert not node.lines_with('link_include') and not node.lines_with('obstacle_include')


def test_excluded_pairs_drop_obstacle_and_self_pairs(running):
    node, scene = running
    scene.subscribe('self_distances', PointCloud2,
                    scene.topics['distances'].replace('distances', 'self_distances'))
    set_parameters(scene, self_collision=True)
    wait_until(lambda: scene.message('self_distances') is not None and
               scene.message('self_distances').width == 1, what='the arm-hand self pair')
    # "All pairs except hand with boxes, and hand with arm" (either order for a self pair).
    set_parameters(scene, excluded_pairs=['hand:box*', 'hand:arm'])
    scene.wait_for_records(lambda records: {(r.link, r.obstacle) for r in records} ==
                           {('arm', 'boxes/0')}, what='hand-boxes excluded', node_process=node)
    wait_until(lambda: scene.message('self_distances').width == 0,
               what='the self pair excluded')


def test_best_effort_publisher_is_reported_not_missing(running):
    node, scene = running
    publisher = scene.node.create_publisher(MarkerArray, scene.topics['obstacles'], BEST_EFFORT)
    publisher.publish(MarkerArray(markers=[marker('lossy', 0, xyz=(-0.5, 0.0, 0.5))]))
    wait_for_log(node, '/gjk_distance/obstacles', 'incompatible QoS (RELIABILITY)',
                 'qos_overrides./gjk_distance/obstacles.subscription.reliability')
    wait_until(lambda: 'RELIABILITY' in value(inputs_entry(scene), 'incompatible_qos'),
               what='the incompatible publisher in /diagnostics')
    assert level(inputs_entry(scene)) == 1
    assert 'incompatible QoS' in inputs_entry(scene).message


def measured_from_both(scene, publisher):
    def measured(records):
        # Published on each poll: a best-effort message sent before discovery is lost.
        publisher.publish(MarkerArray(markers=[marker('lossy', 0, xyz=(-0.5, 0.0, 0.5))]))
        return status(records, 'lossy/0') == PairStatus.VALID and \
            status(records, 'boxes/0') == PairStatus.VALID
    return measured


def test_best_effort_override_matches_both_kinds_of_publisher(ros_env, tmp_path):
    lossy = dict(PARAMETERS, qos_overrides={'/gjk_distance/obstacles': {
        'subscription': {'reliability': 'best_effort'}}})
    with NodeProcess(ros_env, tmp_path, lossy) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_scene(scene, node)   # a reliable publisher
        publisher = scene.node.create_publisher(MarkerArray, scene.topics['obstacles'],
                                                BEST_EFFORT)
        scene.wait_for_records(measured_from_both(scene, publisher),
                               what='both publishers measured', node_process=node)
        assert not node.lines_with('incompatible QoS')


def test_empty_frame_id_is_invalid_at_once(running):
    node, scene = running
    scene.send_markers([marker('noframe', 0, frame_id='', xyz=(0.5, 0.5, 0.5))])
    scene.wait_for_records(lambda records: status(records, 'noframe/0') == PairStatus.INVALID,
                           what='INVALID, not STALE', node_process=node)
    wait_for_log(node, "'noframe/0' rejected", 'header.frame_id is empty')
    # A parameter body with an empty frame_id is refused when set.
    (answer,) = scene.set_node_parameters([Parameter(
        'static_obstacles', value="[{name: slab, frame_id: '', type: sphere, radius: 0.1}]")])
    assert not answer.successful and 'frame_id must name a frame' in answer.reason


def test_mesh_path_that_is_a_fifo_is_refused_before_reading(running, tmp_path):
    node, scene = running
    fifo = tmp_path / 'pipe.stl'
    os.mkfifo(fifo)
    scene.send_markers([marker('piped', 0, Marker.MESH_RESOURCE, mesh_resource='file://%s'
                               % fifo, xyz=(0.5, 0.5, 0.5), scale=(1.0, 1.0, 1.0))])
    # Refused at once (ingest_timeout is 60 s); the worker is free for the next body.
    scene.wait_for_records(lambda records: status(records, 'piped/0') == PairStatus.INVALID,
                           what='the FIFO refused', node_process=node)
    wait_for_log(node, "'piped/0' rejected", 'pipe.stl is not a regular file (a FIFO)')
    assert not node.lines_with('ingest_timeout')
    scene.send_markers([marker('after', 0, xyz=(-0.5, 0.0, 0.5))])
    scene.wait_for_records(lambda records: status(records, 'after/0') == PairStatus.VALID,
                           what='the next body built', node_process=node)


def test_twin_nodes_report_each_other(ros_env, tmp_path):
    with NodeProcess(ros_env, tmp_path / 'first', PARAMETERS) as first, \
            NodeProcess(ros_env, tmp_path / 'twin', PARAMETERS) as twin, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        for node in (first, twin):
            wait_for_log(node, "another node named '/gjk_distance' is on this ROS graph",
                         timeout=STARTUP_TIMEOUT)
        for node in (first, twin):
            wait_until(lambda: inputs_entry(scene, node.process.pid) is not None and
                       value(inputs_entry(scene, node.process.pid), 'duplicates') == '1',
                       what='the twin in the /diagnostics of %d' % node.process.pid)
            entry = inputs_entry(scene, node.process.pid)
            assert '1 other node(s) with this name' in entry.message and level(entry) >= 1
