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

"""``~/markers``: hull triangles, colours by state, stable ids, DELETE, lifetime, labels."""

import math

from gjk_ros.core import ConvexPolytope
from gjk_ros.models.transforms import quaternion_to_matrix
from gjk_ros.ros.records import new_records, PairStatus
import numpy
import pytest

pytest.importorskip('visualization_msgs.msg')

from gjk_ros.core.rigid import matrix_to_quaternion  # noqa: E402, I100
from gjk_ros.ros.outputs import hull_markers as markers_module  # noqa: E402
from gjk_ros.ros.outputs.hull_markers import (HULL_COLOURS, hull_state, LINK,  # noqa: E402
                                              MarkerBuilder, OBSTACLE, PieceView,
                                              shape_triangles)
from std_msgs.msg import Header  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

SHAPES = {
    'box': ConvexPolytope.box([0.1, 0.2, 0.3]),
    'sphere': ConvexPolytope.sphere(0.1),
    'capsule': ConvexPolytope.capsule(0.05, 0.4),
    'cylinder': ConvexPolytope.cylinder(0.1, 0.3),
    'rounded box': ConvexPolytope.from_points(
        numpy.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.1,
        radius=0.02),
    'hull': ConvexPolytope.from_points(numpy.random.default_rng(4).normal(size=(300, 3))),
}
HEADER = Header(frame_id='world')


def pose(xyz=(0.0, 0.0, 0.0), yaw=0.0):
    matrix = numpy.eye(4)
    matrix[:2, :2] = [[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]
    matrix[:3, 3] = xyz
    return matrix


def records(rows):
    """Build records from (link_id, obstacle_id, status, distance, link/obstacle point)."""
    result = new_records(len(rows))
    for name in result.dtype.names:
        if result.dtype[name].kind == 'f':
            result[name] = numpy.nan
    for index, (link_id, obstacle_id, status, distance, on_link, on_obstacle) in \
            enumerate(rows):
        result[index]['link_id'], result[index]['obstacle_id'] = link_id, obstacle_id
        result[index]['status'] = status
        if status in (PairStatus.VALID, PairStatus.APPROXIMATE):
            result[index]['distance'] = distance
            for axis, on_l, on_o in zip('xyz', on_link, on_obstacle):
                result[index]['link_' + axis] = on_l
                result[index]['obstacle_' + axis] = on_o
    return result


def hulls(array):
    return [m for m in array.markers if m.ns.endswith('_hulls') and m.action == Marker.ADD]


def by_namespace(array, namespace):
    return [m for m in array.markers if m.ns == namespace]


def marker_triangles(marker):
    """World-frame triangles of a TRIANGLE_LIST marker (points moved by its pose)."""
    points = numpy.array([(p.x, p.y, p.z) for p in marker.points])
    orientation = marker.pose.orientation
    rotation = quaternion_to_matrix((orientation.x, orientation.y, orientation.z,
                                     orientation.w))
    position = marker.pose.position
    return points @ rotation.T + (position.x, position.y, position.z)


@pytest.mark.parametrize('name', sorted(SHAPES))
def test_drawn_surface_is_the_shape_used(name):
    shape = SHAPES[name]
    triangles = shape_triangles(shape)
    assert triangles.ndim == 3 and triangles.shape[1:] == (3, 3)
    points = triangles.reshape(-1, 3)
    # The drawn surface lies inside the true body and reaches its extent in every direction
    # (up to the tessellation of round parts: 2 % of the radius).
    rng = numpy.random.default_rng(0)
    for direction in rng.normal(size=(200, 3)):
        direction /= numpy.linalg.norm(direction)
        true_extent = shape.support(direction) @ direction
        drawn_extent = (points @ direction).max()
        assert drawn_extent <= true_extent + 1e-9
        round_part = shape.radius + (shape.cylinder_radius if shape.kind == 'cylinder' else 0)
        assert drawn_extent >= true_extent - 0.02 * round_part - 1e-9
    # Wound counter-clockwise seen from outside: normals point away from the centre.
    centre = points.mean(axis=0)
    normals = numpy.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    outward = numpy.einsum('ij,ij->i', normals, triangles.mean(axis=1) - centre)
    assert (outward > 0.0).all()


def test_flat_and_thin_shapes_are_still_visible():
    square = ConvexPolytope.from_points([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    triangles = shape_triangles(square)
    assert len(triangles) == 4  # two triangles, both faces
    assert numpy.allclose(triangles[..., 2], 0.0)
    for thin in (ConvexPolytope.from_points([[0, 0, 0]]),
                 ConvexPolytope.from_points([[0, 0, 0], [0.5, 0, 0]])):
        extent = shape_triangles(thin).reshape(-1, 3).max(axis=0)
        assert extent[1] > 0.0 and extent[2] > 0.0  # drawn with a small radius


def test_a_single_point_is_drawn_as_a_visible_ball():
    """A cloud's nearest point: a ball of POINT_RADIUS around it, not a speck."""
    point = ConvexPolytope.from_points([[0.3, -0.2, 0.1]])
    corners = shape_triangles(point).reshape(-1, 3)
    radii = numpy.linalg.norm(corners - [0.3, -0.2, 0.1], axis=1)
    assert numpy.allclose(radii, markers_module.POINT_RADIUS)
    segment = shape_triangles(ConvexPolytope.from_points([[0, 0, 0], [0.5, 0, 0]]))
    assert segment.reshape(-1, 3)[:, 1].max() < markers_module.POINT_RADIUS


def test_quaternion_round_trip():
    rng = numpy.random.default_rng(5)
    for quaternion in list(rng.normal(size=(100, 4))) + [(1, 0, 0, 0), (0, 1, 0, 0),
                                                         (0, 0, 1, 0)]:
        rotation = quaternion_to_matrix(quaternion)
        numpy.testing.assert_allclose(quaternion_to_matrix(matrix_to_quaternion(rotation)),
                                      rotation, atol=1e-12)


def test_hull_states():
    assert hull_state(PairStatus.VALID, math.inf, 0.05) == 'clear'
    assert hull_state(PairStatus.VALID, 0.02, 0.05) == 'near'
    assert hull_state(PairStatus.APPROXIMATE, -0.01, 0.05) == 'penetrating'
    assert hull_state(PairStatus.STALE, -0.01, 0.05) == 'stale'  # unknown beats old numbers
    assert hull_state(PairStatus.INVALID, 1.0, 0.05) == 'invalid'
    assert hull_state(PairStatus.PENDING, 1.0, 0.05) == 'pending'
    assert len({HULL_COLOURS[state] for state in HULL_COLOURS}) == len(HULL_COLOURS)


def scene_pieces(arm_xyz=(0.0, 0.0, 0.0), arm_status=PairStatus.VALID):
    return [PieceView(LINK, 'arm', 0, SHAPES['box'], pose(arm_xyz, 0.3), arm_status, 0),
            PieceView(LINK, 'arm', 1, SHAPES['sphere'], pose(arm_xyz), arm_status, 0),
            PieceView(OBSTACLE, 'table/0', 0, SHAPES['cylinder'], pose((1.0, 0, 0)),
                      PairStatus.VALID, 3),
            PieceView(OBSTACLE, 'cup/1', 0, SHAPES['capsule'], pose((0, 1.0, 0)),
                      PairStatus.VALID, 4)]


def scene_records(table_distance=0.02, cup_status=PairStatus.BEYOND):
    return records([(0, 3, PairStatus.VALID, table_distance, (0.1, 0, 0), (0.12, 0, 0)),
                    (0, 4, cup_status, 0.5, (0, 0.2, 0), (0, 0.7, 0))])


def test_every_piece_is_drawn_where_it_is_in_its_state_colour():
    builder = MarkerBuilder(near_distance=0.05, lifetime=0.2)
    array = builder.build(scene_records(), HEADER, scene_pieces())
    drawn = hulls(array)
    assert len(drawn) == 4
    assert all(m.header.frame_id == 'world' and m.type == Marker.TRIANGLE_LIST for m in drawn)
    assert [m.ns for m in drawn] == ['link_hulls'] * 2 + ['obstacle_hulls'] * 2
    assert len({(m.ns, m.id) for m in drawn}) == 4
    for marker, piece in zip(drawn, scene_pieces()):
        expected = shape_triangles(piece.shape).reshape(-1, 3) @ piece.world_pose[:3, :3].T \
            + piece.world_pose[:3, 3]
        numpy.testing.assert_allclose(marker_triangles(marker), expected, atol=1e-12)
    colours = [(m.color.r, m.color.g, m.color.b, m.color.a) for m in drawn]
    rgba = {state: tuple(numpy.float32(HULL_COLOURS[state])) for state in HULL_COLOURS}
    # The arm and the table are 2 cm apart (near); the cup is beyond max_distance (clear).
    assert [tuple(numpy.float32(c)) for c in colours] == [rgba['near'], rgba['near'],
                                                          rgba['near'], rgba['clear']]
    penetrating = hulls(builder.build(scene_records(-0.01), HEADER, scene_pieces()))
    assert (penetrating[0].color.r, penetrating[3].color.g) == (
        pytest.approx(HULL_COLOURS['penetrating'][0]), pytest.approx(HULL_COLOURS['clear'][1]))
    stale = hulls(builder.build(scene_records(), HEADER,
                                scene_pieces(arm_status=PairStatus.STALE)))
    assert stale[0].color.r == pytest.approx(HULL_COLOURS['stale'][0])


def test_every_marker_expires_and_ids_are_stable_per_piece():
    builder = MarkerBuilder(lifetime=0.25)
    first = builder.build(scene_records(), HEADER, scene_pieces())
    second = builder.build(scene_records(), HEADER, scene_pieces(arm_xyz=(0.0, 0.0, 0.3)))
    assert [(m.ns, m.id) for m in hulls(first)] == [(m.ns, m.id) for m in hulls(second)]
    for marker in second.markers:
        if marker.action == Marker.ADD:
            assert (marker.lifetime.sec, marker.lifetime.nanosec) == (0, 250_000_000)
    assert hulls(second)[0].pose.position.z == pytest.approx(0.3)


def test_triangulation_is_done_once_per_shape(monkeypatch):
    calls = []
    real = markers_module.shape_triangles
    monkeypatch.setattr(markers_module, 'shape_triangles',
                        lambda shape: calls.append(shape) or real(shape))
    builder = MarkerBuilder()
    first = hulls(builder.build(scene_records(), HEADER, scene_pieces()))
    points = [m.points for m in first]
    for step in range(5):
        again = hulls(builder.build(scene_records(), HEADER,
                                    scene_pieces(arm_xyz=(0.01 * step, 0.0, 0.0))))
    assert len(calls) == 4  # one per shape, none per cycle
    assert all(a.points is b for a, b in zip(again, points))
    # A new shape for the same piece is drawn anew, under the same id.
    pieces = scene_pieces()
    pieces[0] = PieceView(LINK, 'arm', 0, SHAPES['hull'], pose(), PairStatus.VALID, 0)
    changed = hulls(builder.build(scene_records(), HEADER, pieces))
    assert len(calls) == 5 and changed[0].id == again[0].id
    assert len(changed[0].points) == 3 * len(shape_triangles(SHAPES['hull']))


def test_removed_or_undrawable_pieces_are_deleted():
    builder = MarkerBuilder()
    before = hulls(builder.build(scene_records(), HEADER, scene_pieces()))
    pieces = scene_pieces()
    pieces[1] = PieceView(LINK, 'arm', 1, SHAPES['sphere'], numpy.full((4, 4), numpy.nan),
                          PairStatus.INVALID, 0)
    pieces[2] = PieceView(OBSTACLE, 'table/0', 0, None, pose(), PairStatus.PENDING, 3)
    del pieces[3]
    after = builder.build(scene_records(), HEADER, pieces)
    deleted = {(m.ns, m.id) for m in after.markers if m.action == Marker.DELETE
               and m.ns.endswith('_hulls')}
    assert deleted == {(m.ns, m.id) for m in before[1:]}
    assert [(m.ns, m.id) for m in hulls(after)] == [(before[0].ns, before[0].id)]
    # Deleted once; a piece that comes back gets a fresh id (ids are never reused).
    again = builder.build(scene_records(), HEADER, scene_pieces())
    assert not [m for m in again.markers if m.action == Marker.DELETE and
                m.ns.endswith('_hulls')]
    assert len({m.id for m in hulls(again)} - {m.id for m in before}) == 3


def test_witness_segments_and_labels_of_the_closest_pairs():
    builder = MarkerBuilder(label_count=1, lifetime=0.1)
    rows = scene_records(cup_status=PairStatus.VALID)
    array = builder.build(rows, HEADER, scene_pieces())
    (segments,) = by_namespace(array, 'witness_segments')
    assert segments.type == Marker.LINE_LIST and len(segments.points) == 4
    assert (segments.points[1].x, segments.points[3].y) == (0.12, 0.7)
    assert segments.lifetime.nanosec == 100_000_000
    (label,) = by_namespace(array, 'distance_labels')
    assert label.type == Marker.TEXT_VIEW_FACING and label.action == Marker.ADD
    assert label.text == 'arm / table/0: +0.020 m'
    assert label.pose.position.x == pytest.approx(0.11)
    # The next cycle's segments are the next cycle's (their points are reused).
    moved = scene_records(cup_status=PairStatus.VALID)
    moved['obstacle_x'][0] = 0.13
    (segments,) = by_namespace(builder.build(moved, HEADER, scene_pieces()), 'witness_segments')
    assert [(p.x, p.y) for p in segments.points] == [(0.1, 0.0), (0.13, 0.0), (0.0, 0.2),
                                                     (0.0, 0.7)]
    # Nothing measured: the segments and the label are deleted.
    quiet = builder.build(scene_records(cup_status=PairStatus.STALE)[1:], HEADER,
                          scene_pieces())
    assert [m.action for m in by_namespace(quiet, 'witness_segments')] == [Marker.DELETE]
    assert [(m.action, m.id) for m in by_namespace(quiet, 'distance_labels')] == [
        (Marker.DELETE, 0)]
    assert not by_namespace(builder.build(rows[:0], HEADER, []), 'distance_labels')


def test_labels_without_names_show_ids():
    builder = MarkerBuilder()
    array = builder.build(scene_records(), HEADER, [])
    (label,) = by_namespace(array, 'distance_labels')
    assert label.text == '#0 / #3: +0.020 m'


@pytest.mark.parametrize('shape', [ConvexPolytope.cone(0.1, 0.15),
                                   ConvexPolytope.ellipsoid([0.1, 0.2, 0.3])],
                         ids=['cone', 'ellipsoid'])
def test_smooth_kinds_are_drawn_on_their_surface(shape):
    """Cones and ellipsoids: the hull of support points, inside and close to the body."""
    points = shape_triangles(shape).reshape(-1, 3)
    rng = numpy.random.default_rng(1)
    for direction in rng.normal(size=(200, 3)):
        direction /= numpy.linalg.norm(direction)
        true_extent = shape.support(direction) @ direction
        drawn_extent = (points @ direction).max()
        assert true_extent - 0.1 * shape.bounding_radius - 1e-9 <= drawn_extent \
            <= true_extent + 1e-9


def test_a_half_space_is_drawn_as_a_slab_under_its_plane():
    points = shape_triangles(ConvexPolytope.half_space()).reshape(-1, 3)
    assert points[:, 2].max() == 0.0 and points[:, 2].min() < 0.0
    assert numpy.ptp(points[:, 0]) == numpy.ptp(points[:, 1]) == markers_module.HALF_SPACE_DRAWN
