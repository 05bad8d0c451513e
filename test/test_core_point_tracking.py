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

"""Tracked nearest points (candidate sets per piece) against brute force over the kept points."""

from concurrent.futures import Future, ThreadPoolExecutor

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import CloudGatherer, PointGrid
from gjk_ros.core.point_tracking import NearestTracker, PackedShapes
from hypothesis import given, settings, strategies as st
import numpy
import pytest
from test_core_points import random_pose, shapes


def prepared(seed=0):
    return [PointDistanceShape(shape) for shape in shapes(numpy.random.default_rng(seed)).values()]


def tracked_grid(points, pieces, poses, padding, margin=0.05, capacity=64, cell=0.05):
    """Take the source's path: gather's bounds, an unsorted grid, filter and anchor at once."""
    gathered, bounds = CloudGatherer().gather(*numpy.asarray(points, float).T.copy(), numpy.eye(4),
                                              (0.0, numpy.inf), (-numpy.inf, numpy.inf))
    tracker = NearestTracker(PointGrid(gathered, cell=cell, bounds=bounds, sort=False),
                             PackedShapes(pieces), margin, capacity)
    removed = tracker.filter_and_anchor(poses, padding)
    return tracker, removed


def brute(pieces, kept, poses):
    """Return the nearest signed distance of every piece over every kept point (inf: none)."""
    if not len(kept):
        return numpy.full(len(pieces), numpy.inf)
    return numpy.array([piece.signed_distances(kept, pose).min()
                        for piece, pose in zip(pieces, poses)])


def moved(rng, poses, scale):
    """Poses moved by a random rigid motion of about ``scale`` metres (and radians)."""
    out = poses.copy()
    for k in range(len(poses)):
        step = random_pose(rng)
        angle = scale * rng.normal(size=3)
        step[:3, :3] = _rotation(angle)
        step[:3, 3] = scale * rng.normal(size=3)
        out[k] = poses[k] @ step
    return out


def _rotation(vector):
    angle = numpy.linalg.norm(vector)
    if angle == 0.0:
        return numpy.eye(3)
    x, y, z = vector / angle
    cross = numpy.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return numpy.eye(3) + numpy.sin(angle) * cross + (1 - numpy.cos(angle)) * cross @ cross


def check(tracker, pieces, poses, hints=None):
    """Every answer equals brute force; its row is the answer at its index; return searched."""
    kept = tracker.grid.kept()
    hints = numpy.full(len(pieces), -1) if hints is None else hints
    rows, indices = tracker.nearest(poses, hints)
    expected = brute(pieces, kept, poses)
    for k, piece in enumerate(pieces):
        if not len(kept):
            assert indices[k] == -1 and numpy.isnan(rows[k]).all()
            continue
        assert tracker.grid.holds(indices[k])
        assert rows[k, 0] == expected[k], (k, rows[k, 0], expected[k])
        numpy.testing.assert_array_equal(rows[k, 4:7], tracker.grid.points[indices[k]])
        distance, witness, normal = piece.closest(rows[k, 4:7], poses[k])
        assert distance == rows[k, 0]
        numpy.testing.assert_array_equal(rows[k, 1:4], witness)
        numpy.testing.assert_array_equal(rows[k, 7:10], normal)
    return tracker.searched.copy()


@pytest.mark.parametrize('seed', range(4))
def test_tracked_answers_equal_brute_force_small_and_large_motions(seed):
    rng = numpy.random.default_rng(seed)
    pieces = prepared(seed)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    points = rng.uniform(-1.0, 1.0, (4000, 3))
    tracker, _ = tracked_grid(points, pieces, poses, 0.02)
    searched = []
    for step in range(40):
        scale = (0.0, 0.002, 0.01, 0.05, 0.3)[step % 5]
        searched.append(check(tracker, pieces, moved(rng, poses, scale)))
    searched = numpy.array(searched)
    # Still poses are never searched; large motions are (both kinds of answer were checked).
    assert not searched[0::5].any()
    assert searched[4::5].any()


def twin_trackers(seed, count):
    """Return (rng, pieces, poses, hints, one tracker, another) over one seeded random cloud."""
    rng = numpy.random.default_rng(seed)
    pieces = prepared(seed)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    points = rng.uniform(-1.0, 1.0, (count, 3))
    single, _ = tracked_grid(points, pieces, poses, 0.02, capacity=0)
    tracker, _ = tracked_grid(points, pieces, poses, 0.02, capacity=0)
    return rng, pieces, poses, numpy.full(len(pieces), -1), single, tracker


def test_two_threads_sharing_the_pieces_give_the_same_answers():
    rng, pieces, poses, hints, single, tracker = twin_trackers(8, 5000)
    with ThreadPoolExecutor(1) as helper:
        for scale in (0.01, 0.02, 0.1):
            current = moved(rng, poses, scale)
            alone = single.nearest(current, hints)
            shared = tracker.nearest(current, hints, helper.submit)
            numpy.testing.assert_array_equal(alone[0], shared[0])
            numpy.testing.assert_array_equal(alone[1], shared[1])
            numpy.testing.assert_array_equal(tracker.grid.work, single.grid.work)
            check(tracker, pieces, current)


class _Deferred:
    """A helper thread's submit whose tasks start only when ``run_all`` is called (a busy core)."""

    def __init__(self, now=False):
        self.now, self.tasks = now, []

    def submit(self, work, *args):
        future = Future()
        self.tasks.append((future, work, args))
        if self.now:
            self.run_all()
        return future

    def run_all(self):
        """Start each task as a ThreadPoolExecutor's thread would: not one cancelled meanwhile."""
        for future, work, args in self.tasks:
            if future.set_running_or_notify_cancel():
                future.set_result(work(*args))
        self.tasks = []


@pytest.mark.parametrize('helper_first', [False, True])
def test_the_other_half_is_done_by_whichever_thread_gets_to_it_first(helper_first):
    """A helper that has not started leaves its half to the caller; one that has, keeps it."""
    rng, _, poses, hints, single, tracker = twin_trackers(10, 3000)
    helper = _Deferred(now=helper_first)
    current = moved(rng, poses, 0.05)
    alone = single.nearest(current, hints)
    shared = tracker.nearest(current, hints, helper.submit)  # returns: it never waits in vain
    numpy.testing.assert_array_equal(alone[0], shared[0])
    numpy.testing.assert_array_equal(alone[1], shared[1])
    numpy.testing.assert_array_equal(tracker.grid.work, single.grid.work)
    before = shared[0].copy()
    helper.run_all()  # the late helper finds its half taken and touches nothing
    numpy.testing.assert_array_equal(shared[0], before)
    numpy.testing.assert_array_equal(tracker.grid.work, single.grid.work)


def test_a_piece_at_its_last_pose_is_answered_without_a_search():
    rng = numpy.random.default_rng(9)
    pieces = prepared(9)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    tracker, _ = tracked_grid(rng.uniform(-1.0, 1.0, (3000, 3)), pieces, poses, 0.02,
                              capacity=0)
    hints = numpy.full(len(pieces), -1)
    first = tracker.nearest(poses, hints)
    current = poses.copy()
    current[1:] = moved(rng, poses[1:], 0.05)
    before = tracker.grid.work.copy()
    again = tracker.nearest(current, hints)
    assert not tracker.searched[0] and tracker.searched[1:].all()
    numpy.testing.assert_array_equal(again[0][0], first[0][0])
    assert again[1][0] == first[1][0]
    assert (tracker.grid.work - before)[0] > 0
    check(tracker, pieces, current)


def test_filter_and_anchor_removes_what_remove_near_removes():
    rng = numpy.random.default_rng(5)
    pieces = prepared(5)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    points = rng.uniform(-0.6, 0.6, (6000, 3))
    tracker, removed = tracked_grid(points, pieces, poses, 0.05)
    plain = PointGrid(points)
    assert removed == plain.remove_near(list(zip(pieces, poses)), 0.05) > 0
    assert len(tracker.grid) == len(plain) == len(points) - removed
    numpy.testing.assert_array_equal(numpy.sort(tracker.grid.kept(), axis=0),
                                     numpy.sort(plain.kept(), axis=0))
    check(tracker, pieces, poses)


def test_candidates_are_sorted_and_bound_the_margin():
    """Candidates nearest first, at most ``capacity``; a full set shrinks its margin."""
    rng = numpy.random.default_rng(6)
    pieces = prepared(6)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    points = rng.uniform(-1.0, 1.0, (20000, 3))
    tracker, _ = tracked_grid(points, pieces, poses, 0.0, margin=0.1, capacity=8)
    kept = tracker.grid.kept()
    for k, piece in enumerate(pieces):
        count = tracker.counts[k]
        assert 0 < count <= 8
        distances = tracker.distances[k, :count]
        assert (numpy.diff(distances) >= 0).all()
        numpy.testing.assert_array_equal(
            distances, piece.signed_distances(tracker.grid.points, poses[k],
                                              tracker.indices[k, :count]))
        assert 0.0 <= tracker.margins[k] <= 0.1
        # Every point left out is at least nearest + 2 margin away.
        everything = numpy.sort(piece.signed_distances(kept, poses[k]))
        assert distances[0] == everything[0]
        assert everything[count:].min(initial=numpy.inf) >= \
            distances[0] + 2 * tracker.margins[k] - 1e-12
    for step in range(20):
        check(tracker, pieces, moved(rng, poses, 0.01))


@pytest.mark.parametrize('case', ['empty', 'all nan', 'all filtered', 'one point',
                                  'on the surface'])
def test_nasty_clouds(case):
    rng = numpy.random.default_rng(7)
    box = PointDistanceShape(ConvexPolytope.box([0.1, 0.2, 0.05]))
    pieces, poses = [box], numpy.eye(4)[None]
    points = {'empty': numpy.zeros((0, 3)),
              'all nan': numpy.full((50, 3), numpy.nan),
              'all filtered': rng.uniform(-0.04, 0.04, (200, 3)),
              'one point': numpy.array([[0.4, 0.0, 0.0]]),
              'on the surface': numpy.c_[rng.uniform(-0.1, 0.1, 300),
                                         rng.uniform(-0.2, 0.2, 300), numpy.full(300, 0.05)],
              }[case]
    if case == 'on the surface':  # the self-filter would remove them: anchored unfiltered
        tracker = NearestTracker(PointGrid(points), PackedShapes(pieces))
        tracker.anchor(poses)
    else:
        tracker, _ = tracked_grid(points, pieces, poses, 0.01 if case == 'all filtered' else 0.0)
    check(tracker, pieces, poses)
    for step in range(5):
        check(tracker, pieces, moved(rng, poses, 0.01 * step))
    if case == 'on the surface':
        rows, _ = tracker.nearest(poses, numpy.full(1, -1))
        assert rows[0, 0] == 0.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), count=st.integers(1, 400),
       margin=st.sampled_from([0.0, 0.01, 0.05]), capacity=st.sampled_from([0, 1, 3, 64]),
       scale=st.sampled_from([0.0, 0.003, 0.03, 0.2]), cell=st.sampled_from([0.02, 0.05, 0.3]))
def test_tracking_is_exact_for_any_margin_capacity_and_motion(seed, count, margin, capacity,
                                                              scale, cell):
    rng = numpy.random.default_rng(seed)
    pieces = prepared(seed % 3)
    poses = numpy.stack([random_pose(rng) for _ in pieces])
    points = rng.normal(size=(count, 3)) * 0.5
    tracker, _ = tracked_grid(points, pieces, poses, 0.01, margin, capacity, cell)
    hints = numpy.full(len(pieces), -1)
    for _ in range(3):
        current = moved(rng, poses, scale)
        check(tracker, pieces, current, hints)
        _, hints = tracker.nearest(current, hints)
