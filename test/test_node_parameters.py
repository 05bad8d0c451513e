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

"""Node parameters: validation, the shipped parameter file, the launch file, a live node."""

import ast
import json
import math
import pathlib

from gjk_ros.ros.params import (Config, PARAMETERS, parse_body_descriptions,
                                validate_parameter)
import pytest
import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIG = REPO_ROOT / 'config' / 'gjk_distance.yaml'
LAUNCH = REPO_ROOT / 'launch' / 'gjk_distance.launch.py'
# What every launch file that starts gjk_distance shares: its arguments and its node action.
LAUNCH_ARGUMENTS = REPO_ROOT / 'gjk_ros' / 'ros' / 'launch_arguments.py'


@pytest.mark.parametrize('name, value, reason', [
    ('rate_hz', 0.0, 'must be > 0'),
    ('rate_hz', 5000.0, 'must be in'),
    ('rate_hz', math.nan, 'NaN'),
    ('rate_hz', 'fast', 'expected a double'),
    ('tf_timeout', -1.0, 'must be > 0'),
    ('max_distance', 0.0, 'must be > 0'),
    ('padding', -0.01, 'must be in'),
    ('fixed_frame', '/', 'must name a frame'),
    ('link_include', ['arm', ''], 'non-empty'),
    ('allowed_pairs', ['arm'], 'link_pattern:obstacle_pattern'),
    ('allowed_pairs', [':box/*'], 'link_pattern:obstacle_pattern'),
    ('link_padding', ['panda_hand'], "'pattern:metres'"),
    ('link_padding', ['panda_hand:-0.1'], "'pattern:metres'"),
    ('link_padding', ['panda_hand:nan'], "'pattern:metres'"),
    ('obstacle_padding', [':0.1'], "'pattern:metres'"),
    ('obstacle_padding', ['people/*:1e9'], "'pattern:metres'"),
    ('obstacle_padding', ['a:0.1'] * 1001, 'at most 1000 entries'),
    ('static_obstacles', '{not: [closed', 'YAML'),
    ('static_obstacles', '{"name": "x"}', 'expected a list'),
    ('static_obstacles', '[{"type": "box"}]', 'name'),
    ('publish_markers', 1.0, 'expected a bool'),
])
def test_bad_values_are_rejected_with_a_reason(name, value, reason):
    message = validate_parameter(name, value)
    assert message is not None and reason in message


@pytest.mark.parametrize('name, value', [
    ('rate_hz', 1000.0), ('rate_hz', 30), ('tf_timeout', 0.01), ('max_distance', math.inf),
    ('padding', 0.0), ('fixed_frame', 'base_link'), ('link_exclude', []),
    ('allowed_pairs', ['gripper*:*', '*:table']), ('static_obstacles', ''),
    ('hill_climbing', False), ('link_padding', ['panda_hand:0.02', 'panda_link[67]:0.01']),
    ('obstacle_padding', ['people/*:0.3', 'ns:with:colons/*:0']),
])
def test_good_values_pass(name, value):
    assert validate_parameter(name, value) is None


def test_body_descriptions():
    text = yaml.safe_dump([
        {'name': 'table', 'frame_id': '/world', 'pieces': [
            {'type': 'box', 'size': [1, 1, 0.1]}, {'type': 'sphere', 'radius': 0.1}]},
        {'name': 'post', 'type': 'cylinder', 'radius': 0.1, 'length': 1.0},
    ])
    assert parse_body_descriptions(text) == [
        ('table', 'world', [{'type': 'box', 'size': [1, 1, 0.1]},
                            {'type': 'sphere', 'radius': 0.1}]),
        ('post', '', [{'type': 'cylinder', 'radius': 0.1, 'length': 1.0}]),
    ]
    assert parse_body_descriptions(json.dumps([{'name': 'p', 'type': 'sphere',
                                                'radius': 1}]))[0][0] == 'p'
    assert parse_body_descriptions('  ') == []
    with pytest.raises(ValueError, match='duplicate'):
        parse_body_descriptions('[{name: a, type: sphere}, {name: a, type: sphere}]')
    with pytest.raises(ValueError, match='unexpected keys'):
        parse_body_descriptions('[{name: a, type: sphere, pieces: [{type: box}]}]')


def test_scope():
    config = Config.from_values({'link_include': ['arm_*', 'tool'], 'link_exclude': ['*_3'],
                                 'obstacle_exclude': ['people/*'],
                                 'allowed_pairs': ['tool:*', 'arm_*:table*'],
                                 'fixed_frame': '/map'})
    assert config.fixed_frame == 'map'
    assert [config.link_in_scope(n) for n in ('arm_1', 'arm_3', 'tool', 'base')] == [
        True, False, True, False]
    assert config.obstacle_in_scope('boxes/1') and not config.obstacle_in_scope('people/4')
    assert config.pair_allowed('tool', 'boxes/1') and config.pair_allowed('arm_1', 'table')
    assert not config.pair_allowed('arm_1', 'boxes/1')
    assert Config().pair_allowed('anything', 'at all')


def test_parameter_file_lists_every_parameter_with_its_default_and_a_comment():
    values = yaml.safe_load(CONFIG.read_text())['/**']['ros__parameters']
    assert list(values) == [spec.name for spec in PARAMETERS]
    for spec in PARAMETERS:
        assert values[spec.name] == spec.default, spec.name
    lines = CONFIG.read_text().splitlines()
    for index, line in enumerate(lines):
        if line.startswith('    ') and not line.startswith('     ') and ':' in line and \
                not line.lstrip().startswith('#'):
            assert lines[index - 1].lstrip().startswith('#'), 'no comment above: ' + line
    assert Config.from_values(values) == Config()


def test_launch_file_declares_its_arguments():
    calls = [node for path in (LAUNCH, LAUNCH_ARGUMENTS)
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)]
    arguments = [call.args[0].value for call in calls
                 if getattr(call.func, 'id', '') == 'DeclareLaunchArgument']
    assert sorted(arguments) == sorted([
        'params_file', 'namespace', 'fixed_frame', 'robot_description_topic', 'rviz',
        'use_sim_time', 'log_level', 'respawn', 'respawn_delay', 'autostart', 'scene_files'])
    nodes = [{kw.arg: getattr(kw.value, 'value', getattr(kw.value, 'id', None))
              for kw in call.keywords}
             for call in calls if getattr(call.func, 'id', '') in ('Node', 'LifecycleNode')]
    assert sorted((node['package'], node['executable']) for node in nodes) == [
        ('gjk_ros', 'gjk_distance_node'), ('gjk_ros', 'scene_publisher'), ('rviz2', 'rviz2')]
    (keywords,) = [node for node in nodes if node['executable'] == 'gjk_distance_node']
    assert keywords['name'] == 'gjk_distance'


@pytest.fixture
def live_node(rclpy_context):
    """Create a DistanceNode in the test process, on the test's own domain."""
    from gjk_ros.ros.node import DistanceNode
    from rclpy.parameter import Parameter
    node = DistanceNode(context=rclpy_context, parameter_overrides=[
        Parameter('rate_hz', value=-5.0),
        Parameter('allowed_pairs', value=['arm:*']),
    ])
    yield node
    node.destroy_node()


@pytest.mark.ros
def test_live_parameters(live_node):
    from rclpy.parameter import Parameter
    # A bad value in the parameter file falls back to the default (logged), not a crash.
    assert live_node.get_parameter('rate_hz').value == 30.0
    assert live_node.get_parameter('allowed_pairs').value == ['arm:*']
    assert live_node.get_parameter('link_exclude').value == []
    (result,) = live_node.set_parameters([Parameter('tf_timeout', value=-1.0)])
    assert not result.successful and 'out of range' in result.reason  # descriptor range
    (result,) = live_node.set_parameters([Parameter('tf_timeout', value=0.0)])
    assert not result.successful and 'tf_timeout: must be > 0' in result.reason  # callback
    (result,) = live_node.set_parameters([Parameter(
        'static_obstacles', value='[{name: slab, type: box, size: [1, 0, 1]}]')])
    assert not result.successful and 'slab' in result.reason
    results = live_node.set_parameters([
        Parameter('rate_hz', value=50.0), Parameter('link_exclude', value=['hand']),
        Parameter('static_obstacles', value='[{name: slab, type: box, size: [1, 1, 1]}]')])
    assert all(result.successful for result in results)
    assert live_node.get_parameter('rate_hz').value == 50.0
    descriptor = live_node.describe_parameter('rate_hz')
    assert descriptor.description and descriptor.floating_point_range[0].to_value == 1000.0


def test_padding_of_a_body_is_its_first_matching_entry():
    config = Config.from_values({'padding': 0.01, 'link_padding': ['hand:0.02', 'h*:0.5'],
                                 'obstacle_padding': ['people/*:0.3', 'people/7:0.9']})
    assert config.link_padding_of('hand') == pytest.approx(0.03)
    assert config.link_padding_of('head') == pytest.approx(0.51)
    assert config.link_padding_of('arm') == pytest.approx(0.01)
    assert config.obstacle_padding_of('people/7') == pytest.approx(0.3)
    assert config.obstacle_padding_of('table/0') == 0.0
