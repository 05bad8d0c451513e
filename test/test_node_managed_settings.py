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
The managed-node and speed-scaling parameters, set through the real node, take effect.

One node serves the module: ``arm`` (a 0.2 m cube at (0, 0, 0.5)) and ``hand`` (a 0.1 m cube at
(0, 0.3, 0.5)) from ``link_geometry``, and the obstacle ``boxes/0`` (a 0.2 m cube at
(0.5, 0, 0.5)): 0.3 m from ``arm``, sqrt(0.35^2 + 0.15^2) m from ``hand``. With the start
ramp (stop 0.1 m, slowdown 0.5 m, margin 0.02 m) the factor rises from 0 to ramp(0.28) = 0.45
(``REST``), and every check leaves it there. ``autostart`` is checked on a node of its own.
``MANAGED_EFFECTS`` joins test_node_settings' table, so no parameter escapes the
every-parameter check.
"""

import math
import os

from gjk_ros.ros.outputs.speed_scaling import ramp, ScalingSettings
from node_harness import (box_urdf, marker, NodeProcess, parameter, Scene,  # noqa: F401
                          session_domain_id, set_or_fail, setting as harness_setting,
                          STARTUP_TIMEOUT, TIMEOUT, wait_until)
import pytest
import yaml

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip('rclpy')

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402, I100
from lifecycle_msgs.msg import State, Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from std_msgs.msg import Float64  # noqa: E402

ARM_TO_BOX = 0.3
HAND_TO_BOX = math.hypot(0.35, 0.15)
START = {'rate_hz': 20.0, 'tf_timeout': 5.0, 'max_distance': 5.0,
         'require_robot_description': False, 'robot_description_timeout': 3600.0,
         'link_geometry': yaml.safe_dump([
             {'name': 'arm', 'frame_id': 'arm', 'type': 'box', 'size': [0.2] * 3},
             {'name': 'hand', 'frame_id': 'hand', 'type': 'box', 'size': [0.1] * 3}]),
         'slowdown_distance': 0.5, 'stop_distance': 0.1, 'scaling_release_margin': 0.02,
         'scaling_trigger_cycles': 1, 'scaling_release_cycles': 3, 'scaling_groups': []}


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('managed_settings'), START) as process:
        yield process


def _prefix(namespace=''):
    return '%s/gjk_distance/' % namespace


def watch_scaling(scene, namespace=''):
    scene.subscribe('speed_scaling', Float64, _prefix(namespace) + 'speed_scaling')
    scene.subscribe('detail', DiagnosticArray, _prefix(namespace) + 'safety_detail')


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        watch_scaling(scene)
        scene.send_tf('world', 'arm', (0.0, 0.0, 0.5))
        scene.send_tf('world', 'hand', (0.0, 0.3, 0.5))
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('boxes', 0, xyz=(0.5, 0.0, 0.5), scale=(0.2, 0.2, 0.2))])
        wait_for_factor(scene, REST, STARTUP_TIMEOUT)
        yield scene


def settings(**changes):
    values = {'slowdown_distance': START['slowdown_distance'],
              'stop_distance': START['stop_distance'],
              'release_margin': START['scaling_release_margin']}
    values.update(changes)
    return ScalingSettings(**values)


REST = ramp(ARM_TO_BOX - START['scaling_release_margin'], settings())


def detail(scene, key='speed_scaling'):
    message = scene.message('detail')
    if message is None:
        return None
    values = {value.key: value.value for value in message.status[0].values}
    return float(values[key]) if key in values else None


def wait_for_factor(scene, factor, timeout=TIMEOUT, key='speed_scaling'):
    wait_until(lambda: detail(scene, key) is not None and
               abs(detail(scene, key) - factor) < 1e-9, timeout,
               '%s %g (last %r)' % (key, factor, detail(scene, key)))


def holds(scene, factor, cycles=20):
    """Tell whether the factor stays ``factor`` for ``cycles`` summaries (1 s at 20 Hz)."""
    scene.start_history('detail')
    scene.wait_for_more('detail', cycles)
    values = [float({v.key: v.value for v in message.status[0].values}['speed_scaling'])
              for message in scene.history('detail')]
    return all(abs(value - factor) < 1e-9 for value in values)


def setting(scene, **values):
    return harness_setting(scene, START, **values)


def check_ramp(scene, node, tmp_path):
    """Check that the ramp follows slowdown/stop and stop >= slowdown is refused."""
    with setting(scene, slowdown_distance=0.6, stop_distance=0.2):
        wait_for_factor(scene, ramp(ARM_TO_BOX, settings(slowdown_distance=0.6,
                                                         stop_distance=0.2)))
    wait_for_factor(scene, REST)
    with setting(scene, stop_distance=0.35):
        wait_for_factor(scene, 0.0)  # inside the stop distance
    wait_for_factor(scene, REST)
    answers = scene.set_node_parameters([parameter('stop_distance', 0.6)])
    assert not answers[0].successful and 'slowdown_distance' in answers[0].reason
    assert holds(scene, REST, 5)


def check_debounce(scene, node, tmp_path):
    """Check that a long trigger debounce holds a lower factor back, and release a higher."""
    lower = settings(slowdown_distance=0.7)
    with setting(scene, scaling_trigger_cycles=1000):
        set_or_fail(scene, slowdown_distance=0.7)
        assert holds(scene, REST)
    wait_for_factor(scene, ramp(ARM_TO_BOX, lower))  # trigger count back to 1
    with setting(scene, scaling_release_cycles=1000):
        set_or_fail(scene, slowdown_distance=0.5)
        assert holds(scene, ramp(ARM_TO_BOX, lower))
    wait_for_factor(scene, REST)


def check_release_margin(scene, node, tmp_path):
    """With no margin the factor rises to the ramp itself; with one, to the shifted ramp."""
    set_or_fail(scene, slowdown_distance=0.7)
    wait_for_factor(scene, ramp(ARM_TO_BOX, settings(slowdown_distance=0.7)))
    with setting(scene, scaling_release_margin=0.0):
        set_or_fail(scene, slowdown_distance=0.5)
        wait_for_factor(scene, ramp(ARM_TO_BOX, settings()))
    set_or_fail(scene, slowdown_distance=0.7)
    wait_for_factor(scene, ramp(ARM_TO_BOX, settings(slowdown_distance=0.7)))
    set_or_fail(scene, slowdown_distance=0.5)
    wait_for_factor(scene, REST)


def check_groups(scene, node, tmp_path):
    """Each group publishes from its own links' minimum; a bad entry is refused."""
    scene.subscribe('hand_group', Float64, _prefix() + 'speed_scaling/hand_group')
    with setting(scene, scaling_groups=['hand_group:hand', 'arm_group:arm']):
        expected = ramp(HAND_TO_BOX - 0.02, settings())
        wait_for_factor(scene, expected, key='speed_scaling hand_group')
        wait_for_factor(scene, REST, key='speed_scaling arm_group')
        wait_until(lambda: scene.message('hand_group') is not None and
                   abs(scene.message('hand_group').data - expected) < 1e-9,
                   TIMEOUT, '~/speed_scaling/hand_group')
    scene.wait_for_more('detail', 3)
    assert detail(scene, 'speed_scaling hand_group') is None
    answers = scene.set_node_parameters([parameter('scaling_groups', ['no name'])])
    assert not answers[0].successful and 'SRDF group' in answers[0].reason


def call(scene, service_type, name, request, namespace):
    client = scene.node.create_client(service_type, _prefix(namespace) + name)
    try:
        wait_until(lambda: client.service_is_ready(), STARTUP_TIMEOUT, name)
        future = client.call_async(request)
        wait_until(future.done, TIMEOUT, 'the %s answer' % name)
        return future.result()
    finally:
        scene.node.destroy_client(client)


def check_autostart(scene, node, tmp_path):
    """Check that without autostart the node is silent until configured and activated."""
    namespace = '/manual'
    with NodeProcess(os.environ, tmp_path / 'manual', dict(START, autostart=False),
                     namespace=namespace) as manual, \
            Scene(session_domain_id(), namespace) as other:
        watch_scaling(other, namespace)
        other.send_tf('world', 'arm', (0.0, 0.0, 0.5))
        state = call(other, GetState, 'get_state', GetState.Request(), namespace)
        assert state.current_state.id == State.PRIMARY_STATE_UNCONFIGURED
        other.wait_for_more('diagnostics', 2)
        assert other.count('min_distance') == 0 and other.count('speed_scaling') == 0
        for transition in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
            request = ChangeState.Request(transition=Transition(id=transition))
            assert call(other, ChangeState, 'change_state', request, namespace).success
        other.wait_for_more('min_distance', 3)
        assert manual.alive()
    answers = scene.set_node_parameters([parameter('autostart', False)])
    assert not answers[0].successful and 'start-up' in answers[0].reason


MANAGED_EFFECTS = [
    (('slowdown_distance', 'stop_distance'), check_ramp),
    (('scaling_trigger_cycles', 'scaling_release_cycles'), check_debounce),
    (('scaling_release_margin',), check_release_margin),
    (('scaling_groups',), check_groups),
    (('autostart',), check_autostart),
]


@pytest.mark.parametrize('names, check', MANAGED_EFFECTS,
                         ids=['+'.join(names) for names, _ in MANAGED_EFFECTS])
def test_setting_at_run_time_takes_effect(scene, node, tmp_path, names, check):
    check(scene, node, tmp_path)


# A chain base -> upper -> hand for the SRDF groups: 'arm' is the chain base..upper (its moving
# link: upper), 'gripper' the link hand. Each link a 0.2 m cube placed by TF; the obstacle a
# 0.2 m cube at (0.6, 0, 0.5): 0.2 m from hand, exactly 0.5 m from upper (0.4 by 0.3).
CHAIN_JOINT = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
               '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
               '</joint>')
CHAIN_URDF = ''.join(
    ['<robot name="chain">'] +
    ['<link name="%s"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>'
     '</link>' % name for name in ('base', 'upper', 'hand')] +
    [CHAIN_JOINT.format('j1', 'base', 'upper'), CHAIN_JOINT.format('j2', 'upper', 'hand'),
     '</robot>'])
CHAIN_SRDF = ('<robot name="chain"><group name="arm"><chain base_link="base" tip_link="upper"/>'
              '</group><group name="gripper"><link name="hand"/></group></robot>')


def test_srdf_groups_scale_from_the_links_moveit_gives_them(ros_env, tmp_path):
    from node_harness import LATCHED_QOS
    from std_msgs.msg import String
    parameters = dict(START, link_geometry='[]',
                      scaling_groups=['arm', 'gripper', 'legs', 'hands:hand'])
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        watch_scaling(scene)
        scene.send_tf('world', 'base', (0.0, -0.5, 0.5))
        scene.send_tf('world', 'upper', (0.0, 0.5, 0.5))
        scene.send_tf('world', 'hand', (0.2, 0.0, 0.5))
        scene.send_urdf(CHAIN_URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('boxes', 0, xyz=(0.6, 0.0, 0.5), scale=(0.2, 0.2, 0.2))])
        hand = ramp(0.2 - START['scaling_release_margin'], settings())
        wait_for_factor(scene, hand, STARTUP_TIMEOUT)
        wait_for_factor(scene, hand, key='speed_scaling hands')
        # Before the SRDF arrives its groups are unknown: 0.
        assert detail(scene, 'speed_scaling arm') == 0.0
        semantic = scene.node.create_publisher(String, '/robot_description_semantic',
                                               LATCHED_QOS)
        semantic.publish(String(data=CHAIN_SRDF))
        wait_for_factor(scene, hand, key='speed_scaling gripper')
        wait_for_factor(scene, ramp(0.5 - START['scaling_release_margin'], settings()),
                        key='speed_scaling arm')
        assert detail(scene, 'speed_scaling legs') == 0.0  # not in the SRDF: unknown
