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


def run_node_timeline(callback_times, lateness, rate_hz=RATE_HZ):
    """
    The node's pacing with its watchdog timer modelled: cycle times and their triggers.

    ``callback_times`` are the ``/tf`` callbacks (one per burst: a callback takes every message
    already waiting); a transform that must wait re-arms the watchdog for ``until_token``
    (``DistanceNode._on_transform``), whose early tick puts the period back (``Cycle.tick_in``).
    Each tick runs ``lateness`` late.
    """
    period = 1.0 / rate_hz
    pacer, cycles = CyclePacer(rate_hz), []
    tick, early = period, False
    pending = sorted(callback_times)
    end = pending[-1] + 3 * period
    while pending or tick + lateness <= end:
        if pending and pending[0] < tick + lateness:
            now = pending.pop(0)
            was_waiting = pacer.waiting
            if pacer.try_start(now):
                cycles.append((now, 'tf'))
            elif not was_waiting:
                tick, early = now + max(pacer.until_token(now), 1e-4), True
            continue
        now = tick + lateness
        tick = now + period if early else tick + period
        early = False
        if pacer.try_start_from_watchdog(now):
            cycles.append((now, 'tick'))
    return cycles


@settings(max_examples=100, deadline=None)
@given(strategies.floats(min_value=0.1, max_value=0.9), strategies.floats(0.0, 0.05))
def test_bursts_of_tf_keep_the_full_rate_and_wait_at_most_for_the_token(burst, lateness):
    # 1 kHz TF delivered in bursts a fraction of a period apart: one callback per burst, none
    # just after a token refills. Each cycle still comes when its token does.
    rate_hz, seconds = 100.0, 2.0
    period = 1.0 / rate_hz
    callbacks = [k * burst * period for k in range(int(seconds / (burst * period)))]
    cycles = run_node_timeline(callbacks, lateness * period, rate_hz)
    assert len(cycles) >= seconds * rate_hz - 2
    times = [now for now, _ in cycles]
    for arrival in callbacks:  # the transforms of every burst are computed a period later at most
        assert min(now for now in times if now >= arrival) - arrival <= \
            (1.0 + lateness) * period + 1e-9
