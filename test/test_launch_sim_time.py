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
launch_testing test: ``use_sim_time:=true`` on the launch line reaches the node.

With nothing publishing ``/clock`` the node's ROS time is zero: it must say so in
``/diagnostics`` (naming ``/clock``) and keep ``~/min_distance`` at -inf and ``~/speed_scaling``
at 0, through the steady-clock timers that run whatever ROS time does. Skipped where
launch_testing is not installed.
"""

import math
import os
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing')

from node_harness import (box_urdf, installed_launch_description, Scene,  # noqa: E402, I100
                          STARTUP_TIMEOUT, wait_until)
from std_msgs.msg import Float64  # noqa: E402

NAMESPACE = 'sim_time_test_%d' % os.getpid()


@pytest.mark.launch_test
def generate_test_description():
    """Include the installed launch file with use_sim_time:=true."""
    return installed_launch_description({'namespace': NAMESPACE, 'use_sim_time': 'true',
                                         'log_level': 'debug'})


class TestSimTime(unittest.TestCase):
    """The launched node runs on /clock and, without one, reads unknown."""

    def test_no_clock_is_reported_and_reads_minus_infinity(self):
        """The inputs entry names /clock; ~/min_distance stays -inf."""
        with Scene(int(os.environ.get('ROS_DOMAIN_ID', '0')), '/' + NAMESPACE) as scene:
            scene.send_static_tf('world', 'arm')
            scene.send_urdf(box_urdf('simbot', {'arm': [('box', (0.2, 0.2, 0.2),
                                                         (0.0, 0.0, 0.0))]}))

            def clock_reported():
                return any(name.endswith(': inputs') and "'/clock'" in status.message
                           for name, status in scene.diagnostic_statuses().items())
            wait_until(clock_reported, STARTUP_TIMEOUT, 'the missing /clock in /diagnostics')
            scene.subscribe('speed_scaling', Float64,
                            '/%s/gjk_distance/speed_scaling' % NAMESPACE)
            scene.wait_for_more('min_distance', 3)
            self.assertEqual(scene.message('min_distance').data, -math.inf)
            # Autostart made it active (it publishes), and unknown time scales speed to 0.
            scene.wait_for_more('speed_scaling', 3)
            self.assertEqual(scene.message('speed_scaling').data, 0.0)
