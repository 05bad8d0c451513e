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

"""The ingestion worker process: latest-wins batches, reuse, time limits, prompt close."""

import math
import time

from gjk_ros.ros.inputs.ingestion import Ingestor, Mailbox
from gjk_ros.ros.inputs.jobs import (BodyTextJob, check_pose, marker_count, RobotDescriptionJob,
                                     SceneMessageJob)
from gjk_ros.ros.inputs.limits import IngestLimits
import pytest

rclpy_serialization = pytest.importorskip('rclpy.serialization')
visualization_msgs = pytest.importorskip('visualization_msgs.msg')
std_msgs = pytest.importorskip('std_msgs.msg')

Marker, MarkerArray = visualization_msgs.Marker, visualization_msgs.MarkerArray
URDF = ('<robot name="r"><link name="arm"><collision><geometry><box size="0.2 0.2 0.2"/>'
        '</geometry></collision></link></robot>')


def cube(ns, marker_id, x=0.0, size=0.1, action=Marker.ADD):
    marker = Marker(ns=ns, id=marker_id, type=Marker.CUBE, action=action)
    marker.header.frame_id = 'world'
    marker.pose.position.x = float(x)
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = size
    return marker


def raw(*markers):
    return rclpy_serialization.serialize_message(MarkerArray(markers=list(markers)))


def results(mailbox, count, timeout=120.0):
    """Wait until ``count`` results came (the first job also waits for the worker)."""
    found, deadline = [], time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        found += mailbox.take(100)
        time.sleep(0.01)
    assert len(found) >= count, found
    return found


@pytest.fixture
def ingestor():
    worker = Ingestor(IngestLimits(job_timeout_s=20.0))
    yield worker
    worker.close()


@pytest.fixture
def mailbox():
    return Mailbox()


def test_a_batch_keeps_the_latest_marker_and_orders_deleteall(ingestor, mailbox):
    # Queued together (holding the queue's lock, a reentrant one, so that the dispatcher
    # cannot take the first before the others arrive): one batch, latest wins per id.
    with ingestor._condition:
        ingestor.submit_markers('obstacle', raw(cube('a', 0, x=1.0), cube('b', 0)), 1,
                                mailbox)
        ingestor.submit_markers('obstacle', raw(cube('a', 0, x=2.0)), 2, mailbox)
        ingestor.submit_markers('obstacle', raw(Marker(ns='b', action=Marker.DELETEALL),
                                                cube('c', 1)), 3, mailbox)
    (result,) = results(mailbox, 1)
    batch = result.value
    assert batch.clears == ('b',) and batch.heard == {'a': 2, 'b': 3, 'c': 3}
    assert {(op.ns, op.id): op.pose[0] for op in batch.ops} == {('a', 0): 2.0, ('c', 1): 0.0}
    assert all(op.pieces is not None and op.error is None for op in batch.ops)


def test_unchanged_geometry_comes_back_without_its_piece(ingestor, mailbox):
    ingestor.submit_markers('obstacle', raw(cube('a', 0)), 1, mailbox)
    (first,) = results(mailbox, 1)
    ingestor.submit_markers('obstacle', raw(cube('a', 0, x=0.5)), 2, mailbox)
    (second,) = results(mailbox, 1)
    (op_first,), (op_second,) = first.value.ops, second.value.ops
    assert op_first.pieces is not None and op_second.pieces is None
    assert op_first.geometry_key == op_second.geometry_key and op_second.pose[0] == 0.5
    ingestor.forget('obstacle', 'a', 0)  # the node lost the piece: send it again
    ingestor.submit_markers('obstacle', raw(cube('a', 0, x=0.7)), 3, mailbox)
    (third,) = results(mailbox, 1)
    assert third.value.ops[0].pieces is not None
    ingestor.submit_markers('obstacle', raw(cube('a', 0, size=0.2)), 4, mailbox)
    (fourth,) = results(mailbox, 1)
    assert fourth.value.ops[0].pieces is not None
    assert fourth.value.ops[0].geometry_key != op_first.geometry_key


def test_bad_markers_are_rejected_by_name_not_the_batch(ingestor, mailbox):
    bad = cube('bad', 0, size=math.nan)
    huge = cube('huge', 0)
    huge.pose.orientation.x = huge.pose.orientation.y = huge.pose.orientation.w = 1e154
    ingestor.submit_markers('obstacle', raw(bad, huge, cube('good', 0)), 1, mailbox)
    (result,) = results(mailbox, 1)
    ops = {op.ns: op for op in result.value.ops}
    assert ops['bad'].error and ops['huge'].error and 'orientation' in ops['huge'].error
    assert ops['good'].error is None and ops['good'].pieces is not None


def test_urdf_and_parameters_latest_wins_each_result_to_its_mailbox(ingestor):
    robot, parameters = Mailbox(), Mailbox()
    ingestor.submit(RobotDescriptionJob(rclpy_serialization.serialize_message(
        std_msgs.String(data='<robot name="old"/>'))), robot)
    token = ingestor.submit(RobotDescriptionJob(rclpy_serialization.serialize_message(
        std_msgs.String(data=URDF))), robot)
    bodies = (('t', 'w', ({'type': 'box', 'size': [1, 1, 1]},)),)
    ingestor.submit(BodyTextJob('obstacle', bodies, 'world'), parameters)
    (urdf,) = results(robot, 1)
    assert urdf.token == token and not robot.take(1)  # the older one never ran
    assert list(urdf.value.collisions.pieces) == ['arm'] and urdf.value.adjacent == set()
    assert urdf.value.joints == ()
    (param,) = results(parameters, 1)
    assert [(entry.body, entry.index) for entry in param.value] == [('t', (0, 0))]
    assert param.value[0].piece is not None and param.value[0].error is None


def test_every_scene_message_runs_in_order_and_a_bad_one_is_rejected_by_name(ingestor,
                                                                             mailbox):
    pytest.importorskip('moveit_msgs.msg')
    first = ingestor.submit(SceneMessageJob('object', '/collision_object', b'\x00'), mailbox)
    second = ingestor.submit(SceneMessageJob('scene', '/planning_scene', b'\x00'), mailbox)
    found = results(mailbox, 2)
    assert [result.token for result in found] == [first, second]
    assert all(result.value is None for result in found)
    assert [result.error.body for result in found] == ['planning scene (object)',
                                                       'planning scene (scene)']
    assert 'not a moveit_msgs/CollisionObject' in found[0].error.reason
    assert ingestor.restarts == 0  # undecodable bytes are a rejection, not a crash


def test_work_past_the_time_limit_is_stopped_and_the_worker_restarts(mailbox):
    """Decoding 100,000 markers takes seconds: past 0.2 s the batch is rejected, not waited."""
    ingestor = Ingestor(IngestLimits(job_timeout_s=0.2, max_markers_per_message=10**6))
    try:
        ingestor.submit_markers('obstacle', raw(cube('warm', 0)), 0, mailbox)
        results(mailbox, 1)  # the worker is up: the limit now measures the work
        ingestor.submit_markers('obstacle', raw(*[cube('many', k) for k in range(100_000)]),
                                1, mailbox)
        (result,) = results(mailbox, 1)
        assert result.value is None and 'ingest_timeout' in result.error.reason
        assert result.error.body == '~/obstacles' and ingestor.restarts >= 1
        ingestor.submit_markers('obstacle', raw(cube('after', 0)), 2, mailbox)
        (after,) = results(mailbox, 1)
        assert after.value.ops[0].pieces is not None
    finally:
        started = time.monotonic()
        ingestor.close()
        assert time.monotonic() - started < 5.0


def test_marker_pose_checks():
    assert check_pose((0, 0, 0, 0, 0, 0, 1)) is None
    assert check_pose((0, 0, 0, 0, 0, 0, 2)) is None          # normalised, as RViz
    assert 'orientation' in check_pose((0, 0, 0, 1e154, 1e154, 0, 1e154))
    assert 'orientation' in check_pose((0, 0, 0, 0, 0, 0, 0))
    assert 'orientation' in check_pose((0, 0, 0, math.nan, 0, 0, 1))
    assert 'position' in check_pose((1.5e308, 0, 0, 0, 0, 0, 1))
    assert 'position' in check_pose((math.inf, 0, 0, 0, 0, 0, 1))


@pytest.mark.parametrize('count', [0, 1, 7, 300])
def test_marker_count_reads_the_cdr_sequence_length(count):
    assert marker_count(raw(*[cube('c', k) for k in range(count)])) == count


def test_marker_count_of_bytes_that_are_no_cdr_is_none():
    assert marker_count(b'') is None
    assert marker_count(b'\x00\x01\x00') is None
    assert marker_count(b'\x07\x07\x00\x00\x05\x00\x00\x00') is None
    # Big-endian CDR (a DDS may send either byte order).
    assert marker_count(b'\x00\x00\x00\x00\x00\x00\x01\x00') == 256
