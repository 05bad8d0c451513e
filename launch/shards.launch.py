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
Start a sharded robot: one gjk_distance process per shard, and the gjk_aggregator.

Each shard of ``shards_file`` (``config/shards.yaml``: its name, the parameters it overrides
on top of ``params_file``, optional remappings; ``gjk_ros/ros/shards/plan.py`` checks it) runs
as its own ``gjk_distance`` process in the namespace ``<namespace>/<shard>``; the aggregator
runs in ``<namespace>`` and publishes the whole robot's ``~/min_distance``, ``~/safety``,
``~/safety_detail`` and ``~/speed_scaling`` (docs/shards.md).

Separate processes, not a component container: rclpy has no composable nodes (component
containers load C++ ``rclcpp_components`` plugins), and separate processes are what gives
each shard a core and an interpreter lock of its own; on several machines, start this file
on each with the shards that machine runs and one aggregator anywhere on the domain.

Launch arguments:

- ``shards_file``: the shards (default: the installed ``config/shards.yaml``);
- ``params_file``: parameters every shard starts from (default: ``config/gjk_distance.yaml``);
- ``namespace``: namespace of the aggregator, and parent of the shards' namespaces;
- ``fixed_frame``: if not empty, overrides ``fixed_frame`` for every shard;
- ``robot_description_topic``: the URDF topic every shard reads (remapped as in
  ``gjk_distance.launch.py``);
- ``obstacles_topic``, ``links_topic``: if not empty, every shard's ``~/obstacles`` (``~/links``)
  is remapped onto this one topic, so a perception stack publishes once for all shards;
- ``deadline``: seconds without a shard's summary after which the whole minimum is -inf (the
  aggregator's ``deadline`` parameter);
- ``run_aggregator``: ``false`` starts the shards only (the aggregator runs elsewhere);
- ``use_sim_time``, ``log_level``, ``respawn``, ``respawn_delay``, ``autostart``: as in
  ``gjk_distance.launch.py``, for every process.

Example::

    ros2 launch gjk_ros shards.launch.py shards_file:=my_shards.yaml namespace:=robot
"""

import os

from ament_index_python.packages import get_package_share_directory
from gjk_ros.ros.shards.plan import read_shards
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node


def _argument(context, name):
    return LaunchConfiguration(name).perform(context)


def _shard_node(context, plan):
    """One shard: a gjk_distance LifecycleNode with the file's overrides on top."""
    parameters = [_argument(context, 'params_file'),
                  {'use_sim_time': _argument(context, 'use_sim_time') == 'true',
                   'autostart': _argument(context, 'autostart') == 'true'}]
    fixed_frame = _argument(context, 'fixed_frame')
    if fixed_frame:
        parameters.append({'fixed_frame': fixed_frame})
    if plan.parameters:
        parameters.append(plan.parameters)
    remappings = [('robot_description', _argument(context, 'robot_description_topic'))]
    for topic in ('obstacles', 'links'):
        shared = _argument(context, topic + '_topic')
        if shared:
            remappings.append(('~/' + topic, shared))
    return LifecycleNode(
        package='gjk_ros', executable='gjk_distance_node', name='gjk_distance',
        namespace=plan.namespace, parameters=parameters,
        remappings=remappings + list(plan.remappings),
        ros_arguments=['--log-level', _argument(context, 'log_level')],
        respawn=_argument(context, 'respawn') == 'true',
        respawn_delay=float(_argument(context, 'respawn_delay')),
        output='screen', emulate_tty=True)


def _nodes(context):
    """Build the shards and the aggregator once the launch arguments are known."""
    namespace = _argument(context, 'namespace')
    plans = read_shards(_argument(context, 'shards_file'), namespace)
    nodes = [_shard_node(context, plan) for plan in plans]
    if _argument(context, 'run_aggregator') == 'true':
        nodes.append(Node(
            package='gjk_ros', executable='gjk_aggregator', name='gjk_aggregator',
            namespace=namespace,
            parameters=[{'shards': [plan.node for plan in plans],
                         'deadline': float(_argument(context, 'deadline')),
                         'use_sim_time': _argument(context, 'use_sim_time') == 'true'}],
            ros_arguments=['--log-level', _argument(context, 'log_level')],
            respawn=_argument(context, 'respawn') == 'true',
            respawn_delay=float(_argument(context, 'respawn_delay')),
            output='screen', emulate_tty=True))
    return nodes


def generate_launch_description():
    """Launch description with the arguments listed in the module docstring."""
    config = os.path.join(get_package_share_directory('gjk_ros'), 'config')
    return LaunchDescription([
        DeclareLaunchArgument('shards_file', default_value=os.path.join(config, 'shards.yaml'),
                              description='The shards: name, parameter overrides, remappings.'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(config, 'gjk_distance.yaml'),
                              description='Parameter file every shard starts from.'),
        DeclareLaunchArgument('namespace', default_value='',
                              description="The aggregator's namespace, parent of the shards'."),
        DeclareLaunchArgument('fixed_frame', default_value='',
                              description='Overrides fixed_frame of every shard when not '
                                          'empty.'),
        DeclareLaunchArgument('robot_description_topic', default_value='/robot_description',
                              description='Topic of the URDF, remapped onto every shard.'),
        DeclareLaunchArgument('obstacles_topic', default_value='',
                              description="One topic for every shard's ~/obstacles (empty: "
                                          'each shard keeps its own).'),
        DeclareLaunchArgument('links_topic', default_value='',
                              description="One topic for every shard's ~/links (empty: each "
                                          'shard keeps its own).'),
        DeclareLaunchArgument('deadline', default_value='0.25',
                              description="Seconds without a shard's summary before the whole "
                                          'minimum is -inf.'),
        DeclareLaunchArgument('run_aggregator', default_value='true',
                              choices=['true', 'false'],
                              description='Also start the aggregator.'),
        DeclareLaunchArgument('use_sim_time', default_value='false', choices=['true', 'false'],
                              description='Run on /clock (simulated time).'),
        DeclareLaunchArgument('log_level', default_value='info',
                              choices=['debug', 'info', 'warn', 'error', 'fatal'],
                              description='Logger level of every process.'),
        DeclareLaunchArgument('respawn', default_value='false', choices=['true', 'false'],
                              description='Restart a process when it exits.'),
        DeclareLaunchArgument('respawn_delay', default_value='1.0',
                              description='Seconds before a respawn.'),
        DeclareLaunchArgument('autostart', default_value='true', choices=['true', 'false'],
                              description='Configure and activate every shard at start-up.'),
        OpaqueFunction(function=_nodes),
    ])
