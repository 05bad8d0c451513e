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
The planner's broad phase: body pairs culled at once, with the verdicts of pair-by-pair checks.

Two robots over the same model, one with the broad phase and one without, must agree on every
verdict, first colliding pair, certified segment and distance; the work counters show what was
skipped.
"""

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from test_planning import _configurations, ARM_URDF, OBSTACLES, SRDF

from gjk_ros.core.collision import STATS  # noqa: I100 - after the test helpers
from gjk_ros.planning import Obstacle, RobotDistances

# Work counters (core.collision): tests, piece culls, iterations, supports, body culls.
TESTED, CULLED, BODIES_CULLED = 0, 1, 4


def _many_piece_obstacles():
    """Return the test obstacles and a shelf of 12 boxes, far from most configurations."""
    shelf = [{'type': 'box', 'size': [0.1, 0.1, 0.1], 'xyz': [0.0, 0.15 * i, 0.12 * j]}
             for i in range(4) for j in range(3)]
    pose = np.eye(4)
    pose[:3, 3] = (0.9, -0.3, 0.1)
    return list(OBSTACLES) + [Obstacle('shelf', shelf, pose)]


@pytest.fixture(scope='module')
def robots():
    made = [RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=_many_piece_obstacles(),
                           broad_phase=broad_phase, max_distance=0.3)
            for broad_phase in (True, False)]
    assert made[0].pair_set.num_pairs == made[1].pair_set.num_pairs > 30
    return made


@pytest.mark.parametrize('margin', [0.0, 0.02, 0.06])
def test_verdicts_and_first_pairs_are_those_without_the_broad_phase(robots, margin):
    with_broad, without = robots
    qs = _configurations(120, seed=5)
    hits = [robot.in_collision_batch(qs, margin) for robot in robots]
    assert np.array_equal(*hits) and 5 < hits[0].sum() < len(qs) - 5
    assert [with_broad.in_collision(q, margin) for q in qs] == hits[1].tolist()
    assert [with_broad.colliding_pair(q, margin) for q in qs[:30]] == \
        [without.colliding_pair(q, margin) for q in qs[:30]]


def test_work_counts_show_the_skipped_pieces(robots):
    qs = _configurations(60, seed=9)
    groups = [robot.group(robot.kinematics.variable_names) for robot in robots]
    for group in groups:
        group.in_collision_batch(qs, 0.0)
    (broad, plain) = (group.stats for group in groups)
    assert broad.shape == plain.shape == (STATS,)
    assert plain[BODIES_CULLED] == 0 and broad[BODIES_CULLED] > 0
    # The same separation tests ran (same verdicts, same tracked order); the pieces of culled
    # body pairs were not culled one by one.
    assert broad[TESTED] == plain[TESTED]
    assert broad[CULLED] < plain[CULLED]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31), margin=st.sampled_from([0.0, 0.01, 0.1]))
def test_property_segments_and_distances_agree(robots, seed, margin):
    rng = np.random.default_rng(seed)
    q0, q1 = rng.uniform(-2.5, 2.5, (2, 3))
    edges = [robot.edge_free(q0, q1, margin) for robot in robots]
    assert edges[0] == edges[1]  # free, fraction, certified prefix and pair
    answers = [robot.trajectory(np.stack([q0, q1])) for robot in robots]
    np.testing.assert_array_equal(answers[0].distance, answers[1].distance)
    np.testing.assert_array_equal(answers[0].status, answers[1].status)
