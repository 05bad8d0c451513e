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

import subprocess
import sys

import pytest


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    # In a fresh interpreter: flake8 forks a pool of checkers, and a fork of this test process
    # (which may hold rclpy, middleware and numba compiler threads from earlier tests) can
    # crash its children or leave the pool waiting forever.
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; from ament_flake8.main import main; sys.exit(main())'],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, \
        'Found code style errors / warnings:\n' + result.stdout + result.stderr
