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
The broad phase (body pairs culled by their bodies' spheres) never changes an answer.

Every comparison runs the same poses through two engines, one with the broad phase and one
pair by pair, and asks for identical arrays: values (NaN where NaN), statuses, chosen piece
pairs, counters, piece-level rows and tracked caches. The work counters are checked where the
scene decides them.
"""

import math

from gjk_ros.core import ConvexPolytope, PairSet, Status
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.pairset import GROUPS_CULLED, PAIRS_SKIPPED, PAIRS_TESTED
from hypothesis import given, settings, strategies
import numpy
import pytest
from reference import make_pose, random_rotation


def random_piece(rng, scale):
    """Return a random convex piece: a hull of a few points, a box, a sphere or a capsule."""
    kind = rng.integers(4)
    if kind == 0:
        return ConvexPolytope.from_points(rng.normal(0.0, scale, (12, 3)))
    if kind == 1:
        return ConvexPolytope.box(rng.uniform(0.2, 1.0, 3) * scale)
    if kind == 2:
        return ConvexPolytope.sphere(rng.uniform(0.2, 1.0) * scale)
    return ConvexPolytope.capsule(rng.uniform(0.1, 0.5) * scale, rng.uniform(0.2, 1.0) * scale)


class Scene:
    """Bodies of a few pieces each (each body's pieces rigidly placed), and all body pairs."""

    def __init__(self, seed, bodies=6, scale=0.1, spread=1.0):
        rng = numpy.random.default_rng(seed)
        self.rng, self.scale, self.spread = rng, scale, spread
        self.pieces, self.owner, self.offsets = [], [], []
        for body in range(bodies):
            for _ in range(rng.integers(1, 5)):
                self.pieces.append(random_piece(rng, scale))
                self.owner.append(body)
                self.offsets.append(make_pose(random_rotation(rng),
                                              rng.normal(0.0, 2.0 * scale, 3)))
        self.owner = numpy.array(self.owner)
        members = [numpy.flatnonzero(self.owner == body) for body in range(bodies)]
        self.groups = [[(a, b) for a in members[i] for b in members[j]]
                       for i in range(bodies) for j in range(i + 1, bodies)]
        pads = rng.choice([0.0, 0.0, 0.01, 0.05], len(self.groups))
        self.pads = (pads, pads[::-1].copy())

    def engine(self, broad_phase):
        return BodyPairs(self.pieces, self.groups, *self.pads, broad_phase=broad_phase)

    def poses(self, count):
        """Return (count, pieces, 4, 4): bodies moving a little from step to step."""
        bodies = self.owner.max() + 1
        start = [make_pose(random_rotation(self.rng), self.rng.uniform(-1, 1, 3) * self.spread)
                 for _ in range(bodies)]
        steps = []
        for n in range(count):
            body = [pose.copy() for pose in start]
            for pose in body:
                pose[:3, 3] += 0.02 * n * self.spread
            steps.append([body[self.owner[p]] @ self.offsets[p] for p in range(len(self.pieces))])
        return numpy.array(steps)


def assert_same(with_broad, without):
    """Both engines gave the same answers at body and piece level (NaN equal to NaN)."""
    numpy.testing.assert_array_equal(with_broad.rows, without.rows)
    numpy.testing.assert_array_equal(with_broad.status, without.status)
    numpy.testing.assert_array_equal(with_broad.best, without.best)
    numpy.testing.assert_array_equal(with_broad.totals, without.totals)
    for mine, theirs in zip(with_broad.pair_set._out, without.pair_set._out):
        numpy.testing.assert_array_equal(mine, theirs)
    for mine, theirs in zip(with_broad.pair_set._cache, without.pair_set._cache):
        numpy.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('max_distance', [-0.02, 0.0, 0.05, 0.3, math.inf])
def test_seeded_scenes_give_identical_answers_over_tracked_updates(seed, max_distance):
    scene = Scene(seed)
    with_broad, without = scene.engine(True), scene.engine(False)
    rng = numpy.random.default_rng(seed)
    for poses in scene.poses(6):
        active = rng.random(with_broad.pair_set.num_pairs) > 0.1
        with_broad.update(poses, active, max_distance)
        without.update(poses, active, max_distance)
        assert_same(with_broad, without)
    stats = with_broad.pair_set.broad_stats
    tested = without.pair_set.broad_stats[PAIRS_TESTED]  # every active pair, each update
    if max_distance < math.inf:
        # An active pair is either skipped with its group or tested on its own.
        assert stats[PAIRS_TESTED] < tested <= stats[PAIRS_TESTED] + stats[PAIRS_SKIPPED]
    else:
        assert not stats.any()  # nothing is culled without a max_distance
    assert without.pair_set.broad_stats[GROUPS_CULLED] == 0


def test_sequences_give_identical_answers():
    scene = Scene(11)
    with_broad, without = scene.engine(True), scene.engine(False)
    poses = scene.poses(70)  # more than one chunk
    answers = [engine.update_sequence(poses, engine.answer_arrays(len(poses)),
                                      max_distance=0.2) for engine in (with_broad, without)]
    for mine, theirs in zip(*answers):
        numpy.testing.assert_array_equal(mine, theirs)
    assert with_broad.pair_set.broad_stats[GROUPS_CULLED] > 0


@settings(max_examples=40, deadline=None)
@given(seed=strategies.integers(0, 2 ** 32 - 1),
       scale=strategies.sampled_from([1e-4, 1e-2, 1.0, 1e3]),
       spread=strategies.sampled_from([1e-3, 0.3, 3.0, 3e3]),
       max_distance=strategies.sampled_from([-0.05, 0.0, 1e-3, 0.1, 1.0, 1e3]))
def test_property_identical_answers_at_any_scale(seed, scale, spread, max_distance):
    scene = Scene(seed, bodies=4, scale=scale, spread=spread)
    with_broad, without = scene.engine(True), scene.engine(False)
    for poses in scene.poses(3):
        with_broad.update(poses, max_distance=max_distance)
        without.update(poses, max_distance=max_distance)
        assert_same(with_broad, without)


def two_sphere_bodies(gap, radius=1.0, pieces=3):
    """Two bodies of ``pieces`` equal spheres stacked along z, ``gap`` apart along x."""
    sphere = ConvexPolytope.sphere(radius)
    bodies = [sphere] * (2 * pieces)
    poses = numpy.array([make_pose(numpy.eye(3), (0.0 if p < pieces else 2 * radius + gap,
                                                  0.0, 2 * radius * (p % pieces)))
                         for p in range(2 * pieces)])
    group = [(a, b) for a in range(pieces) for b in range(pieces, 2 * pieces)]
    return bodies, group, poses


@pytest.mark.parametrize('pieces', [1, 3])
def test_touching_exactly_at_max_distance_is_measured_by_both(pieces):
    bodies, group, poses = two_sphere_bodies(gap=1.0, pieces=pieces)
    for broad_phase in (True, False):
        engine = BodyPairs(bodies, [group], [0.0], [0.0], broad_phase=broad_phase)
        rows, status = engine.update(poses, max_distance=1.0)
        assert status[0] == Status.SEPARATED and rows[0, 0] == pytest.approx(1.0)
        below = math.nextafter(1.0, 0.0)
        _, status = engine.update(poses, max_distance=below)
        # Some sphere pair is exactly 1.0 apart (> below): the whole group is beyond.
        assert status[0] == Status.BEYOND
    assert engine.pair_set.broad_stats[GROUPS_CULLED] == 0


def test_work_counts_of_a_far_and_a_near_body_pair():
    bodies, group, poses = two_sphere_bodies(gap=6.0, pieces=3)  # set spheres 2 apart
    near = [(0, 1)]  # the first body with itself: pieces 0 and 1 touch
    engine = BodyPairs(bodies, [group, near], [0.0, 0.0], [0.0, 0.0])
    engine.update(poses, max_distance=1.0)
    stats = engine.pair_set.broad_stats
    assert stats[GROUPS_CULLED] == 1 and stats[PAIRS_SKIPPED] == 9
    assert stats[PAIRS_TESTED] == 1  # only the near group's one pair was looked at
    assert engine.status[0].tolist() == [Status.BEYOND, Status.TOUCHING]
    assert (engine.pair_set.status[:9] == Status.BEYOND).all()
    # Inactive pairs of a culled group stay INACTIVE; with none active the body pair is too.
    active = numpy.ones(10, bool)
    active[:9] = False
    engine.update(poses, active, max_distance=1.0)
    assert engine.status[0, 0] == Status.INACTIVE
    assert (engine.pair_set.status[:9] == Status.INACTIVE).all()


def test_a_skipped_pair_keeps_its_cache():
    bodies, group, poses = two_sphere_bodies(gap=0.2)
    far = poses.copy()
    far[3:, 0, 3] += 10.0
    with_broad = BodyPairs(bodies, [group], [0.0], [0.0])
    without = BodyPairs(bodies, [group], [0.0], [0.0], broad_phase=False)
    kept = None
    for step in (poses, far, poses):
        with_broad.update(step, max_distance=1.0)
        without.update(step, max_distance=1.0)
        assert_same(with_broad, without)
        if kept is None:
            kept = [array.copy() for array in with_broad.pair_set._cache]
        else:  # the far update left every cache as the near one made it
            for mine, before in zip(with_broad.pair_set._cache, kept):
                numpy.testing.assert_array_equal(mine, before)
            kept = ()
    assert with_broad.pair_set.broad_stats[GROUPS_CULLED] == 1


def test_non_finite_poses_are_refused_with_or_without():
    bodies, group, poses = two_sphere_bodies(gap=0.2)
    poses[4, 0, 3] = math.nan
    for broad_phase in (True, False):
        engine = BodyPairs(bodies, [group], [0.0], [0.0], broad_phase=broad_phase)
        with pytest.raises(ValueError, match='poses'):
            engine.update(poses, max_distance=1.0)


def test_groups_must_cover_the_pairs_in_order():
    bodies = [ConvexPolytope.sphere(1.0)] * 3
    pairs = [(0, 1), (0, 2), (1, 2)]
    for groups in ([0, 2], [1, 3], [0, 2, 1, 3], []):
        with pytest.raises(ValueError, match='groups'):
            PairSet(bodies, pairs, groups=groups)
    # Sets: {0}, {1, 2}, the empty set of the empty group, {1}, {2}.
    assert PairSet(bodies, pairs, groups=[0, 2, 2, 3]).groups[1].tolist() == [[0, 1], [2, 2],
                                                                              [3, 4]]


def test_a_half_space_piece_is_never_culled_with_its_body():
    floor = ConvexPolytope.half_space()  # infinite bounding radius: its body's sphere too
    bodies = [ConvexPolytope.sphere(0.1), floor, ConvexPolytope.box([0.1, 0.1, 0.1])]
    poses = numpy.array([make_pose(numpy.eye(3), (0.0, 0.0, 5.0)), numpy.eye(4),
                         make_pose(numpy.eye(3), (50.0, 0.0, 0.0))])
    for broad_phase in (True, False):
        engine = BodyPairs(bodies, [[(0, 1), (0, 2)]], [0.0], [0.0], broad_phase=broad_phase)
        rows, status = engine.update(poses, max_distance=1.0)
        assert status[0] == Status.SEPARATED and rows[0, 0] == pytest.approx(4.9)
        assert engine.best[0, 0] == 0
    assert engine.pair_set.status.tolist() == [Status.SEPARATED, Status.BEYOND]


def test_long_bodies_side_by_side_are_culled_by_their_boxes():
    # Two rows of ten spheres along x, 0.5 apart in y: each row's sphere is 10 m wide and the
    # two overlap, but their boxes are 0.5 - 2 * 0.1 = 0.3 apart.
    sphere = ConvexPolytope.sphere(0.1)
    poses = numpy.array([make_pose(numpy.eye(3), (0.2 * (p % 10), 0.5 * (p // 10), 0.0))
                         for p in range(20)])
    group = [(a, b) for a in range(10) for b in range(10, 20)]
    engines = [BodyPairs([sphere] * 20, [group], [0.0], [0.0], broad_phase=broad)
               for broad in (True, False)]
    for max_distance in (0.29, 0.31):
        for engine in engines:
            engine.update(poses, max_distance=max_distance)
        assert_same(*engines)
    stats = engines[0].pair_set.broad_stats
    assert stats[GROUPS_CULLED] == 1 and stats[PAIRS_SKIPPED] == 100  # at 0.29 only
    assert engines[0].status[0, 0] == Status.SEPARATED  # at 0.31: 0.3 apart
