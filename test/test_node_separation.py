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
Speed and separation monitoring through the real node: a group's margin topic and the detail.

A static arm 0.35 m from a marker box: the closing speed is 0 (static transforms), so the
margin of group ``people`` is ``d - v_h (T_r + T_s) - S_s - C - Z_d - Z_r`` = d - 0.2. Group
``fixtures`` leaves its rated terms unset: unknown, so ``~/speed_scaling`` is 0 and the detail
names the missing terms. ``SEPARATION_EFFECTS`` joins test_node_settings' table of run-time
checks (``separation_groups`` is set at run time here).
"""

import math
import os

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, marker, NodeProcess, Scene, session_domain_id,
                          set_or_fail, STARTUP_TIMEOUT, wait_until)
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import Range
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros

URDF = box_urdf('ssmbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
START = {'rate_hz': 20.0, 'obstacle_timeout': 1.0, 'max_distance': 5.0}
# v_h (T_r + T_s) + S_s + C + Z_d + Z_r = 1.6 * 0.1 + 0.02 + 0.01 + 0.005 + 0.005 = 0.2.
TERMS = (('reaction_time', 0.05), ('stopping_time', 0.05), ('stopping_distance', 0.02),
         ('intrusion_distance', 0.01), ('human_uncertainty', 0.005),
         ('robot_uncertainty', 0.005))
PREFIX = '/gjk_distance/'


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    """Start one distance node for the module, always stopped at the end."""
    with NodeProcess(os.environ, tmp_path_factory.mktemp('separation'), START) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    """Publish the arm and the box; wait for the measured pair."""
    with Scene(session_domain_id()) as scene:
        scene.subscribe('scaling', Float64, PREFIX + 'speed_scaling')
        scene.subscribe('detail', DiagnosticArray, PREFIX + 'safety_detail')
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('near', 0, xyz=(0.5, 0.0, 0.0))])
        scene.wait_for_records(lambda records: find_record(records, 'arm', 'near/0') is not None
                               and find_record(records, 'arm', 'near/0').status ==
                               PairStatus.VALID, STARTUP_TIMEOUT, node_process=node)
        yield scene


def _detail(scene):
    return {item.key: item.value for item in scene.message('detail').status[0].values}


def check_separation_groups(scene, node, tmp_path):
    # Groups set at run time declare their <group>.* parameters, unset: unknown.
    set_or_fail(scene, separation_groups=['people', 'fixtures'])
    scene.subscribe('margin', Range, PREFIX + 'separation_margin/people')
    scene.subscribe('people_scaling', Float64, PREFIX + 'separation_scaling/people')
    scene.subscribe('fixtures', Range, PREFIX + 'separation_margin/fixtures')
    wait_until(lambda: scene.message('fixtures') is not None and
               scene.message('fixtures').range == -math.inf and
               scene.message('scaling').data == 0.0, what='unset groups unknown',
               node_process=node)
    set_or_fail(scene, **{'people.obstacles': ['near*'], 'fixtures.obstacles': ['near*'],
                          'fixtures.reaction_time': 0.05},
                **{'people.' + name: value for name, value in TERMS})
    wait_until(lambda: scene.message('margin') is not None and
               math.isfinite(scene.message('margin').range) and
               'separation people margin' in _detail(scene) and
               math.isfinite(float(_detail(scene)['separation people margin'])),
               what='a measured margin', node_process=node)
    record = find_record(scene.records(), 'arm', 'near/0')
    assert record.closing_speed == 0.0 and record.time_to_contact == math.inf
    assert record.distance == pytest.approx(0.35, abs=1e-9)
    margin, values = scene.message('margin'), _detail(scene)
    assert margin.header.frame_id == 'world'
    # Range.range is a float32: the margin is rounded down to one, never up.
    exact = float(values['separation people margin'])
    assert exact == pytest.approx(record.distance - 0.2, abs=1e-12)
    assert margin.range <= exact and margin.range == pytest.approx(exact, abs=1e-7)
    assert scene.message('people_scaling').data == 1.0
    assert values['separation people scaling'] == '1.0'
    assert values['separation people pair'] == 'arm to near/0'
    assert values['separation people robot_speed'] == '0.0'
    assert values['separation fixtures missing'] == (
        'stopping_time, stopping_distance, intrusion_distance, human_uncertainty, '
        'robot_uncertainty')
    assert values['separation fixtures margin'] == '-inf'
    assert scene.message('fixtures').range == -math.inf
    assert scene.message('scaling').data == 0.0, 'an unknown group stops the robot'
    # Supplying the terms makes the group known, and the scaling free; a bad one is refused.
    set_or_fail(scene, **{'fixtures.' + name: value for name, value in TERMS[1:]})
    wait_until(lambda: scene.message('scaling').data == 1.0 and
               scene.message('fixtures').range == margin.range,
               what='the completed group measured', node_process=node)
    refused = scene.set_node_parameters([Parameter('fixtures.reaction_time', value=-1.0)])
    assert not refused[0].successful and 'fixtures.reaction_time' in refused[0].reason
    # Without groups, ~/speed_scaling is the distance ramp alone again.
    set_or_fail(scene, separation_groups=['fixtures'], **{'fixtures.reaction_time': math.nan})
    wait_until(lambda: scene.message('scaling').data == 0.0, what='fixtures unset again',
               node_process=node)
    set_or_fail(scene, separation_groups=[])
    # ~/speed_scaling goes before ~/safety_detail: wait for both of the same cycle.
    wait_until(lambda: scene.message('scaling').data == 1.0 and
               'separation fixtures margin' not in _detail(scene),
               what='no group, the ramp alone', node_process=node)
    assert node.alive()


SEPARATION_EFFECTS = [
    (('separation_groups',), check_separation_groups),
]


@pytest.mark.parametrize('names, check', SEPARATION_EFFECTS,
                         ids=['+'.join(names) for names, _ in SEPARATION_EFFECTS])
def test_setting_at_run_time_takes_effect(scene, node, tmp_path, names, check):
    check(scene, node, tmp_path)
