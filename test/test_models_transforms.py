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

"""Poses, checked numbers, and what importing gjk_ros.models pulls in."""

import pathlib
import subprocess
import sys
from types import SimpleNamespace

from gjk_ros.models import ModelError, pose_to_matrix, rpy_to_matrix, xyz_rpy_to_matrix
from gjk_ros.models.values import parse_numbers, parse_positive
import numpy as np
import pytest
from scipy.spatial.transform import Rotation


def point(x, y, z):
    return SimpleNamespace(x=x, y=y, z=z)


def quaternion(x, y, z, w):
    return SimpleNamespace(x=x, y=y, z=z, w=w)


@pytest.mark.parametrize('rpy', [(0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.0, -1.2, 0.0),
                                 (0.0, 0.0, 2.5), (0.3, -1.2, 2.5), (-3.0, 1.5, 0.1)])
def test_rpy_matches_fixed_axis_xyz_euler_angles(rpy):
    np.testing.assert_allclose(rpy_to_matrix(rpy),
                               Rotation.from_euler('xyz', rpy).as_matrix(), atol=1e-12)


def test_rpy_single_axes_move_unit_vectors_as_expected():
    quarter = np.pi / 2
    np.testing.assert_allclose(rpy_to_matrix((quarter, 0, 0)) @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(rpy_to_matrix((0, quarter, 0)) @ [0, 0, 1], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(rpy_to_matrix((0, 0, quarter)) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


def test_xyz_rpy_from_urdf_strings():
    matrix = xyz_rpy_to_matrix('1 2.5 -3', '0 0 1.5707963267948966')
    np.testing.assert_allclose(matrix[:3, 3], [1, 2.5, -3])
    np.testing.assert_allclose(matrix[:3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(matrix[3], [0, 0, 0, 1])
    np.testing.assert_allclose(xyz_rpy_to_matrix(), np.eye(4))


@pytest.mark.parametrize('xyz, rpy, words', [
    ('1 2', '0 0 0', 'xyz must be 3 numbers'),
    ('1 2 3 4', '0 0 0', 'xyz must be 3 numbers'),
    ('1 two 3', '0 0 0', 'xyz must contain only numbers'),
    ('1 2 3', '0 inf 0', 'rpy must be finite'),
    ([1, 2, True], (0, 0, 0), 'xyz must contain only numbers'),
    ({'x': 1}, (0, 0, 0), 'xyz must be a number or a list of numbers'),
])
def test_bad_origins_are_value_errors(xyz, rpy, words):
    with pytest.raises(ValueError, match=words):
        xyz_rpy_to_matrix(xyz, rpy)


def test_pose_to_matrix_matches_scipy_and_normalises():
    q = Rotation.from_euler('xyz', (0.2, 0.5, -1.0)).as_quat()
    expected = np.eye(4)
    expected[:3, :3] = Rotation.from_quat(q).as_matrix()
    expected[:3, 3] = (1.0, -2.0, 0.5)
    for factor in (1.0, 0.01, 250.0, -1.0):
        matrix = pose_to_matrix(point(1.0, -2.0, 0.5), quaternion(*(factor * q)))
        np.testing.assert_allclose(matrix, expected, atol=1e-12)


@pytest.mark.parametrize('position, orientation, words', [
    (point(0, 0, 0), quaternion(0, 0, 0, 0), 'zero length'),
    (point(0, 0, 0), quaternion(1e-9, 0, 0, 0), 'zero length'),
    (point(0, 0, 0), quaternion(0, 0, np.nan, 1), 'orientation must be finite'),
    (point(0, 0, 0), quaternion(0, 0, np.inf, 1), 'orientation must be finite'),
    (point(np.nan, 0, 0), quaternion(0, 0, 0, 1), 'position must be finite'),
])
def test_pose_to_matrix_rejects_bad_poses(position, orientation, words):
    with pytest.raises(ModelError) as caught:
        pose_to_matrix(position, orientation, body='shelf/2')
    assert caught.value.body == 'shelf/2'
    assert words in caught.value.reason


def test_parse_numbers_accepts_strings_sequences_and_scalars():
    np.testing.assert_array_equal(parse_numbers(' 1  2\n3 ', 'v', 3), [1, 2, 3])
    np.testing.assert_array_equal(parse_numbers((1, 2.5, np.float32(3)), 'v', 3), [1, 2.5, 3])
    np.testing.assert_array_equal(parse_numbers(np.array([[1, 2], [3, 4]]), 'v'), [1, 2, 3, 4])
    np.testing.assert_array_equal(parse_numbers(7, 'v'), [7])
    assert parse_positive('0.25', 'radius') == 0.25
    with pytest.raises(ValueError, match='radius must be > 0'):
        parse_positive(0, 'radius')
    with pytest.raises(ValueError, match='at least one number'):
        parse_numbers('', 'points')


def test_importing_models_imports_no_ros():
    # Messages are read duck-typed: the models layer must work where ROS is not installed.
    check = ('import sys, gjk_ros.models; '
             'print(sorted(m for m in sys.modules if m.split(".")[0] in '
             '("rclpy", "visualization_msgs", "geometry_msgs", "ament_index_python")))')
    result = subprocess.run([sys.executable, '-c', check], capture_output=True, text=True,
                            cwd=pathlib.Path(__file__).resolve().parent.parent, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'
