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

"""The launch file's ``scene_files`` argument: a scene_publisher beside the node, or none."""

import importlib.util
import pathlib

import pytest

pytest.importorskip('launch_ros')

from launch import LaunchContext  # noqa: E402, I100

LAUNCH_FILE = pathlib.Path(__file__).resolve().parent.parent / 'launch' / 'gjk_distance.launch.py'
ARGUMENTS = {'params_file': 'params.yaml', 'use_sim_time': 'false', 'autostart': 'true',
             'fixed_frame': '', 'namespace': '', 'robot_description_topic': '/robot_description',
             'log_level': 'info', 'respawn': 'false', 'respawn_delay': '1.0', 'rviz': 'false'}


def launched(scene_files):
    """Return the actions the launch file builds for a ``scene_files`` argument."""
    spec = importlib.util.spec_from_file_location('gjk_distance_launch', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    context = LaunchContext()
    context.launch_configurations.update(ARGUMENTS, scene_files=scene_files)
    return module, context, module._node(context)


def test_scene_files_start_a_scene_publisher_beside_the_node():
    module, context, actions = launched(' /w/a.yaml, /w/b.scene,, ')
    assert module._scene_files(context) == ['/w/a.yaml', '/w/b.scene']
    node, publisher = actions
    assert (publisher.node_package, publisher.node_executable) == ('gjk_ros', 'scene_publisher')
    assert node.node_executable == 'gjk_distance_node'


def test_no_scene_files_no_publisher():
    module, context, actions = launched('')
    assert module._scene_files(context) == []
    (node,) = actions
    assert node.node_executable == 'gjk_distance_node'
