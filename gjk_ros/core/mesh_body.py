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
Non-convex bodies as unions of exact convex pieces, and their tracked distance to a convex body.

A :class:`MeshBody` is a set of convex pieces in one frame (``mesh_pieces``: solids for the
closed parts of a mesh, flat pieces for its open parts) with an axis-aligned bounding-box
hierarchy over them. :class:`MeshDistance` measures one convex body (a link piece) against it,
tracked from call to call, and answers what the closest piece pair answers:

- apart: the exact distance to the nearest piece (to the surface, for an open part);
- overlapping a solid piece: that pair's exact MTD (negative), the deepest such;
- crossing a flat piece of an open part: 0 (``TOUCHING``): an open surface has no inside, so its
  distance is unsigned; both witnesses are then the flat piece's point deepest in the body.

Culling with a motion bound (the "Verlet list" of molecular dynamics; Cameron 1997 section 4's
coherence applied to the candidates). A rebuild walks the hierarchy with the body's bounding
box in the mesh frame (six support calls) and its own box in its frame (``_frame_gap``), and
lists every piece whose box is within ``T = U + 2 margin`` of it, ``U`` the distance of the
nearest piece known; that box bound is a listed piece's first lower bound. At a later call no
point of the body has moved, relative to the mesh, farther than ``m`` (from the two relative
poses and the body's bounding sphere), and every distance is 1-Lipschitz in that motion (a
penetration depth too). A piece off the list is then farther than ``T - m``, so while the best
found stays at most ``T - m`` the nearest piece is a listed one; otherwise the list is rebuilt.

Which listed pieces a call looks at: each slot has a key, a lower bound of its distance at any
later call plus the motion bound summed over the calls until then (the motion is 1-Lipschitz
call by call, and a sum of motions bounds the motion). The slots form a min-heap by key, so a
call takes out exactly the slots whose key, less the motion summed so far, is below the best
found, and no other: a piece that was far when last looked at stays untouched until the body
has travelled that far. A slot taken out gets the best of its cheap bounds (its box's gaps to
the body's own box and to the best piece's separating plane; its last distance less the motion
since), and, when those would bring it back soon, the separating-axis bound of the plane it
was last apart by (``_keep_plane``), which a motion along the surface does not loosen; it is
measured only when they are below the best (or, with no plane yet, would bring it back at the
next call). Each listed piece keeps its tracked simplex (and penetration polytope) from call
to call. The answer is exact at every call; the list and the keys only decide what needs
measuring.
"""

import math

import numpy as np

from ._jit import frozen, njit
from .cache import cache_arrays
from .distance import _plain_pose, check_poses
from .polytope import ConvexPolytope
from .query import (_relative_pose, _unpack_scratch, _valid_pose, output_arrays, query_pair,
                    scratch_buffer)
from .scene import (B_BOUND, B_CX, B_CY, B_CZ, B_SWEEP, build_scene, layout, numpy_view,
                    packed_body, scene_body, scene_geometry, view)
from .status import DistanceResult, Status
from .support import body_support, KIND_HALF_SPACE
from .tolerances import ROTATION_TOLERANCE

__all__ = ['MeshBody', 'MeshDistance', 'LEAF_PIECES']

# Pieces per leaf of the hierarchy: a leaf's pieces are tested one by one against the body's box.
LEAF_PIECES = 4
# Pieces a candidate list grows to before a rebuild shrinks its margin to fit instead: a longer
# list is rebuilt less often and costs nothing per call beyond the pieces its bounds let in.
_LIST_SHRINKS_AT = 8192
# A listed piece's kept plane is looked at (one support call) when its cheaper bounds would
# bring it back within this many calls of the current motion (each return costs a heap step).
_LOOKAHEAD = 8
# Bound on ||R1 - R0||_2 - ||R1 - R0||_F / sqrt(2) for relative poses composed of two poses
# whose rotations are orthonormal within ROTATION_TOLERANCE (each within a few tolerances of a
# rotation in every norm): generous, and still a micrometre per call for a 0.1 m link.
_SPIN_SLACK = 30.0 * ROTATION_TOLERANCE
# Deepest hierarchy walked (a complete tree over 2^40 leaves): the traversal stack's size.
_STACK = 128
# Work counters of MeshDistance (machine-independent): piece queries, rebuilds, hierarchy
# nodes visited, listed slots whose bound was looked at.
STATS = 4
_QUERIES, _REBUILDS, _NODES, _SCANNED = range(STATS)
_TOUCHING = int(Status.TOUCHING)
# ints state: listed pieces, slot of the best, capacity exceeded (1) in the last call.
_COUNT, _BEST, _OVERFLOW = range(3)
# floats state: T of the list, margin, motion bound summed over the calls since the rebuild.
_THRESHOLD, _MARGIN, _TRAVELLED = range(3)


class MeshBody:
    """
    A non-convex body: convex pieces in one frame, with a bounding-box hierarchy.

    Parameters
    ----------
    pieces : sequence of ConvexPolytope
        The pieces (bounded kinds only: no half-space), all in the body frame.
    surface : sequence of bool, optional
        Per piece: True for a flat piece of an open surface (its distance is unsigned, see the
        module docstring); default none.

    Use :meth:`from_mesh` for a triangle mesh (its exact decomposition) and
    :meth:`from_triangles` for a triangle soup taken as an open surface, one flat piece per
    triangle, built without a Python object per triangle.

    """

    def __init__(self, pieces, surface=None):
        """Order the pieces along a Z-curve and build the hierarchy."""
        pieces = list(pieces)
        if not pieces:
            raise ValueError('pieces: a mesh body needs at least one piece')
        if any(p._kind == KIND_HALF_SPACE for p in pieces):
            raise ValueError('pieces: a half-space is unbounded and cannot be a mesh piece')
        surface = np.zeros(len(pieces), bool) if surface is None else \
            np.asarray(surface, bool).reshape(len(pieces))
        low = np.array([p.bounding_center - p.bounding_radius for p in pieces])
        high = np.array([p.bounding_center + p.bounding_radius for p in pieces])
        for i, p in enumerate(pieces):
            if p.kind == 'polytope':
                low[i] = p.vertices.min(axis=0) - p.radius
                high[i] = p.vertices.max(axis=0) + p.radius
        order = _z_order(low, high)
        self._pieces = [pieces[i] for i in order]
        self._setup(build_scene(self._pieces), surface[order], low[order], high[order])

    @classmethod
    def from_triangles(cls, triangles):
        """
        Return an open surface, one flat piece per triangle of an (m, 3, 3) soup.

        Raises
        ------
        ValueError
            No triangles, or coordinates that are not finite.

        """
        corners = np.ascontiguousarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
        if corners.shape[0] == 0 or not np.isfinite(corners).all():
            raise ValueError('triangles: expected finite (m, 3, 3) corners, m >= 1')
        low, high = corners.min(axis=1), corners.max(axis=1)
        order = _z_order(low, high)
        corners, low, high = corners[order], low[order], high[order]
        body = cls.__new__(cls)
        body._pieces = None
        body._corners = corners
        body._setup(_triangle_scene(corners), np.ones(corners.shape[0], bool), low, high)
        return body

    @classmethod
    def from_mesh(cls, triangles, **options):
        """
        Return the exact convex pieces of a triangle mesh (``mesh_pieces.mesh_pieces``).

        ``options`` go to ``mesh_pieces`` (``max_pieces``); its errors pass through. The
        decomposition is :attr:`decomposition`.
        """
        from .mesh_pieces import mesh_pieces
        found = mesh_pieces(triangles, **options)
        pieces = [ConvexPolytope.from_points(p) for p in found.solids + found.surfaces]
        surface = [False] * len(found.solids) + [True] * len(found.surfaces)
        body = cls(pieces, surface)
        body.decomposition = found
        return body

    def _setup(self, scene, surface, low, high):
        count = low.shape[0]
        leaves = max(1, -(-count // LEAF_PIECES))
        padded = 1 << max(0, (leaves - 1).bit_length())
        self.leaf_first = np.minimum(np.arange(padded + 1) * LEAF_PIECES, count).astype(np.int64)
        nodes_low = np.full((2 * padded - 1, 3), np.inf)
        nodes_high = np.full((2 * padded - 1, 3), -np.inf)
        for leaf in range(leaves):
            first, last = self.leaf_first[leaf], self.leaf_first[leaf + 1]
            nodes_low[padded - 1 + leaf] = low[first:last].min(axis=0)
            nodes_high[padded - 1 + leaf] = high[first:last].max(axis=0)
        level = padded // 2
        while level >= 1:  # parents from children, one level at a time (heap layout)
            parents = np.arange(level - 1, 2 * level - 1)
            nodes_low[parents] = np.minimum(nodes_low[2 * parents + 1], nodes_low[2 * parents + 2])
            nodes_high[parents] = np.maximum(nodes_high[2 * parents + 1],
                                             nodes_high[2 * parents + 2])
            level //= 2
        self.size = float(np.linalg.norm(high.max(axis=0) - low.min(axis=0)))
        # One read-only buffer for the kernel; the attributes are views of it.
        self._packed, arrays = _pack(_mesh_arrays(scene, surface, nodes_low, nodes_high,
                                                  self.leaf_first, low, high), False)
        self.scene, self.surface = tuple(arrays[:8]), arrays[8]
        (self.node_low, self.node_high, self.leaf_first, self.piece_low,
         self.piece_high) = arrays[9:]

    @property
    def num_pieces(self) -> int:
        return self.surface.shape[0]

    @property
    def pieces(self) -> tuple:
        """Return the pieces as ConvexPolytope, in the body's (Z-curve) order."""
        if self._pieces is None:
            self._pieces = [_triangle_polytope(c) for c in self._corners]
        return tuple(self._pieces)

    @property
    def watertight(self) -> bool:
        """Return True when no piece is a surface piece (every part closed)."""
        return not self.surface.any()


def _z_order(low, high):
    centre = 0.5 * (low + high)
    lo, hi = centre.min(axis=0), centre.max(axis=0)
    cells = ((centre - lo) / np.where(hi > lo, hi - lo, 1.0) * 1023.0).astype(np.int64)
    codes = np.zeros(len(centre), dtype=np.int64)
    for bit in range(10):
        for axis in range(3):
            codes |= ((cells[:, axis] >> bit) & 1) << (3 * bit + axis)
    return np.argsort(codes, kind='stable')


_TRIANGLE_RING = np.array([1, 2, 0, 2, 0, 1], np.int32)


def _triangle_polytope(corners):
    return ConvexPolytope(corners, np.array([0, 2, 4, 6], np.int32), _TRIANGLE_RING)


def _triangle_scene(corners):
    """Return the kernel scene (``scene.build_scene``) of triangles, three vertices each."""
    count = corners.shape[0]
    low, high = corners.min(axis=1), corners.max(axis=1)
    centre = 0.5 * (low + high)
    reach = np.sqrt(((corners - centre[:, None]) ** 2).sum(axis=2).max(axis=1))
    params = np.zeros((count, 7))
    params[:, 3:6], params[:, 6] = centre, reach
    return (np.ascontiguousarray(corners.reshape(-1, 3)), np.arange(count + 1) * 3,
            np.tile(np.array([0, 2, 4, 6], np.int32), count), np.arange(count + 1) * 4,
            np.tile(_TRIANGLE_RING, count), np.arange(count + 1) * 6,
            np.zeros(count, np.int64), params)


# Kernels -----------------------------------------------------------------------------------------

@njit(inline=True)
def _box_gap(low, high, i, box_low, box_high):
    """Distance between box ``i`` of (low, high) and the body's box; -inf when they overlap."""
    total = 0.0
    for c in range(3):
        gap = max(low[i, c] - box_high[c], box_low[c] - high[i, c])
        if gap > 0.0:
            total += gap * gap
    return math.sqrt(total) if total > 0.0 else -math.inf


@njit(inline=True)
def _motion(ref, rel, body_a):
    """Bound on how far any point of A moved relative to the mesh between ``ref`` and ``rel``."""
    shift2 = 0.0
    spin2 = 0.0
    for r in range(3):
        moved = rel[r, 3] - ref[r, 3]
        for c in range(3):
            delta = rel[r, c] - ref[r, c]
            spin2 += delta * delta
        moved += (rel[r, 0] - ref[r, 0]) * body_a[B_CX] + (rel[r, 1] - ref[r, 1]) * body_a[B_CY] \
            + (rel[r, 2] - ref[r, 2]) * body_a[B_CZ]
        shift2 += moved * moved
    # A turn moves a point by at most ||R1 - R0||_2 times its distance from the centre; for two
    # rotations that is ||R1 - R0||_F / sqrt(2) (both non-zero singular values of a rotation's
    # change are 2 sin(angle / 2)), and ``_SPIN_SLACK`` covers rotations that are orthonormal
    # only within ROTATION_TOLERANCE.
    return math.sqrt(shift2) + (math.sqrt(0.5 * spin2) + _SPIN_SLACK) * body_a[B_BOUND]


@njit(inline=True)
def _body_box(geom_a, body_a, rel, box_low, box_high, seeds, hill_climb):
    """A's bounding box in the mesh frame: its support along the six axis directions."""
    for axis in range(3):
        for sign in (1.0, -1.0):
            # Direction sign * e_axis of the mesh frame, in A's frame: row ``axis`` of R.
            index, x, y, z, steps = body_support(geom_a, body_a, sign * rel[axis, 0],
                                                 sign * rel[axis, 1], sign * rel[axis, 2],
                                                 seeds[0], hill_climb)
            value = rel[axis, 0] * x + rel[axis, 1] * y + rel[axis, 2] * z + rel[axis, 3]
            if sign > 0.0:
                box_high[axis] = value + body_a[B_SWEEP]
            else:
                box_low[axis] = value - body_a[B_SWEEP]


@njit(inline=True)
def _measure(geom_a, body_a, mesh_scene, geom_b, surface, pose_a, pose_b, piece, slot, cache,
             ws, ep, values, status, counts, hill_climb, stats):
    """Query piece ``piece`` into row ``slot``; return its value (unsigned for a surface)."""
    simplex, simplex_index, weights, counters, rel, seeds = ws
    query_pair(geom_a, body_a, geom_b, scene_body(mesh_scene, piece), pose_a, pose_b, slot,
               cache[0], cache[1], cache[2], cache[3], cache[4:], simplex, simplex_index,
               weights, counters, rel, seeds, ep, values, status, counts, hill_climb, True)
    stats[_QUERIES] += 1
    value = values[slot, 0]
    if surface[piece] and value < 0.0:
        return 0.0
    return value


@njit(inline=True)
def _clear_slot(cache, slot):
    cache[0][slot] = 0
    cache[3][slot, 0], cache[3][slot, 1] = 0, 0
    cache[4][slot, 0], cache[4][slot, 1] = 0, 0


@njit(inline=True)
def _copy_simplex(cache, source, target):
    """Copy the tracked simplex (not the penetration polytope) of one slot to another."""
    cache[0][target] = cache[0][source]
    for s in range(4):
        for e in range(2):
            cache[1][target, s, e] = cache[1][source, s, e]
            for c in range(3):
                cache[2][target, s, e, c] = cache[2][source, s, e, c]
    cache[3][target, 0], cache[3][target, 1] = cache[3][source, 0], cache[3][source, 1]
    cache[4][target, 0], cache[4][target, 1] = 0, 0


@njit(inline=True)
def _frame_gap(low, high, i, frame, pose):
    """
    Lower bound of the distance of box ``i`` of (low, high) from A, A's own box ``frame``.

    ``frame`` (2, 3) is A's bounding box in A's frame, ``pose`` (3, 4) A's frame in the mesh
    frame. The gap along a separating axis (the three of each box: Gottschalk, Lin and Manocha
    1996) bounds the distance of anything inside the two boxes, and minus a penetration depth
    too (a depth is at most the overlap along any axis). Unlike the mesh-frame box of A, which
    a turn inflates, A's own box fits it in every pose, and needs no support call.
    """
    hx, hy, hz = 0.5 * (high[i, 0] - low[i, 0]), 0.5 * (high[i, 1] - low[i, 1]), \
        0.5 * (high[i, 2] - low[i, 2])
    ex, ey, ez = 0.5 * (frame[1, 0] - frame[0, 0]), 0.5 * (frame[1, 1] - frame[0, 1]), \
        0.5 * (frame[1, 2] - frame[0, 2])
    cx, cy, cz = 0.5 * (frame[0, 0] + frame[1, 0]), 0.5 * (frame[0, 1] + frame[1, 1]), \
        0.5 * (frame[0, 2] + frame[1, 2])
    gap = -math.inf
    # The centres' offset along, and the boxes' reach across, each mesh axis k.
    dx = dy = dz = 0.0
    for k in range(3):
        r0, r1, r2 = pose[k, 0], pose[k, 1], pose[k, 2]
        offset = 0.5 * (high[i, k] + low[i, k]) - (r0 * cx + r1 * cy + r2 * cz + pose[k, 3])
        reach = 0.5 * (high[i, k] - low[i, k]) + abs(r0) * ex + abs(r1) * ey + abs(r2) * ez
        gap = max(gap, abs(offset) - reach)
        dx += r0 * offset  # the offset in A's frame
        dy += r1 * offset
        dz += r2 * offset
    # Along A's axes j: column j of the rotation.
    gap = max(gap, abs(dx) - ex - abs(pose[0, 0]) * hx - abs(pose[1, 0]) * hy
              - abs(pose[2, 0]) * hz)
    gap = max(gap, abs(dy) - ey - abs(pose[0, 1]) * hx - abs(pose[1, 1]) * hy
              - abs(pose[2, 1]) * hz)
    gap = max(gap, abs(dz) - ez - abs(pose[0, 2]) * hx - abs(pose[1, 2]) * hy
              - abs(pose[2, 2]) * hz)
    return gap


@njit
def _collect(node_low, node_high, leaf_first, piece_low, piece_high, box_low, box_high,
             frame, pose, threshold, listed, gaps, stack, stats):
    """
    List every piece whose box is within ``threshold`` of A, with that lower bound.

    A box's bound is the larger of its gap to A's box in the mesh frame and ``_frame_gap``.
    Returns the count, or -1 when ``listed`` is too small.
    """
    count = 0
    leaves = leaf_first.shape[0] - 1
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        stats[_NODES] += 1
        if _box_gap(node_low, node_high, node, box_low, box_high) > threshold or \
                _frame_gap(node_low, node_high, node, frame, pose) > threshold:
            continue
        if node >= leaves - 1:
            leaf = node - (leaves - 1)
            for piece in range(leaf_first[leaf], leaf_first[leaf + 1]):
                gap = max(_box_gap(piece_low, piece_high, piece, box_low, box_high),
                          _frame_gap(piece_low, piece_high, piece, frame, pose))
                if gap <= threshold:
                    if count == listed.shape[0]:
                        return -1
                    listed[count] = piece
                    gaps[count] = gap
                    count += 1
        else:
            stack[top] = 2 * node + 2
            stack[top + 1] = 2 * node + 1
            top += 2
    return count


@njit(inline=True)
def _centre_gap(low, high, i, box_low, box_high):
    """Squared distance between the centres of box ``i`` and A's box (inf for an empty box)."""
    total = 0.0
    for c in range(3):
        total += (0.5 * (low[i, c] + high[i, c] - box_low[c] - box_high[c])) ** 2
    return total if total == total else math.inf


@njit(inline=True)
def _below(piece_low, piece_high, piece, planes, slot):
    """Return min over piece ``piece``'s box of ``n . x``, n the plane kept in ``slot``."""
    total = 0.0
    for c in range(3):
        n = planes[slot, c]
        total += n * (piece_low[piece, c] if n > 0.0 else piece_high[piece, c])
    return total


@njit(inline=True)
def _order_key(low, high, i, box_low, box_high):
    """Search order of a node: its box gap, and between overlapping boxes the centre gap."""
    gap = _box_gap(low, high, i, box_low, box_high)
    if gap == -math.inf:
        return -1.0 / (1.0 + _centre_gap(low, high, i, box_low, box_high))
    return gap


@njit
def _nearest_piece(geom_a, body_a, mesh_scene, geom_b, surface, node_low, node_high,
                   leaf_first, piece_low, piece_high, pose_a, pose_b, box_low, box_high, slot,
                   cache, ws, ep, values, status, counts, stack, hill_climb, stats):
    """
    Return (the nearest piece, its distance): branch and bound on the hierarchy.

    Depth first, the nearer child first; a node or piece whose box is not nearer than the best
    distance found is pruned; pieces are measured cold in row ``slot``.
    """
    leaves = leaf_first.shape[0] - 1
    best, nearest = math.inf, -1
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        stats[_NODES] += 1
        if _box_gap(node_low, node_high, node, box_low, box_high) >= best:
            continue
        if node >= leaves - 1:
            leaf = node - (leaves - 1)
            for piece in range(leaf_first[leaf], leaf_first[leaf + 1]):
                if _box_gap(piece_low, piece_high, piece, box_low, box_high) >= best:
                    continue
                _clear_slot(cache, slot)
                value = _measure(geom_a, body_a, mesh_scene, geom_b, surface, pose_a, pose_b,
                                 piece, slot, cache, ws, ep, values, status, counts, hill_climb,
                                 stats)
                if value < best:
                    best, nearest = value, piece
            continue
        left, right = 2 * node + 1, 2 * node + 2
        if _order_key(node_low, node_high, left, box_low, box_high) <= \
                _order_key(node_low, node_high, right, box_low, box_high):
            stack[top], stack[top + 1] = right, left
        else:
            stack[top], stack[top + 1] = left, right
        top += 2
    _clear_slot(cache, slot)
    return nearest, best


@njit(inline=True)
def _stamp(stamps, slot, rel):
    for r in range(3):
        for c in range(4):
            stamps[slot, r, c] = rel[r, c]


@njit(inline=True)
def _keep_plane(values, slot, value, pose_b, planes):
    """
    Keep the separating plane of a measured pair, in the mesh frame: normal n and A's support h.

    Apart, A lies in ``n . x <= h`` and the piece in ``n . x >= h + d`` (the witnesses are
    the closest points), so wherever A moves, the piece stays at least ``d - (h' - h)`` away,
    ``h'`` A's new support along n (the separating-axis bound). Not kept (NaN) when not apart.
    """
    if not value > 0.0:
        planes[slot, 3] = math.nan
        return
    h = 0.0
    for c in range(3):
        n = (pose_b[0, c] * values[slot, 7] + pose_b[1, c] * values[slot, 8]
             + pose_b[2, c] * values[slot, 9])
        a = (pose_b[0, c] * (values[slot, 1] - pose_b[0, 3])
             + pose_b[1, c] * (values[slot, 2] - pose_b[1, 3])
             + pose_b[2, c] * (values[slot, 3] - pose_b[2, 3]))
        planes[slot, c] = n
        h += n * a
    planes[slot, 3] = h


@njit(inline=True)
def _plane_bound(geom_a, body_a, now, planes, slot, distance, seeds, hill_climb):
    """Lower bound of a piece's distance from its kept plane (``_keep_plane``), or -inf."""
    if not planes[slot, 3] == planes[slot, 3]:  # NaN: no plane kept
        return -math.inf
    nx, ny, nz = planes[slot, 0], planes[slot, 1], planes[slot, 2]
    # The direction in A's frame (``now`` maps A's frame into the mesh frame).
    dx = now[0, 0] * nx + now[1, 0] * ny + now[2, 0] * nz
    dy = now[0, 1] * nx + now[1, 1] * ny + now[2, 1] * nz
    dz = now[0, 2] * nx + now[1, 2] * ny + now[2, 2] * nz
    index, x, y, z, steps = body_support(geom_a, body_a, dx, dy, dz, seeds[0], hill_climb)
    seeds[0] = max(index, 0)
    reach = (nx * (now[0, 0] * x + now[0, 1] * y + now[0, 2] * z + now[0, 3])
             + ny * (now[1, 0] * x + now[1, 1] * y + now[1, 2] * z + now[1, 3])
             + nz * (now[2, 0] * x + now[2, 1] * y + now[2, 2] * z + now[2, 3])
             + body_a[B_SWEEP])
    return distance - (reach - planes[slot, 3])


@njit(inline=True)
def _heap_down(order, keys, root, count):
    """
    Move entry ``root`` down the 4-ary min-heap of ``count`` (key, slot) entries to its place.

    ``keys[r]`` is the key of the slot ``order[r]``: kept side by side, so that a step down
    reads four adjacent keys (one cache line) instead of slots' keys anywhere in memory, and
    four children per entry halve the steps of a binary heap.
    """
    slot, key = order[root], keys[root]
    while True:
        first = 4 * root + 1
        if first >= count:
            break
        child, least = first, keys[first]
        for other in range(first + 1, min(first + 4, count)):
            if keys[other] < least:
                child, least = other, keys[other]
        if least >= key:
            break
        order[root], keys[root] = order[child], least
        root = child
    order[root], keys[root] = slot, key


# Packed state --------------------------------------------------------------------------------
# A call hands numba seven arguments instead of forty arrays (dispatch is paid per array, see
# ``scene.layout``): the mesh, and the pair's whole state, are each one byte buffer that starts
# with a directory of its arrays (per array: its byte start and up to three extents).
_DIRECTORY = 4


def _pack(arrays, writeable):
    """
    Return one byte buffer holding ``arrays`` after their directory, and their views in it.

    An entry ``(dtype, shape)`` instead of an array is zeros, left as the buffer's own (a
    list's tracked polytopes are most of its state, and stay untouched until used).
    """
    fields = [(np.int64, (_DIRECTORY * len(arrays),))] + \
        [a if isinstance(a, tuple) else (a.dtype, a.shape) for a in arrays]
    starts, size = layout(fields)
    buffer = np.zeros(size, np.uint8)
    directory = numpy_view(buffer, starts[0], np.int64)
    views = []
    for k, array in enumerate(arrays):
        (dtype, _), (start, shape) = fields[k + 1], starts[k + 1]
        directory[_DIRECTORY * k] = start
        directory[_DIRECTORY * k + 1:_DIRECTORY * k + 1 + len(shape)] = shape
        views.append(numpy_view(buffer, (start, shape), dtype))
        if not isinstance(array, tuple):
            views[-1][...] = array
    for array in views + [buffer]:
        array.flags.writeable = writeable
    return buffer, views


@njit(inline=True)
def _entry(buffer, k):
    directory = view(buffer, (0, (_DIRECTORY * (k + 1),)), np.int64)
    return directory[_DIRECTORY * k:_DIRECTORY * (k + 1)]


@njit(inline=True)
def _array1(buffer, k, dtype):
    e = _entry(buffer, k)
    return view(buffer, (e[0], (e[1],)), dtype)


@njit(inline=True)
def _array2(buffer, k, dtype):
    e = _entry(buffer, k)
    return view(buffer, (e[0], (e[1], e[2])), dtype)


@njit(inline=True)
def _array3(buffer, k, dtype):
    e = _entry(buffer, k)
    return view(buffer, (e[0], (e[1], e[2], e[3])), dtype)


@njit(inline=True)
def _cache4(buffer, k):
    """Return the (m, 4, 2, 3) points of a cache (``cache_arrays``): three extents fixed."""
    e = _entry(buffer, k)
    return view(buffer, (e[0], (e[1], np.int64(4), np.int64(2), np.int64(3))), np.float64)


def _mesh_arrays(scene, surface, node_low, node_high, leaf_first, piece_low, piece_high):
    """Return the arrays of a mesh body's buffer, in the order ``_unpack_mesh`` reads them."""
    vertices, vstart, offsets, ostart, indices, istart, kinds, params = scene
    return [np.asarray(vertices, np.float64), np.asarray(vstart, np.int64),
            np.asarray(offsets, np.int32), np.asarray(ostart, np.int64),
            np.asarray(indices, np.int32), np.asarray(istart, np.int64),
            np.asarray(kinds, np.int64), np.asarray(params, np.float64),
            np.asarray(surface, np.bool_), np.asarray(node_low, np.float64),
            np.asarray(node_high, np.float64), np.asarray(leaf_first, np.int64),
            np.asarray(piece_low, np.float64), np.asarray(piece_high, np.float64)]


@njit(inline=True)
def _unpack_mesh(mesh):
    f, i = np.float64, np.int64
    scene = (_array2(mesh, 0, f), _array1(mesh, 1, i), _array1(mesh, 2, np.int32),
             _array1(mesh, 3, i), _array1(mesh, 4, np.int32), _array1(mesh, 5, i),
             _array1(mesh, 6, i), _array2(mesh, 7, f))
    return (scene, _array1(mesh, 8, np.bool_), _array2(mesh, 9, f), _array2(mesh, 10, f),
            _array1(mesh, 11, i), _array2(mesh, 12, f), _array2(mesh, 13, f))


# Fields of the state buffer (``_state_arrays``).
(_INTS, _FLOATS, _STATS, _REF, _NOW, _BOX, _STACK_FIELD, _SLOT_OF, _LISTED, _LOWER, _STAMPS,
 _PLANES, _KEYS, _ORDER, _OLD_LISTED, _OLD_LOWER, _OLD_STAMPS, _OLD_PLANES, _CACHE,
 _VALUES) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 26)


def _state_arrays(capacity, pieces, margin):
    """Return the arrays of a pair's state buffer for ``capacity`` slots (fields above)."""
    i = np.int64
    slots = [np.zeros(capacity, i), np.zeros(capacity), np.zeros((capacity, 3, 4)),
             np.zeros((capacity, 4)), np.zeros(capacity), np.zeros(capacity, i)]
    return [np.zeros(3, i), np.array([0.0, margin, 0.0]), np.zeros(STATS, i),
            np.zeros((3, 4)), np.zeros((2, 3, 4)), np.zeros((4, 3)), np.zeros(_STACK, i),
            np.full(pieces, -1, i)] + slots + slots[:4] + \
        [(a.dtype, a.shape) for a in cache_arrays(capacity + 1)] + \
        list(output_arrays(capacity + 1))


@njit
def _mesh_step(link, mesh, state, scratch, pose_a, pose_b, mode):
    """
    One tracked call (module docstring): return the answer's value, NaN when there is none.

    NaN, having measured nothing, for a pose that is not a finite rigid transform, or with
    ``ints[_OVERFLOW]`` set when the list needs more slots than the state has.

    ``link`` is the body packed (``scene.pack_body``), ``mesh`` and ``state`` buffers of
    ``_pack``, ``scratch`` a ``query.scratch_buffer()``; ``mode`` 1 to hill-climb. Per listed
    slot: ``listed`` its piece; ``lower`` a lower bound of its distance at the relative pose
    ``stamps`` (its distance when it was measured there, else its box gap at the rebuild);
    ``planes`` its separating plane when measured apart; ``keys`` a lower bound of its distance
    at any later call plus ``floats[_TRAVELLED]`` then, the motion bound summed over the calls
    since the rebuild, so that ``order``, a min-heap by key, hands out exactly the slots whose
    key less the travel so far is below the best, and no other. Rows 0..C-1 of the cache and
    output arrays are the slots', row C keeps the best piece's simplex across a rebuild.
    """
    if not (_valid_pose(pose_a, ROTATION_TOLERANCE) and
            _valid_pose(pose_b, ROTATION_TOLERANCE)):
        return math.nan
    hill_climb = mode != 0
    geom_a, body_a = packed_body(link)
    mesh_scene, surface, node_low, node_high, leaf_first, piece_low, piece_high = \
        _unpack_mesh(mesh)
    geom_b = scene_geometry(mesh_scene)
    f, i = np.float64, np.int64
    ints, floats, stats = _array1(state, _INTS, i), _array1(state, _FLOATS, f), \
        _array1(state, _STATS, i)
    ref, now, box = _array2(state, _REF, f), _array3(state, _NOW, f), _array2(state, _BOX, f)
    frame = box[2:]  # A's own box (``_rebuild``)
    stack, slot_of = _array1(state, _STACK_FIELD, i), _array1(state, _SLOT_OF, i)
    listed, lower, stamps = _array1(state, _LISTED, i), _array1(state, _LOWER, f), \
        _array3(state, _STAMPS, f)
    planes, keys, order = _array2(state, _PLANES, f), _array1(state, _KEYS, f), \
        _array1(state, _ORDER, i)
    previous = (_array1(state, _OLD_LISTED, i), _array1(state, _OLD_LOWER, f),
                _array3(state, _OLD_STAMPS, f), _array2(state, _OLD_PLANES, f), slot_of)
    c = _CACHE
    cache = (_array1(state, c, np.int32), _array3(state, c + 1, np.int32), _cache4(state, c + 2),
             _array2(state, c + 3, np.int32), _array2(state, c + 4, np.int32),
             _array3(state, c + 5, np.int32), _array3(state, c + 6, np.int32),
             _array3(state, c + 7, np.int32))
    values, status, counts = _array2(state, _VALUES, f), _array1(state, _VALUES + 1, np.int8), \
        _array2(state, _VALUES + 2, i)
    ws, ep = _unpack_scratch(scratch)
    rel, seeds = ws[4], ws[5]
    count, best = ints[_COUNT], ints[_BEST]
    ints[_OVERFLOW] = 0
    _relative_pose(pose_b, pose_a, rel)
    _stamp(now, 0, rel)  # rel is overwritten by every query: ``now`` keeps this call's
    upper = math.inf
    moved = step = 0.0
    if count > 0:
        moved = _motion(ref, now[0], body_a)
        upper = _measure(geom_a, body_a, mesh_scene, geom_b, surface, pose_a, pose_b,
                         listed[best], best, cache, ws, ep, values, status, counts, hill_climb,
                         stats)
    if count == 0 or upper > floats[_THRESHOLD] - moved:
        best, upper = _rebuild(geom_a, body_a, mesh_scene, geom_b, surface, node_low,
                               node_high, leaf_first, piece_low, piece_high, pose_a, pose_b,
                               listed, lower, stamps, planes, keys, order, ints, floats, ref,
                               cache, ws, ep, values, status, counts, stack, box, now,
                               hill_climb, stats, count, best, upper, previous)
        if best < 0:
            return math.nan
        count = ints[_COUNT]
        floats[_TRAVELLED] = 0.0
    else:
        lower[best] = upper
        _stamp(stamps, best, now[0])
        _keep_plane(values, best, values[best, 0], pose_b, planes)
        step = _motion(now[1], now[0], body_a)
        floats[_TRAVELLED] += step
    _stamp(now, 1, now[0])
    travelled = floats[_TRAVELLED]
    seeds[0] = -1
    # The best piece's separating plane at this pose bounds every piece at once: A lies in
    # n . x <= h, so a piece is at least (its box's least n . x) - h away.
    shared = best
    for _ in range(count):  # each slot at most once: it leaves with a key not below the best
        if keys[0] >= upper + travelled:  # as stored below: no rounding lets it back in
            break  # no listed piece can be nearer (the heap's least key)
        slot = order[0]
        stats[_SCANNED] += 1
        piece = listed[slot]
        # Every cheap bound, not the first that suffices: a slot's key keeps the best one,
        # and a key barely above the best brings the slot back at the next call.
        bound = max(_frame_gap(piece_low, piece_high, piece, frame, now[0]),
                    lower[slot] - _motion(stamps[slot], now[0], body_a))
        if planes[shared, 3] == planes[shared, 3]:
            bound = max(bound, _below(piece_low, piece_high, piece, planes, shared)
                        - planes[shared, 3])
        kept = planes[slot, 3] == planes[slot, 3]
        if kept and bound < upper + _LOOKAHEAD * step:
            bound = max(bound, _plane_bound(geom_a, body_a, now[0], planes, slot,
                                            lower[slot], seeds, hill_climb))
        # A slot without a plane that would be back at the next call is measured: its plane
        # then keeps it away for as long as the motion lets it.
        if bound < upper or (not kept and bound < upper + step):
            bound = _measure(geom_a, body_a, mesh_scene, geom_b, surface, pose_a, pose_b,
                             listed[slot], slot, cache, ws, ep, values, status, counts,
                             hill_climb, stats)
            lower[slot] = bound
            _stamp(stamps, slot, now[0])
            _keep_plane(values, slot, values[slot, 0], pose_b, planes)
            if bound < upper:
                upper, best = bound, slot
        # Now at least ``bound`` away, so at least ``bound - (travel from here)`` at any later
        # call: its key is no longer below the best, and it goes down the heap.
        keys[0] = max(keys[0], bound + travelled)
        _heap_down(order, keys, 0, count)
    ints[_BEST] = best
    value = values[best, 0]
    return 0.0 if value < 0.0 and surface[listed[best]] else value


@njit
def _rebuild(geom_a, body_a, mesh_scene, geom_b, surface, node_low, node_high, leaf_first,
             piece_low, piece_high, pose_a, pose_b, listed, lower, stamps, planes, keys, order,
             ints, floats, ref, cache, ws, ep, values, status, counts, stack, box, now,
             hill_climb, stats, count, best, upper, previous):
    """
    List the pieces within ``T`` of A at this pose; return (best slot, its distance).

    A piece that was listed before keeps its bound (distance, pose and plane of its last
    measurement), so a rebuild measures again only what its bound cannot rule out.
    ``previous`` = (listed, lower, stamps, planes) copies and the piece -> old slot map (-1).
    The list grows (an overflow, -1, for the caller to enlarge) up to ``_LIST_SHRINKS_AT``
    pieces before the margin shrinks to fit it.
    """
    capacity = listed.shape[0]
    old_listed, old_lower, old_stamps, old_planes, slot_of = previous
    stats[_REBUILDS] += 1
    carried = -1
    if count > 0:
        carried = listed[best]
        _copy_simplex(cache, best, capacity)
    for s in range(count):
        old_listed[s], old_lower[s] = listed[s], lower[s]
        slot_of[listed[s]] = s
        for c in range(4):
            old_planes[s, c] = planes[s, c]
            for r in range(3):
                old_stamps[s, r, c] = stamps[s, r, c]
    old_count = count
    for r in range(3):
        for c in range(4):
            ref[r, c] = now[0, r, c]
    seeds = ws[5]
    seeds[0] = -1
    box_low, box_high, frame = box[0], box[1], box[2:]
    identity = ws[4]  # the query's work pose, free until the next query
    for r in range(3):
        for c in range(4):
            identity[r, c] = 1.0 if r == c else 0.0
    _body_box(geom_a, body_a, identity, frame[0], frame[1], seeds, hill_climb)
    _body_box(geom_a, body_a, ref, box_low, box_high, seeds, hill_climb)
    known = upper
    if carried < 0:
        carried, known = _nearest_piece(geom_a, body_a, mesh_scene, geom_b, surface, node_low,
                                        node_high, leaf_first, piece_low, piece_high, pose_a,
                                        pose_b, box_low, box_high, capacity, cache, ws, ep,
                                        values, status, counts, stack, hill_climb, stats)
    margin = floats[_MARGIN]
    while True:
        threshold = known + 2.0 * margin
        count = _collect(node_low, node_high, leaf_first, piece_low, piece_high, box_low,
                         box_high, frame, ref, threshold, listed, keys, stack, stats)
        if count >= 0:
            break
        if margin == 0.0 or capacity < min(_LIST_SHRINKS_AT, slot_of.shape[0]):
            for s in range(old_count):
                slot_of[old_listed[s]] = -1
            ints[_COUNT] = 0
            ints[_OVERFLOW] = 1
            return -1, math.inf
        margin = 0.5 * margin if margin > 1e-6 * body_a[B_BOUND] else 0.0
    best = -1
    for slot in range(count):
        order[slot] = slot
        old = slot_of[listed[slot]]
        if old >= 0:
            lower[slot] = old_lower[old]
            for c in range(4):
                planes[slot, c] = old_planes[old, c]
                for r in range(3):
                    stamps[slot, r, c] = old_stamps[old, r, c]
            keys[slot] = max(keys[slot], lower[slot] - _motion(stamps[slot], ref, body_a))
        else:
            lower[slot] = keys[slot]
            _stamp(stamps, slot, ref)
            planes[slot, 3] = math.nan
        if listed[slot] == carried:
            _copy_simplex(cache, capacity, slot)
            best = slot
        else:
            _clear_slot(cache, slot)
    # The carried piece is within T (its box gap is at most its distance): measure it into its
    # slot; it is the best so far.
    upper = _measure(geom_a, body_a, mesh_scene, geom_b, surface, pose_a, pose_b, carried,
                     best, cache, ws, ep, values, status, counts, hill_climb, stats)
    lower[best] = upper
    _stamp(stamps, best, ref)
    keys[best] = upper
    _keep_plane(values, best, values[best, 0], pose_b, planes)
    if planes[best, 3] == planes[best, 3]:  # its plane bounds every piece at this pose
        for slot in range(count):
            if slot != best:
                keys[slot] = max(keys[slot], _below(piece_low, piece_high, listed[slot],
                                                    planes, best) - planes[best, 3])
    for s in range(old_count):
        slot_of[old_listed[s]] = -1
    for start in range((count - 2) // 4, -1, -1):  # the min-heap of the slots by key
        _heap_down(order, keys, start, count)
    ints[_COUNT], ints[_BEST] = count, best
    floats[_THRESHOLD] = threshold
    return best, upper


class MeshDistance:
    """
    Tracked signed distance from a convex body to a :class:`MeshBody` (module docstring).

    Parameters
    ----------
    body : ConvexPolytope
        The convex body (first: normals point from it towards the mesh).
    mesh : MeshBody
    margin : float, optional
        Metres of motion the candidate list absorbs before a rebuild; default a quarter of
        the body's bounding radius.
    capacity : int
        Pieces the list may hold at first (doubled, up to every piece, when needed).
    hill_climb : bool

    Call it with the two (4, 4) poses; it returns the distance, and :meth:`result` the
    whole answer. One object per pair and per thread.

    """

    def __init__(self, body, mesh, *, margin=None, capacity=64, hill_climb=True):
        """Bind both bodies and allocate the tracked state."""
        if body._kind == KIND_HALF_SPACE:
            raise ValueError('body: a half-space cannot be measured against a mesh body')
        self.body, self.mesh = body, mesh
        self.margin = 0.25 * body.bounding_radius if margin is None else float(margin)
        if not (self.margin >= 0.0 and math.isfinite(self.margin)):
            raise ValueError(f'margin must be finite and >= 0, got {margin}')
        self.hill_climb = bool(hill_climb)
        self._link, self._mesh_buffer = body._packed, mesh._packed
        self._scratch = scratch_buffer()
        self._state = None
        self._allocate(min(max(int(capacity), 1), mesh.num_pieces))
        self._answered = False

    def _allocate(self, capacity):
        """(Re)allocate the state for ``capacity`` slots, keeping the work counters."""
        stats = None if self._state is None else self.stats.copy()
        self._state, arrays = _pack(_state_arrays(capacity, self.mesh.num_pieces, self.margin),
                                    True)
        self._ints, self.stats, self._listed = arrays[_INTS], arrays[_STATS], arrays[_LISTED]
        self._values = arrays[_VALUES]
        self._out = tuple(arrays[_VALUES:_VALUES + 3])
        if stats is not None:
            self.stats[:] = stats

    @property
    def capacity(self) -> int:
        return self._listed.shape[0]

    def reset(self):
        """Forget the candidate list and every tracked simplex: the next call starts cold."""
        self._ints[:] = 0

    def __call__(self, pose_body, pose_mesh) -> float:
        """Return the signed distance at these poses (see :meth:`result` for the rest)."""
        kernel = _kernel or _step_kernel()
        mesh, mode = self._mesh_buffer, int(self.hill_climb)
        try:
            value = kernel(self._link, mesh, self._state, self._scratch, pose_body, pose_mesh,
                           mode)
        except TypeError:  # not the compiled pose type (see _step_kernel): convert
            pose_body, pose_mesh = _plain_pose(pose_body, 'pose_body'), \
                _plain_pose(pose_mesh, 'pose_mesh')
            value = kernel(self._link, mesh, self._state, self._scratch, pose_body, pose_mesh,
                           mode)
        while value != value:  # no answer: a pose that is not rigid, or a list that outgrew
            if not self._ints[_OVERFLOW]:
                check_poses(pose_body, 'pose_body', (4, 4))
                check_poses(pose_mesh, 'pose_mesh', (4, 4))
                break  # valid poses: a query never answers NaN, and this says so honestly
            self._allocate(min(2 * self.capacity, self.mesh.num_pieces))
            value = kernel(self._link, mesh, self._state, self._scratch, pose_body, pose_mesh,
                           mode)
        self._answered = True
        return value

    @property
    def piece(self) -> int:
        """Index (in ``mesh.pieces`` order) of the piece that gave the last answer."""
        return int(self._listed[self._ints[_BEST]])

    def result(self) -> DistanceResult:
        """Return the whole last answer (world frame), with the unsigned rule applied."""
        if not self._answered:
            raise RuntimeError('no query yet')
        found = DistanceResult.from_row(self._out, int(self._ints[_BEST]))
        if found.distance < 0.0 and self.mesh.surface[self.piece]:
            point = found.witness_b
            return DistanceResult(0.0, point.copy(), point.copy(), found.normal,
                                  Status(_TOUCHING), found.iterations, 0.0, found.support_calls,
                                  found.hill_climb_steps, found.epa_iterations)
        return found


def _signature():
    """Return the argument types of ``_mesh_step``: what ``MeshDistance.__call__`` passes."""
    from numba import types
    packed, buffer = types.Array(types.uint8, 1, 'C', readonly=True), \
        types.Array(types.uint8, 1, 'C')
    pose = types.Array(types.float64, 2, 'C')
    return (packed, packed, buffer, buffer, pose, pose, types.int64)


def _python_step(link, mesh, state, scratch, pose_a, pose_b, mode):
    """``_mesh_step`` under NUMBA_DISABLE_JIT: converts the poses first, as numba would."""
    return _mesh_step(link, mesh, state, scratch, _plain_pose(pose_a, 'pose_body'),
                      _plain_pose(pose_b, 'pose_mesh'), mode)


def _step_kernel():
    """
    Return ``_mesh_step`` compiled (or loaded from the cache) for ``_signature()`` only.

    Any other pose type raises TypeError at once (``_jit.frozen``): the caller converts the
    poses and calls again.
    """
    global _kernel
    if _kernel is None:
        _kernel = frozen(_mesh_step, _signature(), _python_step)
    return _kernel


_kernel = None
