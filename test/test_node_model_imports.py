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

"""The node process imports gjk_ros.models through one lock (gjk_ros/ros/model_imports.py)."""

import pathlib
import subprocess
import sys

ROS = pathlib.Path(__file__).resolve().parent.parent / 'gjk_ros' / 'ros'
# Modules of the worker process only: it imports on its one thread.
WORKER_SIDE = {'geometry_worker.py'}


def test_every_node_side_import_of_models_loads_them_whole_first():
    """A lazy ``from gjk_ros.models... import`` right after ``load_models()``, everywhere."""
    for path in sorted(ROS.rglob('*.py')):
        if path.name in WORKER_SIDE:
            continue
        lines = path.read_text(encoding='utf-8').splitlines()
        for number, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith(('from gjk_ros.models', 'import gjk_ros.models')):
                assert line.startswith(' '), f'{path.name}:{number + 1}: a top-level import'
                assert lines[number - 1].strip().startswith('load_models()'), \
                    f'{path.name}:{number + 1}: call load_models() first'


def test_threads_importing_models_at_once_all_get_whole_modules():
    code = """
import threading
from gjk_ros.ros.inputs.model_imports import load_models
errors = []
def load(name):
    try:
        load_models()
        module = __import__(name, fromlist=['x'])
        assert getattr(module, '__spec__') is not None
    except Exception as error:
        errors.append(repr(error))
names = ['gjk_ros.models.urdf', 'gjk_ros.models.pieces', 'gjk_ros.models.kinematics',
         'gjk_ros.models.srdf', 'gjk_ros.models.collision_objects', 'gjk_ros.models'] * 2
threads = [threading.Thread(target=load, args=(name,)) for name in names]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
from gjk_ros.models.urdf import parse_urdf_collisions
print(errors)
"""
    output = subprocess.run([sys.executable, '-c', code], check=True, capture_output=True,
                            text=True).stdout
    assert output.strip() == '[]'
