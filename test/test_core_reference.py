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
The geometry core against the exact reference, and the reference against independent answers.

First the reference (reference.py) is checked against answers found another way: hand-computed
ones (axis-aligned boxes, spheres, segments, parallel squares), a quadratic program solved by
scipy's SLSQP (separated hulls), a dense search over directions of the separating gap
(overlapping hulls) and the closed form of a point against a cylinder.

Then gjk_ros.core.signed_distance is checked against it on random hulls (points on a sphere and
in a ball, 4 to 2000 vertices), boxes, primitives (sphere, capsule, swept hulls, cylinder),
degenerate bodies (point, segment, polygon, needle, duplicates) and scales from 1e-3 to 1e3, in
every relation: apart, within 1e-9 of touching on both sides, touching, shallow and deep overlap.
Each answer must match the distance to 1e-9 of the bodies' size, have the reference normal where
it is unique, support witnesses on the bodies' surfaces, and the same answer with the bodies
swapped, without hill climbing, and from a warm cache.
"""

import dataclasses

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import signed_distance
from gjk_ros.core import SimplexCache
import numpy
import pytest
from reference import ball_points
from reference import box_corners
from reference import box_shape
from reference import capsule_shape
from reference import check_result
from reference import cylinder_bracket
from reference import cylinder_points
from reference import cylinder_shape
from reference import Expected
from reference import expected_pair
from reference import gap
from reference import make_pose
from reference import point_cylinder_signed_distance
from reference import points_shape
from reference import random_rotation
from reference import signed_distance_reference
from reference import sphere_shape
from reference import sphere_surface_points
from reference import transform_points
from reference import translated
from scipy.optimize import minimize

EXACT = 1e-12


def axis_aligned_box_distance(centre_a, half_a, centre_b, half_b):
    """
    Return the signed distance of two axis-aligned boxes by hand.

    Apart: the Euclidean norm of the positive per-axis gaps. Overlapping: minus the smallest
    per-axis overlap (A - B is itself an axis-aligned box).
    """
    per_axis_gap = numpy.abs(centre_b - centre_a) - half_a - half_b
    if numpy.any(per_axis_gap > 0.0):
        return float(numpy.linalg.norm(numpy.maximum(per_axis_gap, 0.0)))
    return float(numpy.max(per_axis_gap))


def test_reference_axis_aligned_boxes_match_hand_formula():
    rng = numpy.random.default_rng(101)
    for _ in range(200):
        half_a, half_b = rng.uniform(0.1, 2.0, size=(2, 3))
        centre_a, centre_b = rng.uniform(-3.0, 3.0, size=(2, 3))
        reference = signed_distance_reference(box_corners(half_a) + centre_a,
                                              box_corners(half_b) + centre_b)
        expected = axis_aligned_box_distance(centre_a, half_a, centre_b, half_b)
        assert reference.distance == pytest.approx(expected, abs=EXACT)


def test_reference_overlapping_boxes_normal_is_the_shallowest_axis():
    reference = signed_distance_reference(box_corners([1.0, 1.0, 1.0]),
                                          box_corners([1.0, 2.0, 3.0]) + [0.0, 2.5, 0.0])
    assert reference.distance == pytest.approx(-0.5, abs=EXACT)
    numpy.testing.assert_allclose(reference.normal, [0.0, 1.0, 0.0], atol=EXACT)
    assert reference.normal_is_unique


def test_reference_concentric_cubes_have_an_ambiguous_normal():
    reference = signed_distance_reference(box_corners([1.0, 1.0, 1.0]),
                                          box_corners([1.0, 1.0, 1.0]))
    assert reference.distance == pytest.approx(-2.0, abs=EXACT)
    assert not reference.normal_is_unique


def test_reference_swept_points_are_spheres():
    rng = numpy.random.default_rng(102)
    for _ in range(50):
        centre_a, centre_b = rng.uniform(-2.0, 2.0, size=(2, 3))
        radius_a, radius_b = rng.uniform(0.0, 1.5, size=2)
        reference = signed_distance_reference([centre_a], [centre_b], radius_a, radius_b)
        offset = centre_b - centre_a
        expected = numpy.linalg.norm(offset) - radius_a - radius_b
        assert reference.distance == pytest.approx(expected, abs=EXACT)
        numpy.testing.assert_allclose(reference.normal, offset / numpy.linalg.norm(offset),
                                      atol=1e-12)


@pytest.mark.parametrize('offset_x, height, expected', [
    (0.0, 0.5, 0.5),  # crossing segments: the common perpendicular
    (0.7, 2.0, 2.0),
    (2.0, 1.0, numpy.sqrt(2.0)),  # beyond the end of A: end point to segment
    (0.3, 0.0, 0.0),  # crossing in a plane: touching
])
def test_reference_skew_segments_match_hand_values(offset_x, height, expected):
    segment_a = [[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    segment_b = [[offset_x, -1.0, height], [offset_x, 1.0, height]]
    reference = signed_distance_reference(segment_a, segment_b)
    assert reference.distance == pytest.approx(expected, abs=EXACT)
    assert reference.dimension == 2


@pytest.mark.parametrize('start_b, expected', [(3.0, 2.0), (0.5, 0.0), (-5.0, 3.0)])
def test_reference_collinear_segments(start_b, expected):
    segment_a = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    segment_b = [[start_b, 0.0, 0.0], [start_b + 2.0, 0.0, 0.0]]
    reference = signed_distance_reference(segment_a, segment_b)
    assert reference.dimension == 1
    assert reference.distance == pytest.approx(expected, abs=EXACT)


def test_reference_parallel_squares_form_a_flat_difference():
    square = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]
    for shift_x, height in [(3.0, 1.0), (1.0, 1.0), (0.5, 0.0), (2.5, 0.0)]:
        other = numpy.array(square) + [shift_x, 0.0, height]
        reference = signed_distance_reference(square, other)
        expected = numpy.hypot(max(shift_x - 2.0, 0.0), height)
        assert reference.dimension == 2
        assert reference.distance == pytest.approx(expected, abs=EXACT)


def test_reference_duplicates_and_interior_points_change_nothing():
    rng = numpy.random.default_rng(103)
    cube = box_corners([1.0, 0.5, 0.25])
    noisy = numpy.vstack([cube, cube, rng.uniform(-0.2, 0.2, size=(30, 3))])
    other = sphere_surface_points(rng, 20) + [0.5, 3.0, 0.0]
    assert (signed_distance_reference(noisy, other).distance
            == pytest.approx(signed_distance_reference(cube, other).distance, abs=EXACT))


def random_hull_pair(rng, offset):
    """Return two random hulls about 1 apart in size, B's centre moved by offset."""
    points_a = transform_points(make_pose(random_rotation(rng)),
                                sphere_surface_points(rng, 12) * rng.uniform(0.5, 1.5, 3))
    points_b = transform_points(make_pose(random_rotation(rng), offset),
                                sphere_surface_points(rng, 15) * rng.uniform(0.5, 1.5, 3))
    return points_a, points_b


def quadratic_program_distance(points_a, points_b):
    """
    Minimise |sum l_i a_i - sum m_j b_j| over convex weights with SLSQP.

    Any feasible point is an upper bound on the true distance (weak duality).
    """
    count_a = len(points_a)

    def objective(weights):
        difference = weights[:count_a] @ points_a - weights[count_a:] @ points_b
        gradient = numpy.concatenate([2.0 * points_a @ difference, -2.0 * points_b @ difference])
        return float(difference @ difference), gradient

    start = numpy.concatenate([numpy.full(count_a, 1.0 / count_a),
                               numpy.full(len(points_b), 1.0 / len(points_b))])
    constraints = [
        {'type': 'eq', 'fun': lambda weights: numpy.sum(weights[:count_a]) - 1.0},
        {'type': 'eq', 'fun': lambda weights: numpy.sum(weights[count_a:]) - 1.0},
    ]
    solution = minimize(objective, start, jac=True, method='SLSQP',
                        bounds=[(0.0, 1.0)] * len(start), constraints=constraints,
                        options={'ftol': 1e-16, 'maxiter': 500})
    weights = numpy.clip(solution.x, 0.0, None)
    weights[:count_a] /= weights[:count_a].sum()
    weights[count_a:] /= weights[count_a:].sum()
    return float(numpy.linalg.norm(weights[:count_a] @ points_a - weights[count_a:] @ points_b))


def test_reference_separated_hulls_match_quadratic_program():
    rng = numpy.random.default_rng(104)
    for _ in range(20):
        direction = sphere_surface_points(rng, 1)[0]
        points_a, points_b = random_hull_pair(rng, direction * rng.uniform(2.5, 4.0))
        reference = signed_distance_reference(points_a, points_b)
        assert reference.distance > 0.0
        # Lower bound: the gap along the reference normal. Upper bound: any feasible QP point.
        assert gap(points_a, points_b, reference.normal) == pytest.approx(reference.distance,
                                                                          abs=EXACT)
        upper = quadratic_program_distance(points_a, points_b)
        assert reference.distance <= upper + EXACT
        assert upper == pytest.approx(reference.distance, abs=1e-6)


def largest_sampled_gap(points_a, points_b, rng, samples=20000, polished=8):
    """Return the largest separating gap over random directions, polished by Nelder-Mead."""
    directions = sphere_surface_points(rng, samples)
    gaps = numpy.min(points_b @ directions.T, axis=0) - numpy.max(points_a @ directions.T, axis=0)
    best = float(numpy.max(gaps))
    for start in directions[numpy.argsort(gaps)[-polished:]]:
        solution = minimize(lambda direction: -gap(points_a, points_b, direction), start,
                            method='Nelder-Mead',
                            options={'xatol': 1e-12, 'fatol': 1e-15, 'maxiter': 4000})
        best = max(best, -float(solution.fun))
    return best


def test_reference_overlapping_hulls_maximise_the_gap():
    rng = numpy.random.default_rng(105)
    for _ in range(12):
        direction = sphere_surface_points(rng, 1)[0]
        points_a, points_b = random_hull_pair(rng, direction * rng.uniform(0.0, 1.2))
        reference = signed_distance_reference(points_a, points_b)
        assert reference.distance < 0.0
        assert gap(points_a, points_b, reference.normal) == pytest.approx(reference.distance,
                                                                          abs=EXACT)
        assert largest_sampled_gap(points_a, points_b, rng) <= reference.distance + EXACT


def test_reference_translation_by_the_mtd_gives_contact():
    rng = numpy.random.default_rng(106)
    for offset_length in [0.3, 0.9, 1.5, 3.0]:
        direction = sphere_surface_points(rng, 1)[0]
        points_a, points_b = random_hull_pair(rng, direction * offset_length)
        reference = signed_distance_reference(points_a, points_b)
        moved = points_b - reference.distance * reference.normal
        assert signed_distance_reference(points_a, moved).distance == pytest.approx(0.0,
                                                                                    abs=EXACT)


def test_point_cylinder_closed_form_at_hand_points():
    assert point_cylinder_signed_distance([0.0, 0.0, 3.0], 1.0, 4.0) == pytest.approx(1.0)
    assert point_cylinder_signed_distance([3.0, 0.0, 0.0], 1.0, 4.0) == pytest.approx(2.0)
    assert point_cylinder_signed_distance([0.0, 4.0, 5.0], 1.0, 4.0) == pytest.approx(
        numpy.hypot(3.0, 3.0))
    assert point_cylinder_signed_distance([0.0, 0.5, 1.8], 1.0, 4.0) == pytest.approx(-0.2)
    assert point_cylinder_signed_distance([0.0, 0.0, 0.0], 1.0, 4.0) == pytest.approx(-1.0)


def test_cylinder_prisms_bracket_the_exact_sphere_distance():
    rng = numpy.random.default_rng(107)
    radius, length = 0.4, 1.3
    pose = make_pose(random_rotation(rng), rng.uniform(-1.0, 1.0, 3))
    for _ in range(10):
        centre = pose[:3, 3] + sphere_surface_points(rng, 1)[0] * rng.uniform(0.0, 1.5)
        sphere_radius = rng.uniform(0.0, 0.3)
        local = pose[:3, :3].T @ (centre - pose[:3, 3])
        exact = point_cylinder_signed_distance(local, radius, length) - sphere_radius
        lower, upper, _ = cylinder_bracket(pose, radius, length, [centre], sphere_radius)
        assert lower - EXACT <= exact <= upper + EXACT
        assert upper - lower <= 3e-7 * radius


# --- The core against the reference ------------------------------------------------------------

# Every relation of two bodies the core is checked in, as (name, signed distance to aim at in
# units of the larger body size); None means "far apart" and "deep overlap" placed by centres.
RELATIONS = {
    'apart': None,
    'near_apart': 1e-9,
    'touching': 0.0,
    'near_overlap': -1e-9,
    'shallow': -0.02,
    'deep': None,
}


def make_shape(name):
    """Return the body called `name` (fixed seeds, so every run sees the same bodies)."""
    if name in FIXED_SHAPES:
        return FIXED_SHAPES[name]()
    rng = numpy.random.default_rng(sum(map(ord, name)))
    kind, _, count = name.partition('_')
    if kind == 'sphere':
        return points_shape(name, sphere_surface_points(rng, int(count)) * [1.0, 0.8, 0.6])
    if kind == 'ball':
        return points_shape(name, ball_points(rng, int(count)))
    assert kind == 'swept', name
    return points_shape(name, sphere_surface_points(rng, int(count)) * 0.6, radius=0.3)


FIXED_SHAPES = {
    'box': lambda: box_shape([0.5, 0.3, 0.2]),
    'cube': lambda: box_shape([0.4, 0.4, 0.4]),
    'sphere': lambda: sphere_shape(0.45),
    'capsule': lambda: capsule_shape(0.2, 0.9),
    'cylinder': lambda: cylinder_shape(0.35, 0.8),
    'point': lambda: points_shape('point', [[0.1, -0.2, 0.05]]),
    'segment': lambda: points_shape('segment', [[-0.5, 0.1, 0.0], [0.4, -0.2, 0.3]]),
    'collinear': lambda: points_shape(
        'collinear', numpy.outer(numpy.linspace(-0.6, 0.6, 9), [0.3, 0.8, -0.5])),
    'polygon': lambda: points_shape('polygon', flat_points(40)),
    'square': lambda: points_shape('square', box_corners([0.5, 0.5, 0.0])),
    'needle': lambda: points_shape('needle', needle_points(60)),
    'duplicates': lambda: points_shape(
        'duplicates', numpy.repeat(box_corners([0.3, 0.5, 0.4]), 3, axis=0)),
}


def flat_points(count):
    """Return points on a tilted plane through the origin: a flat polygon."""
    rng = numpy.random.default_rng(count)
    planar = rng.uniform(-0.6, 0.6, size=(count, 2))
    return planar @ numpy.array([[1.0, 0.0, 0.3], [0.0, 1.0, -0.2]])


def needle_points(count):
    """Return points of a needle: length 1.2, thickness 1e-6."""
    rng = numpy.random.default_rng(count)
    along = numpy.linspace(-0.6, 0.6, count)
    return numpy.column_stack([along, 1e-6 * rng.standard_normal((count, 2))])


def bounding_reach(shape):
    """Return a radius about the body origin that holds the whole body."""
    if shape.is_cylinder:
        return 0.5 * shape.size
    return float(numpy.max(numpy.linalg.norm(shape.points, axis=1))) + shape.radius


def placement_points(shape, pose):
    """Return world points (and radius) of a polytope standing in for the body when placing."""
    if shape.is_cylinder:
        _, radius, length = shape.constructor
        return transform_points(pose, cylinder_points(radius, length, 64)), 0.0
    return shape.world_points(pose), shape.radius


def place(rng, shape_a, shape_b, relation):
    """
    Return random poses of A and B in the given relation.

    Targets are reached by moving B along the reference normal from a first guess; the
    expected answer is recomputed afterwards, so they need not be hit exactly.
    """
    size = max(shape_a.size, shape_b.size)
    pose_a = make_pose(random_rotation(rng), rng.uniform(-1.0, 1.0, 3) * size)
    direction = sphere_surface_points(rng, 1)[0]
    reach = bounding_reach(shape_a) + bounding_reach(shape_b)
    if relation == 'apart':
        centre_distance = reach + rng.uniform(0.05, 1.0) * size
    elif relation == 'deep':
        centre_distance = rng.uniform(0.0, 0.1) * size
    else:
        centre_distance = rng.uniform(0.2, 0.6) * reach
    pose_b = make_pose(random_rotation(rng), pose_a[:3, 3] + centre_distance * direction)
    target = RELATIONS[relation]
    if target is not None:
        points_a, radius_a = placement_points(shape_a, pose_a)
        points_b, radius_b = placement_points(shape_b, pose_b)
        first = signed_distance_reference(points_a, points_b, radius_a, radius_b)
        pose_b = translated(pose_b, (target * size - first.distance) * first.normal)
    return pose_a, pose_b


def swapped(expected):
    """Return the expectation for the same bodies given in the other order."""
    return Expected(expected.low, expected.high, -expected.normal, expected.normal_tolerance,
                    expected.normal_rounding, expected.size, expected.scale)


def assert_agrees_with_reference(shape_a, pose_a, shape_b, pose_b):
    """
    Check one configuration every way: cold, swapped, brute-force support and warm.

    The full check (check_result) runs on the cold and the swapped answers; the brute-force
    and warm answers must equal the cold one.
    """
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    expected = expected_pair(shape_a, pose_a, shape_b, pose_b)
    context = f'{shape_a.name} vs {shape_b.name}, expected {expected.distance!r}'
    cold = signed_distance(body_a, pose_a, body_b, pose_b)
    assert check_result(cold, shape_a, pose_a, shape_b, pose_b, expected) == [], context
    reverse = signed_distance(body_b, pose_b, body_a, pose_a)
    assert check_result(reverse, shape_b, pose_b, shape_a, pose_a, swapped(expected)) == [], (
        f'swapped: {context}')
    tolerance = 1e-9 * (expected.size + abs(expected.distance))
    assert reverse.distance == pytest.approx(cold.distance, abs=tolerance), context
    brute = signed_distance(body_a, pose_a, body_b, pose_b, hill_climb=False)
    assert brute.distance == pytest.approx(cold.distance, abs=tolerance), f'brute: {context}'
    cache = SimplexCache()
    signed_distance(body_a, translated(pose_a, [0.01 * expected.size, 0.0, 0.0]), body_b,
                    pose_b, cache)
    warm = signed_distance(body_a, pose_a, body_b, pose_b, cache)
    assert warm.distance == pytest.approx(cold.distance, abs=tolerance), f'warm: {context}'
    if expected.normal_tolerance <= 1e-6:
        for other in (brute, warm):
            numpy.testing.assert_allclose(other.normal, cold.normal, atol=1e-8, err_msg=context)
    return cold


POLYTOPE_PAIRS = [
    ('sphere_4', 'box'),
    ('sphere_8', 'ball_50'),
    ('sphere_50', 'sphere_50'),
    ('sphere_500', 'cube'),
    ('sphere_2000', 'sphere_8'),
    ('ball_50', 'ball_500'),
    ('ball_2000', 'box'),
    ('box', 'cube'),
]
PRIMITIVE_PAIRS = [
    ('sphere', 'sphere_50'),
    ('sphere', 'sphere'),
    ('capsule', 'box'),
    ('capsule', 'capsule'),
    ('swept_50', 'cube'),
    ('sphere', 'ball_500'),
]
DEGENERATE_PAIRS = [
    ('point', 'sphere_50'),
    ('point', 'box'),
    ('segment', 'cube'),
    ('segment', 'segment'),
    ('collinear', 'sphere_50'),
    ('polygon', 'sphere_50'),
    ('polygon', 'square'),
    ('square', 'square'),
    ('needle', 'box'),
    ('needle', 'sphere_50'),
    ('duplicates', 'sphere_8'),
    ('point', 'square'),
    ('segment', 'sphere'),
    ('polygon', 'capsule'),
]


@pytest.mark.parametrize('relation', list(RELATIONS))
@pytest.mark.parametrize('name_a, name_b', POLYTOPE_PAIRS + PRIMITIVE_PAIRS)
def test_core_matches_reference_on_solids(name_a, name_b, relation):
    rng = numpy.random.default_rng([len(name_a), len(name_b), len(relation)])
    shape_a, shape_b = make_shape(name_a), make_shape(name_b)
    for _ in range(2):
        pose_a, pose_b = place(rng, shape_a, shape_b, relation)
        assert_agrees_with_reference(shape_a, pose_a, shape_b, pose_b)


@pytest.mark.parametrize('relation', list(RELATIONS))
@pytest.mark.parametrize('name_a, name_b', DEGENERATE_PAIRS)
def test_core_matches_reference_on_degenerate_bodies(name_a, name_b, relation):
    rng = numpy.random.default_rng([len(name_a), len(name_b), len(relation), 7])
    shape_a, shape_b = make_shape(name_a), make_shape(name_b)
    pose_a, pose_b = place(rng, shape_a, shape_b, relation)
    assert_agrees_with_reference(shape_a, pose_a, shape_b, pose_b)


@pytest.mark.parametrize('relation', ['apart', 'touching', 'shallow', 'deep'])
@pytest.mark.parametrize('name_a, name_b', [
    ('cylinder', 'box'),
    ('cylinder', 'sphere'),
    ('cylinder', 'sphere_8'),
    ('capsule', 'cylinder'),
    ('cylinder', 'cylinder'),
])
def test_core_matches_prism_bracket_on_cylinders(name_a, name_b, relation):
    rng = numpy.random.default_rng([len(name_a), len(name_b), len(relation), 11])
    shape_a, shape_b = make_shape(name_a), make_shape(name_b)
    pose_a, pose_b = place(rng, shape_a, shape_b, relation)
    assert_agrees_with_reference(shape_a, pose_a, shape_b, pose_b)


@pytest.mark.parametrize('scale', [1e-3, 1e-1, 1e1, 1e3])
@pytest.mark.parametrize('relation', ['apart', 'near_apart', 'near_overlap', 'deep'])
@pytest.mark.parametrize('name_a, name_b', [
    ('sphere_50', 'box'),
    ('capsule', 'ball_50'),
    ('polygon', 'sphere_8'),
])
def test_core_matches_reference_at_every_scale(name_a, name_b, relation, scale):
    rng = numpy.random.default_rng([len(name_a), len(name_b), len(relation), 13])
    shape_a, shape_b = make_shape(name_a).scaled(scale), make_shape(name_b).scaled(scale)
    pose_a, pose_b = place(rng, shape_a, shape_b, relation)
    assert_agrees_with_reference(shape_a, pose_a, shape_b, pose_b)


def test_checks_reject_wrong_answers():
    # The checks above would pass a broken core if check_result accepted wrong answers.
    rng = numpy.random.default_rng(17)
    shape_a, shape_b = make_shape('sphere_50'), make_shape('box')
    pose_a, pose_b = place(rng, shape_a, shape_b, 'apart')
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    good = signed_distance(body_a, pose_a, body_b, pose_b)
    expected = expected_pair(shape_a, pose_a, shape_b, pose_b)
    assert check_result(good, shape_a, pose_a, shape_b, pose_b, expected) == []
    shift = 1e-7 * expected.size
    tilted = good.normal + [1e-6, -1e-6, 1e-6]
    wrong_answers = [
        dataclasses.replace(good, distance=good.distance + shift),
        dataclasses.replace(good, normal=tilted / numpy.linalg.norm(tilted)),
        dataclasses.replace(good, witness_a=good.witness_a + shift * good.normal,
                            witness_b=good.witness_b + shift * good.normal),
        dataclasses.replace(good, status=2),
        dataclasses.replace(good, distance=-good.distance, normal=-good.normal),
        dataclasses.replace(good, distance=float('nan')),
    ]
    for wrong in wrong_answers:
        assert check_result(wrong, shape_a, pose_a, shape_b, pose_b, expected) != [], wrong
