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
The node's TF buffer against tf2, case by case.

Each case states what tf2 does and names where that is written: a test of ros2/geometry2
(``tf2/test/*.cpp``, ``test_tf2/test/buffer_core_test.cpp``) or the function of
``tf2/src/buffer_core.cpp`` and ``tf2/src/cache.cpp`` that does it. The cases where the node
departs from tf2 on purpose say so, with tf2's behaviour beside ours (docs/semantics.md lists
them too).
"""

import math
import sys

from gjk_ros.ros.inputs.tf_buffer import MAX_GRAPH_DEPTH, TfBuffer, TfStatus
from gjk_ros.ros.inputs.tf_messages import TfBatch
from gjk_ros.ros.inputs.timekeeping import MAX_STAMP_NS
from hypothesis import given, settings, strategies
import numpy
import pytest
from scipy.spatial.transform import Rotation

S = 1_000_000_000
IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def at(x=0.0, y=0.0, z=0.0, quaternion=(0.0, 0.0, 0.0, 1.0)):
    return (float(x), float(y), float(z)) + tuple(float(v) for v in quaternion)


def x_of(lookup):
    assert lookup.status == TfStatus.OK, lookup.reason
    return lookup.matrix[0, 3]


def chain(buffer, frames, stamp, static=False):
    """frames[0] <- frames[1] <- ...: each one 1 m along x from its parent."""
    for parent, child in zip(frames, frames[1:]):
        buffer.insert(parent, child, stamp, at(1.0), static)


# -- setTransform: what is stored -------------------------------------------------------------

def test_self_transform_and_empty_ids_are_refused():
    # tf2: BufferCore_setTransform.NoInsertOnSelfTransform, NoInsertWithNoFrameID,
    # NoInsertWithNoParentID (setTransformImpl: TF_SELF_TRANSFORM, TF_NO_CHILD_FRAME_ID,
    # TF_NO_FRAME_ID).
    buffer = TfBuffer()
    assert buffer.insert('a', 'a', S, IDENTITY, False) == 'rejected'
    assert buffer.insert('', 'a', S, IDENTITY, False) == 'rejected'
    assert buffer.insert('a', '', S, IDENTITY, False) == 'rejected'
    assert buffer.insert('/a', 'a', S, IDENTITY, False) == 'rejected'  # stripped: the same
    assert buffer.lookup('a', 'b').status == TfStatus.MISSING


def test_a_leading_slash_is_stripped_on_insert():
    # tf2: setTransformImpl strips one leading '/' from both ids (stripSlash).
    buffer = TfBuffer()
    buffer.insert('/world', '/arm', S, at(2.0), False)
    assert x_of(buffer.lookup('world', 'arm')) == 2.0


def test_a_leading_slash_in_a_lookup_is_accepted_here():
    # tf2 differs: validateFrameId refuses "/arm" in lookupTransform (InvalidArgumentException).
    # Here the slash is stripped, as on insert (docs/semantics.md, differences).
    buffer = TfBuffer()
    buffer.insert('world', 'arm', S, at(2.0), False)
    assert x_of(buffer.lookup('/world', '/arm')) == 2.0


@pytest.mark.parametrize('quaternion, yaw', [
    ((0.0, 0.0, 1.0, 1.0), math.pi / 2),                   # static_transform_publisher style
    ((0.0, 0.0, 0.0, 0.98), 0.0),                          # a raw IMU quaternion, norm 0.98
    ((0.0, 0.0, 2.0, 2.0 * math.sqrt(3.0)), math.pi / 3),  # norm 4
    ((0.0, 0.0, 1e-150, 1e-150), math.pi / 2),             # tiny, but |q|^2 is normal
])
def test_a_finite_non_unit_quaternion_is_normalised(quaternion, yaw):
    # tf2: setTransform builds tf2::Transform(Quaternion, Vector3); Matrix3x3::setRotation
    # scales by 2 / |q|^2, so the stored rotation is the normalised one, and the
    # QUATERNION_NORMALIZATION_TOLERANCE test of setTransformImpl runs on the unit quaternion
    # read back (getRotation): it passes.
    buffer = TfBuffer()
    buffer.insert('world', 'imu', S, (0.5, 0.0, 0.0) + quaternion, False)
    result = buffer.lookup('world', 'imu')
    assert result.status == TfStatus.OK
    expected = Rotation.from_euler('z', yaw).as_matrix()
    assert numpy.allclose(result.matrix[:3, :3], expected, atol=1e-12)
    assert result.matrix[0, 3] == 0.5


def test_a_zero_quaternion_is_invalid():
    # tf2: setTransformInvalidQuaternion (tf2/test/simple_tf2_core.cpp): rotation (0, 0, 0, 0)
    # makes setTransform return false (2 / |q|^2 is inf, the matrix NaN: TF_NAN_INPUT).
    # Here it is stored as an INVALID sample instead of being ignored (differences).
    buffer = TfBuffer()
    assert buffer.insert('world', 'a', S, (0.0,) * 7, False) == 'invalid'
    result = buffer.lookup('world', 'a')
    assert result.status == TfStatus.INVALID and "'a'" in result.reason


@pytest.mark.parametrize('values, what', [
    ((math.nan, 0, 0, 0, 0, 0, 1), 'non-finite translation'),   # tf2 ignores it (TF_NAN_INPUT)
    ((0, 0, 0, 0, 0, math.nan, 1), 'non-finite quaternion'),    # tf2 ignores it (TF_NAN_INPUT)
    ((math.inf, 0, 0, 0, 0, 0, 1), 'non-finite translation'),   # tf2 stores it
    ((2e6, 0, 0, 0, 0, 0, 1), 'beyond'),                        # tf2 stores it
    ((0, 0, 0, 1e200, 0, 0, 1), 'cannot be normalised'),        # tf2: |q|^2 = inf, identity
])
def test_transforms_tf2_ignores_or_garbles_are_invalid_here(values, what):
    # tf2: BufferCore_setTransform.NoInsertWithNan for NaN; an inf or huge translation is
    # stored; a quaternion whose |q|^2 overflows gives the scale 0 in Matrix3x3::setRotation,
    # the identity rotation. Here each is an INVALID sample: lookups through it say so instead
    # of using older data or a wrong rotation (differences).
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, IDENTITY, False)
    assert buffer.insert('world', 'a', 2 * S, values, False) == 'invalid'
    result = buffer.lookup('world', 'a')
    assert result.status == TfStatus.INVALID and what in result.reason
    assert buffer.lookup('world', 'a', S).status == TfStatus.OK


# -- TimeCache::insertData: duplicates, order, history ----------------------------------------

def test_an_exact_duplicate_is_ignored():
    # tf2: TimeCache.DuplicateEntries and TimeCache.RepeatedElements (tf2/test/
    # cache_unittest.cpp): inserting the same TransformStorage again adds nothing.
    buffer = TfBuffer()
    assert buffer.insert('world', 'a', S, at(1.0), False) == 'stored'
    for _ in range(100):
        assert buffer.insert('world', 'a', S, at(1.0), False) == 'duplicate'
    assert len(buffer._edges['a'].stamps) == 1


def test_a_resent_older_value_does_not_override_a_newer_one_at_its_stamp():
    # tf2: TimeCache::insertData scans every sample at the incoming stamp and inserts only if
    # none is equal (TransformStorage::operator==); a distinct one goes in front and is the
    # one getData finds. So A, then B, then A again at one stamp leaves B in effect.
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, at(1.0), False)
    assert buffer.insert('world', 'a', S, at(2.0), False) == 'replaced'
    assert buffer.insert('world', 'a', S, at(1.0), False) == 'duplicate'
    assert x_of(buffer.lookup('world', 'a', S)) == 2.0
    assert x_of(buffer.lookup('world', 'a')) == 2.0
    assert buffer.insert('world', 'a', S, at(3.0), False) == 'replaced'
    assert x_of(buffer.lookup('world', 'a')) == 3.0


def test_an_invalid_sample_at_a_stamp_holds_until_the_next_valid_one():
    # tf2 never stores an invalid sample (setTransformImpl ignores it), so what it holds at a
    # stamp is decided by the valid samples alone, duplicates ignored. Here an invalid sample
    # takes effect when it comes (differences); the next valid one brings back what tf2 holds.
    nan = (math.nan, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, at(1.0), False)
    assert buffer.insert('world', 'a', S, nan, False) == 'invalid'
    assert buffer.lookup('world', 'a').status == TfStatus.INVALID
    assert buffer.insert('world', 'a', S, at(1.0), False) == 'replaced'  # A, X, A: A
    assert x_of(buffer.lookup('world', 'a')) == 1.0
    buffer.insert('world', 'a', S, at(2.0), False)
    buffer.insert('world', 'a', S, nan, False)
    buffer.insert('world', 'a', S, at(1.0), False)  # A, B, X, A: tf2 holds B
    assert x_of(buffer.lookup('world', 'a')) == 2.0
    buffer.insert('world', 'a', S, nan, False)  # ... X: invalid again
    assert buffer.lookup('world', 'a').status == TfStatus.INVALID


def test_a_duplicate_differs_by_its_parent_too():
    # tf2: TransformStorage::operator== compares frame_id_ (the parent) as well.
    buffer = TfBuffer()
    buffer.insert('table', 'cup', S, at(1.0), False)
    assert buffer.insert('gripper', 'cup', S, at(1.0), False) == 'replaced'
    buffer.insert('world', 'gripper', S, at(5.0), True)
    assert x_of(buffer.lookup('world', 'cup')) == 6.0


def test_data_older_than_the_history_is_refused():
    # tf2: TimeCache::insertData returns false for a stamp older than the newest minus
    # max_storage_time_ (setTransformImpl logs TF_OLD_DATA).
    buffer = TfBuffer(cache_time_s=1.0)
    buffer.insert('world', 'a', 10 * S, IDENTITY, False)
    assert buffer.insert('world', 'a', 9 * S - 1, IDENTITY, False) == 'old'
    assert buffer.insert('world', 'a', 9 * S, IDENTITY, False) == 'stored'  # just inside


def test_the_history_is_pruned_before_each_insert():
    # tf2: TimeCache::insertData calls pruneList first, against the newest stamp before the
    # insert: an old sample survives the insert that makes it old, until the next one.
    buffer = TfBuffer(cache_time_s=1.0)
    buffer.insert('world', 'a', 0, at(0.0), False)
    buffer.insert('world', 'a', S // 2, at(1.0), False)
    buffer.insert('world', 'a', 5 * S, at(2.0), False)
    assert x_of(buffer.lookup('world', 'a', S // 4)) == pytest.approx(0.5)
    buffer.insert('world', 'a', 5 * S + 1, at(2.0), False)
    assert buffer.lookup('world', 'a', S // 4).status == TfStatus.EXTRAPOLATION


# -- per-sample parents: re-parenting ----------------------------------------------------------

def grasp_scene():
    """Put a cup on the table until 5 s, in the gripper from 6 s (TransformStorage::frame_id_)."""
    buffer = TfBuffer()
    buffer.insert('world', 'table', 0, at(10.0), True)
    buffer.insert('world', 'gripper', 0, at(20.0), True)
    for second in (3, 4, 5):
        buffer.insert('table', 'cup', second * S, at(1.0), False)
    for second in (6, 7):
        buffer.insert('gripper', 'cup', second * S, at(2.0), False)
    return buffer


def test_a_reparented_frame_keeps_its_history():
    # tf2: the parent is stored with each sample (TransformStorage::frame_id_); getParent and
    # getData answer with the sample in effect at the time asked.
    buffer = grasp_scene()
    assert x_of(buffer.lookup('world', 'cup')) == 22.0             # latest: in the gripper
    assert x_of(buffer.lookup('world', 'cup', 4 * S)) == 11.0      # before: on the table
    assert buffer.lookup('world', 'cup').stamp_ns == 7 * S


def test_a_late_message_naming_the_old_parent_keeps_the_newer_history():
    # tf2: TimeCache::insertData puts a late sample in its place by stamp, whatever its
    # parent; the newer samples (and their parent) stay in effect.
    buffer = grasp_scene()
    assert buffer.insert('table', 'cup', int(4.5 * S), at(1.0), False) == 'stored'
    assert x_of(buffer.lookup('world', 'cup')) == 22.0
    assert x_of(buffer.lookup('world', 'cup', int(4.5 * S))) == 11.0
    assert x_of(buffer.lookup('world', 'cup', int(6.5 * S))) == 22.0


def test_no_interpolation_across_a_change_of_parent():
    # tf2: TimeCache.ReparentingInterpolationProtection (tf2/test/cache_unittest.cpp):
    # between samples of different parents getData returns the older sample as it is.
    buffer = grasp_scene()
    assert x_of(buffer.lookup('world', 'cup', int(5.5 * S))) == 11.0


def test_the_latest_common_time_follows_the_newest_parent():
    # tf2: getLatestCommonTime walks by getLatestTimeAndParent, the newest sample's parent.
    buffer = grasp_scene()
    buffer.insert('world', 'gripper', 0, IDENTITY, False)  # the gripper becomes dynamic ...
    buffer.insert('world', 'gripper', 6 * S + 500, at(20.0), False)  # ... newest at 6 s
    assert buffer.lookup('world', 'cup').stamp_ns == 6 * S + 500


# -- lookups: time 0, interpolation, extrapolation ---------------------------------------------

def test_latest_common_time_cases():
    # tf2: tf.getLatestCommonTime (test_tf2/test/buffer_core_test.cpp) and
    # BufferCore::getLatestCommonTime: the oldest of the newest stamps up to the common parent.
    buffer = TfBuffer()
    buffer.insert('parent', 'a', 1000, IDENTITY, False)
    buffer.insert("parent's parent", 'parent', 2000, IDENTITY, False)
    assert buffer.lookup("parent's parent", 'a').stamp_ns == 1000      # simple case
    buffer.insert('parent', 'a', 3000, IDENTITY, False)
    assert buffer.lookup("parent's parent", 'a').stamp_ns == 2000      # with an update
    buffer.insert('parent', 'b', 4000, IDENTITY, False)
    buffer.insert('b', 'c', 3000, IDENTITY, False)
    buffer.insert('c', 'd', 9000, IDENTITY, False)
    buffer.insert('f', 'e', 5000, IDENTITY, False)
    assert buffer.lookup('b', 'a').stamp_ns == 3000                    # shared parent
    assert buffer.lookup('c', 'a').stamp_ns == 3000                    # two degrees
    assert buffer.lookup('a', 'c').stamp_ns == 3000                    # reversed
    assert buffer.lookup('d', 'a').stamp_ns == 3000                    # three degrees
    assert buffer.lookup('e', 'f').stamp_ns == 5000                    # a tree of its own
    assert buffer.lookup('f', 'e').stamp_ns == 5000
    assert buffer.lookup('a', 'not valid').status == TfStatus.MISSING  # no connection


def test_static_frames_and_stamp_zero_do_not_constrain_the_latest_common_time():
    # tf2: getLatestCommonTime skips TimePointZero (StaticCache::getLatestTimeAndParent gives
    # 0); when nothing constrains it the lookup runs at time 0, each cache's newest sample
    # (TimeCache::findClosest).
    buffer = TfBuffer()
    buffer.insert('world', 'base', 5 * S, at(1.0), True)
    buffer.insert('base', 'arm', 7 * S, at(1.0), False)
    assert buffer.lookup('world', 'arm').stamp_ns == 7 * S
    buffer.insert('world', 'zero', 0, at(3.0), False)
    zero = buffer.lookup('world', 'zero')
    assert zero.status == TfStatus.OK and zero.stamp_ns == 0 and zero.dynamic
    assert x_of(zero) == 3.0


def test_interpolation_between_samples_is_exact_in_integer_time():
    # tf2: TimeCache::interpolate, ratio (time - one.stamp) / (two.stamp - one.stamp) in
    # integer nanoseconds; translations lerp, rotations slerp (TimeCache.CartesianInterpolation,
    # TimeCache.AngularInterpolation).
    base = 1_700_000_000_992_890_186
    buffer = TfBuffer()
    buffer.insert('world', 'a', base, at(0.0), False)
    buffer.insert('world', 'a', base + 1000, at(1.0, quaternion=(0, 0, 1, 0)), False)
    middle = buffer.lookup('world', 'a', base + 250)
    assert middle.stamp_ns == base + 250
    assert middle.matrix[0, 3] == 0.25
    expected = Rotation.from_euler('z', math.pi / 4).as_matrix()
    assert numpy.allclose(middle.matrix[:3, :3], expected, atol=1e-12)
    assert buffer.lookup('world', 'a').stamp_ns == base + 1000


def test_extrapolation_is_refused_not_clamped():
    # tf2: tf2_lookupTransform.TransformException_Backward_Forward (tf2/test/
    # simple_tf2_core.cpp): one sample answers only its own time; with two, before them is
    # BackwardExtrapolation and after them ForwardExtrapolation.
    buffer = TfBuffer()
    buffer.insert('foo', 'bar', 2 * S, IDENTITY, False)
    assert buffer.lookup('foo', 'bar', 2 * S).status == TfStatus.OK
    assert buffer.lookup('foo', 'bar', 4 * S).status == TfStatus.EXTRAPOLATION
    buffer.insert('foo', 'bar', 3 * S, IDENTITY, False)
    past = buffer.lookup('foo', 'bar', 1 * S)
    future = buffer.lookup('foo', 'bar', 4 * S)
    assert past.status == future.status == TfStatus.EXTRAPOLATION
    assert past.past and not future.past


def test_an_edge_above_the_common_parent_does_not_matter():
    # tf2: tf.NoExtrapolationExceptionFromParent (test_tf2/test/buffer_core_test.cpp): a and b
    # under one parent whose own parents only have old data: a to b still works.
    buffer = TfBuffer(cache_time_s=1e-3)
    for stamp in (1000, 10000):
        buffer.insert('parent', 'a', stamp, IDENTITY, False)
        buffer.insert('parent', 'b', stamp, IDENTITY, False)
    buffer.insert("parent's parent", 'parent', 1000, IDENTITY, False)
    assert buffer.lookup('b', 'a', 2000).status == TfStatus.OK


def test_static_transforms_hold_at_every_time_and_survive_clear():
    # tf2: StaticCache::getData answers any time; tf2_clear.LookUp_Static_Transfrom_Succeed
    # (tf2/test/simple_tf2_core.cpp): clear() leaves static transforms (StaticCache::clearList
    # does nothing).
    buffer = TfBuffer()
    buffer.insert('foo', 'bar', S, at(1.0), True)
    buffer.insert('foo', 'moving', S, at(1.0), False)
    buffer.clear_dynamic()
    assert x_of(buffer.lookup('foo', 'bar', 2 * S)) == 1.0
    assert buffer.lookup('foo', 'moving').status == TfStatus.MISSING


def test_moving_between_tf_and_tf_static_starts_a_new_history():
    # tf2: setTransformImpl allocates a new cache when a frame's static-ness changes.
    buffer = TfBuffer()
    buffer.insert('world', 'a', S, at(1.0), False)
    buffer.insert('world', 'a', 2 * S, at(2.0), False)
    buffer.insert('world', 'a', 3 * S, at(3.0), True)
    assert buffer.lookup('world', 'a', int(1.5 * S)).matrix[0, 3] == 3.0  # valid at any time
    buffer.insert('world', 'a', 4 * S, at(4.0), False)
    assert buffer.lookup('world', 'a', 3 * S).status == TfStatus.EXTRAPOLATION


# -- a frame to itself -------------------------------------------------------------------------

def test_a_frame_to_itself_is_stamped_with_its_latest_time():
    # tf2: lookupTransformImpl with target == source: identity; at time 0 time_out is the
    # frame's getLatestTimestamp (0 for a root or a static frame); at a time, that time.
    # tf.lookupTransform (test_tf2/test/buffer_core_test.cpp): works for any frame, known or not.
    buffer = TfBuffer()
    buffer.insert('world', 'arm', 7 * S + 3, IDENTITY, False)
    buffer.insert('world', 'fixed', 5 * S, IDENTITY, True)
    assert buffer.lookup('arm', 'arm').stamp_ns == 7 * S + 3
    assert buffer.lookup('world', 'world').stamp_ns == 0
    assert buffer.lookup('fixed', 'fixed').stamp_ns == 0
    assert buffer.lookup('some_frame', 'some_frame').status == TfStatus.OK
    assert buffer.lookup('arm', 'arm', 9 * S).stamp_ns == 9 * S
    assert numpy.array_equal(buffer.lookup('arm', 'arm').matrix, numpy.eye(4))


# -- walks: depth and loops --------------------------------------------------------------------

def long_chain(edges, static=True):
    frames = ['f%d' % index for index in range(edges + 1)]
    buffer = TfBuffer()
    chain(buffer, frames, S, static)
    return buffer, frames


@pytest.mark.parametrize('static', [True, False])
def test_a_chain_as_deep_as_tf2_allows_is_composed_without_recursion(static):
    # tf2: walkToTopParent counts the edges of the source's walk and fails past
    # MAX_GRAPH_DEPTH (1000): 1000 edges (1001 frames) are composed, 1001 are "a loop".
    # Composition here is iterative: a low recursion limit changes nothing.
    buffer, frames = long_chain(MAX_GRAPH_DEPTH, static)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100)
    try:
        result = buffer.lookup(frames[0], frames[-1])
        many = buffer.lookup_many(frames[0], frames[1:])
    finally:
        sys.setrecursionlimit(limit)
    assert x_of(result) == pytest.approx(MAX_GRAPH_DEPTH)
    assert x_of(many[frames[500]]) == pytest.approx(500)
    deeper, frames = long_chain(MAX_GRAPH_DEPTH + 1, static)
    refused = deeper.lookup(frames[0], frames[-1])
    assert refused.status == TfStatus.INVALID and 'MAX_GRAPH_DEPTH' in refused.reason


def test_depth_is_counted_up_to_the_target_not_to_the_root():
    # tf2: walkToTopParent stops the source's walk at the target (TargetParentOfSource):
    # 10 edges below a 1500-edge chain is 10 edges.
    buffer, frames = long_chain(1500)
    assert x_of(buffer.lookup(frames[1490], frames[1500])) == pytest.approx(10.0)
    assert buffer.lookup(frames[0], frames[1500]).status == TfStatus.INVALID


def test_the_target_walk_is_counted_up_to_the_top_of_the_source_walk():
    # tf2: walkToTopParent walks the target up to top_parent, the end of the source's walk,
    # and fails past MAX_GRAPH_DEPTH there even when their common parent is lower.
    buffer, frames = long_chain(600)
    chain(buffer, [frames[100]] + ['g%d' % index for index in range(450)], S, True)
    # Target 'g449': 450 edges to f100, then 100 more to the top of the source's walk, f0.
    assert x_of(buffer.lookup('g449', frames[600])) == pytest.approx(500 - 450)
    chain(buffer, ['g449'] + ['h%d' % index for index in range(451)], S, True)
    assert buffer.lookup('h450', frames[600]).status == TfStatus.INVALID


def test_a_loop_is_invalid_and_never_raises():
    # tf2: walkToTopParent and getLatestCommonTime: "The tf tree is invalid because it
    # contains a loop." (LookupException) once a walk passes MAX_GRAPH_DEPTH.
    buffer = TfBuffer()
    buffer.insert('a', 'b', S, IDENTITY, False)
    buffer.insert('b', 'c', S, IDENTITY, False)
    buffer.insert('c', 'a', S, IDENTITY, False)
    buffer.insert('world', 'x', S, IDENTITY, False)
    for target, source in (('world', 'a'), ('a', 'world'), ('x', 'c')):
        result = buffer.lookup(target, source)
        assert result.status == TfStatus.INVALID and 'loop' in result.reason
    assert x_of(buffer.lookup('a', 'b')) == 0.0  # a frame of the loop to its own parent


# -- stamps ------------------------------------------------------------------------------------

def test_stamps_are_kept_to_the_nanosecond():
    # tf2: TimePoint is std::chrono nanoseconds (setTransform adds sec and nanosec); the
    # stamp of a lookup at time 0 is exactly the data's.
    stamp = 1_700_000_000 * S + 992_890_186_793 % S
    buffer = TfBuffer()
    buffer.insert('world', 'a', stamp, IDENTITY, False)
    assert buffer.lookup('world', 'a').stamp_ns == stamp


def test_a_stamp_no_header_can_carry_is_refused():
    # tf2 keeps any int64 TimePoint: sec 2^31 - 1 with nanosec 2^32 - 1 is 2^31 s + 3.3 s,
    # and so is every output stamped with it, which no builtin_interfaces/Time can carry
    # (sec is int32). The node refuses such a datum by name (timekeeping.stamp_problem).
    buffer = TfBuffer()
    past_the_end = (2 ** 31 - 1) * S + 2 ** 32 - 1
    entries = [('world', 'a', past_the_end, IDENTITY), ('world', 'b', -1, IDENTITY),
               ('world', 'c', MAX_STAMP_NS, IDENTITY)]
    refused = buffer.insert_message(TfBatch.from_entries(entries), False)
    assert [(parent, child) for parent, child, _ in refused] == [('world', 'a'), ('world', 'b')]
    assert all('header' in why for _, _, why in refused)
    assert buffer.lookup('world', 'a').status == TfStatus.MISSING
    assert buffer.lookup('world', 'c').stamp_ns == MAX_STAMP_NS


# -- sharing work between lookups ------------------------------------------------------------

FRAMES = ['a', 'b', 'c', 'd', 'e']
inserts = strategies.lists(strategies.tuples(
    strategies.sampled_from(FRAMES), strategies.sampled_from(FRAMES + ['world', 'world']),
    strategies.integers(1, 12), strategies.sampled_from([False, False, False, True]),
    strategies.floats(-1.0, 1.0)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(inserts=inserts, target=strategies.sampled_from(['world', 'a', 'c']))
def test_many_lookups_answer_as_single_ones(inserts, target):
    # lookup_many shares walks and products between frames (re-parented, looping, extrapolated,
    # static or not): every answer must be the one a lookup of that frame alone gives.
    buffer = TfBuffer()
    for child, parent, second, static, angle in inserts:
        quaternion = (0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2))
        buffer.insert(parent, child, second * S, at(angle, 1.0, 0.0, quaternion), static)
    now, timeout = 12 * S, 3 * S
    many = buffer.lookup_many(target, FRAMES, now_ns=now, timeout_ns=timeout)
    for frame in FRAMES:
        alone = buffer.lookup(target, frame, now_ns=now, timeout_ns=timeout)
        shared = many[frame]
        assert (shared.status, shared.stamp_ns, shared.dynamic, shared.reason, shared.past) == \
            (alone.status, alone.stamp_ns, alone.dynamic, alone.reason, alone.past)
        assert (shared.matrix is None) == (alone.matrix is None)
        if alone.matrix is not None:
            assert numpy.array_equal(shared.matrix, alone.matrix)


@settings(max_examples=200, deadline=None)
@given(steps=strategies.lists(strategies.one_of(
    strategies.tuples(strategies.just('insert'), strategies.sampled_from(FRAMES),
                      strategies.sampled_from(FRAMES + ['world']), strategies.integers(1, 12),
                      strategies.booleans(), strategies.floats(-1.0, 1.0)),
    strategies.tuples(strategies.just('message'), strategies.sampled_from(FRAMES),
                      strategies.integers(1, 12), strategies.floats(-1.0, 1.0)),
    strategies.tuples(strategies.just('clear')),
    strategies.tuples(strategies.just('ask'), strategies.sampled_from(['world', 'a']),
                      strategies.sampled_from([10, 12]), strategies.sampled_from([0, 5, 11]),
                      strategies.lists(strategies.sampled_from(FRAMES), max_size=5))),
    max_size=40))
def test_repeated_many_lookups_follow_every_change_of_the_buffer(steps):
    # A cycle asks lookup_many for the same times several times (the latest, 0, or a cloud's
    # stamp); its answers are kept per time until a transform is stored or forgotten: never an
    # answer of before.
    buffer = TfBuffer()
    for step in steps:
        if step[0] == 'insert':
            _, child, parent, second, static, angle = step
            buffer.insert(parent, child, second * S, at(angle, 1.0, 0.0), static)
        elif step[0] == 'message':
            _, child, second, angle = step
            buffer.insert_message(TfBatch.from_entries(
                [('world', child, second * S, at(angle, 0.0, 1.0))]), False)
        elif step[0] == 'clear':
            buffer.clear_dynamic()
        else:
            _, target, second, time, frames = step
            many = buffer.lookup_many(target, frames, now_ns=second * S, timeout_ns=3 * S,
                                      time_ns=time * S)
            for frame in frames:
                alone = buffer.lookup(target, frame, time_ns=time * S, now_ns=second * S,
                                      timeout_ns=3 * S)
                assert (many[frame].status, many[frame].stamp_ns, many[frame].reason) == \
                    (alone.status, alone.stamp_ns, alone.reason)
                if alone.matrix is not None:
                    assert numpy.array_equal(many[frame].matrix, alone.matrix)


def test_many_lookups_at_interleaved_times_are_each_made_once(monkeypatch):
    # The cycle's latest transforms and each cloud's stamp are asked in turn: each is
    # evaluated once while nothing is stored.
    buffer = TfBuffer()
    for second in (1, 2, 3):
        buffer.insert('world', 'a', second * S, at(float(second)), False)
    made = []
    evaluate = buffer._lookup
    monkeypatch.setattr(buffer, '_lookup', lambda *args: made.append(args[:3]) or
                        evaluate(*args))
    for _ in range(3):
        for time in (0, 1, 2):
            many = buffer.lookup_many('world', ['a'], now_ns=3 * S, timeout_ns=5 * S,
                                      time_ns=time * S)
            assert x_of(many['a']) == (time or 3)
    assert len(made) == 3, 'each time evaluated once'
    buffer.insert('world', 'a', 4 * S, at(4.0), False)
    assert x_of(buffer.lookup_many('world', ['a'], now_ns=4 * S, timeout_ns=5 * S)['a']) == 4.0
    assert len(made) == 4


def test_a_newer_message_on_a_known_edge_is_seen_by_the_next_many_lookup():
    # The usual /tf message (a newer sample of a known dynamic edge) takes insert_message's
    # fast path; the answers kept for the same time must not outlive it.
    buffer = TfBuffer()
    for second, x in ((1, 1.0), (2, 2.0)):
        buffer.insert_message(TfBatch.from_entries([('world', 'a', second * S, at(x))]), False)
        many = buffer.lookup_many('world', ['a'], now_ns=3 * S, timeout_ns=5 * S)
        assert x_of(many['a']) == x and many['a'].stamp_ns == second * S
