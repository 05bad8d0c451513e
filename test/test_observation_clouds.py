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
"""A cloud's kept points after the self-filter: which indices a search may start from."""

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import PointGrid
from gjk_ros.core.point_tracking import NearestTracker, PackedShapes
import numpy
import pytest

pytest.importorskip('rclpy')

from gjk_ros.ros.inputs.sources.nearest_points import Cloud, point_near  # noqa: E402, I100


def filtered_cloud():
    """Return a cloud whose self-filter removed the points near a ball, and its kept rows."""
    rng = numpy.random.default_rng(11)
    points = rng.uniform(-1.0, 1.0, size=(400, 3))
    grid = PointGrid(points, cell=0.25)
    ball = PointDistanceShape(ConvexPolytope.sphere(0.5))
    removed = grid.remove_near([(ball, numpy.eye(4))], 0.05)
    kept = numpy.linalg.norm(points, axis=1) > 0.55
    assert removed == int((~kept).sum()) > 0
    return Cloud(NearestTracker(grid, PackedShapes([ball])), 1, removed, len(points)), \
        points[kept]


def test_point_near_returns_a_kept_point_of_the_same_cell():
    cloud, kept = filtered_cloud()
    held = {tuple(row) for row in kept}
    for position in kept[::17]:
        index = point_near(cloud, position)
        assert index is not None and tuple(cloud.points[index]) in held
        assert numpy.array_equal(cloud.points[index], position)  # itself: the nearest
    assert point_near(cloud, numpy.zeros(3)) is None  # the ball's cell lost every point
    assert point_near(cloud, numpy.full(3, 50.0)) is None  # outside the grid
