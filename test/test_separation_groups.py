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
Separation groups without a graph: their parameters, and margins against the formula by hand.

ISO/TS 15066: S_p = v_h (T_r + T_s) + v_r T_r + S_s + C + Z_d + Z_r, margin d - S_p, scaling
the largest factor of v_r that keeps the margin >= 0; every expected value below is that
formula worked out by hand on the records' exact quantities.
"""

import array
import math

from gjk_ros.ros.outputs.separation_margins import evaluate_records, float32_below
from gjk_ros.ros.params import Config, validate_parameter
from gjk_ros.ros.params.separation import SeparationGroup
from gjk_ros.ros.records import new_records, PairStatus
from hypothesis import given, settings, strategies
import numpy
import pytest

# v_h 1.6, T_r 0.1, T_s 0.3, S_s 0.05, C 0.1, Z_d 0.02, Z_r 0.01: S_p(v) = 0.82 + 0.1 v.
TERMS = {'people.obstacles': ['person*', 'camera'], 'people.reaction_time': 0.1,
         'people.stopping_time': 0.3, 'people.stopping_distance': 0.05,
         'people.intrusion_distance': 0.1, 'people.human_uncertainty': 0.02,
         'people.robot_uncertainty': 0.01}
# The same with a stopping table: between 1 and 2 m/s, S_p(u) = 0.19 + 0.62 u.
TABLE = dict(TERMS, **{'people.stopping_table_speeds': [0.0, 1.0, 2.0],
                       'people.stopping_table_distances': [0.0, 0.1, 0.3],
                       'people.stopping_table_times': [0.1, 0.2, 0.4]})
MAX_DISTANCE = 2.0


def _group(values=TERMS):
    return SeparationGroup.from_values('people', values)


def _records(*rows):
    """Return records from (status, distance, v_r[, error, swept distance]) rows."""
    records = new_records(len(rows))
    for record, row in zip(records, rows):
        status, distance, speed, error, swept = tuple(row) + (0.0, math.nan)[len(row) - 3:]
        record['status'], record['distance'], record['closing_speed'] = status, distance, speed
        record['error_bound'], record['swept_distance'] = error, swept
    return records


def _evaluate(records, values=TERMS, speeds=None, ready=True, allow_empty=False):
    """Evaluate with v_r the rows' speeds (or ``speeds``: a BEYOND pair's link speed bound)."""
    speeds = records['closing_speed'] if speeds is None else numpy.asarray(speeds)
    return evaluate_records(_group(values), records, speeds, ready, MAX_DISTANCE, allow_empty)


V, A, B = PairStatus.VALID, PairStatus.APPROXIMATE, PairStatus.BEYOND

# (rows, v_r when not the rows', margin, scaling, limiting row)
TABLE_CASES = [
    ([(V, 1.5, 0.5)], None, 1.5 - 0.87, 1.0, 0),
    # Margin -0.07 at full speed; 0.85 - 0.82 - 0.1 a = 0 at a = 0.3.
    ([(V, 0.85, 1.0)], None, 0.85 - 0.92, 0.3, 0),
    # Negative even at standstill: 0.
    ([(V, 0.8, 1.0)], None, 0.8 - 0.92, 0.0, 0),
    # A receding link is given no credit: v_r = 0.
    ([(V, 0.9, -2.0)], None, 0.9 - 0.82, 1.0, 0),
    # APPROXIMATE: its lower end, 0.95 - 0.05.
    ([(A, 0.95, 1.0, 0.05)], None, 0.9 - 0.92, (0.9 - 0.82) / 0.1, 0),
    # The swept bound when lower: 0.86, (0.86 - 0.82) / 0.1 = 0.4.
    ([(V, 1.0, 1.0, 0.0, 0.86)], None, 0.86 - 0.92, 0.4, 0),
    # BEYOND: d = max_distance, v_r its link's speed bound 3 m/s: 2 - 1.12.
    ([(B, math.nan, math.nan)], [3.0], 2.0 - 1.12, 1.0, 0),
    # The group is its worst pair: margins 0.63, -0.07 and -0.02; scalings 1, 0.3, 0.8.
    ([(V, 1.5, 0.5), (V, 0.85, 1.0), (V, 0.9, 1.0)], None, 0.85 - 0.92, 0.3, 1),
]


@pytest.mark.parametrize('rows, speeds, margin, scaling, row', TABLE_CASES)
def test_margins_and_scalings_are_the_formula_on_the_exact_quantities(rows, speeds, margin,
                                                                      scaling, row):
    verdict = _evaluate(_records(*rows), speeds=speeds)
    assert verdict.margin == pytest.approx(margin, abs=1e-12)
    assert verdict.scaling == pytest.approx(scaling, abs=1e-12)
    assert verdict.row == row and verdict.reason == '' and verdict.missing == ()


def test_a_stopping_table_is_read_at_the_closing_speed():
    # At 1.5 m/s: S_s 0.2, T_s 0.3, S_p = 1.6 * 0.4 + 0.15 + 0.2 + 0.13 = 1.12.
    verdict = _evaluate(_records((V, 1.0, 1.5)), TABLE)
    assert verdict.margin == pytest.approx(1.0 - 1.12, abs=1e-12)
    # 0.19 + 0.62 u = 1.0 at u = 0.81 / 0.62, a fraction of 1.5 m/s.
    assert verdict.scaling == pytest.approx(0.81 / 0.62 / 1.5, abs=1e-12)
    beyond = _evaluate(_records((V, 1.0, 2.5)), TABLE)
    assert (beyond.margin, beyond.scaling) == (-math.inf, 0.0), 'beyond the table: unknown'
    assert beyond.reason == 'a robot speed (2.500 m/s) is beyond the stopping table'


@pytest.mark.parametrize('rows, reason', [
    ([(V, 1.5, 0.5), (PairStatus.STALE, math.nan, math.nan)], 'a pair is STALE'),
    ([(V, 1.5, 0.5), (PairStatus.PENDING, math.nan, math.nan)], 'a pair is PENDING'),
    ([(V, 1.5, math.nan)], 'a robot speed is unknown'),
    ([(B, math.nan, math.nan)], 'a robot speed is unknown'),  # the link's velocity unknown
])
def test_anything_unknown_gives_minus_inf_and_zero(rows, reason):
    verdict = _evaluate(_records(*rows))
    assert (verdict.margin, verdict.scaling, verdict.reason) == (-math.inf, 0.0, reason)


def test_unset_terms_not_ready_and_empty_groups():
    unset = dict(TERMS)
    del unset['people.reaction_time'], unset['people.robot_uncertainty']
    verdict = _evaluate(_records((V, 5.0, 0.0)), unset)
    assert (verdict.margin, verdict.scaling) == (-math.inf, 0.0)
    assert verdict.missing == ('reaction_time', 'robot_uncertainty')
    nan = dict(TERMS, **{'people.intrusion_distance': math.nan})
    assert _evaluate(_records((V, 5.0, 0.0)), nan).missing == ('intrusion_distance',)
    not_ready = _evaluate(_records((V, 5.0, 0.0)), ready=False)
    assert (not_ready.margin, not_ready.scaling, not_ready.reason) == (-math.inf, 0.0,
                                                                       'not ready')
    assert _evaluate(_records()).scaling == 0.0
    clear = _evaluate(_records(), allow_empty=True)
    assert (clear.margin, clear.scaling) == (math.inf, 1.0)


def test_group_parameters_are_validated_naming_the_parameter():
    assert validate_parameter('people.reaction_time', 0.1) is None
    assert validate_parameter('people.reaction_time', math.nan) is None  # unset
    assert validate_parameter('people.human_speed', 2) is None
    assert 'must be in [0' in validate_parameter('people.stopping_time', -0.1)
    assert 'expected a number' in validate_parameter('people.stopping_distance', 'far')
    assert 'at most 100 rows' in validate_parameter('people.stopping_table_speeds',
                                                    [0.0] * 101)
    assert 'patterns' in validate_parameter('people.obstacles', ['ok', ''])
    # `ros2 param set` and rclpy send an empty list as some typed empty array: unset.
    assert validate_parameter('people.obstacles', array.array('B')) is None
    assert validate_parameter('people.stopping_table_speeds', array.array('d')) is None
    assert validate_parameter('people.stopping_table_speeds', array.array('d', [0, 1])) is None
    assert 'topic name token' in validate_parameter('separation_groups', ['a-b'])
    assert 'twice' in validate_parameter('separation_groups', ['people', 'people'])
    # A table that cannot be used names itself; so does a value from a file.
    bad = SeparationGroup.from_values('people', dict(TABLE, **{
        'people.stopping_table_speeds': [0.0, 2.0, 1.0]}))
    assert bad.problem == 'people.stopping_table: speeds must start at 0 and increase strictly'
    negative = SeparationGroup.from_values('people', dict(TERMS, **{
        'people.robot_uncertainty': -1.0}))
    assert negative.problem.startswith('people.robot_uncertainty: must be in [0')
    assert _evaluate(_records((V, 5.0, 0.0)), dict(TERMS, **{
        'people.robot_uncertainty': -1.0})).scaling == 0.0


def test_group_names_must_differ_from_observation_sources():
    config = Config.from_values(dict(TERMS, observation_sources=['people', 'lidar'],
                                     separation_groups=['people', 'fixtures']))
    people, fixtures = config.separations
    assert 'observation source' in people.problem
    assert fixtures.problem == '' and fixtures.settings.missing()  # nothing set: unknown
    assert Config.from_values(dict(TERMS, separation_groups=['people'])).separations[0] \
        .watches('person_3')


@pytest.mark.parametrize('value', [0.15, -0.15, 0.1 + 1e-12, 1e-40, 3.0, -math.inf, math.inf])
def test_a_published_margin_is_rounded_down_to_float32(value):
    rounded = float32_below(value)
    assert rounded <= value and numpy.float32(rounded) == rounded
    assert float(numpy.nextafter(numpy.float32(rounded), numpy.float32(numpy.inf))) > value \
        or rounded == value


@settings(max_examples=200, deadline=None)
@given(strategies.lists(strategies.tuples(
    strategies.sampled_from([V, V, V, A, B, PairStatus.STALE]),
    strategies.floats(-0.2, 3.0), strategies.floats(-1.0, 2.5),
    strategies.one_of(strategies.just(math.nan), strategies.floats(-0.2, 3.0))),
    min_size=1, max_size=12), strategies.booleans())
def test_the_group_is_its_worst_pair_as_the_core_evaluates_every_pair(rows, table):
    # The node evaluates only the pairs that can limit (negative margins and the smallest):
    # the same verdict as the core's evaluate_group over every pair.
    from gjk_ros.core.separation import evaluate_group
    from gjk_ros.ros.outputs.separation_margins import group_distances
    records = _records(*[(status, distance, speed, 0.01, swept)
                         for status, distance, speed, swept in rows])
    values = TABLE if table else TERMS
    verdict = _evaluate(records, values)
    core = evaluate_group(_group(values).settings, group_distances(records, MAX_DISTANCE),
                          records['closing_speed'])
    assert verdict.margin == core.margin and verdict.scaling == core.scaling
    if verdict.margin > -math.inf:
        reference = evaluate_group(_group(values).settings,
                                   group_distances(records, MAX_DISTANCE)[[verdict.row]],
                                   records['closing_speed'][[verdict.row]])
        assert reference.scaling == verdict.scaling, 'the limiting pair limits'
