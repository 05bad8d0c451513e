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
The tracked mesh step's bounds and its call: every answer against the triangles themselves.

The expected distances are the naive Minkowski-difference reference over every triangle
(``test_core_mesh.triangle_distance``), independent of the core.
"""

from gjk_ros.core import ConvexPolytope, MeshBody, MeshDistance
from gjk_ros.core.mesh_body import _frame_gap
from hypothesis import given, settings, strategies
import numpy
import pytest
from reference import make_pose, random_rotation, signed_distance_reference
from test_core_mesh import EXACT, LINK, trajectory, triangle_distance, wavy_sheet, world


@settings(max_examples=200, deadline=None)
@given(strategies.integers(0, 2 ** 32 - 1))
def test_the_frame_gap_never_exceeds_the_signed_distance(seed):
    """The separating-axis gap of the two boxes bounds the contents' distance, and a depth."""
    rng = numpy.random.default_rng(seed)
    link = rng.normal(size=(int(rng.integers(4, 12)), 3)) * rng.uniform(0.01, 0.3, 3)
    triangle = rng.normal(size=(3, 3)) * rng.uniform(0.01, 0.3) + rng.normal(size=3) * 0.3
    pose = make_pose(random_rotation(rng), rng.normal(size=3) * 0.2)
    frame = numpy.stack([link.min(axis=0), link.max(axis=0)])
    low, high = triangle.min(axis=0)[None], triangle.max(axis=0)[None]
    bound = _frame_gap(low, high, 0, frame, pose[:3])
    exact = signed_distance_reference(world(link, pose), triangle).distance
    assert bound <= exact + 1e-12


def test_the_frame_gap_is_tight_for_a_turned_box_above_a_flat_piece():
    """A box turned about its normal: its mesh-frame box grows, its own box does not."""
    frame = numpy.array([[-0.1, -0.04, -0.06], [0.1, 0.04, 0.06]])
    pose = make_pose(None, [0.0, 0.0, 0.16])
    pose[:3, :3] = [[0.6, -0.8, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]]
    low, high = numpy.array([[0.3, 0.3, 0.0]]), numpy.array([[0.31, 0.31, 0.0]])
    gap = _frame_gap(low, high, 0, frame, pose[:3])
    # Along the box's own x axis (0.6, 0.8, 0) the piece's centre lies 0.305 * 1.4 away, and
    # the piece reaches 0.005 * 1.4 of it; the box's half length is 0.1.
    assert gap == pytest.approx(0.305 * 1.4 - 0.1 - 0.005 * 1.4, abs=1e-15)
    # The box's mesh-frame bounding box (half extents 0.092 and 0.104) is nearer.
    assert gap > numpy.hypot(0.3 - 0.092, 0.3 - 0.104) + 0.03


@pytest.mark.parametrize('margin, capacity', [(None, 64), (0.0, 1), (0.002, 4)])
def test_every_call_of_a_fast_turning_path_is_exact(margin, capacity):
    """Rebuilds, a growing list and keys summed over many calls: never a wrong answer."""
    rng = numpy.random.default_rng(7)
    sheet = wavy_sheet(14, seed=1)
    mesh = MeshBody.from_triangles(sheet)
    query = MeshDistance(ConvexPolytope.from_points(LINK), mesh, margin=margin,
                         capacity=capacity)
    mesh_pose = make_pose(random_rotation(rng), rng.normal(size=3) * 0.1)
    triangles = world(sheet.reshape(-1, 3), mesh_pose).reshape(-1, 3, 3)
    start = world(numpy.array([[0.1, -0.1, 0.2]]), mesh_pose)[0]
    for pose in trajectory(rng, 50, start, step=0.01, spin=0.3):
        distance = query(pose, mesh_pose)
        assert distance == pytest.approx(triangle_distance(LINK, pose, triangles),
                                         abs=EXACT * mesh.size)
    assert query.stats[1] >= 2  # the path left the list more than once


def test_a_pose_that_is_not_rigid_is_refused_by_name_and_others_are_converted():
    mesh = MeshBody.from_triangles(wavy_sheet(6))
    query = MeshDistance(ConvexPolytope.from_points(LINK), mesh)
    pose = make_pose(None, [0.0, 0.0, 0.3])
    expected = query(pose, numpy.eye(4))
    bad = numpy.eye(4)
    bad[0, 0] = numpy.nan
    with pytest.raises(ValueError, match='pose_mesh'):
        query(pose, bad)
    with pytest.raises(ValueError, match='pose_body'):
        query(2.0 * pose, numpy.eye(4))
    frozen = pose.copy()
    frozen.flags.writeable = False
    for same in (pose.tolist(), frozen, numpy.asfortranarray(pose)):
        assert query(same, numpy.eye(4).tolist()) == expected
    assert query.stats[0] > 0 and query.capacity >= 1


def test_the_work_per_call_is_counted_and_small_on_a_large_sheet():
    """Slots looked at per call, a machine-independent figure of the scan's cost."""
    sheet = wavy_sheet(101)  # 20,000 triangles
    query = MeshDistance(ConvexPolytope.from_points(LINK), MeshBody.from_triangles(sheet))
    rng = numpy.random.default_rng(11)
    poses = list(trajectory(rng, 60, [0.0, 0.0, 0.3], step=0.0005, spin=0.003))
    query(poses[0], numpy.eye(4))
    before = query.stats.copy()
    for pose in poses[1:]:
        query(pose, numpy.eye(4))
    queries, rebuilds, _, scanned = (query.stats - before) / (len(poses) - 1)
    assert queries < 10 and scanned < 100, (queries, scanned)


@pytest.mark.parametrize('bad', [numpy.eye(3), numpy.eye(5), numpy.zeros((4, 4)),
                                 numpy.eye(4)[None], 'pose', [[1.0]]])
def test_a_pose_of_the_wrong_shape_is_refused_before_anything_is_read(bad):
    query = MeshDistance(ConvexPolytope.from_points(LINK), MeshBody.from_triangles(wavy_sheet(4)))
    with pytest.raises(ValueError, match='pose_mesh'):
        query(make_pose(None, [0.0, 0.0, 0.3]), bad)
    with pytest.raises(RuntimeError):
        query.result()  # nothing was answered
