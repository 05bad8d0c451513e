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

"""Exact primitives: cone, ellipsoid and half-space, against closed forms and dense samples."""

import math

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import DistanceQuery
from gjk_ros.core import PairSet
from gjk_ros.core import signed_distance
from gjk_ros.core import Status
import numpy
import pytest
from reference import make_pose
from reference import random_rotation


def _cone_surface(radius, half_length, count):
    """Dense points of the cone's base rim and apex (its hull)."""
    angles = numpy.linspace(0.0, 2.0 * numpy.pi, count, endpoint=False)
    rim = numpy.column_stack([radius * numpy.cos(angles), radius * numpy.sin(angles),
                              numpy.full(count, -half_length)])
    return numpy.vstack([rim, [[0.0, 0.0, half_length]]])


def _ellipsoid_surface(axes, count):
    """Dense points of the ellipsoid's surface (a latitude-longitude grid)."""
    theta, phi = numpy.meshgrid(numpy.linspace(0.0, numpy.pi, count),
                                numpy.linspace(0.0, 2.0 * numpy.pi, 2 * count))
    unit = numpy.column_stack([(numpy.sin(theta) * numpy.cos(phi)).ravel(),
                               (numpy.sin(theta) * numpy.sin(phi)).ravel(),
                               numpy.cos(theta).ravel()])
    return unit * axes


@pytest.mark.parametrize('shape, surface', [
    (ConvexPolytope.cone(0.3, 1.2), _cone_surface(0.3, 0.6, 20000)),
    (ConvexPolytope.ellipsoid([0.5, 0.2, 0.9]),
     _ellipsoid_surface(numpy.array([0.5, 0.2, 0.9]), 600)),
])
def test_support_is_the_maximum_over_the_surface_and_lies_on_it(shape, surface):
    rng = numpy.random.default_rng(4)
    axes = [numpy.array([0.0, 0.0, 1.0]), numpy.array([0.0, 0.0, -1.0]),
            numpy.array([1.0, 0.0, 0.0])]
    for direction in list(rng.normal(size=(200, 3))) + axes:
        point = shape.support(direction)
        best = float((surface @ direction).max())
        # The sample's maximum approaches the support value from below (no sample beats it).
        assert best <= point @ direction + 1e-12
        assert point @ direction - best <= 2e-4 * numpy.linalg.norm(direction)


def test_ellipsoid_support_point_is_on_its_surface():
    axes = numpy.array([0.5, 0.2, 0.9])
    shape = ConvexPolytope.ellipsoid(axes)
    for direction in numpy.random.default_rng(6).normal(size=(100, 3)):
        point = shape.support(direction)
        assert ((point / axes) ** 2).sum() == pytest.approx(1.0, abs=1e-14)


def test_ellipsoid_with_equal_axes_measures_as_the_sphere():
    rng = numpy.random.default_rng(8)
    ellipsoid, sphere = ConvexPolytope.ellipsoid([0.4, 0.4, 0.4]), ConvexPolytope.sphere(0.4)
    box = ConvexPolytope.box([0.3, 0.2, 0.1])
    for _ in range(50):
        pose_b = make_pose(random_rotation(rng), rng.normal(size=3))
        exact = signed_distance(sphere, make_pose(), box, pose_b)
        answer = signed_distance(ellipsoid, make_pose(), box, pose_b)
        assert answer.distance == pytest.approx(exact.distance, abs=1e-9)


def _table():
    """Return a half-space whose plane is z = 0.7 with normal +z: a table top."""
    return ConvexPolytope.half_space(), make_pose(translation=[0.0, 0.0, 0.7])


@pytest.mark.parametrize('body', [
    ConvexPolytope.box([0.1, 0.2, 0.3]),
    ConvexPolytope.cylinder(0.05, 0.6),
    ConvexPolytope.cone(0.3, 1.0),
    ConvexPolytope.ellipsoid([0.5, 0.3, 0.2]),
    ConvexPolytope.capsule(0.1, 0.5),
    ConvexPolytope.from_points([[0.0, 0.0, 0.0]]),
])
@pytest.mark.parametrize('height', [2.0, 0.7, 0.71, 0.5])
def test_half_space_distance_is_the_lowest_point_above_the_plane(body, height):
    plane, plane_pose = _table()
    rng = numpy.random.default_rng(9)
    for _ in range(20):
        pose = make_pose(random_rotation(rng), [0.2, -0.1, height])
        lowest = pose[:3, :3] @ body.support(pose[:3, :3].T @ [0.0, 0.0, -1.0]) + pose[:3, 3]
        expected = lowest[2] - 0.7
        for result, normal in ((signed_distance(plane, plane_pose, body, pose), [0, 0, 1]),
                               (signed_distance(body, pose, plane, plane_pose), [0, 0, -1])):
            assert result.distance == pytest.approx(expected, abs=1e-14)
            numpy.testing.assert_allclose(result.normal, normal, atol=1e-15)
            numpy.testing.assert_allclose(result.witness_b - result.witness_a,
                                          result.distance * result.normal, atol=1e-14)
            assert result.error_bound == 0.0
            expected_status = (Status.TOUCHING if abs(expected) <= 1e-12 else
                               Status.SEPARATED if expected > 0.0 else Status.PENETRATING)
            assert result.status == expected_status


def test_half_space_through_pairset_and_query():
    plane, plane_pose = _table()
    box = ConvexPolytope.box([0.1, 0.1, 0.1])
    pose = make_pose(translation=[3.0, 4.0, 0.75])
    pairs = PairSet([plane, box], [[0, 1], [1, 0]])
    pairs.update(numpy.stack([plane_pose, pose]))
    numpy.testing.assert_allclose(pairs.distance, [-0.05, -0.05], atol=1e-15)
    assert list(pairs.status) == [Status.PENETRATING] * 2
    query = DistanceQuery(box, plane)
    assert query(pose, plane_pose) == pytest.approx(-0.05, abs=1e-15)
    assert query(make_pose(translation=[0.0, 0.0, 1.0]), plane_pose) == pytest.approx(0.2)


def test_two_half_spaces_are_degenerate_not_a_number():
    plane = ConvexPolytope.half_space()
    result = signed_distance(plane, make_pose(), plane, make_pose(translation=[0, 0, 1.0]))
    assert result.status == Status.DEGENERATE
    assert result.error_bound == math.inf


def test_half_space_support_exists_only_along_its_normal():
    plane = ConvexPolytope.half_space()
    numpy.testing.assert_array_equal(plane.support([0.0, 0.0, 2.0]), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        plane.support([0.0, 1.0, 0.0])
    assert plane.bounding_radius == math.inf
    assert plane.kind == 'half_space'


@pytest.mark.parametrize('kind', ['cylinder', 'cone', 'ellipsoid'])
def test_smooth_touching_contact_is_never_certified_separated(kind):
    # GJK converges sublinearly to a touching contact of smooth bodies: it can only bound the
    # distance, and a record whose bound reaches 0 must not claim SEPARATED.
    shapes = {'cylinder': ConvexPolytope.cylinder(0.2, 0.8), 'cone': ConvexPolytope.cone(0.3, 1.0),
              'ellipsoid': ConvexPolytope.ellipsoid([0.4, 0.3, 0.2])}
    body, other = shapes[kind], ConvexPolytope.cylinder(0.1, 0.5)
    rng = numpy.random.default_rng(12)
    for _ in range(100):
        pose_a = make_pose(random_rotation(rng), rng.normal(size=3))
        u = rng.normal(size=3)
        u /= numpy.linalg.norm(u)
        rotation = random_rotation(rng)
        contact = pose_a[:3, :3] @ body.support(pose_a[:3, :3].T @ u) + pose_a[:3, 3]
        pose_b = make_pose(rotation, contact - rotation @ other.support(rotation.T @ -u))
        result = signed_distance(body, pose_a, other, pose_b)
        assert result.distance - result.error_bound <= 1e-12
        if result.status == Status.SEPARATED:
            assert result.distance <= 1e-9


def _parallel_cylinders_truth(ra, ha, rb, hb, centre):
    """Signed distance of the origin's cylinder pair by the Minkowski cylinder (independent)."""
    dr = math.hypot(centre[0], centre[1]) - (ra + rb)
    dz = abs(centre[2]) - (ha + hb)
    if dr > 0.0 and dz > 0.0:
        return math.hypot(dr, dz)
    return max(dr, dz)


def test_coincident_coaxial_cylinders_have_the_exact_depth():
    # A - B is a cylinder of radius 10 and half length 20: the MTD is exactly 10 (EPA capped
    # at -9.997 with a bound of 0.027 before the closed form).
    cylinder = ConvexPolytope.cylinder(5.0, 20.0)
    result = signed_distance(cylinder, make_pose(), cylinder, make_pose())
    assert result.distance == -10.0
    assert result.status == Status.PENETRATING
    numpy.testing.assert_allclose(result.witness_b - result.witness_a,
                                  result.distance * result.normal, atol=1e-15)


@pytest.mark.parametrize('turn', [0.0, numpy.pi, 1e-13])
def test_parallel_cylinders_match_the_minkowski_cylinder(turn):
    a, b = ConvexPolytope.cylinder(0.3, 1.0), ConvexPolytope.cylinder(0.1, 0.4)
    rng = numpy.random.default_rng(13)
    for _ in range(200):
        centre = rng.uniform(-1.2, 1.2, size=3)
        spin = random_rotation(rng)
        # B's axis parallel (or anti-parallel, or 1e-13 rad off) to A's, anywhere about it.
        axis_turn = numpy.array([[1.0, 0.0, 0.0], [0.0, math.cos(turn), -math.sin(turn)],
                                 [0.0, math.sin(turn), math.cos(turn)]])
        angle = rng.uniform(0.0, 2.0 * numpy.pi)
        about_z = numpy.array([[math.cos(angle), -math.sin(angle), 0.0],
                               [math.sin(angle), math.cos(angle), 0.0], [0.0, 0.0, 1.0]])
        pose_a = make_pose(spin, rng.normal(size=3))
        pose_b = make_pose(spin @ axis_turn @ about_z, pose_a[:3, :3] @ centre + pose_a[:3, 3])
        expected = _parallel_cylinders_truth(0.3, 0.5, 0.1, 0.2, centre)
        for result in (signed_distance(a, pose_a, b, pose_b),
                       signed_distance(b, pose_b, a, pose_a)):
            assert result.distance == pytest.approx(expected, abs=1e-12)
            assert result.error_bound == 0.0
            numpy.testing.assert_allclose(result.witness_b - result.witness_a,
                                          result.distance * result.normal, atol=1e-12)
