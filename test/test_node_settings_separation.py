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
Each separation group's ``<group>.*`` parameter, set at run time through the real node.

The groups come from the parameter file, as observation sources do: ``people`` watches the
marker box ``near/0`` with every rated term set, ``fixtures`` has a refused ``human_speed``.
The arm is static, so ``v_r`` is 0 and a group's margin is ``d - S_p`` with
``S_p = v_h (T_r + T_s) + S_s + C + Z_d + Z_r`` (docs/motion.md): each check sets parameters
and waits for the margin in ``~/safety_detail`` to be that formula, worked here, on the
record's distance. ``GROUP_EFFECTS`` joins test_node_settings' every-parameter check.
"""

import math
import os

from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, marker, NodeProcess, Scene, session_domain_id,
                          set_or_fail, STARTUP_TIMEOUT, wait_until)
import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import Float64

pytestmark = pytest.mark.ros

URDF = box_urdf('ssmbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))]})
PREFIX = '/gjk_distance/'
TERMS = {'human_speed': 1.6, 'reaction_time': 0.05, 'stopping_time': 0.05,
         'stopping_distance': 0.02, 'intrusion_distance': 0.01, 'human_uncertainty': 0.005,
         'robot_uncertainty': 0.005}
START = {'rate_hz': 20.0, 'obstacle_timeout': 1.0, 'max_distance': 5.0,
         'separation_groups': ['people', 'fixtures'],
         'people': dict(TERMS, obstacles=['near*']),
         'fixtures': dict(TERMS, obstacles=['near*'], human_speed=-1.0)}


def protective_distance(terms, table_row=None):
    """Return ``S_p`` at ``v_r`` 0; ``table_row`` ``(S_s, T_s)`` replaces the constants."""
    stopping_distance, stopping_time = table_row or (terms['stopping_distance'],
                                                     terms['stopping_time'])
    return (terms['human_speed'] * (terms['reaction_time'] + stopping_time)
            + stopping_distance + terms['intrusion_distance'] + terms['human_uncertainty']
            + terms['robot_uncertainty'])


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    """Start one distance node for the module, always stopped at the end."""
    with NodeProcess(os.environ, tmp_path_factory.mktemp('group_settings'), START) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    """Publish the arm and two boxes; wait for both measured pairs and a people margin."""
    with Scene(session_domain_id()) as scene:
        scene.subscribe('scaling', Float64, PREFIX + 'speed_scaling')
        scene.subscribe('detail', DiagnosticArray, PREFIX + 'safety_detail')
        scene.send_static_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        scene.send_markers([marker('near', 0, xyz=(0.5, 0.0, 0.0)),
                            marker('far', 0, xyz=(0.9, 0.0, 0.0))])
        scene.wait_for_records(lambda records: all(
            find_record(records, 'arm', name) is not None and
            find_record(records, 'arm', name).status == PairStatus.VALID
            for name in ('near/0', 'far/0')), STARTUP_TIMEOUT, node_process=node)
        wait_for_margin(scene, node, 'near/0', TERMS)
        yield scene


def detail(scene):
    message = scene.message('detail')
    return {} if message is None else {item.key: item.value
                                       for item in message.status[0].values}


def margin_is(scene, obstacle, terms, table_row=None):
    """Whether people's margin is the formula's on ``obstacle``'s record, and names it."""
    values, record = detail(scene), find_record(scene.records() or [], 'arm', obstacle)
    if record is None or 'separation people margin' not in values:
        return False
    wanted = record.distance - protective_distance(terms, table_row)
    return values.get('separation people pair') == 'arm to ' + obstacle and \
        abs(float(values['separation people margin']) - wanted) < 1e-12


def wait_for_margin(scene, node, obstacle, terms, table_row=None):
    wait_until(lambda: margin_is(scene, obstacle, terms, table_row),
               what='the people margin on %s with %s' % (obstacle, terms), node_process=node)


def people(**values):
    return {'people.' + name: value for name, value in values.items()}


def check_obstacles(scene, node):
    set_or_fail(scene, **people(obstacles=['far*']))
    wait_for_margin(scene, node, 'far/0', TERMS)
    set_or_fail(scene, **people(obstacles=['near*']))
    wait_for_margin(scene, node, 'near/0', TERMS)


def check_terms(scene, node):
    # Each term alone moves the margin by what the formula says; .nan unsets it (unknown).
    terms = dict(TERMS)
    for name, value in (('human_speed', 2.0), ('reaction_time', 0.08), ('stopping_time', 0.1),
                        ('stopping_distance', 0.04), ('intrusion_distance', 0.03),
                        ('human_uncertainty', 0.015), ('robot_uncertainty', 0.025)):
        set_or_fail(scene, **people(**{name: value}))
        terms[name] = value
        wait_for_margin(scene, node, 'near/0', terms)
    set_or_fail(scene, **people(robot_uncertainty=math.nan))
    wait_until(lambda: detail(scene).get('separation people missing') == 'robot_uncertainty'
               and detail(scene)['separation people margin'] == '-inf',
               what='people unknown without Z_r', node_process=node)
    set_or_fail(scene, **people(**TERMS))
    wait_for_margin(scene, node, 'near/0', TERMS)


def check_table(scene, node):
    # A stopping table replaces T_s and S_s: at v_r 0 its first row.
    table = people(stopping_table_speeds=[0.0, 1.0], stopping_table_distances=[0.03, 0.2],
                   stopping_table_times=[0.07, 0.3])
    set_table(scene, table)
    wait_for_margin(scene, node, 'near/0', TERMS, table_row=(0.03, 0.07))
    set_table(scene, {name: [] for name in table})
    wait_for_margin(scene, node, 'near/0', TERMS)


def set_table(scene, columns):
    """Set the table's columns in one call (doubles: set_or_fail would send strings)."""
    answers = scene.set_node_parameters([Parameter(name, value=value)
                                         for name, value in columns.items()])
    assert all(answer.successful for answer in answers), [a.reason for a in answers]


GROUP_EFFECTS = [
    (('<group>.obstacles',), check_obstacles),
    (('<group>.human_speed', '<group>.reaction_time', '<group>.stopping_time',
      '<group>.stopping_distance', '<group>.intrusion_distance', '<group>.human_uncertainty',
      '<group>.robot_uncertainty'), check_terms),
    (('<group>.stopping_table_speeds', '<group>.stopping_table_distances',
      '<group>.stopping_table_times'), check_table),
]


@pytest.mark.parametrize('names, check', GROUP_EFFECTS,
                         ids=['+'.join(names) for names, _ in GROUP_EFFECTS])
def test_group_setting_at_run_time_takes_effect(scene, node, names, check):
    check(scene, node)
    assert node.alive()


def test_a_refused_file_value_leaves_its_group_unknown_until_set(scene, node):
    wait_until(lambda: detail(scene).get('separation fixtures reason', '').startswith(
        'fixtures.human_speed: ') and detail(scene)['separation fixtures margin'] == '-inf',
        what='fixtures unknown, naming its refused human_speed', node_process=node)
    assert scene.message('scaling').data == 0.0, 'an unknown group stops the robot'
    refused = scene.set_node_parameters([Parameter('fixtures.human_speed', value=-2.0)])
    assert not refused[0].successful and 'fixtures.human_speed' in refused[0].reason
    set_or_fail(scene, **{'fixtures.human_speed': 1.6})
    wait_until(lambda: 'separation fixtures reason' not in detail(scene) and
               detail(scene).get('separation fixtures margin') ==
               detail(scene).get('separation people margin') and
               scene.message('scaling').data == 1.0,
               what='fixtures measured once set', node_process=node)
