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
The tracker's records, filled in whole-array steps, against a record-by-record reference.

The reference applies the status rules of ``PairTracker`` one record at a time from the
engine's rows (worst input first: INVALID, PENDING, STALE; then BEYOND without a measurement,
VALID or APPROXIMATE with one; a non-finite measurement is INVALID) and copies the values of
the measured records; every other record has NaN values.
"""

import math

from gjk_ros.core import Status
from gjk_ros.core.bodypairs import MEASURED
from gjk_ros.ros.compute.pairs import InputState
from gjk_ros.ros.records import PairStatus
from hypothesis import given, settings, strategies
import numpy
from test_node_pairs import make_tracker, pieces_poses, random_poses

VALUE_FIELDS = ('distance', 'link_x', 'link_y', 'link_z', 'obstacle_x', 'obstacle_y',
                'obstacle_z', 'normal_x', 'normal_y', 'normal_z', 'error_bound')


def reference_records(tracker, pair_inputs, rows, core_status):
    """Return (status, values (r, 11) in VALUE_FIELDS order) one record at a time."""
    status, values = [], numpy.full((len(tracker.layout.records), 11), numpy.nan)
    for r, spec in enumerate(tracker.layout.records):
        inputs = pair_inputs[spec.start:spec.stop].tolist()
        if spec.state == PairStatus.INVALID or InputState.INVALID in inputs:
            status.append(PairStatus.INVALID)
        elif spec.state == PairStatus.PENDING:
            status.append(PairStatus.PENDING)
        elif InputState.STALE in inputs:
            status.append(PairStatus.STALE)
        elif not MEASURED[core_status[r]]:
            status.append(PairStatus.BEYOND)
        elif not numpy.isfinite(rows[r]).all():
            status.append(PairStatus.INVALID)
        else:
            approximate = core_status[r] in (Status.MAX_ITERATIONS, Status.DEGENERATE)
            status.append(PairStatus.APPROXIMATE if approximate else PairStatus.VALID)
            values[r] = rows[r]
    return numpy.array(status), values


def assert_records(records, status, values):
    numpy.testing.assert_array_equal(records['status'], status)
    got = numpy.stack([records[name] for name in VALUE_FIELDS], axis=1)
    numpy.testing.assert_array_equal(got, values)
    # The float32 display copy is the link witness, rounded.
    numpy.testing.assert_array_equal(records['x'], values[:, 1].astype(numpy.float32))
    assert numpy.isnan(records['age']).all()


@settings(max_examples=30, deadline=None)
@given(seed=strategies.integers(0, 2 ** 32 - 1),
       max_distance=strategies.sampled_from([0.05, 0.3, math.inf]))
def test_records_match_the_record_by_record_reference(seed, max_distance):
    tracker = make_tracker()
    rng = numpy.random.default_rng(seed)
    for _ in range(3):
        poses = pieces_poses(tracker, random_poses(rng))
        inputs = rng.choice([InputState.OK] * 6 + [InputState.STALE, InputState.INVALID],
                            len(tracker.layout.piece_uids))
        records = tracker.compute(poses, inputs, max_distance)
        pair_inputs = numpy.maximum(inputs[tracker.layout.pairs[:, 0]],
                                    inputs[tracker.layout.pairs[:, 1]])
        engine = tracker.engine
        # Row values in VALUE_FIELDS order: distance first, as the engine's columns.
        rows = engine.rows[0][:, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]
        assert_records(records, *reference_records(tracker, pair_inputs, rows,
                                                   engine.status[0]))


def test_a_non_finite_measurement_is_invalid_and_a_huge_one_is_kept():
    tracker = make_tracker()
    records = tracker.compute(pieces_poses(tracker, random_poses(numpy.random.default_rng(3))),
                              numpy.zeros(5, dtype=int), math.inf)
    rows = numpy.array(tracker.engine.rows[0])
    core_status = numpy.full(len(rows), Status.SEPARATED, dtype=numpy.int8)
    rows[0, 4] = math.inf               # a witness that overflowed
    rows[1, 7] = math.nan               # a normal that is not one
    rows[2, 4:7] = 1.5e308              # huge but finite: its row sum overflows
    rows[3, 0] = -0.0
    pair_inputs = numpy.zeros(len(tracker.layout.pairs), dtype=numpy.int64)
    tracker._reduce(records, pair_inputs, rows, core_status)
    assert records['status'].tolist() == [PairStatus.INVALID, PairStatus.INVALID,
                                          PairStatus.VALID, PairStatus.VALID]
    assert numpy.isnan(records['distance'][:2]).all() and records['obstacle_x'][2] == 1.5e308
    assert math.copysign(1.0, records['distance'][3]) == -1.0


def test_records_are_fresh_each_cycle():
    tracker = make_tracker()
    poses = pieces_poses(tracker, random_poses(numpy.random.default_rng(5)))
    first = tracker.compute(poses, numpy.zeros(5, dtype=int), math.inf)
    first['distance'] = 7.0
    first['age'] = 1.0
    second = tracker.compute(poses, numpy.zeros(5, dtype=int), math.inf)
    assert not (second['distance'] == 7.0).any() and numpy.isnan(second['age']).all()
    assert second.dtype == first.dtype and second.flags.c_contiguous
