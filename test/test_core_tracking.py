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
Tracking (Cameron 1997 sections 3 and 4): a warm cache gives the cold answer, sooner.

Motion sequences of 20 steps, as in the paper's experiments: B moves by small translations and
turns by 0, 6 or 12 degrees per step, about three diameters apart, about one diameter apart, or
overlapping. At every step the warm answer (the pair's SimplexCache reused) must equal the cold
one (a fresh cache) and agree with the reference, and over a sequence warm queries must need
fewer GJK iterations on average than cold ones (the paper reports 1 to 2 when tracking and 3 to 6
from scratch).
"""

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import signed_distance
from gjk_ros.core import SimplexCache
import numpy
import pytest
from reference import axis_angle_rotation
from reference import box_shape
from reference import check_result
from reference import expected_pair
from reference import make_pose
from reference import points_shape
from reference import random_rotation
from reference import sphere_surface_points

STEPS = 20
# Centre distance in body diameters for each relation of the paper's Fig. 5.
CENTRE_DISTANCES = {'apart': 3.0, 'near': 1.0, 'overlapping': 0.3}


def motion_sequence(rng, size, relation, degrees_per_step):
    """
    Return STEPS poses of B moving past A, starting `relation` apart.

    Each step translates by up to 2% of the size and turns by `degrees_per_step` about a fixed
    random axis.
    """
    centre = sphere_surface_points(rng, 1)[0] * CENTRE_DISTANCES[relation] * size
    velocity = sphere_surface_points(rng, 1)[0] * 0.02 * size
    axis = sphere_surface_points(rng, 1)[0]
    step_rotation = axis_angle_rotation(axis, numpy.radians(degrees_per_step))
    rotation = random_rotation(rng)
    poses = []
    for _ in range(STEPS):
        poses.append(make_pose(rotation, centre))
        centre = centre + velocity
        rotation = step_rotation @ rotation
    return poses


def sequence_shapes(name, rng):
    """Return the two bodies of a sequence: two boxes, or hulls of points on a sphere."""
    if name == 'boxes':
        return box_shape([0.5, 0.3, 0.2]), box_shape([0.4, 0.4, 0.1])
    # B has at most 50 vertices so that the reference (a hull of all a_i - b_j) stays quick.
    count = int(name.split('_')[1])
    return (points_shape(name, sphere_surface_points(rng, count)),
            points_shape(name, sphere_surface_points(rng, min(count, 50)) * [0.8, 0.6, 1.0]))


def run_sequence(name, relation, degrees, seed):
    """Run one sequence warm and cold; return both lists of results and the shapes and poses."""
    rng = numpy.random.default_rng(seed)
    shape_a, shape_b = sequence_shapes(name, rng)
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    size = max(shape_a.size, shape_b.size)
    pose_a = make_pose()
    poses_b = motion_sequence(rng, size, relation, degrees)
    cache = SimplexCache()
    warm = [signed_distance(body_a, pose_a, body_b, pose_b, cache) for pose_b in poses_b]
    cold = [signed_distance(body_a, pose_a, body_b, pose_b) for pose_b in poses_b]
    return warm, cold, (shape_a, pose_a, shape_b, poses_b)


SEQUENCES = [
    (name, relation, degrees)
    for name in ('hull_50', 'hull_500', 'boxes')
    for relation in CENTRE_DISTANCES
    for degrees in (0, 6, 12)
]


@pytest.mark.parametrize('name, relation, degrees', SEQUENCES)
def test_warm_answers_equal_cold_answers(name, relation, degrees):
    warm, cold, (shape_a, pose_a, shape_b, poses_b) = run_sequence(
        name, relation, degrees, seed=[len(name), len(relation), degrees])
    size = max(shape_a.size, shape_b.size)
    for step, (tracked, fresh, pose_b) in enumerate(zip(warm, cold, poses_b)):
        tolerance = 1e-9 * (size + abs(fresh.distance))
        assert tracked.distance == pytest.approx(fresh.distance, abs=tolerance), step
        expected = expected_pair(shape_a, pose_a, shape_b, pose_b)
        problems = check_result(tracked, shape_a, pose_a, shape_b, pose_b, expected)
        assert problems == [], f'step {step}: {problems}'


@pytest.mark.parametrize('name', ['hull_50', 'hull_500', 'boxes'])
@pytest.mark.parametrize('relation', list(CENTRE_DISTANCES))
def test_tracking_needs_fewer_iterations(name, relation):
    # GJK iterations, and support calls (which also count the penetration search's work).
    warm_iterations, cold_iterations, warm_calls, cold_calls = [], [], [], []
    for degrees in (0, 6, 12):
        for seed in range(3):
            warm, cold, _ = run_sequence(name, relation, degrees, seed=[seed, degrees, 99])
            # The first warm query is a cold start: leave it out, as the paper's sequences do.
            warm_iterations += [result.iterations for result in warm[1:]]
            cold_iterations += [result.iterations for result in cold[1:]]
            warm_calls += [result.support_calls for result in warm[1:]]
            cold_calls += [result.support_calls for result in cold[1:]]
    assert numpy.mean(warm_iterations) < numpy.mean(cold_iterations)
    assert numpy.mean(warm_calls) < numpy.mean(cold_calls)


@pytest.mark.parametrize('relation', ['apart', 'near'])
def test_tracking_translations_take_about_one_iteration(relation):
    # Cameron 1997 section 4: with tracking the GJK loop runs "once or twice per call".
    iterations = []
    for seed in range(4):
        warm, _, _ = run_sequence('hull_50', relation, 0, seed=[seed, 7])
        iterations += [result.iterations for result in warm[1:]]
    assert numpy.mean(iterations) <= 2.0


def test_hill_climbing_walks_less_when_tracking():
    warm, cold, _ = run_sequence('hull_500', 'near', 6, seed=[3, 5])
    warm_steps = numpy.mean([result.hill_climb_steps for result in warm[1:]])
    cold_steps = numpy.mean([result.hill_climb_steps for result in cold[1:]])
    assert warm_steps < cold_steps


def test_tracking_through_contact_and_back():
    # B passes straight through A and out: separated, penetrating, separated, all warm.
    rng = numpy.random.default_rng(61)
    shape_a = points_shape('hull_80', sphere_surface_points(rng, 80))
    shape_b = box_shape([0.3, 0.2, 0.25])
    body_a, body_b = shape_a.build(ConvexPolytope), shape_b.build(ConvexPolytope)
    rotation = random_rotation(rng)
    cache = SimplexCache()
    statuses = set()
    for x in numpy.linspace(-2.0, 2.0, 41):
        pose_b = make_pose(rotation, [x, 0.1, -0.05])
        warm = signed_distance(body_a, make_pose(), body_b, pose_b, cache)
        cold = signed_distance(body_a, make_pose(), body_b, pose_b)
        assert warm.distance == pytest.approx(cold.distance, abs=1e-9 * 4.0), x
        statuses.add(int(warm.status))
        expected = expected_pair(shape_a, make_pose(), shape_b, pose_b)
        assert check_result(warm, shape_a, make_pose(), shape_b, pose_b, expected) == [], x
    assert {0, 2} <= statuses
