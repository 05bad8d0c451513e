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
The ``gjk-ros demo``: a scene to measure and a consumer of the node's outputs (not the node).

- ``gjk_ros.demo.scene``: publishes a moving arm (URDF, TF) and obstacles (markers), as a robot
  stack would; ``python -m gjk_ros.demo.scene`` runs it alone, against any node;
- ``gjk_ros.demo.monitor``: starts the node and the scene, prints and plots the distances;
- ``gjk_ros.demo.snapshot``: keeps received ``~/markers`` as RViz does and renders them.

Importing this package imports nothing; ``scene`` and ``snapshot`` import ROS message packages,
``monitor`` imports rclpy only when the demo runs.
"""
