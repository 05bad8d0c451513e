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
Swept distances: nothing is missed between two samples, and nothing is made up.

The judge is a dense reference: the motion sampled every 1/1000 of the interval (frames placed
by ``tf2_pose``, the test's own tf2 interpolation), the exact distance of every piece pair at
every sample, and the bound argument: no distance changes faster than the pair's motion bound
``L``, so the true minimum lies within ``L h / 2`` below the densest sample's (``h`` the
spacing). Every answer must bracket it: its lower end (``distance - error_bound``) never above
the dense minimum, its distance (an exact sample) never below the true minimum, the bracket no
wider than asked, and contact reported exactly when the motion comes into contact.
"""

import math

from gjk_ros.core import ConvexPolytope, PairSet, signed_distance, Status
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.interpolation import FrameMotion
from gjk_ros.core.swept import (DEFAULT_RELATIVE_TOLERANCE, DEFAULT_TOLERANCE, MAX_SAMPLES,
                                pair_rows, piece_spheres, PieceRows, SweptPairs)
from hypothesis import example, given, settings, strategies
import numpy
import pytest
from reference import make_pose, random_rotation
from test_core_motion_interpolation import tf2_poses

DENSE = 1001
PLATE = ConvexPolytope.box([0.3, 0.3, 0.0025])  # a 5 mm plate, 0.6 m square
CUBE = ConvexPolytope.box([0.02, 0.02, 0.02])   # a 40 mm tool


def _frames(*poses):
    return numpy.stack([numpy.asarray(pose, dtype=float) for pose in poses])


def _piece_poses(frames, piece_frames, origins):
    return frames[piece_frames] @ origins


def dense_reference(pieces, groups, piece_frames, origins, pads, start, end, count=DENSE):
    """Return the sample fractions and the (K, count) exact padded distances along the motion."""
    fractions = numpy.linspace(0.0, 1.0, count)
    out = numpy.empty((len(groups), count))
    for n, s in enumerate(fractions):
        poses = _piece_poses(tf2_poses(start, end, s), piece_frames, origins)
        for k, group in enumerate(groups):
            out[k, n] = min(signed_distance(pieces[a], poses[a], pieces[b], poses[b]).distance
                            for a, b in group) - pads[k]
    return fractions, out


def exact_at(pieces, group, piece_frames, origins, pad, start, end, s):
    poses = _piece_poses(tf2_poses(start, end, s), piece_frames, origins)
    return min(signed_distance(pieces[a], poses[a], pieces[b], poses[b]).distance
               for a, b in group) - pad


def check_against_dense(swept, pieces, groups, piece_frames, origins, pads, start, end,
                        tolerance, relative, count=DENSE):
    """Assert every body pair's answer brackets the dense reference's minimum."""
    fractions, dense = dense_reference(pieces, groups, piece_frames, origins, pads, start, end,
                                       count)
    motion = FrameMotion(start, end)
    rates = swept.rates(motion)
    spacing = fractions[1] - fractions[0]
    for k, group in enumerate(groups):
        sampled = dense[k].min()
        pair_rate = max(rates[swept.groups[k, g]] for g in range(len(group)))
        true_low = sampled - pair_rate * spacing / 2.0
        distance, bound = swept.distance[k], swept.error_bound[k]
        assert distance - bound <= sampled + 1e-12, 'the lower end exceeds the truth'
        assert distance >= true_low - 1e-12, 'the distance is below the true minimum'
        assert distance == pytest.approx(exact_at(pieces, group, piece_frames, origins,
                                                  pads[k], start, end, swept.fraction[k]),
                                         abs=1e-12)
        if swept.status[k] != Status.MAX_ITERATIONS:
            assert bound <= tolerance + relative * abs(distance) + 1e-15
        if true_low > tolerance / (1.0 - relative):
            assert distance - bound > 0.0, 'contact reported for a motion that stays apart'
        if sampled < -tolerance:
            assert distance < 0.0, 'a contact of the motion was missed'
    return dense


def _one_pair(moving, still=PLATE, origin=None):
    origins = numpy.stack([numpy.eye(4) if origin is None else origin, numpy.eye(4)])
    return SweptPairs([moving, still], [[(0, 1)]], [0, 1], origins), origins


def _end_rows(pieces, pairs, piece_frames, origins, frames):
    """Return the node's own end samples: a PairSet over the same piece pairs at the poses."""
    pair_set = PairSet(pieces, pairs)
    pair_set.update(_piece_poses(frames, piece_frames, origins))
    return pair_rows(pair_set)


# The plate --------------------------------------------------------------------------------------

def test_a_tool_passing_through_a_plate_between_two_samples_is_contact():
    # 40 mm cube from 30 mm above the plate's centre to 30 mm below in one 30 Hz cycle (1.8 m/s):
    # 7.5 mm clear at both samples.
    start = _frames(make_pose(None, (0.0, 0.0, 0.03)), numpy.eye(4))
    end = _frames(make_pose(None, (0.0, 0.0, -0.03)), numpy.eye(4))
    pieces = [CUBE, PLATE]
    for frames in (start, end):
        assert signed_distance(CUBE, frames[0], PLATE, frames[1]).distance == \
            pytest.approx(0.0075, abs=1e-12)
    swept, origins = _one_pair(CUBE)
    rows = [_end_rows(pieces, [(0, 1)], [0, 1], origins, frames) for frames in (start, end)]
    swept.update(FrameMotion(start, end), rows[0], rows[1])
    assert swept.status[0] == Status.PENETRATING
    assert swept.distance[0] == pytest.approx(-0.0225, abs=DEFAULT_TOLERANCE)
    assert swept.distance[0] - swept.error_bound[0] < -0.0225 + 1e-12
    assert swept.fraction[0] == pytest.approx(0.5, abs=0.01)
    assert 0 < swept.steps[0] < 10
    numpy.testing.assert_allclose(swept.rows[0, 7:10], [0.0, 0.0, -1.0], atol=1e-12)
    check_against_dense(swept, pieces, [[(0, 1)]], [0, 1], origins, [0.0], start, end,
                        DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE)


@pytest.mark.parametrize('clearance', [0.001, 0.005, 0.03])
def test_a_tool_moving_past_the_plate_edge_is_never_contact(clearance):
    # The cube dives from above to below the plate, beside its edge with `clearance` to spare.
    x = 0.3 + 0.02 + clearance
    start = _frames(make_pose(None, (x, 0.0, 0.03)), numpy.eye(4))
    end = _frames(make_pose(None, (x, 0.05, -0.03)), numpy.eye(4))
    swept, origins = _one_pair(CUBE)
    swept.update(FrameMotion(start, end))
    dense = check_against_dense(swept, [CUBE, PLATE], [[(0, 1)]], [0, 1], origins, [0.0],
                                start, end, DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE)
    assert dense.min() == pytest.approx(clearance, abs=1e-12)
    assert swept.distance[0] - swept.error_bound[0] > 0.0
    assert swept.status[0] == Status.SEPARATED


def test_a_turning_finger_that_passes_through_the_plate_is_contact():
    # A 120 mm finger (capsule, frame at its middle) drops 140 mm through the plate in one cycle
    # while turning by 0.3 rad: clear above it at one sample, clear below at the next.
    finger = ConvexPolytope.capsule(0.004, 0.12)
    start = _frames(make_pose(_about_x(-0.15), (0.0, 0.0, 0.07)), numpy.eye(4))
    end = _frames(make_pose(_about_x(0.15), (0.0, 0.02, -0.07)), numpy.eye(4))
    swept, origins = _one_pair(finger)
    swept.update(FrameMotion(start, end))
    for frames in (start, end):
        poses = _piece_poses(frames, [0, 1], origins)
        assert signed_distance(finger, poses[0], PLATE, poses[1]).distance > 0.0
    assert swept.distance[0] < -0.06 and swept.fraction[0] == pytest.approx(0.5, abs=0.05)
    check_against_dense(swept, [finger, PLATE], [[(0, 1)]], [0, 1], origins, [0.0], start,
                        end, DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE)


def _about_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return numpy.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


@pytest.mark.parametrize('scale', [1e-3, 1.0, 100.0])
def test_pass_through_and_moving_past_at_every_scale(scale):
    plate = ConvexPolytope.box(numpy.array([0.3, 0.3, 0.0025]) * scale)
    cube = ConvexPolytope.box(numpy.array([0.02, 0.02, 0.02]) * scale)
    tolerance = DEFAULT_TOLERANCE * scale
    for x, contact in ((0.0, True), (0.33, False)):
        start = _frames(make_pose(_about_x(0.2), numpy.array([x, 0.0, 0.04]) * scale),
                        numpy.eye(4))
        end = _frames(make_pose(None, numpy.array([x, 0.02, -0.04]) * scale), numpy.eye(4))
        swept, origins = _one_pair(cube, plate)
        swept.update(FrameMotion(start, end), tolerance=tolerance)
        assert (swept.distance[0] < 0.0) == contact
        check_against_dense(swept, [cube, plate], [[(0, 1)]], [0, 1], origins, [0.0], start,
                            end, tolerance, DEFAULT_RELATIVE_TOLERANCE, count=401)


def test_a_tool_sliding_on_the_plate_touches_and_never_overlaps():
    start = _frames(make_pose(None, (-0.05, 0.0, 0.0225)), numpy.eye(4))
    end = _frames(make_pose(None, (0.05, 0.03, 0.0225)), numpy.eye(4))
    swept, _ = _one_pair(CUBE)
    swept.update(FrameMotion(start, end))
    assert swept.status[0] == Status.TOUCHING
    assert abs(swept.distance[0]) <= 1e-15 and swept.error_bound[0] <= 1e-15


def test_a_needle_through_a_flat_plate_is_contact():
    # Degenerate bodies: a segment (no volume) crossing a polygon (no thickness).
    needle = ConvexPolytope.from_points([[0.0, 0.0, -0.05], [0.0, 0.0, 0.05]])
    sheet = ConvexPolytope.from_points([[-0.2, -0.2, 0.0], [0.2, -0.2, 0.0], [0.2, 0.2, 0.0],
                                        [-0.2, 0.2, 0.0]])
    start = _frames(make_pose(_about_x(0.1), (0.0, 0.0, 0.06)), numpy.eye(4))
    end = _frames(make_pose(_about_x(-0.1), (0.01, 0.0, -0.06)), numpy.eye(4))
    swept, origins = _one_pair(needle, sheet)
    swept.update(FrameMotion(start, end))
    assert swept.distance[0] < 0.0
    check_against_dense(swept, [needle, sheet], [[(0, 1)]], [0, 1], origins, [0.0], start, end,
                        DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE)


# Seeded scenes against the dense reference ------------------------------------------------------

def _arm_scene(rng):
    """Return a two-piece link and a two-piece obstacle, both moving and turning."""
    pieces = [ConvexPolytope.from_points(rng.normal(size=(20, 3)) * 0.04),
              ConvexPolytope.capsule(0.02, 0.15),
              ConvexPolytope.box([0.1, 0.1, 0.01]),
              ConvexPolytope.sphere(0.04)]
    piece_frames = [0, 0, 1, 1]
    origins = numpy.stack([make_pose(random_rotation(rng), rng.uniform(-0.1, 0.1, 3))
                           for _ in pieces])
    groups = [[(0, 2), (0, 3), (1, 2), (1, 3)], [(1, 3)]]
    start = numpy.stack([make_pose(random_rotation(rng), rng.uniform(-0.05, 0.05, 3)),
                         make_pose(random_rotation(rng), rng.uniform(0.1, 0.2, 3))])
    end = numpy.stack([make_pose(random_rotation(rng, 0.5) @ pose[:3, :3],
                                 pose[:3, 3] + rng.uniform(-0.06, 0.06, 3)) for pose in start])
    return pieces, groups, piece_frames, origins, start, end


@pytest.mark.parametrize('seed', range(6))
@pytest.mark.parametrize('relative', [0.0, DEFAULT_RELATIVE_TOLERANCE])
def test_seeded_scenes_are_bracketed(seed, relative):
    rng = numpy.random.default_rng(seed)
    pieces, groups, piece_frames, origins, start, end = _arm_scene(rng)
    pads = [0.01, 0.0]
    swept = SweptPairs(pieces, groups, piece_frames, origins, pads, [0.0, 0.0])
    swept.update(FrameMotion(start, end), tolerance=2e-5, relative_tolerance=relative)
    check_against_dense(swept, pieces, groups, piece_frames, origins, pads, start, end, 2e-5,
                        relative)


@settings(max_examples=25, deadline=None)
@given(seed=strategies.integers(0, 2 ** 32 - 1), height=strategies.floats(-0.05, 0.08),
       drop=strategies.floats(0.0, 0.1), turn=strategies.floats(0.0, 1.5))
@example(seed=47, height=0.0, drop=0.0, turn=3.346639655090328e-09)
def test_random_motions_over_the_plate_are_bracketed(seed, height, drop, turn):
    rng = numpy.random.default_rng(seed)
    first = make_pose(random_rotation(rng), (rng.uniform(-0.35, 0.35), 0.0, height))
    second = make_pose(random_rotation(rng, turn) @ first[:3, :3],
                       first[:3, 3] + (rng.uniform(-0.05, 0.05), 0.0, -drop))
    start, end = _frames(first, numpy.eye(4)), _frames(second, numpy.eye(4))
    swept, origins = _one_pair(CUBE)
    swept.update(FrameMotion(start, end))
    check_against_dense(swept, [CUBE, PLATE], [[(0, 1)]], [0, 1], origins, [0.0], start, end,
                        DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE, count=401)


# The work -----------------------------------------------------------------------------------

def test_end_rows_settle_a_sliding_pair_without_a_query():
    # The cube slides 20 mm along the plate 0.1 m above it: its tents are flat, and exact.
    start = _frames(make_pose(None, (0.0, 0.0, 0.1225)), numpy.eye(4))
    end = _frames(make_pose(None, (0.02, 0.0, 0.1225)), numpy.eye(4))
    swept, origins = _one_pair(CUBE)
    rows = [_end_rows([CUBE, PLATE], [(0, 1)], [0, 1], origins, f) for f in (start, end)]
    swept.update(FrameMotion(start, end), rows[0], rows[1])
    assert swept.steps[0] == 0
    assert swept.distance[0] == pytest.approx(0.1, abs=1e-12)
    assert swept.error_bound[0] == pytest.approx(0.0, abs=1e-15)
    swept.update(FrameMotion(start, end))
    assert swept.steps[0] == 2  # without rows, the two end samples are measured here


def test_end_rows_settle_a_far_turning_pair_with_a_relative_share():
    # The cube turns 0.3 rad 0.3 m above the plate: its tents dip by the turn, which a 5 %
    # share covers and 0.1 mm does not.
    start = _frames(make_pose(None, (0.0, 0.0, 0.3225)), numpy.eye(4))
    end = _frames(make_pose(_about_x(0.3), (0.0, 0.0, 0.3225)), numpy.eye(4))
    swept, origins = _one_pair(CUBE)
    rows = [_end_rows([CUBE, PLATE], [(0, 1)], [0, 1], origins, f) for f in (start, end)]
    swept.update(FrameMotion(start, end), rows[0], rows[1], relative_tolerance=0.05)
    assert swept.steps[0] == 0
    assert 0.0 < swept.error_bound[0] <= 0.05 * swept.distance[0]
    swept.update(FrameMotion(start, end), rows[0], rows[1], relative_tolerance=0.0)
    assert swept.steps[0] > 0 and swept.error_bound[0] <= DEFAULT_TOLERANCE


def test_end_rows_and_own_samples_give_the_same_bracket():
    rng = numpy.random.default_rng(7)
    pieces, groups, piece_frames, origins, start, end = _arm_scene(rng)
    swept = SweptPairs(pieces, groups, piece_frames, origins)
    pairs = swept.piece_pairs
    given_rows = [_end_rows(pieces, pairs, piece_frames, origins, f) for f in (start, end)]
    swept.update(FrameMotion(start, end), *given_rows, relative_tolerance=0.0)
    with_rows = swept.rows.copy(), swept.steps.copy()
    swept.reset()
    swept.update(FrameMotion(start, end), relative_tolerance=0.0)
    numpy.testing.assert_allclose(swept.rows[:, 0], with_rows[0][:, 0], atol=DEFAULT_TOLERANCE)
    assert swept.steps.sum() > with_rows[1].sum()


def test_a_still_scene_is_its_samples():
    rng = numpy.random.default_rng(2)
    pieces, groups, piece_frames, origins, start, _ = _arm_scene(rng)
    swept = SweptPairs(pieces, groups, piece_frames, origins)
    rows = _end_rows(pieces, swept.piece_pairs, piece_frames, origins, start)
    swept.update(FrameMotion(start, start), rows, rows)
    assert (swept.steps == 0).all() and (swept.error_bound == 0.0).all()
    for k, group in enumerate(groups):
        assert swept.distance[k] == pytest.approx(
            exact_at(pieces, group, piece_frames, origins, 0.0, start, start, 0.0), abs=1e-15)


def test_a_tool_gliding_just_above_the_plate_costs_no_query():
    # The hard case of a plain Lipschitz bound (the distance stays at 0.5 mm while the tool
    # sweeps 60 mm: about 60 / 0.2 samples); the separating plane settles it at once.
    start = _frames(make_pose(None, (-0.03, 0.0, 0.023)), numpy.eye(4))
    end = _frames(make_pose(None, (0.03, 0.0, 0.023)), numpy.eye(4))
    swept, origins = _one_pair(CUBE)
    rows = [_end_rows([CUBE, PLATE], [(0, 1)], [0, 1], origins, f) for f in (start, end)]
    swept.update(FrameMotion(start, end), rows[0], rows[1], relative_tolerance=0.0)
    assert swept.steps[0] == 0
    assert swept.distance[0] - swept.error_bound[0] == pytest.approx(0.0005, abs=1e-12)


@pytest.mark.parametrize('turn', [0.033, 0.1])
def test_gliding_while_turning_meets_the_tolerance_or_says_it_did_not(turn):
    # A 0.2 m finger 2 mm above the plate turning about its joint by `turn` per cycle (1 and 3
    # rad/s at 30 Hz): its tip slides along the plate, the hard case of a first-order bound.
    finger = ConvexPolytope.capsule(0.004, 0.2)
    origin = make_pose(None, (0.0, 0.0, -0.1))
    wrist = 0.2 + 0.004 + 0.0025 + 0.002
    start = _frames(make_pose(_about_x(-turn / 2), (0.0, 0.0, wrist)), numpy.eye(4))
    end = _frames(make_pose(_about_x(turn / 2), (0.0, 0.0, wrist)), numpy.eye(4))
    swept, origins = _one_pair(finger, origin=origin)
    counts = []
    for tolerance in (1e-3, 1e-4):
        swept.update(FrameMotion(start, end), tolerance=tolerance, relative_tolerance=0.0)
        assert swept.status[0] == Status.SEPARATED
        assert swept.error_bound[0] <= tolerance
        assert swept.distance[0] == pytest.approx(0.002, abs=1e-12)
        counts.append(int(swept.steps[0]))
    assert counts[0] < counts[1] < MAX_SAMPLES
    swept.update(FrameMotion(start, end), tolerance=1e-7, relative_tolerance=0.0)
    assert swept.status[0] == Status.MAX_ITERATIONS and swept.error_bound[0] > 1e-7
    check_against_dense(swept, [finger, PLATE], [[(0, 1)]], [0, 1], origins, [0.0], start,
                        end, 1e-7, 0.0)


# Statuses and input -------------------------------------------------------------------------

def test_beyond_only_when_the_spheres_stay_beyond_over_the_whole_motion():
    start = _frames(make_pose(None, (-2.0, 0.0, 0.1)), numpy.eye(4))
    end = _frames(make_pose(None, (-1.5, 0.0, 0.1)), numpy.eye(4))
    swept, _ = _one_pair(CUBE)
    swept.update(FrameMotion(start, end), max_distance=0.5)
    assert swept.status[0] == Status.BEYOND and math.isnan(swept.distance[0])
    assert swept.steps[0] == 0
    # Both samples 2 m away, but the path crosses the plate: measured, and in contact.
    start = _frames(make_pose(None, (-2.0, 0.0, 0.0)), numpy.eye(4))
    through = _frames(make_pose(None, (2.0, 0.0, 0.0)), numpy.eye(4))
    swept.update(FrameMotion(start, through), max_distance=0.5)
    assert swept.status[0] == Status.PENETRATING and swept.distance[0] < 0.0


def test_inactive_pairs_are_not_measured():
    start = _frames(make_pose(None, (0.0, 0.0, 0.1)), numpy.eye(4))
    swept, _ = _one_pair(CUBE)
    swept.update(FrameMotion(start, start), active=[False])
    assert swept.status[0] == Status.INACTIVE and swept.best[0] == -1
    assert math.isnan(swept.fraction[0])


def test_a_turning_half_space_has_no_bound_and_says_so():
    floor = ConvexPolytope.half_space()
    start = _frames(make_pose(None, (0.0, 0.0, 0.1)), numpy.eye(4))
    tilted = _frames(make_pose(None, (0.0, 0.0, 0.1)), make_pose(_about_x(0.1), (0, 0, 0)))
    swept, _ = _one_pair(CUBE, floor)
    swept.update(FrameMotion(start, tilted))
    assert swept.status[0] == Status.MAX_ITERATIONS
    assert swept.distance[0] - swept.error_bound[0] == -math.inf
    lowered = _frames(make_pose(None, (0.0, 0.0, 0.1)), make_pose(None, (0.0, 0.0, 0.05)))
    swept.update(FrameMotion(start, lowered))
    assert swept.distance[0] == pytest.approx(0.03, abs=1e-12)
    assert swept.fraction[0] == 1.0 and swept.status[0] == Status.SEPARATED


def test_from_engine_matches_the_engine_layout_and_padding():
    rng = numpy.random.default_rng(9)
    pieces, groups, piece_frames, origins, start, end = _arm_scene(rng)
    engine = BodyPairs(pieces, groups, [0.01, 0.02], [0.0, 0.005])
    swept = SweptPairs.from_engine(engine, piece_frames, origins)
    numpy.testing.assert_array_equal(swept.piece_pairs, engine.piece_pairs)
    engine.update(_piece_poses(start, piece_frames, origins))
    first = pair_rows(engine.pair_set)
    engine.update(_piece_poses(end, piece_frames, origins))
    swept.update(FrameMotion(start, end), first, pair_rows(engine.pair_set))
    assert (swept.distance <= engine.rows[0][:, 0] + 1e-15).all()
    check_against_dense(swept, pieces, groups, piece_frames, origins, [0.01, 0.025], start, end,
                        DEFAULT_TOLERANCE, DEFAULT_RELATIVE_TOLERANCE)


def test_piece_spheres_ride_their_origins():
    origins = numpy.stack([make_pose(None, (0.3, 0.0, 0.0)), numpy.eye(4)])
    centres, radii = piece_spheres([CUBE, ConvexPolytope.half_space()], origins)
    numpy.testing.assert_allclose(centres, [[0.3, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert radii[0] == pytest.approx(math.sqrt(3) * 0.02) and radii[1] == math.inf


def test_bad_input_is_refused_by_name():
    swept, _ = _one_pair(CUBE)
    motion = FrameMotion(numpy.tile(numpy.eye(4), (2, 1, 1)), numpy.tile(numpy.eye(4), (2, 1, 1)))
    with pytest.raises(TypeError, match='motion'):
        swept.update(numpy.eye(4))
    with pytest.raises(ValueError, match='motion'):
        swept.update(FrameMotion(numpy.eye(4), numpy.eye(4)))
    with pytest.raises(ValueError, match='tolerance'):
        swept.update(motion, tolerance=0.0)
    with pytest.raises(ValueError, match='relative_tolerance'):
        swept.update(motion, relative_tolerance=1.0)
    with pytest.raises(ValueError, match='max_distance'):
        swept.update(motion, max_distance=math.nan)
    with pytest.raises(ValueError, match='start'):
        swept.update(motion, start=PieceRows(numpy.zeros((2, 11)), numpy.zeros(2)))
    with pytest.raises(TypeError, match='end'):
        swept.update(motion, end=(numpy.zeros((1, 11)), numpy.zeros(1)))
    with pytest.raises(ValueError, match='status'):
        PieceRows(numpy.zeros((1, 11)), numpy.full(1, 9))
    with pytest.raises(ValueError, match='status'):
        PieceRows(numpy.zeros((1, 11)), numpy.zeros(2))
    with pytest.raises(ValueError, match='values'):
        PieceRows(numpy.zeros((1, 10)), numpy.zeros(1))
    with pytest.raises(ValueError, match='active'):
        swept.update(motion, active=[True, False])
    with pytest.raises(ValueError, match='piece_frames'):
        SweptPairs([CUBE, PLATE], [[(0, 1)]], [0])
    with pytest.raises(ValueError, match='piece_origins'):
        SweptPairs([CUBE, PLATE], [[(0, 1)]], [0, 1], numpy.zeros((2, 4, 4)))
    with pytest.raises(ValueError, match='groups'):
        SweptPairs([CUBE, PLATE], [[(0, 2)]], [0, 1])
    with pytest.raises(ValueError, match='pad_first'):
        SweptPairs([CUBE, PLATE], [[(0, 1)]], [0, 1], pad_first=[math.nan])
