#!/usr/bin/env bash
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

# Build the moveit_msgs fallback (tools/moveit_msgs_fallback: the planning scene messages and
# the object_recognition_msgs and octomap_msgs types they contain) into a virtual environment
# that holds the ROS 2 Jazzy wheels; each package only if that environment cannot import it.
#
# Usage: tools/build_moveit_msgs.sh VENV
set -euo pipefail
tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fallback="${tools_dir}/moveit_msgs_fallback"
exec bash "${tools_dir}/build_ros_interfaces.sh" "${1:?usage: $0 VENV}" \
  "${fallback}/object_recognition_msgs" "${fallback}/octomap_msgs" "${fallback}/moveit_msgs"
