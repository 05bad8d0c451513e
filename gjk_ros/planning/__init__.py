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
Distances and collision checks for motion planners: any configuration, trajectories, segments.

No ROS. :class:`RobotDistances` (robot.py) holds the robot and the obstacles; it measures
signed distances of every body pair (one configuration or a tracked trajectory), answers the
yes/no question a sampling planner asks (``in_collision``, stopping at the first pair within
the margin), certifies joint-space segments (``edge_free``) and differentiates distances
(``gradients``). :meth:`RobotDistances.group` restricts all of it to a planning group
(group.py); ompl.py adapts a group to OMPL's validity checker and motion validator.
``load_obstacles`` reads the world files users have (PlanningScene YAML, MoveIt ``.scene``,
a URDF world); non-convex meshes follow ``mesh_mode`` (robot.py).
"""

from gjk_ros.planning.group import PlanningGroup
from gjk_ros.planning.results import DistanceResults, EdgeCheck, load_obstacles, Obstacle
from gjk_ros.planning.robot import CHUNK, MeshWarning, RobotDistances

__all__ = ['CHUNK', 'DistanceResults', 'EdgeCheck', 'load_obstacles', 'MeshWarning',
           'Obstacle', 'PlanningGroup', 'RobotDistances']
