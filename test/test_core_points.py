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

"""Point distances to convex pieces against GJK/EPA on a one-point polytope (seeded scenes)."""

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import CloudGatherer, PointGrid
from gjk_ros.core.rigid import quaternion_matrix
from hypothesis import given, settings, strategies as st
import numpy
import pytest

TOLERANCE = 1e-9
POINT = ConvexPolytope.from_points(numpy.zeros((1, 3)))


def shapes(rng):
    """One shape of every kind the kernel branches on, including the flat and degenerate."""
    flat = numpy.c_[rng.normal(size=(7, 2)), numpy.zeros(7)]
    return {
        'box': ConvexPolytope.box([0.1, 0.2, 0.05]),
        'hull': ConvexPolytope.from_points(rng.normal(size=(40, 3)) * 0.2),
        'swept hull': ConvexPolytope.from_points(rng.normal(size=(12, 3)) * 0.1, radius=0.03),
        'sphere': ConvexPolytope.sphere(0.07),
        'capsule': ConvexPolytope.capsule(0.04, 0.3),
        'cylinder': ConvexPolytope.cylinder(0.05, 0.2),
        'flat': ConvexPolytope.from_points(flat * 0.2),
        'segment': ConvexPolytope.from_points([[0.0, 0.0, -0.1], [0.0, 0.0, 0.2]]),
        'point': POINT,
    }


def reference(shape, pose, point):
    """Signed distance from the core's GJK/EPA between the piece and a one-point polytope."""
    place = numpy.eye(4)
    place[:3, 3] = point
    return signed_distance(shape, pose, POINT, place).distance


def random_pose(rng):
    pose = numpy.eye(4)
    quaternion = rng.normal(size=4)
    pose[:3, :3] = quaternion_matrix(*(quaternion / numpy.linalg.norm(quaternion)))
    pose[:3, 3] = rng.normal(size=3) * 0.3
    return pose


@pytest.mark.parametrize('seed', range(6))
def test_point_distances_match_gjk_epa(seed):
    rng = numpy.random.default_rng(seed)
    for name, shape in shapes(rng).items():
        pose = random_pose(rng)
        # Points around the piece: many inside its bounding sphere, some far away.
        centre = pose[:3, :3] @ shape.bounding_center + pose[:3, 3]
        points = centre + rng.normal(size=(60, 3)) * shape.bounding_radius * 0.8
        points[:5] = centre + rng.normal(size=(5, 3)) * 5.0
        got = PointDistanceShape(shape).signed_distances(points, pose)
        want = numpy.array([reference(shape, pose, point) for point in points])
        assert numpy.abs(got - want).max() <= TOLERANCE, name


def test_touching_and_inside_a_box():
    box = PointDistanceShape(ConvexPolytope.box([0.1, 0.1, 0.1]))
    points = numpy.array([[0.1, 0.0, 0.0], [0.0, 0.0, 0.0], [0.05, 0.0, 0.0],
                          [0.2, 0.2, 0.1], [0.1, 0.1, 0.1]])
    got = box.signed_distances(points, numpy.eye(4))
    numpy.testing.assert_allclose(got, [0.0, -0.1, -0.05, numpy.hypot(0.1, 0.1), 0.0],
                                  atol=1e-15)


def test_indices_select_points():
    sphere = PointDistanceShape(ConvexPolytope.sphere(1.0))
    points = numpy.array([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.5]])
    got = sphere.signed_distances(points, numpy.eye(4), numpy.array([2, 0]))
    numpy.testing.assert_allclose(got, [-0.5, 1.0], atol=1e-15)


@pytest.mark.parametrize('seed', range(4))
def test_within_matches_brute_force(seed):
    """The pruned within test agrees with measuring every point."""
    rng = numpy.random.default_rng(100 + seed)
    for name, shape in shapes(rng).items():
        prepared, pose = PointDistanceShape(shape), random_pose(rng)
        centre = pose[:3, :3] @ shape.bounding_center + pose[:3, 3]
        points = centre + rng.normal(size=(400, 3)) * (shape.bounding_radius + 0.05)
        everything = numpy.arange(len(points))
        exact = prepared.signed_distances(points, pose)
        for padding in (0.0, 0.01, 0.05):
            numpy.testing.assert_array_equal(prepared.within(points, pose, everything, padding),
                                             exact <= padding, err_msg=name)


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('cell', [0.01, 0.05, 1.0])
def test_grid_nearest_matches_brute_force(seed, cell):
    """Grid search over clustered and spread points, any cell size, with and without a hint."""
    rng = numpy.random.default_rng(200 + seed)
    spread = rng.normal(size=(300, 3)) * 2.0
    wall = numpy.c_[numpy.full(300, 0.7), rng.uniform(-1.0, 1.0, (300, 2))]
    points = numpy.vstack([spread, wall])
    grid = PointGrid(points, cell=cell)
    assert same_rows(grid.points, points)
    for name, shape in shapes(rng).items():
        prepared, pose = PointDistanceShape(shape), random_pose(rng)
        exact = prepared.signed_distances(grid.points, pose)
        for hint in (None, int(rng.integers(len(points)))):
            distance, index = grid.nearest(prepared, pose, hint)[:2]
            assert distance == exact.min() and exact[index] == distance, name


def same_rows(got, want):
    """Whether two point arrays hold the same rows, in any order."""
    def rows(points):
        return points[numpy.lexsort(points.T[::-1])]
    return got.shape == want.shape and numpy.array_equal(rows(got), rows(want))


def test_grid_stores_each_cells_points_together():
    """Cell c holds points[starts[c]:ends[c]], each in its cell, before and after a filter."""
    rng = numpy.random.default_rng(7)
    points = rng.normal(size=(500, 3))
    grid = PointGrid(points, cell=0.3)
    assert grid.starts[0] == 0 and grid.ends[-1] == len(points)
    numpy.testing.assert_array_equal(grid.starts[1:], grid.ends[:-1])
    assert_cells_hold_their_points(grid)
    ball = PointDistanceShape(ConvexPolytope.sphere(0.8))
    removed = grid.remove_near([(ball, numpy.eye(4))], 0.1)
    near = numpy.linalg.norm(points, axis=1) <= 0.9
    assert removed == int(near.sum()) > 0 and len(grid) == len(points) - removed
    assert same_rows(grid.kept(), points[~near])
    assert_cells_hold_their_points(grid)
    held = [index for index in range(len(points)) if grid.holds(index)]
    assert same_rows(grid.points[held], points[~near])
    assert not grid.holds(-1) and not grid.holds(len(points))


def assert_cells_hold_their_points(grid):
    blocks = [numpy.arange(first, last) for first, last in zip(grid.starts, grid.ends)]
    owner = numpy.repeat(numpy.arange(len(grid.starts)), grid.ends - grid.starts)
    cells = numpy.floor((grid.points[numpy.concatenate(blocks)] - grid.low)
                        * (1.0 / grid.edge)).astype(numpy.int64)
    cells = numpy.minimum(cells, grid.dims - 1)
    flat = cells[:, 0] + grid.dims[0] * (cells[:, 1] + grid.dims[1] * cells[:, 2])
    numpy.testing.assert_array_equal(flat, owner)


def test_grid_of_one_point_and_a_capped_grid():
    one = PointGrid(numpy.array([[1.0, 2.0, 3.0]]))
    box = PointDistanceShape(ConvexPolytope.box([0.5, 0.5, 0.5]))
    gap = numpy.sqrt(0.5 ** 2 + 1.5 ** 2 + 2.5 ** 2)
    assert one.nearest(box, numpy.eye(4))[:2] == (pytest.approx(gap, abs=1e-15), 0)
    far = numpy.array([[0.0, 0.0, 0.0], [1000.0, 1000.0, 1000.0], [0.3, 0.0, 0.0]])
    capped = PointGrid(far, cell=0.01, max_cells=1000)
    assert int(numpy.prod(capped.dims)) <= 1000
    assert capped.nearest(box, numpy.eye(4))[:2] == (-0.5, 0)


def reference_gather(xyz, transform, ranges, heights, voxel):
    """Run the cloud pipeline's first pass one numpy step at a time (no fusion, no hash)."""
    xyz = xyz.astype(numpy.float64)
    finite = numpy.isfinite(xyz).all(axis=1)
    with numpy.errstate(invalid='ignore', over='ignore'):
        squared = (xyz ** 2).sum(axis=1)  # ranges compare squared
        keep = finite & (squared >= ranges[0] ** 2) & (squared <= ranges[1] ** 2) & \
            numpy.isfinite(squared)
    world = xyz[keep] @ transform[:3, :3].T + transform[:3, 3]
    world = world[(world[:, 2] >= heights[0]) & (world[:, 2] <= heights[1])]
    if voxel > 0.0:
        _, first = numpy.unique(numpy.floor(world / voxel).astype(numpy.int64), axis=0,
                                return_index=True)
        world = world[numpy.sort(first)]
    return world


def packed_columns(xyz, dtype, pad_before, pad_after):
    """x, y, z as strided views of a record with padding fields, as a PointCloud2 holds them."""
    size = numpy.dtype(dtype).itemsize
    record = numpy.dtype({'names': ['x', 'y', 'z'], 'formats': [dtype] * 3,
                          'offsets': [pad_before, pad_before + size, pad_before + 2 * size],
                          'itemsize': pad_before + 3 * size + pad_after})
    data = numpy.zeros(len(xyz), dtype=record)
    data['x'], data['y'], data['z'] = xyz.T
    return data['x'], data['y'], data['z']


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), dtype=st.sampled_from(['<f4', '<f8']),
       pad=st.sampled_from([(0, 0), (0, 4), (8, 4), (16, 16)]),
       voxel=st.sampled_from([0.0, 0.05, 0.3]), count=st.integers(0, 400),
       organized=st.booleans())
def test_gather_matches_the_step_by_step_pipeline(seed, dtype, pad, voxel, count, organized):
    """Skips, limits, placement and voxels of the fused pass, any field layout."""
    rng = numpy.random.default_rng(seed)
    xyz = rng.normal(size=(count, 3)) * 2.0
    bad = rng.random(count) < 0.1
    junk = rng.choice([numpy.nan, numpy.inf, -numpy.inf], int(bad.sum()))
    xyz[bad, rng.integers(0, 3, int(bad.sum()))] = junk
    if organized:  # a depth image's rows of NaN (no return) between valid ones
        xyz[::7] = numpy.nan
    xyz = xyz.astype(dtype).astype(numpy.float64)
    transform = random_pose(rng)
    ranges = (float(rng.uniform(0.0, 1.0)), float(rng.choice([numpy.inf, 3.0])))
    heights = (float(rng.choice([-numpy.inf, -0.5])), float(rng.choice([numpy.inf, 1.0])))
    got, bounds = CloudGatherer().gather(*packed_columns(xyz, dtype, *pad), transform, ranges,
                                         heights, voxel)
    want = reference_gather(xyz, transform, ranges, heights, voxel)
    assert got.shape == want.shape
    numpy.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    if len(got):  # the bounds are those of the points returned, bit for bit
        numpy.testing.assert_array_equal(bounds, [got.min(axis=0), got.max(axis=0)])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), padding=st.sampled_from([0.0, 0.02, 0.1]),
       cell=st.sampled_from([0.02, 0.05, 0.5]))
def test_self_filter_and_nearest_match_brute_force(seed, padding, cell):
    """Every piece kind: the filtered set and each piece's nearest kept point are exact."""
    rng = numpy.random.default_rng(seed)
    pieces = [(PointDistanceShape(shape), random_pose(rng)) for shape in shapes(rng).values()]
    # Points on and around the pieces (the robot seen by its camera) and a wall behind.
    near = numpy.vstack([pose[:3, 3] + rng.normal(size=(80, 3)) * 0.15 for _, pose in pieces])
    wall = numpy.c_[numpy.full(300, 0.8), rng.uniform(-1.0, 1.0, (300, 2))]
    points = numpy.vstack([near, wall])
    table = numpy.array([shape.signed_distances(points, pose) for shape, pose in pieces])
    kept = (table > padding).all(axis=0)
    grid = PointGrid(points, cell=cell)
    removed = grid.remove_near(pieces, padding)
    assert removed == int((~kept).sum())
    assert same_rows(grid.kept(), points[kept]) and len(grid) == int(kept.sum())
    for row, (shape, pose) in enumerate(pieces):
        distance, index = grid.nearest(shape, pose)[:2]
        if not kept.any():
            assert (distance, index) == (numpy.inf, -1)
            continue
        assert distance == table[row, kept].min()
        assert shape.signed_distances(grid.points, pose, numpy.array([index]))[0] == distance
        # A hint (the last answer, or any kept point) changes nothing; an index past the kept
        # points is never used as one.
        assert grid.nearest(shape, pose, hint=index)[:2] == (distance, index)
        assert grid.nearest(shape, pose, hint=len(grid) - 1)[0] == distance
        assert grid.nearest(shape, pose, hint=len(points))[0] == distance
