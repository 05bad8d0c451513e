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
Unchanged pairs keep their answer (``reuse_unchanged``), and only they do.

A timeline moves some bodies and leaves the others bit for bit where they were; one engine
keeps the answers of unchanged pairs, another recomputes every pair. A kept pair must have both
poses unchanged since its answer, keep that row bit for bit, and agree with the recomputation;
every pair with a moved body, a changed ``max_distance`` or a pair just made active again is
computed.
"""

import math

from gjk_ros.core import Status
from gjk_ros.core.bodypairs import BodyPairs, MEASURED
from gjk_ros.core.pairset import PAIRS_REUSED
from hypothesis import given, settings, strategies
import numpy
from reference import make_pose, random_rotation
from test_core_pairset_broad import Scene


BEYOND = int(Status.BEYOND)


def engines(scene):
    """Return an engine that keeps unchanged pairs' answers and one that recomputes all."""
    return tuple(BodyPairs(scene.pieces, scene.groups, *scene.pads, reuse_unchanged=reuse)
                 for reuse in (True, False))


def body_poses(scene):
    bodies = scene.owner.max() + 1
    return [make_pose(random_rotation(scene.rng), scene.rng.uniform(-1, 1, 3) * scene.spread)
            for _ in range(bodies)]


def piece_poses(scene, bodies):
    return numpy.array([bodies[scene.owner[p]] @ scene.offsets[p]
                        for p in range(len(scene.pieces))])


def moved_pieces(scene, moved_bodies):
    return numpy.isin(scene.owner, numpy.flatnonzero(moved_bodies))


def assert_agree(kept, fresh):
    """Assert the statuses and distances of the recomputation (tracked, at the same poses)."""
    numpy.testing.assert_array_equal(kept.pair_set.status, fresh.pair_set.status)
    measured = MEASURED[fresh.pair_set.status]
    numpy.testing.assert_allclose(kept.pair_set.distance[measured],
                                  fresh.pair_set.distance[measured], rtol=0.0, atol=1e-9)
    numpy.testing.assert_array_equal(kept.status, fresh.status)
    numpy.testing.assert_allclose(kept.rows[0][:, 0], fresh.rows[0][:, 0], rtol=0.0, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=strategies.integers(0, 2 ** 16),
       steps=strategies.lists(strategies.tuples(
           strategies.lists(strategies.booleans(), min_size=6, max_size=6),
           strategies.sampled_from([0.05, 0.3, math.inf]),
           strategies.floats(0.0, 0.3)), min_size=2, max_size=8))
def test_kept_answers_are_those_of_unchanged_poses_and_agree_with_a_recomputation(seed, steps):
    scene = Scene(seed)
    kept, fresh = engines(scene)
    bodies = body_poses(scene)
    rng = numpy.random.default_rng(seed)
    last_rows = last_distance = last_active = None
    pairs = kept.piece_pairs
    for moving, max_distance, inactive_share in steps:
        for body, moves in enumerate(moving):
            if moves:  # a small motion: a rotation about and a step from where it was
                bodies[body] = bodies[body] @ make_pose(random_rotation(rng, 0.2),
                                                        rng.normal(0.0, 0.05, 3))
        moved = moved_pieces(scene, moving)
        poses = piece_poses(scene, bodies)
        active = rng.random(len(pairs)) >= inactive_share
        kept.update(poses, active, max_distance)
        fresh.update(poses, active, max_distance)
        reused = kept.pair_set.reused.copy()
        if last_rows is None or max_distance != last_distance:
            assert not reused.any()
        else:
            unchanged = active & last_active & ~moved[pairs[:, 0]] & ~moved[pairs[:, 1]]
            # Only unchanged pairs are kept, and every unchanged pair answered last time is,
            # unless its whole body pair was culled first (BEYOND, no pair looked at).
            assert not (reused & ~unchanged).any()
            assert (kept.pair_set.status[unchanged & ~reused] == BEYOND).all()
            for mine, before in zip(kept.pair_set._out[:2], last_rows):
                numpy.testing.assert_array_equal(mine[reused], before[reused])
            assert not kept.pair_set._out[2][reused].any()  # no work: counters 0
        assert_agree(kept, fresh)
        last_rows = tuple(array.copy() for array in kept.pair_set._out[:2])
        last_distance, last_active = max_distance, active


def test_a_scene_at_rest_costs_no_query_and_keeps_its_answers():
    scene = Scene(3)
    kept, fresh = engines(scene)
    poses = piece_poses(scene, body_poses(scene))
    # No cull (a culled body pair is marked BEYOND without looking at its pairs): every pair
    # is answered by its own query, then kept.
    kept.update(poses)
    first = [array.copy() for array in kept.pair_set._out[:2]]
    answered = kept.pair_set.num_pairs
    for repeat in range(1, 4):
        kept.update(poses.copy())  # equal values, another array
        fresh.update(poses)
        assert kept.pair_set.reused.all()
        assert kept.pair_set.broad_stats[PAIRS_REUSED] == repeat * answered
        assert not kept.pair_set.iterations.any()
        for mine, before in zip(kept.pair_set._out[:2], first):
            numpy.testing.assert_array_equal(mine, before)
        assert_agree(kept, fresh)


def test_other_options_or_a_cleared_cache_are_computed_again():
    scene = Scene(5)
    kept, _ = engines(scene)
    poses = piece_poses(scene, body_poses(scene))
    far = 100.0  # farther than any two bodies: no body pair is culled
    kept.update(poses, max_distance=far)
    kept.update(poses, max_distance=far + 1.0)
    assert not kept.pair_set.reused.any()
    kept.update(poses, max_distance=far + 1.0)
    assert kept.pair_set.reused.all()
    kept.pair_set.reset_cache(0)
    kept.update(poses, max_distance=far + 1.0)
    assert not kept.pair_set.reused[0] and kept.pair_set.reused[1:].all()
    kept.pair_set.hill_climb = False
    kept.update(poses, max_distance=far + 1.0)
    assert not kept.pair_set.reused.any()
    # A sequence moves every body: the update after it computes every pair.
    kept.update_sequence(poses[None], answers=kept.answer_arrays(1), max_distance=far + 1.0)
    kept.update(poses, max_distance=far + 1.0)
    assert not kept.pair_set.reused.any()


def test_a_changed_bit_is_a_move():
    scene = Scene(7)
    kept, _ = engines(scene)
    poses = piece_poses(scene, body_poses(scene))
    kept.update(poses)
    nudged = poses.copy()
    nudged[0, 0, 3] = numpy.nextafter(nudged[0, 0, 3], math.inf)
    kept.update(nudged)
    touches = (kept.piece_pairs == 0).any(axis=1)
    numpy.testing.assert_array_equal(kept.pair_set.reused, ~touches)
