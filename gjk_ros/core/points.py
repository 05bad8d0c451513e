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

__all__ = ['PointDistanceShape', 'PointGrid', 'points_in_ball']

# Relative size below which a hull has no extent along a principal axis.
_FLAT_TOLERANCE = 1e-9
# Relative gap between the face-plane lower bound and the face's distance under which they are
# the same distance (rounding of the two formulas).
_AGREEMENT = 1e-12


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
            radius, half = self.cylinder
            low, high = np.array([-radius, -radius, -half]), np.array([radius, radius, half])
        else:
            vertices = np.asarray(shape.vertices, np.float64)
            self.triangles, self.planes = hull_boundary(vertices)
            low, high = vertices.min(axis=0), vertices.max(axis=0)
        # The piece's box in its own frame (the sweep included): a cheap lower bound.
        self.box = np.ascontiguousarray(np.stack([low - self.radius, high + self.radius]))

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

    def nearest(self, points, pose, indices, best=np.inf, best_index=-1):
        """
        Return (distance, index) of the point of ``points[indices]`` nearest to the piece.

        Exact: candidates are visited in increasing order of their distance to the piece's box
        (a lower bound), and each face plane bounds the distance from below before the
        boundary triangles are measured; ``best`` (with ``best_index``) is a known distance.
        """
        points = np.ascontiguousarray(points, dtype=np.float64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        bounds = np.empty(indices.shape[0])
        box_distances(points, indices, pose, self.box, bounds)
        order = indices[np.argsort(bounds, kind='stable')]
        bounds.sort()
        result = np.array([best, float(best_index)])
        nearest_in_order(points, order, bounds, pose, self.triangles, self.planes, self.radius,
                         self.cylinder[0], self.cylinder[1], self.is_cylinder, result)
        return float(result[0]), int(result[1])

    def within(self, points, pose, indices, padding):
        """Return the mask of ``points[indices]`` at most ``padding`` from the piece."""
        points = np.ascontiguousarray(points, dtype=np.float64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        out = np.empty(indices.shape[0], dtype=np.bool_)
        within_distance(points, indices, np.ascontiguousarray(pose, dtype=np.float64),
                        self.triangles, self.planes, self.radius, self.cylinder[0],
                        self.cylinder[1], self.is_cylinder, padding, out)
        return out


class PointGrid:
    """
    A point set bucketed in a uniform grid of cubic cells, for exact nearest-point searches.

    Parameters
    ----------
    points : (n, 3) float
        Finite points (n >= 1).
    cell : float
        Preferred cell edge; enlarged so that the grid has at most ``max_cells`` cells.
    max_cells : int
        Bound of the grid's memory (two int64 per cell).

    """

    def __init__(self, points, cell=0.05, max_cells=2_000_000):
        self.points = np.ascontiguousarray(points, dtype=np.float64)
        low = self.points.min(axis=0)
        span = self.points.max(axis=0) - low
        edge = max(float(cell), float(np.prod(span + cell)) ** (1.0 / 3.0)
                   / max_cells ** (1.0 / 3.0))
        dims = (span // edge).astype(np.int64) + 1
        while int(np.prod(dims)) > max_cells:  # rounding: one more step is always enough
            edge *= 1.01
            dims = (span // edge).astype(np.int64) + 1
        cells = ((self.points - low) // edge).astype(np.int64)
        np.minimum(cells, dims - 1, out=cells)
        ids = cells[:, 0] + dims[0] * (cells[:, 1] + dims[1] * cells[:, 2])
        self.order = np.argsort(ids, kind='stable').astype(np.int64)
        counts = np.bincount(ids, minlength=int(np.prod(dims)))
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.low, self.edge, self.dims = low, edge, dims

    def nearest(self, shape, pose, hint=None, samples=32):
        """
        Return (distance, index) of the point nearest to a ``PointDistanceShape`` at ``pose``.

        Exact. A few points (``hint``, e.g. the last answer, and an even sample) give a first
        bound; then only the cells within that bound plus the piece's bounding radius of its
        centre are visited, a cell is skipped when its distance to the piece's box exceeds the
        best distance so far, and each point is bounded by the box and the face planes before
        its boundary triangles are measured.
        """
        points = self.points
        first = np.unique(np.linspace(0, len(points) - 1, samples).astype(np.int64))
        if hint is not None:
            first = np.append(first, np.int64(hint))
        distances = shape.signed_distances(points, pose, first)
        best = int(np.argmin(distances))
        result = np.array([distances[best], float(first[best])])
        centre = pose[:3, :3] @ shape.center + pose[:3, 3]
        grid_nearest(points, self.order, self.starts, self.low, self.edge, self.dims,
                     np.ascontiguousarray(pose, dtype=np.float64), shape.box, centre,
                     shape.bound, shape.triangles, shape.planes, shape.radius,
                     shape.cylinder[0], shape.cylinder[1], shape.is_cylinder, result)
        return float(result[0]), int(result[1])


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
        x, y, z = _local(points, indices[k], pose)
        out[k] = _core_distance(x, y, z, triangles, planes, cylinder_radius, cylinder_half,
                                is_cylinder) - radius


@njit
def _local(points, i, pose):
    """Coordinates of points[i] in the piece frame: R^T (p - t) of the piece-to-world pose."""
    dx = points[i, 0] - pose[0, 3]
    dy = points[i, 1] - pose[1, 3]
    dz = points[i, 2] - pose[2, 3]
    return (pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz,
            pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz,
            pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz)


@njit
def box_distances(points, indices, pose, box, out):
    """Write a lower bound of the distance of ``points[indices[k]]`` to the piece to out[k]."""
    for k in range(indices.shape[0]):
        x, y, z = _local(points, indices[k], pose)
        gap = _box_gap(x, y, z, box)
        out[k] = gap if gap > 0.0 else -np.inf  # inside the box: no bound


@njit
def _plane_bound(x, y, z, planes):
    """Largest face-plane value: minus the depth inside a solid hull, a lower bound outside."""
    deepest = -np.inf
    for f in range(planes.shape[0]):
        deepest = max(deepest, planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z
                      + planes[f, 3])
    return deepest


@njit
def _core_distance(x, y, z, triangles, planes, cylinder_radius, cylinder_half, is_cylinder):
    if is_cylinder:
        return _cylinder_distance(x, y, z, cylinder_radius, cylinder_half)
    return _hull_distance(x, y, z, triangles, planes)


@njit
def nearest_in_order(points, order, bounds, pose, triangles, planes, radius, cylinder_radius,
                     cylinder_half, is_cylinder, result):
    """
    Nearest of ``points[order]``, visited by increasing lower bound ``bounds``.

    ``result`` holds (best distance, best index) on entry and on return.
    """
    best, best_index = result[0], result[1]
    solid = planes.shape[0] > 0
    for k in range(order.shape[0]):
        if bounds[k] >= best:
            break  # every later point is at least as far
        x, y, z = _local(points, order[k], pose)
        if solid and _plane_bound(x, y, z, planes) - radius >= best:
            continue
        distance = _core_distance(x, y, z, triangles, planes, cylinder_radius, cylinder_half,
                                  is_cylinder) - radius
        if distance < best:
            best, best_index = distance, order[k]
    result[0], result[1] = best, best_index


@njit
def within_distance(points, indices, pose, triangles, planes, radius, cylinder_radius,
                    cylinder_half, is_cylinder, padding, out):
    """Write whether ``points[indices[k]]`` is at most ``padding`` from the piece to out[k]."""
    solid = planes.shape[0] > 0
    for k in range(indices.shape[0]):
        x, y, z = _local(points, indices[k], pose)
        if solid:
            bound = _plane_bound(x, y, z, planes)
            if bound <= 0.0 or bound - radius > padding:
                out[k] = bound - radius <= padding  # inside, or farther than a face allows
                continue
        out[k] = _core_distance(x, y, z, triangles, planes, cylinder_radius, cylinder_half,
                                is_cylinder) - radius <= padding


@njit
def _box_gap(x, y, z, box):
    gx = max(box[0, 0] - x, 0.0, x - box[1, 0])
    gy = max(box[0, 1] - y, 0.0, y - box[1, 1])
    gz = max(box[0, 2] - z, 0.0, z - box[1, 2])
    return np.sqrt(gx * gx + gy * gy + gz * gz)


@njit
def grid_nearest(points, order, starts, low, edge, dims, pose, box, centre, bound, triangles,
                 planes, radius, cylinder_radius, cylinder_half, is_cylinder, result):
    """
    Nearest grid point to the piece; ``result`` is (best distance, index) in and out.

    A point farther than best + bound from the piece's bounding centre is farther than best
    from the piece; a cell whose centre is farther than best + half its diagonal from the
    piece's box holds no point nearer than best.
    """
    best, best_index = result[0], result[1]
    reach = best + bound
    half_diagonal = 0.5 * np.sqrt(3.0) * edge
    x0, x1 = _cell_range(centre[0], reach, low[0], edge, dims[0])
    y0, y1 = _cell_range(centre[1], reach, low[1], edge, dims[1])
    z0, z1 = _cell_range(centre[2], reach, low[2], edge, dims[2])
    solid = planes.shape[0] > 0
    for iz in range(z0, z1):
        for iy in range(y0, y1):
            for ix in range(x0, x1):
                cell = ix + dims[0] * (iy + dims[1] * iz)
                if starts[cell] == starts[cell + 1]:
                    continue
                cx = low[0] + (ix + 0.5) * edge - pose[0, 3]
                cy = low[1] + (iy + 0.5) * edge - pose[1, 3]
                cz = low[2] + (iz + 0.5) * edge - pose[2, 3]
                lx = pose[0, 0] * cx + pose[1, 0] * cy + pose[2, 0] * cz
                ly = pose[0, 1] * cx + pose[1, 1] * cy + pose[2, 1] * cz
                lz = pose[0, 2] * cx + pose[1, 2] * cy + pose[2, 2] * cz
                # Only a positive gap bounds the distance: inside the box it may be negative.
                gap = _box_gap(lx, ly, lz, box) - half_diagonal
                if gap > 0.0 and gap >= best:
                    continue
                for k in range(starts[cell], starts[cell + 1]):
                    i = order[k]
                    x, y, z = _local(points, i, pose)
                    gap = _box_gap(x, y, z, box)
                    if gap > 0.0 and gap >= best:
                        continue
                    if solid and _plane_bound(x, y, z, planes) - radius >= best:
                        continue
                    distance = _core_distance(x, y, z, triangles, planes, cylinder_radius,
                                              cylinder_half, is_cylinder) - radius
                    if distance < best:
                        best, best_index = distance, i
    result[0], result[1] = best, best_index


@njit
def _cell_range(centre, reach, low, edge, count):
    """Cells [first, last) along one axis that overlap [centre - reach, centre + reach]."""
    first = max(np.floor((centre - reach - low) / edge), 0.0)
    last = min(np.floor((centre + reach - low) / edge) + 1.0, float(count))
    return int(first), int(max(last, first))


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
    deepest, face = -np.inf, -1
    for f in range(planes.shape[0]):
        value = planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z + planes[f, 3]
        if value > deepest:
            deepest, face = value, f
    if face >= 0 and deepest <= 0.0:
        return deepest  # inside: minus the distance to the nearest face plane
    if face >= 0:
        # The most violated face plane bounds the distance from below, the distance to that
        # face's triangle from above: when they agree (the nearest point lies inside that
        # face, the usual case for a point near a link) the other triangles cannot be nearer.
        tri = triangles[face]
        upper = np.sqrt(_point_triangle_squared(x, y, z, tri[0, 0], tri[0, 1], tri[0, 2],
                                                tri[1, 0], tri[1, 1], tri[1, 2], tri[2, 0],
                                                tri[2, 1], tri[2, 2]))
        if upper - deepest <= _AGREEMENT * max(upper, 1.0):
            return upper
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
