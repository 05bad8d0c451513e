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
Two shards and the aggregator as real processes: the whole robot's minimum, and a shard killed.

Shard ``a`` measures link ``a``, shard ``b`` every other link (complementary patterns, as
``config/shards.yaml`` splits the Panda); both read one obstacle stream. The aggregator's
minimum is shard ``a``'s (the closer pair). Then shard ``b`` is killed with SIGKILL (no
goodbye: only the deadline, the lease and the aggregator's steady clock can tell): the
aggregated minimum must turn -inf within the deadline, ``~/safety`` and the speed scaling say
stop, and ``/diagnostics`` names the silent shard. A new shard ``b`` brings the answer back.
"""

import math
import os
import pathlib
import signal
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros.listener import DistanceListener
from node_harness import (box_urdf, marker, matrix, NodeProcess, Scene, STARTUP_TIMEOUT,
                          TIMEOUT, wait_until)
import pytest
from sensor_msgs.msg import Range
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros

DEADLINE = 0.25
RATE_HZ = 20.0
VENV_BIN = pathlib.Path(sys.executable).parent
URDF = box_urdf('twobot', {'a': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))],
                           'b': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
B_ORIGIN = (0.0, 2.0, 0.0)
NEAR_A, NEAR_B = (0.5, 0.0, 0.0), (0.0, 2.6, 0.0)
# Both shards read the robot description and the obstacles the scene publishes (node_harness:
# /robot_description, /gjk_distance/obstacles), as the launch file remaps them.
SHARED = ['robot_description:=/robot_description', '~/obstacles:=/gjk_distance/obstacles']
COMMON = {'rate_hz': RATE_HZ, 'max_distance': 5.0, 'obstacle_timeout': 1.0}
SHARDS = {'a': {'link_include': ['a']}, 'b': {'link_exclude': ['a']}}


class AggregatorProcess(NodeProcess):
    """``gjk_aggregator`` as a subprocess (the installed script, else its module)."""

    def command(self):
        params_file = self.work_dir / 'aggregator.yaml'
        params_file.write_text('/**:\n  ros__parameters:\n    shards: [%s]\n    deadline: %s\n'
                               % (', '.join(self.parameters['shards']),
                                  self.parameters.get('deadline', repr(DEADLINE))))
        script = VENV_BIN / 'gjk_aggregator'
        program = [str(script)] if script.exists() else [
            sys.executable, '-m', 'gjk_ros.ros.shards.aggregator']
        return program + ['--ros-args', '--params-file', str(params_file)]


def shard(ros_env, tmp_path, name):
    return NodeProcess(ros_env, tmp_path / name, dict(COMMON, **SHARDS[name]),
                       namespace='/' + name, remaps=SHARED)


def truth(centre, origin=(0.0, 0.0, 0.0)):
    return signed_distance(ConvexPolytope.box([0.1] * 3), matrix(origin),
                           ConvexPolytope.box([0.05] * 3), matrix(centre)).distance


def values_of(message):
    return {item.key: item.value for item in message.status[0].values}


def test_a_killed_shard_makes_the_whole_robot_unknown_within_the_deadline(ros_env, tmp_path):
    domain = int(ros_env['ROS_DOMAIN_ID'])
    with shard(ros_env, tmp_path, 'a') as shard_a, shard(ros_env, tmp_path, 'b') as shard_b, \
            AggregatorProcess(ros_env, tmp_path / 'aggregator',
                              {'shards': ['/a/gjk_distance', '/b/gjk_distance']}) as aggregator, \
            Scene(domain) as scene:
        prefix = '/gjk_aggregator/'
        scene.subscribe('minimum', Float64, prefix + 'min_distance')
        scene.subscribe('safety', Range, prefix + 'safety')
        scene.subscribe('detail', DiagnosticArray, prefix + 'safety_detail')
        scene.subscribe('scaling', Float64, prefix + 'speed_scaling')
        scene.subscribe('detail_a', DiagnosticArray, '/a/gjk_distance/safety_detail')
        scene.subscribe('detail_b', DiagnosticArray, '/b/gjk_distance/safety_detail')
        # A consumer reads the aggregator as it reads one node.
        summaries = []
        DistanceListener(scene.node, lambda records, header: None, '/gjk_aggregator',
                         on_summary=summaries.append)
        scene.send_static_tf('world', 'a')
        scene.send_static_tf('world', 'b', xyz=B_ORIGIN)
        scene.send_urdf(URDF)
        wait_until(lambda: scene.obstacles_pub.get_subscription_count() >= 2, STARTUP_TIMEOUT,
                   'both shards on the obstacle stream', node_process=shard_b)
        scene.send_markers([marker('near_a', 0, xyz=NEAR_A), marker('near_b', 0, xyz=NEAR_B)])

        # Whole robot: shard a's pair, exactly, with both shards vouching.
        expected = truth(NEAR_A)
        wait_until(lambda: scene.message('minimum') is not None and
                   abs(scene.message('minimum').data - expected) < 1e-9, STARTUP_TIMEOUT,
                   'the aggregated minimum of shard a', node_process=aggregator)
        wait_until(lambda: scene.message('detail_b') is not None and
                   abs(float(values_of(scene.message('detail_b'))['min_distance']) -
                       truth(NEAR_B, B_ORIGIN)) < 1e-9, what="shard b's own minimum")
        # On a loaded machine a shard may miss the deadline now and then (the aggregate is then
        # -inf for a moment, as it should be): wait for a summary with both shards heard.

        def measured():
            detail = scene.message('detail')
            return detail is not None and values_of(detail)['ready'] == 'true' and \
                float(values_of(detail)['min_distance']) == expected and detail
        detail = wait_until(measured, what='an aggregate with both shards heard')
        values = values_of(detail)
        assert values['shard'] == '/a/gjk_distance'
        assert values['link'] == 'a' and values['obstacle'] == 'near_a/0'
        assert detail.header.frame_id == 'world' and detail.header.stamp.sec > 0
        wait_until(lambda: scene.message('scaling').data == 1.0, what='full speed')
        wait_until(lambda: summaries and summaries[-1].minimum == expected and
                   summaries[-1].ready, what="the listener's joined summary")
        assert summaries[-1].link == 'a' and 0.0 <= summaries[-1].age(scene.node) < 5.0

        # SIGKILL: no message, no goodbye. Every aggregated minimum from now on is kept.
        scene.start_history('minimum')
        os.kill(shard_b.process.pid, signal.SIGKILL)
        killed = time.monotonic()

        def b_silent():
            detail = scene.message('detail')
            return detail.status[0].message.startswith('/b/gjk_distance is silent') and detail
        detail = wait_until(b_silent, 4 * DEADLINE + 1.0, 'shard b silent after the kill',
                            node_process=aggregator)
        print('shard killed: aggregated minimum -inf after %.3f s (deadline %g s)'
              % (time.monotonic() - killed, DEADLINE))
        # The process that was shard b is gone (the kill reached the node, not a wrapper).
        assert shard_b.process.wait(TIMEOUT) == -signal.SIGKILL
        # Silent by one of the aggregator's three checks, and never before the deadline: the
        # steady clock's age is past it, or the middleware's deadline or lease event fired.
        reason = detail.status[0].message.split(' is silent: ', 1)[1]
        assert reason.startswith(('no summary for ', 'the middleware reports')), reason
        if reason.startswith('no summary for '):
            assert float(reason.split()[3]) > DEADLINE, reason
        values = values_of(detail)
        assert values['min_distance'] == '-inf' and values['ready'] == 'false'
        assert values['speed_scaling'] == '0.0' and detail.status[0].level == b'\x02'
        wait_until(lambda: scene.message('minimum').data == -math.inf and
                   scene.message('safety').range == -math.inf and
                   scene.message('scaling').data == 0.0, what='every output says stop')
        # /diagnostics carries the shards' own arrays too: read the aggregator's entries from
        # the latest array that has them.
        entry = 'gjk_aggregator: shard /b/gjk_distance'
        wait_until(lambda: aggregator_status(scene, entry) is not None and
                   aggregator_status(scene, entry).message.startswith('silent'),
                   what='the silent shard named in /diagnostics')
        assert aggregator_status(scene, entry).level == b'\x02'
        wait_until(lambda: aggregator_status(
            scene, 'gjk_aggregator: shard /a/gjk_distance').level == b'\x00', what='shard a heard')
        # Fail-safe from the first -inf on: while shard b is dead no answer vouches for the
        # robot, though shard a keeps sending finite summaries (it was the minimum's shard).
        minima = [message.data for message in scene.history('minimum')]
        first = minima.index(-math.inf)
        assert minima[first:] == [-math.inf] * (len(minima) - first), minima[first:]
        assert abs(float(values_of(scene.message('detail_a'))['min_distance']) - expected) < 1e-9

        # Shard b comes back (a new process): the whole robot is measured again.
        with shard(ros_env, tmp_path, 'b') as revived:
            wait_until(lambda: scene.message('minimum').data == expected and
                       values_of(scene.message('detail'))['ready'] == 'true',
                       STARTUP_TIMEOUT, 'the aggregate back with the new shard b',
                       node_process=revived)
        assert shard_a.alive() and aggregator.alive()


def aggregator_status(scene, name):
    """Return the named status of the latest /diagnostics array that has it, or None."""
    with scene._lock:
        arrays = list(scene.diagnostics)
    for array in reversed(arrays):
        for status in array.status:
            if status.name == name:
                return status
    return None


def test_a_shard_offering_a_longer_deadline_is_never_heard_and_named(ros_env, tmp_path):
    """A shard at 2 Hz offers a 1.5 s deadline: a 0.25 s request cannot match it."""
    slow = dict(COMMON, rate_hz=2.0, **SHARDS['a'])
    with NodeProcess(ros_env, tmp_path / 'a', slow, namespace='/a', remaps=SHARED), \
            AggregatorProcess(ros_env, tmp_path / 'aggregator',
                              {'shards': ['/a/gjk_distance']}) as aggregator, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        scene.subscribe('detail', DiagnosticArray, '/gjk_aggregator/safety_detail')
        wait_until(lambda: scene.message('detail') is not None and
                   'incompatible QoS' in scene.message('detail').status[0].message,
                   STARTUP_TIMEOUT, 'the incompatible offer named', node_process=aggregator)
        values = values_of(scene.message('detail'))
        assert values['min_distance'] == '-inf' and values['ready'] == 'false'


@pytest.mark.parametrize('shards, deadline, named', [
    ([], 0.25, 'parameter shards is empty'),
    (['/a/gjk_distance'], '1', 'parameter deadline must be a double'),
])
def test_a_bad_parameter_stops_the_aggregator_naming_it(ros_env, tmp_path, shards, deadline,
                                                        named):
    process = AggregatorProcess(ros_env, tmp_path, {'shards': shards, 'deadline': deadline})
    process.start()
    try:
        assert process.process.wait(TIMEOUT) == 1
    finally:
        process.stop()
    assert process.lines_with('bad parameter', named), process.output()
