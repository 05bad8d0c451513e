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
launch_testing test of ``launch/gjk_distance.launch.py`` (runs on a ROS 2 install).

The installed launch file starts the node in a namespace of its own (so that no other node of
the same name on the domain can answer); a test node publishes a one-link robot on the global
``/robot_description`` (the launch file remaps it onto the namespaced node) and a cube, and
checks ``~/distances`` against the core; after shutdown every process must have exited
cleanly. Skipped where launch_testing is not installed (it is not on the package index).
"""

import os
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing')

from gjk_ros.core import ConvexPolytope, signed_distance  # noqa: E402, I100
from gjk_ros.ros import PairStatus  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from node_harness import (box_urdf, find_record, installed_launch_description,  # noqa: E402
                          marker, matrix, Scene, STARTUP_TIMEOUT)

CUBE_CENTRE = (0.4, 0.1, 0.0)
NAMESPACE = 'launch_test_%d' % os.getpid()


@pytest.mark.launch_test
def generate_test_description():
    """Include the installed launch file, then start the tests."""
    return installed_launch_description({'fixed_frame': 'world', 'namespace': NAMESPACE})


class TestDistances(unittest.TestCase):
    """The launched node measures a published scene."""

    def test_distance_to_a_cube(self):
        """A 0.2 m cube link and a 0.1 m cube obstacle: the core's signed distance."""
        with Scene(int(os.environ.get('ROS_DOMAIN_ID', '0')), '/' + NAMESPACE) as scene:
            scene.send_static_tf('world', 'arm')
            scene.send_urdf(box_urdf('launchbot', {'arm': [('box', (0.2, 0.2, 0.2),
                                                            (0.0, 0.0, 0.0))]}))
            scene.wait_for_subscribers('obstacles')
            scene.send_markers([marker('launch', 0, xyz=CUBE_CENTRE)])
            truth = signed_distance(ConvexPolytope.box([0.1] * 3), matrix(),
                                    ConvexPolytope.box([0.05] * 3), matrix(CUBE_CENTRE))

            def measured(records):
                record = find_record(records, 'arm', 'launch/0')
                return record is not None and record.status == PairStatus.VALID and \
                    abs(record.distance - truth.distance) < 1e-9
            scene.wait_for_records(measured, STARTUP_TIMEOUT, 'arm-launch/0')
            self.assertEqual(scene.message('distances').header.frame_id, 'world')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    """The node exits cleanly when launch shuts it down."""

    def test_exit_codes(self, proc_info):
        """Every process exited with code 0."""
        launch_testing.asserts.assertExitCodes(proc_info)
