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
A sweep, as a planner or a test rig runs one against the node as a process.

Each step publishes one transform of the arm, stamped to the nanosecond, and waits for the first
``~/distances`` stamped at or after it (``message_filters``-style exact keying). The obstacle is
a parameter body, so the transform is the only datum that ages: each output stamp must be that
transform's stamp exactly, come from the first cycle that ran after it arrived, and carry the
distance of the pose it stamps. The pacing behind "the first cycle after it" is checked on its
own too, over simulated times: a transform that finds no token is answered one period later.
"""

import os

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus, read_distances
from gjk_ros.ros.compute.pacing import CyclePacer
from hypothesis import example, given, settings, strategies
from node_harness import (box_urdf, find_record, matrix, NodeProcess, Scene, session_domain_id,
                          STARTUP_TIMEOUT, TIMEOUT, wait_until)
import pytest

pytestmark = pytest.mark.ros

ARM_HALF = 0.1
STEPS = 25
SLAB = """
- name: slab
  frame_id: world
  pieces:
    - {type: box, size: [0.6, 0.6, 0.02], xyz: [0.0, 0.0, -0.3]}
"""
URDF = box_urdf('sweepbot', {'arm': [('box', (2 * ARM_HALF,) * 3, (0.0, 0.0, 0.0))]})
# Outputs of cycles that started before a transform arrived may still come after it was sent:
# the cycle running then, and a watchdog cycle if delivery took longer than its slack.
EARLIER_OUTPUTS = 2


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('node'),
                     {'rate_hz': 20.0, 'tf_timeout': 5.0, 'max_distance': 5.0,
                      'static_obstacles': SLAB}) as process:
        yield process


def stamp_of(cloud):
    return cloud.header.stamp.sec * 1_000_000_000 + cloud.header.stamp.nanosec


def height(step):
    return 0.2 + 0.01 * step


def test_each_step_is_answered_by_the_next_cycle_stamped_exactly(node):
    with Scene(session_domain_id()) as scene:
        scene.send_urdf(URDF)
        scene.send_tf_once('world', 'arm', (0.0, 0.0, height(0)))
        wait_until(lambda: 'slab' in scene.name_list('obstacles') and
                   'arm' in scene.name_list('links'), STARTUP_TIMEOUT,
                   'the arm and the slab on ~/names', node_process=node)
        scene.start_history('distances')
        slab = ConvexPolytope.box([0.3, 0.3, 0.01]), matrix((0.0, 0.0, -0.3))
        for step in range(STEPS):
            seen = len(scene.history('distances'))
            # Nanoseconds that a float of seconds cannot hold (it keeps 256 ns steps today).
            stamp = scene.now_ns() // 1000 * 1000 + 793
            scene.send_tf_once('world', 'arm', (0.0, 0.0, height(step)), stamp_ns=stamp)
            wait_until(lambda: any(stamp_of(cloud) >= stamp
                                   for cloud in scene.history('distances')[seen:]),
                       TIMEOUT, 'an output stamped at or after step %d' % step,
                       node_process=node)
            later = scene.history('distances')[seen:]
            first = next(index for index, cloud in enumerate(later) if stamp_of(cloud) >= stamp)
            assert stamp_of(later[first]) == stamp, (step, stamp, stamp_of(later[first]))
            assert first <= EARLIER_OUTPUTS, (step, [stamp_of(cloud) for cloud in later])
            record = find_record(read_distances(later[first], scene.message('names')), 'arm',
                                 'slab')
            assert record.status == PairStatus.VALID
            expected = signed_distance(ConvexPolytope.box([ARM_HALF] * 3),
                                       matrix((0.0, 0.0, height(step))), *slab).distance
            assert abs(record.distance - expected) <= 1e-9, (step, record.distance, expected)


RATE_HZ = 20.0
PERIOD = 1.0 / RATE_HZ


@settings(max_examples=300, deadline=None)
@given(history=strategies.lists(strategies.floats(0.0, 3 * PERIOD), max_size=6),
       delay=strategies.floats(0.0, PERIOD), lateness=strategies.floats(0.0, 0.4 * PERIOD))
# A period's refill that rounds to just below one token (found by search).
@example(history=[0.01742355555978931, 0.025, 0.05], delay=0.0, lateness=0.0)
def test_a_transform_without_a_token_is_answered_one_period_later(history, delay, lateness):
    # The node restarts the watchdog when a transform starts waiting (node._on_transform): its
    # next tick comes a period later, plus its lateness, and must run that transform's cycle.
    pacer, now = CyclePacer(RATE_HZ), 0.0
    for gap in history:  # earlier transforms, answered or not
        now += gap
        pacer.try_start(now)
    pacer.try_start_from_watchdog(now)
    now += delay
    if pacer.try_start(now):
        return  # it had a token: its cycle ran at once
    assert pacer.waiting
    assert pacer.try_start_from_watchdog(now + PERIOD + lateness)
    assert not pacer.waiting
