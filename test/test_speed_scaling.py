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
The speed-scaling state machine (gjk_ros/ros/outputs/speed_scaling.py), without ROS.

Exact values on scripted timelines, and hypothesis properties over random distance timelines
(with -inf and NaN for unknown): the factor stays in [0, 1], unknown gives 0 in the same
cycle, a change needs its count of consecutive cycles, the factor lies between the two ramps
once a distance is held, and held distances give factors monotone in the distance.
"""

import math

from gjk_ros.ros.outputs.speed_scaling import ramp, ScalingSettings, SpeedScaler
from hypothesis import given, settings as hypothesis_settings, strategies
import pytest

SETTINGS = ScalingSettings(slowdown_distance=0.3, stop_distance=0.1, release_margin=0.05,
                           trigger_cycles=2, release_cycles=3)


def run(scaler, distances):
    return [scaler.step(distance) for distance in distances]


def test_ramp_is_linear_between_stop_and_slowdown():
    assert ramp(0.1, SETTINGS) == 0.0
    assert ramp(0.2, SETTINGS) == pytest.approx(0.5)
    assert ramp(0.3, SETTINGS) == 1.0
    assert ramp(-0.5, SETTINGS) == 0.0  # penetration
    assert ramp(math.inf, SETTINGS) == 1.0
    assert ramp(-math.inf, SETTINGS) == 0.0
    assert ramp(math.nan, SETTINGS) == 0.0


def test_starts_at_zero_and_releases_after_the_release_count():
    scaler = SpeedScaler(SETTINGS)
    assert run(scaler, [1.0, 1.0, 1.0, 1.0]) == [0.0, 0.0, 1.0, 1.0]


def test_trigger_debounce_ignores_a_single_cycle_dip():
    scaler = SpeedScaler(SETTINGS)
    run(scaler, [1.0] * 3)
    assert run(scaler, [0.2, 1.0, 0.2, 0.2]) == [1.0, 1.0, 1.0, pytest.approx(0.5)]


def test_unknown_is_zero_at_once_whatever_the_debounce():
    scaler = SpeedScaler(SETTINGS)
    run(scaler, [1.0] * 3)
    assert run(scaler, [-math.inf]) == [0.0]
    run(scaler, [1.0] * 3)
    assert run(scaler, [math.nan]) == [0.0]


def test_hysteresis_holds_the_factor_until_the_margin_is_crossed():
    scaler = SpeedScaler(SETTINGS)
    run(scaler, [1.0] * 3)
    assert run(scaler, [0.2, 0.2])[-1] == pytest.approx(0.5)
    # Back out by less than the margin: ramp(d - 0.05) <= 0.5, the factor holds.
    assert run(scaler, [0.24] * 5) == [pytest.approx(0.5)] * 5
    # Beyond it: ramp(0.28 - 0.05) = 0.65 after three cycles.
    assert run(scaler, [0.28] * 3) == [pytest.approx(0.5)] * 2 + [pytest.approx(0.65)]


def test_settings_problems_are_named():
    assert ScalingSettings(0.1, 0.2).problem().startswith('stop_distance (0.2)')
    assert ScalingSettings(trigger_cycles=0).problem() is not None
    assert ScalingSettings().problem() is None


distances = strategies.one_of(
    strategies.floats(-0.2, 0.6),
    strategies.sampled_from([-math.inf, math.nan, math.inf, 0.1, 0.3]))
scaling_settings = strategies.builds(
    lambda stop, span, margin, trigger, release: ScalingSettings(stop + span, stop, margin,
                                                                 trigger, release),
    strategies.floats(0.0, 0.2), strategies.floats(0.01, 0.4), strategies.floats(0.0, 0.1),
    strategies.integers(1, 5), strategies.integers(1, 5))


@hypothesis_settings(max_examples=300, deadline=None)
@given(scaling_settings, strategies.lists(distances, max_size=60))
def test_every_timeline_respects_the_contract(settings, timeline):
    scaler = SpeedScaler(settings)
    previous, lower_run, higher_run = 0.0, 0, 0
    for distance in timeline:
        factor = scaler.step(distance)
        assert 0.0 <= factor <= 1.0
        if math.isnan(distance) or distance == -math.inf:
            assert factor == 0.0
            previous, lower_run, higher_run = 0.0, 0, 0
            continue
        lower_run = lower_run + 1 if ramp(distance, settings) < previous else 0
        higher_run = higher_run + 1 if \
            ramp(distance - settings.release_margin, settings) > previous else 0
        if factor < previous:
            # Lowered only after trigger_cycles asking for less, to this cycle's ramp.
            assert lower_run >= settings.trigger_cycles
            assert factor == ramp(distance, settings)
            lower_run = 0
        elif factor > previous:
            assert higher_run >= settings.release_cycles
            assert factor == ramp(distance - settings.release_margin, settings)
            higher_run = 0
        else:
            assert lower_run < settings.trigger_cycles and higher_run < settings.release_cycles
        previous = factor


@hypothesis_settings(max_examples=200, deadline=None)
@given(scaling_settings, strategies.lists(distances, max_size=20), strategies.floats(-0.2, 0.6))
def test_a_held_distance_settles_between_the_two_ramps(settings, history, held):
    scaler = SpeedScaler(settings)
    run(scaler, history)
    factor = run(scaler, [held] * (settings.trigger_cycles + settings.release_cycles + 1))[-1]
    assert ramp(held - settings.release_margin, settings) <= factor <= ramp(held, settings)


@hypothesis_settings(max_examples=200, deadline=None)
@given(scaling_settings, strategies.floats(-0.2, 0.6), strategies.floats(-0.2, 0.6),
       strategies.sampled_from([math.inf, -math.inf]))
def test_held_distances_give_factors_monotone_in_the_distance(settings, near, far, start):
    """From the same state (clear or unknown), a farther held distance never scales less."""
    near, far = sorted((near, far))
    cycles = settings.trigger_cycles + settings.release_cycles + 1
    factors = []
    for distance in (near, far):
        scaler = SpeedScaler(settings)
        run(scaler, [start] * cycles)
        factors.append(run(scaler, [distance] * cycles)[-1])
    assert factors[0] <= factors[1]
