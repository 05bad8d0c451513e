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
PairSet: many tracked pairs updated in one call give the single-call answers.

Batch results equal signed_distance results pair by pair (over several tracked updates),
inactive pairs are INACTIVE with NaN values and keep their cache, pairs beyond max_distance are
BEYOND with NaN values, and caches can be read, written back and reset.
"""

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import PairSet
from gjk_ros.core import signed_distance
from gjk_ros.core import Status
import numpy
import pytest
from reference import box_shape
from reference import capsule_shape
from reference import check_result
from reference import cylinder_shape
from reference import make_pose
from reference import points_shape
from reference import random_rotation
from reference import sphere_shape
from reference import sphere_surface_points


def scene_shapes():
    """Return a mixed set of bodies: hulls, primitives, a cylinder and flat ones."""
    rng = numpy.random.default_rng(71)
    return [
        points_shape('hull_300', sphere_surface_points(rng, 300) * 0.5),
        points_shape('hull_40', sphere_surface_points(rng, 40) * [0.4, 0.3, 0.2]),
        box_shape([0.3, 0.2, 0.1]),
        sphere_shape(0.25),
        capsule_shape(0.1, 0.6),
        cylinder_shape(0.2, 0.5),
        points_shape('square', [[-0.3, -0.3, 0.0], [0.3, -0.3, 0.0], [0.3, 0.3, 0.0],
                                [-0.3, 0.3, 0.0]]),
        points_shape('swept_segment', [[0.0, 0.0, 0.0], [0.4, 0.1, 0.0]], radius=0.05),
    ]


def all_pairs(count):
    """Return every ordered pair (i, j) with i < j, and a few reversed ones."""
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    return numpy.array(pairs + [(j, i) for i, j in pairs[:5]])


def random_poses(rng, count, spread):
    """Return `count` random poses with positions in a cube of half size `spread`."""
    return numpy.array([make_pose(random_rotation(rng), rng.uniform(-spread, spread, 3))
                        for _ in range(count)])


@pytest.fixture(scope='module')
def scene():
    """Bodies (core and test side) and the pairs of the scene."""
    shapes = scene_shapes()
    bodies = [shape.build(ConvexPolytope) for shape in shapes]
    return shapes, bodies, all_pairs(len(bodies))


def quick_to_check(shape_a, shape_b):
    """Tell whether the reference is quick (a cylinder's prism has 8192 vertices)."""
    partners = [other for shape, other in ((shape_a, shape_b), (shape_b, shape_a))
                if shape.is_cylinder]
    return all(len(other.points) <= 8 for other in partners)


def assert_same_as_single_calls(pair_set, bodies, poses, shapes=None):
    """Compare every pair of the last update with a cold single call."""
    for k, (i, j) in enumerate(pair_set.pairs):
        single = signed_distance(bodies[i], poses[i], bodies[j], poses[j])
        batch = pair_set.result(k)
        size = 2.0 * max(bodies[i].bounding_radius, bodies[j].bounding_radius)
        tolerance = 1e-9 * (size + abs(single.distance))
        assert batch.distance == pytest.approx(single.distance, abs=tolerance), k
        assert batch.distance == pair_set.distance[k]
        numpy.testing.assert_array_equal(batch.normal, pair_set.normal[k])
        numpy.testing.assert_array_equal(batch.witness_a, pair_set.witness_a[k])
        numpy.testing.assert_array_equal(batch.witness_b, pair_set.witness_b[k])
        assert int(batch.status) == int(pair_set.status[k])
        if shapes is not None and quick_to_check(shapes[i], shapes[j]):
            problems = check_result(batch, shapes[i], poses[i], shapes[j], poses[j])
            assert problems == [], (k, problems)


def test_batch_equals_single_calls_over_tracked_updates(scene):
    shapes, bodies, pairs = scene
    rng = numpy.random.default_rng(72)
    pair_set = PairSet(bodies, pairs)
    assert pair_set.num_pairs == len(pairs)
    assert pair_set.num_bodies == len(bodies)
    numpy.testing.assert_array_equal(pair_set.pairs, pairs)
    poses = random_poses(rng, len(bodies), 0.6)
    velocities = rng.uniform(-0.02, 0.02, size=(len(bodies), 3))
    for step in range(6):
        pair_set.update(poses)
        # The full reference check on the first and last updates; distances on all.
        assert_same_as_single_calls(pair_set, bodies, poses,
                                    shapes if step in (0, 5) else None)
        poses = poses.copy()
        poses[:, :3, 3] += velocities
    assert {int(s) for s in pair_set.status} <= {Status.SEPARATED, Status.TOUCHING,
                                                 Status.PENETRATING}
    assert numpy.any(pair_set.status == Status.PENETRATING)
    assert numpy.any(pair_set.status == Status.SEPARATED)


@pytest.mark.parametrize('hill_climb, tracking', [(False, True), (True, False),
                                                  (False, False)])
def test_batch_options_give_the_same_answers(scene, hill_climb, tracking):
    _, bodies, pairs = scene
    rng = numpy.random.default_rng(73)
    pair_set = PairSet(bodies, pairs, hill_climb=hill_climb, tracking=tracking)
    for _ in range(3):
        poses = random_poses(rng, len(bodies), 0.8)
        pair_set.update(poses)
        assert_same_as_single_calls(pair_set, bodies, poses)


def test_batch_on_many_random_pairs():
    rng = numpy.random.default_rng(74)
    bodies = [ConvexPolytope.from_points(sphere_surface_points(rng, int(count)) * scale)
              for count, scale in zip(rng.integers(4, 200, 30), rng.uniform(0.1, 0.5, 30))]
    pairs = rng.integers(0, 30, size=(200, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pair_set = PairSet(bodies, pairs)
    poses = random_poses(rng, len(bodies), 1.5)
    pair_set.update(poses)
    assert_same_as_single_calls(pair_set, bodies, poses)


def assert_no_values(pair_set, k):
    """Check that pair k carries NaN in every value field."""
    for array in (pair_set.distance[k], pair_set.normal[k], pair_set.witness_a[k],
                  pair_set.witness_b[k], pair_set.error_bound[k]):
        assert numpy.all(numpy.isnan(array)), k
    assert numpy.isnan(pair_set.result(k).distance)


def cache_state(cache):
    """Return what a SimplexCache holds, comparable with ==."""
    return (cache.is_empty, cache.count, cache.index_a.tolist(), cache.index_b.tolist(),
            cache.last_best)


def test_inactive_pairs_are_marked_and_keep_their_cache(scene):
    _, bodies, pairs = scene
    rng = numpy.random.default_rng(75)
    pair_set = PairSet(bodies, pairs)
    poses = random_poses(rng, len(bodies), 0.6)
    pair_set.update(poses)
    kept = [cache_state(pair_set.get_cache(k)) for k in range(pair_set.num_pairs)]
    active = rng.random(pair_set.num_pairs) < 0.5
    pair_set.update(poses, active=active)
    for k in range(pair_set.num_pairs):
        if active[k]:
            assert pair_set.status[k] != Status.INACTIVE
            assert numpy.isfinite(pair_set.distance[k])
        else:
            assert pair_set.status[k] == Status.INACTIVE
            assert pair_set.result(k).status == Status.INACTIVE
            assert_no_values(pair_set, k)
            assert cache_state(pair_set.get_cache(k)) == kept[k]
    # Reactivated pairs answer correctly from the kept cache.
    pair_set.update(poses)
    assert_same_as_single_calls(pair_set, bodies, poses)


def bounding_gap(body_a, pose_a, body_b, pose_b):
    """Return the gap between the world bounding spheres of two bodies."""
    centre_a = pose_a[:3, :3] @ body_a.bounding_center + pose_a[:3, 3]
    centre_b = pose_b[:3, :3] @ body_b.bounding_center + pose_b[:3, 3]
    return (float(numpy.linalg.norm(centre_b - centre_a)) - body_a.bounding_radius
            - body_b.bounding_radius)


def test_pairs_beyond_max_distance_are_marked(scene):
    _, bodies, pairs = scene
    rng = numpy.random.default_rng(76)
    poses = random_poses(rng, len(bodies), 2.0)
    pair_set = PairSet(bodies, pairs)
    max_distance = 0.8
    pair_set.update(poses, max_distance=max_distance)
    statuses = []
    for k, (i, j) in enumerate(pairs):
        gap = bounding_gap(bodies[i], poses[i], bodies[j], poses[j])
        statuses.append(int(pair_set.status[k]))
        if gap > max_distance * (1.0 + 1e-9):
            assert pair_set.status[k] == Status.BEYOND, (k, gap)
            assert_no_values(pair_set, k)
        elif gap < max_distance * (1.0 - 1e-9):
            single = signed_distance(bodies[i], poses[i], bodies[j], poses[j])
            assert pair_set.distance[k] == pytest.approx(single.distance, abs=1e-8)
    assert Status.BEYOND in statuses
    assert len(set(statuses) - {Status.BEYOND}) > 0
    # An infinite max_distance computes everything again.
    pair_set.update(poses)
    assert not numpy.any(pair_set.status == Status.BEYOND)


def test_cache_round_trip_and_reset(scene):
    _, bodies, pairs = scene
    rng = numpy.random.default_rng(77)
    poses = random_poses(rng, len(bodies), 0.6)
    pair_set = PairSet(bodies, pairs)
    pair_set.update(poses)
    caches = [pair_set.get_cache(k) for k in range(pair_set.num_pairs)]
    assert not any(cache.is_empty for cache in caches)
    pair_set.reset_cache(3)
    assert pair_set.get_cache(3).is_empty
    assert not pair_set.get_cache(4).is_empty
    pair_set.set_cache(3, caches[3])
    assert cache_state(pair_set.get_cache(3)) == cache_state(caches[3])
    pair_set.reset_cache()
    assert all(pair_set.get_cache(k).is_empty for k in range(pair_set.num_pairs))
    # A rebuilt PairSet over the same bodies takes the caches over and starts warm.
    rebuilt = PairSet(bodies, pairs)
    for k, cache in enumerate(caches):
        rebuilt.set_cache(k, cache)
    rebuilt.update(poses)
    assert_same_as_single_calls(rebuilt, bodies, poses)
    cold = PairSet(bodies, pairs)
    cold.update(poses)
    assert numpy.sum(rebuilt.support_calls) < numpy.sum(cold.support_calls)


def test_get_cache_returns_a_copy(scene):
    _, bodies, pairs = scene
    rng = numpy.random.default_rng(78)
    pair_set = PairSet(bodies, pairs)
    pair_set.update(random_poses(rng, len(bodies), 0.6))
    cache = pair_set.get_cache(0)
    before = cache_state(cache)
    pair_set.reset_cache(0)
    assert cache_state(cache) == before


def test_bad_update_arguments_are_rejected(scene):
    _, bodies, pairs = scene
    pair_set = PairSet(bodies, pairs)
    poses = numpy.array([numpy.eye(4)] * len(bodies))
    with pytest.raises(ValueError, match='poses'):
        pair_set.update(poses[:-1])
    with pytest.raises(ValueError, match='active'):
        pair_set.update(poses, active=numpy.ones(pair_set.num_pairs + 1, dtype=bool))
    bad = poses.copy()
    bad[2, 0, 3] = numpy.nan
    with pytest.raises(ValueError, match='poses'):
        pair_set.update(bad)
    with pytest.raises(ValueError, match='pairs'):
        PairSet(bodies, [[0, len(bodies)]])
