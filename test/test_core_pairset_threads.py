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
An update shared by two threads gives, bit for bit, what one thread gives.

The same tracked timelines run through an engine with ``threads=1`` and one with ``threads=2``
(the pair-count threshold lowered so that small scenes are shared too): values, statuses,
counters, tracked caches and the broad phase's counters must be identical arrays. A worker
busy elsewhere must not hold an update up: the calling thread then takes every run.
"""

import math
import threading

from gjk_ros.core import pairset
from gjk_ros.core.bodypairs import BodyPairs
from hypothesis import given, settings, strategies
import numpy
import pytest
from test_core_pairset_broad import assert_same, Scene


def engines(scene, reuse):
    return tuple(BodyPairs(scene.pieces, scene.groups, *scene.pads, threads=threads,
                           reuse_unchanged=reuse) for threads in (1, 2))


@pytest.fixture(autouse=True)
def share_small_updates(monkeypatch):
    monkeypatch.setattr(pairset, 'PARALLEL_MIN_PAIRS', 0)


@settings(max_examples=25, deadline=None)
@given(seed=strategies.integers(0, 2 ** 16), reuse=strategies.booleans(),
       max_distance=strategies.sampled_from([0.0, 0.05, 0.3, 2.0]),
       bodies=strategies.integers(3, 9))
def test_two_threads_give_the_answers_of_one_bit_for_bit(seed, reuse, max_distance, bodies):
    scene = Scene(seed, bodies=bodies)
    serial, shared = engines(scene, reuse)
    assert len(shared.pair_set._runs) > 2  # the groups really are cut into runs
    rng = numpy.random.default_rng(seed)
    steps = scene.poses(5)
    steps[3] = steps[2]  # a step at rest: kept answers, with reuse
    for poses in steps:
        active = rng.random(serial.pair_set.num_pairs) > 0.1
        serial.update(poses, active, max_distance)
        shared.update(poses, active, max_distance)
        assert_same(shared, serial)
        numpy.testing.assert_array_equal(shared.pair_set.broad_stats,
                                         serial.pair_set.broad_stats)


def test_without_a_finite_max_distance_one_thread_does_it_all():
    scene = Scene(1)
    serial, shared = engines(scene, False)
    for poses in scene.poses(3):
        serial.update(poses, None, math.inf)
        shared.update(poses, None, math.inf)
        assert_same(shared, serial)


def test_a_busy_worker_does_not_hold_an_update_up():
    scene = Scene(2, bodies=8)
    serial, shared = engines(scene, False)
    release = threading.Event()
    blocker = pairset._worker().submit(release.wait, 60.0)
    try:
        for poses in scene.poses(3):
            serial.update(poses, None, 0.3)
            shared.update(poses, None, 0.3)  # returns although the worker never starts
            assert_same(shared, serial)
    finally:
        release.set()
    assert blocker.result() is True
