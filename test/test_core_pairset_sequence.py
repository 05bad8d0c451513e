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

"""PairSet.update_sequence is N tracked updates in one call."""

from gjk_ros.core import ConvexPolytope, PairSet
import numpy as np
import pytest
from scipy.spatial.transform import Rotation


def _scene(seed):
    rng = np.random.default_rng(seed)
    bodies = [ConvexPolytope.from_points(rng.normal(size=(40, 3))) for _ in range(4)]
    bodies.append(ConvexPolytope.box([0.5, 0.4, 0.3]))
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    steps = 30
    poses = np.tile(np.eye(4), (steps, 5, 1, 1))
    angles = np.linspace(0.0, 1.5, steps)
    for b in range(5):
        turn = np.outer(angles, rng.normal(size=3))
        poses[:, b, :3, :3] = Rotation.from_rotvec(turn).as_matrix()
        poses[:, b, :3, 3] = rng.uniform(-2.0, 2.0, 3) + np.outer(angles, rng.normal(size=3))
    return bodies, pairs, poses


def test_sequence_equals_step_by_step_updates():
    bodies, pairs, poses = _scene(5)
    stepped = PairSet(bodies, pairs)
    expected = []
    for step in poses:
        stepped.update(step)
        expected.append((stepped.distance.copy(), stepped.status.copy(),
                         stepped.iterations.copy()))
    values, status, counts = PairSet(bodies, pairs).update_sequence(poses)
    for n, (distance, state, iterations) in enumerate(expected):
        np.testing.assert_array_equal(values[n, :, 0], distance)
        np.testing.assert_array_equal(status[n], state)
        np.testing.assert_array_equal(counts[n, :, 0], iterations)
    assert (status == 2).any() and (status == 0).any()  # overlaps and separations both occur


def test_sequence_checks_shapes_and_reuses_out():
    bodies, pairs, poses = _scene(6)
    pair_set = PairSet(bodies, pairs)
    out = (np.empty((len(poses), len(pairs), 11)), np.empty((len(poses), len(pairs)), np.int8),
           np.empty((len(poses), len(pairs), 4), np.int64))
    returned = pair_set.update_sequence(poses, out=out)
    assert all(a is b for a, b in zip(returned, out))
    with pytest.raises(ValueError, match='expected shape'):
        pair_set.update_sequence(poses[:, :3])
    with pytest.raises(ValueError, match='out'):
        pair_set.update_sequence(poses, out=(out[0][:2],) + out[1:])
