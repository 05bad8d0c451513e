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
The single-pair entry points: signed_distance and DistanceQuery.

Both run one compiled kernel, restricted to one signature (a pose of any other type is converted
and retried, never compiled for), that validates poses itself and shares one scratch buffer per
process while holding the GIL.
"""

import threading

from gjk_ros.core import ConvexPolytope, DistanceQuery, signed_distance, SimplexCache, Status
from gjk_ros.core import distance as single
import numpy as np
import pytest


def bodies():
    rng = np.random.default_rng(3)
    return (ConvexPolytope.from_points(0.3 * rng.normal(size=(30, 3))),
            ConvexPolytope.from_points(0.3 * rng.normal(size=(30, 3))))


def pose(x, angle=0.0):
    matrix = np.eye(4)
    matrix[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    matrix[0, 3] = x
    return matrix


def same(first, second, tolerance=0.0):
    assert abs(first.distance - second.distance) <= tolerance
    assert first.status == second.status
    for name in ('witness_a', 'witness_b', 'normal'):
        np.testing.assert_allclose(getattr(first, name), getattr(second, name), rtol=0.0,
                                   atol=tolerance)


@pytest.mark.parametrize('x', [3.0, 0.0])
def test_cold_equals_tracked_and_input_forms(x):
    """
    Cold and tracked answers agree; list and non-contiguous poses give the same bits.

    Tracked EPA continues last step's polytope, so its witnesses may differ in the last bit.
    """
    a, b = bodies()
    cache = SimplexCache()
    for step in range(5):
        pose_b = pose(x + 0.01 * step, 0.05 * step)
        tracked = signed_distance(a, pose(0.0), b, pose_b, cache)
        cold = signed_distance(a, pose(0.0), b, pose_b)
        same(tracked, cold, 1e-14)
        same(cold, signed_distance(a, np.eye(4).tolist(), b, np.asfortranarray(pose_b)))
    assert isinstance(tracked.status, Status)
    assert tracked.status == (Status.SEPARATED if x else Status.PENETRATING)


def test_results_do_not_share_memory():
    a, b = bodies()
    first = signed_distance(a, pose(0.0), b, pose(3.0))
    kept = first.witness_a.copy()
    signed_distance(a, pose(0.0), b, pose(4.0))
    np.testing.assert_array_equal(first.witness_a, kept)


@pytest.mark.parametrize('which', ['pose_a', 'pose_b'])
@pytest.mark.parametrize('bad', [np.nan, 2.0])
def test_invalid_plain_pose_is_named(which, bad):
    """A float64 (4, 4) pose skips check_poses but is still rejected, with its name."""
    a, b = bodies()
    poses = {'pose_a': pose(0.0), 'pose_b': pose(3.0)}
    poses[which][0, 0] = bad
    with pytest.raises(ValueError, match=which):
        signed_distance(a, poses['pose_a'], b, poses['pose_b'])


def trajectory(steps=12):
    """B approaches A, overlaps it and leaves, turning a little per step."""
    return [pose(3.0 - 0.5 * step, 0.07 * step) for step in range(steps)]


@pytest.mark.parametrize('tracking', [True, False])
def test_query_object_gives_signed_distance_bits(tracking):
    """Both entry points share one kernel: the same bits, apart or overlapping."""
    a, b = bodies()
    query = DistanceQuery(a, b, tracking=tracking)
    cache = SimplexCache() if tracking else None
    statuses = set()
    for pose_b in trajectory():
        distance = query(pose(0.0), pose_b)
        expected = signed_distance(a, pose(0.0), b, pose_b, cache)
        assert distance == expected.distance
        same(query.result(), expected)
        assert query.status == expected.status
        statuses.add(expected.status)
    assert {Status.SEPARATED, Status.PENETRATING} <= statuses


def test_query_before_any_call_and_after_reset():
    a, b = bodies()
    query = DistanceQuery(a, b)
    assert query.status == Status.INACTIVE and np.isnan(query.result().distance)
    first = query(pose(0.0), pose(3.0))
    kept = query.result()
    query(pose(0.0), pose(0.0))
    assert kept.distance == first and kept.status == Status.SEPARATED  # a snapshot
    query.reset()
    assert query(pose(0.0), pose(3.0)) == signed_distance(a, pose(0.0), b, pose(3.0)).distance


def _read_only(matrix):
    matrix = matrix.copy()
    matrix.flags.writeable = False
    return matrix


@pytest.mark.parametrize('form, tolerance', [
    (np.ndarray.tolist, 0.0), (np.asfortranarray, 0.0), (_read_only, 0.0),
    (lambda m: np.ascontiguousarray(m.T).T, 0.0), (lambda m: m.astype(np.float32), 1e-6)])
def test_other_pose_types_are_converted_not_compiled(form, tolerance):
    """Lists, Fortran order, read-only, float32: the same answer, no new compilation."""
    a, b = bodies()
    query = DistanceQuery(a, b, tracking=False)
    pose_b = pose(2.0, 0.3)
    expected = query(pose(0.0), pose_b)
    assert abs(query(form(pose(0.0)), form(pose_b)) - expected) <= tolerance
    kernel = single._query_kernel()
    if hasattr(kernel, 'signatures'):  # numba (not NUMBA_DISABLE_JIT)
        assert len(kernel.signatures) == 1


@pytest.mark.parametrize('bad', [np.eye(3), np.eye(5), np.zeros((4, 4)), np.eye(4)[None],
                                 'pose', [[1.0]]])
def test_query_names_a_bad_pose_and_reads_nothing_past_it(bad):
    """Wrong shapes never reach the kernel's arithmetic (a (3, 3) float64 C array would)."""
    a, b = bodies()
    query = DistanceQuery(a, b)
    with pytest.raises(ValueError, match='pose_b'):
        query(pose(0.0), bad)
    assert query.status == Status.INACTIVE


def test_threads_share_the_scratch_safely():
    """Queries and cold calls from several threads at once each get their own answers."""
    a, b = bodies()
    poses = trajectory(40)
    expected = [signed_distance(a, pose(0.0), b, p).distance for p in poses]
    failures = []

    def work():
        query = DistanceQuery(a, b, tracking=False)
        for _ in range(25):
            for pose_b, distance in zip(poses, expected):
                if query(pose(0.0), pose_b) != distance or \
                        signed_distance(a, pose(0.0), b, pose_b).distance != distance:
                    failures.append(pose_b)
                    return

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
