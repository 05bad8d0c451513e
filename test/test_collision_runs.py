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
The checks' cull shortcuts against the plain walk over every piece pair.

A cull group found apart skips its whole run of ``order`` at once; an obstacle's bounds are
kept across configurations until its pose changes; a large obstacle's pieces are culled in
clusters. Each must give the first hit of the plain walk (no broad phase) for any scene, order
and sequence of obstacle poses.
"""

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from test_planning import ARM_URDF, SRDF

from gjk_ros.core.bodypairs import BodyPairs  # noqa: I100 - after the test helpers
from gjk_ros.core.collision import configurations_hit, order_runs
from gjk_ros.core.polytope import ConvexPolytope
from gjk_ros.planning import Obstacle, RobotDistances
from gjk_ros.planning.robot import CLUSTER_PIECES

# Work counter of the checks (core.collision): cull groups found apart whole.
BODIES_CULLED = 4


def _shelf(seed, boxes):
    """Return an obstacle of ``boxes`` random boxes around the arm's reach, and its pose."""
    rng = np.random.default_rng(seed)
    shapes = [{'type': 'box', 'size': rng.uniform(0.03, 0.15, 3).tolist(),
               'xyz': rng.uniform(-0.5, 0.5, 3).tolist()} for _ in range(boxes)]
    pose = np.eye(4)
    pose[:3, 3] = rng.uniform(-0.4, 0.4, 3)
    return Obstacle('shelf', shapes, pose)


def _robots(shelf):
    return [RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=[shelf], broad_phase=broad,
                           max_distance=0.3) for broad in (True, False)]


def _hits(robot, checks, qs, margin):
    hits = np.empty(len(qs), np.int64)
    configurations_hit(np.ascontiguousarray(qs), *robot.kernel_arguments(),
                       *checks.pair_arguments(), margin, hits, checks.stats)
    return hits


def _runs(order, owner):
    """Return the run ends of ``order`` by brute force (one past each run of one owner)."""
    ends = np.empty(len(order), np.int64)
    for i in range(len(order)):
        j = i + 1
        while j < len(order) and owner[order[j]] == owner[order[i]]:
            j += 1
        ends[i] = j
    return ends


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), moves=st.integers(1, 6))
def test_runs_are_fixed_up_after_a_hit_moves_to_the_front(seed, moves):
    rng = np.random.default_rng(seed)
    owner = np.sort(rng.integers(0, 5, 30))
    order = rng.permutation(30)
    run_end = np.zeros(30, np.int64)
    order_runs(order, owner, run_end, 29)
    np.testing.assert_array_equal(run_end, _runs(order, owner))
    for _ in range(moves):
        r = int(rng.integers(0, 30))
        order[:r + 1] = np.roll(order[:r + 1], 1)
        order_runs(order, owner, run_end, r)
        np.testing.assert_array_equal(run_end, _runs(order, owner))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 31), margin=st.sampled_from([0.0, 0.02, 0.1]),
       boxes=st.integers(3, 24))
def test_property_first_hits_are_those_of_the_plain_walk(seed, margin, boxes):
    """Random scenes, random test orders (runs cut and joined), moved obstacles."""
    shelf = _shelf(seed, boxes)
    robots = _robots(shelf)
    rng = np.random.default_rng(seed)
    order = rng.permutation(robots[0].pair_set.num_pairs)
    if rng.integers(0, 2):  # body pair by body pair, as a planning group orders them
        order = np.sort(order)
    checks = [robot.checks(order) for robot in robots]
    for _ in range(3):
        qs = rng.uniform(-2.5, 2.5, (40, 3))
        hits = [_hits(robot, c, qs, margin) for robot, c in zip(robots, checks)]
        np.testing.assert_array_equal(hits[0], hits[1])
        np.testing.assert_array_equal(checks[0].order, checks[1].order)
        broad = checks[0].pair_arguments()[-1]
        np.testing.assert_array_equal(broad[9], _runs(checks[0].order, broad[0]))
        pose = np.eye(4)
        pose[:3, 3] = rng.uniform(-0.4, 0.4, 3)
        for robot in robots:
            robot.set_obstacle_poses(pose[None])


def test_an_obstacle_moved_onto_the_arm_is_not_culled_by_its_old_bounds():
    shelf = Obstacle('block', {'type': 'box', 'size': [0.2, 0.2, 0.2]}, np.eye(4))
    robot = RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=[shelf], max_distance=0.3)
    far = np.eye(4)
    far[:3, 3] = (3.0, 3.0, 3.0)
    robot.set_obstacle_poses(far[None])
    checks = robot.checks()
    q = np.zeros((1, 3))
    assert _hits(robot, checks, q, 0.0)[0] < 0
    assert _hits(robot, checks, q, 0.0)[0] < 0  # the block's bounds kept from the first
    near = np.eye(4)
    near[:3, 3] = (0.0, 0.0, 0.2)  # on the first link
    robot.set_obstacle_poses(near[None])
    assert _hits(robot, checks, q, 0.0)[0] >= 0


def test_only_obstacle_sets_keep_their_bounds():
    robot = _robots(_shelf(3, 10))[0]
    broad = robot.checks().pair_arguments()[-1]
    set_start, members, static = broad[2], broad[3], broad[10]
    links = sum(1 for owner in robot.piece_owners if owner in robot.links)
    for s in range(len(static)):
        assert static[s] == bool((members[set_start[s]:set_start[s + 1]] >= links).all())
    assert static.any() and not static.all()


def test_a_large_obstacle_is_culled_in_clusters_of_near_pieces():
    with_broad, plain = _robots(_shelf(7, 30))
    group_start, group_sets, set_start, members = with_broad.pair_set.groups
    sizes = np.diff(set_start)[group_sets[:, 1]]
    assert sizes.max() <= CLUSTER_PIECES
    assert len(group_start) - 1 > with_broad.engine.num_body_pairs
    # The answer groups are the body pairs still; their distances are the plain walk's.
    assert with_broad.engine.num_body_pairs == plain.engine.num_body_pairs
    qs = np.random.default_rng(7).uniform(-2.5, 2.5, (30, 3))
    answers = [robot.trajectory(qs) for robot in (with_broad, plain)]
    np.testing.assert_array_equal(answers[0].distance, answers[1].distance)
    np.testing.assert_array_equal(answers[0].status, answers[1].status)
    groups = [robot.group(robot.kinematics.variable_names) for robot in (with_broad, plain)]
    verdicts = [[group.in_collision(q) for q in qs] for group in groups]
    assert verdicts[0] == verdicts[1] and 0 < sum(verdicts[0]) < len(qs)
    assert groups[0].stats[BODIES_CULLED] > 0 and groups[1].stats[BODIES_CULLED] == 0


def _boxes(count):
    return [ConvexPolytope.box([0.05, 0.05, 0.05]) for _ in range(count)]


def test_broad_groups_cut_the_cull_groups_not_the_answers():
    groups = [[(0, 2), (0, 3), (0, 4)], [(1, 2), (1, 3), (1, 4)]]
    engine = BodyPairs(_boxes(5), groups, [0.0, 0.0], [0.0, 0.0], broad_groups=[[1, 2], [3]])
    np.testing.assert_array_equal(engine.pair_set.groups[0], [0, 1, 3, 6])
    assert engine.num_body_pairs == 2
    for runs in ([[1, 1], [3]], [[3]], [[-1, 4], [3]]):
        with pytest.raises(ValueError, match='broad_groups'):
            BodyPairs(_boxes(5), groups, [0.0, 0.0], [0.0, 0.0], broad_groups=runs)
