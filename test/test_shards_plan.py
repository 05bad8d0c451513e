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
The shards file and ``launch/shards.launch.py``, without starting anything.

The file is checked before a process starts (``gjk_ros/ros/shards/plan.py``); the launch file
is expanded in a launch context as ``ros2 launch`` would, and the node actions it makes are
read back: one ``gjk_distance`` per shard in its namespace with the file's overrides on top
of ``params_file``, and the aggregator subscribed to exactly those shards.
"""

import importlib.util
import os
import pathlib
import shutil
from unittest import mock

from gjk_ros.ros.launch_arguments import cpu_command, cpu_prefix
from gjk_ros.ros.shards.plan import read_shards
import pytest
import yaml

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = REPO_ROOT / 'config' / 'shards.yaml'
LAUNCH_FILE = REPO_ROOT / 'launch' / 'shards.launch.py'


def write(tmp_path, text, name='shards.yaml'):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_the_example_splits_the_panda_with_complementary_patterns():
    arm, hand = read_shards(str(EXAMPLE), 'robot')
    assert (arm.node, hand.node) == ('/robot/arm/gjk_distance', '/robot/hand/gjk_distance')
    assert arm.parameters == {'link_include': ['panda_link[0-4]']}
    assert hand.parameters == {'link_exclude': ['panda_link[0-4]']}


def test_namespaces_nest_under_the_launch_namespace():
    assert read_shards(str(EXAMPLE), '/a/b/')[0].namespace == '/a/b/arm'
    assert read_shards(str(EXAMPLE))[0].node == '/arm/gjk_distance'


@pytest.mark.parametrize('text, named', [
    ('shards: [a, b]', "no 'shards' mapping"),
    ('shards: {}', '0 shards'),
    ('shards: {a: {parameters: {link_includ: [x]}}}', "'link_includ' is not a gjk_distance"),
    ('shards: {a: {parameters: {rate_hz: fast}}}', 'shard a: parameter rate_hz'),
    ('shards: {a: {parameters: [x]}}', 'parameters must be a mapping'),
    ('shards: {a: {params: {}}}',
     'shard a: an entry may only have parameters, remappings, cpus'),
    ('shards: {a: {cpus: 0}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a: {cpus: []}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a: {cpus: [-1]}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a: {cpus: [1.0]}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a: {cpus: [true]}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a: {cpus: [1024]}}', 'shard a: cpus must be a non-empty list'),
    ('shards: {a b: {}}', "shard name 'a b' is not a namespace token"),
    ('shards: {a: {remappings: {x: 1}}}', 'remappings must map topic names'),
    ('shards: {a: [unclosed', 'cannot be read: ParserError at line 1'),
])
def test_a_bad_file_is_refused_naming_file_shard_and_parameter(tmp_path, text, named):
    with pytest.raises(ValueError, match=named) as error:
        read_shards(write(tmp_path, text, 'bad_shards.yaml'))
    assert 'bad_shards.yaml' in str(error.value)


def test_cpus_pin_a_shard_to_cpus_the_launch_may_use(tmp_path):
    path = write(tmp_path, 'shards: {a: {cpus: [3, 1, 3]}, b: {}}', 'pinned.yaml')
    a, b = read_shards(path, available_cpus={0, 1, 2, 3})
    assert (a.cpus, b.cpus) == ((1, 3), ())
    with pytest.raises(ValueError, match=r'pinned.yaml: shard a: cpus 3: not CPUs this launch '
                                         r'may use \(0, 1\)'):
        read_shards(path, available_cpus={0, 1})


def test_the_cpu_prefix_runs_taskset_or_says_it_is_missing():
    assert cpu_prefix(()) == ''
    assert cpu_prefix((0, 2), taskset='/usr/bin/taskset') == '/usr/bin/taskset --cpu-list 0,2'
    assert cpu_command((1,), taskset='taskset') == ['taskset', '--cpu-list', '1']
    assert cpu_command(()) == []
    with mock.patch('shutil.which', return_value=None):
        with pytest.raises(RuntimeError, match='taskset'):
            cpu_prefix((0,))


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ValueError, match='missing.yaml cannot be read: FileNotFoundError'):
        read_shards(str(tmp_path / 'missing.yaml'))


def test_observation_blocks_pass_through_to_the_node(tmp_path):
    (shard,) = read_shards(write(tmp_path, yaml.safe_dump({'shards': {'left': {
        'parameters': {'observation_sources': ['left'], 'obstacle_include': ['left'],
                       'left': {'type': 'pointcloud', 'topic': '/left/points'}},
        'remappings': {'~/obstacles': '/perception/obstacles'}}}})))
    assert shard.parameters['left'] == {'type': 'pointcloud', 'topic': '/left/points'}
    assert shard.remappings == (('~/obstacles', '/perception/obstacles'),)


def _expand(arguments):
    """Expand the launch file in a context as ``ros2 launch`` would; return its node actions."""
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument
    spec = importlib.util.spec_from_file_location('shards_launch', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    context = LaunchContext()
    for entity in module.generate_launch_description().entities:
        if isinstance(entity, DeclareLaunchArgument):
            context.launch_configurations[entity.name] = ''.join(
                part.perform(context) for part in entity.default_value)
    context.launch_configurations.update(arguments)
    nodes = module._nodes(context)
    for node in nodes:
        node._perform_substitutions(context)
    return nodes


def _parameters(node):
    """Every parameter a node action passes, later files winning, as the node reads them."""
    merged = {}
    for path, _ in node._Node__expanded_parameter_arguments:
        for section in (yaml.load(pathlib.Path(path).read_text(), Loader=yaml.Loader) or
                        {}).values():
            merged.update(section.get('ros__parameters', {}))
    return merged


def test_the_launch_file_starts_one_node_per_shard_and_the_aggregator(tmp_path):
    pytest.importorskip('launch_ros')
    shards = write(tmp_path, yaml.safe_dump({'shards': {
        'near': {'parameters': {'obstacle_include': ['near*'], 'rate_hz': 50.0}},
        'far': {'parameters': {'obstacle_exclude': ['near*']},
                'remappings': {'~/links': '/far_links'}}}}, sort_keys=False))
    near, far, aggregator = _expand({'shards_file': shards, 'namespace': 'robot',
                                     'params_file': str(REPO_ROOT / 'config' /
                                                        'gjk_distance.yaml'),
                                     'fixed_frame': 'base', 'obstacles_topic': '/obstacles',
                                     'deadline': '0.5'})
    assert [node.node_name for node in (near, far, aggregator)] == [
        '/robot/near/gjk_distance', '/robot/far/gjk_distance', '/robot/gjk_aggregator']
    assert near.node_executable == 'gjk_distance_node'
    assert aggregator.node_executable == 'gjk_aggregator'
    # The file's overrides win over params_file and the launch arguments' fixed_frame holds.
    near_parameters, far_parameters = _parameters(near), _parameters(far)
    assert list(near_parameters['obstacle_include']) == ['near*']
    assert near_parameters['rate_hz'] == 50.0 and far_parameters['rate_hz'] == 30.0
    assert list(far_parameters['obstacle_exclude']) == ['near*']
    assert near_parameters['fixed_frame'] == far_parameters['fixed_frame'] == 'base'
    assert ('~/obstacles', '/obstacles') in near._Node__expanded_remappings
    assert ('~/links', '/far_links') in far._Node__expanded_remappings
    assert ('~/links', '/far_links') not in near._Node__expanded_remappings
    assert list(_parameters(aggregator)['shards']) == ['/robot/near/gjk_distance',
                                                       '/robot/far/gjk_distance']
    assert _parameters(aggregator)['deadline'] == 0.5


def test_a_shard_with_cpus_starts_under_taskset(tmp_path):
    pytest.importorskip('launch_ros')
    if shutil.which('taskset') is None:
        pytest.skip('no taskset (util-linux) here')
    from launch.utilities import perform_substitutions
    from launch import LaunchContext
    cpu = min(os.sched_getaffinity(0))
    document = {'shards': {'pinned': {'cpus': [cpu]}, 'free': {}}}
    shards = write(tmp_path, yaml.safe_dump(document, sort_keys=False))
    pinned, free, _ = _expand({'shards_file': shards,
                               'params_file': str(REPO_ROOT / 'config' / 'gjk_distance.yaml')})
    prefix = perform_substitutions(LaunchContext(), pinned.process_description.prefix)
    assert prefix.split()[1:] == ['--cpu-list', str(cpu)]
    assert not perform_substitutions(LaunchContext(), free.process_description.prefix)


def test_the_launch_file_can_leave_the_aggregator_to_another_machine(tmp_path):
    pytest.importorskip('launch_ros')
    nodes = _expand({'shards_file': str(EXAMPLE), 'run_aggregator': 'false',
                     'params_file': str(REPO_ROOT / 'config' / 'gjk_distance.yaml')})
    assert [node.node_executable for node in nodes] == ['gjk_distance_node'] * 2


def test_setup_declares_the_aggregator_script():
    """``tools/install_layout.py`` places every declared script in lib/gjk_ros/."""
    spec = importlib.util.spec_from_file_location('install_layout',
                                                  REPO_ROOT / 'tools' / 'install_layout.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert 'gjk_aggregator' in module.read_setup()[2]
