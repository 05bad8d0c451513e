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
Sensor clouds gathered in one pass and bucketed in a grid of cells, searched exactly.

A sensor cloud (``CloudGatherer``, ``PointGrid``) is gathered in one pass over its coordinates
and bucketed by a counting sort; the self-filter and the nearest-point search visit only the
cells near a piece. A cell is skipped by lower bounds over the box of its points
(``gjk_ros.core.cell_bounds``): the gap to the piece's box and the piece's face planes, and
for the self-filter the piece's distance field (``gjk_ros.core.point_distance``), whose values
are exact at field cell centres: the signed distance is 1-Lipschitz, so a field value decides
a point unless it lies within half a field cell diagonal of the padding, and those points are
measured exactly. Every
answer equals measuring every point, and the nearest-point search answers in full: the
distance, the witness on the piece, the cloud point and the normal.
"""

import collections

import numpy as np

from ._jit import njit
from .cell_bounds import box_gap_of_box, fill_cell_box, fill_cell_boxes, local_cell_box
from .point_distance import (_box_gap, _cannot_beat, _core_distance, _facing_bound,
                             _facing_box_bound, _field_value, _local, _within)
from .query import VALUE_COLUMNS

__all__ = ['CloudGatherer', 'nearest_answer', 'NearestPoint', 'PointGrid']

# The largest finite float64 (a squared range limit of inf is clamped to it).
_LARGEST = 1.7976931348623157e308
# Added to the Lipschitz bound of a cell (relative and absolute): the rounding of a value and
# of the binning (coordinates in metres, their rounding far below this).
_FIELD_ROUNDING = 1e-9

NearestPoint = collections.namedtuple('NearestPoint', 'distance index witness point normal row')
NearestPoint.__doc__ = (
    'The nearest point of a grid to a piece: the signed distance, its index in the grid '
    '(``points``), the witness on the piece, the point, and the unit normal from the piece '
    'towards the point (world frame; ``point - witness == distance * normal``); ``row`` holds '
    'them as a core value row (distance, witness_a, witness_b, normal, error bound 0, as '
    '``PairSet`` rows: ``query.VALUE_COLUMNS``), of which the vectors are views.')


def nearest_answer(row, index):
    """Return the ``NearestPoint`` of an answer row (NaN, index -1: no point kept)."""
    return NearestPoint(float(row[0]) if index >= 0 else np.inf, int(index), row[1:4],
                        row[4:7], row[7:10], row)


class PointGrid:
    """
    A point set bucketed in a uniform grid of cubic cells, for exact nearest-point searches.

    The points are stored in cell order (a counting sort): cell ``c`` holds
    ``points[starts[c]:ends[c]]``, so a search reads each cell's points from one block of
    memory. Building it is two passes over the points. Point indices (``nearest``) refer to
    ``points``; the self-filter (``remove_near``) moves a removed point's slot to the end of its
    cell's block and shortens the block, so only the cells near the robot are touched.

    Parameters
    ----------
    points : (n, 3) float
        Finite points (n may be 0).
    cell : float
        Preferred cell edge; enlarged so that the grid has at most ``max_cells`` cells.
    max_cells : int
        Bound of the grid's memory (one int64 per cell).
    bounds : (2, 3) float, optional
        The smallest and largest coordinates of the points, when the caller already has them
        (``CloudGatherer.gather``); measured otherwise.

    Attributes
    ----------
    boxes : (n, 6) float
        The box of each cell's kept points, at the row of its first point
        (``gjk_ros.core.cell_bounds``; rows of no cell's first point are unset).
    row_spans : (dims_y * dims_z, 2) int64
        Per row of cells along x, the first and one past the last cell that held points
        (``gjk_ros.core.cell_bounds``): the searches skip the empty cells around them.
    work : (3,) int64
        Machine-independent work so far: cells visited, points bounded, points measured
        exactly (triangles or face planes).

    """

    def __init__(self, points, cell=0.05, max_cells=2_000_000, bounds=None, sort=True):
        points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
        count = points.shape[0]
        if not count:
            bounds = np.zeros((2, 3))
        elif bounds is None:  # the box of all the points, as of one cell's
            bounds = np.empty((1, 6))
            fill_cell_box(points, 0, count, bounds)
            bounds = bounds.reshape(2, 3)
        low, span = np.array(bounds[0], dtype=np.float64), bounds[1] - bounds[0]
        edge = max(float(cell), float(np.prod(span + cell)) ** (1.0 / 3.0)
                   / max_cells ** (1.0 / 3.0))
        dims = np.floor(span / edge).astype(np.int64) + 1
        while int(np.prod(dims)) > max_cells:  # rounding: one more step is always enough
            edge *= 1.01
            dims = np.floor(span / edge).astype(np.int64) + 1
        self.low, self.edge, self.dims = low, edge, dims
        starts = np.zeros(int(np.prod(dims)) + 1, dtype=np.int64)
        self.points = np.empty((count, 3))
        self.starts, self.ends = starts[:-1], np.empty_like(starts[1:])
        self.boxes = np.empty((count, 6))
        self.row_spans = np.empty((int(dims[1] * dims[2]), 2), dtype=np.int64)
        # Unsorted, the grid is for a caller that sorts within a larger compiled call
        # (``sort_cells`` with these arrays: ``NearestTracker.filter_and_anchor``).
        self.unsorted = (points, np.empty(count, dtype=np.int32), starts)
        if sort:
            sort_cells(points, low, edge, dims, self.unsorted[1], starts, self.points,
                       self.ends, self.boxes, self.row_spans)
            self.unsorted = None
        self._count = count
        self.work = np.zeros(3, dtype=np.int64)
        self._blocks = np.zeros((2, 3, 2), dtype=np.int64)

    def __len__(self):
        """Return how many points are kept."""
        return self._count

    def kept(self):
        """Return a copy of the kept points, (k, 3), in cell order."""
        out = np.empty((self._count, 3))
        copy_kept(self.points, self.starts, self.ends, out)
        return out

    def sorted_outside(self, removed):
        """Note that a compiled caller sorted the grid and removed ``removed`` points."""
        self.unsorted = None
        self._count -= int(removed)

    def holds(self, index):
        """Whether ``points[index]`` is a kept point."""
        return 0 <= index < self.points.shape[0] and grid_holds(
            self.points, self.starts, self.ends, self.low, self.edge, self.dims, int(index))

    def remove_near(self, pieces, padding):
        """
        Drop the points at most ``padding`` from any piece (the self-filter); return how many.

        Only the cells that overlap a piece's box grown by ``padding`` are visited; a point
        is decided by the piece's distance field, or measured exactly when the field cannot
        tell (within half a field cell of the padding). Points move within their cells, so
        indices from before the call no longer apply.

        Parameters
        ----------
        pieces : iterable of (PointDistanceShape, (4, 4) float)
            The pieces and their piece-to-world poses.
        padding : float
            Metres (>= 0).

        """
        dropped = 0
        for shape, pose in pieces:
            field_low, field_edge, field_dims, field_values = shape.field(padding)
            dropped += grid_remove_within(
                self.points, self.starts, self.ends, self.boxes, self.row_spans, self.low,
                self.edge, self.dims, np.ascontiguousarray(pose, dtype=np.float64), shape.box,
                shape.triangles, shape.spheres, shape.planes, shape.radius, shape.cylinder[0],
                shape.cylinder[1], shape.is_cylinder, shape.center, shape.plane_map,
                float(padding), field_low, field_edge, field_dims, field_values, self.work,
                self._blocks[0])
        self._count -= dropped
        return int(dropped)

    def nearest(self, shape, pose, hint=None):
        """
        Return the ``NearestPoint`` of the grid to a ``PointDistanceShape`` at ``pose``.

        Exact, and in full: distance, index, witness on the piece, point and normal (the
        witness and normal of the winning point are measured once, after the search). With no
        point kept: distance inf, index -1, NaN vectors. ``hint`` (a point index, e.g. the
        last answer) gives a first bound. The cells are searched in growing blocks around the
        piece's box, a cell is skipped when a lower bound over the box of its points (its gap
        to the piece's box, its face-plane values) is no better than the best distance so
        far, and each point is bounded by the box and the face planes before its boundary
        triangles are measured; the search stops once the block reaches farther than the
        best distance.
        """
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        result = np.array([np.inf, -1.0])
        grid_nearest(self.points, self.starts, self.ends, self.boxes, self.row_spans, self.low,
                     self.edge, self.dims, pose, shape.box, shape.triangles, shape.spheres,
                     shape.planes, shape.radius, shape.cylinder[0], shape.cylinder[1],
                     shape.is_cylinder, shape.center, shape.plane_map,
                     -1 if hint is None else int(hint), result, self.work, self._blocks)
        index = int(result[1])
        row = np.full(VALUE_COLUMNS, np.nan)
        if index >= 0:
            row[4:7] = self.points[index]
            row[0], row[1:4], row[7:10] = shape.closest(row[4:7], pose)
            row[10] = 0.0
        return nearest_answer(row, index)


class CloudGatherer:
    """
    One pass over a sensor cloud's coordinates: skip, limit, place, downsample.

    Keeps the voxel table between clouds (a source processes one cloud at a time), so a cloud
    costs no table allocation: a slot belongs to the current cloud when its stamp is the
    cloud's generation.
    """

    def __init__(self):
        self._keys = np.zeros((0, 3), dtype=np.int64)
        self._stamps = np.zeros(0, dtype=np.int64)
        self._generation = 0

    def gather(self, xs, ys, zs, transform, ranges, heights, voxel=0.0):
        """
        Return the kept points in the target frame and their bounds; non-finite ones skipped.

        The points are (k, 3) float64; the bounds (2, 3) are their smallest and largest
        coordinates (for ``PointGrid``; meaningless when k is 0).

        Parameters
        ----------
        xs, ys, zs : (n,) float32 or float64
            The coordinates in the sensor frame (strided views of the message are fine).
        transform : (4, 4) float
            Target <- sensor.
        ranges : (float, float)
            Points whose distance from the sensor is outside [min, max] are skipped.
        heights : (float, float)
            Points whose target-frame z is outside [min, max] are skipped.
        voxel : float
            Edge of the downsampling voxels in the target frame (0: none); the first point of
            each occupied voxel is kept (a real point, so distances never shrink).

        """
        count = xs.shape[0]
        if voxel > 0.0 and self._stamps.shape[0] < 2 * count:
            size = 1 << max(int(2 * count - 1).bit_length(), 4)
            self._keys = np.zeros((size, 3), dtype=np.int64)
            self._stamps = np.zeros(size, dtype=np.int64)
        self._generation += 1
        out = np.empty((count, 3))
        bounds = np.empty((2, 3))
        limits = np.array([ranges[0], ranges[1], heights[0], heights[1]], dtype=np.float64)
        kept = gather_cloud(xs, ys, zs, np.ascontiguousarray(transform, dtype=np.float64),
                            limits, float(voxel), self._keys, self._stamps, self._generation,
                            out, bounds)
        return out[:kept], bounds


# --- clouds --------------------------------------------------------------------------------------

@njit
def gather_cloud(xs, ys, zs, transform, limits, voxel, keys, stamps, generation, out, bounds):
    """
    Write the kept points of a cloud to ``out``, their bounds to ``bounds``; return how many.

    See CloudGatherer. ``limits`` is (min_range, max_range, min_height, max_height);
    ``keys``/``stamps`` are the voxel table (a power of two of slots, at least twice the points)
    when ``voxel`` > 0.
    """
    low_x = low_y = low_z = np.inf
    high_x = high_y = high_z = -np.inf
    kept = 0
    mask = stamps.shape[0] - 1
    # Ranges compare squared. A NaN coordinate fails every comparison, an inf one (or a
    # squared range that overflows: coordinates beyond 1e154 m) is not below inf.
    nearest, farthest = limits[0] * limits[0], min(limits[1] * limits[1], _LARGEST)
    lowest, highest = limits[2], limits[3]
    # The transform in locals: a store to ``out`` could alias it, and the compiler would
    # reload all twelve entries for every point.
    r00, r01, r02, t0 = transform[0, 0], transform[0, 1], transform[0, 2], transform[0, 3]
    r10, r11, r12, t1 = transform[1, 0], transform[1, 1], transform[1, 2], transform[1, 3]
    r20, r21, r22, t2 = transform[2, 0], transform[2, 1], transform[2, 2], transform[2, 3]
    for i in range(xs.shape[0]):
        x, y, z = np.float64(xs[i]), np.float64(ys[i]), np.float64(zs[i])
        squared = x * x + y * y + z * z
        if not (nearest <= squared <= farthest):
            continue
        wz = r20 * x + r21 * y + r22 * z + t2
        if wz < lowest or wz > highest:
            continue
        wx = r00 * x + r01 * y + r02 * z + t0
        wy = r10 * x + r11 * y + r12 * z + t1
        if voxel > 0.0 and not _first_in_voxel(wx, wy, wz, voxel, keys, stamps, generation,
                                               mask):
            continue
        out[kept, 0], out[kept, 1], out[kept, 2] = wx, wy, wz
        low_x, low_y, low_z = min(low_x, wx), min(low_y, wy), min(low_z, wz)
        high_x, high_y, high_z = max(high_x, wx), max(high_y, wy), max(high_z, wz)
        kept += 1
    bounds[0, 0], bounds[0, 1], bounds[0, 2] = low_x, low_y, low_z
    bounds[1, 0], bounds[1, 1], bounds[1, 2] = high_x, high_y, high_z
    return kept


# Voxel indices are clamped to this magnitude (2^52: still exact in float64) so that a point
# absurdly far away cannot overflow the integer conversion.
_VOXEL_CLAMP = 4503599627370496.0


@njit
def _first_in_voxel(x, y, z, voxel, keys, stamps, generation, mask):
    """Claim the voxel of (x, y, z) in the open-addressing table; False if already taken."""
    ix = np.int64(min(max(np.floor(x / voxel), -_VOXEL_CLAMP), _VOXEL_CLAMP))
    iy = np.int64(min(max(np.floor(y / voxel), -_VOXEL_CLAMP), _VOXEL_CLAMP))
    iz = np.int64(min(max(np.floor(z / voxel), -_VOXEL_CLAMP), _VOXEL_CLAMP))
    # Spatial hash of Teschner et al. 2003 (three large primes), linear probing.
    slot = ((ix * 73856093) ^ (iy * 19349663) ^ (iz * 83492791)) & mask
    while stamps[slot] == generation:
        if keys[slot, 0] == ix and keys[slot, 1] == iy and keys[slot, 2] == iz:
            return False
        slot = (slot + 1) & mask
    stamps[slot] = generation
    keys[slot, 0], keys[slot, 1], keys[slot, 2] = ix, iy, iz
    return True


@njit
def _cell_index(x, y, z, low, inverse_edge, dims):
    """
    Return the flat cell of a point (x + dims_x * (y + dims_y * z)), clamped to the grid.

    Truncation is the floor here: a negative offset (a rounding below ``low``) clamps to cell 0
    either way. A product by the inverse edge may put a point an ulp outside its cell: the
    searches bound a cell by the box of its points (``gjk_ros.core.cell_bounds``), not its cube.
    """
    ix = min(max(np.int64((x - low[0]) * inverse_edge), 0), dims[0] - 1)
    iy = min(max(np.int64((y - low[1]) * inverse_edge), 0), dims[1] - 1)
    iz = min(max(np.int64((z - low[2]) * inverse_edge), 0), dims[2] - 1)
    return ix + dims[0] * (iy + dims[1] * iz)


@njit
def sort_into_cells(points, low, edge, dims, cells, starts, out):
    """
    Write the points to ``out`` in cell order (a counting sort).

    Cell c is ``out[starts[c]:starts[c + 1]]``.

    ``cells`` is (n,) int32 scratch, ``starts`` (cells + 1,) zeros on entry.
    """
    inverse_edge = 1.0 / edge
    grid_low, grid_dims = (low[0], low[1], low[2]), (dims[0], dims[1], dims[2])  # see gather
    for i in range(points.shape[0]):
        cell = _cell_index(points[i, 0], points[i, 1], points[i, 2], grid_low, inverse_edge,
                           grid_dims)
        cells[i] = cell
        starts[cell + 1] += 1
    for cell in range(starts.shape[0] - 1):
        starts[cell + 1] += starts[cell]
    for i in range(points.shape[0]):
        cell = cells[i]
        k = starts[cell]
        out[k, 0], out[k, 1], out[k, 2] = points[i, 0], points[i, 1], points[i, 2]
        starts[cell] = k + 1
    # The scatter advanced every start to the next cell's: shift back.
    for cell in range(starts.shape[0] - 1, 0, -1):
        starts[cell] = starts[cell - 1]
    starts[0] = 0


@njit
def sort_cells(points, low, edge, dims, cells, starts, out, ends, boxes, row_spans):
    """``sort_into_cells``, each cell's end (its block is then whole), box and row extent."""
    sort_into_cells(points, low, edge, dims, cells, starts, out)
    for cell in range(ends.shape[0]):
        ends[cell] = starts[cell + 1]
    fill_cell_boxes(out, starts, ends, dims, boxes, row_spans)


@njit
def grid_holds(points, starts, ends, low, edge, dims, index):
    """Whether points[index] is in its cell's kept block (not removed by the self-filter)."""
    cell = _cell_index(points[index, 0], points[index, 1], points[index, 2], low, 1.0 / edge,
                       dims)
    return starts[cell] <= index < ends[cell]


@njit
def copy_kept(points, starts, ends, out):
    """Write the kept points of every cell, in cell order, to ``out``."""
    k = 0
    for cell in range(starts.shape[0]):
        for i in range(starts[cell], ends[cell]):
            out[k, 0], out[k, 1], out[k, 2] = points[i, 0], points[i, 1], points[i, 2]
            k += 1


@njit
def _box_block(pose, box, margin, low, edge, dims, block):
    """
    Cells [first, last) per axis of the world-aligned box around the piece's box + margin.

    The world box of an oriented box has the half extents sum_j |R_ij| h_j.
    """
    for axis in range(3):
        centre = pose[axis, 3]
        half = 0.0
        for j in range(3):
            middle = 0.5 * (box[0, j] + box[1, j])
            centre += pose[axis, j] * middle
            half += abs(pose[axis, j]) * 0.5 * (box[1, j] - box[0, j])
        first = max(np.floor((centre - half - margin - low[axis]) / edge), 0.0)
        last = min(np.floor((centre + half + margin - low[axis]) / edge) + 1.0,
                   float(dims[axis]))
        block[axis, 0] = np.int64(first)
        block[axis, 1] = np.int64(max(last, first))


@njit
def _inside_block(ix, iy, iz, block):
    return block[0, 0] <= ix < block[0, 1] and block[1, 0] <= iy < block[1, 1] and \
        block[2, 0] <= iz < block[2, 1]


@njit
def _cell_reach(edge):
    """
    How far a point binned into a (distance field) cell may be from its centre: half the diagonal.

    Grown for the rounding of the binning (a point may land an ulp outside its cell).
    """
    return 0.5 * np.sqrt(3.0) * edge * (1.0 + _FIELD_ROUNDING) + _FIELD_ROUNDING


@njit
def grid_nearest(points, starts, ends, cell_boxes, row_spans, low, edge, dims, pose, box,
                 triangles, spheres, planes, radius, cylinder_radius, cylinder_half, is_cylinder,
                 centre, plane_map, hint, result, work, blocks):
    """
    Nearest grid point to the piece; ``result`` is (best distance, index) in and out.

    A ``hint`` that is a kept point (else ignored, e.g. -1) is measured first: its distance
    is the first bound.

    Blocks of cells around the piece's world box grow (one cell, then four times wider each
    time); a block reaching ``margin`` beyond the box holds every point within ``margin`` of
    the piece (the piece lies in its box), so the search ends once best <= margin or the
    block covers the grid. Each block skips the cells of the one before (``blocks``: (2, 3, 2)
    int64 scratch).
    """
    if 0 <= hint < points.shape[0] and grid_holds(points, starts, ends, low, edge, dims, hint):
        x, y, z = _local(points, hint, pose)
        distance = _core_distance(x, y, z, triangles, spheres, planes, cylinder_radius,
                                  cylinder_half, is_cylinder) - radius
        if distance < result[0]:
            result[0], result[1] = distance, hint
    block, inner = blocks[0], blocks[1]
    for axis in range(3):
        inner[axis, 0] = inner[axis, 1] = 0
    margin = edge
    while True:
        _box_block(pose, box, min(margin, result[0]), low, edge, dims, block)
        _search_block(points, starts, ends, cell_boxes, row_spans, dims, pose, box, triangles,
                      spheres, planes, radius, cylinder_radius, cylinder_half, is_cylinder, centre,
                      plane_map, block, inner, result, work)
        whole = block[0, 0] == 0 and block[1, 0] == 0 and block[2, 0] == 0 and \
            block[0, 1] == dims[0] and block[1, 1] == dims[1] and block[2, 1] == dims[2]
        if result[0] <= margin or whole:
            return
        for axis in range(3):
            inner[axis, 0], inner[axis, 1] = block[axis, 0], block[axis, 1]
        margin *= 4.0


@njit
def _search_block(points, starts, ends, cell_boxes, row_spans, dims, pose, box, triangles, spheres,
                  planes, radius, cylinder_radius, cylinder_half, is_cylinder, centre, plane_map,
                  block, inner, result, work):
    best, best_index = result[0], result[1]
    # Work is counted in locals: a store to ``work`` per point could alias ``points`` and
    # would make the compiler reload everything after it.
    visited = bounded = measured = 0
    for iz in range(block[2, 0], block[2, 1]):
        for iy in range(block[1, 0], block[1, 1]):
            row = iy + dims[1] * iz  # its cells with points are in row_spans[row]
            for ix in range(max(block[0, 0], row_spans[row, 0]),
                            min(block[0, 1], row_spans[row, 1])):
                if _inside_block(ix, iy, iz, inner):
                    continue
                cell = ix + dims[0] * (iy + dims[1] * iz)
                if starts[cell] == ends[cell]:
                    continue
                visited += 1
                # The bounds over the box of the cell's points are no larger than any of its
                # points' bounds below: a cell skipped holds no point that would be measured.
                cx, cy, cz, ex, ey, ez = local_cell_box(cell_boxes, starts[cell], pose)
                gap = box_gap_of_box(cx, cy, cz, ex, ey, ez, box)
                if gap > 0.0 and gap >= best:
                    continue
                if _facing_box_bound(cx, cy, cz, ex, ey, ez, centre, planes, plane_map) \
                        - radius >= best:
                    continue
                for i in range(starts[cell], ends[cell]):
                    bounded += 1
                    x, y, z = _local(points, i, pose)
                    if _cannot_beat(x, y, z, best, box, centre, planes, plane_map, radius):
                        continue
                    measured += 1
                    distance = _core_distance(x, y, z, triangles, spheres, planes,
                                              cylinder_radius, cylinder_half, is_cylinder,
                                              best + radius) - radius
                    if distance < best:
                        best, best_index = distance, i
    result[0], result[1] = best, best_index
    work[0] += visited
    work[1] += bounded
    work[2] += measured


@njit
def grid_remove_within(points, starts, ends, cell_boxes, row_spans, low, edge, dims, pose, box,
                       triangles, spheres, planes, radius, cylinder_radius, cylinder_half,
                       is_cylinder, centre, plane_map, padding, field_low, field_edge, field_dims,
                       field_values, work, block):
    """
    Remove the grid points at most ``padding`` from the piece; return how many.

    Only cells near the piece's box are visited, and of those the ones whose box of points
    (``cell_boxes``) may come that near: its gap to the piece's box, and the field value at its
    centre less its half diagonal (1-Lipschitz). The field value at the centre of a point's
    field cell is within ``slack`` of the point's distance; a point the field cannot decide is
    bounded by its facing face planes, then measured exactly. A removed point is overwritten by
    the last kept point of its cell, which is decided next, and the cell's block shrinks by
    one; a cell that lost points has its box measured again.
    """
    slack = _cell_reach(field_edge)
    inverse_edge = 1.0 / field_edge
    removed = visited = bounded = measured = 0  # in locals, as in _search_block
    _box_block(pose, box, padding, low, edge, dims, block)
    for iz in range(block[2, 0], block[2, 1]):
        for iy in range(block[1, 0], block[1, 1]):
            row = iy + dims[1] * iz  # its cells with points are in row_spans[row]
            for ix in range(max(block[0, 0], row_spans[row, 0]),
                            min(block[0, 1], row_spans[row, 1])):
                cell = ix + dims[0] * (iy + dims[1] * iz)
                if starts[cell] == ends[cell]:
                    continue
                visited += 1
                cx, cy, cz, ex, ey, ez = local_cell_box(cell_boxes, starts[cell], pose)
                if box_gap_of_box(cx, cy, cz, ex, ey, ez, box) > padding or \
                        _field_value(cx, cy, cz, field_low, inverse_edge, field_dims,
                                     field_values) - slack \
                        - np.sqrt(ex * ex + ey * ey + ez * ez) > padding:
                    continue  # no point of the cell is that near (NaN: not decided)
                i, before = starts[cell], ends[cell]
                while i < ends[cell]:
                    bounded += 1
                    x, y, z = _local(points, i, pose)
                    within = False
                    if _box_gap(x, y, z, box) <= padding:
                        value = _field_value(x, y, z, field_low, inverse_edge, field_dims,
                                             field_values)
                        if value + slack <= padding:
                            within = True
                        elif not value - slack > padding and _facing_bound(
                                x, y, z, centre, planes, plane_map) - radius <= padding:
                            measured += 1
                            within = _within(x, y, z, triangles, spheres, planes, radius,
                                             cylinder_radius, cylinder_half, is_cylinder,
                                             padding)
                    if within:
                        last = ends[cell] - 1
                        points[i, 0], points[i, 1], points[i, 2] = \
                            points[last, 0], points[last, 1], points[last, 2]
                        ends[cell] = last
                        removed += 1
                    else:
                        i += 1
                if starts[cell] < ends[cell] < before:
                    fill_cell_box(points, starts[cell], ends[cell], cell_boxes)
    work[0] += visited
    work[1] += bounded
    work[2] += measured
    return removed
