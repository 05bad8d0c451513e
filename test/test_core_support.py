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
Support mappings: hill climbing on the vertex graph finds what a scan of every vertex finds.

Hill climbing (Cameron 1997 section 3.2) may return another vertex than the scan where several
tie (plateaus: box faces, coplanar cap vertices, lattice points), but never a smaller support
value, from any start vertex and for any direction. Whole queries with and without hill
climbing give the same distance.
"""

from gjk_ros.core import ConvexPolytope
from gjk_ros.core import signed_distance
from gjk_ros.core.polytope import seed_order
from gjk_ros.core.support import SEED_DIRECTIONS, support_hill_climb
import numpy
import pytest
from reference import ball_points
from reference import box_corners
from reference import make_pose
from reference import random_rotation
from reference import sphere_surface_points


def lattice_points(radius):
    """Return the integer points in a ball: a hull with many coplanar faces and ties."""
    span = numpy.arange(-radius, radius + 1)
    grid = numpy.array(numpy.meshgrid(span, span, span, indexing='ij')).reshape(3, -1).T
    return grid[numpy.linalg.norm(grid, axis=1) <= radius].astype(float)


def climb(body, direction, start):
    """
    Hill-climb on one body's own arrays; return (vertex index, edges walked).

    The kernel takes flat scene arrays with per-body row offsets; a lone body starts at 0.
    """
    return support_hill_climb(body.vertices, body.neighbor_offsets, body.neighbor_indices,
                              0, 0, 0, *direction, int(start))


def plateau_directions(rng):
    """Return directions along which many vertices tie, and slight tilts of them."""
    axes = numpy.vstack([numpy.eye(3), -numpy.eye(3)])
    diagonals = box_corners([1.0, 1.0, 1.0])
    edges = numpy.array([[1.0, 1.0, 0.0], [0.0, -1.0, 1.0], [1.0, 0.0, -1.0]])
    exact = numpy.vstack([axes, diagonals, edges])
    tilted = exact + 1e-12 * rng.standard_normal(exact.shape)
    return numpy.vstack([exact, tilted])


BODIES = {
    'sphere_16': lambda rng: sphere_surface_points(rng, 16),
    'sphere_200': lambda rng: sphere_surface_points(rng, 200),
    'sphere_2000': lambda rng: sphere_surface_points(rng, 2000),
    'ball_1000': lambda rng: ball_points(rng, 1000),
    'box': lambda rng: box_corners([0.5, 0.3, 0.2]),
    'regular_prism_64': lambda rng: regular_prism(64),
    'lattice_4': lambda rng: lattice_points(4),
    'polygon': lambda rng: numpy.column_stack([rng.uniform(-1, 1, (50, 2)), numpy.zeros(50)]),
    'segment': lambda rng: numpy.array([[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]]),
    'point': lambda rng: numpy.array([[0.3, 0.2, 0.1]]),
}


def regular_prism(sides):
    """Return a prism whose caps are exactly coplanar regular polygons (a plateau each)."""
    angles = 2.0 * numpy.pi * numpy.arange(sides) / sides
    ring = numpy.column_stack([numpy.cos(angles), numpy.sin(angles)])
    return numpy.vstack([numpy.column_stack([ring, numpy.full(sides, z)]) for z in (-0.5, 0.5)])


@pytest.mark.parametrize('name', list(BODIES))
def test_hill_climbing_reaches_the_support_value_from_every_start(name):
    rng = numpy.random.default_rng(len(name))
    body = ConvexPolytope.from_points(BODIES[name](rng))
    vertices = body.vertices
    directions = numpy.vstack([sphere_surface_points(rng, 200), plateau_directions(rng)])
    starts = rng.integers(0, len(vertices), size=len(directions))
    scale = float(numpy.max(numpy.abs(vertices)))
    for direction, start in zip(directions, starts):
        index, steps = climb(body, direction, start)
        best = float(numpy.max(vertices @ direction))
        assert float(vertices[index] @ direction) >= best - 1e-14 * scale, (direction, start)
        assert 0 <= steps < len(vertices)


@pytest.mark.parametrize('name', ['sphere_200', 'box', 'regular_prism_64', 'lattice_4'])
def test_hill_climbing_from_the_support_vertex_does_not_move(name):
    rng = numpy.random.default_rng(len(name) + 1)
    body = ConvexPolytope.from_points(BODIES[name](rng))
    vertices = body.vertices
    for direction in numpy.vstack([sphere_surface_points(rng, 50), plateau_directions(rng)]):
        start = int(numpy.argmax(vertices @ direction))
        index, steps = climb(body, direction, start)
        assert (index, steps) == (start, 0)


@pytest.mark.parametrize('name', list(BODIES))
def test_brute_force_support_point_maximises_the_direction(name):
    rng = numpy.random.default_rng(len(name) + 2)
    points = BODIES[name](rng)
    radius = 0.1
    body = ConvexPolytope.from_points(points, radius=radius)
    for direction in numpy.vstack([sphere_surface_points(rng, 100), plateau_directions(rng)]):
        support = body.support(direction)
        unit = direction / numpy.linalg.norm(direction)
        expected = float(numpy.max(points @ unit)) + radius
        assert float(support @ unit) == pytest.approx(expected, abs=1e-14)


def test_cylinder_support_is_exact():
    cylinder = ConvexPolytope.cylinder(0.5, 2.0)
    rng = numpy.random.default_rng(41)
    for direction in numpy.vstack([sphere_surface_points(rng, 100), plateau_directions(rng)]):
        support = cylinder.support(direction)
        unit = direction / numpy.linalg.norm(direction)
        expected = 1.0 * abs(unit[2]) + 0.5 * numpy.hypot(unit[0], unit[1])
        assert float(support @ unit) == pytest.approx(expected, abs=1e-14)
        assert numpy.hypot(support[0], support[1]) <= 0.5 + 1e-15
        assert abs(support[2]) <= 1.0 + 1e-15


@pytest.mark.parametrize('name_a, name_b', [
    ('sphere_2000', 'sphere_200'),
    ('ball_1000', 'box'),
    ('regular_prism_64', 'lattice_4'),
    ('lattice_4', 'regular_prism_64'),
    ('sphere_200', 'polygon'),
])
def test_queries_with_and_without_hill_climbing_agree(name_a, name_b):
    rng = numpy.random.default_rng([len(name_a), len(name_b)])
    body_a = ConvexPolytope.from_points(BODIES[name_a](rng))
    body_b = ConvexPolytope.from_points(BODIES[name_b](rng) * 0.3)
    size = 2.0 * max(body_a.bounding_radius, body_b.bounding_radius)
    for trial in range(40):
        # Half of the poses are axis-aligned, where plateaus of both bodies face each other.
        rotation_a = random_rotation(rng) if trial % 2 else numpy.eye(3)
        rotation_b = random_rotation(rng) if trial % 2 else numpy.eye(3)
        pose_a = make_pose(rotation_a, rng.uniform(-1.0, 1.0, 3))
        offset = sphere_surface_points(rng, 1)[0] * rng.uniform(0.0, 1.5) * size
        if trial % 4 == 0:
            offset = numpy.array([1.0, 0.0, 0.0]) * rng.uniform(0.0, 1.5) * size
        pose_b = make_pose(rotation_b, pose_a[:3, 3] + offset)
        climbing = signed_distance(body_a, pose_a, body_b, pose_b, hill_climb=True)
        scanning = signed_distance(body_a, pose_a, body_b, pose_b, hill_climb=False)
        tolerance = 1e-9 * (size + abs(scanning.distance))
        assert climbing.distance == pytest.approx(scanning.distance, abs=tolerance), trial
        assert scanning.hill_climb_steps == 0


def test_hill_climbing_is_used_on_large_hulls():
    # A cold query on a 2000-vertex hull walks the graph; the scan never does.
    rng = numpy.random.default_rng(43)
    body = ConvexPolytope.from_points(sphere_surface_points(rng, 2000))
    pose_b = make_pose(random_rotation(rng), [3.0, 0.5, -0.2])
    climbing = signed_distance(body, make_pose(), body, pose_b, hill_climb=True)
    assert climbing.hill_climb_steps > 0


def test_seed_order_puts_directional_extremes_first_and_keeps_the_hull():
    rng = numpy.random.default_rng(44)
    points = sphere_surface_points(rng, 600)
    body = ConvexPolytope.from_points(points)
    vertices, offsets, indices = body.vertices, body.neighbor_offsets, body.neighbor_indices
    # The same vertex set, the same graph (as sets of coordinate pairs).
    assert sorted(map(tuple, vertices)) == sorted(map(tuple, points))

    def edges(v, o, i):
        return {frozenset((tuple(v[k]), tuple(v[j]))) for k in range(len(v))
                for j in i[o[k]:o[k + 1]]}
    unordered = ConvexPolytope.from_points(points[::-1])
    assert edges(vertices, offsets, indices) == edges(
        unordered.vertices, unordered.neighbor_offsets, unordered.neighbor_indices)
    # Vertex k is the extreme along seed direction k (600 points: the 26 are distinct).
    values = vertices @ SEED_DIRECTIONS.T
    assert list(values.argmax(axis=0)) == list(range(len(SEED_DIRECTIONS)))
    # Idempotent: a rebuilt (unpickled) polytope keeps the order.
    again = seed_order(vertices, offsets, indices)
    assert all(numpy.array_equal(a, b) for a, b in zip(again, (vertices, offsets, indices)))


@pytest.mark.parametrize('seed', range(5))
def test_cold_queries_climb_from_the_nearest_seed_direction(seed):
    # Cameron's hill climbing from vertex 0 walked about 40 edges on a 2048-vertex hull; from
    # the nearest of the 26 seed directions it needs a few (machine-independent: steps).
    rng = numpy.random.default_rng(seed)
    body = ConvexPolytope.from_points(sphere_surface_points(rng, 2048))
    other = ConvexPolytope.from_points(sphere_surface_points(rng, 2048))
    pose_b = make_pose(random_rotation(rng), rng.normal(size=3) * 2.0 + [3.0, 0.0, 0.0])
    cold = signed_distance(body, make_pose(), other, pose_b)
    scan = signed_distance(body, make_pose(), other, pose_b, hill_climb=False)
    assert cold.distance == pytest.approx(scan.distance, abs=1e-12)
    assert cold.hill_climb_steps <= 24
