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
The records' closing speeds (compute/closing_speeds.py) through a real PairTracker, no graph.

Bodies move with constant twists (what tf2's interpolation between two samples is); the
node's closing speed must be minus the central difference of exact signed distances along the
same motion, within 1e-6 m/s. Polytopes apart: their witnesses are exact (on a curved body
GJK's witnesses, hence the normal, are only within its tolerance). Over random timelines
(hypothesis) the compiled kernel's fields are those of a per-record reference written from the
definitions, bit for bit.
"""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros.compute.bodies import TrackedPiece
from gjk_ros.ros.compute.closing_speeds import ClosingSpeeds, PieceVelocities
from gjk_ros.ros.compute.pairs import build_layout, InputState, PairTracker
from gjk_ros.ros.inputs.timekeeping import TIMELESS, UNKNOWN
from gjk_ros.ros.records import PairStatus
from hypothesis import given, settings, strategies
import numpy
import pytest

SHAPES = [ConvexPolytope.box([0.1, 0.2, 0.05]), ConvexPolytope.box([0.08, 0.06, 0.07]),
          ConvexPolytope.box([0.03, 0.03, 0.2]), ConvexPolytope.box([0.1, 0.12, 0.3])]
OK = PairStatus.VALID
# Link 'arm' (piece 0), link 'hand' (pieces 1 and 2, one frame), obstacle 'post' (piece 3).
LINKS = [('arm', 0, [TrackedPiece(0, None)], OK),
         ('hand', 1, [TrackedPiece(1, None), TrackedPiece(2, None)], OK)]
OBSTACLES = [('post', 0, [TrackedPiece(3, None)], OK)]
BODY_OF_PIECE = [0, 1, 1, 2]
SECOND = 10 ** 9


def _tracker():
    tracker = PairTracker()
    layout = build_layout(LINKS, OBSTACLES, lambda link, obstacle: True)
    tracker.rebuild(layout, [SHAPES[uid] for uid in layout.piece_uids])
    return tracker


def _rotation(axis, angle):
    k = numpy.asarray(axis, dtype=float) / numpy.linalg.norm(axis)
    cross = numpy.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return numpy.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


class Twist:
    """A body moving with a constant twist: origin at constant speed, constant turn rate."""

    def __init__(self, rng, origin, speed=0.5, turn=1.0):
        self.start = numpy.eye(4)
        self.start[:3, :3] = _rotation(rng.normal(size=3), rng.uniform(0, math.pi))
        self.start[:3, 3] = origin
        self.linear = rng.normal(size=3) * speed
        self.axis = rng.normal(size=3)
        self.rate = rng.uniform(-turn, turn)

    def at(self, seconds):
        pose = numpy.eye(4)
        pose[:3, :3] = _rotation(self.axis, self.rate * seconds) @ self.start[:3, :3]
        pose[:3, 3] = self.start[:3, 3] + self.linear * seconds
        return pose


class Shifted:
    """A Twist's motion with its clock shifted: ``at(s)`` is the body's ``at(s + offset)``."""

    def __init__(self, body, offset):
        self.body, self.offset = body, offset

    def at(self, seconds):
        return self.body.at(seconds + self.offset)


def _apart(rng, obstacle_speed=0.5, obstacle_turn=1.0):
    """
    Two links and the obstacle, apart (GJK's exact witnesses).

    In penetration EPA's normal on a curved body is only within about sqrt(error_bound *
    radius) of the true one, and so is the rate (docs/motion.md).
    """
    return [Twist(rng, (0.0, 0.0, 0.0) + rng.uniform(-0.05, 0.05, 3)),
            Twist(rng, (0.0, 0.6, 0.0) + rng.uniform(-0.05, 0.05, 3)),
            Twist(rng, (0.45, 0.3, 0.0) + rng.uniform(-0.05, 0.05, 3), obstacle_speed,
                  obstacle_turn)]


def _poses(bodies, seconds, offsets):
    """Return the piece poses: each piece is its body's pose composed with its fixed offset."""
    return numpy.array([bodies[body].at(seconds) @ offsets[piece]
                        for piece, body in enumerate(BODY_OF_PIECE)])


def _offsets(rng):
    offsets = numpy.tile(numpy.eye(4), (len(SHAPES), 1, 1))
    offsets[2, :3, 3] = (0.0, 0.0, 0.15)  # the hand's capsule sits above its sphere
    offsets[1, :3, 3] = rng.uniform(-0.05, 0.05, 3)
    return offsets


def _cycle(tracker, closing, poses, times, offsets, inputs=None, robot_speeds=True):
    """One cycle of the node's step 6; every argument per piece uid (the layout reorders)."""
    order = tracker.layout.piece_uids
    inputs = numpy.full(len(poses), InputState.OK) if inputs is None else numpy.asarray(inputs)
    poses, offsets, inputs = poses[order], offsets[order], inputs[order]
    records = tracker.compute(poses, inputs, math.inf)
    closing.update(tracker, [SHAPES[uid] for uid in order], poses, offsets, inputs,
                   numpy.asarray(times, dtype=numpy.int64)[order], records,
                   robot_speeds=robot_speeds)
    return records


def _exact_rate(bodies, offsets, seconds, record, step=1e-5):
    """
    d(distance)/dt of a record's exact distance: the central difference.

    A short step: the closest features of two boxes change often along a turning motion (a
    kink of the distance), and the exact distances of polytopes leave no noise to amplify.
    """
    def at(t):
        return _exact_distance(_poses(bodies, t, offsets), record)

    return (at(seconds + step) - at(seconds - step)) / (2 * step)


def _exact_distance(poses, record):
    link_pieces = [0] if record['link_id'] == 0 else [1, 2]
    return min(signed_distance(SHAPES[a], poses[a], SHAPES[3], poses[3]).distance
               for a in link_pieces)


@pytest.mark.parametrize('seed', range(8))
def test_closing_speed_is_the_rate_of_the_exact_distance_on_constant_twists(seed):
    rng = numpy.random.default_rng(seed)
    bodies = _apart(rng)
    offsets = _offsets(rng)
    tracker, closing = _tracker(), ClosingSpeeds()
    t0, t1 = 0.2, 0.2 + rng.uniform(0.005, 0.05)
    first = _cycle(tracker, closing, _poses(bodies, t0, offsets),
                   [int(t0 * SECOND)] * len(SHAPES), offsets)
    assert numpy.isnan(first['closing_speed']).all(), 'one sample is no velocity'
    records = _cycle(tracker, closing, _poses(bodies, t1, offsets),
                     [int(round(t1 * SECOND))] * len(SHAPES), offsets)
    for record in records:
        assert record['status'] in (PairStatus.VALID, PairStatus.APPROXIMATE)
        assert record['closing_speed'] == pytest.approx(
            -_exact_rate(bodies, offsets, t1, record), abs=1e-6)
        speed = record['closing_speed']
        expected = math.inf if speed <= 0 else max(record['distance'], 0.0) / speed
        assert record['time_to_contact'] == pytest.approx(expected, rel=1e-12)
    # v_r, the link's part alone: the rate with the obstacle held where it is now.
    held = bodies[:2] + [Twist(rng, (0.0, 0.0, 0.0), speed=0.0, turn=0.0)]
    held[2].start = bodies[2].at(t1)
    held_at_t1 = [Shifted(body, t1) for body in held[:2]] + held[2:]
    for record, robot_speed in zip(records, closing.robot_speeds):
        assert robot_speed == pytest.approx(-_exact_rate(held_at_t1, offsets, 0.0, record),
                                            abs=1e-6)
    # A cycle without a new transform keeps the velocity: not a body at rest.
    again = _cycle(tracker, closing, _poses(bodies, t1, offsets),
                   [int(round(t1 * SECOND))] * len(SHAPES), offsets)
    numpy.testing.assert_array_equal(again['closing_speed'], records['closing_speed'])
    # Without separation groups no v_r is computed, and the records are the same.
    alone = _cycle(tracker, closing, _poses(bodies, t1, offsets),
                   [int(round(t1 * SECOND))] * len(SHAPES), offsets, robot_speeds=False)
    assert closing.robot_speeds is None
    numpy.testing.assert_array_equal(alone['closing_speed'], records['closing_speed'])
    numpy.testing.assert_array_equal(alone['time_to_contact'], records['time_to_contact'])


def test_static_obstacles_are_at_rest_and_unknown_velocities_are_nan():
    rng = numpy.random.default_rng(11)
    bodies = _apart(rng, 0.0, 0.0)
    offsets = _offsets(rng)
    tracker, closing = _tracker(), ClosingSpeeds()
    times = [0, 0, 0, TIMELESS]
    _cycle(tracker, closing, _poses(bodies, 0.0, offsets), times, offsets)
    records = _cycle(tracker, closing, _poses(bodies, 0.01, offsets),
                     [SECOND // 100] * 3 + [TIMELESS], offsets)
    assert numpy.isfinite(records['closing_speed']).all()
    for record in records:
        assert record['closing_speed'] == pytest.approx(
            -_exact_rate(bodies, offsets, 0.01, record), abs=1e-6)
    # The obstacle's transform is unknown now: nothing can be said of its pairs.
    records = _cycle(tracker, closing, _poses(bodies, 0.02, offsets),
                     [SECOND // 50] * 3 + [UNKNOWN], offsets)
    assert numpy.isnan(records['closing_speed']).all()
    assert numpy.isnan(records['time_to_contact']).all()


def test_records_that_are_not_measured_have_no_rate():
    rng = numpy.random.default_rng(3)
    bodies = _apart(rng)
    offsets = _offsets(rng)
    tracker, closing = _tracker(), ClosingSpeeds()
    _cycle(tracker, closing, _poses(bodies, 0.0, offsets), [1] * 4, offsets)
    inputs = numpy.full(4, InputState.OK)
    inputs[0] = InputState.STALE
    records = _cycle(tracker, closing, _poses(bodies, 0.01, offsets), [SECOND // 100] * 4,
                     offsets, inputs)
    arm = records[records['link_id'] == 0]
    assert arm['status'][0] == PairStatus.STALE and math.isnan(arm['closing_speed'][0])
    hand = records[records['link_id'] == 1]
    assert math.isfinite(hand['closing_speed'][0])


def test_a_pair_beyond_max_distance_has_no_rate_but_a_link_speed_bound():
    rng = numpy.random.default_rng(5)
    bodies = _apart(rng)[:2] + [Twist(rng, (2.0, 0.0, 0.0))]
    offsets = _offsets(rng)
    tracker, closing = _tracker(), ClosingSpeeds()
    order = tracker.layout.piece_uids
    for seconds in (0.0, 0.02):
        poses = _poses(bodies, seconds, offsets)[order]
        inputs = numpy.full(4, InputState.OK)
        records = tracker.compute(poses, inputs, 0.01)
        closing.update(tracker, [SHAPES[uid] for uid in order], poses, offsets[order], inputs,
                       numpy.full(4, int(seconds * SECOND)), records)
    assert (records['status'] == PairStatus.BEYOND).all()
    assert numpy.isnan(records['closing_speed']).all()
    # The bound, from the twists themselves: |v(c)| + |w| r per link piece, the largest.
    poses = _poses(bodies, 0.02, offsets)

    def piece_bound(piece):
        body = bodies[BODY_OF_PIECE[piece]]
        spin = body.axis / numpy.linalg.norm(body.axis) * body.rate
        centre = poses[piece][:3, :3] @ SHAPES[piece].bounding_center + poses[piece][:3, 3]
        velocity = body.linear + numpy.cross(spin, centre - body.at(0.02)[:3, 3])
        return numpy.linalg.norm(velocity) + abs(body.rate) * SHAPES[piece].bounding_radius

    for record, bound in zip(records, closing.robot_speeds):
        link_pieces = [0] if record['link_id'] == 0 else [1, 2]
        assert bound == pytest.approx(max(piece_bound(a) for a in link_pieces), rel=1e-6)


def test_a_cloud_records_closing_speed_is_the_rate_of_its_exact_distance():
    # The links of test_component_cloud_pairs' scene on constant twists, its cloud at rest
    # (on the fixed frame: timeless). The records are the nearest-point searches' answers.
    pytest.importorskip('rclpy')
    from gjk_ros.ros.compute.bodies import LINK
    from test_component_cloud_pairs import LINKS as CLOUD_LINKS, Scene
    scene = Scene(4)
    rng = numpy.random.default_rng(4)
    twists = {}
    for link in CLOUD_LINKS:
        twists[link] = Twist(rng, (0.0, 0.0, 0.0), speed=0.3, turn=0.5)
        twists[link].start = scene.frames.matrices[link].copy()

    def records_at(seconds):
        for link, twist in twists.items():
            scene.frames.matrices[link] = twist.at(seconds)
        scene.collect()
        return scene.records()

    closing = ClosingSpeeds()

    def measure(seconds):
        records = records_at(seconds)
        layout = scene.layout
        _, origins, _ = layout.placement(scene.ctx.world)
        times = numpy.array([int(round(seconds * SECOND)) if location.kind == LINK
                             else TIMELESS for location in layout.locations])
        closing.update(layout.tracker, layout.shapes, scene.poses, origins,
                       numpy.zeros(len(times), dtype=numpy.int64), times, records)
        return records

    measure(0.2)
    records = measure(0.21).copy()
    assert (records['status'] == PairStatus.VALID).all() and len(records) == len(CLOUD_LINKS)
    step = 1e-5
    after, before = records_at(0.21 + step)['distance'], records_at(0.21 - step)['distance']
    assert (numpy.abs(records['closing_speed']) > 0.01).all(), 'every link moves'
    numpy.testing.assert_allclose(records['closing_speed'], -(after - before) / (2 * step),
                                  atol=1e-6)
    # The cloud is at rest: v_r is the whole closing speed.
    numpy.testing.assert_allclose(closing.robot_speeds, records['closing_speed'], atol=1e-12)


# A piece's transform this cycle: a new sample, the same one, static, unknown, or one from
# before its last sample (ROS time jumped back).
_EVENTS = ('new', 'same', 'static', 'unknown', 'back')
_TIMELINE = strategies.lists(
    strategies.tuples(strategies.lists(strategies.sampled_from(_EVENTS), min_size=4,
                                       max_size=4),
                      strategies.lists(strategies.sampled_from([InputState.OK,
                                                                InputState.STALE]),
                                       min_size=4, max_size=4),
                      strategies.sampled_from([math.inf, 0.3, 0.01]),
                      strategies.booleans()),
    min_size=1, max_size=6)


def _reference_velocity(samples, piece, point):
    """Return a world point's velocity on ``piece``: ``v + w x (p - o)``, the frame's twist."""
    (start, delta, axis, angle, seconds), row, at_rest = samples
    frame = row[piece]
    if frame < 0:
        return numpy.zeros(3) if at_rest[piece] else numpy.full(3, math.nan)
    # Per unit fraction of the frame's interval, at its end (the current pose).
    origin = start[frame, :3, 3] + 1.0 * delta[frame]
    return (delta[frame] + numpy.cross(axis[frame] * angle[frame], point - origin)) / \
        seconds[frame]


def _reference_rate(normal, velocity_a, velocity_b):
    return sum(n * (b - a) for n, a, b in zip(normal, velocity_a, velocity_b))


def _reference_time_to_contact(distance, rate):
    if not math.isfinite(rate) or math.isnan(distance) or distance == -math.inf:
        return math.nan
    if distance <= 0.0:
        return 0.0
    return math.inf if rate >= 0.0 else distance / -rate


def _reference_fields(tracker, shapes, poses, samples, records):
    """Each record's closing speed, time to contact and v_r, one record at a time."""
    layout = tracker.layout
    (_, _, _, angle, seconds), row, _ = samples
    expected = numpy.full((len(records), 3), math.nan)
    for index, (spec, record) in enumerate(zip(layout.records, records)):
        link_pieces = layout.pairs[spec.start:spec.stop, 0]
        bounds = []
        for piece in link_pieces:
            centre = poses[piece, :3, :3] @ shapes[piece].bounding_center + poses[piece, :3, 3]
            turn = angle[row[piece]] / seconds[row[piece]] if row[piece] >= 0 else 0.0
            bounds.append(math.sqrt(sum(_reference_velocity(samples, piece, centre) ** 2)) +
                          turn * shapes[piece].bounding_radius)
        expected[index, 2] = math.nan if not bounds or any(map(math.isnan, bounds)) else \
            max(bounds)
        measured = record['status'] in (PairStatus.VALID, PairStatus.APPROXIMATE)
        if spec.stop <= spec.start or not measured:
            expected[index, :2] = record['closing_speed'], record['time_to_contact']
            continue
        link_piece, obstacle_piece = layout.pairs[spec.start]
        normal = [record['normal_' + axis] for axis in 'xyz']
        velocity_a = _reference_velocity(
            samples, link_piece, numpy.array([record['link_' + axis] for axis in 'xyz']))
        velocity_b = _reference_velocity(
            samples, obstacle_piece, numpy.array([record['obstacle_' + axis] for axis in 'xyz']))
        rate = _reference_rate(normal, velocity_a, velocity_b)
        expected[index] = (-rate + 0.0, _reference_time_to_contact(
            record['distance'] - record['error_bound'], rate),
            -_reference_rate(normal, velocity_a, numpy.zeros(3)) + 0.0)
    return expected


@settings(max_examples=60, deadline=None)
@given(timeline=_TIMELINE, seed=strategies.integers(0, 2 ** 16))
def test_the_kernel_matches_a_per_record_reference_over_random_timelines(timeline, seed):
    rng = numpy.random.default_rng(seed)
    bodies, offsets = _apart(rng), _offsets(rng)
    tracker, closing, history = _tracker(), ClosingSpeeds(), PieceVelocities()
    order = tracker.layout.piece_uids
    shapes = [SHAPES[uid] for uid in order]
    last = numpy.zeros(4, dtype=numpy.int64)
    for cycle, (events, inputs, max_distance, robot_speeds) in enumerate(timeline):
        seconds = 0.2 + 0.01 * cycle
        times = numpy.array([{'new': int(seconds * SECOND), 'same': last[piece],
                              'static': TIMELESS, 'unknown': UNKNOWN,
                              'back': last[piece] - SECOND}[event]
                             for piece, event in enumerate(events)], dtype=numpy.int64)
        last = numpy.where(times > 0, times, last)
        poses = _poses(bodies, seconds, offsets)[order]
        inputs = numpy.asarray(inputs)[order]
        records = tracker.compute(poses, inputs, max_distance)
        closing.update(tracker, shapes, poses, offsets[order], inputs, times[order], records,
                       robot_speeds=robot_speeds)
        samples = history.update(order, poses, offsets[order], inputs, times[order])
        expected = _reference_fields(tracker, shapes, poses, samples, records)
        numpy.testing.assert_array_equal(records['closing_speed'], expected[:, 0])
        numpy.testing.assert_array_equal(records['time_to_contact'], expected[:, 1])
        if robot_speeds:
            numpy.testing.assert_array_equal(closing.robot_speeds, expected[:, 2])
        else:
            assert closing.robot_speeds is None
