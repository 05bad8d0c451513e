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
From URDF collision elements, mesh files, markers and dict descriptions to convex pieces.

No rclpy here: messages are passed in and read duck-typed. Every piece is a
:class:`~gjk_ros.core.ConvexPolytope` attached to a frame; every rejection is one
:class:`ModelError` naming the body and the reason.
"""

from gjk_ros.models.descriptions import piece_from_description
from gjk_ros.models.errors import ModelError
from gjk_ros.models.markers import marker_body, marker_to_piece
from gjk_ros.models.meshes import default_resolver, MeshInfo, ResourceResolver
from gjk_ros.models.pieces import CollisionPiece
from gjk_ros.models.transforms import pose_to_matrix, rpy_to_matrix, xyz_rpy_to_matrix
from gjk_ros.models.urdf import parse_urdf_collisions, UrdfCollisionModel

__all__ = [
    'CollisionPiece',
    'default_resolver',
    'marker_body',
    'marker_to_piece',
    'MeshInfo',
    'ModelError',
    'parse_urdf_collisions',
    'piece_from_description',
    'pose_to_matrix',
    'ResourceResolver',
    'rpy_to_matrix',
    'UrdfCollisionModel',
    'xyz_rpy_to_matrix',
]
