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
launch_testing test: ``~/speed_scaling`` on a scripted approach, with the default autostart.

The launch file starts the node with a parameter file of its own (ramp from 0.1 m to 0.3 m,
0.05 m of hysteresis, a trigger debounce of 2 cycles and a release debounce of 4) and no
``autostart`` argument: the node must come up active by itself. The robot has two links,
``arm`` (a 0.2 m cube at the origin) and ``base`` (a 0.2 m cube 3 m away), with
``scaling_groups`` ``arm_group:arm`` and ``base_group:base``. A 0.1 m cube obstacle is moved
toward ``arm`` step by step, backed off by less than the hysteresis, then by more, and then its
source goes silent (unknown). Each step waits for the measured distance, then checks the
factor published on ``~/speed_scaling`` and in ``~/safety_detail``. Every ``~/safety_detail``
of the run (``min_distance`` and ``speed_scaling`` in one message) is finally replayed through
``SpeedScaler`` with the same settings: the node's factors are exactly the state machine's,
cycle by cycle, so the debounce counts hold in the running node.
"""

import math
import os
import tempfile
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402, I100
from gjk_ros.ros.outputs.speed_scaling import ScalingSettings, SpeedScaler  # noqa: E402
from node_harness import (box_urdf, installed_launch_description, marker, Scene,  # noqa: E402
                          STARTUP_TIMEOUT, TIMEOUT, wait_until)
from std_msgs.msg import Float64  # noqa: E402
import yaml  # noqa: E402

NAMESPACE = 'scaling_test_%d' % os.getpid()
PREFIX = '/%s/gjk_distance/' % NAMESPACE
SETTINGS = ScalingSettings(slowdown_distance=0.3, stop_distance=0.1, release_margin=0.05,
                           trigger_cycles=2, release_cycles=4)
PARAMETERS = {
    'rate_hz': 20.0, 'max_distance': 5.0, 'obstacle_timeout': 0.5,
    'slowdown_distance': SETTINGS.slowdown_distance, 'stop_distance': SETTINGS.stop_distance,
    'scaling_release_margin': SETTINGS.release_margin,
    'scaling_trigger_cycles': SETTINGS.trigger_cycles,
    'scaling_release_cycles': SETTINGS.release_cycles,
    'scaling_groups': ['arm_group:arm', 'base_group:base'],
}
# Surface of arm at x = 0.1, obstacle half edge 0.05: distance = centre x - 0.15.
ARM_FACE = 0.15


def _parameter_file():
    handle, path = tempfile.mkstemp(prefix='gjk_scaling_', suffix='.yaml')
    with os.fdopen(handle, 'w') as stream:
        yaml.safe_dump({'/**': {'ros__parameters': PARAMETERS}}, stream)
    return path


@pytest.mark.launch_test
def generate_test_description():
    """Include the installed launch file with a parameter file of the test's own."""
    return installed_launch_description({'namespace': NAMESPACE, 'params_file': _parameter_file()})


def detail_values(message):
    return {value.key: value.value for value in message.status[0].values}


class TestSpeedScaling(unittest.TestCase):
    """A scripted approach of an obstacle to the arm."""

    def setUp(self):
        self.scene = Scene(int(os.environ.get('ROS_DOMAIN_ID', '0')), '/' + NAMESPACE)
        self.scene.subscribe('speed_scaling', Float64, PREFIX + 'speed_scaling')
        self.scene.subscribe('arm_group', Float64, PREFIX + 'speed_scaling/arm_group')
        self.scene.subscribe('base_group', Float64, PREFIX + 'speed_scaling/base_group')
        self.scene.subscribe('detail', DiagnosticArray, PREFIX + 'safety_detail')
        self.scene.start_history('detail')

    def tearDown(self):
        self.scene.close()

    def place(self, distance):
        """Move the obstacle to ``distance`` from arm; wait until the node measured it."""
        self.scene.send_markers([marker('mover', 0, xyz=(ARM_FACE + distance, 0.0, 0.0))])

        def measured():
            detail = self.scene.message('detail')
            return detail is not None and \
                float(detail_values(detail)['min_distance']) == pytest.approx(distance, abs=1e-9)
        wait_until(measured, STARTUP_TIMEOUT, 'min_distance %g' % distance)

    def settled(self, cycles=SETTINGS.release_cycles + 2):
        """Wait ``cycles`` more summaries; return the latest factor (topic and detail agree)."""
        self.scene.wait_for_more('detail', cycles)
        factor = float(detail_values(self.scene.message('detail'))['speed_scaling'])
        wait_until(lambda: self.scene.message('speed_scaling') is not None and
                   self.scene.message('speed_scaling').data == factor, TIMEOUT,
                   '~/speed_scaling %g' % factor)
        return factor

    def labels(self):
        markers = self.scene.message('markers')
        return [] if markers is None else [item.text for item in markers.markers
                                           if item.ns == 'speed_scaling']

    def test_scripted_approach(self):
        scene = self.scene
        scene.send_static_tf('world', 'arm')
        scene.send_static_tf('world', 'base', (3.0, 0.0, 0.0))
        scene.send_urdf(box_urdf('scalebot', {
            'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))],
            'base': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]}))
        scene.wait_for_subscribers('obstacles')
        self.place(1.0)
        self.assertEqual(self.settled(), 1.0)
        wait_until(lambda: 'speed scaling 1.00' in self.labels(), TIMEOUT,
                   'the speed-scaling label in ~/markers (RViz)')
        self.place(0.2)   # halfway down the ramp
        self.assertAlmostEqual(self.settled(), 0.5)
        self.assertEqual(scene.message('base_group').data, 1.0)  # base is 2.75 m away
        self.assertAlmostEqual(scene.message('arm_group').data, 0.5)
        self.place(0.22)  # backed off by less than the hysteresis: the factor holds
        self.assertAlmostEqual(self.settled(), 0.5)
        self.place(0.3)   # by more: it rises along the ramp shifted out, to ramp(0.25)
        self.assertAlmostEqual(self.settled(), 0.75)
        self.place(0.05)  # inside stop_distance
        self.assertEqual(self.settled(), 0.0)
        self.place(1.0)
        self.assertEqual(self.settled(), 1.0)
        scene.pause_markers()  # the obstacle source goes silent: unknown
        wait_until(lambda: float(detail_values(scene.message('detail'))['min_distance']) ==
                   -math.inf, TIMEOUT, 'min_distance -inf')
        self.assertEqual(self.settled(2), 0.0)
        self.assertEqual(scene.message('arm_group').data, 0.0)
        self._replay(scene.history('detail'))

    def _replay(self, history):
        """Check that the node's factors are exactly SpeedScaler's over the published minima."""
        values = [detail_values(message) for message in history]
        start = next(index for index, value in enumerate(values)
                     if float(value['min_distance']) == -math.inf)  # unknown resets the scaler
        scaler = SpeedScaler(SETTINGS)
        replayed = [scaler.step(float(value['min_distance'])) for value in values[start:]]
        published = [float(value['speed_scaling']) for value in values[start:]]
        self.assertEqual(published, replayed)
        self.assertIn(0.5, [round(value, 12) for value in published])
