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

"""URDF collision elements to convex pieces (gjk_ros.models.urdf)."""

import itertools

from gjk_ros.models import ModelError, parse_urdf_collisions, ResourceResolver
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
import trimesh

DIRECTIONS = np.vstack([np.eye(3), -np.eye(3),
                        np.random.default_rng(11).normal(size=(40, 3))])


def piece_support(piece, directions=DIRECTIONS):
    """Support values of a piece in its frame (origin applied)."""
    rotation, translation = piece.origin[:3, :3], piece.origin[:3, 3]
    return np.array([d @ (rotation @ piece.shape.support(rotation.T @ d) + translation)
                     for d in directions])


def pose(xyz, rpy):
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_euler('xyz', rpy).as_matrix()   # extrinsic = fixed axes
    matrix[:3, 3] = xyz
    return matrix


def points_support(points, directions=DIRECTIONS):
    return (np.asarray(points) @ directions.T).max(axis=0)


def box_support(size, matrix, directions=DIRECTIONS):
    corners = np.array(list(itertools.product(*[(-s / 2, s / 2) for s in size])))
    return points_support(corners @ matrix[:3, :3].T + matrix[:3, 3], directions)


def round_support(matrix, radius, half_length, disc, directions=DIRECTIONS):
    """Sphere (disc=False, half_length 0), capsule (disc=False) or cylinder (disc=True)."""
    axis, centre = matrix[:3, 2], matrix[:3, 3]
    along = directions @ axis
    if disc:
        across = np.linalg.norm(directions - along[:, None] * axis, axis=1)
        return directions @ centre + half_length * np.abs(along) + radius * across
    return (directions @ centre + half_length * np.abs(along)
            + radius * np.linalg.norm(directions, axis=1))


def robot(*links, name='test_bot'):
    return f'<robot name="{name}">' + ''.join(links) + '</robot>'


def link(name, *collisions):
    return f'<link name="{name}">' + ''.join(collisions) + '</link>'


def collision(geometry, xyz=None, rpy=None, name=None):
    attributes = ''.join(f' {k}="{v}"' for k, v in (('xyz', xyz), ('rpy', rpy)) if v)
    origin = f'<origin{attributes}/>' if attributes else ''
    named = f' name="{name}"' if name else ''
    return f'<collision{named}>{origin}<geometry>{geometry}</geometry></collision>'


def test_every_primitive_with_its_origin():
    rpy = (0.3, -0.7, 1.9)
    urdf = robot(link(
        'arm',
        collision('<box size="0.1 0.2 0.3"/>', '1 2 3', ' '.join(map(str, rpy))),
        collision('<sphere radius="0.25"/>', '0 0 0.5'),
        collision('<cylinder radius="0.05" length="0.4"/>', '0.1 0 0', '1.5707963267948966 0 0'),
        collision('<capsule radius="0.02" length="0.3"/>', None, '0 0.4 0')))
    model = parse_urdf_collisions(urdf, resolver=ResourceResolver())
    assert model.robot_name == 'test_bot'
    assert model.errors == [] and model.warnings == []
    box, ball, can, pill = model.pieces['arm']
    for piece in (box, ball, can, pill):
        assert (piece.body, piece.frame_id) == ('arm', 'arm')
    assert box.description == 'box 0.1x0.2x0.3'
    np.testing.assert_allclose(box.origin, pose((1, 2, 3), rpy), atol=1e-12)
    np.testing.assert_allclose(piece_support(box),
                               box_support((0.1, 0.2, 0.3), pose((1, 2, 3), rpy)), atol=1e-12)
    np.testing.assert_allclose(piece_support(ball),
                               round_support(pose((0, 0, 0.5), (0, 0, 0)), 0.25, 0.0, False),
                               atol=1e-12)
    cylinder_pose = pose((0.1, 0, 0), (np.pi / 2, 0, 0))
    np.testing.assert_allclose(piece_support(can),
                               round_support(cylinder_pose, 0.05, 0.2, True), atol=1e-9)
    np.testing.assert_allclose(piece_support(pill),
                               round_support(pose((0, 0, 0), (0, 0.4, 0)), 0.02, 0.15, False),
                               atol=1e-12)


def test_rpy_is_fixed_axis_roll_then_pitch_then_yaw():
    # Roll 90 degrees about x, then yaw 90 degrees about the fixed z. Half extents (0.05, 0.1,
    # 0.15) become (0.05, 0.15, 0.1) after the roll and (0.15, 0.05, 0.1) after the yaw; the
    # other order (yaw first) would give (0.1, 0.15, 0.05).
    quarter = '1.5707963267948966'
    model = parse_urdf_collisions(robot(link(
        'l', collision('<box size="0.1 0.2 0.3"/>', rpy=f'{quarter} 0 {quarter}'))))
    piece = model.pieces['l'][0]
    extent = [piece_support(piece, np.eye(3)[[i]])[0] for i in range(3)]
    np.testing.assert_allclose(extent, [0.15, 0.05, 0.1], atol=1e-12)


def test_mesh_with_scale_through_package_uri(tmp_path):
    mesh = trimesh.creation.box((0.2, 0.4, 0.6))
    (tmp_path / 'meshes').mkdir()
    mesh.export(str(tmp_path / 'meshes' / 'part.stl'))
    resolver = ResourceResolver(package_paths={'my_robot': str(tmp_path)})
    model = parse_urdf_collisions(robot(link('tool', collision(
        '<mesh filename="package://my_robot/meshes/part.stl" scale="1 2 0.5"/>', '0 0 1'))),
        resolver=resolver)
    (piece,) = model.pieces['tool']
    assert piece.description == ('mesh package://my_robot/meshes/part.stl scaled 1x2x0.5 '
                                 '(hull of 8 vertices)')
    expected = mesh.vertices * [1, 2, 0.5] + [0, 0, 1]
    np.testing.assert_allclose(piece_support(piece), points_support(expected), atol=1e-6)


def test_package_uri_through_a_fake_ament_prefix(tmp_path, monkeypatch):
    pytest.importorskip('ament_index_python')
    prefix = tmp_path / 'prefix'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'fake_description').write_text('')
    (prefix / 'share' / 'fake_description' / 'meshes').mkdir(parents=True)
    trimesh.creation.box((1.0, 1.0, 1.0)).export(
        str(prefix / 'share' / 'fake_description' / 'meshes' / 'cube.STL'))
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    model = parse_urdf_collisions(robot(link('base', collision(
        '<mesh filename="package://fake_description/meshes/cube.STL"/>'))),
        resolver=ResourceResolver())
    assert model.errors == []
    np.testing.assert_allclose(piece_support(model.pieces['base'][0]),
                               box_support((1, 1, 1), np.eye(4)), atol=1e-6)


def test_links_without_collision_have_no_pieces():
    model = parse_urdf_collisions(robot(
        link('world'),
        '<link name="visual_only"><visual><geometry><box size="1 1 1"/></geometry></visual>'
        '</link>',
        link('body', collision('<sphere radius="1"/>')),
        '<joint name="j" type="fixed"><parent link="world"/><child link="body"/></joint>'))
    assert model.links == ['world', 'visual_only', 'body']
    assert list(model.pieces) == ['body']
    assert model.errors == [] and model.rejected_links == set()


def test_several_collision_elements_are_several_pieces():
    model = parse_urdf_collisions(robot(link(
        'forearm',
        collision('<cylinder radius="0.04" length="0.3"/>', name='shaft'),
        collision('<sphere radius="0.05"/>', '0 0 0.15', name='elbow'),
        collision('<sphere radius="0.05"/>', '0 0 -0.15'))))
    pieces = model.pieces['forearm']
    assert len(pieces) == 3
    np.testing.assert_allclose([p.origin[2, 3] for p in pieces], [0.0, 0.15, -0.15])
    assert [p.description for p in pieces] == [
        'cylinder radius 0.04 length 0.3', 'sphere radius 0.05', 'sphere radius 0.05']


@pytest.mark.parametrize('bad_collision, words', [
    ('<collision><origin xyz="0 0 0"/></collision>', 'no <geometry> element'),
    (collision(''), '<geometry> must hold exactly one shape, found 0'),
    (collision('<box size="1 1 1"/><sphere radius="1"/>'), 'exactly one shape, found 2'),
    (collision('<cone radius="1"/>'), 'unsupported geometry <cone>'),
    (collision('<box/>'), '<box> has no size attribute'),
    (collision('<box size="1 1"/>'), 'box size must be 3 numbers'),
    (collision('<box size="1 0 1"/>'), 'box size must all be > 0'),
    (collision('<sphere radius="-0.1"/>'), 'sphere radius must be > 0'),
    (collision('<sphere radius="abc"/>'), 'sphere radius must contain only numbers'),
    (collision('<cylinder radius="0.1"/>'), '<cylinder> has no length attribute'),
    (collision('<sphere radius="1"/>', xyz='0 nan 0'), 'xyz must be finite'),
    (collision('<sphere radius="1"/>', rpy='0 0'), 'rpy must be 3 numbers'),
    (collision('<mesh/>'), '<mesh> has no filename attribute'),
    (collision('<mesh filename="/no/such/mesh.stl"/>'),
     '/no/such/mesh.stl: cannot open mesh file'),
    (collision('<mesh filename="/no/such/mesh.stl" scale="1 1"/>'), 'mesh scale must be 3'),
])
def test_a_rejected_element_names_its_link_and_spares_the_others(bad_collision, words):
    urdf = robot(link('good_before', collision('<sphere radius="0.1"/>')),
                 link('bad', collision('<box size="1 1 1"/>'), bad_collision),
                 link('good_after', collision('<box size="0.1 0.1 0.1"/>')))
    model = parse_urdf_collisions(urdf, resolver=ResourceResolver())
    assert len(model.errors) == 1
    error = model.errors[0]
    assert isinstance(error, ModelError) and error.body == 'bad'
    assert words in error.reason
    assert str(error).startswith('bad: collision 2 of 2')
    # The bad link keeps none of its pieces: partial geometry would look farther away.
    assert list(model.pieces) == ['good_before', 'good_after']
    assert model.rejected_links == {'bad'}
    assert model.links == ['good_before', 'bad', 'good_after']


def test_named_collision_is_named_in_the_error():
    model = parse_urdf_collisions(robot(link(
        'l', collision('<sphere radius="0"/>', name='bumper'))))
    assert str(model.errors[0]) == "l: collision 'bumper': sphere radius must be > 0, got '0'"


@pytest.mark.parametrize('text, words', [
    ('', 'empty'),
    ('   ', 'empty'),
    ('<robot name="r"><link name="a">', 'malformed XML'),
    ('this is not xml', 'malformed XML'),
    ('<sdf version="1.6"><model name="m"/></sdf>', 'root element is <sdf>'),
])
def test_a_broken_document_is_one_model_error(text, words):
    with pytest.raises(ModelError) as caught:
        parse_urdf_collisions(text)
    assert caught.value.body == 'robot_description'
    assert words in caught.value.reason


def test_nameless_and_duplicate_links_are_errors():
    model = parse_urdf_collisions(robot(
        link('a', collision('<sphere radius="1"/>')),
        '<link><collision><geometry><sphere radius="1"/></geometry></collision></link>',
        link('a', collision('<box size="1 1 1"/>'))))
    assert [str(e) for e in model.errors] == [
        'link #2: link without a name attribute',
        'a: duplicate link name; the first one is used']
    assert model.pieces['a'][0].description == 'sphere radius 1'


def test_non_convex_mesh_warns_once_per_link_naming_link_and_file(tmp_path):
    # Two boxes overlapping in an L: faces inside the hull.
    first = trimesh.creation.box((1.0, 0.2, 0.2))
    first.apply_translation((0.4, 0.0, 0.0))
    second = trimesh.creation.box((0.2, 1.0, 0.2))
    second.apply_translation((0.0, 0.4, 0.0))
    path = str(tmp_path / 'ell.obj')
    trimesh.util.concatenate([first, second]).export(path)
    mesh = f'<mesh filename="{path}"/>'
    model = parse_urdf_collisions(robot(
        link('upper', collision(mesh), collision(mesh, xyz='0 0 1')),
        link('lower', collision(mesh))), resolver=ResourceResolver())
    assert model.errors == []
    assert len(model.pieces['upper']) == 2
    assert len(model.warnings) == 2
    for name, warning in zip(('upper', 'lower'), model.warnings):
        assert warning.startswith(f'{name}: mesh {path} is not convex')
        assert 'using its convex hull' in warning
    assert model.pieces['lower'][0].description.endswith('not convex')


def test_xacro_namespace_and_comments_are_fine():
    urdf = ('<?xml version="1.0"?><robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            '<!-- generated --><link name="a"><collision><geometry><!-- a box -->'
            '<box size="1 1 1"/></geometry></collision></link></robot>')
    model = parse_urdf_collisions(urdf)
    assert model.errors == [] and list(model.pieces) == ['a']
