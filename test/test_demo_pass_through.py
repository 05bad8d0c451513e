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
The demo's pass-through, without a graph: the scene's TF gaps and what the monitor reports.

Every other time the tool crosses the guard plate the scene sends no TF until it is clear
again (demo/dropout.py); the samples around each gap are apart and the tool is deep in the
plate in between. The monitor counts the cycles whose swept distance is contact while both
samples are positive, and says so under the table and in the summary.
"""

import math

from gjk_ros.demo.dropout import CrossingGaps
from gjk_ros.demo.monitor import format_table, PairHistory, summary_lines
from gjk_ros.demo.scene import demo_scene_config
from gjk_ros.models.kinematics import parse_kinematics
from gjk_ros.ros.records import DistanceRecord, PairStatus
import numpy

RATE_HZ = 50.0


def _gaps(seconds):
    config = demo_scene_config(RATE_HZ)
    gaps = CrossingGaps(config.tf_dropout, config, parse_kinematics(config.urdf))
    sent = [gaps.send(tick) for tick in range(int(seconds * RATE_HZ))]
    runs, tick = [], 0
    while tick < len(sent):
        if sent[tick]:
            tick += 1
            continue
        end = tick
        while end < len(sent) and not sent[end]:
            end += 1
        runs.append((tick, end))
        tick = end
    return gaps, runs


def test_the_scene_leaves_tf_out_while_the_tool_passes_through_the_plate():
    gaps, runs = _gaps(12.0)
    assert len(runs) == 3, 'a gap every other crossing: every elbow period, 4 s'
    for start, end in runs:
        assert (end - start) / RATE_HZ <= 0.6, 'shorter than the demo node tf_timeout'
        before, after = gaps.distance(start - 1), gaps.distance(end)
        assert before > 0.0 and after > 0.0, 'both samples apart'
        assert min(gaps.distance(tick) for tick in range(start, end)) < -0.05, 'deep inside'


def _record(distance, swept=math.nan, status=PairStatus.VALID):
    nan3 = numpy.full(3, numpy.nan)
    return DistanceRecord('tool', 'plate/0', 0, 0, distance, status, nan3, nan3, nan3, 0.0,
                          swept_distance=swept, swept_fraction=0.4 if swept < 0 else math.nan)


def test_the_monitor_reports_swept_contact_between_two_positive_samples():
    history = PairHistory()
    history.add(0.0, [_record(0.02)])
    history.add(0.02, [_record(0.012, swept=0.011)])     # apart over the interval
    history.add(0.04, [_record(0.015, swept=-0.03)])     # through the plate in between
    history.add(0.06, [_record(-0.01, swept=-0.02)])     # sampled contact: not a pass-through
    history.add(0.08, [_record(math.nan, status=PairStatus.STALE)])
    history.add(0.10, [_record(0.02, swept=-0.01)])      # the sample before was not measured
    (contact,) = history.passes
    assert (contact.elapsed, contact.before, contact.after) == (0.04, 0.012, 0.015)
    assert contact.swept_distance == -0.03
    lines = format_table([_record(0.015, swept=-0.03)], 0.04, passes=history.passes)
    assert lines[-1] == ('passed through between two samples: 1 so far; last: t =   0.0 s  '
                         'tool / plate/0: swept contact -0.0300 m at 0.40 of the interval, '
                         'both samples apart (+0.0120, +0.0150 m)')
    summary = summary_lines(history)
    assert summary[-2].endswith('1 cycle(s)') and summary[-1].startswith('  t =   0.0 s  tool')
    assert format_table([_record(0.015)], 0.04)[-1].startswith('tool'), 'no line without any'
