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
A triangle mesh as exact convex pieces: each closed part as solids, each open part as surfaces.

A mesh is split into its parts (triangles connected through edges that exactly two of them
share, after welding equal vertices: two closed shells that touch along an edge, as CAD exports
of overlapping solids do, stay two parts). A part is **closed** when every directed edge (a, b)
of its triangles occurs once and its reverse (b, a) once: a watertight, consistently oriented
surface, which has an inside (its winding number is +-1 there, ``winding.py``). Every other
part is **open**: a sheet, which has no inside. The body is the union of what the closed parts
enclose, and of the open parts' surfaces.

- A closed part whose every face lies in a supporting plane of its vertices (within
  ``PLANE_REL`` of the size) and whose volume is its hull's is convex: one solid piece, its hull.
- A closed non-convex part is cut into convex cells by a binary space partition on its own
  face planes (Thibault and Naylor, "Set operations on polyhedra using binary space
  partitioning trees", SIGGRAPH 1987): a cell that no face crosses is wholly inside or wholly
  outside the part, and its centre's winding number says which. The inside cells are convex
  and their union is the solid, exactly up to round-off (cells thinner than ``SLIVER_REL`` of
  the size are not kept). Cells of one part sharing a plane are merged back when their union is
  convex (its hull's volume is their sum), so a CAD part made of boxes comes back as about one
  piece per box.
- An open part's triangles are grouped by plane and edge connectivity; a group whose union is
  a convex polygon (its area is that of its 2-D hull) is one flat piece, otherwise each of its
  triangles is one. Their union is the sheet, exactly.

Faces whose three vertex ids are not distinct are dropped; triangles of no area stay in the
topology and in the winding numbers but never define a plane. Numpy and scipy only, run once
per mesh (``gjk_ros.models`` calls it when a mesh is loaded).
"""

from dataclasses import dataclass

import numpy as np

from .winding import INSIDE_WINDING, winding_numbers

__all__ = ['MeshPieces', 'mesh_pieces', 'TooManyPieces', 'PLANE_REL', 'SLIVER_REL',
           'DEFAULT_MAX_PIECES']

# Faces within this fraction of the mesh size of a plane lie in it (the exactness the project
# promises is 1e-9 of the size; a plane test looser than that would hide real dents).
PLANE_REL = 1e-10
# Cells of a partition thinner than this fraction of the size are dropped as round-off slivers.
SLIVER_REL = 1e-11
# Pieces one mesh may become before the exact decomposition gives up (TooManyPieces): a
# smooth closed surface of n faces can need O(n^2) cells.
DEFAULT_MAX_PIECES = 4096


class TooManyPieces(ValueError):
    """The exact decomposition of a closed part needs more pieces than allowed."""


@dataclass(frozen=True)
class MeshPieces:
    """
    The exact convex pieces of a triangle mesh.

    Attributes
    ----------
    solids : tuple of numpy.ndarray
        Vertices (k, 3) of each convex solid piece (a piece is their hull): the closed parts.
    surfaces : tuple of numpy.ndarray
        Vertices (k, 3) of each flat convex piece (a triangle or a convex polygon): the open
        parts.
    closed_parts, open_parts, convex_parts : int
        Parts found; ``convex_parts`` of the closed ones were convex (one piece each).
    triangles : int
        Faces used (after dropping those with repeated vertex ids).

    """

    solids: tuple
    surfaces: tuple
    closed_parts: int
    open_parts: int
    convex_parts: int
    triangles: int

    @property
    def watertight(self) -> bool:
        """Return True when every part is closed (the whole mesh has an inside)."""
        return self.open_parts == 0


def mesh_pieces(triangles, *, max_pieces: int = DEFAULT_MAX_PIECES) -> MeshPieces:
    """
    Decompose an (m, 3, 3) triangle soup into exact convex pieces (module docstring).

    Raises
    ------
    ValueError
        No triangles, or coordinates that are not finite.
    TooManyPieces
        A closed non-convex part needs more than ``max_pieces`` cells.

    """
    soup = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    if soup.shape[0] == 0:
        raise ValueError('the mesh has no triangles')
    if not np.isfinite(soup).all():
        raise ValueError('mesh coordinates are not finite')
    points, inverse = np.unique(soup.reshape(-1, 3), axis=0, return_inverse=True)
    faces = inverse.reshape(-1, 3).astype(np.int64)
    distinct = (faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & \
        (faces[:, 0] != faces[:, 2])
    faces = faces[distinct]
    if faces.shape[0] == 0:
        raise ValueError('every mesh triangle repeats a vertex: the mesh has no faces')
    size = float(np.linalg.norm(np.ptp(points, axis=0)))
    labels = _parts(faces, points.shape[0])
    solids, surfaces = [], []
    closed_parts = open_parts = convex_parts = 0
    for label in range(labels.max() + 1):
        part = faces[labels == label]
        corners = points[part]
        if _closed_faces(part, points.shape[0]).all():
            closed_parts += 1
            cells, convex = _solid_pieces(points, part, size, max_pieces - len(solids))
            convex_parts += convex
            solids.extend(cells)
        else:
            open_parts += 1
            surfaces.extend(_surface_pieces(corners, size))
        if len(solids) + len(surfaces) > max_pieces:
            raise TooManyPieces(f'more than {max_pieces} convex pieces')
    return MeshPieces(tuple(solids), tuple(surfaces), closed_parts, open_parts, convex_parts,
                      int(faces.shape[0]))


# Topology ----------------------------------------------------------------------------------------

def _parts(faces, vertex_count):
    """Label each face with its part: faces connected through edges exactly two share."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, edge_ids, uses = np.unique(edges[:, 0] * vertex_count + edges[:, 1],
                                  return_inverse=True, return_counts=True)
    edge_ids = edge_ids.ravel()
    count = faces.shape[0]
    rows = np.repeat(np.arange(count), 3)
    shared = uses[edge_ids] == 2
    graph = coo_matrix((np.ones(int(shared.sum())), (rows[shared], count + edge_ids[shared])),
                       shape=(count + edge_ids.max() + 1,) * 2)
    _, labels = connected_components(graph, directed=False)
    _, labels = np.unique(labels[:count], return_inverse=True)
    return labels.ravel()


def _closed_faces(faces, vertex_count):
    """(m,) bool: every directed edge of the face occurs once and its reverse once."""
    heads = faces.ravel()
    tails = faces[:, [1, 2, 0]].ravel()
    forward = heads * vertex_count + tails
    backward = tails * vertex_count + heads
    keys, counts = np.unique(forward, return_counts=True)
    once = keys[counts == 1]
    good = np.isin(forward, once) & np.isin(backward, once)
    return good.reshape(-1, 3).all(axis=1)


def _planes(corners):
    """Return unit normals (m, 3), offsets (m,) and twice the areas of (m, 3, 3) triangles."""
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    doubled = np.linalg.norm(cross, axis=1)
    normals = cross / np.where(doubled > 0.0, doubled, 1.0)[:, None]
    return normals, np.einsum('ij,ij->i', normals, corners[:, 0]), doubled


def _signed_volume(corners):
    centre = corners.reshape(-1, 3).mean(axis=0)
    a, b, c = (corners[:, i] - centre for i in range(3))
    return float(np.einsum('ij,ij->i', a, np.cross(b, c)).sum() / 6.0)


# Closed parts ------------------------------------------------------------------------------------

def _solid_pieces(points, part, size, budget):
    """Return (convex cells of a closed part, 1 when the part itself was convex else 0)."""
    corners = points[part]
    vertices = points[np.unique(part)]
    volume = _signed_volume(corners)
    normals, offsets, doubled = _planes(corners)
    flat = doubled <= (PLANE_REL * size) ** 2
    sign = 1.0 if volume >= 0.0 else -1.0
    hull = _hull(vertices)
    if hull is None:
        return [], 0  # a closed part of no volume encloses nothing
    reach = (vertices @ (sign * normals[~flat]).T - sign * offsets[~flat]).max(initial=0.0)
    if reach <= PLANE_REL * size and abs(abs(volume) - hull.volume) <= 1e-9 * hull.volume:
        return [vertices[hull.vertices]], 1
    cells = _partition(corners, normals, offsets, flat, size, budget)
    return _merge_cells(cells, size), 0


def _plane_clusters(normals, offsets, flat, size):
    """Give triangles in one plane (either orientation) one cluster id; -1 for flat ones."""
    cluster = np.full(normals.shape[0], -1, np.int64)
    planes = []
    for t in np.flatnonzero(~flat):
        n, d = normals[t], offsets[t]
        for c, (m, e) in enumerate(planes):
            dot = float(n @ m)
            if abs(abs(dot) - 1.0) <= 1e-12 and abs(d - np.sign(dot) * e) <= PLANE_REL * size:
                cluster[t] = c
                break
        else:
            cluster[t] = len(planes)
            planes.append((n, d))
    return cluster, planes


def _partition(corners, normals, offsets, flat, size, budget):
    """Convex cells of the BSP of a closed part on its face planes, the inside ones only."""
    cluster, planes = _plane_clusters(normals, offsets, flat, size)
    low, high = corners.reshape(-1, 3).min(axis=0), corners.reshape(-1, 3).max(axis=0)
    pad = 1e-3 * size
    box = np.array([[x, y, z] for x in (low[0] - pad, high[0] + pad)
                    for y in (low[1] - pad, high[1] + pad) for z in (low[2] - pad, high[2] + pad)])
    tolerance = SLIVER_REL * size
    tri_low, tri_high = corners.min(axis=1), corners.max(axis=1)
    stack = [(box, np.flatnonzero(~flat))]
    leaves = []
    while stack:
        cell, ids = stack.pop()
        if ids.size == 0:
            leaves.append(cell)
            if len(leaves) > 8 * budget:
                raise TooManyPieces(f'more than {budget} convex pieces')
            continue
        chosen = int(np.argmax(np.bincount(cluster[ids])))
        normal, offset = planes[chosen]
        rest = ids[cluster[ids] != chosen]
        side = cell @ normal - offset
        if side.max() <= tolerance or side.min() >= -tolerance:
            stack.append((cell, rest))  # the plane does not cut this cell
            continue
        for sign in (1.0, -1.0):
            part = _cut(cell, sign * side, tolerance)
            if part is None:
                continue
            lo, hi = part.min(axis=0) - tolerance, part.max(axis=0) + tolerance
            near = rest[((tri_high[rest] >= lo) & (tri_low[rest] <= hi)).all(axis=1)]
            reach = sign * (corners[near] @ normal - offset)
            stack.append((part, near[(reach > tolerance).any(axis=1)]))
    if not leaves:
        return []
    centres = np.array([leaf.mean(axis=0) for leaf in leaves])
    inside = np.abs(winding_numbers(centres, corners)) > INSIDE_WINDING
    return [leaf for leaf, keep in zip(leaves, inside) if keep]


def _cut(cell, side, tolerance):
    """Return the part of a convex cell where ``side >= 0`` (vertices), None for a sliver."""
    if side.max() <= tolerance:
        return None
    hull = _hull(cell)
    if hull is None:
        return None
    simplices = hull.simplices
    edges = np.unique(np.sort(simplices[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1), axis=0)
    a, b = side[edges[:, 0]], side[edges[:, 1]]
    crossing = ((a > tolerance) & (b < -tolerance)) | ((a < -tolerance) & (b > tolerance))
    i, j = edges[crossing, 0], edges[crossing, 1]
    fraction = (a[crossing] / (a[crossing] - b[crossing]))[:, None]
    points = np.vstack([cell[side >= -tolerance], cell[i] + fraction * (cell[j] - cell[i])])
    points = np.unique(points, axis=0)
    hull = _hull(points)
    if hull is None:
        return None  # thinner than the tolerance: a round-off sliver
    return points[hull.vertices]


def _hull(points):
    """Qhull's hull of a point set, or None when Qhull finds it flat even allowing wide facets."""
    from scipy.spatial import ConvexHull, QhullError
    for options in ('Qt', 'Qt Q12'):
        try:
            return ConvexHull(points, qhull_options=options)
        except QhullError:
            continue
    return None


def _merge_cells(cells, size):
    """Merge inside cells pairwise while the union of two is convex (hull volume = sum)."""
    cells = [np.asarray(c) for c in cells]
    volumes = [_hull(c).volume for c in cells]
    merged = True
    while merged:
        merged = False
        i = 0
        while i < len(cells):
            j = i + 1
            while j < len(cells):
                union = _convex_union(cells[i], cells[j], volumes[i] + volumes[j], size)
                if union is None:
                    j += 1
                    continue
                cells[i], volumes[i] = union
                del cells[j], volumes[j]
                merged = True
            i += 1
    return cells


def _convex_union(a, b, volume, size):
    """Return (vertices, volume) of the hull of two touching cells when it is their union."""
    if not _touching(a, b, size):
        return None
    union = np.unique(np.vstack([a, b]), axis=0)
    hull = _hull(union)
    if hull is None or hull.volume > volume * (1.0 + 1e-12) + (SLIVER_REL * size) ** 3:
        return None
    return union[hull.vertices], hull.volume


def _touching(a, b, size):
    slack = PLANE_REL * size
    return bool((a.min(axis=0) <= b.max(axis=0) + slack).all() and
                (b.min(axis=0) <= a.max(axis=0) + slack).all())


# Open parts --------------------------------------------------------------------------------------

def _surface_pieces(corners, size):
    """Flat convex pieces of an open part: convex coplanar groups whole, else triangles."""
    normals, offsets, doubled = _planes(corners)
    flat = doubled <= (PLANE_REL * size) ** 2
    cluster, planes = _plane_clusters(normals, offsets, flat, size)
    pieces = [corners[t] for t in np.flatnonzero(flat)]
    for c in range(len(planes)):
        members = np.flatnonzero(cluster == c)
        pieces.extend(_convex_group(corners[members], planes[c][0], doubled[members], size))
    return pieces


def _convex_group(group, normal, doubled, size):
    """Return one plane's triangles as one polygon when their union is convex, else each."""
    from scipy.spatial import ConvexHull, QhullError
    if group.shape[0] == 1:
        return [group[0]]
    axis_u = np.cross(normal, [1.0, 0.0, 0.0])
    if np.linalg.norm(axis_u) < 0.5:
        axis_u = np.cross(normal, [0.0, 1.0, 0.0])
    axis_u /= np.linalg.norm(axis_u)
    axis_v = np.cross(normal, axis_u)
    points = np.unique(group.reshape(-1, 3), axis=0)
    flat = np.stack([points @ axis_u, points @ axis_v], axis=1)
    try:
        hull = ConvexHull(flat)
    except QhullError:
        return list(group)
    # Overlapping triangles would add up to more than the union: then keep them apart too.
    if abs(hull.volume - 0.5 * doubled.sum()) <= 1e-12 * hull.volume + (PLANE_REL * size) ** 2:
        return [points[hull.vertices]]
    return list(group)
