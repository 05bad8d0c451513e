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
moveit_msgs/CollisionObject to convex pieces, and MoveIt's scene semantics (SceneState).

Each shape type is built from a real message (and from the same dict), placed at an object
pose composed with a shape pose, and measured with the core against a small probe sphere at
points whose exact distance is known in closed form.
"""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.models import ModelError
from gjk_ros.models.collision_objects import (ADD, AllowedCollisions, APPEND,
                                              attached_object, collision_object_pieces, MOVE,
                                              REMOVE, scene_object, scene_update, SceneState)
from gjk_ros.ros.inputs.limits import IngestLimits
from hypothesis import given, settings, strategies
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

moveit_msgs = pytest.importorskip('moveit_msgs.msg')
from geometry_msgs.msg import Point, Point32, Pose  # noqa: E402, I100
from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive  # noqa: E402

PROBE = 0.01
OBJECT_ROTATION = Rotation.from_euler('xyz', (0.3, -0.5, 0.9))
OBJECT_POSITION = np.array([0.4, -0.2, 1.0])
SHAPE_ROTATION = Rotation.from_euler('xyz', (-0.7, 0.2, 0.4))
SHAPE_POSITION = np.array([0.1, 0.05, -0.3])


def pose_message(rotation, position):
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    (pose.orientation.x, pose.orientation.y, pose.orientation.z,
     pose.orientation.w) = (float(v) for v in rotation.as_quat())
    return pose


def shape_to_world():
    """World <- shape frame: the object pose composed with the shape pose."""
    matrix = np.eye(4)
    matrix[:3, :3] = (OBJECT_ROTATION * SHAPE_ROTATION).as_matrix()
    matrix[:3, 3] = OBJECT_POSITION + OBJECT_ROTATION.apply(SHAPE_POSITION)
    return matrix


def collision_object(object_id='thing', primitives=(), meshes=(), planes=(), operation=ADD):
    message = moveit_msgs.CollisionObject()
    message.id = object_id
    message.header.frame_id = 'world'
    message.operation = bytes([operation])  # as rclpy reads a byte field
    message.pose = pose_message(OBJECT_ROTATION, OBJECT_POSITION)
    shape_pose = pose_message(SHAPE_ROTATION, SHAPE_POSITION)
    message.primitives = list(primitives)
    message.primitive_poses = [shape_pose] * len(primitives)
    message.meshes = list(meshes)
    message.mesh_poses = [shape_pose] * len(meshes)
    message.planes = list(planes)
    message.plane_poses = [shape_pose] * len(planes)
    return message


def primitive(kind, dimensions, polygon=()):
    shape = SolidPrimitive(type=kind, dimensions=[float(d) for d in dimensions])
    shape.polygon.points = [Point32(x=float(x), y=float(y), z=0.0) for x, y in polygon]
    return shape


def probe_distance(piece, point_in_shape):
    """Core distance from the piece to a probe sphere at a point given in the shape frame."""
    world = shape_to_world()
    probe_pose = np.eye(4)
    probe_pose[:3, 3] = world[:3, :3] @ point_in_shape + world[:3, 3]
    pose = np.eye(4)  # the piece's frame is 'world'
    return signed_distance(piece.shape, pose @ piece.origin, ConvexPolytope.sphere(PROBE),
                           probe_pose).distance


def as_dict(message):
    """Return a message as rosidl_runtime_py gives it (skip where that package is missing)."""
    # rosidl_runtime_py comes with ../shared/ros-tools, not with the package's dependencies.
    converter = pytest.importorskip('rosidl_runtime_py')
    return converter.message_to_ordereddict(message)


TRIANGLE = [(0.0, 0.0), (0.4, 0.0), (0.0, 0.3)]
TETRAHEDRON = [(0, 0, 0), (0.3, 0, 0), (0, 0.3, 0), (0, 0, 0.3)]
# (shape message, [(point in the shape frame, exact distance to the solid)]).
CASES = {
    'BOX': (primitive(1, (0.2, 0.4, 0.6)),
            [((0.5, 0, 0), 0.4), ((0, -0.5, 0), 0.3), ((0, 0, 0.25), -0.05),
             ((0.3, 0.4, 0.3), math.sqrt(0.2 ** 2 + 0.2 ** 2))]),
    'SPHERE': (primitive(2, (0.25,)), [((0.6, 0, 0), 0.35), ((0, 0.1, 0), -0.15)]),
    # CYLINDER and CONE dimensions are [height, radius].
    'CYLINDER': (primitive(3, (0.6, 0.1)),
                 [((0.5, 0, 0), 0.4), ((0, 0, 0.5), 0.2), ((0, 0.06, 0.2), -0.04)]),
    'CONE': (primitive(4, (0.6, 0.2)),
             [((0, 0, 0.7), 0.4), ((0, 0, -0.5), 0.2), ((0.5, 0, -0.3), 0.3)]),
    'PRISM': (primitive(5, (0.2,), TRIANGLE),
              [((-0.3, 0.1, 0), 0.3), ((0.1, 0.1, 0.4), 0.3), ((0.1, -0.2, 0.05), 0.2)]),
}


def mesh(vertices=TETRAHEDRON, triangles=((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))):
    return Mesh(vertices=[Point(x=float(x), y=float(y), z=float(z)) for x, y, z in vertices],
                triangles=[MeshTriangle(vertex_indices=list(t)) for t in triangles])


def check_case(pieces, expectations):
    assert len(pieces) == 1
    for point, expected in expectations:
        got = probe_distance(pieces[0], np.array(point, dtype=float))
        assert got == pytest.approx(expected - PROBE, abs=1e-6), (point, got, expected)


@pytest.mark.parametrize('name', sorted(CASES))
@pytest.mark.parametrize('form', ['message', 'dict'])
def test_solid_primitive_matches_exact_distances(name, form):
    shape, expectations = CASES[name]
    message = collision_object(primitives=[shape])
    check_case(collision_object_pieces(message if form == 'message' else as_dict(message)),
               expectations)


@pytest.mark.parametrize('form', ['message', 'dict'])
def test_mesh_is_its_hull(form):
    message = collision_object(meshes=[mesh()])
    pieces = collision_object_pieces(message if form == 'message' else as_dict(message))
    # The face x + y + z = 0.3; the corner (0.3, 0, 0); inside, 0.05 below the z = 0 face.
    check_case(pieces, [((0.3, 0.3, 0.3), 0.6 / math.sqrt(3)), ((0.5, 0, 0), 0.2),
                        ((0.05, 0.05, 0.05), -0.05)])


@pytest.mark.parametrize('form', ['message', 'dict'])
def test_plane_is_the_half_space_below_its_equation(form):
    # 2 z - 1 = 0 scaled: the solid is z <= 0.5 of the shape frame, its normal +z.
    message = collision_object(planes=[Plane(coef=[0.0, 0.0, 2.0, -1.0])])
    pieces = collision_object_pieces(message if form == 'message' else as_dict(message))
    check_case(pieces, [((0.3, -4.0, 1.2), 0.7), ((9.0, 2.0, 0.2), -0.3)])


def test_tilted_plane_normal_and_offset():
    # x - y = 0.2 (normalised: offset 0.2 / sqrt 2 along (1, -1, 0) / sqrt 2).
    message = collision_object(planes=[Plane(coef=[1.0, -1.0, 0.0, -0.2])])
    pieces = collision_object_pieces(message)
    check_case(pieces, [((1.0, 0.0, 3.0), 0.8 / math.sqrt(2)),
                        ((0.0, 0.0, 0.0), -0.2 / math.sqrt(2))])


def test_every_shape_of_one_object_is_a_piece_of_it():
    message = collision_object(primitives=[CASES['BOX'][0], CASES['SPHERE'][0]], meshes=[mesh()],
                               planes=[Plane(coef=[0.0, 0.0, 1.0, 0.0])])
    pieces = collision_object_pieces(message)
    assert [piece.body for piece in pieces] == ['thing'] * 4
    assert {piece.frame_id for piece in pieces} == {'world'}


def nan_pose(message):
    message.pose.position.x = float('nan')
    return message


def unit_off(message):
    message.primitive_poses[0].orientation.w = 3.0
    return message


MALFORMED = {
    'unknown shape type': lambda: collision_object(primitives=[primitive(9, (0.1,))]),
    'wrong dimension count': lambda: collision_object(primitives=[primitive(1, (0.1, 0.2))]),
    'zero size': lambda: collision_object(primitives=[primitive(2, (0.0,))]),
    'empty mesh': lambda: collision_object(meshes=[Mesh()]),
    'flat prism': lambda: collision_object(
        primitives=[primitive(5, (0.2,), [(0, 0), (1, 1), (2, 2)])]),
    'mesh index beyond vertices': lambda: collision_object(meshes=[mesh(triangles=[(0, 1, 7)])]),
    'NaN pose': lambda: nan_pose(collision_object(primitives=[CASES['BOX'][0]])),
    'non-unit quaternion': lambda: unit_off(collision_object(primitives=[CASES['BOX'][0]])),
    'zero plane normal': lambda: collision_object(planes=[Plane(coef=[0.0, 0.0, 0.0, 1.0])]),
}


@pytest.mark.parametrize('case', sorted(MALFORMED))
def test_malformed_object_is_rejected_by_its_id(case):
    message = MALFORMED[case]()
    message.id = 'bad_thing'
    with pytest.raises(ModelError) as raised:
        collision_object_pieces(message)
    assert raised.value.body == 'bad_thing'
    assert 'nan' not in raised.value.reason.lower()  # what is wrong, never the values
    _, found = scene_object(message)
    assert found.error and not found.pieces


def test_shape_and_pose_counts_must_agree():
    message = collision_object(primitives=[CASES['BOX'][0]])
    message.primitive_poses = []
    _, found = scene_object(message)
    assert 'primitive_poses: 0 poses for 1 primitives' in found.error


def test_limits_bound_meshes_and_shape_counts():
    limits = IngestLimits(max_points=3)
    _, found = scene_object(collision_object(meshes=[mesh()]), limits=limits)
    assert 'max_points' in found.error
    limits = IngestLimits(max_markers_per_message=1)
    _, found = scene_object(collision_object(primitives=[CASES['BOX'][0]] * 2), limits=limits)
    assert 'max_markers_per_message' in found.error


# -- scene semantics ---------------------------------------------------------------------------


def box_object(object_id, operation=ADD, size=0.2):
    return scene_object(collision_object(object_id, [primitive(1, (size,) * 3)],
                                         operation=operation))


def test_add_replaces_append_extends_move_keeps_shapes():
    state = SceneState()
    assert state.apply_object(*box_object('a')) == []
    assert state.apply_object(*box_object('a', APPEND, 0.1)) == []
    assert len(state.objects['a'].pieces) == 2
    assert state.apply_object(*box_object('a', ADD, 0.3)) == []
    assert len(state.objects['a'].pieces) == 1
    operation, moved = scene_object({'id': 'a', 'operation': MOVE, 'header': {'frame_id': 'x'},
                                     'pose': {'position': {'x': 1.0, 'y': 0.0, 'z': 0.0},
                                              'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0,
                                                              'w': 1.0}}})
    assert state.apply_object(operation, moved) == []
    assert state.objects['a'].frame_id == 'x' and state.objects['a'].pose[0, 3] == 1.0
    assert len(state.objects['a'].pieces) == 1
    assert state.apply_object(*box_object('a', REMOVE)) == []
    assert state.objects == {}


def test_append_to_an_unknown_object_adds_it_as_its_message_says():
    state = SceneState()
    assert state.apply_object(*box_object('new', APPEND)) == []
    assert len(state.objects['new'].pieces) == 1


@pytest.mark.parametrize('operation', [MOVE, REMOVE])
def test_unknown_id_is_reported_and_nothing_changes(operation):
    state = SceneState()
    state.apply_object(*box_object('kept'))
    before = dict(state.objects)
    problems = state.apply_object(*box_object('ghost', operation))
    assert [name for name, _ in problems] == ['ghost']
    assert state.objects == before


def test_remove_with_an_empty_id_clears_the_world():
    state = SceneState()
    state.apply_object(*box_object('a'))
    state.apply_object(*box_object('b'))
    assert state.apply_object(*box_object('', REMOVE)) == []
    assert state.objects == {}


def attached(object_id, link='hand', touch=('finger',), operation=ADD, shapes=True):
    message = moveit_msgs.AttachedCollisionObject(link_name=link, touch_links=list(touch))
    message.object = collision_object(object_id, [primitive(1, (0.1,) * 3)] if shapes else [],
                                      operation=operation)
    message.object.header.frame_id = link
    return attached_object(message)


def test_attach_existing_world_object_then_detach_puts_it_back():
    state = SceneState()
    state.apply_object(*box_object('tool'))
    assert state.apply_attached(*attached('tool', shapes=False)) == []
    assert 'tool' not in state.objects
    held = state.attached['tool']
    assert held.object.resolve_into == 'hand'  # expressed in the hand's frame when attached
    assert state.touch_pairs() == {frozenset(('tool', 'hand')), frozenset(('tool', 'finger'))}
    assert state.resolve(lambda target, source: np.eye(4), 'world')
    assert state.attached['tool'].object.frame_id == 'hand'
    assert state.apply_attached(*attached('tool', operation=REMOVE, shapes=False)) == []
    assert state.objects['tool'].resolve_into == ''  # back in the world, where it is now
    assert state.touch_pairs() == frozenset()


def test_attach_of_unknown_object_without_shapes_is_reported():
    state = SceneState()
    problems = state.apply_attached(*attached('ghost', shapes=False))
    assert [name for name, _ in problems] == ['ghost'] and state.attached == {}


def test_full_scene_replaces_world_and_attached_objects():
    state = SceneState()
    state.apply_object(*box_object('old'))
    state.apply_attached(*attached('old_tool'))
    scene = moveit_msgs.PlanningScene(is_diff=False)
    scene.world.collision_objects = [collision_object('new', [primitive(2, (0.1,))]),
                                     collision_object('old', operation=REMOVE)]
    # Cleared first: a REMOVE of what the full scene no longer holds is reported.
    assert [name for name, _ in state.apply_scene(scene_update(scene))] == ['old']
    assert sorted(state.objects) == ['new'] and state.attached == {}
    diff = moveit_msgs.PlanningScene(is_diff=True)
    diff.world.collision_objects = [collision_object('more', [primitive(2, (0.1,))])]
    state.apply_scene(scene_update(diff))
    assert sorted(state.objects) == ['more', 'new']


def test_diff_attached_objects_apply_by_operation_unless_the_state_is_whole():
    state = SceneState()
    state.apply_attached(*attached('kept'))
    diff = moveit_msgs.PlanningScene(is_diff=True)
    diff.robot_state.is_diff = True
    diff.robot_state.attached_collision_objects = [
        attached_message('more', operation=ADD)]
    state.apply_scene(scene_update(diff))
    assert sorted(state.attached) == ['kept', 'more']
    diff.robot_state.is_diff = False  # a whole robot state: its attached objects are all
    state.apply_scene(scene_update(diff))
    assert sorted(state.attached) == ['more']
    empty = moveit_msgs.PlanningScene(is_diff=True)  # no robot state: nothing changes
    state.apply_scene(scene_update(empty))
    assert sorted(state.attached) == ['more']


def attached_message(object_id, operation=ADD):
    message = moveit_msgs.AttachedCollisionObject(link_name='hand')
    message.object = collision_object(object_id, [primitive(1, (0.1,) * 3)],
                                      operation=operation)
    return message


def matrix_message(names, values, default_names=(), default_values=()):
    matrix = moveit_msgs.AllowedCollisionMatrix(entry_names=list(names),
                                                default_entry_names=list(default_names),
                                                default_entry_values=list(default_values))
    matrix.entry_values = [moveit_msgs.AllowedCollisionEntry(enabled=list(row))
                           for row in values]
    return matrix


def test_allowed_collision_matrix_entries_and_defaults_as_moveit_reads_them():
    matrix = AllowedCollisions.from_message(matrix_message(
        ['arm', 'table', 'hand'], [[False, True, False], [True, False, False],
                                   [False, False, False]], ['floor', 'arm'], [True, False]))
    assert matrix.allows('arm', 'table') and matrix.allows('table', 'arm')
    assert not matrix.allows('hand', 'table')      # an entry decides, before any default
    assert matrix.allows('floor', 'hand')          # only floor has a default: it decides
    assert not matrix.allows('floor', 'arm')       # both defaults: allowed only if both allow
    assert not matrix.allows('cup', 'hand')        # nothing said: checked


def test_asymmetric_entry_is_allowed_only_if_both_triangles_say_so():
    matrix = AllowedCollisions.from_message(matrix_message(['a', 'b'],
                                                           [[False, True], [False, False]]))
    assert not matrix.allows('a', 'b')


def test_malformed_matrix_is_reported_and_not_applied():
    scene = moveit_msgs.PlanningScene(is_diff=True)
    scene.allowed_collision_matrix = matrix_message(['a', 'b'], [[False]])
    update = scene_update(scene)
    assert update.matrix is None
    assert [name for name, _ in update.problems] == ['allowed_collision_matrix']


# -- the planner API ---------------------------------------------------------------------------


@pytest.mark.parametrize('form', ['message', 'dict'])
def test_planner_takes_collision_objects_as_obstacles(form):
    from gjk_ros.planning import Obstacle, RobotDistances
    from test_planning import _configurations, ARM_URDF, SRDF
    crate = collision_object('crate', [CASES['BOX'][0], CASES['CYLINDER'][0]])
    described = Obstacle('crate', [
        {'type': 'box', 'size': [0.2, 0.4, 0.6], 'xyz': list(SHAPE_POSITION),
         'rpy': list(SHAPE_ROTATION.as_euler('xyz'))},
        {'type': 'cylinder', 'radius': 0.1, 'length': 0.6, 'xyz': list(SHAPE_POSITION),
         'rpy': list(SHAPE_ROTATION.as_euler('xyz'))}], object_to_world())
    given = crate if form == 'message' else as_dict(crate)
    from_scene = RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=[given])
    reference = RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=[described])
    assert from_scene.obstacles == ('crate',)
    for q in _configurations(5, seed=3):
        np.testing.assert_allclose(from_scene.distances(q).distance,
                                   reference.distances(q).distance, atol=1e-9)


def object_to_world():
    matrix = np.eye(4)
    matrix[:3, :3] = OBJECT_ROTATION.as_matrix()
    matrix[:3, 3] = OBJECT_POSITION
    return matrix


def test_planner_rejects_a_malformed_collision_object_by_its_id():
    from gjk_ros.planning import Obstacle
    with pytest.raises(ModelError) as raised:
        Obstacle.from_collision_object(MALFORMED['empty mesh']())
    assert raised.value.body == 'thing'


# -- MoveIt's distance API on the same scenes (docs/planning_scene.md) --------------------------


def moveit_signed_distance(fcl, first, second):
    """
    Return what MoveIt's FCL distance callback reports for a pair, unsigned and signed.

    As ``distanceCallback`` (moveit_core/collision_detection_fcl/src/collision_common.cpp):
    ``fcl::distance``; when that is <= 0 and signed distance is asked for, ``fcl::collide``
    for up to 200 contacts and minus the largest penetration depth, both nearest points at
    that contact's position.
    """
    result = fcl.DistanceResult()
    unsigned = fcl.distance(first, second, fcl.DistanceRequest(enable_nearest_points=True),
                            result)
    if unsigned > 0:
        return unsigned, (unsigned, result.nearest_points)
    contacts = fcl.CollisionResult()
    fcl.collide(first, second, fcl.CollisionRequest(num_max_contacts=200, enable_contact=True),
                contacts)
    if not contacts.contacts:
        return unsigned, (unsigned, result.nearest_points)
    deepest = max(contacts.contacts, key=lambda contact: contact.penetration_depth)
    return unsigned, (-deepest.penetration_depth, [deepest.pos, deepest.pos])


def test_moveit_side_by_side():
    fcl = pytest.importorskip('fcl')
    cube = ConvexPolytope.box([0.1, 0.1, 0.1])
    # Two 0.2 m cubes, centres 0.15 m apart along x and 0.03 m along y.
    offset = np.array([0.15, 0.03, 0.0])
    ours = signed_distance(cube, np.eye(4), cube, translation(offset))
    unsigned, (signed, points) = moveit_signed_distance(
        fcl, fcl_object(fcl, fcl.Box(0.2, 0.2, 0.2), np.zeros(3)),
        fcl_object(fcl, fcl.Box(0.2, 0.2, 0.2), offset))
    assert unsigned == -1.0                                  # the sentinel
    assert signed == pytest.approx(ours.distance) == pytest.approx(-0.05)
    np.testing.assert_array_equal(points[0], points[1])      # one point for both bodies
    np.testing.assert_allclose(ours.witness_b - ours.witness_a, ours.distance * ours.normal,
                               atol=1e-12)                   # two witnesses, the MTD apart
    assert ours.witness_a[0] == pytest.approx(0.1) and ours.witness_b[0] == pytest.approx(0.05)
    # A 0.2 m cube inside a closed 1 m cube mesh: MoveIt sees the mesh surface 0.3 m away.
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    triangles = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    model = fcl.BVHModel()
    model.beginModel(len(corners), len(triangles))
    model.addSubModel(corners, triangles)
    model.endModel()
    inside = np.array([0.1, 0.0, 0.0])
    unsigned, (signed, _) = moveit_signed_distance(
        fcl, fcl_object(fcl, model, np.zeros(3)), fcl_object(fcl, fcl.Box(0.2, 0.2, 0.2), inside))
    assert unsigned == pytest.approx(0.3) and signed == pytest.approx(0.3)
    mesh_object = {'id': 'bin', 'meshes': [{
        'vertices': [{'x': x, 'y': y, 'z': z} for x, y, z in corners],
        'triangles': [{'vertex_indices': list(t)} for t in triangles]}]}
    (piece,) = collision_object_pieces(mesh_object)
    assert signed_distance(piece.shape, piece.origin, cube, translation(inside)).distance == \
        pytest.approx(-0.5)


def translation(offset):
    matrix = np.eye(4)
    matrix[:3, 3] = offset
    return matrix


def fcl_object(fcl, geometry, offset):
    return fcl.CollisionObject(geometry, fcl.Transform(np.eye(3), np.asarray(offset, float)))


def test_demo_collision_objects_are_its_markers():
    from gjk_ros.demo.scene import demo_scene_config, make_collision_object, make_marker
    from gjk_ros.models import marker_to_piece
    from rclpy.time import Time
    stamp = Time().to_msg()
    probes = np.random.default_rng(7).uniform(-1.0, 1.0, (20, 3))
    for spec in demo_scene_config().obstacles:
        (ours,) = collision_object_pieces(make_collision_object(spec, stamp))
        marker = marker_to_piece(make_marker(spec, stamp))
        assert ours.body == marker.body and ours.frame_id == marker.frame_id
        for probe in probes:
            pose = translation(probe)
            sphere = ConvexPolytope.sphere(0.01)
            assert signed_distance(ours.shape, ours.origin, sphere, pose).distance == \
                pytest.approx(signed_distance(marker.shape, marker.origin, sphere,
                                              pose).distance, abs=1e-9)


@pytest.mark.parametrize('name, build, factor', [
    ('box', lambda s: ConvexPolytope.box([0.1 * s, 0.2 * s, 0.3 * s]), 1.5),
    ('sphere', lambda s: ConvexPolytope.sphere(0.2 * s), 0.5),
    ('cylinder', lambda s: ConvexPolytope.cylinder(0.1 * s, 0.4 * s), 2.0),
    ('cone', lambda s: ConvexPolytope.cone(0.1 * s, 0.4 * s), 1.2),
    ('capsule', lambda s: ConvexPolytope.capsule(0.05 * s, 0.3 * s), 3.0),
])
def test_link_scale_is_the_primitive_with_scaled_sizes(name, build, factor):
    from gjk_ros.models.collision_objects import scaled_shape
    scaled, expected = scaled_shape(build(1.0), factor), build(factor)
    sphere = ConvexPolytope.sphere(0.01)
    for probe in np.random.default_rng(11).uniform(-1.0, 1.0, (30, 3)):
        pose = translation(probe)
        assert signed_distance(scaled, np.eye(4), sphere, pose).distance == pytest.approx(
            signed_distance(expected, np.eye(4), sphere, pose).distance, abs=1e-9), name


def test_link_scale_of_a_mesh_hull_is_about_its_vertex_mean():
    from gjk_ros.models.collision_objects import scaled_shape
    corners = np.array(TETRAHEDRON, dtype=float)
    scaled = scaled_shape(ConvexPolytope.from_points(corners), 2.0)
    centre = corners.mean(axis=0)
    np.testing.assert_allclose(np.sort(scaled.vertices, axis=0),
                               np.sort(centre + 2.0 * (corners - centre), axis=0))


# -- property: a collision object is the described solid at the composed pose ------------------

_SIZES = strategies.floats(0.02, 1.0)
_ANGLES = strategies.lists(strategies.floats(-math.pi, math.pi), min_size=3, max_size=3)
_OFFSETS = strategies.lists(strategies.floats(-1.0, 1.0), min_size=3, max_size=3)


@settings(max_examples=30)
@given(kind=strategies.sampled_from(['BOX', 'SPHERE', 'CYLINDER', 'CONE']),
       sizes=strategies.lists(_SIZES, min_size=3, max_size=3),
       object_rpy=_ANGLES, object_xyz=_OFFSETS, shape_rpy=_ANGLES, shape_xyz=_OFFSETS,
       probe=_OFFSETS)
def test_collision_object_is_the_described_solid(kind, sizes, object_rpy, object_xyz,
                                                 shape_rpy, shape_xyz, probe):
    from gjk_ros.models import piece_from_description
    dimensions = {'BOX': sizes, 'SPHERE': sizes[:1], 'CYLINDER': sizes[:2],
                  'CONE': sizes[:2]}[kind]
    code = {'BOX': 1, 'SPHERE': 2, 'CYLINDER': 3, 'CONE': 4}[kind]
    message = moveit_msgs.CollisionObject(id='thing')
    message.header.frame_id = 'world'
    message.pose = pose_message(Rotation.from_euler('xyz', object_rpy), object_xyz)
    message.primitives = [primitive(code, dimensions)]
    message.primitive_poses = [pose_message(Rotation.from_euler('xyz', shape_rpy), shape_xyz)]
    (piece,) = collision_object_pieces(message)
    description = {'BOX': {'type': 'box', 'size': sizes},
                   'SPHERE': {'type': 'sphere', 'radius': sizes[0]},
                   'CYLINDER': {'type': 'cylinder', 'length': sizes[0], 'radius': sizes[1]},
                   'CONE': {'type': 'cone', 'length': sizes[0], 'radius': sizes[1]}}[kind]
    placed = dict(description, xyz=shape_xyz, rpy=shape_rpy)
    described = piece_from_description('thing', 'world', placed)
    object_pose = np.eye(4)
    object_pose[:3, :3] = Rotation.from_euler('xyz', object_rpy).as_matrix()
    object_pose[:3, 3] = object_xyz
    sphere = ConvexPolytope.sphere(0.05)
    got = signed_distance(piece.shape, piece.origin, sphere, translation(probe)).distance
    expected = signed_distance(described.shape, object_pose @ described.origin, sphere,
                               translation(probe)).distance
    assert got == pytest.approx(expected, abs=1e-7)
