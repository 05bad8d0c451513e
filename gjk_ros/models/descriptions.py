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
Convex pieces from plain dict descriptions (static obstacles, link overrides).

Schema (numbers may be given as lists or as whitespace-separated strings)::

    type: box | sphere | cylinder | capsule | mesh | points | cone | ellipsoid |
          half_space                                           (required)
    xyz: [x, y, z]        pose of the piece in frame_id, default [0, 0, 0]
    rpy: [r, p, y]        fixed-axis roll, pitch, yaw as in URDF, default [0, 0, 0]
    box:      size: [x, y, z]           full edge lengths, > 0
    sphere:   radius: r                 > 0
    cylinder: radius: r, length: l      axis z, centred, > 0
    capsule:  radius: r, length: l      segment z in [-l/2, l/2] swept by r (total
                                        extent l + 2 r), > 0
    mesh:     uri: 'package://...' | 'file:///...' | path
              scale: [sx, sy, sz] or s  default 1, non-zero
    points:   points: [[x, y, z], ...] or flat [x0, y0, z0, x1, ...] (ROS parameters
                      cannot hold nested lists); the piece is their convex hull
              radius: r                 sweep radius, >= 0, default 0
    cone:     radius: r, length: l      axis z, centred, apex at +l/2, > 0
    ellipsoid: semi_axes: [a, b, c]     along x, y, z, > 0 (exact)
    half_space:                         the solid z <= 0 of the piece frame (normal +z):
                                        a table top or a floor, placed by xyz/rpy
"""

from collections.abc import Mapping

from gjk_ros.models import primitives
from gjk_ros.models.errors import blame, ModelError
from gjk_ros.models.meshes import default_resolver, mesh_shape, ResourceResolver
from gjk_ros.models.pieces import CollisionPiece
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.values import parse_numbers
import numpy as np

_COMMON_KEYS = ('type', 'xyz', 'rpy')
_REQUIRED_KEYS = {
    'box': ('size',),
    'sphere': ('radius',),
    'cylinder': ('radius', 'length'),
    'capsule': ('radius', 'length'),
    'mesh': ('uri',),
    'points': ('points',),
    'cone': ('radius', 'length'),
    'ellipsoid': ('semi_axes',),
    'half_space': (),
}
_OPTIONAL_KEYS = {'mesh': ('scale',), 'points': ('radius',)}


def piece_from_description(body: str, frame_id: str, description: Mapping, *,
                           resolver: ResourceResolver | None = None) -> CollisionPiece:
    """
    Build a convex piece from a plain dict, as declared in a parameter file.

    The schema is in the module docstring. Unknown keys are errors, so a typo does not
    silently drop a setting.

    Parameters
    ----------
    body : str
        Name of the obstacle or link.
    frame_id : str
        Frame the piece is attached to.
    description : Mapping
        The dict described above.
    resolver : ResourceResolver, optional
        For meshes; default the shared resolver.

    Returns
    -------
    CollisionPiece
        The piece, attached to ``frame_id``.

    Raises
    ------
    ModelError
        Naming ``body``, for anything invalid.

    """
    if not isinstance(description, Mapping):
        raise ModelError(body, f'a shape description must be a mapping, got {description!r}')
    kind = description.get('type')
    if kind not in _REQUIRED_KEYS:
        raise ModelError(body, f'shape type must be one of {", ".join(_REQUIRED_KEYS)}, got '
                               f'{kind!r}')
    if not frame_id:
        raise ModelError(body, 'frame_id is empty')
    with blame(body, kind):
        _check_keys(kind, description)
        origin = xyz_rpy_to_matrix(description.get('xyz', (0.0, 0.0, 0.0)),
                                   description.get('rpy', (0.0, 0.0, 0.0)))
        shape = _shape(kind, description, body, resolver or default_resolver())
    return CollisionPiece(body, frame_id, origin, shape.polytope, shape.description,
                          shape.warnings, shape.mesh)


def _check_keys(kind: str, description: Mapping):
    required = _REQUIRED_KEYS[kind]
    missing = [key for key in required if key not in description]
    if missing:
        raise ValueError(f'missing key {", ".join(missing)}')
    allowed = set(_COMMON_KEYS) | set(required) | set(_OPTIONAL_KEYS.get(kind, ()))
    unknown = sorted(str(key) for key in description if key not in allowed)
    if unknown:
        raise ValueError(f'unknown keys {", ".join(unknown)} (allowed: '
                         f'{", ".join(sorted(allowed))})')


def _shape(kind: str, description: Mapping, body: str,
           resolver: ResourceResolver) -> primitives.Shape:
    if kind == 'box':
        return primitives.box(description['size'])
    if kind == 'sphere':
        return primitives.sphere(description['radius'])
    if kind == 'cylinder':
        return primitives.cylinder(description['radius'], description['length'])
    if kind == 'capsule':
        return primitives.capsule(description['radius'], description['length'])
    if kind == 'cone':
        return primitives.cone(description['radius'], description['length'])
    if kind == 'ellipsoid':
        return primitives.exact_ellipsoid(description['semi_axes'])
    if kind == 'half_space':
        return primitives.half_space()
    if kind == 'mesh':
        return _mesh(description, body, resolver)
    return _point_set(description)


def _mesh(description: Mapping, body: str, resolver: ResourceResolver) -> primitives.Shape:
    uri = description['uri']
    if not isinstance(uri, str) or not uri:
        raise ValueError(f'uri must be a non-empty string, got {uri!r}')
    scale = parse_numbers(description.get('scale', 1.0), 'scale')
    if scale.size == 1:
        scale = np.repeat(scale, 3)
    if scale.size != 3:
        raise ValueError(f'scale must be one number or three, got {description["scale"]!r}')
    return mesh_shape(resolver.load_mesh_info(uri, scale), f'mesh {uri}', scale, body,
                      resolver.hull_warning_threshold, uri)


def _point_set(description: Mapping) -> primitives.Shape:
    values = parse_numbers(description['points'], 'points')
    if values.size % 3:
        raise ValueError(f'points must hold x, y, z triples, got {values.size} numbers')
    radius = float(parse_numbers(description.get('radius', 0.0), 'radius', 1)[0])
    return primitives.point_hull(values.reshape(-1, 3), radius, 'points')
