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
Convex bodies: hull vertices plus the vertex adjacency graph, built once.

A ``ConvexPolytope`` is the convex hull of a point set, optionally swept by a sphere of
``radius`` (so a sphere is a point plus a radius and a capsule a segment plus a radius: exact, not
tessellated), or a smooth primitive with an exact support function (a z-axis cylinder or cone, an
ellipsoid), or a half-space (z <= 0 of its frame: a table, a floor, a wall), which the queries
measure in closed form. Degenerate point sets are valid
convex geometry: a single point, a segment and a flat polygon get the vertex graph of what they
are (no vertex, one edge, a cycle), so hill climbing stays correct on them.

The adjacency is CSR (Cameron's "rings", coal's ``nneighbors_``): the neighbours of vertex ``i``
are ``neighbor_indices[neighbor_offsets[i]:neighbor_offsets[i + 1]]``.
"""

import itertools
import math

import numpy as np

from .support import (KIND_CONE, KIND_CYLINDER, KIND_ELLIPSOID, KIND_HALF_SPACE, KIND_POLYTOPE,
                      SEED_DIRECTIONS, support_cone, support_cylinder, support_ellipsoid)
from .tolerances import DEGENERATE_EXTENT_REL, HILL_CLIMB_MIN_VERTICES

__all__ = ['ConvexPolytope']

_KIND_NAMES = {KIND_POLYTOPE: 'polytope', KIND_CYLINDER: 'cylinder', KIND_CONE: 'cone',
               KIND_ELLIPSOID: 'ellipsoid', KIND_HALF_SPACE: 'half_space'}
_next_key = itertools.count(1)


def _as_points(points, name):
    """Validate a point set: (n, 3) finite float64, n >= 1."""
    try:
        array = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f'{name}: not an array of numbers ({error})') from None
    if array.ndim == 1 and array.shape[0] == 3:
        array = array.reshape(1, 3)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f'{name}: expected an (n, 3) array of points, got shape {array.shape}')
    if array.shape[0] == 0:
        raise ValueError(f'{name}: the point set is empty')
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f'{name}: {rows.size} point(s) have NaN or infinite coordinates '
                         f'(first rows: {rows[:5].tolist()})')
    return array


def _check_length(value, name, allow_zero=True):
    value = float(value)
    if not math.isfinite(value) or value < 0.0 or (value == 0.0 and not allow_zero):
        raise ValueError(f'{name} must be a finite non-negative number, got {value!r}')
    return value


def _csr_from_edges(count, edges):
    """Symmetric CSR adjacency of ``count`` vertices from an (m, 2) array of undirected edges."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    edges = edges[edges[:, 0] != edges[:, 1]]
    both = np.concatenate([edges, edges[:, ::-1]])
    both = np.unique(both, axis=0)
    offsets = np.zeros(count + 1, dtype=np.int32)
    np.add.at(offsets, both[:, 0] + 1, 1)
    np.cumsum(offsets, out=offsets)
    return offsets, both[:, 1].astype(np.int32)


def _principal_axes(points):
    """Centre, singular values (descending) and principal directions of a point set."""
    centre = points.mean(axis=0)
    _, singular, axes = np.linalg.svd(points - centre, full_matrices=False)
    singular = np.concatenate([singular, np.zeros(3 - singular.size)])
    return centre, singular, axes


def _segment_hull(points, axis):
    """Return the two extreme points along ``axis``."""
    along = points @ axis
    ends = np.array([np.argmin(along), np.argmax(along)])
    return points[ends], np.array([[0, 1]])


def _polygon_hull(points, centre, axes):
    """Hull of (nearly) coplanar points as a polygon with its boundary cycle as edges."""
    from scipy.spatial import ConvexHull
    planar = (points - centre) @ axes[:2].T
    hull = ConvexHull(planar)
    order = hull.vertices  # counter-clockwise for 2D hulls
    cycle = np.stack([np.arange(order.size), np.roll(np.arange(order.size), -1)], axis=1)
    return points[order], cycle


def _solid_hull(points):
    """Hull of a full-dimensional point set; edges from qhull's triangulated facets."""
    from scipy.spatial import ConvexHull
    hull = ConvexHull(points)
    keep = hull.vertices
    remap = np.full(points.shape[0], -1, dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    triangles = remap[hull.simplices]
    edges = np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]])
    return points[keep], edges


def hull_with_adjacency(points, name='points'):
    """
    Extreme points of a point set and the edges of its hull's vertex graph.

    Returns ``(vertices, neighbor_offsets, neighbor_indices)``. The dimension is read from the
    principal extents (``DEGENERATE_EXTENT_REL``): a point, a segment, a polygon or a solid.
    Coordinates are never flattened, only the graph is chosen by dimension.
    """
    # scipy is imported here, not at the top: the node only unpickles polytopes that its
    # geometry worker built, and importing scipy.spatial cost it 0.3 s of its start.
    from scipy.spatial import QhullError
    points = np.unique(_as_points(points, name), axis=0)
    if points.shape[0] == 1:
        return points, np.zeros(2, np.int32), np.zeros(0, np.int32)
    centre, singular, axes = _principal_axes(points)
    threshold = DEGENERATE_EXTENT_REL * singular[0]
    if singular[1] <= threshold:
        vertices, edges = _segment_hull(points, axes[0])
    elif singular[2] <= threshold:
        vertices, edges = _polygon_hull(points, centre, axes)
    else:
        try:
            vertices, edges = _solid_hull(points)
        except QhullError:
            # Qhull's own precision test calls the set flat: treat it as the polygon it is.
            vertices, edges = _polygon_hull(points, centre, axes)
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    offsets, indices = _csr_from_edges(vertices.shape[0], edges)
    return vertices, offsets, indices


class ConvexPolytope:
    """
    A convex body for the GJK kernels, built once and immutable.

    Attributes
    ----------
    vertices : (n, 3) float
        Hull vertices in the body frame (for a cylinder: its two cap centres).
    neighbor_offsets : (n + 1,) int32
        CSR row offsets of the vertex adjacency graph.
    neighbor_indices : (m,) int32
        CSR column indices: the neighbours of every vertex.
    radius : float
        Sweep radius: the body is the core shape grown by a ball of this radius.
    kind : str
        'polytope', 'cylinder', 'cone', 'ellipsoid' or 'half_space'.
    bounding_center : (3,) float
        Centre of a bounding sphere, body frame.
    bounding_radius : float
        Radius of that sphere (the sweep radius included).

    """

    def __init__(self, vertices, neighbor_offsets, neighbor_indices, *, radius=0.0,
                 kind=KIND_POLYTOPE, cylinder=(0.0, 0.0)):
        """Wrap prepared arrays; use the ``from_*`` and primitive constructors instead."""
        vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        neighbor_offsets = np.ascontiguousarray(neighbor_offsets, dtype=np.int32)
        neighbor_indices = np.ascontiguousarray(neighbor_indices, dtype=np.int32)
        if int(kind) == KIND_POLYTOPE and len(vertices) >= HILL_CLIMB_MIN_VERTICES and \
                len(neighbor_offsets) == len(vertices) + 1:
            vertices, neighbor_offsets, neighbor_indices = seed_order(
                vertices, neighbor_offsets, neighbor_indices)
        self._vertices = vertices
        self._offsets = neighbor_offsets
        self._indices = neighbor_indices
        for array in (self._vertices, self._offsets, self._indices):
            array.flags.writeable = False
        self._radius = _check_length(radius, 'radius')
        self._kind = int(kind)
        self._cylinder = (float(cylinder[0]), float(cylinder[1]))
        self._center, self._bound = self._bounding_sphere()
        self._key = next(_next_key)
        self._packed = self._make_packed()

    def __reduce__(self):
        """
        Pickle as the constructor's arguments, so that an unpickled copy gets its own key.

        The key identifies a body to the simplex caches; a copy made in another process (the
        node's geometry worker) must never share a key with a different body here.
        """
        return (_rebuild, (self._vertices, self._offsets, self._indices, self._radius,
                           self._kind, self._cylinder))

    # Constructors ------------------------------------------------------------------------------

    @classmethod
    def from_points(cls, points, radius=0.0):
        """
        Convex hull of a point set, optionally swept by a sphere.

        Parameters
        ----------
        points : (n, 3) float
            Any point set; duplicates, coplanar or collinear points and a single point are valid.
        radius : float
            Sweep radius (0 for a plain polytope).

        Raises
        ------
        ValueError
            If the set is empty, has the wrong shape or non-finite coordinates, or the radius is
            negative or not finite.

        """
        vertices, offsets, indices = hull_with_adjacency(points)
        return cls(vertices, offsets, indices, radius=radius)

    @classmethod
    def from_trimesh(cls, mesh, radius=0.0):
        """Convex hull of a ``trimesh.Trimesh`` (its vertices; faces are not needed)."""
        vertices = getattr(mesh, 'vertices', None)
        if vertices is None:
            raise ValueError('mesh: expected a trimesh.Trimesh (an object with .vertices)')
        return cls.from_points(np.asarray(vertices), radius=radius)

    @classmethod
    def box(cls, half_extents):
        """Axis-aligned box centred at the origin with the given (3,) half sizes."""
        half = np.array(half_extents, dtype=np.float64).reshape(-1)
        if half.shape != (3,):
            raise ValueError(f'half_extents: expected 3 values, got {half.size}')
        for axis, value in zip('xyz', half):
            _check_length(value, f'half_extents.{axis}')
        corners = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * half
        return cls.from_points(corners)

    @classmethod
    def sphere(cls, radius):
        """Sphere centred at the origin: a point swept by ``radius`` (exact)."""
        return cls.from_points(np.zeros((1, 3)), radius=_check_length(radius, 'radius'))

    @classmethod
    def capsule(cls, radius, length):
        """Capsule along z: the segment z in [-length/2, length/2] swept by ``radius``."""
        half = _check_length(length, 'length') / 2.0
        ends = np.array([[0.0, 0.0, -half], [0.0, 0.0, half]])
        return cls.from_points(ends, radius=_check_length(radius, 'radius'))

    @classmethod
    def cylinder(cls, radius, length):
        """Cylinder along z, centred, with an exact (smooth) support function."""
        radius = _check_length(radius, 'radius')
        half = _check_length(length, 'length') / 2.0
        caps = np.array([[0.0, 0.0, -half], [0.0, 0.0, half]])
        offsets, indices = _csr_from_edges(2, [[0, 1]])
        return cls(caps, offsets, indices, kind=KIND_CYLINDER, cylinder=(radius, half))

    @classmethod
    def cone(cls, radius, length):
        """Cone along z, centred: base disc of ``radius`` at -length/2, apex at +length/2."""
        radius = _check_length(radius, 'radius')
        half = _check_length(length, 'length') / 2.0
        ends = np.array([[0.0, 0.0, -half], [0.0, 0.0, half]])
        offsets, indices = _csr_from_edges(2, [[0, 1]])
        return cls(ends, offsets, indices, kind=KIND_CONE, cylinder=(radius, half))

    @classmethod
    def ellipsoid(cls, semi_axes):
        """Ellipsoid centred at the origin with the given (3,) semi-axes along x, y, z (exact)."""
        axes = np.array(semi_axes, dtype=np.float64).reshape(-1)
        if axes.shape != (3,):
            raise ValueError(f'semi_axes: expected 3 values, got {axes.size}')
        for axis, value in zip('xyz', axes):
            _check_length(value, f'semi_axes.{axis}')
        # The axis end points, in the order the support function reads the semi-axes from.
        ends = np.concatenate([np.diag(axes), -np.diag(axes)])[[0, 3, 1, 4, 2, 5]]
        offsets, indices = _csr_from_edges(6, [])
        return cls(ends, offsets, indices, kind=KIND_ELLIPSOID)

    @classmethod
    def half_space(cls):
        """
        Return the half-space z <= 0 of the body frame (outward normal +z): a table, a floor.

        Its pose places the plane: any plane ``n . x <= c`` is this body at a pose whose z axis
        is n and whose origin lies on the plane. Distances to it are exact (closed form).
        """
        offsets, indices = _csr_from_edges(1, [])
        return cls(np.zeros((1, 3)), offsets, indices, kind=KIND_HALF_SPACE)

    # Properties --------------------------------------------------------------------------------

    @property
    def vertices(self):
        return self._vertices

    @property
    def neighbor_offsets(self):
        return self._offsets

    @property
    def neighbor_indices(self):
        return self._indices

    @property
    def radius(self):
        return self._radius

    @property
    def kind(self):
        return _KIND_NAMES[self._kind]

    @property
    def num_vertices(self):
        return self._vertices.shape[0]

    @property
    def bounding_center(self):
        return self._center.copy()

    @property
    def bounding_radius(self):
        return self._bound

    @property
    def cylinder_radius(self):
        return self._cylinder[0]

    @property
    def cylinder_half_length(self):
        return self._cylinder[1]

    def support(self, direction):
        """
        Farthest point of the body along ``direction`` (body frame, brute force).

        For a swept body this includes the sweep radius; ties return the first vertex.
        """
        d = np.asarray(direction, dtype=np.float64).reshape(3)
        length = float(np.linalg.norm(d))
        if not math.isfinite(length) or length == 0.0:
            raise ValueError('direction must be a finite non-zero (3,) vector')
        if self._kind == KIND_HALF_SPACE:
            if d[0] != 0.0 or d[1] != 0.0 or d[2] <= 0.0:
                raise ValueError('a half-space has a support point only along its normal +z')
            core = np.zeros(3)
        elif self._kind in (KIND_CYLINDER, KIND_CONE):
            mapping = support_cylinder if self._kind == KIND_CYLINDER else support_cone
            core = np.array(mapping(*self._cylinder, *d))
        elif self._kind == KIND_ELLIPSOID:
            core = np.array(support_ellipsoid(*np.abs(self._vertices[[0, 2, 4], [0, 1, 2]]), *d))
        else:
            core = self._vertices[int(np.argmax(self._vertices @ d))].copy()
        return core + self._radius * d / length

    def __repr__(self):
        return (f'ConvexPolytope(kind={self.kind!r}, vertices={self.num_vertices}, '
                f'radius={self._radius:g}, bounding_radius={self._bound:g})')

    # Kernel data -------------------------------------------------------------------------------

    def _bounding_sphere(self):
        if self._kind == KIND_HALF_SPACE:
            return np.zeros(3), math.inf
        if self._kind in (KIND_CYLINDER, KIND_CONE):
            r, h = self._cylinder
            return np.zeros(3), math.hypot(r, h) + self._radius
        low, high = self._vertices.min(axis=0), self._vertices.max(axis=0)
        centre = (low + high) / 2.0
        reach = float(np.sqrt(((self._vertices - centre) ** 2).sum(axis=1).max()))
        return centre, reach + self._radius

    def _make_packed(self):
        """Return the byte buffer ``signed_distance`` hands its kernel (``scene.pack_body``)."""
        from .scene import build_scene, pack_body
        return pack_body(build_scene([self]))


def seed_order(vertices, offsets, indices):
    """
    Reorder a polytope's vertices so that hill climbs start near the answer and stay in cache.

    Vertex ``k`` becomes the extreme vertex along ``SEED_DIRECTIONS[k]`` (the lowest index among
    ties; a direction whose extreme was already placed by an earlier one places nothing), the
    others follow in Z-order of their position (``_morton_codes``; equal codes keep their
    order); the adjacency is renumbered to match. Applying it twice changes nothing, so a
    pickled polytope comes back in the same order. See ``support.py``.

    Returns
    -------
    tuple of numpy.ndarray
        (vertices, neighbor offsets, neighbor indices), reordered.

    """
    count = len(vertices)
    placed = {}
    values = vertices @ SEED_DIRECTIONS.T
    for column in values.T:
        maxima = np.flatnonzero(column == column.max())
        if not any(int(vertex) in placed for vertex in maxima):
            placed[int(maxima[0])] = len(placed)
    first = np.fromiter(placed, dtype=np.int64, count=len(placed))
    rest = np.setdiff1d(np.arange(count), first)
    order = np.concatenate([first, rest[np.argsort(_morton_codes(vertices[rest]), kind='stable')]])
    if np.array_equal(order, np.arange(count)):
        return vertices, offsets, indices
    position = np.empty(count, dtype=np.int64)
    position[order] = np.arange(count)
    degrees = np.diff(offsets)[order]
    new_offsets = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int32)
    # The old slice of each vertex, in the new order, as one gather.
    gather = np.repeat(offsets[order].astype(np.int64) - new_offsets[:-1], degrees) + \
        np.arange(new_offsets[-1])
    return (np.ascontiguousarray(vertices[order]), new_offsets,
            position[indices[gather]].astype(np.int32))


def _morton_codes(points):
    """
    Z-order codes of points (10 bits per axis over their bounding box).

    The vertices after the seeds are stored in this order, so that a vertex's hull neighbours,
    which are near it in space, are mostly near it in memory too: a hill climb on a body that
    is not in cache (a batch of many large hulls) then touches fewer cache lines.
    """
    if len(points) == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = points.min(axis=0), points.max(axis=0)
    cells = ((points - low) / np.where(high > low, high - low, 1.0) * 1023.0).astype(np.int64)
    codes = np.zeros(len(points), dtype=np.int64)
    for bit in range(10):
        for axis in range(3):
            codes |= ((cells[:, axis] >> bit) & 1) << (3 * bit + axis)
    return codes


def _rebuild(vertices, offsets, indices, radius, kind, cylinder):
    """Unpickle a ConvexPolytope (see ``ConvexPolytope.__reduce__``)."""
    return ConvexPolytope(vertices, offsets, indices, radius=radius, kind=kind,
                          cylinder=cylinder)
