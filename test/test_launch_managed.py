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
launch_testing test: the node as a managed node, driven as a lifecycle manager would.

The installed launch file starts the node with ``autostart:=false``. The test calls the
lifecycle services (``~/get_state``, ``~/change_state``: what ``ros2 lifecycle set`` and
nav2_lifecycle_manager call) and checks that outputs come only while the node is active:
unconfigured and inactive it is silent but for ``/diagnostics``, which names the state;
a consumer requesting the safety deadline is told when the node is deactivated;
configure -> cleanup -> configure -> activate measures again. ``~/toggle`` then pauses it:
outputs keep coming and read -inf, naming ``~/toggle``, with a speed scaling of 0.
"""

import math
import os
import unittest

import pytest

launch_testing = pytest.importorskip('launch_testing')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402, I100
from gjk_ros.ros import PairStatus  # noqa: E402
from gjk_ros.ros.qos import safety_period  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from lifecycle_msgs.msg import State, Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from node_harness import (box_urdf, find_record, installed_launch_description,  # noqa: E402
                          marker, Scene, STARTUP_TIMEOUT, TIMEOUT, wait_until)
from std_msgs.msg import Float64  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402
from test_node_safety_outputs import QosConsumer  # noqa: E402

NAMESPACE = 'managed_test_%d' % os.getpid()
PREFIX = '/%s/gjk_distance/' % NAMESPACE
RATE_HZ = 30.0  # the installed parameter file's rate_hz


@pytest.mark.launch_test
def generate_test_description():
    """Include the installed launch file with autostart:=false."""
    return installed_launch_description({'namespace': NAMESPACE, 'autostart': 'false'})


def call(scene, service_type, name, request, timeout=STARTUP_TIMEOUT):
    """Call one of the node's services from the scene's node; return the response."""
    client = scene.node.create_client(service_type, PREFIX + name)
    try:
        wait_until(lambda: client.service_is_ready(), timeout, 'the %s service' % name)
        future = client.call_async(request)
        wait_until(future.done, TIMEOUT, 'the %s answer' % name)
        return future.result()
    finally:
        scene.node.destroy_client(client)


def lifecycle_state(scene):
    return call(scene, GetState, 'get_state', GetState.Request()).current_state.id


def transition(scene, transition_id):
    request = ChangeState.Request(transition=Transition(id=transition_id))
    return call(scene, ChangeState, 'change_state', request).success


def lifecycle_entry(scene):
    for name, status in scene.diagnostic_statuses().items():
        if name == PREFIX.strip('/') + ': lifecycle':
            return {value.key: value.value for value in status.values}
    return None


def silent_while(scene, state, name='min_distance'):
    """Two diagnostics messages (1 s apart) saying ``state`` pass without ``name`` output."""
    count = scene.count(name)
    for _ in range(2):
        seen = scene.count('diagnostics')
        wait_until(lambda: scene.count('diagnostics') > seen and
                   (lifecycle_entry(scene) or {}).get('state') == state, TIMEOUT,
                   'diagnostics saying %s' % state)
    return scene.count(name) == count


def measured(records):
    record = find_record(records, 'arm', 'managed/0')
    return record is not None and record.status == PairStatus.VALID


class TestManagedNode(unittest.TestCase):
    """Lifecycle transitions through the services, then ~/toggle."""

    def test_outputs_only_while_active_and_toggle_pauses(self):
        with Scene(int(os.environ.get('ROS_DOMAIN_ID', '0')), '/' + NAMESPACE) as scene:
            scene.subscribe('speed_scaling', Float64, PREFIX + 'speed_scaling')
            scene.subscribe('detail', DiagnosticArray, PREFIX + 'safety_detail')
            scene.send_static_tf('world', 'arm')
            scene.send_urdf(box_urdf('managedbot', {'arm': [('box', (0.2, 0.2, 0.2),
                                                             (0.0, 0.0, 0.0))]}))
            self.assertEqual(lifecycle_state(scene), State.PRIMARY_STATE_UNCONFIGURED)
            self.assertTrue(silent_while(scene, 'unconfigured'))

            self.assertTrue(transition(scene, Transition.TRANSITION_CONFIGURE))
            self.assertEqual(lifecycle_state(scene), State.PRIMARY_STATE_INACTIVE)
            self.assertTrue(silent_while(scene, 'inactive'))

            self.assertTrue(transition(scene, Transition.TRANSITION_ACTIVATE))
            scene.wait_for_subscribers('obstacles')
            scene.send_markers([marker('managed', 0, xyz=(0.5, 0.0, 0.0))])
            scene.wait_for_records(measured, STARTUP_TIMEOUT, 'arm-managed/0 measured')

            consumers = [QosConsumer(scene, PREFIX + name, Float64, safety_period(RATE_HZ))
                         for name in ('min_distance', 'speed_scaling')]
            wait_until(lambda: all(consumer.received >= 10 for consumer in consumers),
                       TIMEOUT, 'messages on the deadline-requesting subscriptions')
            self.assertTrue(transition(scene, Transition.TRANSITION_DEACTIVATE))
            # The middleware tells a consumer that asks for the offered deadline; the process
            # is alive, so the liveliness lease does not lapse.
            wait_until(lambda: all(consumer.deadline_missed >= 1 for consumer in consumers),
                       TIMEOUT, 'a missed deadline on every consumer')
            self.assertEqual([consumer.not_alive for consumer in consumers], [0, 0])
            self.assertTrue(silent_while(scene, 'inactive'))
            self.assertTrue(silent_while(scene, 'inactive', 'speed_scaling'))

            self.assertTrue(transition(scene, Transition.TRANSITION_CLEANUP))
            self.assertEqual(lifecycle_state(scene), State.PRIMARY_STATE_UNCONFIGURED)
            self.assertTrue(silent_while(scene, 'unconfigured'))
            self.assertTrue(transition(scene, Transition.TRANSITION_CONFIGURE))
            self.assertTrue(transition(scene, Transition.TRANSITION_ACTIVATE))
            self.assertEqual(lifecycle_state(scene), State.PRIMARY_STATE_ACTIVE)
            before = scene.count('distances')
            scene.wait_for_records(lambda records: scene.count('distances') > before and
                                   measured(records), STARTUP_TIMEOUT,
                                   'arm-managed/0 measured after configure again')
            self._check_toggle(scene)

    def _check_toggle(self, scene):
        """Paused: outputs keep coming, -inf, STALE records, detail names ~/toggle, 0."""
        response = call(scene, SetBool, 'toggle', SetBool.Request(data=False))
        self.assertTrue(response.success)

        def paused():
            detail = scene.message('detail')
            records = scene.records()
            return detail is not None and 'paused by ~/toggle' in detail.status[0].message and \
                records and all(record.status == PairStatus.STALE for record in records)
        wait_until(paused, TIMEOUT, 'the paused outputs')
        scene.wait_for_more('min_distance', 3)
        self.assertEqual(scene.message('min_distance').data, -math.inf)
        self.assertEqual(scene.message('speed_scaling').data, 0.0)
        wait_until(lambda: (lifecycle_entry(scene) or {}).get('enabled') == 'false',
                   TIMEOUT, 'diagnostics saying paused')

        self.assertTrue(call(scene, SetBool, 'toggle', SetBool.Request(data=True)).success)
        wait_until(lambda: scene.message('min_distance').data == pytest.approx(0.35),
                   TIMEOUT, 'measuring again')


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    """The managed node exits cleanly when launch shuts it down."""

    def test_exit_codes(self, proc_info):
        """Every process exited with code 0."""
        launch_testing.asserts.assertExitCodes(proc_info)
