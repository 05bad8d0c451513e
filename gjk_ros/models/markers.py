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
visualization_msgs/Marker to a convex piece (messages are read duck-typed; no ROS import).

The piece is named ``ns/id``, attached to ``header.frame_id`` and posed by ``pose``. Sizes
follow RViz's reading of ``scale``:

CUBE
    ``scale`` = full edge lengths.
SPHERE
    ``scale`` = diameters; equal ones give the exact sphere, unequal ones the exact
    ellipsoid (a support mapping, like the sphere's).
CYLINDER
    ``scale.x``, ``scale.y`` = diameters, ``scale.z`` = height along z; unequal x/y give an
    elliptic cylinder, replaced by an outer prism with a warning.
TRIANGLE_LIST
    Hull of ``points``, each multiplied by ``scale`` per axis, because RViz scales the whole
    triangle list by it. So ``scale`` must be non-zero (``1 1 1`` for the points as they are),
    and the point count a non-zero multiple of 3 (RViz shows nothing otherwise). A non-convex
    triangle list is reported like a non-convex mesh.
POINTS
    Hull of ``points``, not scaled: RViz draws each point as a screen-facing square of
    ``scale.x`` by ``scale.y``, which has no fixed shape in space, so it adds nothing.
SPHERE_LIST
    Hull of spheres of diameter ``scale.x`` at ``points`` (exact: the points swept by
    ``scale.x / 2``); unequal scale components make them ellipsoids (outer approximation).
CUBE_LIST
    Hull of axis-aligned cubes of edges ``scale`` at ``points`` (exact).
MESH_RESOURCE
    Hull of the mesh ``mesh_resource`` (through the resolver) or, when that is empty, of the
    bytes in ``mesh_file`` (format from ``mesh_file.filename``), scaled by ``scale`` per axis as
    RViz does.

Other types (ARROW, LINE_STRIP, LINE_LIST, TEXT_VIEW_FACING, ARROW_STRIP) and empty,
non-finite or zero-size geometry raise ModelError naming the body. ``action``, ``lifetime``
and ``frame_locked`` are for the caller to honour.
"""

import itertools

from gjk_ros.core import ConvexPolytope
from gjk_ros.models import primitives
from gjk_ros.models.errors import blame, ModelError
from gjk_ros.models.meshes import default_resolver, mesh_shape, ResourceResolver, triangles_hull
from gjk_ros.models.pieces import CollisionPiece
from gjk_ros.models.transforms import pose_to_matrix
from gjk_ros.models.values import check_positive, parse_numbers
import numpy as np

# visualization_msgs/Marker type constants.
ARROW = 0
CUBE = 1
SPHERE = 2
CYLINDER = 3
LINE_STRIP = 4
LINE_LIST = 5
CUBE_LIST = 6
SPHERE_LIST = 7
POINTS = 8
TEXT_VIEW_FACING = 9
MESH_RESOURCE = 10
TRIANGLE_LIST = 11
ARROW_STRIP = 12

MARKER_TYPE_NAMES = {
    ARROW: 'ARROW', CUBE: 'CUBE', SPHERE: 'SPHERE', CYLINDER: 'CYLINDER',
    LINE_STRIP: 'LINE_STRIP', LINE_LIST: 'LINE_LIST', CUBE_LIST: 'CUBE_LIST',
    SPHERE_LIST: 'SPHERE_LIST', POINTS: 'POINTS', TEXT_VIEW_FACING: 'TEXT_VIEW_FACING',
    MESH_RESOURCE: 'MESH_RESOURCE', TRIANGLE_LIST: 'TRIANGLE_LIST', ARROW_STRIP: 'ARROW_STRIP',
}


def marker_body(marker) -> str:
    """Return the obstacle name of a marker, ``ns/id``."""
    return f'{marker.ns}/{marker.id}'


def marker_to_piece(marker, *, resolver: ResourceResolver | None = None) -> CollisionPiece:
    """
    Build the convex piece of a visualization_msgs/Marker (see the module docstring).

    Parameters
    ----------
    marker : visualization_msgs.msg.Marker or alike
        Read fields: ns, id, type, header.frame_id, pose, scale, points, mesh_resource,
        mesh_file (optional).
    resolver : ResourceResolver, optional
        For MESH_RESOURCE; default the shared :func:`~gjk_ros.models.meshes.default_resolver`.

    Returns
    -------
    CollisionPiece
        Body ``ns/id``, frame ``header.frame_id``, origin from ``pose``.

    Raises
    ------
    ModelError
        Naming the body: unsupported type, empty frame_id, bad pose, or empty, non-finite or
        zero-size geometry.

    """
    body = marker_body(marker)
    type_name = MARKER_TYPE_NAMES.get(marker.type, f'unknown type {marker.type}')
    build = _BUILDERS.get(marker.type)
    if build is None:
        raise ModelError(body, f'marker type {type_name} has no collision geometry (use '
                               f'{", ".join(MARKER_TYPE_NAMES[kind] for kind in _BUILDERS)})')
    frame_id = marker.header.frame_id
    if not frame_id:
        raise ModelError(body, 'header.frame_id is empty')
    origin = pose_to_matrix(marker.pose.position, marker.pose.orientation, body=body)
    with blame(body, type_name):
        shape = build(marker, body, resolver or default_resolver())
    return CollisionPiece(body, frame_id, origin, shape.polytope, shape.description,
                          shape.warnings, shape.mesh)


def _scale(marker) -> np.ndarray:
    return parse_numbers([marker.scale.x, marker.scale.y, marker.scale.z], 'scale', 3)


def _points(marker) -> np.ndarray:
    if len(marker.points) == 0:
        raise ValueError('the marker has no points')
    if isinstance(marker.points, np.ndarray):
        # Already converted (gjk_ros.ros.ingestion ships points as an array).
        return np.array(marker.points, dtype=np.float64).reshape(-1, 3)
    return np.array([[point.x, point.y, point.z] for point in marker.points], dtype=np.float64)


def _nonzero_scale(marker, why: str) -> np.ndarray:
    scale = _scale(marker)
    if np.any(scale == 0.0):
        raise ValueError(f'scale {_times(scale)} has a zero component; {why}')
    return scale


def _cube(marker, body, resolver) -> primitives.Shape:
    return primitives.box(_scale(marker))


def _sphere(marker, body, resolver) -> primitives.Shape:
    diameters = check_positive(_scale(marker), 'sphere diameters')
    if np.ptp(diameters) == 0.0:
        return primitives.sphere(float(diameters[0]) / 2.0)
    return primitives.exact_ellipsoid(diameters / 2.0)


def _cylinder(marker, body, resolver) -> primitives.Shape:
    return primitives.elliptic_cylinder(_scale(marker), body)


def _points_hull(marker, body, resolver) -> primitives.Shape:
    return primitives.point_hull(_points(marker), label='points')


def _sphere_list(marker, body, resolver) -> primitives.Shape:
    return primitives.ellipsoid_sweep(_points(marker), _scale(marker), body, 'points')


def _cube_list(marker, body, resolver) -> primitives.Shape:
    edges = check_positive(_scale(marker), 'cube size')
    centres = primitives.hull_vertices(np.unique(primitives.check_points(
        _points(marker), 'points'), axis=0))
    corners = np.array(list(itertools.product(*[(-e / 2.0, e / 2.0) for e in edges])))
    sums = (centres[:, None, :] + corners[None, :, :]).reshape(-1, 3)
    return primitives.Shape(ConvexPolytope.from_points(sums),
                            f'hull of {len(centres)} cubes {_times(edges)}')


def _triangle_list(marker, body, resolver) -> primitives.Shape:
    points = _points(marker)
    if len(points) % 3:
        raise ValueError(f'{len(points)} points is not a multiple of 3')
    scale = _nonzero_scale(marker, 'RViz scales TRIANGLE_LIST points by it (use 1 1 1)')
    info = triangles_hull(body, (points * scale).reshape(-1, 3, 3))
    return mesh_shape(info, f'{len(points) // 3} triangles', scale, body,
                      resolver.hull_warning_threshold)


def _mesh_resource(marker, body, resolver) -> primitives.Shape:
    scale = _nonzero_scale(marker, 'RViz scales the mesh by it (use 1 1 1)')
    if marker.mesh_resource:
        info = resolver.load_mesh_info(marker.mesh_resource, scale)
        return mesh_shape(info, f'mesh {marker.mesh_resource}', scale, body,
                          resolver.hull_warning_threshold, marker.mesh_resource)
    mesh_file = getattr(marker, 'mesh_file', None)
    data = bytes(getattr(mesh_file, 'data', b'') or b'')
    if not data:
        raise ValueError('both mesh_resource and mesh_file.data are empty')
    filename = mesh_file.filename or '<mesh_file>'
    extension = filename.rsplit('.', 1)[-1] if '.' in filename else ''
    info = resolver.load_mesh_data(data, extension, scale, name=filename)
    return mesh_shape(info, f'mesh_file {filename}', scale, body,
                      resolver.hull_warning_threshold)


def _times(values) -> str:
    return 'x'.join(f'{v:g}' for v in values)


_BUILDERS = {
    CUBE: _cube,
    SPHERE: _sphere,
    CYLINDER: _cylinder,
    CUBE_LIST: _cube_list,
    SPHERE_LIST: _sphere_list,
    POINTS: _points_hull,
    MESH_RESOURCE: _mesh_resource,
    TRIANGLE_LIST: _triangle_list,
}
