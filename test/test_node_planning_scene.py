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
MoveIt's planning scene through the real node: real moveit_msgs messages on the real topics.

One node serves the module (``planning_scene`` true, self-collision on). The robot comes from
``link_geometry``: ``arm`` a 0.2 m cube at (0, 0, 0.5), ``hand`` a 0.1 m cube at (0, 0.3, 0.5).
Every test starts from an empty full scene (which is itself the full-scene replacement check).
``PLANNING_SCENE_EFFECTS`` joins test_node_settings' every-parameter check.
"""

import contextlib
import math
import os

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.models.collision_objects import collision_object_pieces
from gjk_ros.ros import PairStatus, read_distances
from node_harness import (find_record, matrix, NodeProcess, Parameter, Scene,
                          session_domain_id, STARTUP_TIMEOUT, wait_until)
import pytest
import yaml

pytestmark = pytest.mark.ros

moveit_msgs = pytest.importorskip('moveit_msgs.msg')
from geometry_msgs.msg import Point, Point32, Pose  # noqa: E402, I100
from sensor_msgs.msg import PointCloud2  # noqa: E402
from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive  # noqa: E402

ARM, HAND = (0.0, 0.0, 0.5), (0.0, 0.3, 0.5)
START = {'rate_hz': 20.0, 'tf_timeout': 5.0, 'max_distance': 10.0,
         'require_robot_description': False, 'robot_description_timeout': 3600.0,
         'allow_no_obstacles': True, 'self_collision': True, 'planning_scene': True,
         'link_geometry': yaml.safe_dump([
             {'name': 'arm', 'frame_id': 'arm', 'type': 'box', 'size': [0.2, 0.2, 0.2]},
             {'name': 'hand', 'frame_id': 'hand', 'type': 'box', 'size': [0.1, 0.1, 0.1]}])}
TOPICS = {'object': '/collision_object', 'attached': '/attached_collision_object',
          'scene': '/planning_scene'}


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('planning_scene'), START) as process:
        yield process


class MoveItPublisher:
    """What move_group and a MoveIt application publish, with the node's subscriptions matched."""

    def __init__(self, scene, node):
        self.scene = scene
        self.publishers = {}
        types = {'object': moveit_msgs.CollisionObject,
                 'attached': moveit_msgs.AttachedCollisionObject,
                 'scene': moveit_msgs.PlanningScene}
        for kind, topic in TOPICS.items():
            self.add(kind, types[kind], topic, node)

    def add(self, kind, message_type, topic, node):
        publisher = self.scene.node.create_publisher(message_type, topic, 10)
        wait_until(lambda: publisher.get_subscription_count() > 0, STARTUP_TIMEOUT,
                   'the node to subscribe to %s' % topic, node_process=node)
        self.publishers[kind] = publisher

    def send(self, kind, message):
        self.publishers[kind].publish(message)


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        scene.subscribe('self_distances', PointCloud2, '/gjk_distance/self_distances')
        scene.send_tf('world', 'arm', ARM)
        scene.send_tf('world', 'hand', HAND)
        scene.moveit = MoveItPublisher(scene, node)
        yield scene


@pytest.fixture
def empty(scene, node):
    """
    Each test starts from a full scene: every object and attachment goes.

    The full scene holds one object, and waiting for it alone proves the scene was applied
    (topics are not ordered with each other); it is then removed.
    """
    full = moveit_msgs.PlanningScene(is_diff=False)
    full.world.collision_objects = [box('start', (0.0, 0.0, 3.0))]
    scene.moveit.send('scene', full)
    scene.wait_for_records(lambda records: obstacle_names(records) == ['start'],
                           what='the full scene', node_process=node)
    scene.moveit.send('object', collision_object('start', (0.0, 0.0, 0.0),
                                                 operation=moveit_msgs.CollisionObject.REMOVE))
    scene.wait_for_records(lambda records: not obstacle_names(records), what='an empty scene',
                           node_process=node)
    wait_until(lambda: self_pairs(scene) == [('arm', 'hand')], what='no attached object',
               node_process=node)
    return scene


def obstacle_names(records):
    return sorted({record.obstacle for record in records})


def self_pairs(scene):
    cloud = scene.message('self_distances')
    if cloud is None:
        return None
    return sorted((r.link, r.obstacle) for r in
                  read_distances(cloud, scene.message('names'), self_pairs=True))


def pose(xyz=(0.0, 0.0, 0.0), quaternion=(0.0, 0.0, 0.0, 1.0)):
    message = Pose()
    message.position.x, message.position.y, message.position.z = (float(v) for v in xyz)
    (message.orientation.x, message.orientation.y, message.orientation.z,
     message.orientation.w) = (float(v) for v in quaternion)
    return message


def solid(kind, dimensions, polygon=()):
    shape = SolidPrimitive(type=kind, dimensions=[float(d) for d in dimensions])
    shape.polygon.points = [Point32(x=float(x), y=float(y)) for x, y in polygon]
    return shape


def collision_object(object_id, xyz, primitives=(), meshes=(), planes=(),
                     operation=moveit_msgs.CollisionObject.ADD, frame_id='world',
                     quaternion=(0.0, 0.0, 0.0, 1.0), shape_xyz=(0.0, 0.0, 0.0)):
    message = moveit_msgs.CollisionObject(id=object_id, operation=operation)
    message.header.frame_id = frame_id
    message.pose = pose(xyz, quaternion)
    message.primitives = list(primitives)
    message.primitive_poses = [pose(shape_xyz)] * len(primitives)
    message.meshes = list(meshes)
    message.mesh_poses = [pose(shape_xyz)] * len(meshes)
    message.planes = list(planes)
    message.plane_poses = [pose(shape_xyz)] * len(planes)
    return message


def box(object_id, xyz, size=0.2, **options):
    return collision_object(object_id, xyz, [solid(SolidPrimitive.BOX, (size,) * 3)], **options)


def link_box(link):
    half = 0.1 if link == 'arm' else 0.05
    return ConvexPolytope.box([half] * 3), matrix(ARM if link == 'arm' else HAND)


def core_distance(link, message):
    """Return the core's distance from a link to a collision object in 'world'."""
    shape, placed = link_box(link)
    return min(signed_distance(shape, placed, piece.shape, piece.origin).distance
               for piece in collision_object_pieces(message))


def distance_of(scene, link, obstacle):
    records = scene.records() or []
    record = find_record(records, link, obstacle)
    return None if record is None or record.status != PairStatus.VALID else record.distance


def wait_distance(scene, node, link, obstacle, expected, what, tolerance=1e-9):
    try:
        wait_until(lambda: distance_of(scene, link, obstacle) ==
                   pytest.approx(expected, abs=tolerance), what=what, node_process=node)
    except AssertionError as error:
        record = find_record(scene.records() or [], link, obstacle)
        pairs = [(r.link, r.obstacle, r.status) for r in scene.records() or []]
        raise AssertionError('%s\nexpected %r, last record %r\npairs %r'
                             % (error, expected, record, pairs)) from None


MESH = Mesh(vertices=[Point(x=x, y=y, z=z) for x, y, z in
                      ((0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.0, 0.3, 0.0), (0.0, 0.0, 0.3))],
            triangles=[MeshTriangle(vertex_indices=t) for t in
                       ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))])
TILT = (0.0, 0.38268343236508984, 0.0, 0.9238795325112867)  # 45 degrees about y
SHAPES = {
    'box': collision_object('box', (0.6, 0.1, 0.5), [solid(1, (0.2, 0.3, 0.4))],
                            quaternion=TILT),
    'sphere': collision_object('sphere', (-0.5, 0.0, 0.6), [solid(2, (0.15,))]),
    'cylinder': collision_object('cylinder', (0.0, -0.7, 0.5), [solid(3, (0.5, 0.1))],
                                 quaternion=TILT, shape_xyz=(0.05, 0.0, 0.0)),
    'cone': collision_object('cone', (0.0, 0.0, 1.2), [solid(4, (0.4, 0.2))]),
    'prism': collision_object('prism', (0.5, -0.5, 0.5),
                              [solid(5, (0.3,), [(0.0, 0.0), (0.2, 0.0), (0.0, 0.2)])]),
    'mesh': collision_object('mesh', (-0.6, -0.6, 0.4), meshes=[MESH], quaternion=TILT),
    'floor': collision_object('floor', (0.0, 0.0, 0.0), planes=[Plane(coef=[0, 0, 1, -0.1])]),
}


def test_each_shape_type_matches_the_core_on_the_same_geometry(empty, node):
    scene = empty
    for message in SHAPES.values():
        scene.moveit.send('object', message)
    for name, message in SHAPES.items():
        for link in ('arm', 'hand'):
            # The tracked pair set and a cold single call stop within GJK's tolerance.
            wait_distance(scene, node, link, name, core_distance(link, message),
                          '%s-%s as the core measures it' % (link, name), tolerance=1e-8)


def test_add_append_move_remove(empty, node):
    scene = empty
    crate = box('crate', (0.5, 0.0, 0.5))
    scene.moveit.send('object', crate)
    wait_distance(scene, node, 'arm', 'crate', 0.3, 'ADD: a 0.2 m cube 0.3 m from the arm')
    # APPEND: a sphere 0.25 m in front of the crate's centre, 0.1 m from the arm.
    ball = collision_object('crate', (0.5, 0.0, 0.5), [solid(2, (0.05,))],
                            operation=moveit_msgs.CollisionObject.APPEND,
                            shape_xyz=(-0.25, 0.0, 0.0))
    scene.moveit.send('object', ball)
    wait_distance(scene, node, 'arm', 'crate', 0.1, 'APPEND: the nearer sphere counts')
    moved = collision_object('crate', (0.8, 0.0, 0.5),
                             operation=moveit_msgs.CollisionObject.MOVE)
    scene.moveit.send('object', moved)
    wait_distance(scene, node, 'arm', 'crate', 0.4, 'MOVE: both shapes moved 0.3 m')
    scene.moveit.send('object', collision_object(
        'crate', (0.0, 0.0, 0.0), operation=moveit_msgs.CollisionObject.REMOVE))
    scene.wait_for_records(lambda records: 'crate' not in obstacle_names(records),
                           what='REMOVE', node_process=node)


def attach(object_id, link, touch_links=(), shapes=(), xyz=(0.0, 0.0, 0.0),
           operation=moveit_msgs.CollisionObject.ADD):
    message = moveit_msgs.AttachedCollisionObject(link_name=link, touch_links=list(touch_links))
    message.object = collision_object(object_id, xyz, shapes, operation=operation,
                                      frame_id=link)
    return message


def test_attached_tool_moves_with_the_hand_and_ignores_its_touch_links(empty, node):
    scene = empty
    scene.moveit.send('object', box('crate', (0.5, 0.3, 0.5)))
    # A 0.1 m cube held 0.1 m along the hand's +x: 0.3 m from the crate's near face.
    tool = attach('tool', 'hand', shapes=[solid(1, (0.1, 0.1, 0.1))], xyz=(0.1, 0.0, 0.0))
    scene.moveit.send('attached', tool)
    wait_distance(scene, node, 'tool', 'crate', 0.25, 'the tool measured against the world')
    wait_until(lambda: self_pairs(scene) == [('arm', 'hand'), ('arm', 'tool')],
               what='the tool paired with the arm, never with its own link', node_process=node)
    scene.send_tf('world', 'hand', (0.1, 0.3, 0.5))
    wait_distance(scene, node, 'tool', 'crate', 0.15, 'the tool moving with the hand')
    scene.moveit.send('attached', attach('tool', 'hand', ['arm'],
                                         [solid(1, (0.1, 0.1, 0.1))], (0.1, 0.0, 0.0)))
    wait_until(lambda: self_pairs(scene) == [('arm', 'hand')],
               what='touch_links to drop the arm-tool pair', node_process=node)
    # Detached: it stays where it is, in the world, as an obstacle.
    scene.moveit.send('attached', attach('tool', 'hand',
                                         operation=moveit_msgs.CollisionObject.REMOVE))
    # Released at x in [0.15, 0.25], y in [0.25, 0.35]: beside the arm's corner.
    wait_distance(scene, node, 'arm', 'tool', math.hypot(0.05, 0.15),
                  'the detached tool is an obstacle where it was released')
    scene.send_tf('world', 'hand', HAND)
    wait_distance(scene, node, 'hand', 'tool', 0.1, 'it no longer moves with the hand')


def test_attaching_a_world_object_by_id_keeps_it_where_it_is(empty, node):
    # As MoveGroupInterface.attachObject does: the id and the link, no shapes.
    scene = empty
    scene.moveit.send('object', box('cup', (0.5, 0.3, 0.5), size=0.1))
    wait_distance(scene, node, 'hand', 'cup', 0.4, 'the cup in the world')
    scene.moveit.send('attached', attach('cup', 'hand', ['arm']))
    wait_until(lambda: self_pairs(scene) == [('arm', 'hand')] and
               find_record(scene.records() or [], 'cup', 'cup') is None and
               'cup' not in obstacle_names(scene.records() or []),
               what='the cup taken off the world', node_process=node)
    scene.moveit.send('object', box('wall', (0.5, 1.0, 0.5), size=0.2))
    # Held 0.5 m along the hand's x: 0.55 m (y) from the wall's near face at 0.9 minus 0.35.
    wait_distance(scene, node, 'cup', 'wall', 0.55, 'the cup held where it was')
    scene.send_tf('world', 'hand', (0.0, 0.5, 0.5))
    wait_distance(scene, node, 'cup', 'wall', 0.35, 'the cup moving with the hand')
    scene.send_tf('world', 'hand', HAND)


def acm(names, values, default_names=(), default_values=()):
    matrix_message = moveit_msgs.AllowedCollisionMatrix(
        entry_names=list(names), default_entry_names=list(default_names),
        default_entry_values=list(default_values))
    matrix_message.entry_values = [moveit_msgs.AllowedCollisionEntry(enabled=list(row))
                                   for row in values]
    return matrix_message


def test_allowed_collision_matrix_and_link_padding_filter_and_pad_pairs(empty, node):
    scene = empty
    scene.moveit.send('object', box('crate', (0.5, 0.0, 0.5)))
    wait_distance(scene, node, 'hand', 'crate', math.hypot(0.35, 0.15), 'the crate')
    diff = moveit_msgs.PlanningScene(is_diff=True)
    diff.allowed_collision_matrix = acm(['arm', 'crate'], [[False, True], [True, False]])
    scene.moveit.send('scene', diff)
    scene.wait_for_records(lambda records: find_record(records, 'arm', 'crate') is None and
                           find_record(records, 'hand', 'crate') is not None,
                           what='the ACM entry to drop arm-crate only', node_process=node)
    diff.allowed_collision_matrix = acm([], [], ['hand'], [True])
    scene.moveit.send('scene', diff)
    scene.wait_for_records(lambda records: find_record(records, 'arm', 'crate') is not None and
                           find_record(records, 'hand', 'crate') is None,
                           what='a default entry to drop every hand pair', node_process=node)
    wait_until(lambda: self_pairs(scene) == [], what='the hand default on arm-hand too',
               node_process=node)
    padded = moveit_msgs.PlanningScene(is_diff=True)
    padded.link_padding = [moveit_msgs.LinkPadding(link_name='arm', padding=0.02)]
    scene.moveit.send('scene', padded)
    wait_distance(scene, node, 'arm', 'crate', 0.28, 'link_padding from the scene')
    scaled = moveit_msgs.PlanningScene(is_diff=True)
    scaled.link_scale = [moveit_msgs.LinkScale(link_name='arm', scale=1.5)]
    scene.moveit.send('scene', scaled)
    # The 0.2 m arm cube scaled to 0.3 m: its face 0.05 m nearer, then the padding.
    wait_distance(scene, node, 'arm', 'crate', 0.23, 'link_scale from the scene')


def test_full_scene_replaces_the_world(empty, node):
    scene = empty
    scene.moveit.send('object', box('crate', (0.5, 0.0, 0.5)))
    scene.wait_for_records(lambda records: obstacle_names(records) == ['crate'],
                           what='the crate', node_process=node)
    full = moveit_msgs.PlanningScene(is_diff=False)
    full.world.collision_objects = [box('table', (0.0, 0.0, -0.2))]
    full.robot_state.attached_collision_objects = [
        attach('cup', 'hand', shapes=[solid(2, (0.02,))], xyz=(0.0, 0.1, 0.0))]
    scene.moveit.send('scene', full)
    scene.wait_for_records(lambda records: obstacle_names(records) == ['table'],
                           what='the full scene to replace the crate', node_process=node)
    # The cup (radius 0.02) at (0, 0.4, 0.5); the table's near edge at y 0.1, z -0.1.
    wait_distance(scene, node, 'cup', 'table', math.hypot(0.3, 0.6) - 0.02,
                  'the attached cup of the full scene')


MALFORMED = {
    'bad_type': lambda: collision_object('bad_type', (1, 0, 0), [solid(9, (0.1,))]),
    'bad_dimensions': lambda: collision_object('bad_dimensions', (1, 0, 0), [solid(1, (0.1,))]),
    'empty_mesh': lambda: collision_object('empty_mesh', (1, 0, 0), meshes=[Mesh()]),
    'nan_pose': lambda: box('nan_pose', (math.nan, 0.0, 0.0)),
}


def test_malformed_objects_are_rejected_by_name_and_the_rest_is_served(empty, node):
    scene = empty
    scene.moveit.send('object', box('crate', (0.5, 0.0, 0.5)))
    for make in MALFORMED.values():
        scene.moveit.send('object', make())
    scene.moveit.send('object', collision_object(
        'ghost', (0.0, 0.0, 0.0), operation=moveit_msgs.CollisionObject.MOVE))

    def served(records):
        statuses = {record.obstacle: record.status for record in records
                    if record.link == 'arm'}
        return statuses.get('crate') == PairStatus.VALID and all(
            statuses.get(name) == PairStatus.INVALID for name in MALFORMED)
    scene.wait_for_records(served, what='the crate served, the malformed objects INVALID',
                           node_process=node)
    assert distance_of(scene, 'arm', 'crate') == pytest.approx(0.3, abs=1e-9)
    for name in list(MALFORMED) + ['ghost']:
        wait_until(lambda: node.lines_with("'%s'" % name), what='%s named in the log' % name,
                   node_process=node)
    assert not node.lines_with("'ghost'", 'rejected')  # reported, not turned into an object
    assert 'ghost' not in obstacle_names(scene.records())


@contextlib.contextmanager
def parameters(scene, **values):
    (result,) = scene.set_node_parameters([Parameter(name, value=value)
                                           for name, value in values.items()])[:1]
    assert result.successful, result.reason
    try:
        yield
    finally:
        restored = scene.set_node_parameters([Parameter(name, value=START.get(name, default))
                                              for name, default in DEFAULTS.items()
                                              if name in values])
        assert all(result.successful for result in restored)


DEFAULTS = {'planning_scene': False, 'collision_object_topic': '/collision_object',
            'attached_collision_object_topic': '/attached_collision_object',
            'planning_scene_topic': '/planning_scene',
            'monitored_planning_scene_topic': '/monitored_planning_scene'}


def check_enabled(scene, node):
    scene.moveit.send('object', box('crate', (0.5, 0.0, 0.5)))
    wait_distance(scene, node, 'arm', 'crate', 0.3, 'the crate')
    with parameters(scene, planning_scene=False):
        scene.wait_for_records(lambda records: 'crate' not in obstacle_names(records),
                               what='planning_scene false: the scene leaves', node_process=node)
    wait_distance(scene, node, 'arm', 'crate', 0.3, 'planning_scene true: the scene is back')


def check_topics(scene, node):
    from rclpy.qos import QoSProfile  # noqa: F401 -- rclpy is loaded by the harness
    for name, kind, message_type in (
            ('collision_object_topic', 'object', moveit_msgs.CollisionObject),
            ('attached_collision_object_topic', 'attached',
             moveit_msgs.AttachedCollisionObject),
            ('planning_scene_topic', 'scene', moveit_msgs.PlanningScene),
            ('monitored_planning_scene_topic', 'scene', moveit_msgs.PlanningScene)):
        topic = '/renamed_' + name
        with parameters(scene, **{name: topic}):
            publisher = scene.node.create_publisher(message_type, topic, 10)
            try:
                wait_until(lambda: publisher.get_subscription_count() > 0,
                           what='the node to subscribe to %s' % topic, node_process=node)
                publisher.publish(renamed_message(kind, name))
                scene.wait_for_records(
                    lambda records: name in obstacle_names(records) or
                    find_record(records, name, 'anchor') is not None,
                    what='a message on %s applied' % topic, node_process=node)
            finally:
                scene.node.destroy_publisher(publisher)


def renamed_message(kind, name):
    if kind == 'object':
        return box(name, (0.5, 0.0, 1.5))
    if kind == 'attached':
        return attach(name, 'hand', shapes=[solid(2, (0.01,))])
    message = moveit_msgs.PlanningScene(is_diff=True)
    message.world.collision_objects = [box(name, (0.5, 0.0, 1.5))]
    return message


PLANNING_SCENE_EFFECTS = [
    (('planning_scene',), check_enabled),
    (('collision_object_topic', 'attached_collision_object_topic', 'planning_scene_topic',
      'monitored_planning_scene_topic'), check_topics),
]


@pytest.mark.parametrize('names, check', PLANNING_SCENE_EFFECTS,
                         ids=['+'.join(names) for names, _ in PLANNING_SCENE_EFFECTS])
def test_planning_scene_setting_at_run_time_takes_effect(empty, node, names, check):
    if names[0] != 'planning_scene':
        empty.moveit.send('object', box('anchor', (0.5, 0.0, 0.5)))
    check(empty, node)
