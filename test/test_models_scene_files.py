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

"""World files: PlanningScene YAML (message form, robowflex's shorthand) and MoveIt's .scene."""

from gjk_ros.models import ModelError
from gjk_ros.models.collision_objects import scene_object
from gjk_ros.models.scene_files import parse_scene_text, parse_scene_yaml, read_scene_file
from gjk_ros.planning import load_obstacles, Obstacle
from mbm import mbm_directory
import numpy
import pytest

SHORTHAND = """
world:
  collision_objects:
    - header:
        frame_id: base_link
      id: shelf
      primitives:
        - type: box
          dimensions: [0.7, 0.04, 0.7]
        - type: cylinder
          dimensions: [0.14, 0.03]
      primitive_poses:
        - position: [0.8, -0.35, 0.8]
          orientation: [0, 0, 0.3826834, 0.9238795]
        - position: [0.8, 0, 0.55]
          orientation: [0, 0, 0, 1]
"""

MESSAGE_FORM = """
name: same
world:
  collision_objects:
    - id: shelf
      header: {frame_id: base_link}
      operation: 0
      primitives:
        - {type: 1, dimensions: [0.7, 0.04, 0.7]}
        - {type: 3, dimensions: [0.14, 0.03]}
      primitive_poses:
        - position: {x: 0.8, y: -0.35, z: 0.8}
          orientation: {x: 0.0, y: 0.0, z: 0.3826834, w: 0.9238795}
        - position: {x: 0.8, y: 0.0, z: 0.55}
          orientation: {x: 0.0, y: 0.0, z: 0.0, w: 1.0}
"""

# MoveIt's .scene text, the format with object poses and subframes.
SCENE_TEXT = """kitchenette
* table top
0.5 0 0.4
0 0 0 1
2
box
1.2 0.8 0.05
0 0 0
0 0 0 1
0.5 0.5 0.5 1
cylinder
0.05 0.3
0.2 0.1 0.175
0 0 0 1
0 0 0 0
1
corner
0.6 0.4 0
0 0 0 1
* tent
0 0 0
0 0 0 1
1
mesh
4 4
0 0 0
1 0 0
0 1 0
0 0 1
0 2 1
0 1 3
0 3 2
1 2 3
0 0 2
0 0 0 1
0 0 0 0
0
.
"""


def _vertices(pieces):
    """World vertices of pieces placed in their frame (object pose composed)."""
    return [numpy.asarray(p.shape.vertices) @ p.origin[:3, :3].T + p.origin[:3, 3]
            for p in pieces]


def test_shorthand_and_message_form_give_the_same_object():
    short = parse_scene_yaml(SHORTHAND).objects[0]
    long = parse_scene_yaml(MESSAGE_FORM).objects[0]
    a, b = scene_object(short)[1], scene_object(long)[1]
    assert a.error is None and b.error is None
    for x, y in zip(_vertices(a.placed()), _vertices(b.placed())):
        assert numpy.allclose(x, y, atol=1e-12)
    assert parse_scene_yaml(MESSAGE_FORM).name == 'same'


def test_every_motionbenchmaker_scene_loads_into_the_planner_api():
    folder = mbm_directory()
    paths = {'robowflex_resources': str(folder / 'robowflex_resources')}
    scenes = sorted((folder / 'scenes').glob('*/scene_*.yaml'))
    assert len(scenes) == 6
    for path in scenes:
        obstacles = load_obstacles(path, package_paths=paths)
        assert obstacles and all(isinstance(o, Obstacle) for o in obstacles)
        assert len({o.name for o in obstacles}) == len(obstacles)
    kitchen = load_obstacles(folder / 'scenes' / 'kitchen' / 'kitchen.urdf',
                             package_paths=_kitchen_paths(folder, paths))
    assert [o.name for o in kitchen] == ['cupboard', 'kitchen_counter', 'dishwasher_door',
                                         'cupboard_door_l', 'cupboard_door_r']


def _kitchen_paths(folder, paths):
    """package://motion_bench_maker/configs/scenes/... -> the scenes beside ../shared/mbm."""
    import tempfile
    import os
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, 'configs'))
    os.symlink(folder / 'scenes', os.path.join(root, 'configs', 'scenes'))
    return dict(paths, motion_bench_maker=root)


def test_the_kitchen_yaml_names_the_object_and_field_of_its_missing_meshes():
    folder = mbm_directory()
    scene = read_scene_file(folder / 'scenes' / 'kitchen' / 'kitchen.yaml')
    assert [o['id'] for o in scene.objects] == ['diswasher', 'cupboard', 'Can1', 'Can2']
    with pytest.raises(ModelError) as raised:
        load_obstacles(folder / 'scenes' / 'kitchen' / 'kitchen.yaml',
                       package_paths=_kitchen_paths(folder, {}))
    message = str(raised.value)
    assert 'diswasher' in message and 'meshes[0]: resource' in message
    assert 'dishwasher.obj' in message  # the URI, never file contents
    cans = [Obstacle.from_collision_object(o) for o in scene.objects[2:]]
    assert [c.name for c in cans] == ['Can1', 'Can2']


def test_a_query_file_is_not_taken_for_a_scene():
    folder = mbm_directory()
    with pytest.raises(ModelError, match='not a PlanningScene'):
        read_scene_file(folder / 'scenes' / 'box' / 'all_queries_box.yaml')


@pytest.mark.parametrize('text, field', [
    ('- id: a\n  primitives: [{type: box, dimensions: [1, 2]}]\n', 'primitives[0]: dimensions'),
    ('- id: a\n  primitives: [{type: blob, dimensions: [1]}]\n', 'primitives[0]: type'),
    ('- id: a\n  primitives: [{type: sphere, dimensions: [1]}]\n  primitive_poses:\n'
     '    - {position: [0, 0], orientation: [0, 0, 0, 1]}\n', 'primitive_poses[0]: position'),
    ('- id: a\n  primitives: [{type: sphere, dimensions: [1]}]\n  primitive_poses:\n'
     '    - {position: [0, 0, 0], orientation: [0, 0, 0, 3]}\n',
     'primitive_poses[0]: orientation'),
    ('- id: a\n  pose: {position: {x: 1, y: 2}, orientation: [0, 0, 0, 1]}\n'
     '  primitives: [{type: sphere, dimensions: [1]}]\n', 'pose: position: no field z'),
    ('- id: a\n  meshes: [{vertices: [[0, 0, 0]], triangles: [[0, 1, 2]]}]\n',
     'meshes[0]: triangles'),
])
def test_errors_name_the_object_and_the_field(text, field):
    scene = parse_scene_yaml(text)
    with pytest.raises(ModelError) as raised:
        Obstacle.from_collision_object(scene.objects[0])
    assert raised.value.body == 'a'
    assert field in raised.value.reason


def test_file_level_errors_name_the_file():
    with pytest.raises(ModelError, match='world.collision_objects\\[0\\].id'):
        parse_scene_yaml('world:\n  collision_objects:\n    - primitives: []\n', 'f.yaml')
    with pytest.raises(ModelError, match='appears twice'):
        parse_scene_yaml('- {id: a}\n- {id: a}\n', 'f.yaml')
    with pytest.raises(ModelError, match='f.yaml: not valid YAML at line'):
        parse_scene_yaml('world: [\n', 'f.yaml')


def test_moveit_scene_text_with_poses_and_subframes():
    scene = parse_scene_text(SCENE_TEXT)
    assert scene.name == 'kitchenette'
    table, tent = (scene_object(o)[1] for o in scene.objects)
    assert (table.id, tent.id) == ('table top', 'tent')
    assert table.error is None and tent.error is None
    assert numpy.allclose(table.pose[:3, 3], [0.5, 0.0, 0.4])
    box, cylinder = table.placed()
    assert numpy.allclose(_vertices([box])[0].max(axis=0), [1.1, 0.4, 0.425])
    assert cylinder.shape.kind == 'cylinder'
    assert cylinder.shape.cylinder_radius == 0.05 and cylinder.shape.cylinder_half_length == 0.15
    assert numpy.allclose(cylinder.origin[:3, 3], [0.7, 0.1, 0.575])
    (piece,) = tent.placed()  # a closed convex mesh: one exact piece or its hull, the same
    assert numpy.allclose(_vertices([piece])[0].max(axis=0), [1.0, 1.0, 3.0])


def test_moveit_scene_text_old_format_without_poses():
    text = 'old\n* block\n1\nsphere\n0.2\n1 2 3\n0 0 0 1\n0 0 0 0\n.\n'
    (block,) = parse_scene_text(text).objects
    found = scene_object(block)[1]
    assert found.error is None
    assert numpy.allclose(found.placed()[0].origin[:3, 3], [1, 2, 3])


@pytest.mark.parametrize('text, where', [
    ('s\n* a\n1\nbox\n1 2\n', 's.scene: a: line 5: box size'),
    ('s\n* a\n1\nwedge\n', "s.scene: a: line 4: unknown shape 'wedge'"),
    ('s\n* a\n1\nsphere\n1\n0 0 0\n0 0 0 1\n0 0 0 0\n', 'the file ends'),
    ('s\n- a\n', "line 2: expected '* object id' or '.'"),
])
def test_moveit_scene_text_errors_name_object_and_line(text, where):
    with pytest.raises(ModelError) as raised:
        parse_scene_text(text, 's.scene')
    assert where in str(raised.value)


def test_read_scene_file_by_extension(tmp_path):
    (tmp_path / 'w.scene').write_text(SCENE_TEXT)
    (tmp_path / 'w.yaml').write_text(SHORTHAND)
    assert len(read_scene_file(tmp_path / 'w.scene').objects) == 2
    assert len(read_scene_file(tmp_path / 'w.yaml').objects) == 1
    with pytest.raises(ModelError, match='unknown scene file type'):
        read_scene_file(tmp_path / 'w.json')
    with pytest.raises(ModelError, match='cannot read'):
        read_scene_file(tmp_path / 'missing.yaml')
