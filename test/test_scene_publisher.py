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
The scene publisher's messages, without a graph: world files to a moveit_msgs/PlanningScene.

Each message is read back the way the node reads it (``collision_objects.scene_object``) and
its pieces compared with the pieces of the file's own object: every field that shapes a body
arrives, in the message's form.
"""

import os

from gjk_ros.models import ModelError, ResourceResolver
from gjk_ros.models.collision_objects import message_form, scene_object
from gjk_ros.models.scene_files import read_scene_file
from gjk_ros.ros.scene_publisher import (collision_object_message, load_scene_files,
                                         MAX_SCENE_FILES, planning_scene_message)
from mbm import kitchen_mesh, mbm_directory
import numpy
import pytest

moveit_msgs = pytest.importorskip('moveit_msgs.msg')

# robowflex's shorthand with every shape kind, a shape pose left out and an object pose.
SHORTHAND = """
world:
  collision_objects:
    - id: shelf
      header: {frame_id: base_link}
      pose: {position: [0.1, 0.2, 0.3], orientation: [0, 0, 0.3826834, 0.9238795]}
      primitives:
        - {type: box, dimensions: [0.7, 0.04, 0.7]}
        - {type: cylinder, dimensions: [0.14, 0.03]}
        - {type: prism, dimensions: [0.1],
           polygon: {points: [{x: 0, y: 0}, {x: 0.2, y: 0}, {x: 0, y: 0.2}]}}
      primitive_poses:
        - {position: [0.8, -0.35, 0.8], orientation: [0, 0, 0.3826834, 0.9238795]}
        - {position: [0.8, 0, 0.55], orientation: [0, 0, 0, 1]}
        - {position: [0, 0, 0], orientation: [0, 0, 0, 1]}
      planes:
        - {coef: [0, 0, 1, -0.1]}
      plane_poses:
        - {position: [0, 0, 0], orientation: [0, 0, 0, 1]}
    - id: tent
      meshes:
        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
          triangles: [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
robot_state:
  attached_collision_objects:
    - link_name: hand
      touch_links: [finger]
      object:
        id: tool
        primitives: [{type: sphere, dimensions: [0.05]}]
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _placed(found):
    """World vertices of an object's pieces, as the node builds them (hull mode)."""
    operation, built = scene_object(found)
    assert built.error is None, built.error
    return operation, built.frame_id, [numpy.asarray(p.shape.vertices) @ p.origin[:3, :3].T
                                       + p.origin[:3, 3] for p in built.placed()]


def test_every_field_arrives_in_the_message_form(tmp_path):
    loaded = load_scene_files([_write(tmp_path, 'w.yaml', SHORTHAND)], frame_id='world')
    assert loaded.errors == ()
    shelf, tent = loaded.objects
    assert shelf['header']['frame_id'] == 'base_link'   # given: kept
    assert tent['header']['frame_id'] == 'world'        # empty: the frame_id parameter
    assert [p['type'] for p in shelf['primitives']] == [1, 3, 5]
    assert shelf['primitives'][2]['polygon']['points'][1] == {'x': 0.2, 'y': 0.0, 'z': 0.0}
    assert shelf['pose']['orientation']['z'] == 0.3826834
    assert shelf['planes'] == [{'coef': [0.0, 0.0, 1.0, -0.1]}]
    assert tent['mesh_poses'][0]['orientation'] == {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}
    (held,) = loaded.attached
    assert (held['link_name'], held['touch_links'], held['object']['id']) == \
        ('hand', ['finger'], 'tool')
    assert held['object']['header']['frame_id'] == ''   # an attached object: its link's frame
    scene = read_scene_file(tmp_path / 'w.yaml')
    for original, message in zip(scene.objects, planning_scene_message(loaded).world
                                 .collision_objects):
        # The message as the node reads it builds the same pieces as the file's object.
        _, _, expected = _placed(original)
        operation, frame, found = _placed(message)
        assert operation == 0 and len(found) == len(expected)
        for a, b in zip(found, expected):
            assert numpy.allclose(a, b, atol=1e-12)


def test_the_message_is_a_diff_that_adds(tmp_path):
    loaded = load_scene_files([_write(tmp_path, 'w.yaml', SHORTHAND)])
    message = planning_scene_message(loaded)
    assert message.is_diff and message.robot_state.is_diff
    assert [o.id for o in message.world.collision_objects] == ['shelf', 'tent']
    assert all(o.operation == moveit_msgs.CollisionObject.ADD
               for o in message.world.collision_objects)
    (held,) = message.robot_state.attached_collision_objects
    found = (held.link_name, list(held.touch_links), held.object.id)
    assert found == ('hand', ['finger'], 'tool')
    tent = message.world.collision_objects[1]
    assert len(tent.meshes[0].vertices) == 4 and len(tent.meshes[0].triangles) == 4


def test_a_mesh_file_is_sent_as_its_triangles(tmp_path):
    folder = mbm_directory()
    uri = 'file://' + str(folder / 'scenes' / 'kitchen' / 'meshes' / 'cupboard.stl')
    text = ('- id: cupboard\n  meshes: [{resource: "%s", scale: [1, 2, 1]}]\n' % uri)
    (found,) = load_scene_files([_write(tmp_path, 'k.yaml', text)]).objects
    mesh = found['meshes'][0]
    triangles = mesh['vertices'][mesh['triangles']]
    expected = kitchen_mesh('cupboard') * [1.0, 2.0, 1.0]
    assert triangles.shape == expected.shape
    assert sorted(map(tuple, triangles.reshape(len(triangles), 9).round(12))) == \
        sorted(map(tuple, expected.reshape(len(expected), 9).round(12)))
    message = collision_object_message(found)
    assert len(message.meshes[0].triangles) == len(expected)


@pytest.mark.parametrize('text, where', [
    ('- id: a\n  primitives: [{type: box, dimensions: [1, 2]}]\n', 'a: primitives[0]: dimensions'),
    ('- id: a\n  primitives: [{type: blob, dimensions: [1]}]\n', 'a: primitives[0]: type'),
    ('- id: a\n  primitives: [{type: sphere, dimensions: [1]}]\n  primitive_poses:\n'
     '    - {position: [0, 0], orientation: [0, 0, 0, 1]}\n', 'a: primitive_poses[0]: position'),
    ('- id: a\n  primitives: [{type: sphere, dimensions: [1]}]\n  primitive_poses:\n'
     '    - {position: [0, 0, 0], orientation: [0, 0, 0, 3]}\n',
     'a: primitive_poses[0]: orientation'),
    ('- id: a\n  pose: {position: {x: 1, y: 2}, orientation: [0, 0, 0, 1]}\n'
     '  primitives: [{type: sphere, dimensions: [1]}]\n', 'a: pose: position: no field z'),
    ('- id: a\n  meshes: [{vertices: [[0, 0, 0]], triangles: [[0, 1, 2]]}]\n',
     'a: meshes[0]: triangles'),
    ('- id: a\n  meshes: [{resource: "package://no_such_package_h/m.stl"}]\n',
     'a: meshes[0]: resource'),
    ('- id: a\n  planes: [{coef: [0, 0, 0, 1]}]\n', 'a: planes[0]'),
    ('- id: a\n', 'a: the collision object has no shapes'),
])
def test_errors_name_the_file_the_object_and_the_field(tmp_path, text, where):
    bad = _write(tmp_path, 'bad.yaml', text)
    good = _write(tmp_path, 'good.yaml', '- {id: b, primitives: [{type: sphere, '
                                         'dimensions: [0.1]}]}\n')
    loaded = load_scene_files([bad, good])
    (error,) = loaded.errors
    assert error.startswith(bad + ': ') and where in error
    assert [o['id'] for o in loaded.objects] == ['b']  # the bad object stops nothing else


def test_file_errors_never_show_contents_and_stop_no_other_file(tmp_path):
    secret = 'hunter2-secret-token'
    files = [_write(tmp_path, 'a.yaml', 'world: [%s\n' % secret),
             _write(tmp_path, 'b.json', '{}'),
             str(tmp_path / 'missing.yaml'),
             _write(tmp_path, 'c.scene', 's\n* a\n1\nbox\n%s\n' % secret),
             _write(tmp_path, 'd.yaml', '- {id: ok, primitives: [{type: box, '
                                        'dimensions: [1, 1, 1]}]}\n- {id: %s, primitives: '
                                        '[{type: box, dimensions: [1, %s, 1]}]}\n'
                                        % ('x' * 3, secret))]
    loaded = load_scene_files(files)
    assert [o['id'] for o in loaded.objects] == ['ok']
    assert len(loaded.errors) == 5
    for path, error in zip(files, loaded.errors):
        assert path in error and secret not in error
    assert 'not valid YAML at line 2' in loaded.errors[0]
    assert 'unknown scene file type' in loaded.errors[1]
    assert 'cannot read' in loaded.errors[2]
    assert 'a: line 5: box size' in loaded.errors[3]
    assert 'xxx: primitives[0]' in loaded.errors[4]


def test_an_id_in_two_files_is_kept_from_the_first(tmp_path):
    one = _write(tmp_path, 'one.yaml', '- {id: a, primitives: [{type: sphere, '
                                       'dimensions: [0.1]}]}\n')
    two = _write(tmp_path, 'two.yaml', '- {id: a, primitives: [{type: sphere, '
                                       'dimensions: [0.2]}]}\n')
    loaded = load_scene_files([one, two])
    assert loaded.objects[0]['primitives'][0]['dimensions'] == [0.1]
    assert loaded.errors == ('%s: a: the id is given by %s already; left out' % (two, one),)


def test_the_number_of_files_is_bounded(tmp_path):
    path = _write(tmp_path, 'one.yaml', '[]\n')
    loaded = load_scene_files([path] * (MAX_SCENE_FILES + 1))
    assert loaded.errors == ('scene_files: %d files, more than %d; the first %d are read'
                             % (MAX_SCENE_FILES + 1, MAX_SCENE_FILES, MAX_SCENE_FILES),)


def test_attached_objects_need_a_link(tmp_path):
    text = ('robot_state:\n  attached_collision_objects:\n    - object: {id: t, primitives: '
            '[{type: sphere, dimensions: [0.1]}]}\n')
    loaded = load_scene_files([_write(tmp_path, 'h.yaml', text)])
    assert loaded.attached == ()
    assert 'robot_state.attached_collision_objects[0]: link_name' in loaded.errors[0]


def test_every_motionbenchmaker_scene_file_becomes_a_message(tmp_path):
    folder = mbm_directory()
    resolver = ResourceResolver({'motion_bench_maker': str(tmp_path)})
    os.makedirs(tmp_path / 'configs')
    os.symlink(folder / 'scenes', tmp_path / 'configs' / 'scenes')
    for path in sorted((folder / 'scenes').glob('*/scene_*.yaml')):
        loaded = load_scene_files([path], 'base_link', resolver)
        expected = [o['id'] for o in read_scene_file(path).objects]
        assert loaded.errors == () and [o['id'] for o in loaded.objects] == expected
        message = planning_scene_message(loaded)
        for original, sent in zip(read_scene_file(path).objects,
                                  message.world.collision_objects):
            for a, b in zip(_placed(original)[2], _placed(sent)[2]):
                assert numpy.allclose(a, b, atol=1e-12)
    # kitchen.yaml names .obj meshes its repository does not hold: those two are named, the
    # cans are sent.
    loaded = load_scene_files([folder / 'scenes' / 'kitchen' / 'kitchen.yaml'], 'base_link',
                              resolver)
    assert [o['id'] for o in loaded.objects] == ['Can1', 'Can2']
    assert [e.split(': ')[1:3] for e in loaded.errors] == [['diswasher', 'meshes[0]'],
                                                           ['cupboard', 'meshes[0]']]


def test_message_form_checks_as_the_node_does():
    with pytest.raises(ModelError) as raised:
        message_form({'id': 'q', 'primitives': [{'type': 'sphere', 'dimensions': [-1]}]})
    assert raised.value.body == 'q' and 'primitives[0]' in raised.value.reason


def _world_vertices(obstacle):
    """Every piece's vertices in the world: the obstacle pose composed with the piece's."""
    pose = numpy.eye(4) if obstacle.pose is None else numpy.asarray(obstacle.pose)
    placed = [(pose @ piece.origin, numpy.asarray(piece.shape.vertices))
              for piece in obstacle.geometry]
    return sorted(tuple(numpy.round(point, 9)) for origin, vertices in placed
                  for point in vertices @ origin[:3, :3].T + origin[:3, 3])


def test_a_urdf_world_becomes_one_object_per_link_as_the_planner_api_reads_it(tmp_path):
    from gjk_ros.planning import load_obstacles, Obstacle
    folder = mbm_directory()
    resolver = ResourceResolver({'motion_bench_maker': str(tmp_path)})
    os.makedirs(tmp_path / 'configs')
    os.symlink(folder / 'scenes', tmp_path / 'configs' / 'scenes')
    path = folder / 'scenes' / 'kitchen' / 'kitchen.urdf'
    loaded = load_scene_files([path], 'base_link', resolver)
    assert loaded.errors == ()
    expected = {o.name: o for o in load_obstacles(path, resolver=resolver, mesh_mode='hull')}
    assert sorted(o['id'] for o in loaded.objects) == sorted(expected)
    for sent in planning_scene_message(loaded).world.collision_objects:
        found = Obstacle.from_collision_object(sent, mesh_mode='hull')
        assert sent.header.frame_id == 'base_link' and len(sent.meshes) == 1
        assert numpy.allclose(_world_vertices(found), _world_vertices(expected[sent.id]),
                              atol=1e-6)


@pytest.mark.parametrize('collision, where', [
    ('<geometry><capsule radius="1" length="1"/></geometry>', 'collision[0]: geometry: <capsule>'),
    ('<geometry><box size="1 1"/></geometry>', 'collision[0]: box size'),
    ('<geometry><cylinder radius="1"/></geometry>', 'collision[0]: cylinder: no length'),
    ('<geometry/>', 'collision[0]: geometry: expected one shape'),
    ('<geometry><mesh/></geometry>', 'collision[0]: mesh: no filename'),
])
def test_urdf_world_errors_name_the_file_the_link_and_the_collision(tmp_path, collision, where):
    text = ('<robot name="w"><link name="root"/><link name="shelf"><collision>%s</collision>'
            '</link><joint name="j" type="fixed"><parent link="root"/><child link="shelf"/>'
            '</joint></robot>' % collision)
    path = _write(tmp_path, 'w.urdf', text)
    (error,) = load_scene_files([path]).errors
    assert error.startswith(path + ': shelf: ') and where in error


def test_urdf_world_shapes_are_placed_at_their_origin(tmp_path):
    text = ('<robot name="w"><link name="root"/><link name="shelf"><collision>'
            '<origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/><geometry>'
            '<cylinder radius="0.1" length="0.4"/></geometry></collision><collision>'
            '<geometry><sphere radius="0.2"/></geometry></collision></link>'
            '<joint name="j" type="prismatic"><parent link="root"/><child link="shelf"/>'
            '<origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="0.1" upper="1" effort="1" '
            'velocity="1"/></joint></robot>')
    (found,) = load_scene_files([_write(tmp_path, 'w.urdf', text)]).objects
    assert found['id'] == 'shelf'
    # The joint at its lower limit (zero clipped): the link 0.1 up from the joint's origin.
    assert found['pose']['position'] == {'x': 1.0, 'y': 0.0, 'z': 0.1}
    assert found['primitives'] == [{'type': 3, 'dimensions': [0.4, 0.1]},
                                   {'type': 2, 'dimensions': [0.2]}]
    assert found['primitive_poses'][0]['position'] == {'x': 0.0, 'y': 0.0, 'z': 0.5}
    assert found['primitive_poses'][0]['orientation']['z'] == pytest.approx(0.5 ** 0.5)
