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

from gjk_ros.ros.ingestion import Ingestor
from gjk_ros.ros.jobs import check_pose, marker_count
from gjk_ros.ros.limits import IngestLimits
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


def results(ingestor, count, timeout=120.0):
    """Wait until ``count`` results came (the first job also waits for the worker)."""
    found, deadline = [], time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        found += ingestor.poll(100)
        time.sleep(0.01)
    assert len(found) >= count, found
    return found


@pytest.fixture
def ingestor():
    worker = Ingestor(IngestLimits(job_timeout_s=20.0))
    yield worker
    worker.close()


def test_a_batch_keeps_the_latest_marker_and_orders_deleteall(ingestor):
    # Queued together (holding the queue's lock, a reentrant one, so that the dispatcher
    # cannot take the first before the others arrive): one batch, latest wins per id.
    with ingestor._condition:
        ingestor.submit_markers('obstacle', raw(cube('a', 0, x=1.0), cube('b', 0)), 1.0)
        ingestor.submit_markers('obstacle', raw(cube('a', 0, x=2.0)), 2.0)
        ingestor.submit_markers('obstacle', raw(Marker(ns='b', action=Marker.DELETEALL),
                                                cube('c', 1)), 3.0)
    (result,) = results(ingestor, 1)
    clears, ops, heard = result.value
    assert clears == ['b'] and heard == {'a': 2.0, 'b': 3.0, 'c': 3.0}
    assert {(op.ns, op.id): op.pose[0] for op in ops} == {('a', 0): 2.0, ('c', 1): 0.0}
    assert all(op.piece is not None and op.error is None for op in ops)


def test_unchanged_geometry_comes_back_without_its_piece(ingestor):
    ingestor.submit_markers('obstacle', raw(cube('a', 0)), 1.0)
    (first,) = results(ingestor, 1)
    ingestor.submit_markers('obstacle', raw(cube('a', 0, x=0.5)), 2.0)
    (second,) = results(ingestor, 1)
    (op_first,), (op_second,) = first.value[1], second.value[1]
    assert op_first.piece is not None and op_second.piece is None
    assert op_first.geometry_key == op_second.geometry_key and op_second.pose[0] == 0.5
    ingestor.forget('obstacle', 'a', 0)  # the node lost the piece: send it again
    ingestor.submit_markers('obstacle', raw(cube('a', 0, x=0.7)), 3.0)
    (third,) = results(ingestor, 1)
    assert third.value[1][0].piece is not None
    ingestor.submit_markers('obstacle', raw(cube('a', 0, size=0.2)), 4.0)
    (fourth,) = results(ingestor, 1)
    assert fourth.value[1][0].piece is not None
    assert fourth.value[1][0].geometry_key != op_first.geometry_key


def test_bad_markers_are_rejected_by_name_not_the_batch(ingestor):
    bad = cube('bad', 0, size=math.nan)
    huge = cube('huge', 0)
    huge.pose.orientation.x = huge.pose.orientation.y = huge.pose.orientation.w = 1e154
    ingestor.submit_markers('obstacle', raw(bad, huge, cube('good', 0)), 1.0)
    (result,) = results(ingestor, 1)
    ops = {op.ns: op for op in result.value[1]}
    assert ops['bad'].error and ops['huge'].error and 'orientation' in ops['huge'].error
    assert ops['good'].error is None and ops['good'].piece is not None


def test_urdf_and_parameters_latest_wins(ingestor):
    ingestor.submit(('urdf',), rclpy_serialization.serialize_message(
        std_msgs.String(data='<robot name="old"/>')))
    token = ingestor.submit(('urdf',), rclpy_serialization.serialize_message(
        std_msgs.String(data=URDF)))
    ingestor.submit(('param', 'obstacle'), ('[{name: t, frame_id: w, type: box, '
                                            'size: [1, 1, 1]}]', 'world'))
    found = results(ingestor, 2)
    urdf = [result for result in found if result.key == ('urdf',)]
    assert [result.token for result in urdf] == [token]  # the older one never ran
    model, adjacent, joints = urdf[0].value
    assert list(model.pieces) == ['arm'] and adjacent == set() and joints == ()
    (param,) = [result for result in found if result.key == ('param', 'obstacle')]
    assert [(name, index) for name, index, _ in param.value] == [('t', 0)]


def test_work_past_the_time_limit_is_stopped_and_the_worker_restarts():
    """Decoding 100,000 markers takes seconds: past 0.2 s the batch is rejected, not waited."""
    ingestor = Ingestor(IngestLimits(job_timeout_s=0.2, max_markers_per_message=10**6))
    try:
        ingestor.submit_markers('obstacle', raw(cube('warm', 0)), 0.0)
        results(ingestor, 1)  # the worker is up: the limit now measures the work
        ingestor.submit_markers('obstacle', raw(*[cube('many', k) for k in range(100_000)]),
                                1.0)
        (result,) = results(ingestor, 1)
        assert result.value is None and 'ingest_timeout' in result.error.reason
        assert result.error.body == '~/obstacles' and ingestor.restarts >= 1
        ingestor.submit_markers('obstacle', raw(cube('after', 0)), 2.0)
        (after,) = results(ingestor, 1)
        assert after.value[1][0].piece is not None
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
