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
Invariants of the signed distance that need no reference answer, or only a contact test.

The sign convention (stated once): w = a - b, `normal` points from A to B, `distance` > 0 apart,
0 touching, < 0 overlapping, witness_b - witness_a == distance * normal, and moving B by
-distance * normal brings the bodies into contact. Also: swapping A and B, moving or rotating the
whole scene, scaling it, and a stale cache change nothing but what they must.
"""

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import signed_distance
from gjk_ros.core import SimplexCache
from gjk_ros.core import Status
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies
import numpy
import pytest
from reference import box_shape
from reference import capsule_shape
from reference import make_pose
from reference import points_shape
from reference import random_rotation
from reference import signed_distance_reference
from reference import sphere_surface_points
from reference import translated

# Property tests: reproducible, bounded, no example database written next to the sources.
PROPERTY = settings(max_examples=30, deadline=None, derandomize=True, database=None)
RELATIVE = 1e-9


def test_sign_convention_with_boxes_along_x():
    box = ConvexPolytope.box([1.0, 1.0, 1.0])
    origin = make_pose()
    apart = signed_distance(box, origin, box, make_pose(translation=[3.5, 0.0, 0.0]))
    assert apart.distance == pytest.approx(1.5, abs=1e-12)
    numpy.testing.assert_allclose(apart.normal, [1.0, 0.0, 0.0], atol=1e-12)
    assert apart.status == Status.SEPARATED
    overlapping = signed_distance(box, origin, box, make_pose(translation=[1.5, 0.0, 0.0]))
    assert overlapping.distance == pytest.approx(-0.5, abs=1e-12)
    numpy.testing.assert_allclose(overlapping.normal, [1.0, 0.0, 0.0], atol=1e-12)
    assert overlapping.status == Status.PENETRATING
    for result in (apart, overlapping):
        numpy.testing.assert_allclose(result.witness_b - result.witness_a,
                                      result.distance * result.normal, atol=1e-12)
        assert result.witness_a[0] == pytest.approx(1.0, abs=1e-12)
        assert result.witness_b[0] == pytest.approx(result.distance + 1.0, abs=1e-12)


@pytest.mark.parametrize('offset, normal', [
    ([2.0, 0.0, 0.0], [1.0, 0.0, 0.0]),  # faces coincide
    ([2.0, 0.5, -0.25], [1.0, 0.0, 0.0]),  # faces overlap in part
    ([2.0, 1.5, 1.75], [1.0, 0.0, 0.0]),  # faces overlap in a small corner
    ([0.0, -2.0, 0.0], [0.0, -1.0, 0.0]),
    ([0.25, 0.5, 2.0], [0.0, 0.0, 1.0]),
])
def test_boxes_face_to_face_touch_exactly(offset, normal):
    # Every coordinate is exact in binary: the distance is exactly 0 and the normal the face's.
    box = ConvexPolytope.box([1.0, 1.0, 1.0])
    result = signed_distance(box, make_pose(), box, make_pose(translation=offset))
    assert result.distance == pytest.approx(0.0, abs=1e-14)
    assert result.status == Status.TOUCHING
    numpy.testing.assert_allclose(result.normal, normal, atol=1e-12)
    numpy.testing.assert_allclose(result.witness_a, result.witness_b, atol=1e-14)


@pytest.mark.parametrize('offset, normal', [
    ([2.0, 2.0, 0.0], [1.0, 0.0, 0.0]),  # edge on edge: any normal in a quarter circle is right
    ([2.0, 2.0, 2.0], [1.0, 0.0, 0.0]),  # corner on corner
])
def test_boxes_touching_on_edges_and_corners(offset, normal):
    box = ConvexPolytope.box([1.0, 1.0, 1.0])
    result = signed_distance(box, make_pose(), box, make_pose(translation=offset))
    assert result.distance == pytest.approx(0.0, abs=1e-14)
    assert result.status == Status.TOUCHING
    # The normal must separate: both boxes lie on their own side of the contact plane.
    assert numpy.all(numpy.asarray(result.normal) >= -1e-12)
    assert numpy.linalg.norm(result.normal) == pytest.approx(1.0, abs=1e-12)


def random_pair(seed, gap_in_sizes):
    """
    Return two random bodies and poses with centres `gap_in_sizes` body sizes apart.

    The bodies are hulls of 6 to 200 points on a stretched sphere, a box or a capsule.
    """
    rng = numpy.random.default_rng(seed)
    shapes = []
    for _ in range(2):
        choice = rng.integers(4)
        if choice == 0:
            shapes.append(box_shape(rng.uniform(0.1, 0.6, 3)))
        elif choice == 1:
            shapes.append(capsule_shape(rng.uniform(0.05, 0.3), rng.uniform(0.0, 1.0)))
        else:
            count = int(rng.integers(6, 200))
            stretch = rng.uniform(0.2, 0.6, 3)
            points = sphere_surface_points(rng, count) * stretch
            shapes.append(points_shape(f'hull{count}', points))
    size = max(shape.size for shape in shapes)
    pose_a = make_pose(random_rotation(rng), rng.uniform(-2.0, 2.0, 3))
    direction = sphere_surface_points(rng, 1)[0]
    pose_b = make_pose(random_rotation(rng), pose_a[:3, 3] + gap_in_sizes * size * direction)
    return shapes[0], pose_a, shapes[1], pose_b


def reference_distance(shape_a, pose_a, shape_b, pose_b):
    """Return the exact signed distance of two bodies in their poses."""
    return signed_distance_reference(shape_a.world_points(pose_a), shape_b.world_points(pose_b),
                                     shape_a.radius, shape_b.radius)


@PROPERTY
@given(seed=strategies.integers(0, 2 ** 32 - 1), gap=strategies.floats(0.0, 1.5))
def test_moving_b_by_minus_distance_along_normal_gives_contact(seed, gap):
    shape_a, pose_a, shape_b, pose_b = random_pair(seed, gap)
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    result = signed_distance(body_a, pose_a, body_b, pose_b)
    moved = translated(pose_b, -result.distance * numpy.asarray(result.normal))
    size = max(shape_a.size, shape_b.size)
    after = reference_distance(shape_a, pose_a, shape_b, moved).distance
    assert after == pytest.approx(0.0, abs=RELATIVE * (size + abs(result.distance)))


@PROPERTY
@given(seed=strategies.integers(0, 2 ** 32 - 1), gap=strategies.floats(0.0, 1.5))
def test_swapping_the_bodies_flips_the_normal_and_swaps_the_witnesses(seed, gap):
    shape_a, pose_a, shape_b, pose_b = random_pair(seed, gap)
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    forward = signed_distance(body_a, pose_a, body_b, pose_b)
    backward = signed_distance(body_b, pose_b, body_a, pose_a)
    size = max(shape_a.size, shape_b.size)
    tolerance = RELATIVE * (size + abs(forward.distance))
    assert backward.distance == pytest.approx(forward.distance, abs=tolerance)
    reference = reference_distance(shape_a, pose_a, shape_b, pose_b)
    if reference.normal_is_unique:
        numpy.testing.assert_allclose(backward.normal, -numpy.asarray(forward.normal),
                                      atol=1e-8)
    if generic_witnesses(shape_a, shape_b, reference):
        # Random rotations make the closest features a vertex and a face or two crossing
        # edges: then the witness points are unique, up to how well the crossing is conditioned.
        numpy.testing.assert_allclose(backward.witness_a, forward.witness_b, atol=1e-6 * size)
        numpy.testing.assert_allclose(backward.witness_b, forward.witness_a, atol=1e-6 * size)


def generic_witnesses(shape_a, shape_b, reference):
    """Tell whether the witness points are unique (no parallel faces or edges meet)."""
    # Boxes and capsules have parallel edges and faces in some relative poses; random hulls
    # almost surely do not.
    return (reference.normal_is_unique and shape_a.name.startswith('hull')
            and shape_b.name.startswith('hull'))


@PROPERTY
@given(seed=strategies.integers(0, 2 ** 32 - 1), gap=strategies.floats(0.0, 1.5))
def test_moving_and_rotating_the_whole_scene_moves_the_answer_with_it(seed, gap):
    shape_a, pose_a, shape_b, pose_b = random_pair(seed, gap)
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    rng = numpy.random.default_rng(seed)
    motion = make_pose(random_rotation(rng), rng.uniform(-10.0, 10.0, 3))
    before = signed_distance(body_a, pose_a, body_b, pose_b)
    after = signed_distance(body_a, motion @ pose_a, body_b, motion @ pose_b)
    size = max(shape_a.size, shape_b.size)
    assert after.distance == pytest.approx(before.distance, abs=RELATIVE * (size + 10.0))
    if reference_distance(shape_a, pose_a, shape_b, pose_b).normal_is_unique:
        numpy.testing.assert_allclose(after.normal, motion[:3, :3] @ before.normal, atol=1e-8)


@PROPERTY
@given(seed=strategies.integers(0, 2 ** 32 - 1), gap=strategies.floats(0.0, 1.5),
       exponent=strategies.integers(-3, 3))
def test_scaling_the_scene_scales_the_distance(seed, gap, exponent):
    shape_a, pose_a, shape_b, pose_b = random_pair(seed, gap)
    scale = 10.0 ** exponent
    unit = signed_distance(shape_a.build(ConvexPolytope), pose_a,
                           shape_b.build(ConvexPolytope), pose_b)
    pose_a[:3, 3] *= scale
    pose_b[:3, 3] *= scale
    scaled = signed_distance(shape_a.scaled(scale).build(ConvexPolytope), pose_a,
                             shape_b.scaled(scale).build(ConvexPolytope), pose_b)
    size = max(shape_a.size, shape_b.size)
    assert scaled.distance / scale == pytest.approx(unit.distance,
                                                    abs=RELATIVE * (size + abs(unit.distance)))


@PROPERTY
@given(seed=strategies.integers(0, 2 ** 32 - 1), gap=strategies.floats(0.0, 1.5),
       stale_gap=strategies.floats(0.0, 3.0))
def test_a_stale_cache_gives_the_cold_answer(seed, gap, stale_gap):
    # The cache is filled far away (another relation, another rotation) and then reused.
    shape_a, pose_a, shape_b, pose_b = random_pair(seed, gap)
    _, _, _, stale_pose_b = random_pair(seed + 1, stale_gap)
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    cache = SimplexCache()
    signed_distance(body_a, pose_a, body_b, stale_pose_b, cache)
    assert not cache.is_empty
    warm = signed_distance(body_a, pose_a, body_b, pose_b, cache)
    cold = signed_distance(body_a, pose_a, body_b, pose_b)
    size = max(shape_a.size, shape_b.size)
    assert warm.distance == pytest.approx(cold.distance, abs=RELATIVE * (size + abs(gap)))
    if reference_distance(shape_a, pose_a, shape_b, pose_b).normal_is_unique:
        numpy.testing.assert_allclose(warm.normal, cold.normal, atol=1e-8)


def test_a_cache_handed_to_other_bodies_starts_cold():
    rng = numpy.random.default_rng(31)
    big = ConvexPolytope.from_points(sphere_surface_points(rng, 300))
    small = ConvexPolytope.from_points(sphere_surface_points(rng, 20) * 0.5)
    box = ConvexPolytope.box([0.3, 0.2, 0.1])
    pose_a, pose_b = make_pose(), make_pose(random_rotation(rng), [1.2, 0.9, -0.4])
    cache = SimplexCache()
    signed_distance(big, pose_a, small, pose_b, cache)
    reused = signed_distance(box, pose_a, small, pose_b, cache)
    cold = signed_distance(box, pose_a, small, pose_b)
    assert reused.distance == pytest.approx(cold.distance, abs=1e-12)
    numpy.testing.assert_allclose(reused.normal, cold.normal, atol=1e-12)


def test_reset_cache_empties_it():
    box = ConvexPolytope.box([0.5, 0.5, 0.5])
    cache = SimplexCache()
    assert cache.is_empty
    signed_distance(box, make_pose(), box, make_pose(translation=[2.0, 0.3, 0.1]), cache)
    assert not cache.is_empty
    cache.reset()
    assert cache.is_empty


def test_concentric_spheres_report_full_overlap_with_a_unit_normal():
    # The normal is undefined here; it must still be a unit vector, never NaN.
    sphere = ConvexPolytope.sphere(0.5)
    result = signed_distance(sphere, make_pose(), ConvexPolytope.sphere(0.25), make_pose())
    assert result.distance == pytest.approx(-0.75, abs=1e-12)
    assert numpy.linalg.norm(result.normal) == pytest.approx(1.0, abs=1e-12)
    assert result.status == Status.PENETRATING


def test_sphere_radii_only_shift_the_core_distance():
    sphere = ConvexPolytope.sphere(0.3)
    point = ConvexPolytope.from_points([[0.0, 0.0, 0.0]])
    pose_b = make_pose(translation=[0.6, 0.8, 0.0])
    core = signed_distance(point, make_pose(), point, pose_b)
    swept = signed_distance(sphere, make_pose(), sphere, pose_b)
    assert core.distance == pytest.approx(1.0, abs=1e-14)
    assert swept.distance == pytest.approx(0.4, abs=1e-14)
    numpy.testing.assert_allclose(swept.normal, [0.6, 0.8, 0.0], atol=1e-14)
    numpy.testing.assert_allclose(swept.witness_a, [0.18, 0.24, 0.0], atol=1e-14)


@pytest.mark.parametrize('pose', [
    numpy.full((4, 4), numpy.nan),
    numpy.eye(3),
    numpy.diag([2.0, 1.0, 1.0, 1.0]),  # not a rotation
    numpy.diag([-1.0, 1.0, 1.0, 1.0]),  # a reflection
])
def test_invalid_poses_are_rejected(pose):
    box = ConvexPolytope.box([0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match='pose_b'):
        signed_distance(box, make_pose(), box, pose)


@pytest.mark.parametrize('name', ['cube', 'box', 'hull', 'capsule'])
def test_coincident_bodies_give_consistent_witnesses(name):
    # Identical bodies at the same pose: A - B is symmetric about the origin, so +n and -n tie
    # as normals; whichever is chosen, the witnesses must belong to it.
    rng = numpy.random.default_rng(81)
    shape = {
        'cube': box_shape([0.5, 0.5, 0.5]),
        'box': box_shape([0.5, 0.3, 0.2]),
        'hull': points_shape('hull', sphere_surface_points(rng, 30)),
        'capsule': capsule_shape(0.2, 0.8),
    }[name]
    body = shape.build(ConvexPolytope)
    for _ in range(5):
        pose = make_pose(random_rotation(rng), rng.uniform(-1.0, 1.0, 3))
        result = signed_distance(body, pose, body, pose)
        expected = reference_distance(shape, pose, shape, pose).distance
        assert result.distance == pytest.approx(expected, abs=1e-12)
        numpy.testing.assert_allclose(result.witness_b - result.witness_a,
                                      result.distance * numpy.asarray(result.normal),
                                      atol=1e-12)
        assert float(result.normal @ result.witness_a) == pytest.approx(
            shape.support_value(pose, result.normal), abs=1e-12)
