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
Sharding: several ``gjk_distance`` nodes measure parts of one robot, one aggregator sums up.

Each shard is an ordinary ``gjk_distance`` node whose scope parameters (``link_include``,
``obstacle_include``, ``observation_sources``, ...) select what it measures; the aggregator
(``gjk_aggregator``) subscribes to every shard's stamped summary and publishes the whole
robot's fail-safe minimum, ``~/safety`` and speed scaling (docs/shards.md).

- ``summary``: a shard's summary read from its ``~/safety_detail``, and the merge rules;
- ``watch``: whether a shard is heard (deadline, liveliness, a steady-clock check);
- ``board``: every shard's watch, and when the aggregate changes (no ROS);
- ``outputs``: the aggregator's publishers and ``/diagnostics`` entries;
- ``plan``: the shards file the launch file reads (no ROS);
- ``settings``: the aggregator's parameters, declared and validated;
- ``aggregator``: the rclpy node and its console script.
"""
