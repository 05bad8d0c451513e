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
ISO/TS 15066 speed and separation monitoring: the formula as written, the scaling, fail-safe.

The table's expected margins are the formula S_p = v_h (T_r + T_s) + v_r T_r + S_s + C + Z_d +
Z_r worked out by hand for each row (the arithmetic is in the row's comment), never computed
by the module under test. The end-to-end case takes d from the core's exact distance and v_r
from a motion whose closing speed is known in closed form.
"""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.separation import (evaluate_group, protective_distance, separation_margin,
                                     SeparationSettings, speed_scaling, StoppingTable)
from hypothesis import given, settings, strategies
import numpy
import pytest

ROBOT = SeparationSettings(human_speed=1.6, reaction_time=0.1, stopping_time=0.3,
                           stopping_distance=0.2, intrusion_distance=0.05,
                           human_uncertainty=0.04, robot_uncertainty=0.01)
TABLE = StoppingTable(speeds=(0.0, 0.5, 1.0, 2.0), distances=(0.0, 0.05, 0.15, 0.5),
                      times=(0.0, 0.1, 0.2, 0.4))
TABLED = SeparationSettings(human_speed=1.6, reaction_time=0.1, intrusion_distance=0.05,
                            human_uncertainty=0.04, robot_uncertainty=0.01,
                            stopping_table=TABLE)
FIXTURE = SeparationSettings(human_speed=0.0, reaction_time=0.1, stopping_time=0.3,
                             stopping_distance=0.2, intrusion_distance=0.0,
                             human_uncertainty=0.0, robot_uncertainty=0.01)

# (settings, d, v_r, expected S_p): each S_p worked out by hand.
ROWS = [
    # 1.6 (0.1 + 0.3) + 0 * 0.1 + 0.2 + 0.05 + 0.04 + 0.01 = 0.64 + 0.3
    (ROBOT, 1.5, 0.0, 0.94),
    # 0.64 + 1.0 * 0.1 + 0.3
    (ROBOT, 1.5, 1.0, 1.04),
    # 0.64 + 2.5 * 0.1 + 0.3
    (ROBOT, 0.9, 2.5, 1.19),
    # a receding link gets no credit: v_r = max(-0.7, 0) = 0
    (ROBOT, 0.2, -0.7, 0.94),
    # fixtures: 0 (0.4) + 0.5 * 0.1 + 0.2 + 0 + 0 + 0.01
    (FIXTURE, 0.3, 0.5, 0.26),
    # table at 0.5 m/s: S_s 0.05, T_s 0.1: 1.6 (0.1 + 0.1) + 0.05 + 0.05 + 0.1 = 0.32 + 0.2
    (TABLED, 1.0, 0.5, 0.52),
    # table at 1.5 m/s: S_s 0.325, T_s 0.3: 1.6 * 0.4 + 0.15 + 0.325 + 0.1 = 0.64 + 0.575
    (TABLED, 1.0, 1.5, 1.215),
    # table at 0: 1.6 * 0.1 + 0 + 0 + 0.1
    (TABLED, 0.05, 0.0, 0.26),
]


@pytest.mark.parametrize('row', ROWS)
def test_margin_is_the_formula_evaluated_by_hand(row):
    terms, distance, speed, expected = row
    assert protective_distance(terms, speed) == pytest.approx(expected, abs=1e-12)
    assert separation_margin(terms, distance, speed) == pytest.approx(distance - expected,
                                                                      abs=1e-12)


def test_margins_of_arrays_match_the_rows():
    distances = numpy.array([row[1] for row in ROWS[:5]])
    speeds = numpy.array([row[2] for row in ROWS[:5]])
    expected = numpy.array([row[1] - row[3] for row in ROWS[:5]])
    got = numpy.array([separation_margin(row[0], row[1], row[2]) for row in ROWS[:5]])
    numpy.testing.assert_allclose(got, expected, atol=1e-12)
    vector = separation_margin(ROBOT, distances[:4], speeds[:4])
    numpy.testing.assert_allclose(vector, expected[:4], atol=1e-12)


def test_margin_on_exact_quantities_of_a_sphere_closing_on_a_box():
    # A sphere of radius 0.1 moving at 0.8 m/s straight at a box face: the exact distance is
    # the core's (checked against the closed form), v_r is 0.8 exactly.
    box, ball = ConvexPolytope.box([0.2, 0.2, 0.2]), ConvexPolytope.sphere(0.1)
    pose = numpy.eye(4)
    pose[0, 3] = 1.5
    distance = signed_distance(ball, pose, box, numpy.eye(4)).distance
    assert distance == pytest.approx(1.5 - 0.1 - 0.2, abs=1e-12)
    margin = separation_margin(ROBOT, distance, 0.8)
    assert margin == pytest.approx(1.2 - (0.64 + 0.08 + 0.3), abs=1e-12)


def test_scaling_keeps_the_margin_at_zero_when_it_must_slow():
    # S_p(a v) = 0.94 + 0.1 a v: with d = 1.0 and v = 2 m/s, a = (1.0 - 0.94) / 0.2 = 0.3.
    assert speed_scaling(ROBOT, 1.0, 2.0) == pytest.approx(0.3, abs=1e-12)
    assert speed_scaling(ROBOT, 1.5, 2.0) == 1.0
    assert speed_scaling(ROBOT, 0.9, 2.0) == 0.0  # below S_p at standstill: stop
    assert speed_scaling(ROBOT, 0.9, 0.0) == 0.0


def test_scaling_with_a_table_solves_on_the_right_segment():
    # d = 0.8 at v = 2 m/s: margin(a) = 0.8 - S_p(2a). At 2a = 1.0 (a = 0.5): S_p = 1.6 * 0.3
    # + 0.1 + 0.15 + 0.1 = 0.83 > 0.8; at 2a = 0.5: 0.52 <= 0.8. Between: S_s = 0.05 + 0.2 x,
    # T_s = 0.1 + 0.2 x with x = 2a - 0.5, so S_p = 0.52 + 1.6 * 0.2 x + 0.1 x + 0.2 x = 0.52 +
    # 0.62 x = 0.8 at x = 0.28 / 0.62, a = (0.5 + x) / 2.
    expected = (0.5 + 0.28 / 0.62) / 2.0
    assert speed_scaling(TABLED, 0.8, 2.0) == pytest.approx(expected, abs=1e-12)
    assert separation_margin(TABLED, 0.8, 2.0 * expected) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=200)
@given(distance=strategies.floats(0.0, 5.0), speed=strategies.floats(0.0, 1.99),
       tabled=strategies.booleans())
def test_scaling_is_the_largest_factor_with_a_non_negative_margin(distance, speed, tabled):
    terms = TABLED if tabled else ROBOT
    factor = speed_scaling(terms, distance, speed)
    assert 0.0 <= factor <= 1.0
    if factor > 0.0:
        assert separation_margin(terms, distance, factor * speed) >= -1e-12
    if factor < 1.0:
        assert separation_margin(terms, distance, min(factor + 1e-6, 1.0) * speed) < 1e-12


@pytest.mark.parametrize('distance, speed', [(math.nan, 0.5), (-math.inf, 0.5), (1.0, math.nan)])
def test_unknown_input_gives_no_motion(distance, speed):
    assert speed_scaling(ROBOT, distance, speed) == 0.0
    assert separation_margin(ROBOT, distance, speed) == -math.inf


def test_speed_beyond_the_stopping_table_is_unknown():
    assert math.isnan(protective_distance(TABLED, 2.5))
    assert speed_scaling(TABLED, 10.0, 2.5) == 0.0
    assert separation_margin(TABLED, 10.0, 2.5) == -math.inf


def test_unset_terms_are_named_and_give_no_motion():
    terms = SeparationSettings(reaction_time=0.1, stopping_time=0.3, stopping_distance=0.2)
    assert terms.missing() == ['intrusion_distance', 'human_uncertainty', 'robot_uncertainty']
    verdict = evaluate_group(terms, [5.0], [0.0])
    assert (verdict.margin, verdict.scaling) == (-math.inf, 0.0)
    assert verdict.missing == ('intrusion_distance', 'human_uncertainty', 'robot_uncertainty')
    assert speed_scaling(terms, 5.0, 0.0) == 0.0
    assert SeparationSettings(stopping_table=TABLE).missing() == [
        'reaction_time', 'intrusion_distance', 'human_uncertainty', 'robot_uncertainty']


@pytest.mark.parametrize('terms, name', [
    (SeparationSettings(reaction_time=-0.1), 'reaction_time'),
    (SeparationSettings(human_speed=math.inf), 'human_speed'),
    (SeparationSettings(stopping_table=StoppingTable((0.0, 1.0), (0.2, 0.1), (0.1, 0.2))),
     'distances'),
    (SeparationSettings(stopping_table=StoppingTable((0.5, 1.0), (0.1, 0.2), (0.1, 0.2))),
     'speeds'),
    (SeparationSettings(stopping_table=StoppingTable((0.0,), (0.1,), (0.1,))), 'rows'),
])
def test_bad_terms_are_refused_by_name(terms, name):
    assert name in terms.problem()
    assert evaluate_group(terms, [5.0], [0.0]).scaling == 0.0


def test_group_takes_the_smallest_margin_and_scaling():
    verdict = evaluate_group(ROBOT, [1.5, 1.0, 3.0], [0.0, 2.0, 2.0])
    assert verdict.pair == 1
    assert verdict.scaling == pytest.approx(0.3, abs=1e-12)
    assert verdict.margin == pytest.approx(1.0 - 1.14, abs=1e-12)
    clear = evaluate_group(ROBOT, [2.0, 3.0], [0.0, 0.5])
    assert (clear.scaling, clear.pair) == (1.0, 0)
    assert clear.margin == pytest.approx(2.0 - 0.94, abs=1e-12)
    assert evaluate_group(ROBOT, [], []).scaling == 1.0
    unknown = evaluate_group(ROBOT, [2.0, -math.inf], [0.0, 0.0])
    assert (unknown.margin, unknown.scaling) == (-math.inf, 0.0)
    with pytest.raises(ValueError, match='robot_speeds'):
        evaluate_group(ROBOT, [1.0], [0.0, 1.0])
