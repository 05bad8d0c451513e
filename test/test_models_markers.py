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

"""visualization_msgs/Marker to convex pieces (gjk_ros.models.markers)."""

import itertools
from types import SimpleNamespace

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.models import marker_to_piece, ModelError, ResourceResolver
from gjk_ros.models import markers, primitives
from gjk_ros.models.primitives import ELLIPSOID_OUTER_ERROR, ELLIPTIC_CYLINDER_OUTER_ERROR
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
import trimesh

try:
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker
except ImportError:   # no ROS messages: the same tests run on plain objects (duck typing)
    Point = Marker = None

TYPES = SimpleNamespace(**{name: number for number, name in markers.MARKER_TYPE_NAMES.items()})

DIRECTIONS = np.vstack([np.eye(3), -np.eye(3),
                        np.random.default_rng(5).normal(size=(60, 3))])
DIRECTIONS /= np.linalg.norm(DIRECTIONS, axis=1)[:, None]
QUATERNION = Rotation.from_euler('xyz', (0.4, -0.2, 1.1)).as_quat()   # x, y, z, w


def make_marker(kind, scale=(1.0, 1.0, 1.0), points=(), position=(0.5, -1.0, 2.0),
                quaternion=QUATERNION, frame_id='table', ns='obstacles', marker_id=7):
    """Return a real visualization_msgs Marker, or a plain stand-in when ROS is missing."""
    if Marker is None:
        return plain_marker(kind, scale, points, position, quaternion, frame_id, ns, marker_id)
    marker = Marker()
    marker.header.frame_id = frame_id
    marker.ns = ns
    marker.id = marker_id
    marker.type = kind
    marker.action = Marker.ADD
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = position
    orientation = marker.pose.orientation
    orientation.x, orientation.y, orientation.z, orientation.w = (float(q) for q in quaternion)
    marker.scale.x, marker.scale.y, marker.scale.z = (float(s) for s in scale)
    marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in points]
    return marker


def plain_marker(kind, scale, points, position, quaternion, frame_id, ns, marker_id):
    xyz = 'xyz'
    return SimpleNamespace(
        ns=ns, id=marker_id, type=kind, header=SimpleNamespace(frame_id=frame_id),
        pose=SimpleNamespace(
            position=SimpleNamespace(**dict(zip(xyz, map(float, position)))),
            orientation=SimpleNamespace(**dict(zip('xyzw', map(float, quaternion))))),
        scale=SimpleNamespace(**dict(zip(xyz, map(float, scale)))),
        points=[SimpleNamespace(**dict(zip(xyz, map(float, p)))) for p in points],
        mesh_resource='', mesh_file=SimpleNamespace(filename='', data=[]))


def marker_pose(position=(0.5, -1.0, 2.0), quaternion=QUATERNION):
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_quat(quaternion).as_matrix()
    matrix[:3, 3] = position
    return matrix


def piece_support(piece, directions=DIRECTIONS):
    rotation, translation = piece.origin[:3, :3], piece.origin[:3, 3]
    return np.array([d @ (rotation @ piece.shape.support(rotation.T @ d) + translation)
                     for d in directions])


def local_support(piece, directions=DIRECTIONS):
    """Support values in the piece frame itself (no origin)."""
    return np.array([d @ piece.shape.support(d) for d in directions])


def points_support(points, directions=DIRECTIONS):
    return (np.asarray(points, dtype=float) @ directions.T).max(axis=0)


def test_cube_is_a_box_of_full_edge_lengths_at_the_marker_pose():
    piece = marker_to_piece(make_marker(TYPES.CUBE, scale=(0.2, 0.4, 0.6)))
    assert (piece.body, piece.frame_id) == ('obstacles/7', 'table')
    assert piece.description == 'box 0.2x0.4x0.6'
    np.testing.assert_allclose(piece.origin, marker_pose(), atol=1e-12)
    corners = np.array(list(itertools.product((-0.1, 0.1), (-0.2, 0.2), (-0.3, 0.3))))
    world = corners @ marker_pose()[:3, :3].T + marker_pose()[:3, 3]
    np.testing.assert_allclose(piece_support(piece), points_support(world), atol=1e-12)
    assert piece.warnings == ()


def test_uniform_sphere_is_exact():
    piece = marker_to_piece(make_marker(TYPES.SPHERE, scale=(0.3, 0.3, 0.3)))
    np.testing.assert_allclose(local_support(piece), 0.15, atol=1e-12)
    assert piece.description == 'sphere radius 0.15' and piece.warnings == ()


def test_non_uniform_sphere_is_the_exact_ellipsoid():
    diameters = np.array([0.2, 0.4, 1.0])
    piece = marker_to_piece(make_marker(TYPES.SPHERE, scale=diameters))
    semi = diameters / 2.0
    exact = np.linalg.norm(DIRECTIONS * semi, axis=1)   # ellipsoid support function
    np.testing.assert_allclose(local_support(piece), exact, rtol=1e-12, atol=1e-15)
    assert piece.warnings == () and 'ellipsoid' in piece.description


def test_ellipsoids_scale_one_template_and_climb_like_a_fresh_hull():
    """The scaled template's vertex graph is the hull's: hill climbing finds every support."""
    diameters = np.array([0.2, 0.4, 1.0])
    scaled = primitives.ellipsoid(diameters, 'body').polytope  # SPHERE_LIST's outer form
    fresh = ConvexPolytope.from_points(scaled.vertices)
    assert scaled.num_vertices == fresh.num_vertices
    probe = ConvexPolytope.box([0.01, 0.01, 0.01])
    rng = np.random.default_rng(4)
    for _ in range(50):
        pose = np.eye(4)
        pose[:3, :3] = Rotation.random(random_state=rng).as_matrix()
        pose[:3, 3] = rng.normal(size=3)
        answers = [signed_distance(body, np.eye(4), probe, pose, hill_climb=climb).distance
                   for body in (scaled, fresh) for climb in (True, False)]
        assert max(answers) - min(answers) <= 1e-12


def test_cylinder_scale_is_diameters_and_height():
    piece = marker_to_piece(make_marker(TYPES.CYLINDER, scale=(0.2, 0.2, 1.0)))
    axis_z = np.array([0.0, 0.0, 1.0])
    along = DIRECTIONS @ axis_z
    across = np.linalg.norm(DIRECTIONS - along[:, None] * axis_z, axis=1)
    np.testing.assert_allclose(local_support(piece), 0.5 * np.abs(along) + 0.1 * across,
                               atol=1e-9)
    assert piece.warnings == ()


def test_elliptic_cylinder_is_an_outer_prism_with_a_warning():
    piece = marker_to_piece(make_marker(TYPES.CYLINDER, scale=(0.2, 0.6, 1.0)))
    exact = (0.5 * np.abs(DIRECTIONS[:, 2])
             + np.linalg.norm(DIRECTIONS[:, :2] * [0.1, 0.3], axis=1))
    got = local_support(piece)
    assert np.all(got >= exact - 1e-12)
    assert np.all(got <= exact + ELLIPTIC_CYLINDER_OUTER_ERROR * 0.3 + 1e-12)
    assert len(piece.warnings) == 1 and 'elliptic' in piece.warnings[0]


def test_triangle_list_points_are_scaled_like_rviz():
    tetra = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 0), (0, 0, 1), (1, 0, 0)]
    piece = marker_to_piece(make_marker(TYPES.TRIANGLE_LIST, scale=(2.0, 3.0, 0.5),
                                        points=tetra))
    np.testing.assert_allclose(local_support(piece),
                               points_support(np.array(tetra) * [2.0, 3.0, 0.5]), atol=1e-12)
    assert piece.description == '2 triangles scaled 2x3x0.5 (hull of 4 vertices)'
    assert piece.warnings == ()


def test_non_convex_triangle_list_warns():
    # Two triangles of a roof folded inwards: the ridge lies inside the hull.
    points = [(0, 0, 0), (1, 0, 0), (0.5, 0.5, -0.5), (0, 0, 0), (0.5, 0.5, -0.5), (0, 1, 0),
              (1, 0, 0), (1, 1, 0), (0.5, 0.5, -0.5), (0, 1, 0), (0.5, 0.5, -0.5), (1, 1, 0),
              (0, 0, 0), (0, 1, 0), (0.5, 0.5, -2.0)]
    piece = marker_to_piece(make_marker(TYPES.TRIANGLE_LIST, points=points))
    assert len(piece.warnings) == 1
    assert piece.warnings[0].startswith('obstacles/7: 5 triangles is not convex')


@pytest.mark.parametrize('points, scale, words', [
    ([(0, 0, 0), (1, 0, 0)], (1, 1, 1), '2 points is not a multiple of 3'),
    ([], (1, 1, 1), 'no points'),
    ([(0, 0, 0), (1, 0, 0), (0, 1, 0)], (1, 1, 0), 'RViz scales TRIANGLE_LIST points'),
    ([(0, 0, 0), (np.nan, 0, 0), (0, 1, 0)], (1, 1, 1), 'non-finite'),
    ([(1, 1, 1)] * 3, (1, 1, 1), 'no size'),
])
def test_bad_triangle_lists(points, scale, words):
    with pytest.raises(ModelError) as caught:
        marker_to_piece(make_marker(TYPES.TRIANGLE_LIST, scale=scale, points=points))
    assert caught.value.body == 'obstacles/7'
    assert caught.value.reason.startswith('TRIANGLE_LIST: ')
    assert words in caught.value.reason


def test_points_are_hulled_without_scale():
    points = [(0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 0, 3), (0.1, 0.1, 0.1)]
    piece = marker_to_piece(make_marker(TYPES.POINTS, scale=(0.05, 0.05, 0.0),
                                        points=points))
    np.testing.assert_allclose(local_support(piece), points_support(points), atol=1e-12)
    assert piece.description == 'hull of 5 points'


def test_sphere_list_is_the_points_swept_by_the_radius():
    points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    piece = marker_to_piece(make_marker(TYPES.SPHERE_LIST, scale=(0.2, 0.2, 0.2),
                                        points=points))
    np.testing.assert_allclose(local_support(piece), points_support(points) + 0.1, atol=1e-12)


def test_sphere_list_with_non_uniform_scale_contains_the_ellipsoids():
    points = np.array([(0, 0, 0), (1, 0, 0), (0, 1, 0)], float)
    piece = marker_to_piece(make_marker(TYPES.SPHERE_LIST, scale=(0.2, 0.4, 0.6),
                                        points=points))
    exact = points_support(points) + np.linalg.norm(DIRECTIONS * [0.1, 0.2, 0.3], axis=1)
    got = local_support(piece)
    assert np.all(got >= exact - 1e-12)
    assert np.all(got <= exact + ELLIPSOID_OUTER_ERROR * 0.3 + 1e-12)
    assert len(piece.warnings) == 1


def test_cube_list_is_the_hull_of_the_cubes():
    points = np.array([(0, 0, 0), (1, 0, 0), (0, 1, 1)], float)
    piece = marker_to_piece(make_marker(TYPES.CUBE_LIST, scale=(0.2, 0.4, 0.6),
                                        points=points))
    corners = np.array(list(itertools.product((-0.1, 0.1), (-0.2, 0.2), (-0.3, 0.3))))
    np.testing.assert_allclose(local_support(piece),
                               points_support((points[:, None] + corners).reshape(-1, 3)),
                               atol=1e-12)


def write_box(path, size=(0.2, 0.4, 0.6)):
    mesh = trimesh.creation.box(size)
    mesh.export(str(path))
    return mesh


def test_mesh_resource_is_scaled_by_the_marker_scale(tmp_path):
    mesh = write_box(tmp_path / 'box.stl')
    marker = make_marker(TYPES.MESH_RESOURCE, scale=(2.0, 1.0, 0.5))
    marker.mesh_resource = 'package://props/box.stl'
    piece = marker_to_piece(marker, resolver=ResourceResolver(
        package_paths={'props': str(tmp_path)}))
    np.testing.assert_allclose(local_support(piece),
                               points_support(mesh.vertices * [2.0, 1.0, 0.5]), atol=1e-6)
    assert piece.description.startswith('mesh package://props/box.stl scaled 2x1x0.5')


def test_mesh_file_bytes_are_used_when_mesh_resource_is_empty():
    mesh = trimesh.creation.box((0.2, 0.4, 0.6))
    marker = make_marker(TYPES.MESH_RESOURCE)
    if not hasattr(marker, 'mesh_file'):
        pytest.skip('this visualization_msgs has no Marker.mesh_file')
    marker.mesh_file.filename = 'part.STL'
    marker.mesh_file.data = list(mesh.export(file_type='stl'))
    piece = marker_to_piece(marker, resolver=ResourceResolver())
    np.testing.assert_allclose(local_support(piece), points_support(mesh.vertices), atol=1e-6)
    assert piece.description.startswith('mesh_file part.STL')


@pytest.mark.parametrize('resource, scale, words', [
    ('', (1, 1, 1), 'both mesh_resource and mesh_file.data are empty'),
    ('/no/such/file.stl', (1, 1, 1), 'cannot open mesh file /no/such/file.stl'),
    ('package://props/box.stl', (0, 0, 0), 'RViz scales the mesh by it'),
])
def test_bad_mesh_resources(resource, scale, words):
    marker = make_marker(TYPES.MESH_RESOURCE, scale=scale)
    marker.mesh_resource = resource
    with pytest.raises(ModelError) as caught:
        marker_to_piece(marker, resolver=ResourceResolver())
    assert caught.value.body == 'obstacles/7'
    assert words in caught.value.reason


@pytest.mark.parametrize('kind', ['ARROW', 'LINE_STRIP', 'LINE_LIST', 'TEXT_VIEW_FACING',
                                  'ARROW_STRIP'])
def test_types_without_volume_are_rejected(kind):
    with pytest.raises(ModelError) as caught:
        marker_to_piece(make_marker(getattr(TYPES, kind), points=[(0, 0, 0), (1, 0, 0)]))
    assert caught.value.body == 'obstacles/7'
    assert caught.value.reason.startswith(f'marker type {kind} has no collision geometry')


def test_unknown_type_number_is_rejected():
    with pytest.raises(ModelError, match='obstacles/7: marker type unknown type 42'):
        marker_to_piece(make_marker(42))


@pytest.mark.parametrize('kind, scale, points, words', [
    ('CUBE', (0.1, 0.0, 0.1), (), 'box size must all be > 0'),
    ('CUBE', (0.1, -0.1, 0.1), (), 'box size must all be > 0'),
    ('CUBE', (0.1, np.inf, 0.1), (), 'scale must be finite'),
    ('SPHERE', (0.0, 0.0, 0.0), (), 'must all be > 0'),
    ('CYLINDER', (0.1, 0.1, 0.0), (), 'must all be > 0'),
    ('POINTS', (0.1, 0.1, 0.1), (), 'no points'),
    ('POINTS', (0.1, 0.1, 0.1), [(0, 0, 0), (0, 0, 0)], 'all 2 points coincide'),
    ('POINTS', (0.1, 0.1, 0.1), [(0, 0, 0), (0, np.nan, 0)], '1 of 2 points are not finite'),
    ('SPHERE_LIST', (0.0, 0.0, 0.0), [(0, 0, 0)], 'must all be > 0'),
    ('CUBE_LIST', (0.1, 0.1, 0.1), (), 'no points'),
])
def test_empty_non_finite_or_zero_size_geometry_is_rejected(kind, scale, points, words):
    with pytest.raises(ModelError) as caught:
        marker_to_piece(make_marker(getattr(TYPES, kind), scale=scale, points=points))
    assert caught.value.body == 'obstacles/7'
    assert caught.value.reason.startswith(kind)
    assert words in caught.value.reason


@pytest.mark.parametrize('quaternion, position, words', [
    ((0.0, 0.0, 0.0, 0.0), (0, 0, 0), 'zero length'),
    ((0.0, np.nan, 0.0, 1.0), (0, 0, 0), 'orientation must be finite'),
    ((0.0, 0.0, 0.0, 1.0), (0, np.inf, 0), 'position must be finite'),
])
def test_bad_poses_are_rejected(quaternion, position, words):
    with pytest.raises(ModelError) as caught:
        marker_to_piece(make_marker(TYPES.CUBE, quaternion=quaternion, position=position))
    assert caught.value.body == 'obstacles/7' and words in caught.value.reason


def test_unnormalised_quaternion_is_normalised():
    piece = marker_to_piece(make_marker(TYPES.CUBE, quaternion=3.0 * QUATERNION))
    np.testing.assert_allclose(piece.origin, marker_pose(), atol=1e-12)


def test_empty_frame_id_is_rejected():
    with pytest.raises(ModelError, match='obstacles/7: header.frame_id is empty'):
        marker_to_piece(make_marker(TYPES.CUBE, frame_id=''))


@pytest.mark.skipif(Marker is None, reason='visualization_msgs is not installed')
def test_type_numbers_match_visualization_msgs():
    for number, name in markers.MARKER_TYPE_NAMES.items():
        assert getattr(Marker, name) == number


def test_negative_id_and_empty_namespace_make_the_body_name():
    piece = marker_to_piece(make_marker(TYPES.CUBE, ns='', marker_id=-3))
    assert piece.body == '/-3'
