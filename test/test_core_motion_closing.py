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
Closing speed: the rate of the exact signed distance from the witnesses and the velocities.

Every rate is compared with central finite differences of the core's exact distances along
the same motion (frames moved by ``tf2_pose``, pieces at fixed origins in them, both bodies
moving and turning), apart and in penetration. Polytope against polytope has kinks where the
closest features change; a case counts only where the forward and backward differences agree,
and most cases must.
"""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.closing import closing_speed, distance_rate, time_to_contact
from gjk_ros.core.interpolation import FrameMotion
import numpy
import pytest
from reference import make_pose, random_rotation
from test_core_motion_interpolation import random_motion, tf2_pose

DURATION = 1.0 / 30.0
# Finite-difference step, as a fraction of the interval (1.1 us of motion).
STEP = 3e-5
RATE_TOLERANCE = 1e-6


def _posed(start, end, s, origins):
    """Return the two pieces' world poses at fraction ``s``: frame pose times origin."""
    return [tf2_pose(start[f], end[f], s) @ origins[f] for f in range(2)]


def _distance(a, b, start, end, s, origins):
    pose_a, pose_b = _posed(start, end, s, origins)
    return signed_distance(a, pose_a, b, pose_b)


def _rates(a, b, start, end, origins, s):
    """Return (rate from witnesses, forward difference, backward difference) at ``s``."""
    result = _distance(a, b, start, end, s, origins)
    motion = FrameMotion(start, end)
    velocity_a = motion.point_velocities([0], result.witness_a, s, DURATION)
    velocity_b = motion.point_velocities([1], result.witness_b, s, DURATION)
    rate = distance_rate(result.normal[None], velocity_a, velocity_b)[0]
    before, after = (_distance(a, b, start, end, s + sign * STEP, origins).distance
                     for sign in (-1.0, 1.0))
    step = STEP * DURATION
    return rate, (after - result.distance) / step, (result.distance - before) / step, \
        (after - before) / (2.0 * step), result


def _scene(rng, gap):
    """Two frames ~``gap`` apart moving and turning, and the pieces' origins in them."""
    start, end = random_motion(rng, 2, max_angle=0.4, max_move=0.05)
    start[1, :3, 3] = start[0, :3, 3] + gap * rng.normal(size=3) / math.sqrt(3.0)
    end[1, :3, 3] = start[1, :3, 3] + rng.uniform(-0.03, 0.03, 3)
    origins = [make_pose(random_rotation(rng), rng.uniform(-0.05, 0.05, 3)) for _ in range(2)]
    return start, end, origins


SMOOTH_PAIRS = {
    'sphere-box': (ConvexPolytope.sphere(0.07), ConvexPolytope.box([0.1, 0.2, 0.15])),
    'capsule-hull': (ConvexPolytope.capsule(0.03, 0.2),
                     ConvexPolytope.from_points(numpy.random.default_rng(0).normal(size=(30, 3))
                                                * 0.08)),
    'sphere-sphere': (ConvexPolytope.sphere(0.05), ConvexPolytope.sphere(0.12)),
}


@pytest.mark.parametrize('name', sorted(SMOOTH_PAIRS))
@pytest.mark.parametrize('gap', [0.4, 0.02])
def test_rate_matches_finite_differences_where_one_body_is_round(name, gap):
    a, b = SMOOTH_PAIRS[name]
    rng = numpy.random.default_rng(11)
    checked = 0
    for _ in range(12):
        start, end, origins = _scene(rng, gap)
        for s in (0.2, 0.6):
            rate, forward, backward, central, _ = _rates(a, b, start, end, origins, s)
            if abs(forward - backward) > 1e-3:
                continue  # a capsule's segment turning parallel to a face: a kink
            assert rate == pytest.approx(central, abs=RATE_TOLERANCE)
            checked += 1
    assert checked >= 20


def test_rate_matches_finite_differences_in_penetration():
    a, b = ConvexPolytope.sphere(0.1), ConvexPolytope.box([0.15, 0.1, 0.2])
    rng = numpy.random.default_rng(4)
    for _ in range(15):
        start, end, origins = _scene(rng, 0.05)
        origins = [numpy.eye(4), numpy.eye(4)]
        rate, forward, backward, central, result = _rates(a, b, start, end, origins, 0.5)
        assert result.distance < 0.0
        assert rate == pytest.approx(central, abs=RATE_TOLERANCE)


def test_rate_matches_finite_differences_between_polytopes_away_from_kinks():
    rng = numpy.random.default_rng(21)
    checked = total = 0
    for _ in range(30):
        a = ConvexPolytope.from_points(rng.normal(size=(25, 3)) * 0.06)
        b = ConvexPolytope.from_points(rng.normal(size=(25, 3)) * 0.06)
        start, end, origins = _scene(rng, rng.choice([0.05, 0.3]))
        rate, forward, backward, central, _ = _rates(a, b, start, end, origins, 0.45)
        total += 1
        if abs(forward - backward) > 1e-4:
            continue  # the closest features change within the step
        checked += 1
        assert rate == pytest.approx(central, abs=RATE_TOLERANCE)
    assert checked >= 0.8 * total


def test_closing_speed_is_minus_the_rate():
    normal = numpy.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    velocity_a = numpy.array([[0.5, 0.0, 0.0], [0.0, 0.3, 0.0]])
    velocity_b = numpy.array([[-0.25, 1.0, 0.0], [0.0, 0.0, 0.2]])
    numpy.testing.assert_allclose(distance_rate(normal, velocity_a, velocity_b), [-0.75, 0.2])
    numpy.testing.assert_allclose(closing_speed(normal, velocity_a, velocity_b), [0.75, -0.2])
    assert numpy.isnan(distance_rate([[math.nan] * 3], [[0.0] * 3], [[0.0] * 3])[0])
    with pytest.raises(ValueError, match='velocity_b'):
        distance_rate(normal, velocity_a, velocity_b[:1])


def test_time_to_contact_of_a_sphere_flying_at_a_plate_is_when_it_touches():
    sphere, plate = ConvexPolytope.sphere(0.05), ConvexPolytope.box([0.5, 0.5, 0.0025])
    start, end = make_pose(None, (0.1, 0.0, 0.3)), make_pose(None, (0.1, 0.02, 0.2))
    motion = FrameMotion(numpy.stack([start, numpy.eye(4)]), numpy.stack([end, numpy.eye(4)]))
    result = signed_distance(sphere, end, plate, numpy.eye(4))
    velocity = motion.point_velocities([0], result.witness_a, 1.0, DURATION)
    rate = distance_rate(result.normal[None], velocity, numpy.zeros((1, 3)))[0]
    assert rate == pytest.approx(-0.1 / DURATION, rel=1e-12)
    seconds = time_to_contact(result.distance, rate)
    later = make_pose(None, end[:3, 3] + (end[:3, 3] - start[:3, 3]) * seconds / DURATION)
    assert signed_distance(sphere, later, plate, numpy.eye(4)).distance == \
        pytest.approx(0.0, abs=1e-12)


def test_time_to_contact_cases():
    got = time_to_contact([1.0, 1.0, 1.0, 0.0, -0.1, math.nan, -math.inf, 1.0, math.inf],
                          [-2.0, 0.0, 3.0, 1.0, -1.0, -1.0, -1.0, math.nan, -1.0])
    numpy.testing.assert_array_equal(got, [0.5, math.inf, math.inf, 0.0, 0.0, math.nan,
                                           math.nan, math.nan, math.inf])
    assert time_to_contact(0.3, -0.6) == pytest.approx(0.5)
