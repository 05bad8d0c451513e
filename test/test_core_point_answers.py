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
The full answer of a point against a piece (distance, witness, normal) against GJK/EPA.

The reference is the core's ``signed_distance`` between the piece and a one-point polytope at
the point: its distance, its witness on the piece and its normal. Where the way out of a piece
is not unique (on a flat piece, at a sphere's centre, equally deep below two faces) only the
distance and the answer's own invariants are compared: ``point - witness == distance *
normal``, a unit normal, and a witness on the piece's surface.
"""

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import PointGrid
from gjk_ros.core.rigid import quaternion_matrix
import numpy
import pytest

POINT = ConvexPolytope.from_points(numpy.zeros((1, 3)))


def shapes(rng, scale=1.0):
    """One shape of every kind the answer branches on, scaled by ``scale``."""
    flat = numpy.c_[rng.normal(size=(7, 2)), numpy.zeros(7)]
    return {
        'box': ConvexPolytope.box(numpy.array([0.1, 0.2, 0.05]) * scale),
        'hull': ConvexPolytope.from_points(rng.normal(size=(40, 3)) * 0.2 * scale),
        'swept hull': ConvexPolytope.from_points(rng.normal(size=(12, 3)) * 0.1 * scale,
                                                 radius=0.03 * scale),
        'sphere': ConvexPolytope.sphere(0.07 * scale),
        'capsule': ConvexPolytope.capsule(0.04 * scale, 0.3 * scale),
        'cylinder': ConvexPolytope.cylinder(0.05 * scale, 0.2 * scale),
        'flat': ConvexPolytope.from_points(flat * 0.2 * scale),
        'segment': ConvexPolytope.from_points(numpy.array([[0.0, 0.0, -0.1],
                                                           [0.0, 0.0, 0.2]]) * scale),
        'point': POINT,
    }


def random_pose(rng, scale=1.0):
    pose = numpy.eye(4)
    quaternion = rng.normal(size=4)
    pose[:3, :3] = quaternion_matrix(*(quaternion / numpy.linalg.norm(quaternion)))
    pose[:3, 3] = rng.normal(size=3) * 0.3 * scale
    return pose


def gjk(shape, pose, point):
    place = numpy.eye(4)
    place[:3, 3] = point
    return signed_distance(shape, pose, POINT, place)


def check_invariants(prepared, pose, point, answer, tolerance):
    """Check the answer's own contract, whatever the reference says."""
    distance, witness, normal = answer
    assert numpy.linalg.norm(normal) == pytest.approx(1.0, abs=1e-12)
    numpy.testing.assert_allclose(point - witness, distance * normal, atol=tolerance)
    on_surface = prepared.signed_distances(witness[None], pose)[0]
    assert abs(on_surface) <= tolerance


def unique_way_out(prepared, pose, point, tolerance):
    """Whether the normal at ``point`` is unique: outside the core, or one nearest face."""
    local = (point - pose[:3, 3]) @ pose[:3, :3]
    core = prepared.signed_distances(point[None], pose)[0] + prepared.radius
    if core > tolerance:
        return True
    if prepared.is_cylinder:
        radius, half = prepared.cylinder
        radial = numpy.hypot(local[0], local[1])
        return radial > tolerance and abs((radial - radius) - (abs(local[2]) - half)) > tolerance
    if not len(prepared.planes):
        return False  # a flat piece, a segment or a point: no inside, no one way out
    values = numpy.sort(prepared.planes[:, :3] @ local + prepared.planes[:, 3])
    return values[-1] - values[-2] > tolerance


def compare(shape, pose, point, scale=1.0):
    prepared = PointDistanceShape(shape)
    tolerance = 1e-9 * max(scale, 1.0)
    answer = prepared.closest(point, pose)
    check_invariants(prepared, pose, point, answer, tolerance)
    reference = gjk(shape, pose, point)
    # Exact against a polytope; within GJK/EPA's own error bound on a cylinder's smooth sides.
    assert answer[0] == pytest.approx(reference.distance, abs=tolerance + reference.error_bound)
    if unique_way_out(prepared, pose, point, 1e-6 * scale):
        # GJK on a cylinder's smooth support stops once its distance is within the error
        # bound; its direction is then only as good as the square root of that bound.
        angle = 1e-3 if prepared.is_cylinder else 1e-6
        numpy.testing.assert_allclose(answer[2], reference.normal, atol=angle)
        numpy.testing.assert_allclose(answer[1], reference.witness_a, atol=angle * scale)
    return answer


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('scale', [1.0, 1e3, 1e-4])
def test_closest_matches_gjk_on_seeded_scenes(seed, scale):
    """Outside, inside the sweep, inside the core; metre, kilometre and 0.1 mm pieces."""
    rng = numpy.random.default_rng(300 + seed)
    for name, shape in shapes(rng, scale).items():
        pose = random_pose(rng, scale)
        centre = pose[:3, :3] @ shape.bounding_center + pose[:3, 3]
        spread = max(shape.bounding_radius, 1e-3 * scale)
        points = centre + rng.normal(size=(25, 3)) * spread * 0.8
        points[:3] = centre + rng.normal(size=(3, 3)) * 5.0 * scale
        for point in points:
            compare(shape, pose, point, scale)
        assert name


def test_a_point_inside_a_box_gets_minus_its_depth_and_the_nearest_face_normal():
    box = ConvexPolytope.box([0.1, 0.2, 0.3])
    pose = numpy.eye(4)
    distance, witness, normal = compare(box, pose, numpy.array([0.07, 0.0, 0.0]))
    assert distance == pytest.approx(-0.03, abs=1e-15)
    numpy.testing.assert_allclose(normal, [1.0, 0.0, 0.0], atol=1e-15)
    numpy.testing.assert_allclose(witness, [0.1, 0.0, 0.0], atol=1e-15)
    # Rotated and moved: the normal turns with the piece.
    turned = numpy.eye(4)
    turned[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    turned[:3, 3] = [1.0, 2.0, 3.0]
    point = turned[:3, :3] @ [0.0, -0.15, 0.0] + turned[:3, 3]
    distance, _, normal = compare(box, turned, point)
    assert distance == pytest.approx(-0.05, abs=1e-12)
    numpy.testing.assert_allclose(normal, turned[:3, :3] @ [0.0, -1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize('point', [[0.1, 0.0, 0.0], [0.1, 0.2, 0.0], [0.1, 0.2, 0.3],
                                   [0.05, -0.2, 0.1]])
def test_a_point_on_the_surface_is_at_zero_on_a_face_edge_or_vertex(point):
    box = ConvexPolytope.box([0.1, 0.2, 0.3])
    distance, witness, _ = compare(box, numpy.eye(4), numpy.array(point))
    assert distance == 0.0
    numpy.testing.assert_array_equal(witness, point)


def test_coplanar_points_and_a_flat_piece():
    """In the plane of a flat piece: on it (0, either side out) and beside it (> 0)."""
    square = ConvexPolytope.from_points([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0],
                                         [0.0, 1.0, 0.0]])
    pose = numpy.eye(4)
    distance, witness, normal = compare(square, pose, numpy.array([0.3, 0.4, 0.0]))
    assert distance == pytest.approx(0.0, abs=1e-15) and abs(normal[2]) == pytest.approx(1.0)
    distance, witness, normal = compare(square, pose, numpy.array([1.5, 0.5, 0.0]))
    assert distance == pytest.approx(0.5) and normal == pytest.approx([1.0, 0.0, 0.0])
    # In the plane of a box face, beyond its edge.
    box = ConvexPolytope.box([0.1, 0.1, 0.1])
    distance, witness, _ = compare(box, pose, numpy.array([0.3, 0.05, 0.1]))
    assert distance == pytest.approx(0.2) and witness == pytest.approx([0.1, 0.05, 0.1])


def test_centres_and_axes_where_every_way_out_is_as_short():
    for shape, point, depth in [(ConvexPolytope.sphere(0.5), [0.0, 0.0, 0.0], -0.5),
                                (ConvexPolytope.capsule(0.1, 0.4), [0.0, 0.0, 0.05], -0.1),
                                (ConvexPolytope.cylinder(0.1, 1.0), [0.0, 0.0, 0.0], -0.1),
                                (ConvexPolytope.box([0.1, 0.1, 0.1]), [0.0, 0.0, 0.0], -0.1),
                                (POINT, [0.0, 0.0, 0.0], 0.0)]:
        distance, _, _ = compare(shape, numpy.eye(4), numpy.array(point))
        assert distance == pytest.approx(depth, abs=1e-15)


def test_cylinder_inside_near_the_cap_and_outside_beside_the_rim():
    cylinder = ConvexPolytope.cylinder(0.1, 0.4)
    distance, witness, normal = compare(cylinder, numpy.eye(4), numpy.array([0.02, 0.0, -0.19]))
    assert distance == pytest.approx(-0.01) and normal == pytest.approx([0.0, 0.0, -1.0])
    assert witness == pytest.approx([0.02, 0.0, -0.2])
    distance, witness, normal = compare(cylinder, numpy.eye(4), numpy.array([0.4, 0.0, 0.6]))
    assert distance == pytest.approx(0.5) and witness == pytest.approx([0.1, 0.0, 0.2])


@pytest.mark.parametrize('seed', range(3))
def test_grid_nearest_answers_in_full_as_gjk_does(seed):
    """The grid's answer: the brute-force nearest point, and GJK's distance, witness, normal."""
    rng = numpy.random.default_rng(400 + seed)
    points = numpy.vstack([rng.normal(size=(300, 3)) * 0.4,
                           numpy.c_[numpy.full(100, 0.3), rng.uniform(-0.5, 0.5, (100, 2))]])
    grid = PointGrid(points, cell=0.05)
    for name, shape in shapes(rng).items():
        prepared, pose = PointDistanceShape(shape), random_pose(rng)
        answer = grid.nearest(prepared, pose)
        exact = prepared.signed_distances(grid.points, pose)
        assert answer.distance == exact.min() and exact[answer.index] == answer.distance, name
        numpy.testing.assert_array_equal(answer.point, grid.points[answer.index])
        compared = compare(shape, pose, answer.point)
        assert answer.distance == compared[0]
        numpy.testing.assert_array_equal(answer.witness, compared[1])
        numpy.testing.assert_array_equal(answer.normal, compared[2])


def test_an_empty_grid_answers_nothing():
    answer = PointGrid(numpy.zeros((0, 3))).nearest(
        PointDistanceShape(ConvexPolytope.box([0.1, 0.1, 0.1])), numpy.eye(4))
    assert answer.distance == numpy.inf and answer.index == -1
    assert numpy.isnan(answer.witness).all() and numpy.isnan(answer.normal).all()
