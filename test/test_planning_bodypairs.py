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

"""The core body-pair engine the planner (and the node) reduce piece pairs with."""

from gjk_ros.core import ConvexPolytope, signed_distance, Status
from gjk_ros.core.bodypairs import BodyPairs
import numpy as np


def _poses(offsets):
    poses = np.tile(np.eye(4), (len(offsets), 1, 1))
    poses[:, :3, 3] = offsets
    return poses


def _pieces():
    return [ConvexPolytope.box([0.2, 0.2, 0.2]), ConvexPolytope.box([0.1, 0.4, 0.1]),
            ConvexPolytope.sphere(0.1), ConvexPolytope.cylinder(0.05, 0.3)]


def test_closest_piece_pair_padded_per_body():
    pieces = _pieces()
    # Body pair 0: pieces {0, 1} against {2}; body pair 1: {0} against {3}; 2: nothing.
    engine = BodyPairs(pieces, [[(0, 2), (1, 2)], [(0, 3)], []], [0.01, 0.0, 0.0],
                       [0.02, 0.005, 0.0])
    poses = _poses([[0, 0, 0], [0, 0.6, 0], [0.5, 0.7, 0], [-0.6, 0, 0]])
    rows, status = engine.update(poses)
    expected = min(signed_distance(pieces[a], poses[a], pieces[2], poses[2]).distance
                   for a in (0, 1))
    assert rows[0, 0] == np.float64(expected - 0.03)
    assert engine.best[0, 0] == 1
    np.testing.assert_allclose(rows[0, 4:7] - rows[0, 1:4], rows[0, 0] * rows[0, 7:10],
                               atol=1e-12)
    plain = signed_distance(pieces[0], poses[0], pieces[3], poses[3])
    assert abs(rows[1, 0] - (plain.distance - 0.005)) < 1e-12
    assert status[2] == Status.INACTIVE and np.isnan(rows[2]).all()


def test_beyond_and_sequence_match_single_updates():
    pieces = _pieces()
    engine = BodyPairs(pieces, [[(0, 2)], [(1, 3)]], [0.0, 0.0], [0.0, 0.0])
    steps = np.stack([_poses([[0, 0, 0], [0, 0.6, 0], [0.3 + 0.1 * n, 0, 0], [0, 2.0, 0]])
                      for n in range(5)])
    answers = engine.update_sequence(steps, engine.answer_arrays(5), max_distance=0.5)
    other = BodyPairs(pieces, [[(0, 2)], [(1, 3)]], [0.0, 0.0], [0.0, 0.0])
    for n in range(5):
        rows, status = other.update(steps[n], max_distance=0.5)
        np.testing.assert_array_equal(answers[0][n], rows)
        np.testing.assert_array_equal(answers[1][n], status)
    assert (answers[1][:, 1] == Status.BEYOND).all()


def test_carry_over_keeps_the_tracked_state_of_surviving_piece_pairs():
    pieces = _pieces()
    first = BodyPairs(pieces, [[(0, 2)], [(1, 3)]], [0.0, 0.0], [0.0, 0.0],
                      piece_keys=['a', 'b', 'c', 'd'])
    poses = _poses([[0, 0, 0], [0, 0.6, 0], [0.5, 0, 0], [0, 1.2, 0]])
    first.update(poses)
    # Rebuilt with another order and one new pair: the surviving pairs start warm.
    second = BodyPairs(pieces, [[(1, 3)], [(0, 3)], [(0, 2)]], [0.0] * 3, [0.0] * 3,
                       piece_keys=['a', 'b', 'c', 'd'])
    second.carry_over(first)
    second.update(poses)
    assert second.pair_set.iterations[0] <= 1 and second.pair_set.iterations[2] <= 1
    assert second.pair_set.iterations[1] > 1
