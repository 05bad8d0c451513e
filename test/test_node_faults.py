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
Faults: the node stays up, reports each problem once by name and keeps serving healthy pairs.

One node process serves the module. A healthy obstacle (``healthy/0``, fixed in ``world``) is
always present, so every test can check that good pairs are still VALID while it breaks
something else. Each problem must appear exactly once in the node's log after several more
cycles, and as a diagnostics entry where the node publishes one.
"""

import math
import os

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, DiagnosticStatus, find_record, Marker, marker, matrix,
                          NodeProcess, Scene, session_domain_id, STARTUP_TIMEOUT, wait_until)
import pytest

pytestmark = pytest.mark.ros

TF_TIMEOUT = 0.5
HEALTHY = 'healthy/0'
HEALTHY_CENTRE = (0.0, 0.5, 0.0)
URDF = box_urdf('faultbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    """Start one distance node for the module, always stopped at the end."""
    with NodeProcess(os.environ, tmp_path_factory.mktemp('faults'),
                     {'rate_hz': 20.0, 'tf_timeout': TF_TIMEOUT}) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    """Publish the arm on a static frame and one healthy obstacle; wait until measured."""
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('healthy', 0, xyz=HEALTHY_CENTRE)])
        scene.wait_for_records(healthy_is_valid, STARTUP_TIMEOUT, 'the healthy pair',
                               node_process=node)
        yield scene


@pytest.fixture
def namespace(scene, request):
    """Give the test a marker namespace of its own, cleared afterwards."""
    yield request.node.name
    scene.send_markers([marker(request.node.name, 0, action=Marker.DELETEALL)])


def healthy_is_valid(records):
    """Check that the healthy pair has the distance the core computes for it."""
    record = find_record(records, 'arm', HEALTHY)
    truth = signed_distance(ConvexPolytope.box([0.1] * 3), matrix(),
                            ConvexPolytope.box([0.05] * 3), matrix(HEALTHY_CENTRE))
    return record is not None and record.status == PairStatus.VALID and \
        abs(record.distance - truth.distance) < 1e-9


def status_of(name, status, link='arm'):
    """Predicate: the (link, name) record has ``status``."""
    def check(records):
        record = find_record(records, link, name)
        return record is not None and record.status == status
    return check


def assert_reported_once(scene, node, *fragments):
    """After a few more cycles, exactly one log line holds every fragment; node still up."""
    wait_until(lambda: node.lines_with(*fragments), what='a log line with %s' % (fragments,))
    scene.wait_for_more('distances', count=10)
    scene.wait_for_more('diagnostics', count=2)
    assert node.alive()
    assert len(node.lines_with(*fragments)) == 1, node.output()


def assert_unmeasured(record):
    """Check that a record that is not a measurement carries NaN, not a made-up number."""
    assert math.isnan(record.distance)
    assert all(math.isnan(v) for v in record.point_on_link)


def test_tf_stops_then_resumes(scene, node, namespace):
    name = namespace + '/0'
    scene.send_tf('world', 'conveyor', (0.6, 0.0, 0.0))
    scene.send_markers([marker(namespace, 0, frame_id='conveyor', frame_locked=True)])
    scene.wait_for_records(status_of(name, PairStatus.VALID), node_process=node)
    scene.pause_tf()
    try:
        records = scene.wait_for_records(status_of(name, PairStatus.STALE),
                                         what='the pair to go stale', node_process=node)
        assert healthy_is_valid(records)
        assert_unmeasured(find_record(records, 'arm', name))
        wait_until(lambda: scene.message('min_distance').data == -math.inf,
                   what='min_distance to fail safe (-inf)')
    finally:
        scene.pause_tf(False)
    scene.wait_for_records(status_of(name, PairStatus.VALID), what='recovery',
                           node_process=node)
    assert_reported_once(scene, node, "'conveyor'", 'older than tf_timeout')
    assert len(node.lines_with("frame 'conveyor' recovered")) == 1
    scene.forget_tf('conveyor')


def test_nan_pose_is_invalid_and_recovers(scene, node, namespace):
    name = namespace + '/0'
    scene.send_markers([marker(namespace, 0, frame_id='nan_frame', frame_locked=True)])
    scene.send_tf('world', 'nan_frame', (math.nan, 0.0, 0.0))
    records = scene.wait_for_records(status_of(name, PairStatus.INVALID), node_process=node)
    assert healthy_is_valid(records)
    assert_unmeasured(find_record(records, 'arm', name))
    assert_reported_once(scene, node, 'invalid transform (non-finite', "'nan_frame'")
    scene.send_tf('world', 'nan_frame', (0.7, 0.0, 0.0))
    scene.wait_for_records(status_of(name, PairStatus.VALID), what='recovery',
                           node_process=node)
    scene.forget_tf('nan_frame')


def test_unknown_frame_is_stale(scene, node, namespace):
    name = namespace + '/0'
    scene.send_markers([marker(namespace, 0, frame_id='no_such_frame', frame_locked=True)])
    records = scene.wait_for_records(status_of(name, PairStatus.STALE), node_process=node)
    assert healthy_is_valid(records)
    assert_reported_once(scene, node, "unknown frame 'no_such_frame'")
    inputs = scene.diagnostic_statuses()['gjk_distance: inputs']
    assert inputs.level == DiagnosticStatus.WARN and 'no_such_frame' in inputs.message


@pytest.mark.parametrize('bad_marker, reason', [
    ({'marker_type': Marker.TRIANGLE_LIST, 'points': ()}, 'TRIANGLE_LIST'),
    ({'marker_type': Marker.MESH_RESOURCE, 'mesh_resource': 'file:///no/such/mesh.stl',
      'scale': (1.0, 1.0, 1.0)}, '/no/such/mesh.stl'),
    ({'marker_type': Marker.TEXT_VIEW_FACING}, 'TEXT_VIEW_FACING'),
], ids=['empty_mesh', 'missing_mesh_file', 'unknown_type'])
def test_bad_marker_is_rejected_once(scene, node, namespace, bad_marker, reason):
    name = namespace + '/0'
    scene.send_markers([marker(namespace, 0, xyz=(0.5, 0.0, 0.0), **bad_marker)])
    records = scene.wait_for_records(status_of(name, PairStatus.INVALID), node_process=node)
    assert healthy_is_valid(records)
    assert_unmeasured(find_record(records, 'arm', name))
    # The same bad marker again is the same problem: still one line.
    scene.send_markers([marker(namespace, 0, xyz=(0.5, 0.0, 0.0), **bad_marker)])
    assert_reported_once(scene, node, "obstacle '%s' rejected" % name, reason)
    entry = scene.diagnostic_statuses()['gjk_distance: rejected obstacle %s' % name]
    assert entry.level == DiagnosticStatus.ERROR and reason in entry.message


def test_malformed_urdf_keeps_the_previous_model(scene, node):
    scene.send_urdf('<robot name="broken"><link name="arm">')
    assert_reported_once(scene, node, 'robot_description rejected')
    records = scene.wait_for_records(healthy_is_valid, node_process=node)
    assert find_record(records, 'arm', HEALTHY).status == PairStatus.VALID
    entry = scene.diagnostic_statuses()['gjk_distance: robot_description']
    assert entry.level == DiagnosticStatus.ERROR
    scene.send_urdf(URDF)
    wait_until(lambda: 'gjk_distance: robot_description' not in scene.diagnostic_statuses(),
               what='the robot_description error to clear')


def test_urdf_link_with_missing_mesh(scene, node):
    mesh = '<mesh filename="file:///no/such/gripper.stl"/>'
    urdf = box_urdf('faultbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))],
                                 'gripper': [(mesh, (), (0.0, 0.0, 0.0))]})
    scene.send_static_tf('world', 'gripper', (0.0, -0.5, 0.0))
    scene.send_urdf(urdf)
    try:
        records = scene.wait_for_records(status_of(HEALTHY, PairStatus.INVALID, 'gripper'),
                                         node_process=node)
        assert healthy_is_valid(records)
        assert_reported_once(scene, node, "link 'gripper' rejected", 'gripper.stl')
        entry = scene.diagnostic_statuses()['gjk_distance: link gripper']
        assert entry.level == DiagnosticStatus.ERROR
    finally:
        scene.send_urdf(URDF)


def test_marker_flood(scene, node, namespace):
    """10,000 messages: the node keeps up, ends on the last pose, logs the bad one once."""
    name, bad = namespace + '/0', namespace + '/1'
    count = 10_000
    for step in range(count):
        x = 0.3 + 0.5 * step / (count - 1)
        scene.send_markers([marker(namespace, 0, xyz=(x, 0.0, 0.0)),
                            marker(namespace, 1, marker_type=Marker.TEXT_VIEW_FACING)])
    final = signed_distance(ConvexPolytope.box([0.1] * 3), matrix(),
                            ConvexPolytope.box([0.05] * 3), matrix((0.8, 0.0, 0.0)))

    def settled(records):
        record = find_record(records, 'arm', name)
        return record is not None and abs(record.distance - final.distance) < 1e-9
    records = scene.wait_for_records(settled, timeout=30.0, what='the last flood pose',
                                     node_process=node)
    assert healthy_is_valid(records)
    assert find_record(records, 'arm', bad).status == PairStatus.INVALID
    assert_reported_once(scene, node, "obstacle '%s' rejected" % bad)
