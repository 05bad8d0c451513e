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
The nearest grid point of every piece of a robot, tracked between clouds by candidate sets.

A cloud arrives a few times slower than the cycle, and between two clouds a link moves a few
millimetres a cycle. So once per cloud (``NearestTracker.anchor``, the background thread), for
each piece posed at the cloud's stamp, the points that could still be nearest after a motion of
up to ``margin`` are kept, sorted by distance: every point within ``d0 + 2 margin`` (``d0`` the
piece's nearest distance), at most ``capacity`` of them (fewer points shrink that piece's
margin to what they cover). Each cycle (``NearestTracker.nearest``, the compute thread) a piece
whose every point moved at most its margin since then (a bound from the two poses and the
piece's box) has its nearest point among its candidates: a point p outside them had
``d(p) >= d0 + 2 margin`` and is now at least ``d0 + margin`` away, while the old nearest point
is now at most ``d0 + margin`` away (distances to a moving set change by at most its largest
displacement). The candidates are measured nearest first and the scan stops once a candidate's
old distance less the motion cannot beat the best. A piece that moved farther is searched in
the grid (``point_grid.grid_nearest``). Either way the distance is the one the grid search
measures for that point, so every answer equals brute force over the cloud's kept points.

Both steps are one compiled call for all pieces (the GIL is released throughout): the pieces'
shapes are packed into flat arrays (``PackedShapes``).
"""

import numpy as np

from ._jit import njit
from .cell_bounds import box_gap_of_box, local_cell_box
from .point_distance import (_box_gap, _cannot_beat, _core_distance, _facing_bound,
                             _facing_box_bound, _local, piece_closest)
from .point_grid import _box_block, grid_nearest, grid_remove_within, sort_cells
from .query import VALUE_COLUMNS

__all__ = ['NearestTracker', 'PackedShapes']

# Rounding allowance of the motion bound (relative and absolute, metres): the bound and the
# distances are computed in float64 with coordinates of at most kilometres.
_ROUNDING = 1e-9


class PackedShapes:
    """
    Several ``PointDistanceShape`` in flat arrays, one row range per piece.

    A piece's face-plane map is padded to the widest map by repeating its last plane (a
    maximum over repeated planes is the same bound).
    """

    def __init__(self, shapes):
        shapes = list(shapes)
        self.shapes = tuple(shapes)
        self.count = len(shapes)
        self.tri_offsets = _offsets([len(shape.triangles) for shape in shapes])
        self.plane_offsets = _offsets([len(shape.planes) for shape in shapes])
        self.map_offsets = _offsets([len(shape.plane_map) for shape in shapes])
        self.triangles = _stack([shape.triangles for shape in shapes], (0, 3, 3))
        self.spheres = _stack([shape.spheres for shape in shapes], (0, 4))
        self.planes = _stack([shape.planes for shape in shapes], (0, 4))
        width = max([shape.plane_map.shape[1] for shape in shapes if len(shape.plane_map)] + [1])
        self.plane_map = _stack([_padded(shape.plane_map, width) for shape in shapes],
                                (0, width), np.int64)
        self.boxes = _stack([shape.box for shape in shapes], (0, 2, 3))
        self.radii = np.array([shape.radius for shape in shapes], dtype=np.float64)
        self.cylinders = _stack([np.array(shape.cylinder, dtype=np.float64).reshape(1, 2)
                                 for shape in shapes], (0, 2))
        self.is_cylinder = np.array([shape.is_cylinder for shape in shapes], dtype=np.bool_)
        self.centres = _stack([shape.center.reshape(1, 3) for shape in shapes], (0, 3))
        self._fields = None

    def fields(self, padding):
        """Return the pieces' distance fields for ``padding`` (``PointDistanceShape.field``)."""
        if self._fields is None or self._fields[0] != padding:
            built = [shape.field(padding) for shape in self.shapes]
            self._fields = (padding, _offsets([len(field[3]) for field in built]),
                            _stack([field[0].reshape(1, 3) for field in built], (0, 3)),
                            np.array([field[1] for field in built], dtype=np.float64),
                            _stack([field[2].reshape(1, 3) for field in built], (0, 3),
                                   np.int64),
                            _stack([field[3] for field in built], (0,)))
        return self._fields[1:]

    def arguments(self):
        """Return the arrays the kernels take, in their order."""
        return (self.tri_offsets, self.plane_offsets, self.map_offsets, self.triangles,
                self.spheres, self.planes, self.plane_map, self.boxes, self.radii,
                self.cylinders, self.is_cylinder, self.centres)


def _offsets(sizes):
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(sizes)
    return offsets


def _stack(arrays, empty, dtype=np.float64):
    arrays = [np.asarray(array, dtype=dtype).reshape((-1,) + empty[1:]) for array in arrays]
    if not arrays:
        return np.zeros(empty, dtype=dtype)
    return np.ascontiguousarray(np.concatenate(arrays))


def _padded(plane_map, width):
    if not len(plane_map):
        return np.zeros((0, width), dtype=np.int64)
    pad = np.repeat(plane_map[:, -1:], width - plane_map.shape[1], axis=1)
    return np.concatenate([plane_map, pad], axis=1)


class NearestTracker:
    """
    The candidate sets of one cloud's grid for a fixed list of pieces, and their answers.

    Parameters
    ----------
    grid : gjk_ros.core.point_grid.PointGrid
        The cloud (kept points only are searched).
    shapes : PackedShapes
        The pieces.
    margin : float
        The largest motion (metres) the candidates are kept for.
    capacity : int
        The most candidates per piece.

    Attributes
    ----------
    margins : (k,) float
        Each piece's margin after ``anchor`` (smaller than ``margin`` when ``capacity``
        points did not reach ``d0 + 2 margin``; -1 with no candidates: always searched).
    searched : (k,) bool
        Which pieces the last ``nearest`` searched in the grid (moved beyond their margin).

    """

    def __init__(self, grid, shapes, margin=0.05, capacity=256):
        self.grid, self.shapes = grid, shapes
        count = shapes.count
        self.margin, self.capacity = float(margin), int(capacity)
        self.anchors = np.tile(np.eye(4), (count, 1, 1))
        self.margins = np.full(count, -1.0)
        self.counts = np.zeros(count, dtype=np.int64)
        self.firsts = np.full(count, -1, dtype=np.int64)  # each piece's nearest at its anchor
        self.indices = np.zeros((count, max(self.capacity, 1)), dtype=np.int64)
        self.distances = np.zeros((count, max(self.capacity, 1)))
        self.searched = np.zeros(count, dtype=np.bool_)
        self._last = None  # the poses, rows and indices of the last ``nearest``
        self._blocks = np.zeros((2, 3, 2), dtype=np.int64)
        self._result = np.empty(2)
        # ``nearest``'s two halves run at once: each its own scratch (the kernels never
        # allocate): blocks, a search result, an answer, a point, its work.
        self._scratch = tuple((np.zeros((2, 3, 2), dtype=np.int64), np.empty(2), np.empty(7),
                               np.empty((1, 3)), np.zeros(3, dtype=np.int64)) for _ in range(2))

    def anchor(self, poses, hints=None):
        """
        Keep each piece's candidates at ``poses`` ((k, 4, 4) piece-to-world).

        ``hints`` (k,) are point indices likely near (-1: none), for the first bound.
        """
        count = self.shapes.count
        poses = np.ascontiguousarray(poses, dtype=np.float64).reshape(count, 4, 4)
        self.anchors = poses.copy()
        hints = np.full(count, -1, dtype=np.int64) if hints is None else \
            np.ascontiguousarray(hints, dtype=np.int64)
        grid = self.grid
        anchor_candidates(grid.points, grid.starts, grid.ends, grid.boxes, grid.row_spans,
                          grid.low, grid.edge, grid.dims, poses, *self.shapes.arguments(), hints,
                          self.margin, self.capacity, self.indices, self.distances, self.counts,
                          self.margins, self.firsts, grid.work, self._blocks, self._result)

    def filter_and_anchor(self, poses, padding, near=None):
        """
        Sort an unsorted grid, self-filter it and anchor the candidates: one compiled call.

        The grid comes from ``PointGrid(..., sort=False)``. Every point at most ``padding``
        from a piece at ``poses`` is removed (``PointGrid.remove_near``), then the candidates
        are kept as by ``anchor``. ``near`` (k, 3) are positions likely near each piece's
        nearest point (the last cloud's answers; NaN: none): the kept point nearest to one in
        its grid cell gives the first bound. Returns how many points were removed.
        """
        count, grid = self.shapes.count, self.grid
        poses = np.ascontiguousarray(poses, dtype=np.float64).reshape(count, 4, 4)
        self.anchors = poses.copy()
        near = np.full((count, 3), np.nan) if near is None else \
            np.ascontiguousarray(near, dtype=np.float64).reshape(count, 3)
        hints = np.full(count, -1, dtype=np.int64)
        unsorted, cells, starts = grid.unsorted
        removed = filter_and_anchor(unsorted, grid.low, grid.edge, grid.dims, cells, starts,
                                    grid.points, grid.ends, grid.boxes, grid.row_spans, poses,
                                    *self.shapes.arguments(), *self.shapes.fields(float(padding)),
                                    float(padding), near, hints, self.margin, self.capacity,
                                    self.indices, self.distances, self.counts, self.margins,
                                    self.firsts, grid.work, self._blocks, self._result)
        grid.sorted_outside(removed)
        return int(removed)

    def nearest(self, poses, hints, submit=None):
        """
        Return (rows (k, VALUE_COLUMNS), indices (k,)): each piece's nearest point at ``poses``.

        A row is the full answer (distance, witness on the piece, the point, the normal, error
        bound 0: ``gjk_ros.core.query.VALUE_COLUMNS``); NaN and index -1 with no point kept.
        ``hints`` (k,) start a grid search (the last answers; -1: none). With ``submit`` (an
        executor's), every other piece is searched by its thread while this one searches the
        rest: both release the GIL, so two cores share the pieces.
        """
        count = self.shapes.count
        poses = np.ascontiguousarray(poses, dtype=np.float64).reshape(count, 4, 4)
        hints = np.ascontiguousarray(hints, dtype=np.int64)
        rows = np.full((count, VALUE_COLUMNS), np.nan)
        indices = np.full(count, -1, dtype=np.int64)
        # A piece at the very pose of the last call has the same answer: not searched again.
        same = np.zeros(count, dtype=np.bool_)
        if self._last is not None:
            same = (poses == self._last[0]).all(axis=(1, 2))
            rows[same], indices[same] = self._last[1][same], self._last[2][same]
        if submit is None or count < 2:
            self._track(poses, hints, same, rows, indices, 0, 1, self._scratch[0])
        else:
            # As ``PairSet`` shares an update: a helper that has not started by the time this
            # thread is done (both cores busy) is cancelled and its half done here, no wait.
            other = submit(self._track, poses, hints, same, rows, indices, 1, 2,
                           self._scratch[1])
            self._track(poses, hints, same, rows, indices, 0, 2, self._scratch[0])
            if other.cancel():
                self._track(poses, hints, same, rows, indices, 1, 2, self._scratch[1])
            else:
                other.result()  # it started: wait for it to finish
        self._last = (poses.copy(), rows.copy(), indices.copy())
        for scratch in self._scratch:
            self.grid.work += scratch[4]
            scratch[4][:] = 0
        return rows, indices

    def _track(self, poses, hints, same, rows, indices, first, step, scratch):
        grid = self.grid
        blocks, result, answer, point, work = scratch
        track_nearest(grid.points, grid.starts, grid.ends, grid.boxes, grid.row_spans, grid.low,
                      grid.edge, grid.dims, poses, self.anchors, *self.shapes.arguments(),
                      self.indices, self.distances, self.counts, self.margins, self.firsts, hints,
                      same, rows, indices, self.searched, first, step, work, blocks, result,
                      answer, point)


@njit
def _motion(pose, anchor, box):
    """
    Largest displacement of a point of the piece's box from ``anchor`` to ``pose``.

    A point x moves by (P - P0) x, an affine function of x whose norm is convex: its largest
    value over the box is at one of the eight corners.
    """
    largest = 0.0
    for corner in range(8):
        x = box[corner & 1, 0]
        y = box[(corner >> 1) & 1, 1]
        z = box[(corner >> 2) & 1, 2]
        squared = 0.0
        for i in range(3):
            moved = (pose[i, 0] - anchor[i, 0]) * x + (pose[i, 1] - anchor[i, 1]) * y + \
                (pose[i, 2] - anchor[i, 2]) * z + (pose[i, 3] - anchor[i, 3])
            squared += moved * moved
        largest = max(largest, squared)
    return np.sqrt(largest) * (1.0 + _ROUNDING) + _ROUNDING


@njit
def anchor_candidates(points, starts, ends, cell_boxes, row_spans, low, edge, dims, poses,
                      tri_offsets, plane_offsets, map_offsets, triangles, spheres, planes,
                      plane_map, boxes, radii, cylinders, is_cylinder, centres, hints, margin,
                      capacity, indices, distances, counts, margins, firsts, work, blocks, result):
    """Write each piece's nearest point, sorted candidates, margin (``NearestTracker.anchor``)."""
    for k in range(poses.shape[0]):
        counts[k], margins[k], firsts[k] = 0, -1.0, hints[k]
        if capacity <= 0:
            continue  # no candidates: the hint is the first bound of the cycle's search
        tri = triangles[tri_offsets[k]:tri_offsets[k + 1]]
        sph = spheres[tri_offsets[k]:tri_offsets[k + 1]]
        pla = planes[plane_offsets[k]:plane_offsets[k + 1]]
        pmap = plane_map[map_offsets[k]:map_offsets[k + 1]]
        result[0], result[1] = np.inf, -1.0
        grid_nearest(points, starts, ends, cell_boxes, row_spans, low, edge, dims, poses[k],
                     boxes[k], tri, sph, pla, radii[k], cylinders[k, 0], cylinders[k, 1],
                     is_cylinder[k], centres[k], pmap, hints[k], result, work, blocks)
        firsts[k] = np.int64(result[1])
        if result[1] < 0.0:
            continue
        nearest = result[0]
        count, excluded = _gather(points, starts, ends, cell_boxes, row_spans, low, edge, dims,
                                  poses[k], boxes[k], tri, sph, pla, radii[k], cylinders[k, 0],
                                  cylinders[k, 1], is_cylinder[k], centres[k], pmap, nearest + 2.0
                                  * margin, indices[k], distances[k], capacity, blocks[0], work)
        _sort_heap(indices[k], distances[k], count)
        counts[k] = count
        # Every point left out is at least ``excluded`` away: motions up to half the gap to
        # the nearest distance keep the nearest point among the candidates.
        margins[k] = 0.5 * (excluded - nearest)


@njit
def filter_and_anchor(unsorted, low, edge, dims, cells, starts, points, ends, cell_boxes,
                      row_spans, poses, tri_offsets, plane_offsets, map_offsets, triangles,
                      spheres, planes, plane_map, boxes, radii, cylinders, is_cylinder, centres,
                      field_offsets, field_lows, field_edges, field_dims, field_values, padding,
                      near, hints, margin, capacity, indices, distances, counts, margins, firsts,
                      work, blocks, result):
    """Sort into cells, remove the points near each piece, anchor: return how many removed."""
    sort_cells(unsorted, low, edge, dims, cells, starts, points, ends, cell_boxes, row_spans)
    cell_starts = starts[:-1]
    removed = 0
    for k in range(poses.shape[0]):
        removed += grid_remove_within(points, cell_starts, ends, cell_boxes, row_spans, low, edge,
                                      dims, poses[k], boxes[k],
                                      triangles[tri_offsets[k]:tri_offsets[k + 1]],
                                      spheres[tri_offsets[k]:tri_offsets[k + 1]],
                                      planes[plane_offsets[k]:plane_offsets[k + 1]], radii[k],
                                      cylinders[k, 0], cylinders[k, 1], is_cylinder[k], centres[k],
                                      plane_map[map_offsets[k]:map_offsets[k + 1]], padding,
                                      field_lows[k], field_edges[k], field_dims[k],
                                      field_values[field_offsets[k]:field_offsets[k + 1]], work,
                                      blocks[0])
    for k in range(poses.shape[0]):
        hints[k] = _kept_near(points, cell_starts, ends, low, edge, dims, near[k])
    anchor_candidates(points, cell_starts, ends, cell_boxes, row_spans, low, edge, dims, poses,
                      tri_offsets, plane_offsets, map_offsets, triangles, spheres, planes,
                      plane_map, boxes, radii, cylinders, is_cylinder, centres, hints, margin,
                      capacity, indices, distances, counts, margins, firsts, work, blocks, result)
    return removed


@njit
def _kept_near(points, starts, ends, low, edge, dims, position):
    """Return the kept point nearest to ``position`` in its grid cell, or -1 (also for NaN)."""
    cell = 0
    stride = 1
    for axis in range(3):
        offset = np.floor((position[axis] - low[axis]) / edge)
        if not (0.0 <= offset < dims[axis]):
            return -1  # outside the grid, or NaN
        cell += np.int64(offset) * stride
        stride *= dims[axis]
    best, chosen = np.inf, -1
    for i in range(starts[cell], ends[cell]):
        dx, dy, dz = points[i, 0] - position[0], points[i, 1] - position[1], \
            points[i, 2] - position[2]
        squared = dx * dx + dy * dy + dz * dz
        if squared < best:
            best, chosen = squared, i
    return chosen


@njit
def _gather(points, starts, ends, cell_boxes, row_spans, low, edge, dims, pose, box, triangles,
            spheres, planes, radius, cylinder_radius, cylinder_half, is_cylinder, centre,
            plane_map, limit, heap_index, heap_distance, capacity, block, work):
    """
    Keep the (at most ``capacity``) nearest points within ``limit`` in a max-heap.

    Returns (count, excluded): a lower bound of the distance of every point not kept
    (``limit`` when all within it fit).
    """
    count, excluded = 0, limit
    visited = bounded = measured = 0
    _box_block(pose, box, limit, low, edge, dims, block)  # cells beyond are beyond ``limit``
    for iz in range(block[2, 0], block[2, 1]):
        for iy in range(block[1, 0], block[1, 1]):
            row = iy + dims[1] * iz  # its cells with points are in row_spans[row]
            for ix in range(max(block[0, 0], row_spans[row, 0]),
                            min(block[0, 1], row_spans[row, 1])):
                cell = ix + dims[0] * (iy + dims[1] * iz)
                if starts[cell] == ends[cell]:
                    continue
                visited += 1
                cutoff = heap_distance[0] if count == capacity else limit
                cx, cy, cz, ex, ey, ez = local_cell_box(cell_boxes, starts[cell], pose)
                bound = max(box_gap_of_box(cx, cy, cz, ex, ey, ez, box),
                            _facing_box_bound(cx, cy, cz, ex, ey, ez, centre, planes,
                                              plane_map) - radius)
                if bound > cutoff:
                    excluded = min(excluded, bound)
                    continue
                for i in range(starts[cell], ends[cell]):
                    bounded += 1
                    cutoff = heap_distance[0] if count == capacity else limit
                    x, y, z = _local(points, i, pose)
                    bound = max(_box_gap(x, y, z, box),
                                _facing_bound(x, y, z, centre, planes, plane_map) - radius)
                    if bound > cutoff:
                        excluded = min(excluded, bound)
                        continue
                    measured += 1
                    distance = _core_distance(x, y, z, triangles, spheres, planes,
                                              cylinder_radius, cylinder_half, is_cylinder,
                                              cutoff + radius) - radius
                    if distance > cutoff:
                        excluded = min(excluded, distance)
                    elif count < capacity:
                        _heap_push(heap_index, heap_distance, count, i, distance)
                        count += 1
                    else:  # full: the farthest kept point leaves, the new one comes in
                        excluded = min(excluded, heap_distance[0])
                        _heap_replace_top(heap_index, heap_distance, count, i, distance)
    work[0] += visited
    work[1] += bounded
    work[2] += measured
    return count, excluded


@njit
def _heap_push(index, distance, count, i, value):
    """Add (value, i) to the max-heap of ``count`` entries."""
    child = count
    while child > 0:
        parent = (child - 1) // 2
        if distance[parent] >= value:
            break
        index[child], distance[child] = index[parent], distance[parent]
        child = parent
    index[child], distance[child] = i, value


@njit
def _heap_replace_top(index, distance, count, i, value):
    """Replace the largest entry of the max-heap by (value, i)."""
    parent = 0
    while True:
        child = 2 * parent + 1
        if child >= count:
            break
        if child + 1 < count and distance[child + 1] > distance[child]:
            child += 1
        if distance[child] <= value:
            break
        index[parent], distance[parent] = index[child], distance[child]
        parent = child
    index[parent], distance[parent] = i, value


@njit
def _sort_heap(index, distance, count):
    """Sort a max-heap of ``count`` entries in place, nearest first (heapsort)."""
    for last in range(count - 1, 0, -1):
        top_index, top_distance = index[0], distance[0]
        _heap_replace_top(index, distance, last, index[last], distance[last])
        index[last], distance[last] = top_index, top_distance


@njit
def track_nearest(points, starts, ends, cell_boxes, row_spans, low, edge, dims, poses, anchors,
                  tri_offsets, plane_offsets, map_offsets, triangles, spheres, planes, plane_map,
                  boxes, radii, cylinders, is_cylinder, centres, indices, distances, counts,
                  margins, firsts, hints, same, rows, nearest, searched, first, step, work, blocks,
                  result, answer, point):
    """Write the nearest point and answer row of every ``step``-th piece from ``first``."""
    bounded = measured = 0
    for k in range(first, poses.shape[0], step):
        searched[k] = False
        if same[k]:
            continue  # the rows hold the last answer at this very pose
        tri = triangles[tri_offsets[k]:tri_offsets[k + 1]]
        sph = spheres[tri_offsets[k]:tri_offsets[k + 1]]
        pla = planes[plane_offsets[k]:plane_offsets[k + 1]]
        pmap = plane_map[map_offsets[k]:map_offsets[k + 1]]
        pose, radius = poses[k], radii[k]
        moved = _motion(pose, anchors[k], boxes[k])
        result[0], result[1] = np.inf, -1.0
        searched[k] = not (counts[k] > 0 and moved <= margins[k])
        if searched[k]:
            # The anchor's nearest point when there is no better hint.
            hint = hints[k] if hints[k] >= 0 else firsts[k]
            grid_nearest(points, starts, ends, cell_boxes, row_spans, low, edge, dims, pose,
                         boxes[k], tri, sph, pla, radius, cylinders[k, 0], cylinders[k, 1],
                         is_cylinder[k], centres[k], pmap, hint, result, work, blocks)
        else:
            best, best_index = np.inf, -1
            for c in range(counts[k]):
                if distances[k, c] - moved >= best:
                    break  # sorted: no later candidate can be nearer
                i = indices[k, c]
                x, y, z = _local(points, i, pose)
                bounded += 1
                # Bounded at the new pose as the grid search bounds a point: many candidates
                # of a flat piece over a floor are about as near as the best.
                if _cannot_beat(x, y, z, best, boxes[k], centres[k], pla, pmap, radius):
                    continue
                measured += 1
                distance = _core_distance(x, y, z, tri, sph, pla, cylinders[k, 0],
                                          cylinders[k, 1], is_cylinder[k],
                                          best + radius) - radius
                if distance < best:
                    best, best_index = distance, i
            result[0], result[1] = best, best_index
        index = np.int64(result[1])
        nearest[k] = index
        if index < 0:
            continue
        point[0, 0], point[0, 1], point[0, 2] = points[index, 0], points[index, 1], \
            points[index, 2]
        piece_closest(point, pose, tri, sph, pla, radius, cylinders[k, 0], cylinders[k, 1],
                      is_cylinder[k], answer)
        rows[k, 0] = answer[0]
        for c in range(3):
            rows[k, 1 + c] = answer[1 + c]
            rows[k, 4 + c] = point[0, c]
            rows[k, 7 + c] = answer[4 + c]
        rows[k, 10] = 0.0
    work[1] += bounded
    work[2] += measured
