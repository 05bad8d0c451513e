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

"""The Ingestor with real worker processes (gjk_ros.ros.ingestion); no ROS needed."""

from dataclasses import dataclass
import os
import pickle
import time
from types import SimpleNamespace

from gjk_ros.core import ConvexPolytope
from gjk_ros.models import CollisionPiece, ModelError
from gjk_ros.ros.ingestion import (descriptions_job, IngestLimits, Ingestor, marker_job,
                                   urdf_job)
import numpy as np
import pytest

CUBE, MESH_RESOURCE, TRIANGLE_LIST = 1, 10, 11
FAST = IngestLimits(job_timeout_s=1.0, worker_memory_mb=256, max_points=1000,
                    max_mesh_bytes=4096, max_parameter_bytes=2048, max_description_bytes=4096)
SECRET = 'SECRET-TOKEN-7f3a'


@dataclass(frozen=True)
class SleepJob:
    """Occupies the worker (a stand-in for a slow parser)."""

    seconds: float
    body: str = 'sleeper'

    def run(self, resolver):
        """Sleep, then return the time slept."""
        time.sleep(self.seconds)
        return self.seconds


@dataclass(frozen=True)
class HogJob:
    """Allocates far beyond the worker's memory limit."""

    body: str = 'hog'

    def run(self, resolver):
        """Allocate 8 GB."""
        return len(bytearray(8 << 30))


@dataclass(frozen=True)
class DieJob:
    """Kills its worker, as a crash in a native parser would."""

    body: str = 'crasher'

    def run(self, resolver):
        """Exit at once."""
        os._exit(3)


def make_marker(kind=CUBE, points=(), ns='obs', marker_id=1, position=(0.0, 0.0, 0.0),
                mesh_resource='', mesh_data=b'', filename=''):
    """Return a duck-typed visualization_msgs/Marker."""
    x, y, z = position
    return SimpleNamespace(
        ns=ns, id=marker_id, type=kind, action=0,
        header=SimpleNamespace(frame_id='world', stamp=SimpleNamespace(sec=2, nanosec=5)),
        pose=SimpleNamespace(position=SimpleNamespace(x=x, y=y, z=z),
                             orientation=SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0)),
        scale=SimpleNamespace(x=1.0, y=1.0, z=1.0),
        points=[SimpleNamespace(x=float(a), y=float(b), z=float(c)) for a, b, c in points],
        mesh_resource=mesh_resource,
        mesh_file=SimpleNamespace(filename=filename, data=mesh_data),
        frame_locked=False, lifetime=SimpleNamespace(sec=0, nanosec=0))


def wait_for(ingestor, count=1, timeout=15.0):
    """Poll until ``count`` results arrived; return them."""
    results, deadline = [], time.monotonic() + timeout
    while len(results) < count and time.monotonic() < deadline:
        results += ingestor.poll()
        time.sleep(0.01)
    assert len(results) >= count, f'only {len(results)} of {count} results'
    return results


@pytest.fixture
def ingestor():
    with Ingestor(FAST) as started:
        yield started


def test_a_marker_becomes_its_piece(ingestor):
    job, _ = marker_job(make_marker(), 'obstacle', FAST)
    token = ingestor.submit(('obstacle', 'obs', 1), job)
    [result] = wait_for(ingestor)
    assert (result.key, result.token, result.error) == (('obstacle', 'obs', 1), token, None)
    assert isinstance(result.value, CollisionPiece) and result.value.body == 'obs/1'
    assert result.value.shape.num_vertices == 8
    assert ingestor.pending() == set()


def test_pieces_pickle_round_trip_with_a_fresh_key():
    shape = ConvexPolytope.from_points(np.random.default_rng(1).normal(size=(40, 3)))
    piece = CollisionPiece('b', 'f', np.eye(4), shape, 'points')
    copy = pickle.loads(pickle.dumps(piece))
    np.testing.assert_array_equal(copy.shape.vertices, shape.vertices)
    np.testing.assert_array_equal(copy.shape.neighbor_indices, shape.neighbor_indices)
    assert copy.shape._key != shape._key
    assert len(pickle.dumps(piece)) < 4000


def test_geometry_key_ignores_the_pose_only():
    points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    key = marker_job(make_marker(TRIANGLE_LIST, points), 'obstacle', FAST)[1]
    moved = marker_job(make_marker(TRIANGLE_LIST, points, position=(5, 0, 0)), 'obstacle',
                       FAST)[1]
    other = marker_job(make_marker(TRIANGLE_LIST, points[::-1]), 'obstacle', FAST)[1]
    assert key == moved != other


def test_latest_job_per_key_wins(ingestor):
    ingestor.submit('busy', SleepJob(0.4))
    time.sleep(0.1)   # the sleeper is running; the next two wait
    ingestor.submit('busy', SleepJob(0.0))   # supersedes the running one
    ingestor.submit('m', marker_job(make_marker(marker_id=1), 'obstacle', FAST)[0])
    newest = ingestor.submit('m', marker_job(make_marker(marker_id=2), 'obstacle', FAST)[0])
    assert ingestor.pending() == {'busy', 'm'}
    results = {result.key: result for result in wait_for(ingestor, 2)}
    assert results['busy'].value == 0.0
    assert results['m'].token == newest and results['m'].value.body == 'obs/2'


def test_a_job_past_the_timeout_is_killed_and_the_next_one_works(ingestor):
    started = time.monotonic()
    ingestor.submit('slow', SleepJob(60.0))
    [result] = wait_for(ingestor)
    assert time.monotonic() - started < 5.0
    assert result.error.body == 'sleeper' and 'took longer than 1 s' in result.error.reason
    ingestor.submit('m', marker_job(make_marker(), 'obstacle', FAST)[0])
    assert wait_for(ingestor)[0].error is None


@pytest.mark.parametrize('job, words', [(HogJob(), 'memory'), (DieJob(), 'died')])
def test_memory_hogs_and_crashes_are_rejected_and_the_worker_restarts(ingestor, job, words):
    ingestor.submit('bad', job)
    [result] = wait_for(ingestor)
    assert result.error.body == job.body and words in result.error.reason
    ingestor.submit('m', marker_job(make_marker(), 'obstacle', FAST)[0])
    assert wait_for(ingestor)[0].error is None


def test_close_is_prompt_and_quiet(capfd):
    ingestor = Ingestor(FAST)
    ingestor.submit('slow', SleepJob(60.0))
    time.sleep(0.3)
    started = time.monotonic()
    ingestor.close()
    assert time.monotonic() - started < 2.0
    assert 'Traceback' not in capfd.readouterr().err
    with pytest.raises(RuntimeError):
        ingestor.submit('late', SleepJob(0.0))


def test_the_queue_is_bounded():
    with Ingestor(IngestLimits(max_pending=2, job_timeout_s=5.0)) as ingestor:
        ingestor.submit('busy', SleepJob(0.5))
        time.sleep(0.2)
        for key in 'abc':
            ingestor.submit(key, SleepJob(0.0, body=key))
        rejected = ingestor.poll()
        assert [result.key for result in rejected] == ['c']
        assert 'already waiting' in rejected[0].error.reason
        assert {result.key for result in wait_for(ingestor, 3)} == {'busy', 'a', 'b'}


def test_validate_names_the_bad_field():
    with pytest.raises(ValueError, match='job_timeout_s'):
        IngestLimits(job_timeout_s=float('nan')).validate()
    with pytest.raises(ValueError, match='max_points'):
        IngestLimits(max_points=0).validate()


# -- hostile inputs: rejected with a reason naming the body, never echoing the file -----------

def test_too_many_points_are_refused_before_conversion():
    marker = make_marker(TRIANGLE_LIST, np.zeros((1002, 3)), ns='cloud', marker_id=4)
    with pytest.raises(ModelError) as caught:
        marker_job(marker, 'obstacle', FAST)
    assert caught.value.body == 'cloud/4' and '1002 points' in caught.value.reason


def test_oversized_texts_and_mesh_data_are_refused_at_once():
    with pytest.raises(ModelError, match='more than the limit'):
        marker_job(make_marker(MESH_RESOURCE, mesh_data=b'x' * 5000, filename='a.stl'),
                   'obstacle', FAST)
    with pytest.raises(ModelError, match='robot_description'):
        urdf_job('<robot>' + ' ' * 5000 + '</robot>', FAST)
    with pytest.raises(ModelError, match='obstacle: 3000 bytes'):
        descriptions_job('obstacle', ' ' * 3000, 'world', FAST)


ALIAS_BOMB = 'a: &a [x, x, x, x, x, x, x, x, x]\n' + ''.join(
    f'{chr(98 + i)}: &{chr(98 + i)} [' + ', '.join([f'*{chr(97 + i)}'] * 9) + ']\n'
    for i in range(8))


@pytest.mark.parametrize('text, words', [
    ('[' * 1000 + ']' * 1000, 'nested deeper than 32'),
    (ALIAS_BOMB, 'aliases'),
    ('[{name: t, frame_id: w, type: box, size: [1, 1.0e+9, 1]}]', 'within'),
])
def test_hostile_descriptions_are_rejected_by_the_worker(ingestor, text, words):
    ingestor.submit('param', descriptions_job('obstacle', text, 'world', FAST))
    [result] = wait_for(ingestor)
    if result.error is None:   # a well-formed list: the piece itself is rejected
        [(name, index, result)] = result.value
        assert name == 't'
    else:
        assert result.error.body == 'obstacle'
    assert words in str(result)


PLY_HEADER = ('ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n'
              'property float z\nelement face 1\nproperty list uchar int vertex_indices\n'
              'end_header\n')


@pytest.mark.parametrize('name, content', [
    ('thing.ply', PLY_HEADER + f'{SECRET} 0 0\n1 0 0\n0 1 0\n3 0 1 2\n'),
    ('thing.off', f'OFF\n3 1 0\n{SECRET} 0 0\n1 0 0\n0 1 0\n3 0 1 2\n'),
])
def test_a_file_that_is_not_a_mesh_is_rejected_without_its_content(ingestor, tmp_path, name,
                                                                   content):
    path = tmp_path / name
    path.write_text(content)
    marker = make_marker(MESH_RESOURCE, ns='part', mesh_resource=str(path))
    ingestor.submit('mesh', marker_job(marker, 'obstacle', FAST)[0])
    [result] = wait_for(ingestor)
    assert result.error.body == 'part/1'
    assert SECRET not in str(result.error)


def test_a_mesh_file_over_the_size_limit_is_not_read(ingestor, tmp_path):
    path = tmp_path / 'big.stl'
    path.write_bytes(b'\0' * 10_000)
    marker = make_marker(MESH_RESOURCE, ns='part', mesh_resource=str(path))
    ingestor.submit('mesh', marker_job(marker, 'obstacle', FAST)[0])
    [result] = wait_for(ingestor)
    assert result.error.body == 'part/1' and '10000 bytes' in result.error.reason


def test_the_hull_warning_threshold_reaches_the_worker():
    # An L of two 1 m triangles (flat): the hull reaches 0.5 m beyond it.
    ell = [(0, 0, 0), (1, 0, 0), (0, 0.1, 0), (0, 0, 0), (0.1, 0, 0), (0, 1, 0)]
    job = marker_job(make_marker(TRIANGLE_LIST, ell), 'obstacle', FAST)[0]
    for threshold, warned in ((0.005, True), (1.0, False)):
        limits = IngestLimits(job_timeout_s=5.0, hull_warning_threshold=threshold)
        with Ingestor(limits) as ingestor:
            ingestor.submit('ell', job)
            [result] = wait_for(ingestor)
        assert bool(result.value.warnings) == warned
