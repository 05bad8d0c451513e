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
Exact signed distances of many points to one convex piece.

A point is a convex set, so its distance to a piece is exact without sampling the piece. A
polytope piece (the hull of its vertices, swept by ``radius``) is described by the triangles of
its hull boundary and, when it is solid, the outward planes of those triangles:

- outside the hull, the distance is the smallest point-triangle distance over the boundary
  (Ericson, Real-Time Collision Detection 5.1.5);
- inside a solid hull, it is minus the distance to the nearest face plane (the interior of a
  convex polytope is the intersection of its face half-spaces);
- a flat, segment or point hull has no inside: its triangles are the fan of the polygon, or
  degenerate triangles whose edges are the segment or the point.

A cylinder uses its radial and axial gaps. The sweep radius is subtracted last (the distance to
a Minkowski sum with a ball). Signs follow the core: > 0 apart, < 0 inside.
"""

import math

import numpy as np

from ._jit import njit
from .triangles import _point_triangle_squared

__all__ = ['PointDistanceShape', 'points_in_ball']

# Relative size below which a hull has no extent along a principal axis.
_FLAT_TOLERANCE = 1e-9


class PointDistanceShape:
    """
    A ConvexPolytope prepared for exact point distances (built once per shape).

    Parameters
    ----------
    shape : gjk_ros.core.ConvexPolytope
        Any kind: polytope (possibly swept), sphere, capsule, point, cylinder.

    """

    def __init__(self, shape):
        self.radius = float(shape.radius)
        self.center = np.asarray(shape.bounding_center, dtype=np.float64)
        self.bound = float(shape.bounding_radius)
        self.is_cylinder = shape.kind == 'cylinder'
        self.cylinder = (float(shape.cylinder_radius), float(shape.cylinder_half_length)) \
            if self.is_cylinder else (0.0, 0.0)
        if self.is_cylinder:
            self.triangles, self.planes = np.zeros((0, 3, 3)), np.zeros((0, 4))
        else:
            self.triangles, self.planes = hull_boundary(np.asarray(shape.vertices, np.float64))

    def signed_distances(self, points, pose, indices=None):
        """
        Signed distance of ``points[indices]`` (world frame) to the piece at ``pose``.

        Parameters
        ----------
        points : (n, 3) float
            Points in the world frame.
        pose : (4, 4) float
            Piece-to-world transform.
        indices : (k,) int, optional
            Which points (default: all).

        Returns
        -------
        (k,) float

        """
        points = np.ascontiguousarray(points, dtype=np.float64)
        if indices is None:
            indices = np.arange(points.shape[0], dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        out = np.empty(indices.shape[0])
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        point_shape_distances(points, indices, pose, self.triangles, self.planes,
                              self.radius, self.cylinder[0], self.cylinder[1],
                              self.is_cylinder, out)
        return out


def hull_boundary(vertices):
    """
    Boundary triangles (t, 3, 3) and outward face planes (f, 4) of the hull of ``vertices``.

    Planes are ``(n, -n . a)`` with a unit outward ``n``; they are empty when the hull is flat,
    a segment or a point (it has no inside).
    """
    centre = vertices.mean(axis=0)
    _, singular, axes = np.linalg.svd(vertices - centre, full_matrices=False)
    extent = max(float(np.abs(vertices - centre).max()), 1e-300)
    rank = int((singular > _FLAT_TOLERANCE * extent * math.sqrt(len(vertices))).sum())
    if rank == 3:
        return _solid_boundary(vertices)
    if rank == 2:
        return _polygon_fan(vertices, centre, axes[:2]), np.zeros((0, 4))
    if rank == 1:
        along = (vertices - centre) @ axes[0]
        first, last = vertices[int(np.argmin(along))], vertices[int(np.argmax(along))]
        return np.array([[first, last, last]]), np.zeros((0, 4))
    return np.array([[vertices[0]] * 3]), np.zeros((0, 4))


def _solid_boundary(vertices):
    # Imported here: scipy.spatial costs start-up time where no sensor source is configured.
    from scipy.spatial import ConvexHull
    hull = ConvexHull(vertices)
    triangles = vertices[hull.simplices]
    return np.ascontiguousarray(triangles), np.ascontiguousarray(hull.equations)


def _polygon_fan(vertices, centre, axes):
    from scipy.spatial import ConvexHull
    planar = (vertices - centre) @ axes.T
    ring = vertices[ConvexHull(planar).vertices]
    return np.ascontiguousarray(
        np.stack([np.repeat(ring[:1], len(ring) - 2, axis=0), ring[1:-1], ring[2:]], axis=1))


@njit
def point_shape_distances(points, indices, pose, triangles, planes, radius, cylinder_radius,
                          cylinder_half, is_cylinder, out):
    """Write the signed distance of ``points[indices[k]]`` to the piece at ``pose`` to out[k]."""
    for k in range(indices.shape[0]):
        i = indices[k]
        # Local coordinates: R^T (p - t) of the piece-to-world pose.
        dx = points[i, 0] - pose[0, 3]
        dy = points[i, 1] - pose[1, 3]
        dz = points[i, 2] - pose[2, 3]
        x = pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz
        y = pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz
        z = pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz
        if is_cylinder:
            core = _cylinder_distance(x, y, z, cylinder_radius, cylinder_half)
        else:
            core = _hull_distance(x, y, z, triangles, planes)
        out[k] = core - radius


@njit
def points_in_ball(points, cx, cy, cz, radius, out):
    """Write the indices of the points within ``radius`` of c to ``out``; return how many."""
    count = 0
    limit = radius * radius
    for i in range(points.shape[0]):
        gap = (points[i, 0] - cx) ** 2 + (points[i, 1] - cy) ** 2 + (points[i, 2] - cz) ** 2
        if gap <= limit:
            out[count] = i
            count += 1
    return count


@njit
def _hull_distance(x, y, z, triangles, planes):
    deepest = -np.inf
    for f in range(planes.shape[0]):
        deepest = max(deepest, planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z
                      + planes[f, 3])
    if planes.shape[0] > 0 and deepest <= 0.0:
        return deepest  # inside: minus the distance to the nearest face plane
    best = np.inf
    for t in range(triangles.shape[0]):
        tri = triangles[t]
        best = min(best, _point_triangle_squared(x, y, z, tri[0, 0], tri[0, 1], tri[0, 2],
                                                 tri[1, 0], tri[1, 1], tri[1, 2], tri[2, 0],
                                                 tri[2, 1], tri[2, 2]))
    return np.sqrt(best)


@njit
def _cylinder_distance(x, y, z, radius, half):
    radial = np.sqrt(x * x + y * y) - radius
    axial = abs(z) - half
    if radial <= 0.0 and axial <= 0.0:
        return max(radial, axial)
    radial, axial = max(radial, 0.0), max(axial, 0.0)
    return np.sqrt(radial * radial + axial * axial)
