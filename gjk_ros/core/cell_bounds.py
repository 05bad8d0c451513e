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
The box of each grid cell's points, and the lower bounds of their distances to a piece it gives.

A grid cell (``gjk_ros.core.point_grid``) holds ``points[starts[c]:ends[c]]``; its box is the
world-aligned box of those points, stored at row ``starts[c]`` of a (n, 6) array (smallest,
then largest coordinates), so only the cells that hold points have one and the memory follows
the cloud, not the grid. A cell of floor points is a flat box, far tighter than its cube.
Each row of cells along x also keeps the span of its cells with points (a camera sees surfaces:
most cells are empty), so a search iterates no empty cell outside those spans.

In a piece's frame the box is the box around the rotated one: centre R^T (m - t), half extents
|R^T| h (an oriented box inside its axis-aligned hull). Two lower bounds of the distance of every
point in it follow, each no larger than the bound of any one of its points:

- the gap between that box and the piece's box (the piece lies in its box);
- a face plane's smallest value over the box, n.c + d - sum_i |n_i| e_i (the distance of a point
  is at least every face plane's value: the hull is on the inner side of each).

The half extents are grown by a rounding allowance relative to the coordinates, so that the
float bound of the box never exceeds the float bound of one of its points.
"""

import numpy as np

from ._jit import njit

__all__ = ['box_gap_of_box', 'fill_cell_box', 'fill_cell_boxes', 'local_cell_box']

# Relative (to the coordinates' magnitude) and absolute rounding allowance of a local cell box:
# its centre and extents take a few float64 operations, each an ulp (1e-16) of the coordinates.
_ROUNDING = 1e-9


@njit
def fill_cell_box(points, first, last, cell_boxes):
    """Write the box of points[first:last] (at least one) to cell_boxes[first]."""
    low_x = high_x = points[first, 0]
    low_y = high_y = points[first, 1]
    low_z = high_z = points[first, 2]
    for i in range(first + 1, last):
        x, y, z = points[i, 0], points[i, 1], points[i, 2]
        low_x, low_y, low_z = min(low_x, x), min(low_y, y), min(low_z, z)
        high_x, high_y, high_z = max(high_x, x), max(high_y, y), max(high_z, z)
    cell_boxes[first, 0], cell_boxes[first, 1], cell_boxes[first, 2] = low_x, low_y, low_z
    cell_boxes[first, 3], cell_boxes[first, 4], cell_boxes[first, 5] = high_x, high_y, high_z


@njit
def fill_cell_boxes(points, starts, ends, dims, cell_boxes, row_spans):
    """
    Write the box of every cell that holds points, and each row's span of such cells.

    A row is the cells along x at one (y, z): ``row_spans[y + dims_y * z]`` is the first and
    one past the last x of its cells with points ((0, 0): none), so a search skips the empty
    cells around them. A self-filter only empties cells: the spans stay true.
    """
    for row in range(dims[1] * dims[2]):
        first, last = dims[0], 0
        for ix in range(dims[0]):
            cell = ix + dims[0] * row
            if starts[cell] < ends[cell]:
                fill_cell_box(points, starts[cell], ends[cell], cell_boxes)
                first, last = min(first, ix), ix + 1
        row_spans[row, 0], row_spans[row, 1] = min(first, last), last


@njit
def local_cell_box(cell_boxes, slot, pose):
    """
    Return the centre (3) and half extents (3) of the box at ``slot`` in the piece frame.

    Every point of the box, placed in the piece frame as ``point_distance._local`` places it,
    lies within the half extents of the centre (rounding included).
    """
    hx = 0.5 * (cell_boxes[slot, 3] - cell_boxes[slot, 0])
    hy = 0.5 * (cell_boxes[slot, 4] - cell_boxes[slot, 1])
    hz = 0.5 * (cell_boxes[slot, 5] - cell_boxes[slot, 2])
    mx = 0.5 * (cell_boxes[slot, 0] + cell_boxes[slot, 3])
    my = 0.5 * (cell_boxes[slot, 1] + cell_boxes[slot, 4])
    mz = 0.5 * (cell_boxes[slot, 2] + cell_boxes[slot, 5])
    allowance = _ROUNDING * (1.0 + max(abs(mx), abs(my), abs(mz)) + hx + hy + hz
                             + max(abs(pose[0, 3]), abs(pose[1, 3]), abs(pose[2, 3])))
    dx, dy, dz = mx - pose[0, 3], my - pose[1, 3], mz - pose[2, 3]
    return (pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz,
            pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz,
            pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz,
            abs(pose[0, 0]) * hx + abs(pose[1, 0]) * hy + abs(pose[2, 0]) * hz + allowance,
            abs(pose[0, 1]) * hx + abs(pose[1, 1]) * hy + abs(pose[2, 1]) * hz + allowance,
            abs(pose[0, 2]) * hx + abs(pose[1, 2]) * hy + abs(pose[2, 2]) * hz + allowance)


@njit
def box_gap_of_box(cx, cy, cz, ex, ey, ez, box):
    """Return the distance between the box (centre, half extents) and ``box`` (low, high)."""
    gx = max(box[0, 0] - (cx + ex), 0.0, (cx - ex) - box[1, 0])
    gy = max(box[0, 1] - (cy + ey), 0.0, (cy - ey) - box[1, 1])
    gz = max(box[0, 2] - (cz + ez), 0.0, (cz - ez) - box[1, 2])
    return np.sqrt(gx * gx + gy * gy + gz * gz)
