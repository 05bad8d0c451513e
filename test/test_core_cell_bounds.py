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
The cell boxes' bounds never exceed a point's, and the searches they prune stay exact.

Nasty clouds (flat slabs, lines, one point, duplicates, points on cell borders, tiny and huge
scales far from the origin) against every piece kind: the grid search, the tracker's path
(filter, anchor, track) and the self-filter equal measuring every kept point.
"""

from gjk_ros.core.cell_bounds import box_gap_of_box, fill_cell_box, local_cell_box
from gjk_ros.core.point_distance import (_box_gap, _facing_bound, _facing_box_bound,
                                         _facing_row, _local, PointDistanceShape)
from gjk_ros.core.point_grid import PointGrid
from hypothesis import given, settings, strategies as st
import numpy
from test_core_point_answers import random_pose, shapes
from test_core_point_tracking import check, moved, tracked_grid

KINDS = ('blob', 'slab', 'line', 'one point', 'duplicates', 'cell borders')


def cloud(rng, kind, scale, offset, cell):
    """Return a cloud of ``kind`` around ``offset``, about ``scale`` wide."""
    count = int(rng.integers(1, 300))
    if kind == 'slab':  # a floor: one coordinate fixed
        points = numpy.c_[rng.uniform(-1.0, 1.0, (count, 2)), numpy.zeros(count)]
        points = points[:, rng.permutation(3)]
    elif kind == 'line':
        points = rng.uniform(-1.0, 1.0, (count, 1)) * rng.normal(size=3)
    elif kind == 'one point':
        points = rng.normal(size=(1, 3))
    elif kind == 'duplicates':
        points = numpy.repeat(rng.normal(size=(max(count // 8, 1), 3)), 8, axis=0)
    elif kind == 'cell borders':  # on the lattice of the cell edge: binned by rounding
        return offset + cell * rng.integers(-6, 7, (count, 3)).astype(float)
    else:
        points = rng.normal(size=(count, 3))
    return offset + points * scale


def pieces_and_poses(rng, scale, offset):
    pieces = [PointDistanceShape(shape) for shape in shapes(rng, scale).values()]
    poses = numpy.stack([random_pose(rng, scale) for _ in pieces])
    poses[:, :3, 3] += offset
    return pieces, poses


def brute(piece, pose, kept):
    return piece.signed_distances(kept, pose).min() if len(kept) else numpy.inf


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(KINDS),
       scale=st.sampled_from([1e-4, 1e-2, 1.0, 1e3]),
       far=st.sampled_from([0.0, 1.0, 1e3]),
       cell=st.sampled_from([0.05, 0.0625, 0.5]),
       padding=st.sampled_from([0.0, 0.02]))
def test_grid_search_and_self_filter_equal_brute_force(seed, kind, scale, far, cell, padding):
    rng = numpy.random.default_rng(seed)
    offset = rng.normal(size=3) * far * scale
    points = cloud(rng, kind, scale, offset, cell * scale)
    pieces, poses = pieces_and_poses(rng, scale, offset)
    grid = PointGrid(points, cell=cell * scale)
    table = numpy.array([piece.signed_distances(points, pose)
                         for piece, pose in zip(pieces, poses)])
    kept = (table > padding * scale).all(axis=0)
    # The self-filter's share of the pieces: the rest are searched in the filtered grid.
    half = len(pieces) // 2
    dropped = grid.remove_near(list(zip(pieces[:half], poses[:half])), padding * scale)
    kept = (table[:half] > padding * scale).all(axis=0)
    assert dropped == int((~kept).sum())
    assert len(grid) == int(kept.sum())
    for piece, pose in zip(pieces, poses):
        distance, index = grid.nearest(piece, pose)[:2]
        assert distance == brute(piece, pose, points[kept])
        if index >= 0:
            assert grid.holds(index)
            assert piece.signed_distances(grid.points, pose, numpy.array([index]))[0] == \
                distance


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(KINDS),
       scale=st.sampled_from([1e-3, 1.0, 1e3]), cell=st.sampled_from([0.05, 0.0625]),
       capacity=st.sampled_from([0, 4, 64]))
def test_tracked_answers_on_nasty_clouds_equal_brute_force(seed, kind, scale, cell, capacity):
    rng = numpy.random.default_rng(seed)
    offset = rng.normal(size=3) * scale
    points = cloud(rng, kind, scale, offset, cell * scale)
    pieces, poses = pieces_and_poses(rng, scale, offset)
    tracker, _ = tracked_grid(points, pieces, poses, 0.01 * scale, margin=0.05 * scale,
                              capacity=capacity, cell=cell * scale)
    check(tracker, pieces, poses)
    for motion in (0.002, 0.05, 0.3):
        check(tracker, pieces, moved(rng, poses, motion * scale))


def box_points(rng, count, scale, far):
    """Points of one cell: a random box (some sides flat) and its corners, far or near."""
    low = rng.normal(size=3) * far
    size = rng.uniform(0.0, 1.0, 3) * scale * (rng.random(3) < 0.8)
    corners = low + size * numpy.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1]
                                        for i in range(8)])
    return numpy.vstack([corners, low + size * rng.random((count, 3))])


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), scale=st.sampled_from([1e-6, 1e-2, 1.0, 1e3]),
       far=st.sampled_from([0.0, 1.0, 1e3, 1e5]))
def test_a_cell_box_never_bounds_above_one_of_its_points(seed, scale, far):
    """Box gap and face planes over the box: at most each point's, rounding included."""
    rng = numpy.random.default_rng(seed)
    points = box_points(rng, 50, scale, far)
    boxes = numpy.empty((len(points), 6))
    fill_cell_box(points, 0, len(points), boxes)
    numpy.testing.assert_array_equal(boxes[0], numpy.r_[points.min(axis=0), points.max(axis=0)])
    for shape in shapes(rng, scale).values():
        piece = PointDistanceShape(shape)
        pose = random_pose(rng, scale)
        pose[:3, 3] += points[0] + rng.normal(size=3) * scale
        centre = local_cell_box(boxes, 0, pose)
        gap = box_gap_of_box(*centre, piece.box)
        facing = _facing_box_bound(*centre, piece.center, piece.planes, piece.plane_map)
        row = _facing_row(*centre[:3], piece.center, piece.plane_map)
        # The same planes at every point of the box (every row of the map those facing the
        # box's centre): the bound over the box is at most their value at each point.
        same = piece.plane_map if row < 0 else numpy.repeat(piece.plane_map[row][None],
                                                            len(piece.plane_map), axis=0)
        for i in range(len(points)):
            x, y, z = _local(points, i, pose)
            assert gap <= _box_gap(x, y, z, piece.box)
            if row >= 0 and _facing_row(x, y, z, piece.center, same) >= 0:
                assert facing <= _facing_bound(x, y, z, piece.center, piece.planes, same)
            elif row < 0:
                assert facing == -numpy.inf


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(KINDS),
       cell=st.sampled_from([0.05, 0.3]))
def test_row_spans_and_boxes_cover_every_kept_point(seed, kind, cell):
    """Spans are exact after the sort and still hold every cell with points after a filter."""
    rng = numpy.random.default_rng(seed)
    points = cloud(rng, kind, 1.0, numpy.zeros(3), cell)
    grid = PointGrid(points, cell=cell)
    filled = (grid.ends > grid.starts).reshape(-1, grid.dims[0])
    for row, cells in enumerate(filled):
        columns = numpy.flatnonzero(cells)
        want = (columns[0], columns[-1] + 1) if len(columns) else (0, 0)
        assert tuple(grid.row_spans[row]) == want
    pieces, poses = pieces_and_poses(rng, 1.0, numpy.zeros(3))
    grid.remove_near(list(zip(pieces, poses)), 0.05)
    filled = (grid.ends > grid.starts).reshape(-1, grid.dims[0])
    for row, cells in enumerate(filled):
        columns = numpy.flatnonzero(cells)
        assert all(grid.row_spans[row, 0] <= column < grid.row_spans[row, 1]
                   for column in columns)
    for cell in numpy.flatnonzero(grid.ends > grid.starts):
        block = grid.points[grid.starts[cell]:grid.ends[cell]]
        numpy.testing.assert_array_equal(grid.boxes[grid.starts[cell]],
                                         numpy.r_[block.min(axis=0), block.max(axis=0)])
