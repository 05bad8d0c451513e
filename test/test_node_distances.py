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
The gjk_distance node as a process, against the core computed directly on the same poses.

One node process serves the whole module (start-up and discovery cost seconds); each test
uses its own obstacle namespace and clears it afterwards. The robot: ``arm`` is a 0.2 m cube
on a dynamic frame, ``hand`` has two collision pieces (a box and a sphere), ``base`` has none.
"""

import math
import os

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, Marker, marker, matrix, NodeProcess,
                          Parameter, Scene, session_domain_id, STARTUP_TIMEOUT, wait_until)
import numpy
import pytest

pytestmark = pytest.mark.ros

ARM_HALF = 0.1
HAND_BOX = ((0.1, 0.1, 0.1), (0.0, 0.0, 0.0))       # full size, offset in 'hand'
HAND_SPHERE = (0.05, (0.0, 0.3, 0.0))               # radius, offset in 'hand'
ARM_POSE = ((0.0, 0.0, 0.5), (0.0, 0.0, 0.0, 1.0))   # world <- arm (dynamic)
HAND_POSE = ((1.0, 0.0, 0.5), (0.0, 0.0, 0.3826834323650898, 0.9238795325112867))
TOLERANCE = 1e-9

# A static obstacle from the parameter file, in YAML: a slab under the arm.
SLAB = {'size': (0.6, 0.6, 0.02), 'xyz': (0.0, 0.0, -0.3)}
STATIC_OBSTACLES = """
- name: slab
  frame_id: base
  pieces:
    - {type: box, size: [0.6, 0.6, 0.02], xyz: [0.0, 0.0, -0.3]}
"""

URDF = box_urdf('testbot', {
    'base': [],
    'arm': [('box', (2 * ARM_HALF,) * 3, (0.0, 0.0, 0.0))],
    'hand': [('box', HAND_BOX[0], HAND_BOX[1]), ('sphere', (HAND_SPHERE[0],), HAND_SPHERE[1])],
})


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    """Start one distance node for the module, always stopped at the end."""
    with NodeProcess(os.environ, tmp_path_factory.mktemp('node'),
                     {'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 5.0,
                      'static_obstacles': STATIC_OBSTACLES}) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    """Publish the robot once and wait until the node lists its links."""
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'base')
        scene.send_tf('world', 'arm', *ARM_POSE)
        scene.send_tf('base', 'hand', *HAND_POSE)
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        wait_until(lambda: {'arm', 'hand'} <= set(scene.name_list('links')),
                   STARTUP_TIMEOUT, 'the links on ~/names', node_process=node)
        yield scene


@pytest.fixture
def namespace(scene, request):
    """Give the test a marker namespace of its own, cleared afterwards."""
    name = request.node.name.replace('[', '_').replace(']', '')
    yield name
    scene.send_markers([marker(name, 0, action=Marker.DELETEALL)])


def cube_obstacle(half, xyz):
    return ConvexPolytope.box([half, half, half]), matrix(xyz)


def expected(shape_a, pose_a, shape_b, pose_b):
    return signed_distance(shape_a, pose_a, shape_b, pose_b)


def arm():
    return ConvexPolytope.box([ARM_HALF] * 3), matrix(*ARM_POSE)


def matches(record, result):
    """Check the signed distance, and witness points consistent with it and the normal."""
    if record is None or record.status != PairStatus.VALID:
        return False
    gap = record.point_on_obstacle - record.point_on_link
    return (abs(record.distance - result.distance) <= TOLERANCE
            and numpy.allclose(gap, record.distance * record.normal, atol=TOLERANCE)
            and abs(numpy.linalg.norm(record.normal) - 1.0) <= TOLERANCE)


def wait_for_pair(scene, node, link, obstacle, result):
    return scene.wait_for_records(
        lambda records: matches(find_record(records, link, obstacle), result),
        what='%s-%s at %r' % (link, obstacle, result.distance), node_process=node)


@pytest.mark.parametrize('gap', [0.3, 0.0, -0.04], ids=['apart', 'touching', 'overlapping'])
def test_link_and_cube(scene, node, namespace, gap):
    half = 0.05
    centre = (ARM_POSE[0][0] + ARM_HALF + half + gap, 0.0, ARM_POSE[0][2])
    scene.send_markers([marker(namespace, 0, xyz=centre, scale=(2 * half,) * 3)])
    result = expected(*arm(), *cube_obstacle(half, centre))
    assert abs(result.distance - gap) < 1e-9  # the scene is what the test says it is
    records = wait_for_pair(scene, node, 'arm', namespace + '/0', result)
    record = find_record(records, 'arm', namespace + '/0')
    if gap != 0.0:
        # Apart or overlapping across one face: the normal is that face's normal.
        assert numpy.allclose(record.normal, [1.0, 0.0, 0.0], atol=1e-9)
    # ~/min_distance is a separate topic: its message of the same cycle may lag the cloud.
    wait_until(lambda: scene.message('min_distance') is not None and
               scene.message('min_distance').data <= record.distance + TOLERANCE,
               what='~/min_distance to cover the pair', node_process=node)


def test_moving_obstacle_frame(scene, node, namespace):
    half = 0.04
    # frame_locked: the obstacle moves with its frame (false would leave it where first seen).
    scene.send_markers([marker(namespace, 0, frame_id='mover', xyz=(0.0, 0.1, 0.0),
                               scale=(2 * half,) * 3, frame_locked=True)])
    shape = ConvexPolytope.box([half] * 3)
    try:
        for frame_xyz in [(0.5, 0.0, 0.5), (0.3, -0.2, 0.6), (0.12, 0.0, 0.5)]:
            scene.send_tf('world', 'mover', frame_xyz, (0.0, 0.0, 0.2588190451, 0.9659258263))
            pose = matrix(frame_xyz, (0.0, 0.0, 0.2588190451, 0.9659258263)) @ \
                matrix((0.0, 0.1, 0.0))
            wait_for_pair(scene, node, 'arm', namespace + '/0',
                          expected(*arm(), shape, pose))
    finally:
        scene.forget_tf('mover')


def test_obstacle_added_modified_deleted(scene, node, namespace):
    name = namespace + '/7'
    centre = (0.6, 0.3, 0.5)
    scene.send_markers([marker(namespace, 7, marker_type=Marker.SPHERE, xyz=centre,
                               scale=(0.2, 0.2, 0.2))])
    sphere = ConvexPolytope.sphere(0.1)
    wait_for_pair(scene, node, 'arm', name, expected(*arm(), sphere, matrix(centre)))
    obstacle_id = find_record(scene.records(), 'arm', name).obstacle_id

    scene.send_markers([marker(namespace, 7, marker_type=Marker.SPHERE, xyz=centre,
                               scale=(0.5, 0.5, 0.5))])
    wait_for_pair(scene, node, 'arm', name,
                  expected(*arm(), ConvexPolytope.sphere(0.25), matrix(centre)))

    scene.send_markers([marker(namespace, 7, action=Marker.DELETE)])
    records = scene.wait_for_records(lambda records: find_record(records, 'arm', name) is None,
                                     what='%s deleted' % name, node_process=node)
    assert find_record(records, 'hand', name) is None
    # Bounded names: the deleted obstacle leaves ~/names; its id is never given to another.
    wait_until(lambda: name not in scene.name_list('obstacles'), what='%s off ~/names' % name)
    scene.send_markers([marker(namespace, 7, marker_type=Marker.SPHERE, xyz=centre,
                               scale=(0.2, 0.2, 0.2))])
    records = wait_for_pair(scene, node, 'arm', name, expected(*arm(), sphere, matrix(centre)))
    assert find_record(records, 'arm', name).obstacle_id > obstacle_id


def test_obstacle_expires(scene, node, namespace):
    name = namespace + '/1'
    centre = (0.0, 0.6, 0.5)
    # Sent once, while the source keeps publishing another marker: the lifetime alone
    # removes it, as in RViz (a source that died would leave it STALE: test_node_failsafe).
    scene.send_markers([marker(namespace, 1, xyz=centre, scale=(0.1, 0.1, 0.1), lifetime=1.5)],
                       repeat=False)
    scene.send_markers([marker(namespace, 9, xyz=(5.0, 5.0, 5.0))])
    wait_for_pair(scene, node, 'arm', name,
                  expected(*arm(), *cube_obstacle(0.05, centre)))
    scene.wait_for_records(lambda records: find_record(records, 'arm', name) is None,
                           what='%s to expire' % name, node_process=node)
    scene.send_markers([marker(namespace, 9, action=Marker.DELETE)])


def test_link_with_two_pieces_uses_the_closest(scene, node, namespace):
    name = namespace + '/0'
    hand = matrix(*HAND_POSE)
    box = ConvexPolytope.box(numpy.array(HAND_BOX[0]) / 2)
    sphere = ConvexPolytope.sphere(HAND_SPHERE[0])
    box_pose, sphere_pose = hand @ matrix(HAND_BOX[1]), hand @ matrix(HAND_SPHERE[1])
    # An obstacle beside the sphere piece, far from the box piece.
    centre = (sphere_pose @ [0.0, 0.0, 0.15, 1.0])[:3]
    cube = ConvexPolytope.box([0.05] * 3)
    to_box = expected(box, box_pose, cube, matrix(centre))
    to_sphere = expected(sphere, sphere_pose, cube, matrix(centre))
    assert to_sphere.distance < to_box.distance - 0.05
    scene.send_markers([marker(namespace, 0, xyz=centre)])
    wait_for_pair(scene, node, 'hand', name, to_sphere)


def test_outputs_agree(scene, node, namespace):
    """min_distance is the smallest record, markers show a segment per measured record."""
    scene.send_markers([marker(namespace, 0, xyz=(0.0, -0.4, 0.5))])
    wait_for_pair(scene, node, 'arm', namespace + '/0',
                  expected(*arm(), *cube_obstacle(0.05, (0.0, -0.4, 0.5))))
    scene.wait_for_more('distances')

    def consistent():
        cloud_count = scene.count('distances')
        records, minimum = scene.records(), scene.message('min_distance')
        markers = scene.message('markers')
        if scene.count('distances') != cloud_count or minimum is None or markers is None:
            return False
        measured = [r for r in records if r.status == PairStatus.VALID]
        segments = [m for m in markers.markers if m.ns == 'witness_segments']
        hulls = {m.ns for m in markers.markers if m.type == m.TRIANGLE_LIST}
        return (math.isclose(minimum.data, min(r.distance for r in measured), abs_tol=1e-12)
                and len(segments) == 1 and len(segments[0].points) == 2 * len(measured)
                and hulls == {'link_hulls', 'obstacle_hulls'})
    wait_until(consistent, what='~/min_distance and ~/markers to agree with ~/distances')
    cloud = scene.message('distances')
    assert cloud.header.frame_id == 'world' and cloud.height == 1
    assert cloud.width == len(scene.records())


def test_filters_change_at_run_time(scene, node, namespace):
    name = namespace + '/0'
    centre = (0.0, 0.0, 1.0)
    scene.send_markers([marker(namespace, 0, xyz=centre)])
    wait_for_pair(scene, node, 'arm', name, expected(*arm(), *cube_obstacle(0.05, centre)))
    (result,) = scene.set_node_parameters([Parameter('obstacle_exclude',
                                                     value=[namespace + '/*'])])
    assert result.successful
    scene.wait_for_records(lambda records: find_record(records, 'arm', name) is None,
                           what='the excluded obstacle to go', node_process=node)
    (result,) = scene.set_node_parameters([Parameter('allowed_pairs', value=['no colon'])])
    assert not result.successful and 'link_pattern:obstacle_pattern' in result.reason
    (result,) = scene.set_node_parameters([Parameter('obstacle_exclude', value=[]),
                                           Parameter('allowed_pairs', value=['hand:*'])])[:1]
    assert result.successful
    records = scene.wait_for_records(lambda records: find_record(records, 'hand', name),
                                     what='the obstacle back, hand only', node_process=node)
    assert find_record(records, 'arm', name) is None
    (result,) = scene.set_node_parameters([Parameter('allowed_pairs', value=[])])
    assert result.successful
    wait_for_pair(scene, node, 'arm', name, expected(*arm(), *cube_obstacle(0.05, centre)))


def test_static_obstacle_from_parameters(scene, node):
    slab = ConvexPolytope.box(numpy.array(SLAB['size']) / 2)
    wait_for_pair(scene, node, 'arm', 'slab', expected(*arm(), slab, matrix(SLAB['xyz'])))


def test_links_marker_adds_a_piece_to_its_frame_link(scene, node, namespace):
    """A tool on ~/links belongs to the link of its frame: the arm's distance uses it."""
    tool_xyz, centre = (0.0, 0.0, 0.25), (0.0, 0.0, 1.0)
    scene.send_markers([marker(namespace, 0, xyz=centre)])
    cube = cube_obstacle(0.05, centre)
    wait_for_pair(scene, node, 'arm', namespace + '/0', expected(*arm(), *cube))
    scene.send_markers([marker('tool', 0, marker_type=Marker.SPHERE, frame_id='arm',
                               xyz=tool_xyz, scale=(0.2, 0.2, 0.2))], topic='links')
    try:
        tool_pose = matrix(*ARM_POSE) @ matrix(tool_xyz)
        with_tool = expected(ConvexPolytope.sphere(0.1), tool_pose, *cube)
        assert with_tool.distance < expected(*arm(), *cube).distance - 0.1
        wait_for_pair(scene, node, 'arm', namespace + '/0', with_tool)
        assert 'tool/0' not in scene.name_list('links')  # the tool is not a link of its own
    finally:
        scene.send_markers([marker('tool', 0, action=Marker.DELETE)], topic='links')
    wait_for_pair(scene, node, 'arm', namespace + '/0', expected(*arm(), *cube))
