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
Swept distances against open mesh surfaces: the unsigned rule of the instantaneous answer.

A flat piece of an open mesh has no inside, so a body pair measures ``max(d, 0)`` against it
(core.bodypairs). Over a motion the swept minimum is then 0, TOUCHING, as soon as the motion
reaches the sheet, never the depth of a crossing. The judge is a dense reference computed here
from ``signed_distance`` clamped at 0, and the swept answer on the same motion without the
flag (the signed minimum, which the rule must only raise to 0).
"""

from gjk_ros.core import ConvexPolytope, signed_distance, Status
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.interpolation import FrameMotion
from gjk_ros.core.swept import DEFAULT_TOLERANCE, pair_rows, SweptPairs
from hypothesis import given, settings, strategies
import numpy
import pytest
from reference import make_pose
from test_core_motion_interpolation import tf2_poses

CUBE = ConvexPolytope.box([0.02, 0.02, 0.02])
SHEET = ConvexPolytope.from_points([[-0.3, -0.3, 0.0], [0.3, -0.3, 0.0], [0.3, 0.3, 0.0],
                                    [-0.3, 0.3, 0.0]])
BLOCK = ConvexPolytope.box([0.05, 0.05, 0.05])
DENSE = 401


def _frames(*poses):
    return numpy.stack([numpy.asarray(pose, dtype=float) for pose in poses])


def _through(x=0.0, low=-0.03):
    """Return the frames of a cube from 30 mm above the sheet (at x) down to ``low``."""
    return (_frames(make_pose(None, (x, 0.0, 0.03)), numpy.eye(4), numpy.eye(4)),
            _frames(make_pose(None, (x, 0.02, low)), numpy.eye(4), numpy.eye(4)))


def _swept(pieces, groups, flags, pads=None):
    count = len(groups)
    pads = [0.0] * count if pads is None else pads
    return SweptPairs(pieces, groups, list(range(len(pieces))), pad_first=pads,
                      pad_second=[0.0] * count, unsigned=flags)


def _dense_unsigned(pieces, group, flags, start, end, pad=0.0):
    """Return the dense minimum of the body pair's answer (unsigned pieces clamped at 0)."""
    best = numpy.inf
    for s in numpy.linspace(0.0, 1.0, DENSE):
        poses = tf2_poses(start, end, s)
        for a, b in group:
            d = signed_distance(pieces[a], poses[a], pieces[b], poses[b]).distance
            best = min(best, max(d, 0.0) if flags[a] or flags[b] else d)
    return best - pad


@pytest.mark.parametrize('pad', [0.0, 0.01])
def test_crossing_a_sheet_is_touching_at_zero_never_a_depth(pad):
    start, end = _through()
    pieces = [CUBE, SHEET, BLOCK]
    signed = _swept(pieces, [[(0, 1)]], [False, False, False], [pad])
    signed.update(FrameMotion(start, end))
    assert signed.status[0] == Status.PENETRATING and signed.distance[0] < -0.015 - pad
    swept = _swept(pieces, [[(0, 1)]], [False, True, False], [pad])
    swept.update(FrameMotion(start, end))
    assert swept.status[0] == Status.TOUCHING
    assert swept.distance[0] == -pad and 0.0 <= swept.error_bound[0] <= DEFAULT_TOLERANCE
    # Both witnesses at the sheet's point deepest in the cube, apart by the padding.
    numpy.testing.assert_allclose(swept.rows[0, 4:7] - swept.rows[0, 1:4],
                                  -pad * swept.rows[0, 7:10], atol=1e-15)
    assert abs(swept.rows[0, 6]) <= 1e-12  # on the sheet (z = 0)
    # The search stops at the first contact: no more queries than the signed bracket's.
    assert swept.steps[0] <= signed.steps[0]


@pytest.mark.parametrize('clearance', [0.002, 0.01])
def test_passing_beside_a_sheet_is_the_signed_answer(clearance):
    start, end = _through(x=0.3 + 0.02 + clearance)
    pieces = [CUBE, SHEET, BLOCK]
    answers = []
    for flags in ([False, False, False], [False, True, False]):
        swept = _swept(pieces, [[(0, 1)]], flags)
        swept.update(FrameMotion(start, end))
        answers.append((swept.rows.copy(), swept.status.copy(), swept.steps.copy()))
    numpy.testing.assert_array_equal(answers[0][0], answers[1][0])
    assert answers[0][1][0] == answers[1][1][0] == Status.SEPARATED
    assert answers[1][0][0, 0] == pytest.approx(clearance, abs=DEFAULT_TOLERANCE + 1e-12)


def test_a_solid_overlapped_beside_a_crossed_sheet_gives_the_negative_answer():
    # The cube crosses the sheet and, lower down, dips 10 mm into a block under it.
    block = numpy.eye(4)
    block[:3, 3] = [0.0, 0.0, -0.1]
    start, end = _through(low=-0.04)
    start[2], end[2] = block, block
    pieces = [CUBE, SHEET, BLOCK]
    group = [(0, 1), (0, 2)]
    flags = [False, True, False]
    swept = _swept(pieces, [group], flags)
    swept.update(FrameMotion(start, end))
    assert swept.status[0] == Status.PENETRATING and swept.best[0] == 1  # the block's pair
    dense = _dense_unsigned(pieces, group, flags, start, end)
    assert dense == pytest.approx(-0.01, abs=1e-3)
    assert swept.distance[0] - swept.error_bound[0] <= dense + 1e-12
    assert swept.distance[0] >= dense - 1e-3  # an exact sample, within the dense spacing


@settings(max_examples=30, deadline=None)
@given(strategies.floats(-0.35, 0.35), strategies.floats(0.005, 0.06),
       strategies.floats(-0.06, 0.06), strategies.floats(-0.6, 0.6))
def test_random_motions_over_a_sheet_bracket_the_unsigned_minimum(x, high, low, turn):
    c, s = numpy.cos(turn), numpy.sin(turn)
    tilt = numpy.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    start = _frames(make_pose(None, (x, 0.0, high)), numpy.eye(4), numpy.eye(4))
    end = _frames(make_pose(tilt, (x + 0.01, 0.01, low)), numpy.eye(4), numpy.eye(4))
    pieces, flags = [CUBE, SHEET, BLOCK], [False, True, False]
    swept = _swept(pieces, [[(0, 1)]], flags)
    swept.update(FrameMotion(start, end))
    dense = _dense_unsigned(pieces, [(0, 1)], flags, start, end)
    rate = float(swept.rates(FrameMotion(start, end))[0])
    assert swept.distance[0] >= 0.0, 'an open sheet is never negative'
    assert swept.distance[0] - swept.error_bound[0] <= dense + 1e-12
    assert swept.distance[0] >= dense - rate / (DENSE - 1) - 1e-12
    assert (swept.status[0] == Status.TOUCHING) == (swept.distance[0] == 0.0 or
                                                    swept.distance[0] - swept.error_bound[0]
                                                    <= 0.0)


def test_from_engine_carries_the_unsigned_pairs_and_agrees_at_the_ends():
    start, end = _through()
    pieces = [CUBE, SHEET, BLOCK]
    engine = BodyPairs(pieces, [[(0, 1)], [(0, 2)]], [0.0, 0.0], [0.0, 0.0],
                       unsigned=[False, True, False])
    swept = SweptPairs.from_engine(engine, [0, 1, 2])
    numpy.testing.assert_array_equal(swept.unsigned, engine.unsigned)
    rows = []
    for frames in (start, tf2_poses(start, end, 0.5), end):
        engine.update(frames)
        rows.append((engine.rows[0].copy(), pair_rows(engine.pair_set)))
    assert rows[1][0][0, 0] == 0.0  # the instantaneous answer halfway: touching the sheet
    swept.update(FrameMotion(start, end), rows[0][1], rows[2][1])
    assert swept.distance[0] == 0.0 and swept.status[0] == Status.TOUCHING
    assert swept.distance[0] <= min(r[0][0, 0] for r in rows)


def test_unsigned_flags_are_checked_by_name():
    with pytest.raises(ValueError, match='unsigned'):
        SweptPairs([CUBE, SHEET], [[(0, 1)]], [0, 1], unsigned=[True])
