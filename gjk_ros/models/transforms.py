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

"""Poses as (4, 4) homogeneous matrices: URDF xyz/rpy and geometry_msgs Pose."""

from gjk_ros.core.rigid import quaternion_matrix, unit_quaternion
from gjk_ros.models.errors import ModelError
from gjk_ros.models.values import parse_numbers
import numpy as np


def rpy_to_matrix(rpy) -> np.ndarray:
    """
    Rotation matrix of URDF fixed-axis roll, pitch, yaw.

    Roll about x, then pitch about the fixed y, then yaw about the fixed z:
    ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    Parameters
    ----------
    rpy : array-like
        (3,) radians.

    Returns
    -------
    numpy.ndarray
        (3, 3) float64.

    """
    roll, pitch, yaw = (float(angle) for angle in rpy)
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    rot_x = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    rot_y = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rot_z = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return rot_z @ rot_y @ rot_x


def xyz_rpy_to_matrix(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)) -> np.ndarray:
    """
    Homogeneous transform of a URDF ``<origin xyz rpy>``.

    Parameters
    ----------
    xyz : array-like or str
        (3,) translation, or the URDF attribute text.
    rpy : array-like or str
        (3,) fixed-axis roll, pitch, yaw in radians, or the URDF attribute text.

    Returns
    -------
    numpy.ndarray
        (4, 4) float64.

    Raises
    ------
    ValueError
        Not three finite numbers.

    """
    matrix = np.eye(4)
    matrix[:3, :3] = rpy_to_matrix(parse_numbers(rpy, 'rpy', 3))
    matrix[:3, 3] = parse_numbers(xyz, 'xyz', 3)
    return matrix


def quaternion_to_matrix(quaternion) -> np.ndarray:
    """
    Rotation matrix of a quaternion given as (x, y, z, w); normalised first.

    Raises
    ------
    ValueError
        Non-finite, or too short to have a direction (e.g. all zeros).

    """
    q = parse_numbers(list(quaternion), 'orientation', 4)
    unit, _ = unit_quaternion(tuple(float(v) for v in q))
    if unit is None:
        raise ValueError(f'orientation quaternion (x y z w) = ({_format(q)}) has zero length')
    return quaternion_matrix(*unit)


def pose_to_matrix(position, orientation, *, body: str = 'pose') -> np.ndarray:
    """
    Homogeneous transform of a geometry_msgs Pose (read duck-typed).

    Parameters
    ----------
    position : object
        Has ``x, y, z`` (geometry_msgs/Point or alike).
    orientation : object
        Has ``x, y, z, w`` (geometry_msgs/Quaternion or alike); normalised here.
    body : str
        Named in the ModelError.

    Returns
    -------
    numpy.ndarray
        (4, 4) float64.

    Raises
    ------
    ModelError
        Non-finite position, or a zero or non-finite quaternion.

    """
    try:
        translation = parse_numbers([position.x, position.y, position.z], 'position', 3)
        rotation = quaternion_to_matrix(
            [orientation.x, orientation.y, orientation.z, orientation.w])
    except ValueError as error:
        raise ModelError(body, str(error)) from error
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = translation
    return matrix


def _format(values) -> str:
    return ' '.join(f'{v:g}' for v in values)
