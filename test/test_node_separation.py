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
names the missing terms.
"""

import math

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, marker, NodeProcess, Scene, STARTUP_TIMEOUT,
                          wait_until)
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import Range
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros

URDF = box_urdf('ssmbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
# v_h (T_r + T_s) + S_s + C + Z_d + Z_r = 1.6 * 0.1 + 0.02 + 0.01 + 0.005 + 0.005 = 0.2.
PARAMETERS = {'rate_hz': 20.0, 'obstacle_timeout': 1.0, 'max_distance': 5.0,
              'separation_groups': ['people', 'fixtures'],
              'people.obstacles': ['near*'], 'people.reaction_time': 0.05,
              'people.stopping_time': 0.05, 'people.stopping_distance': 0.02,
              'people.intrusion_distance': 0.01, 'people.human_uncertainty': 0.005,
              'people.robot_uncertainty': 0.005,
              'fixtures.obstacles': ['near*'], 'fixtures.reaction_time': 0.05}


def test_a_group_margin_topic_and_the_detail_carry_the_formula(ros_env, tmp_path):
    with NodeProcess(ros_env, tmp_path, PARAMETERS) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        prefix = '/gjk_distance/'
        scene.subscribe('margin', Range, prefix + 'separation_margin/people')
        scene.subscribe('people_scaling', Float64, prefix + 'separation_scaling/people')
        scene.subscribe('fixtures', Range, prefix + 'separation_margin/fixtures')
        scene.subscribe('scaling', Float64, prefix + 'speed_scaling')
        scene.subscribe('detail', DiagnosticArray, prefix + 'safety_detail')
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('near', 0, xyz=(0.5, 0.0, 0.0))])
        scene.wait_for_records(lambda records: find_record(records, 'arm', 'near/0') is not None
                               and find_record(records, 'arm', 'near/0').status ==
                               PairStatus.VALID, STARTUP_TIMEOUT, node_process=node)
        wait_until(lambda: scene.message('margin') is not None and
                   math.isfinite(scene.message('margin').range) and
                   scene.message('detail') is not None, what='a measured margin',
                   node_process=node)
        record = find_record(scene.records(), 'arm', 'near/0')
        assert record.closing_speed == 0.0 and record.time_to_contact == math.inf
        margin = scene.message('margin')
        values = {item.key: item.value for item in scene.message('detail').status[0].values}
        assert margin.header.frame_id == 'world'
        # Range.range is a float32: the margin is rounded down to one, never up.
        exact = float(values['separation people margin'])
        assert exact == pytest.approx(record.distance - 0.2, abs=1e-12)
        assert margin.range <= exact and margin.range == pytest.approx(exact, abs=1e-7)
        assert record.distance == pytest.approx(0.35, abs=1e-9)
        assert scene.message('people_scaling').data == 1.0
        assert scene.message('fixtures').range == -math.inf
        assert scene.message('scaling').data == 0.0, 'an unknown group stops the robot'
        assert values['separation people scaling'] == '1.0'
        assert values['separation people pair'] == 'arm to near/0'
        assert values['separation fixtures missing'] == (
            'stopping_time, stopping_distance, intrusion_distance, human_uncertainty, '
            'robot_uncertainty')
        assert values['separation fixtures margin'] == '-inf'
        # Supplying the terms at run time makes the group known, and the scaling free.
        results = scene.set_node_parameters([
            Parameter('fixtures.' + name, value=value) for name, value in (
                ('stopping_time', 0.05), ('stopping_distance', 0.02),
                ('intrusion_distance', 0.01), ('human_uncertainty', 0.005),
                ('robot_uncertainty', 0.005))])
        assert all(result.successful for result in results)
        refused = scene.set_node_parameters([Parameter('fixtures.reaction_time', value=-1.0)])
        assert not refused[0].successful and 'fixtures.reaction_time' in refused[0].reason
        wait_until(lambda: scene.message('scaling').data == 1.0 and
                   scene.message('fixtures').range == margin.range,
                   what='the completed group measured', node_process=node)
        assert node.alive()
