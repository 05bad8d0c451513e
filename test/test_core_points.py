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

"""Point distances to convex pieces against GJK/EPA on a one-point polytope (seeded scenes)."""

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.points import PointDistanceShape, points_in_ball
from gjk_ros.core.rigid import quaternion_matrix
import numpy
import pytest

TOLERANCE = 1e-9
POINT = ConvexPolytope.from_points(numpy.zeros((1, 3)))


def shapes(rng):
    """One shape of every kind the kernel branches on, including the flat and degenerate."""
    flat = numpy.c_[rng.normal(size=(7, 2)), numpy.zeros(7)]
    return {
        'box': ConvexPolytope.box([0.1, 0.2, 0.05]),
        'hull': ConvexPolytope.from_points(rng.normal(size=(40, 3)) * 0.2),
        'swept hull': ConvexPolytope.from_points(rng.normal(size=(12, 3)) * 0.1, radius=0.03),
        'sphere': ConvexPolytope.sphere(0.07),
        'capsule': ConvexPolytope.capsule(0.04, 0.3),
        'cylinder': ConvexPolytope.cylinder(0.05, 0.2),
        'flat': ConvexPolytope.from_points(flat * 0.2),
        'segment': ConvexPolytope.from_points([[0.0, 0.0, -0.1], [0.0, 0.0, 0.2]]),
        'point': POINT,
    }


def reference(shape, pose, point):
    """Signed distance from the core's GJK/EPA between the piece and a one-point polytope."""
    place = numpy.eye(4)
    place[:3, 3] = point
    return signed_distance(shape, pose, POINT, place).distance


def random_pose(rng):
    pose = numpy.eye(4)
    quaternion = rng.normal(size=4)
    pose[:3, :3] = quaternion_matrix(*(quaternion / numpy.linalg.norm(quaternion)))
    pose[:3, 3] = rng.normal(size=3) * 0.3
    return pose


@pytest.mark.parametrize('seed', range(6))
def test_point_distances_match_gjk_epa(seed):
    rng = numpy.random.default_rng(seed)
    for name, shape in shapes(rng).items():
        pose = random_pose(rng)
        # Points around the piece: many inside its bounding sphere, some far away.
        centre = pose[:3, :3] @ shape.bounding_center + pose[:3, 3]
        points = centre + rng.normal(size=(60, 3)) * shape.bounding_radius * 0.8
        points[:5] = centre + rng.normal(size=(5, 3)) * 5.0
        got = PointDistanceShape(shape).signed_distances(points, pose)
        want = numpy.array([reference(shape, pose, point) for point in points])
        assert numpy.abs(got - want).max() <= TOLERANCE, name


def test_touching_and_inside_a_box():
    box = PointDistanceShape(ConvexPolytope.box([0.1, 0.1, 0.1]))
    points = numpy.array([[0.1, 0.0, 0.0], [0.0, 0.0, 0.0], [0.05, 0.0, 0.0],
                          [0.2, 0.2, 0.1], [0.1, 0.1, 0.1]])
    got = box.signed_distances(points, numpy.eye(4))
    numpy.testing.assert_allclose(got, [0.0, -0.1, -0.05, numpy.hypot(0.1, 0.1), 0.0],
                                  atol=1e-15)


def test_indices_select_points():
    sphere = PointDistanceShape(ConvexPolytope.sphere(1.0))
    points = numpy.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.5]])
    got = sphere.signed_distances(points, numpy.eye(4), numpy.array([2, 0]))
    numpy.testing.assert_allclose(got, [-0.5, 1.0], atol=1e-15)


def test_points_in_ball_is_a_brute_force_ball():
    rng = numpy.random.default_rng(1)
    points = rng.normal(size=(500, 3))
    out = numpy.empty(500, dtype=numpy.int64)
    count = points_in_ball(points, 0.1, -0.2, 0.3, 0.9, out)
    want = numpy.flatnonzero(numpy.linalg.norm(points - [0.1, -0.2, 0.3], axis=1) <= 0.9)
    numpy.testing.assert_array_equal(out[:count], want)
