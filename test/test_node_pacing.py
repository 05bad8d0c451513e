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

"""When the node computes: the cycle pacer over jittered timer ticks and TF streams."""

from gjk_ros.ros.compute.pacing import CyclePacer, WATCHDOG_SLACK
from hypothesis import example, given, settings, strategies

RATE_HZ = 30.0
PERIOD = 1.0 / RATE_HZ
# A timer callback runs late by up to this much (an executor busy with other callbacks).
JITTER = strategies.floats(min_value=0.0, max_value=0.4 * PERIOD)


def run_timeline(tf_times, tick_delays):
    """Merge TF arrivals and watchdog ticks (tick k at k periods + its delay); cycle times."""
    events = [(t, 'tf') for t in tf_times]
    events += [((k + 1) * PERIOD + delay, 'tick') for k, delay in enumerate(tick_delays)]
    pacer, cycles = CyclePacer(RATE_HZ), []
    for now, source in sorted(events):
        started = (pacer.try_start(now) if source == 'tf'
                   else pacer.try_start_from_watchdog(now))
        if started:
            cycles.append((now, source))
    return cycles


@settings(max_examples=200, deadline=None)
@given(strategies.lists(JITTER, min_size=30, max_size=90))
def test_static_tf_only_every_watchdog_tick_runs_a_cycle(delays):
    # The regression: a tick a little less late than the one before it found the last cycle
    # "less than a period ago" and skipped, so a third of the outputs never came.
    cycles = run_timeline([], delays)
    assert len(cycles) == len(delays)


@settings(max_examples=200, deadline=None)
@given(strategies.floats(min_value=0.0, max_value=PERIOD), strategies.lists(
    JITTER, min_size=30, max_size=90))
@example(phase=0.033333333333333326, delays=[0.0] * 36)  # a tick and a message at one instant
def test_tf_at_the_rate_drives_every_cycle_whatever_its_phase(phase, delays):
    tf_times = [phase + k * PERIOD for k in range(len(delays) + 1)]
    cycles = run_timeline(tf_times, delays)
    tf_cycles = [now for now, source in cycles if source == 'tf']
    # Every TF message computes: a tick just before each message must not take its token
    # (the output would then lag a whole period behind the transform).
    assert len(tf_cycles) == len(tf_times)
    assert all(source == 'tf' for now, source in cycles if now > phase)


@settings(max_examples=200, deadline=None)
@given(strategies.lists(JITTER, min_size=60, max_size=90))
def test_outputs_continue_soon_after_tf_stops(delays):
    # WATCHDOG_SLACK periods until a tick may compute, one more for the tick to come, plus the
    # timer's lateness.
    stop = 1.0
    tf_times = [k * PERIOD for k in range(int(stop / PERIOD))]
    cycles = run_timeline(tf_times, delays)
    times = [now for now, _ in cycles]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert max(gaps) <= (WATCHDOG_SLACK + 1.0 + 0.4) * PERIOD + 1e-12
    assert any(source == 'tick' and now > stop for now, source in cycles)


def test_the_long_run_rate_never_exceeds_rate_hz():
    tf_times = [k * 0.001 for k in range(3000)]  # 1 kHz TF for 3 s
    cycles = run_timeline(tf_times, [0.0] * 90)
    assert len(cycles) <= 3.0 * RATE_HZ + 2
    assert len(cycles) >= 3.0 * RATE_HZ - 2
