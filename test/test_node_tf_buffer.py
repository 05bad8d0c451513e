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

"""The node's TF buffer against tf2's semantics (the raw /tf decoder: test_tf_messages.py)."""

import bisect
import math

from gjk_ros.ros.inputs import tf_buffer
from gjk_ros.ros.inputs.tf_buffer import MAX_COORDINATE, TfBuffer, TfStatus
from hypothesis import given, settings, strategies
import numpy
import pytest
from scipy.spatial.transform import Rotation, Slerp

S = 1_000_000_000  # one second in ns
IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def values(xyz=(0.0, 0.0, 0.0), rotvec=(0.0, 0.0, 0.0)):
    return tuple(xyz) + tuple(Rotation.from_rotvec(rotvec).as_quat())


def reference(xyz, rotvec):
    matrix = numpy.eye(4)
    matrix[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    matrix[:3, 3] = xyz
    return matrix


def test_interpolation_matches_an_independent_slerp():
    buffer = TfBuffer()
    buffer.insert('world', 'a', 10 * S, values((0, 0, 0), (0, 0, 0.2)), False)
    buffer.insert('world', 'a', 11 * S, values((1, 2, 3), (0.3, -0.5, 1.2)), False)
    for ratio in (0.0, 0.25, 0.5, 0.9, 1.0):
        result = buffer.lookup('world', 'a', int((10 + ratio) * S))
        assert result.status == TfStatus.OK
        rotations = Rotation.from_rotvec([(0, 0, 0.2), (0.3, -0.5, 1.2)])
        expected = Slerp([0.0, 1.0], rotations)([ratio]).as_matrix()[0]
        assert numpy.allclose(result.matrix[:3, :3], expected, atol=1e-12)
        assert numpy.allclose(result.matrix[:3, 3], numpy.array([1, 2, 3]) * ratio, atol=1e-12)


def test_latest_common_time_of_a_branched_tree():
    buffer = TfBuffer()
    buffer.insert('world', 'base', 0, IDENTITY, True)               # static: any time
    for stamp, x in ((5, 0.0), (6, 1.0), (7, 2.0)):
        buffer.insert('base', 'arm', stamp * S, values((x, 0, 0)), False)
    for stamp, y in ((4, 0.0), (6, 2.0)):
        buffer.insert('world', 'camera', stamp * S, values((0, y, 0)), False)
    arm = buffer.lookup('world', 'arm')
    assert arm.stamp_ns == 7 * S and arm.dynamic and arm.matrix[0, 3] == 2.0
    # arm in camera: newest of arm is 7 s, of camera 6 s: both evaluated at 6 s.
    both = buffer.lookup('camera', 'arm')
    assert both.stamp_ns == 6 * S
    assert numpy.allclose(both.matrix[:3, 3], [1.0, -2.0, 0.0])
    static = buffer.lookup('world', 'base')
    assert static.status == TfStatus.OK and not static.dynamic


def test_out_of_order_data_never_overwrites_newer():
    buffer = TfBuffer()
    assert buffer.insert('world', 'a', 2 * S, values((2, 0, 0)), False) == 'stored'
    assert buffer.insert('world', 'a', 1 * S, values((1, 0, 0)), False) == 'stored'
    assert buffer.lookup('world', 'a').matrix[0, 3] == 2.0
    assert buffer.lookup('world', 'a', int(1.5 * S)).matrix[0, 3] == pytest.approx(1.5)
    assert buffer.insert('world', 'a', 2 * S, values((3, 0, 0)), False) == 'replaced'
    assert buffer.lookup('world', 'a').matrix[0, 3] == 3.0
    assert buffer.insert('world', 'a', 2 * S, values((2, 0, 0)), False) == 'duplicate'
    assert buffer.lookup('world', 'a').matrix[0, 3] == 3.0


def test_history_is_bounded_and_old_data_dropped():
    buffer = TfBuffer(cache_time_s=1.0)
    for k in range(1000):
        buffer.insert('world', 'a', k * S // 100, values((k, 0, 0)), False)
    assert buffer.lookup('world', 'a', 8 * S).status == TfStatus.EXTRAPOLATION
    assert buffer.lookup('world', 'a', 8 * S).past
    assert buffer.insert('world', 'a', 5 * S, IDENTITY, False) == 'old'
    edge = buffer._edges['a']
    assert len(edge.stamps) - edge.first <= 102, 'pruned samples are gone for lookups'
    assert len(edge.stamps) <= 2 * 102, 'and deleted once they are half the lists'


def test_extrapolation_into_the_future_is_not_past():
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, IDENTITY, False)
    future = buffer.lookup('world', 'a', 2 * S)
    assert future.status == TfStatus.EXTRAPOLATION and not future.past
    assert "'a'" in future.reason


def test_staleness_is_measured_from_the_stamp():
    buffer = TfBuffer()
    buffer.insert('world', 'a', 10 * S, IDENTITY, False)
    buffer.insert('world', 's', 0, IDENTITY, True)
    assert buffer.lookup('world', 'a', now_ns=10 * S + S // 2, timeout_ns=S).status == \
        TfStatus.OK
    stale = buffer.lookup('world', 'a', now_ns=12 * S, timeout_ns=S)
    assert stale.status == TfStatus.STALE and "'a'" in stale.reason
    assert stale.matrix is not None
    assert buffer.lookup('world', 's', now_ns=10**6 * S, timeout_ns=S).status == TfStatus.OK


def test_clear_dynamic_keeps_static():
    buffer = TfBuffer()
    buffer.insert('world', 's', 0, IDENTITY, True)
    buffer.insert('s', 'a', S, IDENTITY, False)
    buffer.clear_dynamic()
    assert buffer.lookup('world', 's').status == TfStatus.OK
    assert buffer.lookup('world', 'a').status == TfStatus.MISSING


@pytest.mark.parametrize('w, status', [
    (1.0, TfStatus.OK), (0.99, TfStatus.OK), (1.2, TfStatus.OK), (1e-150, TfStatus.OK),
    (1e154, TfStatus.OK), (0.0, TfStatus.INVALID), (1e-160, TfStatus.INVALID),
    (1e200, TfStatus.INVALID), (math.nan, TfStatus.INVALID), (math.inf, TfStatus.INVALID),
])
def test_quaternions_are_normalised_where_tf2_can(w, status):
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, w), False)
    result = buffer.lookup('world', 'a')
    assert result.status == status
    if status == TfStatus.OK:
        assert numpy.allclose(result.matrix, numpy.eye(4), atol=1e-15)  # normalised


def test_huge_components_never_become_identity():
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, (0.0, 0.0, 0.0, 1e154, 1e154, 0.0, 1e154), False)
    assert buffer.lookup('world', 'a').status == TfStatus.INVALID


def test_translations_beyond_the_sane_range_and_overflow_when_composing():
    buffer = TfBuffer()
    buffer.insert('world', 'far', S, (1.5e308, 0, 0, 0, 0, 0, 1), False)
    assert buffer.lookup('world', 'far').status == TfStatus.INVALID
    # Each edge in range, the composition beyond it.
    buffer.insert('world', 'b', S, (0.9 * MAX_COORDINATE, 0, 0, 0, 0, 0, 1), False)
    buffer.insert('b', 'c', S, (0.9 * MAX_COORDINATE, 0, 0, 0, 0, 0, 1), False)
    composed = buffer.lookup('world', 'c')
    assert composed.status == TfStatus.INVALID and 'overflow' in composed.reason


def test_a_bad_sample_in_the_past_does_not_poison_the_future():
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, (math.nan, 0, 0, 0, 0, 0, 1), False)
    assert buffer.lookup('world', 'a').status == TfStatus.INVALID
    buffer.insert('world', 'a', 2 * S, IDENTITY, False)
    assert buffer.lookup('world', 'a').status == TfStatus.OK
    assert buffer.lookup('world', 'a', int(1.5 * S)).status == TfStatus.INVALID


def test_unknown_frames_cycles_and_rejections():
    buffer = TfBuffer()
    assert buffer.lookup('world', 'nowhere').status == TfStatus.MISSING
    assert buffer.insert('a', 'a', S, IDENTITY, False) == 'rejected'
    assert buffer.insert('', 'a', S, IDENTITY, False) == 'rejected'
    buffer.insert('a', 'b', S, IDENTITY, False)
    buffer.insert('b', 'a', S, IDENTITY, False)
    assert buffer.lookup('world', 'a').status == TfStatus.INVALID  # tf2: "contains a loop"
    buffer.insert('/x', '/y', S, IDENTITY, False)
    assert buffer.lookup('x', 'y').status == TfStatus.OK


samples = strategies.lists(
    strategies.tuples(strategies.integers(0, 50),
                      strategies.tuples(*[strategies.floats(-1, 1)] * 3)),
    min_size=1, max_size=20, unique_by=lambda sample: sample[0])


@settings(max_examples=100)
@given(samples=samples, order=strategies.randoms(use_true_random=False))
def test_insertion_order_does_not_matter(samples, order):
    shuffled = list(samples)
    order.shuffle(shuffled)
    first, second = TfBuffer(), TfBuffer()
    for buffer, sequence in ((first, samples), (second, shuffled)):
        for stamp, rotvec in sequence:
            buffer.insert('world', 'a', stamp * S // 10, values(rotvec, rotvec), False)
    for stamp in range(0, 51, 3):
        one = first.lookup('world', 'a', stamp * S // 10 or 1)
        two = second.lookup('world', 'a', stamp * S // 10 or 1)
        assert one.status == two.status
        if one.matrix is not None:
            assert numpy.array_equal(one.matrix, two.matrix)


def _eager_prune(edge, limit):
    """Prune as tf2 does, deleting at once (the reference for the bulk deletion)."""
    cut = bisect.bisect_left(edge.stamps, limit, edge.first)
    del edge.stamps[:cut], edge.parents[:cut], edge.samples[:cut], edge.reasons[:cut]
    edge.first = 0
    edge._matrices = {}
    edge.earlier = {stamp: seen for stamp, seen in edge.earlier.items() if stamp >= limit}


@settings(max_examples=100, deadline=None)
@given(strategies.lists(strategies.tuples(strategies.integers(0, 400),
                                          strategies.sampled_from(['world', 'base']),
                                          strategies.floats(-1.0, 1.0)), max_size=120),
       strategies.lists(strategies.integers(0, 420), min_size=1, max_size=20))
def test_bulk_pruning_answers_as_eager_pruning(inserts, times):
    def run():
        buffer = TfBuffer(cache_time_s=0.5)
        for stamp, parent, x in inserts:
            buffer.insert(parent, 'a', stamp * S // 100, values((x, 0, 0), (0, 0, x)), False)
        return [buffer.lookup('world', 'a', time * S // 100) for time in times] + \
            [buffer.lookup('world', 'a')]

    lazy = run()
    original = tf_buffer._Edge._prune
    tf_buffer._Edge._prune = _eager_prune
    try:
        eager = run()
    finally:
        tf_buffer._Edge._prune = original
    for one, two in zip(lazy, eager):
        assert (one.status, one.stamp_ns, one.reason, one.past) == \
            (two.status, two.stamp_ns, two.reason, two.past)
        assert (one.matrix is None) == (two.matrix is None)
        if one.matrix is not None:
            assert numpy.array_equal(one.matrix, two.matrix)
