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
Every parameter, set at run time through the real node, has an effect that can be observed.

``EFFECTS`` pairs groups of parameters with a check; a test fails when a parameter of
``PARAMETERS`` has no check, so a new parameter cannot be forgotten. Each check sets its
parameters through the node's parameter service (as ``ros2 param set``), waits on the effect
in ``~/distances``, ``~/min_distance``, ``~/self_distances``, ``/diagnostics``, the log or the
answer of the service, and restores the values it changed.

One node process serves the module. The robot has no robot_description (it comes from
``link_geometry``): ``arm`` is a 0.2 m cube at (0, 0, 0.5), ``hand`` a 0.1 m cube at
(0, 0.3, 0.5); the obstacle ``boxes/0`` is a 0.2 m cube at (0.5, 0, 0.5), 0.3 m from ``arm``.
"""

import math
import os

from gjk_ros.ros import PairStatus, read_distances
from gjk_ros.ros.params import PARAMETERS
from node_harness import (box_urdf, find_record, Marker, marker, NodeProcess, Parameter,
                          Scene, session_domain_id, setting as harness_setting,
                          STARTUP_TIMEOUT, wait_until)
import pytest
from sensor_msgs.msg import PointCloud2
from test_node_decomposition import cache_leg_parts, l_mesh, L_URI_PATTERN
import yaml

pytestmark = pytest.mark.ros

ARM_TO_BOX = 0.3         # arm (half 0.1 at x 0) to boxes/0 (half 0.1 at x 0.5)
ARM_TO_HAND = 0.15       # arm to hand (half 0.05 at y 0.3)
TOLERANCE = 1e-6


def link_geometry(arm_edge=0.2):
    return yaml.safe_dump([
        {'name': 'arm', 'frame_id': 'arm', 'type': 'box', 'size': [arm_edge] * 3},
        {'name': 'hand', 'frame_id': 'hand', 'type': 'box', 'size': [0.1] * 3},
    ])


START = {
    'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 5.0,
    'require_robot_description': False, 'robot_description_timeout': 3600.0,
    'link_geometry': link_geometry(),
    # No hull warning at start: the check lowers it and the warning appears.
    'hull_warning_threshold': 1000.0,
}


# The value each parameter has at the start: what setting() puts back.
START_VALUES = {spec.name: START.get(spec.name, spec.default) for spec in PARAMETERS}


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    """Start one distance node for the module, always stopped at the end."""
    with NodeProcess(os.environ, tmp_path_factory.mktemp('settings'),
                     START) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    """Publish the frames and the obstacle; wait for the first measured pair."""
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'base', (1.0, 0.0, 0.0))
        scene.send_tf('world', 'arm', (0.0, 0.0, 0.5))
        scene.send_tf('world', 'hand', (0.0, 0.3, 0.5))
        scene.subscribe('self_distances', PointCloud2,
                        scene.topics['distances'].replace('distances', 'self_distances'))
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([box_marker()])
        wait_for_arm_distance(scene, node, ARM_TO_BOX, STARTUP_TIMEOUT)
        yield scene


def box_marker(ns='boxes', marker_id=0, **fields):
    return marker(ns, marker_id, xyz=(0.5, 0.0, 0.5), scale=(0.2, 0.2, 0.2), **fields)


def setting(scene, **values):
    """Set parameters on the node; put back their start values afterwards."""
    return harness_setting(scene, START_VALUES, **values)


def arm_record(scene, obstacle='boxes/0', link='arm'):
    return find_record(scene.records() or [], link, obstacle)


def wait_for_arm_distance(scene, node, distance, timeout=10.0, obstacle='boxes/0'):
    def measured(records):
        record = find_record(records, 'arm', obstacle)
        return record is not None and record.status == PairStatus.VALID and \
            abs(record.distance - distance) < TOLERANCE
    scene.wait_for_records(measured, timeout, 'arm to %s at %g m' % (obstacle, distance),
                           node_process=node)


def wait_for_status(scene, node, status, obstacle='boxes/0', link='arm'):
    def check(records):
        record = find_record(records, link, obstacle)
        return record is not None and record.status == status
    scene.wait_for_records(check, what='%s-%s %s' % (link, obstacle, status.name),
                           node_process=node)


def wait_for_pairs(scene, node, wanted, what):
    return scene.wait_for_records(
        lambda records: {(r.link, r.obstacle) for r in records} == set(wanted), what=what,
        node_process=node)


def min_distance(scene):
    message = scene.message('min_distance')
    return None if message is None else message.data


def wait_for_min(scene, predicate, what):
    wait_until(lambda: min_distance(scene) is not None and predicate(min_distance(scene)),
               what=what)


def entry(scene, suffix):
    for name, status in scene.diagnostic_statuses().items():
        if name.endswith(suffix):
            return status
    return None


def entry_message(scene, suffix):
    status = entry(scene, suffix)
    return '' if status is None else status.message


def entry_value(scene, suffix, key):
    status = entry(scene, suffix)
    values = {} if status is None else {item.key: item.value for item in status.values}
    return values.get(key)


def wait_for_log(node, *fragments):
    wait_until(lambda: node.lines_with(*fragments), what='a log line with %s' % (fragments,),
               node_process=node)


def send_once(scene, markers):
    scene.send_markers(markers, repeat=False)


def mesh_file(tmp_path, name, concave=True):
    """Write an STL: test_node_decomposition's L (not convex), or a cube; return its URI."""
    trimesh = pytest.importorskip('trimesh')
    path = tmp_path / name
    (l_mesh() if concave else trimesh.creation.box([0.1, 0.1, 0.1])).export(str(path))
    return 'file://%s' % path


def mesh_marker(ns, marker_id, uri, xyz=(0.0, -1.0, 0.5)):
    return marker(ns, marker_id, Marker.MESH_RESOURCE, xyz=xyz, scale=(1, 1, 1),
                  mesh_resource=uri)


def forget(scene, ns):
    scene.send_markers([marker(ns, 0, action=Marker.DELETEALL)])


# -- the checks, one per group of parameters ---------------------------------------------------

def check_fixed_frame(scene, node, tmp_path):
    with setting(scene, fixed_frame='base'):
        wait_until(lambda: scene.message('distances').header.frame_id == 'base',
                   what='~/distances in base')
        wait_for_arm_distance(scene, node, ARM_TO_BOX)  # distances do not depend on it


def check_rate_hz(scene, node, tmp_path):
    # /tf comes at 20 Hz; at 2 Hz the pacer runs at most 2-3 cycles per 1 s diagnostics period.
    with setting(scene, rate_hz=2.0):
        wait_until(lambda: entry_value(scene, ': compute', 'rate_hz') == '2.0',
                   what='rate_hz 2 in /diagnostics')
        scene.wait_for_more('diagnostics', 2)
        assert int(entry_value(scene, ': compute', 'cycles')) <= 3


def check_tf_timeout(scene, node, tmp_path):
    scene.pause_tf()
    try:
        wait_for_status(scene, node, PairStatus.STALE)   # silent for more than 2 s
        with setting(scene, tf_timeout=3600.0):
            wait_for_status(scene, node, PairStatus.VALID)
    finally:
        scene.pause_tf(False)
    wait_for_status(scene, node, PairStatus.VALID)


def check_clock_timeout(scene, node, tmp_path):
    # ROS time (the system clock) advances between cycles but not within one: a timeout far
    # shorter than a cycle makes it "stand still", so nothing counts as fresh.
    with setting(scene, clock_timeout=1e-7):
        wait_for_status(scene, node, PairStatus.STALE)
        wait_until(lambda: 'ROS time stands still' in entry_message(scene, ': inputs'),
                   what='the clock in /diagnostics')
    wait_for_status(scene, node, PairStatus.VALID)


def check_tf_buffer_duration(scene, node, tmp_path):
    stamp_sec = int(scene.now_ns() // 1_000_000_000) - 2  # 2 s in the past, in arm's history
    kept = marker('past', 0, frame_id='arm', xyz=(0.6, 0.0, 0.0))
    kept.header.stamp.sec = stamp_sec
    scene.send_markers([kept])
    wait_for_status(scene, node, PairStatus.VALID, 'past/0')
    with setting(scene, tf_buffer_duration=0.5):
        lost = marker('past', 1, frame_id='arm', xyz=(0.6, 0.0, 0.0))
        lost.header.stamp.sec = int(scene.now_ns() // 1_000_000_000) - 2
        scene.send_markers([lost])
        wait_for_status(scene, node, PairStatus.STALE, 'past/1')
        wait_for_log(node, "'past/1'", 'cannot be placed at its stamp')
    forget(scene, 'past')


def check_freshness(scene, node, tmp_path):
    scene.pause_markers()
    try:
        wait_for_status(scene, node, PairStatus.STALE)  # silent for obstacle_timeout (2 s)
        with setting(scene, static_obstacle_namespaces=['box*']):
            wait_for_status(scene, node, PairStatus.VALID)
        wait_for_status(scene, node, PairStatus.STALE)
        with setting(scene, obstacle_timeout=0.0):      # 0 disables the check
            wait_for_status(scene, node, PairStatus.VALID)
    finally:
        scene.pause_markers(False)
    wait_for_status(scene, node, PairStatus.VALID)


def check_required_obstacle_sources(scene, node, tmp_path):
    wait_for_min(scene, math.isfinite, 'a finite minimum')
    with setting(scene, required_obstacle_sources=['people']):
        wait_for_min(scene, lambda value: value == -math.inf, 'min_distance -inf')
        wait_until(lambda: "'people' has not published" in entry_message(scene, ': inputs'),
                   what='the required source in /diagnostics')
    wait_for_min(scene, math.isfinite, 'a finite minimum again')


def check_empty_scope(scene, node, tmp_path):
    with setting(scene, obstacle_include=['nothing*']):
        wait_for_pairs(scene, node, [], 'no obstacle in scope')
        wait_for_min(scene, lambda value: value == -math.inf, 'an empty scope reads -inf')
        with setting(scene, allow_no_obstacles=True):
            wait_for_min(scene, lambda value: value == math.inf, 'an empty scope reads +inf')
    wait_for_arm_distance(scene, node, ARM_TO_BOX)


def check_robot_description(scene, node, tmp_path):
    with setting(scene, require_robot_description=True):
        wait_for_min(scene, lambda value: value == -math.inf, 'min_distance -inf')
        wait_until(lambda: 'waiting for robot_description' in entry_message(scene, ': inputs'),
                   what='the wait for robot_description')
        with setting(scene, robot_description_timeout=0.5):
            wait_until(lambda: 'no robot_description after' in entry_message(scene, ': inputs'),
                       what='robot_description missing after the timeout')
    wait_for_min(scene, math.isfinite, 'a finite minimum again')


def check_max_description_bytes(scene, node, tmp_path):
    # Links without collision: the model, were it accepted, would add no piece.
    urdf = box_urdf('bare', {'arm': [], 'hand': []})
    with setting(scene, max_description_bytes=len(urdf) // 2):
        scene.send_urdf(urdf)
        wait_for_log(node, 'robot_description rejected',
                     'exceed max_description_bytes (%d)' % (len(urdf) // 2))


def check_max_distance(scene, node, tmp_path):
    with setting(scene, max_distance=0.1):
        wait_for_status(scene, node, PairStatus.BEYOND)
    wait_for_arm_distance(scene, node, ARM_TO_BOX)


def check_link_scope(scene, node, tmp_path):
    with setting(scene, link_include=['hand']):
        wait_for_pairs(scene, node, [('hand', 'boxes/0')], 'only hand')
    with setting(scene, link_exclude=['hand']):
        wait_for_pairs(scene, node, [('arm', 'boxes/0')], 'hand excluded')
    wait_for_pairs(scene, node, [('arm', 'boxes/0'), ('hand', 'boxes/0')], 'both links')


def check_obstacle_exclude(scene, node, tmp_path):
    with setting(scene, obstacle_exclude=['boxes/*']):
        wait_for_pairs(scene, node, [], 'boxes excluded')
    wait_for_arm_distance(scene, node, ARM_TO_BOX)


def check_pairs(scene, node, tmp_path):
    with setting(scene, allowed_pairs=['hand:*']):
        wait_for_pairs(scene, node, [('hand', 'boxes/0')], 'only the allowed pair')
    with setting(scene, excluded_pairs=['hand:box*']):
        wait_for_pairs(scene, node, [('arm', 'boxes/0')], 'all pairs but the excluded one')
    wait_for_pairs(scene, node, [('arm', 'boxes/0'), ('hand', 'boxes/0')], 'both pairs')


def check_padding(scene, node, tmp_path):
    with setting(scene, padding=0.05):
        wait_for_arm_distance(scene, node, ARM_TO_BOX - 0.05)
    with setting(scene, link_padding=['arm:0.02']):
        wait_for_arm_distance(scene, node, ARM_TO_BOX - 0.02)
    with setting(scene, obstacle_padding=['boxes/*:0.03']):
        wait_for_arm_distance(scene, node, ARM_TO_BOX - 0.03)
    wait_for_arm_distance(scene, node, ARM_TO_BOX)


def self_records(scene):
    from gjk_ros.ros import read_distances
    cloud = scene.message('self_distances')
    return [] if cloud is None else read_distances(cloud, scene.message('names'))


def check_self_collision(scene, node, tmp_path):
    with setting(scene, self_collision=True):
        wait_until(lambda: any(abs(record.distance - ARM_TO_HAND) < TOLERANCE
                               for record in self_records(scene)),
                   what='arm-hand on ~/self_distances')
        wait_for_min(scene, lambda value: abs(value - ARM_TO_HAND) < TOLERANCE,
                     'the self pair in the minimum')
        with setting(scene, self_collision_in_min_distance=False):
            wait_for_min(scene, lambda value: abs(value - ARM_TO_BOX) < TOLERANCE,
                         'the minimum without the self pair')


def check_body_texts(scene, node, tmp_path):
    post = '[{name: post, frame_id: world, type: sphere, radius: 0.1, xyz: [-0.5, 0, 0.5]}]'
    with setting(scene, static_obstacles=post):
        wait_for_arm_distance(scene, node, 0.3, obstacle='post')
    with setting(scene, link_geometry=link_geometry(arm_edge=0.4)):
        wait_for_arm_distance(scene, node, ARM_TO_BOX - 0.1)
    wait_for_arm_distance(scene, node, ARM_TO_BOX)


def hand_to_bracket(scene):
    record = arm_record(scene, 'bracket/0', link='hand')
    return None if record is None or record.status != PairStatus.VALID else record.distance


def check_mesh_modes(scene, node, tmp_path):
    # The hand sits in the notch of the L (0.1 m from both legs), inside the L's hull. A marker
    # takes a new mode when it is next received.
    uri = mesh_file(tmp_path, 'l_mode.stl')

    def send():
        scene.send_markers([mesh_marker('bracket', 0, uri, xyz=(-0.2, 0.3, 0.3))])

    def wait_for_hand(inside, what):
        wait_until(lambda: (hand_to_bracket(scene) or 0.0) < 0.0 if inside else
                   abs((hand_to_bracket(scene) or 0.0) - 0.1) < TOLERANCE, what=what,
                   node_process=node)
    send()
    wait_for_hand(False, 'the exact L (obstacles are exact by default)')
    with setting(scene, mesh_mode='hull'):
        send()
        wait_for_hand(True, 'the hull of the L')
    send()
    wait_for_hand(False, 'the exact L again')
    with setting(scene, mesh_mode_overrides=['bracket/*:hull']):
        send()
        wait_for_hand(True, 'the hull of the L by its override')
    with setting(scene, max_mesh_pieces=1):
        send()
        wait_for_log(node, 'l_mode.stl', 'needs more than 1 convex pieces')
        wait_for_hand(True, 'the hull of an L that needs more pieces than allowed')
    forget(scene, 'bracket')


def check_decomposition(scene, node, tmp_path):
    # The hand sits in the notch of the L (0.1 m from both legs), inside the L's hull: measured
    # as parts (mesh_mode), the hull until decompose_meshes names it.
    uri = mesh_file(tmp_path, 'l_shape.stl')
    cache = tmp_path / 'parts'
    with pytest.MonkeyPatch.context() as monkeypatch:
        cache_leg_parts(tmp_path / 'l_shape.stl', str(cache), monkeypatch)
    with setting(scene, mesh_mode='parts'):
        check_parts(scene, node, uri, cache)
    forget(scene, 'bracket')


def check_parts(scene, node, uri, cache):
    scene.send_markers([mesh_marker('bracket', 0, uri, xyz=(-0.2, 0.3, 0.3))])
    wait_until(lambda: (hand_to_bracket(scene) or 0.0) < 0.0, what='the hull of the bracket')
    with setting(scene, decomposition_cache=str(cache), decompose_meshes=[L_URI_PATTERN]):
        scene.send_markers([mesh_marker('bracket', 0, uri, xyz=(-0.2, 0.3, 0.3))])
        # The parts in that cache (not CoACD's: they would take seconds) are measured.
        wait_until(lambda: abs((hand_to_bracket(scene) or 0.0) - 0.1) < TOLERANCE,
                   what='the distance to the cached parts', node_process=node)
        wait_until(lambda: entry_message(scene, ': decomposition') == 'all parts ready',
                   what='the decomposition diagnostics')
        with setting(scene, decomposition_timeout=1e-3):
            # New settings: the parts are dropped and CoACD runs, stopped after 1 ms.
            with setting(scene, decomposition_threshold=0.5):
                wait_for_log(node, 'l_shape.stl', 'keeps its hull',
                             'decomposition_timeout (0.001 s)')
                wait_until(lambda: (hand_to_bracket(scene) or 0.0) < 0.0,
                           what='the hull again')


def check_marker_limits(scene, node, tmp_path):
    points = [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0), (0.0, 0.0, 0.1)]
    with setting(scene, max_points=3):
        send_once(scene, [marker('limits', 0, Marker.POINTS, points=points)])
        wait_for_log(node, "'limits/0'", '4 points exceed max_points (3)')
    with setting(scene, max_markers_per_message=2):
        send_once(scene, [box_marker('limits', index) for index in range(3)])
        wait_for_log(node, 'of 3 markers exceeds max_markers_per_message (2)')
    with setting(scene, max_message_bytes=64):   # the republished boxes/0 is bigger
        wait_for_log(node, 'exceeds max_message_bytes (64)')
    forget(scene, 'limits')
    wait_for_status(scene, node, PairStatus.VALID)


def check_mesh_limits(scene, node, tmp_path):
    uri = mesh_file(tmp_path, 'cube.stl', concave=False)   # 12 triangles, 684 bytes
    with setting(scene, max_mesh_bytes=100):
        scene.send_markers([mesh_marker('meshes', 0, uri)])
        wait_for_log(node, 'cube.stl', 'more than the limit of 100')
    forget(scene, 'meshes')
    with setting(scene, max_mesh_triangles=4):
        scene.send_markers([mesh_marker('meshes', 1, uri)])
        wait_for_log(node, 'cube.stl', 'more than the limit of 4')
    forget(scene, 'meshes')


def check_hull_warning_threshold(scene, node, tmp_path):
    uri = mesh_file(tmp_path, 'warned.stl')
    with setting(scene, hull_warning_threshold=0.001), setting(scene, mesh_mode='hull'):
        scene.send_markers([mesh_marker('warned', 0, uri)])
        wait_for_log(node, 'warned.stl', 'beyond the mesh surface')
    forget(scene, 'warned')


def check_text_limits(scene, node, tmp_path):
    nested = '[{name: deep, type: sphere, radius: 0.1, xyz: [0, 0, 0], extra: [[[1]]]}]'
    for limit, value, reason in (('max_parameter_bytes', 40, 'more than the limit of 40'),
                                 ('max_nesting', 2, 'nested deeper than 2'),
                                 ('max_yaml_nodes', 5, 'more than 5 values')):
        with setting(scene, **{limit: value}):
            (answer,) = scene.set_node_parameters([Parameter('static_obstacles',
                                                             value=nested)])
            assert not answer.successful and reason in answer.reason, answer.reason


def check_worker_limits(scene, node, tmp_path):
    # The worker's address-space limit shows in the reason of a stopped job (forcing the worker
    # out of memory takes seconds and depends on the platform's allocator).
    uri = mesh_file(tmp_path, 'slow.stl')
    with setting(scene, ingest_memory_mb=4096), setting(scene, ingest_timeout=1e-4):
        scene.send_markers([mesh_marker('slow', 0, uri)])
        wait_for_log(node, 'took longer than ingest_timeout (0.0001 s)', '(4096 MiB)')
    forget(scene, 'slow')
    wait_for_status(scene, node, PairStatus.VALID)


def check_publish_markers(scene, node, tmp_path):
    scene.wait_for_more('markers', 2)
    with setting(scene, publish_markers=False):
        scene.wait_for_more('distances', 5)   # a message on its way when it was set
        before = scene.count('markers')
        scene.wait_for_more('distances', 20)  # 1 s at 20 Hz: 10 marker messages otherwise
        assert scene.count('markers') == before
    scene.wait_for_more('markers', 2)


def check_solver_options(scene, node, tmp_path):
    with setting(scene, tracking=False):
        wait_until(lambda: entry_value(scene, ': compute', 'cache_hit_rate') == '0.000' and
                   int(entry_value(scene, ': compute', 'computed_piece_pairs')) > 0,
                   what='no warm starts without tracking')
    wait_until(lambda: float(entry_value(scene, ': compute', 'cache_hit_rate')) > 0.5,
               what='warm starts with tracking')
    # Hill climbing changes only the speed: it rebuilds the tracker, the answer stays exact.
    with setting(scene, hill_climbing=False):
        wait_until(lambda: int(entry_value(scene, ': compute', 'rebuilds')) >= 1,
                   what='the tracker rebuilt')
        wait_for_arm_distance(scene, node, ARM_TO_BOX)


def check_swept_distances(scene, node, tmp_path):
    # The arm (a 0.2 m cube at x 0) jumps to x 1 between two TF messages, through boxes/0 (a
    # 0.2 m cube at x 0.5): both samples are 0.3 m apart, the motion overlaps by the full
    # 0.2 m. Only the swept bound sees it, within swept_tolerance (no relative share here), in
    # the one cycle that covers the jump: every cloud is kept.
    clouds = []
    subscription = scene.node.create_subscription(PointCloud2, scene.topics['distances'],
                                                  clouds.append, 100)

    def arm_bounds(cloud):
        record = find_record(read_distances(cloud, scene.message('names')), 'arm', 'boxes/0')
        return (math.nan, math.nan) if record is None else \
            (record.distance, record.swept_distance)
    try:
        with setting(scene, swept_distances=True, swept_tolerance=1e-3,
                     swept_relative_tolerance=0.0):
            scene.wait_for_records(
                lambda records: abs(arm_record(scene).swept_distance - ARM_TO_BOX) < TOLERANCE,
                what='a swept bound equal to the sample of a still arm', node_process=node)
            start = len(clouds)
            scene.send_tf('world', 'arm', (1.0, 0.0, 0.5))
            wait_until(lambda: any(arm_bounds(cloud)[1] < 0.0 for cloud in clouds[start:]),
                       what='contact swept between two samples', node_process=node)
            sample, swept = next(bounds for bounds in map(arm_bounds, clouds[start:])
                                 if bounds[1] < 0.0)
            assert abs(sample - ARM_TO_BOX) < TOLERANCE
            assert -0.2 - 1e-3 - TOLERANCE <= swept <= -0.2 + TOLERANCE
            scene.send_tf('world', 'arm', (0.0, 0.0, 0.5))
            wait_for_arm_distance(scene, node, ARM_TO_BOX)
        scene.wait_for_records(lambda records: math.isnan(arm_record(scene).swept_distance),
                               what='no swept bound once it is off', node_process=node)
    finally:
        scene.node.destroy_subscription(subscription)


EFFECTS = [
    (('fixed_frame',), check_fixed_frame),
    (('rate_hz',), check_rate_hz),
    (('tf_timeout',), check_tf_timeout),
    (('clock_timeout',), check_clock_timeout),
    (('tf_buffer_duration',), check_tf_buffer_duration),
    (('obstacle_timeout', 'static_obstacle_namespaces'), check_freshness),
    (('required_obstacle_sources',), check_required_obstacle_sources),
    (('obstacle_include', 'allow_no_obstacles'), check_empty_scope),
    (('require_robot_description', 'robot_description_timeout'), check_robot_description),
    (('max_distance',), check_max_distance),
    (('link_include', 'link_exclude'), check_link_scope),
    (('obstacle_exclude',), check_obstacle_exclude),
    (('allowed_pairs', 'excluded_pairs'), check_pairs),
    (('padding', 'link_padding', 'obstacle_padding'), check_padding),
    (('self_collision', 'self_collision_in_min_distance'), check_self_collision),
    (('static_obstacles', 'link_geometry'), check_body_texts),
    (('decompose_meshes', 'decomposition_threshold', 'decomposition_timeout',
      'decomposition_cache'), check_decomposition),
    (('max_points', 'max_markers_per_message', 'max_message_bytes'), check_marker_limits),
    (('max_mesh_bytes', 'max_mesh_triangles'), check_mesh_limits),
    (('mesh_mode', 'mesh_mode_overrides', 'max_mesh_pieces'), check_mesh_modes),
    (('hull_warning_threshold',), check_hull_warning_threshold),
    (('max_parameter_bytes', 'max_nesting', 'max_yaml_nodes'), check_text_limits),
    (('ingest_timeout', 'ingest_memory_mb'), check_worker_limits),
    (('publish_markers',), check_publish_markers),
    (('hill_climbing', 'tracking'), check_solver_options),
    (('swept_distances', 'swept_tolerance', 'swept_relative_tolerance'), check_swept_distances),
    # Last: the rejected description stays reported.
    (('max_description_bytes',), check_max_description_bytes),
]


def test_every_parameter_has_a_run_time_check():
    from gjk_ros.ros.params import documented_parameter_names
    from test_node_observation_settings import OBSERVATION_EFFECTS
    from test_node_managed_settings import MANAGED_EFFECTS
    from test_node_planning_scene import PLANNING_SCENE_EFFECTS
    from test_node_separation import SEPARATION_EFFECTS
    from test_node_settings_separation import GROUP_EFFECTS
    checked = [name for names, _ in
               EFFECTS + OBSERVATION_EFFECTS + PLANNING_SCENE_EFFECTS + MANAGED_EFFECTS
               + SEPARATION_EFFECTS + GROUP_EFFECTS for name in names]
    assert sorted(checked) == sorted(documented_parameter_names()), \
        'add a check of its run-time effect to EFFECTS'
    assert len(checked) == len(set(checked))


@pytest.mark.parametrize('names, check', EFFECTS, ids=['+'.join(names) for names, _ in EFFECTS])
def test_setting_at_run_time_takes_effect(scene, node, tmp_path, names, check):
    check(scene, node, tmp_path)
