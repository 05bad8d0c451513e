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

"""From piece pairs to per-(link, obstacle) records, against the core called pair by pair."""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros.compute.bodies import TrackedPiece
from gjk_ros.ros.compute.pairs import build_layout, InputState, PairTracker
from gjk_ros.ros.records import PairStatus
from hypothesis import given, settings, strategies
import numpy

SHAPES = {
    0: ConvexPolytope.box([0.1, 0.2, 0.05]),      # link arm
    1: ConvexPolytope.sphere(0.08),               # link hand, piece 1
    2: ConvexPolytope.capsule(0.03, 0.2),         # link hand, piece 2
    3: ConvexPolytope.box([0.05, 0.05, 0.05]),    # obstacle a/0
    4: ConvexPolytope.cylinder(0.1, 0.3),         # obstacle b/0
}


def tracked(uid):
    return TrackedPiece(uid, piece=None)


OK = PairStatus.VALID
LINKS = [('arm', 0, [tracked(0)], OK), ('hand', 1, [tracked(1), tracked(2)], OK)]
OBSTACLES = [('a/0', 0, [tracked(3)], OK), ('b/0', 1, [tracked(4)], OK)]


def make_tracker(links=LINKS, obstacles=OBSTACLES, allowed=lambda link, obstacle: True,
                 link_padding=lambda name: 0.0, obstacle_padding=lambda name: 0.0):
    layout = build_layout(links, obstacles, allowed, (), link_padding, obstacle_padding)
    tracker = PairTracker()
    tracker.rebuild(layout, [SHAPES[uid] for uid in layout.piece_uids])
    return tracker


def random_poses(rng, spread=0.4):
    poses = numpy.tile(numpy.eye(4), (len(SHAPES), 1, 1))
    for pose in poses:
        q = rng.normal(size=4)
        x, y, z, w = q / numpy.linalg.norm(q)
        pose[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
        pose[:3, 3] = rng.uniform(-spread, spread, 3)
    return poses


def core_minimum(link_uids, obstacle_uids, poses):
    """Return the closest piece pair of a record, straight from the core."""
    results = [signed_distance(SHAPES[a], poses[a], SHAPES[b], poses[b])
               for a in link_uids for b in obstacle_uids]
    return min(results, key=lambda result: result.distance)


def pieces_poses(tracker, poses):
    """Return the poses in layout order (uids are the SHAPES keys here)."""
    return poses[tracker.layout.piece_uids]


PADDINGS = strategies.sampled_from([0.0, 0.02, 0.1])


def vectors(records, prefix):
    return numpy.stack([records[prefix + axis] for axis in ('x', 'y', 'z')], axis=1)


@settings(max_examples=30)
@given(strategies.integers(0, 2**32 - 1))
def test_records_are_the_minimum_over_pieces(seed):
    tracker = make_tracker()
    rng = numpy.random.default_rng(seed)
    for _ in range(3):   # a few tracked steps, as in the node
        poses = random_poses(rng)
        inputs = numpy.zeros(len(tracker.layout.piece_uids), dtype=int)
        records = tracker.compute(pieces_poses(tracker, poses), inputs, math.inf)
        expected_pairs = [((0,), (3,)), ((0,), (4,)), ((1, 2), (3,)), ((1, 2), (4,))]
        assert len(records) == 4
        for record, (link_uids, obstacle_uids) in zip(records, expected_pairs):
            truth = core_minimum(link_uids, obstacle_uids, poses)
            assert record['status'] in (PairStatus.VALID, PairStatus.APPROXIMATE)
            assert abs(record['distance'] - truth.distance) <= 1e-9
            point_on_link = numpy.array([record['link_x'], record['link_y'], record['link_z']])
            # The float32 display copy is the same point, rounded.
            numpy.testing.assert_allclose([record['x'], record['y'], record['z']],
                                          point_on_link, rtol=1e-6, atol=1e-7)
            point_on_obstacle = numpy.array([record['obstacle_x'], record['obstacle_y'],
                                             record['obstacle_z']])
            normal = numpy.array([record['normal_x'], record['normal_y'], record['normal_z']])
            numpy.testing.assert_allclose(point_on_obstacle - point_on_link,
                                          record['distance'] * normal, atol=1e-9)


@settings(max_examples=30)
@given(strategies.integers(0, 2**32 - 1), PADDINGS, PADDINGS, PADDINGS)
def test_each_body_is_inflated_by_its_own_padding(seed, arm_padding, hand_padding, b_padding):
    link_padding = {'arm': arm_padding, 'hand': hand_padding}.get
    obstacle_padding = {'a/0': 0.0, 'b/0': b_padding}.get
    plain = make_tracker()
    padded = make_tracker(link_padding=link_padding, obstacle_padding=obstacle_padding)
    first = numpy.array([link_padding(r.link) for r in padded.layout.records])[:, None]
    second = numpy.array([obstacle_padding(r.obstacle) for r in padded.layout.records])[:, None]
    rng = numpy.random.default_rng(seed)
    for _ in range(3):   # the same tracked steps: the same witnesses before padding
        poses = random_poses(rng)
        inputs = numpy.zeros(len(plain.layout.piece_uids), dtype=int)
        before = plain.compute(pieces_poses(plain, poses), inputs, math.inf)
        after = padded.compute(pieces_poses(padded, poses), inputs, math.inf)
        normal = vectors(before, 'normal_')
        numpy.testing.assert_allclose(after['distance'],
                                      before['distance'] - first[:, 0] - second[:, 0],
                                      atol=1e-12)
        numpy.testing.assert_allclose(vectors(after, 'link_'),
                                      vectors(before, 'link_') + first * normal, atol=1e-12)
        numpy.testing.assert_allclose(vectors(after, 'obstacle_'),
                                      vectors(before, 'obstacle_') - second * normal,
                                      atol=1e-12)


def test_ids_and_order():
    records = make_tracker().compute(random_poses(numpy.random.default_rng(1)),
                                     numpy.zeros(5, dtype=int), math.inf)
    assert list(zip(records['link_id'], records['obstacle_id'])) == [(0, 0), (0, 1), (1, 0),
                                                                     (1, 1)]


def test_bad_input_marks_only_the_pairs_that_use_it():
    tracker = make_tracker()
    poses = pieces_poses(tracker, random_poses(numpy.random.default_rng(2)))
    inputs = numpy.zeros(5, dtype=int)
    uid_index = {uid: index for index, uid in enumerate(tracker.layout.piece_uids)}
    inputs[uid_index[2]] = InputState.STALE     # one piece of the hand
    inputs[uid_index[4]] = InputState.INVALID   # obstacle b/0
    records = tracker.compute(poses, inputs, math.inf)
    assert list(records['status']) == [PairStatus.VALID, PairStatus.INVALID,
                                       PairStatus.STALE, PairStatus.INVALID]
    for record in records[1:]:
        assert math.isnan(record['distance']) and math.isnan(record['x'])
        assert math.isnan(record['link_x'])


def test_rejected_body_is_invalid_without_pairs():
    broken = [('c/0', 2, [], PairStatus.INVALID)]
    tracker = make_tracker(obstacles=OBSTACLES + broken)
    assert len(tracker.layout.records) == 6 and tracker.num_piece_pairs == 6
    records = tracker.compute(pieces_poses(tracker, random_poses(numpy.random.default_rng(3))),
                              numpy.zeros(5, dtype=int), math.inf)
    assert [r['status'] for r in records if r['obstacle_id'] == 2] == [PairStatus.INVALID] * 2


def test_beyond_max_distance():
    tracker = make_tracker()
    poses = numpy.tile(numpy.eye(4), (5, 1, 1))
    poses[3, :3, 3] = (5.0, 0.0, 0.0)   # a/0 far away
    poses[4, :3, 3] = (0.0, 0.35, 0.0)  # b/0 near
    records = tracker.compute(pieces_poses(tracker, poses), numpy.zeros(5, dtype=int), 1.0)
    assert list(records['status']) == [PairStatus.BEYOND, PairStatus.VALID,
                                       PairStatus.BEYOND, PairStatus.VALID]
    assert math.isnan(records['distance'][0])


def test_allowed_pairs_filter():
    tracker = make_tracker(allowed=lambda link, obstacle: (link, obstacle) != ('hand', 'a/0'))
    assert [(r.link, r.obstacle) for r in tracker.layout.records] == [
        ('arm', 'a/0'), ('arm', 'b/0'), ('hand', 'b/0')]


def test_rebuild_carries_surviving_caches():
    tracker = make_tracker(obstacles=OBSTACLES[:1])
    poses = random_poses(numpy.random.default_rng(4), spread=1.0)
    tracker.compute(pieces_poses(tracker, poses), numpy.zeros(4, dtype=int), math.inf)
    assert tracker.warm_pairs == 0 and tracker.computed_pairs == 3
    layout = build_layout(LINKS, OBSTACLES, lambda link, obstacle: True)
    tracker.rebuild(layout, [SHAPES[uid] for uid in layout.piece_uids])
    records = tracker.compute(pieces_poses(tracker, poses), numpy.zeros(5, dtype=int),
                              math.inf)
    # The three pairs with a/0 were tracked before; the three with b/0 are new.
    assert tracker.computed_pairs == 6 and tracker.warm_pairs == 3
    truth = core_minimum((1, 2), (3,), poses)
    assert abs(records['distance'][2] - truth.distance) <= 1e-9


def test_pending_body_is_pending_without_pairs():
    building = [('d/0', 2, [], PairStatus.PENDING)]
    tracker = make_tracker(obstacles=OBSTACLES + building)
    assert tracker.num_piece_pairs == 6
    records = tracker.compute(pieces_poses(tracker, random_poses(numpy.random.default_rng(4))),
                              numpy.zeros(5, dtype=int), math.inf)
    pending = [r for r in records if r['obstacle_id'] == 2]
    assert [r['status'] for r in pending] == [PairStatus.PENDING] * 2
    assert all(math.isnan(r['distance']) for r in pending)
    # A rejected link wins over a pending obstacle: INVALID is worse than PENDING.
    tracker = make_tracker(links=LINKS + [('bad', 2, [], PairStatus.INVALID)],
                           obstacles=OBSTACLES + building)
    records = tracker.compute(pieces_poses(tracker, random_poses(numpy.random.default_rng(5))),
                              numpy.zeros(5, dtype=int), math.inf)
    worst = [r for r in records if r['link_id'] == 2 and r['obstacle_id'] == 2]
    assert [r['status'] for r in worst] == [PairStatus.INVALID]


def test_max_distance_culls_after_padding():
    # b/0 is 0.3 m beyond max_distance unpadded; its 0.35 m padding brings it within.
    poses = numpy.tile(numpy.eye(4), (5, 1, 1))
    poses[3, :3, 3] = (5.0, 0.0, 0.0)
    poses[4, :3, 3] = (0.0, 1.5, 0.0)
    for padding, expected in ((0.0, PairStatus.BEYOND), (0.35, PairStatus.VALID)):
        tracker = make_tracker(obstacle_padding={'a/0': 0.0, 'b/0': padding}.get)
        records = tracker.compute(pieces_poses(tracker, poses), numpy.zeros(5, dtype=int), 1.0)
        assert records['status'][1] == expected


def test_an_open_surface_piece_is_crossed_at_zero_never_negative():
    # The arm overlaps obstacle a/0; measured as a piece of an open surface it is at 0.
    poses = numpy.tile(numpy.eye(4), (len(SHAPES), 1, 1))
    poses[3, :3, 3] = (0.05, 0.0, 0.0)
    poses[4, :3, 3] = (5.0, 0.0, 0.0)
    for flat, expected in ((False, 'negative'), (True, 'zero')):
        layout = build_layout(LINKS, OBSTACLES, lambda link, obstacle: True, (),
                              lambda name: 0.0, lambda name: 0.0)
        tracker = PairTracker()
        tracker.rebuild(layout, [SHAPES[uid] for uid in layout.piece_uids],
                        unsigned=[flat and uid == 3 for uid in layout.piece_uids])
        records = tracker.compute(pieces_poses(tracker, poses),
                                  numpy.zeros(len(SHAPES), dtype=numpy.int64), numpy.inf)
        arm_a = records[(records['link_id'] == 0) & (records['obstacle_id'] == 0)][0]
        assert arm_a['status'] == OK
        assert (arm_a['distance'] < 0.0) if expected == 'negative' else \
            arm_a['distance'] == 0.0
