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

"""signed_distance's fast path: validation in the kernel, cold calls without a cache object."""

from gjk_ros.core import ConvexPolytope, signed_distance, SimplexCache, Status
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
