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
Start the gjk_distance node, and optionally RViz2 showing what it measures.

Launch arguments:

- ``params_file``: parameter file (default: the installed ``config/gjk_distance.yaml``);
- ``namespace``: namespace of the node (e.g. one instance per arm: ``left``, ``right``);
- ``fixed_frame``: if not empty, overrides the ``fixed_frame`` of the parameter file;
- ``robot_description_topic``: where the URDF comes from (default ``/robot_description``,
  robot_state_publisher's topic); remapped onto the node's relative ``robot_description``,
  so a namespaced node still reads the global one;
- ``rviz``: ``true`` also starts ``rviz2`` with ``config/gjk_distance.rviz``, filled in with
  this node's topics, fixed frame and robot description topic;
- ``use_sim_time``: ``true`` runs the node (and RViz) on ``/clock``; without a ``/clock`` the
  node reads -inf and says so (docs/semantics.md, "Time");
- ``log_level``: the node's logger level (``debug``, ``info``, ``warn``, ``error``, ``fatal``);
- ``respawn``: ``true`` restarts the node ``respawn_delay`` seconds after it exits;
- ``autostart``: ``true`` (default) makes the node configure and activate itself (its
  ``autostart`` parameter); ``false`` leaves it unconfigured for a lifecycle manager or
  ``change_state`` calls (docs/managed_node.md);
- ``scene_files``: world files, comma-separated (PlanningScene YAML, MoveIt ``.scene``): if not
  empty, a ``scene_publisher`` node publishes their objects on ``/planning_scene`` and the node's
  ``planning_scene`` is turned on (docs/planning_scene.md, "World files"); with ``respawn`` it
  sends them again to each new subscriber, so that a respawned node gets them.

The node is started with launch_ros's ``LifecycleNode`` action, so that other launch files can
emit ``launch_ros.events.lifecycle.ChangeState`` at it and react to its ``StateTransition``
events. Autostart is the node's own parameter rather than launch events: launch_ros 0.26
(Jazzy) has no ``autostart`` on the action, and a parameter also serves ``ros2 run``.

Example::

    ros2 launch gjk_ros gjk_distance.launch.py namespace:=left fixed_frame:=base_link rviz:=true
"""

import atexit
import os
import tempfile

from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
from gjk_ros.ros.launch_arguments import argument as _argument, distance_node, node_arguments
from gjk_ros.ros.rviz_config import fill_rviz_config, fixed_frame_of, node_topic_prefix
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch_ros.actions import Node


def _node(context):
    """Build the node once the launch arguments are known."""
    scene_files = _scene_files(context)
    return [distance_node(context, _argument(context, 'namespace'),
                          [{'planning_scene': True}] if scene_files else [])] + \
        _scene_publisher(scene_files, _argument(context, 'respawn') == 'true') + _rviz(context)


def _scene_files(context):
    """Return the ``scene_files`` argument as a list of paths (comma-separated, no blanks)."""
    return [path.strip() for path in _argument(context, 'scene_files').split(',')
            if path.strip()]


def _scene_publisher(scene_files, respawn):
    """
    Return the ``scene_publisher`` node for ``scene_files`` (none for no files).

    A respawned distance node subscribes again, after the files were sent: with ``respawn``
    the publisher sends them to each new subscriber (``republish_on_subscribe``), so that a
    restarted monitor never runs without the world's obstacles (docs/planning_scene.md).
    """
    if not scene_files:
        return []
    return [Node(package='gjk_ros', executable='scene_publisher', name='scene_publisher',
                 parameters=[{'scene_files': scene_files, 'republish_on_subscribe': respawn}],
                 output='screen')]


def _rviz(context):
    """RViz2 with a config filled in for this node, if ``rviz`` is true and rviz2 exists."""
    if _argument(context, 'rviz') != 'true':
        return []
    try:
        get_package_share_directory('rviz2')
    except PackageNotFoundError:
        return [LogInfo(msg='rviz:=true but the rviz2 package is not installed '
                            '(apt install ros-jazzy-rviz2); starting the node only')]
    share = get_package_share_directory('gjk_ros')
    with open(os.path.join(share, 'config', 'gjk_distance.rviz'), encoding='utf-8') as template:
        text = fill_rviz_config(
            template.read(), node_topic_prefix(_argument(context, 'namespace'), 'gjk_distance'),
            fixed_frame_of(_argument(context, 'params_file'), _argument(context, 'fixed_frame')),
            _argument(context, 'robot_description_topic'))
    handle, path = tempfile.mkstemp(prefix='gjk_distance_', suffix='.rviz')
    with os.fdopen(handle, 'w', encoding='utf-8') as config:
        config.write(text)
    atexit.register(os.remove, path)
    return [Node(package='rviz2', executable='rviz2', name='rviz2',
                 arguments=['-d', path], output='screen',
                 parameters=[{'use_sim_time': _argument(context, 'use_sim_time') == 'true'}])]


def generate_launch_description():
    """Launch description with the arguments listed in the module docstring."""
    return LaunchDescription(node_arguments() + [
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace of the node.'),
        DeclareLaunchArgument('rviz', default_value='false', choices=['true', 'false'],
                              description='Also start rviz2 showing the distances, hulls '
                                          'and witness segments.'),
        DeclareLaunchArgument('scene_files', default_value='',
                              description='World files (PlanningScene YAML, MoveIt .scene), '
                                          'comma-separated, published on /planning_scene by '
                                          'a scene_publisher node beside this one.'),
        OpaqueFunction(function=_node),
    ])
