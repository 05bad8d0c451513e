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
on top of ``params_file``, optional remappings and CPUs; ``gjk_ros/ros/shards/plan.py`` checks
it) runs
as its own ``gjk_distance`` process in the namespace ``<namespace>/<shard>``; the aggregator
runs in ``<namespace>`` and publishes the whole robot's ``~/min_distance``, ``~/safety``,
``~/safety_detail`` and ``~/speed_scaling`` (docs/shards.md).

Separate processes, not a component container: rclpy has no composable nodes (component
containers load C++ ``rclcpp_components`` plugins), and separate processes are what gives
each shard an interpreter lock of its own and, with ``cpus``, cores of its own; on several
machines, start this file on each with the shards that machine runs and one aggregator
anywhere on the domain.

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
from gjk_ros.ros.launch_arguments import (argument as _argument, cpu_prefix, distance_node,
                                          node_arguments, process_options)
from gjk_ros.ros.shards.plan import read_shards
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch_ros.actions import Node


def _shard_node(context, plan):
    """One shard: a gjk_distance LifecycleNode with the file's overrides on top."""
    remappings = []
    for topic in ('obstacles', 'links'):
        shared = _argument(context, topic + '_topic')
        if shared:
            remappings.append(('~/' + topic, shared))
    return distance_node(context, plan.namespace, [plan.parameters] if plan.parameters else [],
                         remappings + list(plan.remappings), cpu_prefix(plan.cpus))


def _nodes(context):
    """Build the shards and the aggregator once the launch arguments are known."""
    namespace = _argument(context, 'namespace')
    plans = read_shards(_argument(context, 'shards_file'), namespace, os.sched_getaffinity(0))
    nodes = [_shard_node(context, plan) for plan in plans]
    if _argument(context, 'run_aggregator') == 'true':
        nodes.append(Node(
            package='gjk_ros', executable='gjk_aggregator', name='gjk_aggregator',
            namespace=namespace,
            parameters=[{'shards': [plan.node for plan in plans],
                         'deadline': float(_argument(context, 'deadline')),
                         'use_sim_time': _argument(context, 'use_sim_time') == 'true'}],
            **process_options(context)))
    return nodes


def generate_launch_description():
    """Launch description with the arguments listed in the module docstring."""
    config = os.path.join(get_package_share_directory('gjk_ros'), 'config')
    return LaunchDescription(node_arguments() + [
        DeclareLaunchArgument('shards_file', default_value=os.path.join(config, 'shards.yaml'),
                              description='The shards: name, parameter overrides, remappings.'),
        DeclareLaunchArgument('namespace', default_value='',
                              description="The aggregator's namespace, parent of the shards'."),
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
        OpaqueFunction(function=_nodes),
    ])
