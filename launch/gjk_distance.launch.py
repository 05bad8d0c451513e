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
Start the gjk_distance node.

Launch arguments:

- ``params_file``: parameter file (default: the installed ``config/gjk_distance.yaml``);
- ``namespace``: namespace of the node (e.g. one instance per arm: ``left``, ``right``);
- ``fixed_frame``: if not empty, overrides the ``fixed_frame`` of the parameter file.

Example::

    ros2 launch gjk_ros gjk_distance.launch.py namespace:=left fixed_frame:=base_link
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _node(context):
    """Build the node once the launch arguments are known."""
    parameters = [LaunchConfiguration('params_file').perform(context)]
    fixed_frame = LaunchConfiguration('fixed_frame').perform(context)
    if fixed_frame:
        parameters.append({'fixed_frame': fixed_frame})
    return [Node(
        package='gjk_ros',
        executable='gjk_distance_node',
        name='gjk_distance',
        namespace=LaunchConfiguration('namespace'),
        parameters=parameters,
        output='screen',
        emulate_tty=True,
    )]


def generate_launch_description():
    """Launch description with the params_file, namespace and fixed_frame arguments."""
    default_params = os.path.join(get_package_share_directory('gjk_ros'), 'config',
                                  'gjk_distance.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='Parameter file of the gjk_distance node.'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace of the node.'),
        DeclareLaunchArgument('fixed_frame', default_value='',
                              description='Overrides fixed_frame of the parameter file '
                                          'when not empty.'),
        OpaqueFunction(function=_node),
    ])
