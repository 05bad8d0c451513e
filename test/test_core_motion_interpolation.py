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
Frames between two samples as tf2 interpolates them, and the velocities and bounds they imply.

The reference, ``tf2_pose``, is written here the way tf2 does it (lerp of the translation,
quaternion slerp that negates the second quaternion when their dot product is negative), on
quaternions rather than on the relative rotation the module uses, so the two share nothing.
The other motion tests use it as their ground truth for where a frame is.
"""

import math

from gjk_ros.core.interpolation import FrameMotion
from hypothesis import given, settings, strategies
import numpy
import pytest
from reference import make_pose, random_rotation
from scipy.spatial.transform import Rotation


def _slerp(q0, q1, s):
    """Return tf2's slerp of unit quaternions (x, y, z, w): the shorter arc."""
    if float(numpy.dot(q0, q1)) < 0.0:
        q1 = -q1
    # The angle between the unit quaternions as atan2 of the chord and its complement: acos of
    # the dot product (tf2's angleShortestPath) loses half the digits near zero, where a turn of
    # 3e-9 rad lands 1e-9 m away from the end pose.
    theta = 2.0 * math.atan2(float(numpy.linalg.norm(q1 - q0)), float(numpy.linalg.norm(q1 + q0)))
    if theta < 1e-12:
        return q0.copy()
    return (math.sin((1.0 - s) * theta) * q0 + math.sin(s * theta) * q1) / math.sin(theta)


def tf2_pose(start, end, s):
    """Return the (4, 4) pose at fraction ``s`` between two poses, as tf2 interpolates."""
    q0 = Rotation.from_matrix(start[:3, :3]).as_quat()
    q1 = Rotation.from_matrix(end[:3, :3]).as_quat()
    pose = numpy.eye(4)
    pose[:3, :3] = Rotation.from_quat(_slerp(q0, q1, s)).as_matrix()
    pose[:3, 3] = (1.0 - s) * start[:3, 3] + s * end[:3, 3]
    return pose


def tf2_poses(start, end, s):
    """Return ``tf2_pose`` of every frame of (F, 4, 4) start and end poses."""
    return numpy.stack([tf2_pose(a, b, s) for a, b in zip(start, end)])


def random_motion(rng, count, max_angle=math.pi, max_move=0.5):
    """Return seeded (count, 4, 4) start and end poses."""
    start = numpy.stack([make_pose(random_rotation(rng), rng.normal(size=3))
                         for _ in range(count)])
    end = numpy.stack([make_pose(random_rotation(rng, max_angle) @ pose[:3, :3],
                                 pose[:3, 3] + rng.uniform(-max_move, max_move, 3))
                       for pose in start])
    return start, end


def test_poses_follow_tf2_interpolation():
    rng = numpy.random.default_rng(3)
    start, end = random_motion(rng, 40)
    motion = FrameMotion(start, end)
    for s in (0.0, 0.13, 0.5, 0.77, 1.0):
        numpy.testing.assert_allclose(motion.poses(s), tf2_poses(start, end, s), atol=1e-12)
    numpy.testing.assert_array_equal(motion.poses(0.0), start)


def test_more_than_a_half_turn_takes_the_shorter_arc():
    # 270 degrees about z is the same rotation as -90: tf2 turns by 90 degrees the other way.
    start = numpy.eye(4)
    end = make_pose(Rotation.from_euler('z', 270, degrees=True).as_matrix(), (0.0, 0.0, 0.0))
    motion = FrameMotion(start, end)
    assert motion.angle[0] == pytest.approx(math.pi / 2, abs=1e-12)
    halfway = Rotation.from_matrix(motion.poses(0.5)[0, :3, :3]).as_euler('zyx', degrees=True)
    assert halfway[0] == pytest.approx(-45.0, abs=1e-9)
    numpy.testing.assert_allclose(motion.poses(0.5)[0], tf2_pose(start, end, 0.5), atol=1e-12)


@pytest.mark.parametrize('turn', [3.3e-9, 1e-7, 1e-5])
def test_a_tiny_turn_ends_on_the_end_pose(turn):
    # Both the module and the reference land on the end pose to rounding, however small the turn.
    rng = numpy.random.default_rng(47)
    first = make_pose(random_rotation(rng), rng.uniform(-0.35, 0.35, 3))
    end = make_pose(random_rotation(rng, turn) @ first[:3, :3], first[:3, 3])
    start, end = first[None], end[None]
    numpy.testing.assert_allclose(FrameMotion(start, end).poses(1.0), end, atol=1e-15)
    numpy.testing.assert_allclose(tf2_poses(start, end, 1.0), end, atol=1e-15)


def test_a_still_frame_stays_put():
    pose = make_pose(random_rotation(numpy.random.default_rng(1)), (1.0, -2.0, 0.5))
    motion = FrameMotion(pose, pose)
    assert motion.angle[0] == 0.0
    numpy.testing.assert_allclose(motion.poses(0.4)[0], pose, atol=1e-15)
    linear, angular = motion.velocities(0.1)
    assert not linear.any() and not angular.any()


def test_velocities_match_finite_differences_of_the_poses():
    rng = numpy.random.default_rng(5)
    start, end = random_motion(rng, 20, max_angle=2.5)
    motion, duration, h = FrameMotion(start, end), 0.04, 1e-6
    linear, angular = motion.velocities(duration)
    for s in (0.1, 0.5, 0.9):
        before, after = tf2_poses(start, end, s - h), tf2_poses(start, end, s + h)
        numpy.testing.assert_allclose(linear, (after[:, :3, 3] - before[:, :3, 3])
                                      / (2 * h * duration), atol=1e-6)
        turn = after[:, :3, :3] @ before[:, :3, :3].transpose(0, 2, 1)
        numpy.testing.assert_allclose(angular, Rotation.from_matrix(turn).as_rotvec()
                                      / (2 * h * duration), atol=1e-6)


def test_point_velocities_match_finite_differences_of_moving_points():
    rng = numpy.random.default_rng(8)
    start, end = random_motion(rng, 6)
    motion, duration, h, s = FrameMotion(start, end), 0.05, 1e-6, 0.35
    frames = rng.integers(0, 6, 30)
    local = rng.normal(size=(30, 3))

    def world(fraction):
        poses = tf2_poses(start, end, fraction)[frames]
        return numpy.einsum('nij,nj->ni', poses[:, :3, :3], local) + poses[:, :3, 3]

    expected = (world(s + h) - world(s - h)) / (2 * h * duration)
    numpy.testing.assert_allclose(motion.point_velocities(frames, world(s), s, duration),
                                  expected, atol=1e-6)


@settings(max_examples=60)
@given(seed=strategies.integers(0, 2 ** 32 - 1), radius=strategies.floats(0.0, 0.5),
       offset=strategies.floats(0.0, 2.0), max_angle=strategies.floats(0.0, math.pi))
def test_points_of_a_sphere_stay_within_the_turn_bound_of_the_chord(
        seed, radius, offset, max_angle):
    rng = numpy.random.default_rng(seed)
    start, end = random_motion(rng, 1, max_angle=max_angle, max_move=1.0)
    motion = FrameMotion(start, end)
    centre = rng.normal(size=3)
    centre *= offset / max(numpy.linalg.norm(centre), 1e-300)
    chord, turn = motion.sphere_motion([0], [centre], [radius])
    local = rng.normal(size=(40, 3))
    local = centre + local * (radius * rng.uniform(0.0, 1.0, (40, 1))
                              / numpy.linalg.norm(local, axis=1)[:, None])
    fractions = numpy.linspace(0.0, 1.0, 41)
    path = numpy.stack([tf2_pose(start[0], end[0], s) for s in fractions])
    points = numpy.einsum('sij,nj->sni', path[:, :3, :3], local) + path[:, None, :3, 3]
    centres = path[:, :3, :3] @ centre + path[:, :3, 3]
    numpy.testing.assert_allclose(chord[0], centres[-1] - centres[0], atol=1e-12)
    for a in (0, 13, 40):
        moved = points - points[a] - chord[0] * (fractions - fractions[a])[:, None, None]
        deviation = numpy.linalg.norm(moved, axis=2)
        allowed = turn[0] * numpy.abs(fractions - fractions[a])[:, None]
        assert (deviation <= allowed * (1 + 1e-9) + 1e-12).all()


def test_a_turn_far_from_the_frame_origin_is_mostly_a_chord():
    # A 5 cm sphere 1 m out on a frame that turns 0.05 rad: the turn bound is the sphere's own
    # 2.5 mm plus 2.5 mm for the arc, not the 50 mm of the whole lever.
    start = numpy.eye(4)
    end = make_pose(Rotation.from_euler('z', 0.05).as_matrix(), (0.0, 0.0, 0.0))
    chord, turn = FrameMotion(start, end).sphere_motion([0], [[1.0, 0.0, 0.0]], [0.05])
    assert numpy.linalg.norm(chord[0]) == pytest.approx(2.0 * math.sin(0.025), rel=1e-12)
    assert turn[0] == pytest.approx(0.05 * (0.05 + 0.05), rel=1e-12)


def test_an_unbounded_body_is_unbounded_only_when_it_turns():
    start = numpy.eye(4)
    end = make_pose(None, (0.3, 0.4, 0.0))
    chord, turn = FrameMotion(start, end).sphere_motion([0], [[0.0, 0.0, 0.0]], [math.inf])
    assert numpy.linalg.norm(chord[0]) == pytest.approx(0.5) and turn[0] == 0.0
    turned = make_pose(Rotation.from_euler('x', 10, degrees=True).as_matrix(), (0.0, 0.0, 0.0))
    assert FrameMotion(start, turned).sphere_motion([0], [[0.0, 0.0, 0.0]], [math.inf])[1][0] \
        == math.inf


def test_bad_input_is_refused_by_name():
    good = numpy.tile(numpy.eye(4), (2, 1, 1))
    bad = good.copy()
    bad[1, 0, 0] = math.nan
    with pytest.raises(ValueError, match='start'):
        FrameMotion(bad, good)
    with pytest.raises(ValueError, match='end'):
        FrameMotion(good, bad)
    with pytest.raises(ValueError, match='end'):
        FrameMotion(good, good[:1])
    motion = FrameMotion(good, good)
    with pytest.raises(ValueError, match='fraction'):
        motion.poses(1.5)
    with pytest.raises(ValueError, match='duration'):
        motion.velocities(0.0)
    with pytest.raises(ValueError, match='frames'):
        motion.point_velocities([2], [[0.0, 0.0, 0.0]], 0.5, 0.1)
    with pytest.raises(ValueError, match='frames'):
        motion.sphere_motion([-1], [[0.0, 0.0, 0.0]], [0.1])
