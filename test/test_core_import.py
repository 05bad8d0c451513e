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

"""The geometry core stays free of ROS: importing it never imports rclpy."""

import json
import subprocess
import sys

# Runs in a fresh interpreter, so nothing imported by other tests can hide or fake the result.
PROBE = """
import json, sys
import gjk_ros.core
from gjk_ros.core import ConvexPolytope, signed_distance
import numpy
box = ConvexPolytope.box([0.5, 0.5, 0.5])
pose = numpy.eye(4)
pose[0, 3] = 2.0
signed_distance(box, numpy.eye(4), box, pose)
ros = sorted(name for name in sys.modules
             if name.split('.')[0] in ('rclpy', 'rosidl_runtime_py', 'rclpy_message_converter')
             or name.startswith('gjk_ros.ros'))
print(json.dumps(ros))
"""


def test_importing_and_using_the_core_does_not_import_rclpy():
    completed = subprocess.run([sys.executable, '-c', PROBE], capture_output=True, text=True,
                               timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr
    imported = json.loads(completed.stdout.strip().splitlines()[-1])
    assert imported == []
