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
Exact signed distances, witnesses and normals of points to one convex piece.

A point is a convex set, so its distance to a piece is exact without sampling the piece. A
polytope piece (the hull of its vertices, swept by ``radius``) is described by the triangles of
its hull boundary and, when it is solid, the outward planes of those triangles:

- outside the hull, the distance is the smallest point-triangle distance over the boundary
  (Ericson, Real-Time Collision Detection 5.1.5); a triangle whose bounding sphere is farther
  than the best triangle so far is skipped;
- inside a solid hull, it is minus the distance to the nearest face plane (the interior of a
  convex polytope is the intersection of its face half-spaces, and the projection of an inside
  point on its nearest face plane lies in that face);
- a flat, segment or point hull has no inside: its triangles are the fan of the polygon, or
  degenerate triangles whose edges are the segment or the point.

A cylinder uses its radial and axial gaps. The sweep radius is subtracted last (the distance to
a Minkowski sum with a ball). Signs and the answer follow the core's conventions (docs/core.md):
> 0 apart, < 0 inside; the normal points from the piece towards the point, and
``point - witness == distance * normal``.

A piece's distance field (``PointDistanceShape.field``) holds exact signed distances at the
centres of a grid of cells around it; the signed distance is 1-Lipschitz, so a field value
bounds the distance of every point of its cell (``gjk_ros.core.point_grid`` uses it for the
self-filter).
"""

import math

import numpy as np

from ._jit import njit
from .triangles import _point_triangle_squared, closest_on_triangle

__all__ = ['PointDistanceShape']

# Relative size below which a hull has no extent along a principal axis.
_FLAT_TOLERANCE = 1e-9
# Relative gap between the face-plane lower bound and the face's distance under which they are
# the same distance (rounding of the two formulas).
_AGREEMENT = 1e-12
# Cube-map bins per face edge, and face planes per bin, of ``facing_planes``.
_MAP_BINS = 6
_MAP_PLANES = 8
# Most cells of a piece's distance field (8 bytes each); its edge follows from the piece size.
_FIELD_CELLS = 32768


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
        self.spheres = triangle_spheres(self.triangles)
        self.plane_map = facing_planes(self.planes, _MAP_PLANES)
        # The piece's box in its own frame (the sweep included): a cheap lower bound.
        self.box = np.ascontiguousarray(np.stack([low - self.radius, high + self.radius]))
        self._field = None

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
        point_shape_distances(points, indices, pose, self.triangles, self.spheres, self.planes,
                              self.radius, self.cylinder[0], self.cylinder[1],
                              self.is_cylinder, out)
        return out

    def within(self, points, pose, indices, padding):
        """Return the mask of ``points[indices]`` at most ``padding`` from the piece."""
        points = np.ascontiguousarray(points, dtype=np.float64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        out = np.empty(indices.shape[0], dtype=np.bool_)
        within_distance(points, indices, np.ascontiguousarray(pose, dtype=np.float64),
                        self.triangles, self.spheres, self.planes, self.radius,
                        self.cylinder[0], self.cylinder[1], self.is_cylinder, padding, out)
        return out

    def closest(self, point, pose):
        """
        Return (distance, witness, normal) of one world point to the piece at ``pose``.

        Exact, in the world frame: ``witness`` is the point of the (swept) piece nearest to
        ``point``, ``normal`` the unit vector from the piece towards the point, and
        ``point - witness == distance * normal``. Inside, the distance is minus the depth and
        the normal the shortest way out. Where that way is not unique (a point on a flat
        piece, on a segment, at a sphere's centre, equally deep below two faces) the normal is
        one of the ways.
        """
        out = np.empty(7)
        piece_closest(np.ascontiguousarray(point, dtype=np.float64).reshape(1, 3),
                      np.ascontiguousarray(pose, dtype=np.float64), self.triangles, self.spheres,
                      self.planes, self.radius, self.cylinder[0], self.cylinder[1],
                      self.is_cylinder, out)
        return float(out[0]), out[1:4], out[4:7]

    def field(self, reach):
        """
        Return the piece's distance field over its box grown by at least ``reach``.

        A tuple (low corner (3,), cell edge, cell counts (3,) int64, values) in the piece
        frame: ``values[i + nx * (j + ny * k)]`` is the exact signed distance at the centre of
        cell (i, j, k). Built once (and again for a larger reach).
        """
        if self._field is None or self._field[0] < reach:
            self._field = (reach,) + self._build_field(reach)
        return self._field[1:]

    def _build_field(self, reach):
        extent = self.box[1] - self.box[0] + 2.0 * reach
        edge = max(float(np.prod(extent)) / _FIELD_CELLS, 1e-300) ** (1.0 / 3.0)
        edge = max(edge, float(extent.max()) / 1024.0)
        dims = np.ceil(extent / edge).astype(np.int64) + 1
        low = self.box[0] - reach
        axes = [low[axis] + (np.arange(dims[axis]) + 0.5) * edge for axis in range(3)]
        z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing='ij')
        centres = np.ascontiguousarray(np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1))
        values = self.signed_distances(centres, np.eye(4))
        return np.ascontiguousarray(low), float(edge), dims, values


def facing_planes(planes, count):
    """
    Return the ``count`` face planes most facing each bin of a cube map, (6 _MAP_BINS^2, count).

    A direction from the piece's centre falls in one bin (``_direction_bin``); the largest
    value of a subset of the face planes is a lower bound of the distance like that of all of
    them (each face plane supports the hull), and the planes facing the point make it tight.
    Empty for a hull without inside.
    """
    if planes.shape[0] == 0:
        return np.zeros((0, count), dtype=np.int64)
    bins = _MAP_BINS  # the bins _facing_bound looks a direction up in
    middles = (np.arange(bins) + 0.5) / bins * 2.0 - 1.0
    u, v = np.meshgrid(middles, middles, indexing='ij')
    directions = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            direction = np.zeros((bins * bins, 3))
            direction[:, axis] = sign
            direction[:, (axis + 1) % 3], direction[:, (axis + 2) % 3] = u.ravel(), v.ravel()
            directions.append(direction)
    directions = np.concatenate(directions)
    facing = directions @ planes[:, :3].T
    count = min(count, planes.shape[0])
    return np.ascontiguousarray(np.argsort(-facing, axis=1)[:, :count].astype(np.int64))


def triangle_spheres(triangles):
    """Bounding sphere (centre, radius) of each triangle, (t, 4): centroid and farthest corner."""
    if triangles.shape[0] == 0:
        return np.zeros((0, 4))
    centres = triangles.mean(axis=1)
    radii = np.sqrt(((triangles - centres[:, None, :]) ** 2).sum(axis=2)).max(axis=1)
    # Grown by a rounding margin, so that skipping a triangle never skips the nearest one.
    return np.ascontiguousarray(np.c_[centres, radii * (1.0 + 1e-12) + 1e-15])


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


# --- one point against one piece -----------------------------------------------------------------

@njit
def point_shape_distances(points, indices, pose, triangles, spheres, planes, radius,
                          cylinder_radius, cylinder_half, is_cylinder, out):
    """Write the signed distance of ``points[indices[k]]`` to the piece at ``pose`` to out[k]."""
    for k in range(indices.shape[0]):
        x, y, z = _local(points, indices[k], pose)
        out[k] = _core_distance(x, y, z, triangles, spheres, planes, cylinder_radius,
                                cylinder_half, is_cylinder) - radius


@njit
def within_distance(points, indices, pose, triangles, spheres, planes, radius, cylinder_radius,
                    cylinder_half, is_cylinder, padding, out):
    """Write whether ``points[indices[k]]`` is at most ``padding`` from the piece to out[k]."""
    for k in range(indices.shape[0]):
        x, y, z = _local(points, indices[k], pose)
        out[k] = _within(x, y, z, triangles, spheres, planes, radius, cylinder_radius,
                         cylinder_half, is_cylinder, padding)


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
def _plane_bound(x, y, z, planes, stop):
    """
    Largest face-plane value: minus the depth inside a solid hull, a lower bound outside.

    Returns (value, face) early, at the first plane whose value exceeds ``stop``.
    """
    deepest, face = -np.inf, -1
    for f in range(planes.shape[0]):
        value = planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z + planes[f, 3]
        if value > deepest:
            deepest, face = value, f
            if value > stop:
                break
    return deepest, face


@njit
def _core_distance(x, y, z, triangles, spheres, planes, cylinder_radius, cylinder_half,
                   is_cylinder, bound=np.inf):
    """
    Distance of local (x, y, z) to the unswept piece: exact when below ``bound``.

    At or above ``bound`` it is some value at least ``bound`` (a search only needs to know
    that the point is not nearer); ``bound`` = inf is always exact.
    """
    if is_cylinder:
        return _cylinder_distance(x, y, z, cylinder_radius, cylinder_half)
    return _hull_distance(x, y, z, triangles, spheres, planes, bound)


@njit
def _hull_distance(x, y, z, triangles, spheres, planes, bound):
    deepest, face = _plane_bound(x, y, z, planes, bound)
    if face >= 0 and (deepest <= 0.0 or deepest > bound):
        return deepest  # inside: minus the distance to the nearest face plane
    best = np.inf
    if face >= 0:
        # The most violated face plane bounds the distance from below, the distance to that
        # face's triangle from above: when they agree (the nearest point lies inside that
        # face, the usual case for a point near a link) the other triangles cannot be nearer.
        best = _triangle_squared(x, y, z, triangles, face)
        upper = np.sqrt(best)
        if upper - deepest <= _AGREEMENT * max(upper, 1.0):
            return upper
    return np.sqrt(_nearest_triangle(x, y, z, triangles, spheres, best, -1, bound)[0])


@njit
def _nearest_triangle(x, y, z, triangles, spheres, best, chosen, bound):
    """
    Smallest squared point-triangle distance and its triangle, from ``best`` at ``chosen``.

    A triangle whose bounding sphere is farther than the best distance so far, or than
    ``bound``, is skipped (strictly farther: a triangle at exactly that distance is measured).
    """
    reach = min(np.sqrt(best), bound)
    for t in range(triangles.shape[0]):
        dx, dy, dz = x - spheres[t, 0], y - spheres[t, 1], z - spheres[t, 2]
        limit = spheres[t, 3] + reach
        if dx * dx + dy * dy + dz * dz > limit * limit:
            continue  # every point of the triangle is farther
        squared = _triangle_squared(x, y, z, triangles, t)
        if squared < best:
            best, chosen = squared, t
            reach = min(np.sqrt(best), bound)
    return best, chosen


@njit
def _triangle_squared(x, y, z, triangles, t):
    tri = triangles[t]
    return _point_triangle_squared(x, y, z, tri[0, 0], tri[0, 1], tri[0, 2], tri[1, 0],
                                   tri[1, 1], tri[1, 2], tri[2, 0], tri[2, 1], tri[2, 2])


@njit
def _within(x, y, z, triangles, spheres, planes, radius, cylinder_radius, cylinder_half,
            is_cylinder, padding):
    """Whether the signed distance of local (x, y, z) to the piece is at most ``padding``."""
    return _core_distance(x, y, z, triangles, spheres, planes, cylinder_radius, cylinder_half,
                          is_cylinder, padding + radius) - radius <= padding


@njit
def _direction_bin(x, y, z, centre, bins):
    """Return the cube-map bin of the direction from ``centre`` to local (x, y, z), or -1."""
    d = (x - centre[0], y - centre[1], z - centre[2])
    axis = 0
    if abs(d[1]) > abs(d[axis]):
        axis = 1
    if abs(d[2]) > abs(d[axis]):
        axis = 2
    major = abs(d[axis])
    if not major > 0.0:
        return -1
    u = min(int((d[(axis + 1) % 3] / major + 1.0) * 0.5 * bins), bins - 1)
    v = min(int((d[(axis + 2) % 3] / major + 1.0) * 0.5 * bins), bins - 1)
    return ((2 * axis + (1 if d[axis] > 0.0 else 0)) * bins + max(u, 0)) * bins + max(v, 0)


@njit
def _facing_row(x, y, z, centre, plane_map):
    """Return the row of ``plane_map`` for local (x, y, z), or -1 (no planes, at the centre)."""
    if plane_map.shape[0] == 0:
        return -1
    return _direction_bin(x, y, z, centre, _MAP_BINS)  # facing_planes' bins


@njit
def _facing_bound(x, y, z, centre, planes, plane_map):
    """Return a lower bound of the distance: the largest value of the planes facing it."""
    where = _facing_row(x, y, z, centre, plane_map)
    bound = -np.inf
    for k in range(plane_map.shape[1] if where >= 0 else 0):
        f = plane_map[where, k]
        bound = max(bound, planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z
                    + planes[f, 3])
    return bound


@njit
def _facing_box_bound(x, y, z, ex, ey, ez, centre, planes, plane_map):
    """
    Return a lower bound of the distance of every point of a box (centre, half extents).

    Any face plane bounds the distance from below; its smallest value over the box is at the
    corner against its normal: n . c + d - sum_i |n_i| e_i. The planes are those facing the
    box's centre.
    """
    where = _facing_row(x, y, z, centre, plane_map)
    bound = -np.inf
    for k in range(plane_map.shape[1] if where >= 0 else 0):
        f = plane_map[where, k]
        reach = abs(planes[f, 0]) * ex + abs(planes[f, 1]) * ey + abs(planes[f, 2]) * ez
        bound = max(bound, planes[f, 0] * x + planes[f, 1] * y + planes[f, 2] * z
                    + planes[f, 3] - reach)
    return bound


@njit
def _cannot_beat(x, y, z, best, box, centre, planes, plane_map, radius):
    """
    Whether cheap lower bounds show local (x, y, z) no nearer than ``best``.

    The bounds: the gap to the piece's box (the piece lies in it; a point inside the box is not
    bounded by it) and the face planes facing the point.
    """
    gap = _box_gap(x, y, z, box)
    if gap > 0.0 and gap >= best:
        return True
    return _facing_bound(x, y, z, centre, planes, plane_map) - radius >= best


@njit
def _box_gap(x, y, z, box):
    gx = max(box[0, 0] - x, 0.0, x - box[1, 0])
    gy = max(box[0, 1] - y, 0.0, y - box[1, 1])
    gz = max(box[0, 2] - z, 0.0, z - box[1, 2])
    return np.sqrt(gx * gx + gy * gy + gz * gz)


@njit
def _cylinder_distance(x, y, z, radius, half):
    radial = np.sqrt(x * x + y * y) - radius
    axial = abs(z) - half
    if radial <= 0.0 and axial <= 0.0:
        return max(radial, axial)
    radial, axial = max(radial, 0.0), max(axial, 0.0)
    return np.sqrt(radial * radial + axial * axial)


@njit
def _field_value(x, y, z, low, inverse_edge, dims, values):
    """
    Return the field value of the cell holding local (x, y, z); NaN outside the field.

    A product by the inverse edge may round a point into the next cell: its centre is then an
    ulp farther than half a diagonal, which ``_cell_reach`` allows for.
    """
    i = np.floor((x - low[0]) * inverse_edge)
    j = np.floor((y - low[1]) * inverse_edge)
    k = np.floor((z - low[2]) * inverse_edge)
    if i < 0.0 or j < 0.0 or k < 0.0 or i >= dims[0] or j >= dims[1] or k >= dims[2]:
        return np.nan  # neither comparison holds: measured exactly
    return values[np.int64(i) + dims[0] * (np.int64(j) + dims[1] * np.int64(k))]


# --- the nearest point of one piece to a point -----------------------------------------------

@njit
def piece_closest(points, pose, triangles, spheres, planes, radius, cylinder_radius,
                  cylinder_half, is_cylinder, out):
    """
    Write the answer for ``points[0]``: out = (distance, witness (3), normal (3)), world frame.

    The distance follows the same branches as ``_core_distance`` (so it equals what a search
    measured); the witness on the unswept piece moves out along the normal by the sweep radius.
    """
    x, y, z = _local(points, 0, pose)
    if is_cylinder:
        core, wx, wy, wz, nx, ny, nz = _cylinder_closest(x, y, z, cylinder_radius,
                                                         cylinder_half)
    else:
        core, wx, wy, wz, nx, ny, nz = _hull_closest(x, y, z, triangles, spheres, planes)
    wx, wy, wz = wx + radius * nx, wy + radius * ny, wz + radius * nz
    out[0] = core - radius
    for c in range(3):
        out[1 + c] = pose[c, 0] * wx + pose[c, 1] * wy + pose[c, 2] * wz + pose[c, 3]
        out[4 + c] = pose[c, 0] * nx + pose[c, 1] * ny + pose[c, 2] * nz


@njit
def _hull_closest(x, y, z, triangles, spheres, planes):
    """Return (distance, witness, normal) of local (x, y, z) to the unswept hull."""
    deepest, face = _plane_bound(x, y, z, planes, np.inf)
    if face >= 0 and deepest <= 0.0:
        # Inside or on: the projection on the nearest face plane, which lies in that face.
        nx, ny, nz = planes[face, 0], planes[face, 1], planes[face, 2]
        return deepest, x - deepest * nx, y - deepest * ny, z - deepest * nz, nx, ny, nz
    best, chosen = np.inf, -1
    agree = False
    if face >= 0:
        best, chosen = _triangle_squared(x, y, z, triangles, face), face
        upper = np.sqrt(best)
        agree = upper - deepest <= _AGREEMENT * max(upper, 1.0)
    if not agree:
        best, chosen = _nearest_triangle(x, y, z, triangles, spheres, best, chosen, np.inf)
    tri = triangles[chosen]
    cx, cy, cz = closest_on_triangle(x, y, z, tri[0, 0], tri[0, 1], tri[0, 2], tri[1, 0],
                                     tri[1, 1], tri[1, 2], tri[2, 0], tri[2, 1], tri[2, 2])
    nx, ny, nz = x - cx, y - cy, z - cz
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    # Below the rounding of the coordinates, x - c is noise, not a direction.
    scale = max(abs(x), abs(y), abs(z))
    for corner in range(3):
        for axis in range(3):
            scale = max(scale, abs(tri[corner, axis]))
    if agree:
        nx, ny, nz = planes[face, 0], planes[face, 1], planes[face, 2]  # nearest in the face
    elif length > _AGREEMENT * scale:
        nx, ny, nz = nx / length, ny / length, nz / length
    elif face >= 0:
        nx, ny, nz = planes[face, 0], planes[face, 1], planes[face, 2]  # on the boundary
    else:
        nx, ny, nz = _flat_normal(tri)  # on a hull without inside: either side is a way out
    return np.sqrt(best), cx, cy, cz, nx, ny, nz


@njit
def _flat_normal(tri):
    """Return a unit normal of a triangle; of its longest edge if it has no area; else +x."""
    abx, aby, abz = tri[1, 0] - tri[0, 0], tri[1, 1] - tri[0, 1], tri[1, 2] - tri[0, 2]
    acx, acy, acz = tri[2, 0] - tri[0, 0], tri[2, 1] - tri[0, 1], tri[2, 2] - tri[0, 2]
    nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    if length > 0.0:
        return nx / length, ny / length, nz / length
    if abx * abx + aby * aby + abz * abz < acx * acx + acy * acy + acz * acz:
        abx, aby, abz = acx, acy, acz
    if abx == 0.0 and aby == 0.0 and abz == 0.0:
        return 1.0, 0.0, 0.0  # a point: every direction is a way out
    # Perpendicular to the segment: its cross product with the axis it leans on least.
    if abs(abx) <= abs(aby) and abs(abx) <= abs(abz):
        nx, ny, nz = 0.0, abz, -aby
    elif abs(aby) <= abs(abz):
        nx, ny, nz = -abz, 0.0, abx
    else:
        nx, ny, nz = aby, -abx, 0.0
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    return nx / length, ny / length, nz / length


@njit
def _cylinder_closest(x, y, z, radius, half):
    """Return (distance, witness, normal) of local (x, y, z) to the cylinder."""
    rho = np.sqrt(x * x + y * y)
    ux, uy = 1.0, 0.0  # on the axis every radial direction is as near
    if rho > 0.0:
        ux, uy = x / rho, y / rho
    sz = 1.0 if z >= 0.0 else -1.0
    radial, axial = rho - radius, abs(z) - half
    distance = _cylinder_distance(x, y, z, radius, half)
    if radial <= 0.0 and axial <= 0.0:  # inside: out through the nearer of side and cap
        if radial >= axial:
            return distance, radius * ux, radius * uy, z, ux, uy, 0.0
        return distance, x, y, sz * half, 0.0, 0.0, sz
    wx, wy = x, y
    if radial > 0.0:
        wx, wy = radius * ux, radius * uy
    wz = min(max(z, -half), half)
    dx, dy, dz = x - wx, y - wy, z - wz
    length = np.sqrt(dx * dx + dy * dy + dz * dz)
    return distance, wx, wy, wz, dx / length, dy / length, dz / length
