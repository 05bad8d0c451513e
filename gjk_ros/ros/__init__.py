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
The ROS 2 side of gjk_ros: the ``gjk_distance`` node and a reader for its output.

Importing this package is cheap and starts nothing: it exposes only the ``~/distances``
reader (numpy only). The node itself lives in ``gjk_ros.ros.node`` (console script
``gjk_distance_node``); ``gjk_ros.ros.listener.DistanceListener`` makes the subscriptions of a
consumer node (rclpy), and ``gjk_ros.ros.outputs.hull_markers.MarkerBuilder`` builds ``~/markers``.

Example, in a subscriber that also keeps the latest ``~/names`` message::

    from gjk_ros.ros import PairStatus, read_distances

    for record in read_distances(cloud_msg, names_msg):
        if record.status == PairStatus.VALID and record.distance < 0.05:
            ...  # record.link is closer than 5 cm to record.obstacle
"""

from gjk_ros.ros.records import DistanceRecord, PairStatus, read_distances

__all__ = ['DistanceRecord', 'PairStatus', 'read_distances']
