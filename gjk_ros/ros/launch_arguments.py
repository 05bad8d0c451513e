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
What the launch files share: the arguments of a ``gjk_distance`` process, and the process.

``launch/gjk_distance.launch.py`` (one node) and ``launch/shards.launch.py`` (one node per
shard, and the aggregator) start ``gjk_distance`` the same way, so its arguments are declared
here once (``node_arguments``) and the node is built here once (``distance_node``); each launch
file adds only what is its own. ``launch`` and ``launch_ros`` are imported inside the functions:
the package runs without the launch stack (``ros2 run``), a launch file always has it.
"""

import os
import shutil

__all__ = ['argument', 'cpu_command', 'cpu_prefix', 'distance_node', 'node_arguments',
           'process_options']


def argument(context, name):
    """Return the value of launch argument ``name`` in ``context`` (text)."""
    from launch.substitutions import LaunchConfiguration
    return LaunchConfiguration(name).perform(context)


def _flag(context, name):
    return argument(context, name) == 'true'


def node_arguments():
    """
    Return the declarations of the arguments every ``gjk_distance`` process takes.

    ``params_file``, ``fixed_frame``, ``robot_description_topic``, ``use_sim_time``,
    ``log_level``, ``respawn``, ``respawn_delay`` and ``autostart``.
    """
    from ament_index_python.packages import get_package_share_directory
    from launch.actions import DeclareLaunchArgument

    default_params = os.path.join(get_package_share_directory('gjk_ros'), 'config',
                                  'gjk_distance.yaml')
    return [
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='Parameter file of every gjk_distance node.'),
        DeclareLaunchArgument('fixed_frame', default_value='',
                              description='Overrides fixed_frame of the parameter file '
                                          'when not empty.'),
        DeclareLaunchArgument('robot_description_topic', default_value='/robot_description',
                              description='Topic of the URDF (std_msgs/String, latched), '
                                          "remapped onto each node's robot_description."),
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
                              description='Configure and activate every gjk_distance node at '
                                          'start-up; false waits for a lifecycle manager.'),
    ]


def process_options(context):
    """Return the keyword arguments of any process the launch files start (log level, respawn)."""
    return {'ros_arguments': ['--log-level', argument(context, 'log_level')],
            'respawn': _flag(context, 'respawn'),
            'respawn_delay': float(argument(context, 'respawn_delay')),
            'output': 'screen', 'emulate_tty': True}


def cpu_command(cpus, taskset=None):
    """
    Return the words that run a command on ``cpus`` only ([] for any CPU).

    ``taskset`` (util-linux) pins the whole process, the middleware's threads included, before
    it starts; the node sees one CPU and runs its pair engine on one thread
    (``compute/pairs.py``). Raises RuntimeError when it is missing.
    """
    if not cpus:
        return []
    taskset = taskset or shutil.which('taskset')
    if not taskset:
        raise RuntimeError('a shard has cpus, and taskset (util-linux) is not on PATH')
    return [taskset, '--cpu-list', ','.join(str(cpu) for cpu in cpus)]


def cpu_prefix(cpus, taskset=None):
    """Return ``cpu_command`` as a launch ``prefix`` ('' for any CPU)."""
    return ' '.join(cpu_command(cpus, taskset))


def distance_node(context, namespace, parameters=(), remappings=(), prefix=''):
    """
    Return the ``gjk_distance`` ``LifecycleNode`` action with the shared arguments applied.

    Parameters
    ----------
    context : launch.LaunchContext
        Where the arguments are read.
    namespace : str
        The node's namespace.
    parameters : sequence of dict
        Overrides after ``params_file``, ``use_sim_time``, ``autostart`` and ``fixed_frame``
        (the later win).
    remappings : sequence of (str, str)
        More remappings after ``robot_description``'s.
    prefix : str
        Put before the executable (``cpu_prefix``); '' for none.

    """
    from launch_ros.actions import LifecycleNode

    fixed_frame = argument(context, 'fixed_frame')
    return LifecycleNode(
        package='gjk_ros', executable='gjk_distance_node', name='gjk_distance',
        namespace=namespace,
        parameters=[argument(context, 'params_file'),
                    {'use_sim_time': _flag(context, 'use_sim_time'),
                     'autostart': _flag(context, 'autostart')}]
        + ([{'fixed_frame': fixed_frame}] if fixed_frame else []) + list(parameters),
        # ROS 2 name resolution: the node subscribes to the relative 'robot_description'
        # (robot_state_publisher's convention); the remap points it at the chosen topic.
        remappings=[('robot_description', argument(context, 'robot_description_topic'))]
        + list(remappings),
        **({'prefix': prefix} if prefix else {}),
        **process_options(context))
