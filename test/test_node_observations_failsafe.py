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
Observation sources fail safe: required, silent, empty, without TF at the stamp, moving frame.

One node whose ``cloud`` source is required; a static slab gives ``~/min_distance`` a finite
value whenever the cloud is known to hold nothing in range. The tests run in file order: the
first one sees the source before it was ever heard.
"""

import math
import os

from gjk_ros.ros import PairStatus
from node_harness import find_record, NodeProcess, Scene, session_domain_id, wait_until
import numpy
import pytest
from test_node_observations import (ARM_POSE, cloud_message, expect_exact, send_robot,
                                    Sensors)

pytestmark = pytest.mark.ros

TIMEOUT = 0.6
SLAB_GAP = 0.3   # the slab's top is this far under the arm
STATIC_OBSTACLES = """
- name: slab
  frame_id: world
  pieces:
    - {type: box, size: [0.4, 0.4, 0.02], xyz: [0.0, 0.0, %r]}
""" % (ARM_POSE[0][2] - 0.1 - SLAB_GAP - 0.01)


def min_distance(scene):
    message = scene.message('min_distance')
    return None if message is None else message.data


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('node'), {
            'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 10.0,
            'static_obstacles': STATIC_OBSTACLES,
            'observation_sources': ['cloud'],
            'cloud': {'type': 'pointcloud', 'topic': '/safe_cloud', 'source_timeout': TIMEOUT},
            'required_observation_sources': ['cloud']}) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        send_robot(scene, node)
        yield scene


def test_required_source_never_heard_keeps_the_minimum_unknown(scene, node):
    scene.wait_for_records(lambda records: find_record(records, 'arm', 'slab') is not None,
                           node_process=node)
    scene.wait_for_more('min_distance', 3)
    assert min_distance(scene) == -math.inf


def test_empty_fresh_cloud_is_nothing_in_range_until_it_dies(scene, node):
    sensors = Sensors(scene)
    empty = numpy.zeros((0, 3))

    def send():
        sensors.send('/safe_cloud', cloud_message(empty, 'world', scene.now_ns()))

    def clear():
        send()
        value = min_distance(scene)
        return value is not None and abs(value - SLAB_GAP) < 1e-9
    wait_until(clear, what='min_distance from the slab only', node_process=node)
    assert find_record(scene.records(), 'arm', 'cloud') is None
    # The source stops: its emptiness is no longer known.
    wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf',
               node_process=node)


def test_source_that_dies_goes_stale(scene, node):
    rng = numpy.random.default_rng(2)
    points = rng.uniform([0.3, -0.5, 0.3], [0.5, 0.5, 0.7], size=(300, 3))
    sensors = Sensors(scene)

    def send():
        sensors.send('/safe_cloud', cloud_message(points, 'world', scene.now_ns()))
    send()
    expect_exact(scene, node, 'cloud', points, send)
    wait_until(lambda: 0.0 < min_distance(scene) < SLAB_GAP, node_process=node,
               what='a finite minimum')
    scene.wait_for_records(
        lambda records: find_record(records, 'arm', 'cloud').status == PairStatus.STALE,
        what='cloud pairs STALE', node_process=node)
    # ~/min_distance of the same cycle comes on its own topic: wait for it too.
    wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf',
               node_process=node)


def test_frame_without_tf_at_the_stamp(scene, node):
    sensors = Sensors(scene)
    points = numpy.array([[0.4, 0.0, 0.5]])

    def send(frame):
        sensors.send('/safe_cloud', cloud_message(points, frame, scene.now_ns()))

    def finite():
        send('world')
        return 0.0 < min_distance(scene) < SLAB_GAP
    wait_until(finite, node_process=node, what='a finite minimum', period=0.1)

    def refused():
        send('nowhere')
        return node.lines_with("observation source 'cloud'", "'nowhere'")
    wait_until(refused, what='the frame named', node_process=node, period=0.1)
    wait_until(lambda: min_distance(scene) == -math.inf, what='min_distance -inf',
               node_process=node)


def test_moving_frame_placed_at_the_stamp(scene, node):
    """The sensor moves; each cloud is placed with the sensor's pose at its stamp."""
    rng = numpy.random.default_rng(4)
    points = rng.uniform([0.3, -0.5, 0.3], [0.5, 0.5, 0.7], size=(200, 3))
    sensors = Sensors(scene)

    def send():
        # The sensor was at the origin at the cloud's stamp and is 5 m away 0.1 s later.
        stamp = scene.now_ns()
        scene.send_tf_once('world', 'mover', (0.0, 0.0, 0.0), stamp_ns=stamp)
        scene.send_tf_once('world', 'mover', (5.0, 0.0, 0.0), stamp_ns=stamp + 100_000_000)
        sensors.send('/safe_cloud', cloud_message(points, 'mover', stamp))
    send()
    expect_exact(scene, node, 'cloud', points, send)
