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
ConvexPolytope construction: valid degenerate input, rejected bad input, the vertex graph.

Degenerate point sets (a point, a segment, a polygon, duplicates, coplanar or collinear points)
are valid convex bodies. Empty, non-finite or wrongly shaped input raises ValueError naming the
problem. The adjacency (CSR) is a symmetric, loop-free, connected graph over the hull vertices,
and the vertices are exactly the extreme points of the input.
"""

from collections import deque

from gjk_ros.core import ConvexPolytope
import numpy
import pytest
from reference import ball_points
from reference import box_corners
from reference import signed_distance_reference
from reference import sphere_surface_points
import trimesh


def flat_polygon(rng, count):
    """Return coplanar points on a tilted plane, some of them interior."""
    planar = rng.uniform(-1.0, 1.0, size=(count, 2))
    return planar @ numpy.array([[0.6, 0.0, 0.8], [0.0, 1.0, 0.0]]) + [0.1, 0.2, 0.3]


POINT_SETS = {
    'point': lambda rng: numpy.array([[0.5, -0.25, 2.0]]),
    'repeated_point': lambda rng: numpy.repeat([[0.5, -0.25, 2.0]], 7, axis=0),
    'segment': lambda rng: numpy.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]),
    'collinear': lambda rng: numpy.outer(rng.uniform(-1.0, 1.0, 20), [1.0, -2.0, 0.5]),
    'triangle': lambda rng: numpy.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    'square_with_centre': lambda rng: numpy.vstack([box_corners([1.0, 1.0, 0.0]), [[0, 0, 0]]]),
    'polygon': lambda rng: flat_polygon(rng, 60),
    'duplicates': lambda rng: numpy.vstack([box_corners([1.0, 2.0, 3.0])] * 4),
    'tetrahedron': lambda rng: numpy.array(
        [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    'cube_with_face_points': lambda rng: numpy.vstack(
        [box_corners([1.0, 1.0, 1.0]), numpy.column_stack([rng.uniform(-1, 1, (30, 2)),
                                                           numpy.ones(30)])]),
    'sphere_500': lambda rng: sphere_surface_points(rng, 500),
    'ball_2000': lambda rng: ball_points(rng, 2000),
    'needle': lambda rng: numpy.column_stack([numpy.linspace(-1.0, 1.0, 40),
                                              1e-7 * rng.standard_normal((40, 2))]),
}


@pytest.mark.parametrize('name', list(POINT_SETS))
def test_vertices_are_the_extreme_points_of_the_input(name):
    rng = numpy.random.default_rng(len(name))
    points = POINT_SETS[name](rng)
    body = ConvexPolytope.from_points(points)
    vertices = body.vertices
    assert vertices.shape == (body.num_vertices, 3)
    assert vertices.dtype == numpy.float64
    scale = float(numpy.max(numpy.abs(points)))
    # Every vertex is an input point and every input point lies in the hull of the vertices.
    gaps = numpy.linalg.norm(vertices[:, None, :] - points[None, :, :], axis=2).min(axis=1)
    assert numpy.all(gaps <= 1e-15 * scale)
    assert len(numpy.unique(vertices, axis=0)) == len(vertices)
    for point in points[:: max(1, len(points) // 50)]:
        outside = signed_distance_reference([point], vertices).distance
        assert outside <= 1e-12 * scale


@pytest.mark.parametrize('name, count', [
    ('point', 1), ('repeated_point', 1), ('segment', 2), ('collinear', 2), ('triangle', 3),
    ('square_with_centre', 4), ('duplicates', 8), ('tetrahedron', 4),
    ('cube_with_face_points', 8),
])
def test_vertex_counts_of_degenerate_and_simple_sets(name, count):
    rng = numpy.random.default_rng(len(name))
    assert ConvexPolytope.from_points(POINT_SETS[name](rng)).num_vertices == count


def neighbours(body, vertex):
    """Return the neighbours of a vertex from the CSR arrays."""
    offsets = body.neighbor_offsets
    return body.neighbor_indices[offsets[vertex]:offsets[vertex + 1]]


def assert_valid_graph(body):
    """Check the CSR adjacency: shapes, ranges, symmetry, no loops or repeats, connected."""
    offsets, indices = body.neighbor_offsets, body.neighbor_indices
    count = body.num_vertices
    assert offsets.dtype == numpy.int32 and indices.dtype == numpy.int32
    assert offsets.shape == (count + 1,)
    assert offsets[0] == 0 and offsets[-1] == len(indices)
    assert numpy.all(numpy.diff(offsets) >= 0)
    assert numpy.all((indices >= 0) & (indices < count))
    edges = set()
    for vertex in range(count):
        around = neighbours(body, vertex).tolist()
        assert vertex not in around, f'self loop at {vertex}'
        assert len(set(around)) == len(around), f'repeated neighbour at {vertex}'
        edges.update((vertex, other) for other in around)
    assert all((other, vertex) in edges for vertex, other in edges), 'not symmetric'
    reached = {0}
    queue = deque([0])
    while queue:
        for other in neighbours(body, queue.popleft()).tolist():
            if other not in reached:
                reached.add(other)
                queue.append(other)
    assert len(reached) == count, 'not connected'


@pytest.mark.parametrize('name', list(POINT_SETS))
def test_adjacency_is_a_symmetric_connected_graph(name):
    rng = numpy.random.default_rng(len(name))
    assert_valid_graph(ConvexPolytope.from_points(POINT_SETS[name](rng)))


@pytest.mark.parametrize('body', [
    ConvexPolytope.box([0.5, 0.2, 0.1]),
    ConvexPolytope.sphere(0.3),
    ConvexPolytope.capsule(0.2, 1.0),
    ConvexPolytope.cylinder(0.2, 1.0),
], ids=['box', 'sphere', 'capsule', 'cylinder'])
def test_primitive_graphs_are_valid(body):
    assert_valid_graph(body)


def test_solid_hull_vertices_have_at_least_three_neighbours():
    rng = numpy.random.default_rng(51)
    body = ConvexPolytope.from_points(sphere_surface_points(rng, 300))
    assert numpy.all(numpy.diff(body.neighbor_offsets) >= 3)
    # Euler: a triangulated sphere has 3V - 6 edges, so 6V - 12 directed ones.
    assert len(body.neighbor_indices) == 6 * body.num_vertices - 12


def test_primitives_have_their_defining_points_and_radii():
    box = ConvexPolytope.box([0.5, 0.25, 0.125])
    assert box.kind == 'polytope' and box.radius == 0.0
    assert sorted(map(tuple, box.vertices)) == sorted(map(tuple, box_corners([0.5, 0.25, 0.125])))
    sphere = ConvexPolytope.sphere(0.3)
    assert sphere.radius == 0.3 and sphere.num_vertices == 1
    numpy.testing.assert_array_equal(sphere.vertices, [[0.0, 0.0, 0.0]])
    capsule = ConvexPolytope.capsule(0.2, 1.0)
    assert capsule.radius == 0.2
    assert sorted(map(tuple, capsule.vertices)) == [(0.0, 0.0, -0.5), (0.0, 0.0, 0.5)]
    cylinder = ConvexPolytope.cylinder(0.2, 1.0)
    assert cylinder.kind == 'cylinder' and cylinder.radius == 0.0
    assert sorted(map(tuple, cylinder.vertices)) == [(0.0, 0.0, -0.5), (0.0, 0.0, 0.5)]


@pytest.mark.parametrize('body, points', [
    (ConvexPolytope.box([0.5, 0.2, 0.1]), box_corners([0.5, 0.2, 0.1])),
    (ConvexPolytope.from_points(sphere_surface_points(numpy.random.default_rng(52), 100) + 3.0,
                                radius=0.25),
     sphere_surface_points(numpy.random.default_rng(52), 100) * 1.25 + 3.0),
    (ConvexPolytope.capsule(0.2, 1.0), [[0.0, 0.2, 0.5], [0.0, 0.0, -0.7], [0.2, 0.0, 0.0]]),
    (ConvexPolytope.cylinder(0.2, 1.0),
     [[0.2 * numpy.cos(t), 0.2 * numpy.sin(t), z] for t in numpy.linspace(0, 6.3, 20)
      for z in (-0.5, 0.5)]),
], ids=['box', 'swept_hull', 'capsule', 'cylinder'])
def test_bounding_sphere_encloses_the_body(body, points):
    distances = numpy.linalg.norm(numpy.asarray(points) - body.bounding_center, axis=1)
    assert numpy.all(distances <= body.bounding_radius * (1.0 + 1e-12))
    assert body.bounding_center.shape == (3,)


def test_from_trimesh_takes_the_hull_of_the_mesh_vertices():
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
    body = ConvexPolytope.from_trimesh(mesh, radius=0.1)
    assert body.num_vertices == len(mesh.vertices)
    assert body.radius == 0.1
    with pytest.raises(ValueError, match='mesh'):
        ConvexPolytope.from_trimesh(object())


def test_bodies_are_immutable():
    body = ConvexPolytope.from_points(box_corners([1.0, 1.0, 1.0]))
    for array in (body.vertices, body.neighbor_offsets, body.neighbor_indices):
        with pytest.raises(ValueError):
            array[0] = 0


def test_input_array_is_copied():
    points = box_corners([1.0, 1.0, 1.0])
    body = ConvexPolytope.from_points(points)
    points[:] = 0.0
    assert numpy.max(numpy.abs(body.vertices)) == 1.0


@pytest.mark.parametrize('points, message', [
    (numpy.zeros((0, 3)), 'empty'),
    ([], 'empty|shape'),
    ([[0.0, 0.0, numpy.nan], [1.0, 0.0, 0.0]], 'NaN'),
    ([[0.0, 0.0, numpy.inf], [1.0, 0.0, 0.0]], 'infinite'),
    ([[0.0, 0.0, -numpy.inf]], 'infinite'),
    (numpy.zeros((4, 2)), 'shape'),
    (numpy.zeros((4, 4)), 'shape'),
    (numpy.zeros((2, 4, 3)), 'shape'),
    ([[0.0, 0.0, 'a']], 'number'),
])
def test_bad_point_sets_are_rejected_with_a_reason(points, message):
    with pytest.raises(ValueError, match=message):
        ConvexPolytope.from_points(points)


@pytest.mark.parametrize('build', [
    lambda: ConvexPolytope.from_points([[0.0, 0.0, 0.0]], radius=-0.1),
    lambda: ConvexPolytope.from_points([[0.0, 0.0, 0.0]], radius=numpy.nan),
    lambda: ConvexPolytope.sphere(-1.0),
    lambda: ConvexPolytope.sphere(numpy.inf),
    lambda: ConvexPolytope.box([1.0, 1.0]),
    lambda: ConvexPolytope.box([1.0, -1.0, 1.0]),
    lambda: ConvexPolytope.box([1.0, numpy.nan, 1.0]),
    lambda: ConvexPolytope.capsule(0.1, -1.0),
    lambda: ConvexPolytope.cylinder(-0.1, 1.0),
    lambda: ConvexPolytope.cylinder(0.1, numpy.inf),
], ids=['negative_radius', 'nan_radius', 'negative_sphere', 'infinite_sphere', 'short_box',
        'negative_box', 'nan_box', 'negative_capsule', 'negative_cylinder',
        'infinite_cylinder'])
def test_bad_sizes_are_rejected(build):
    with pytest.raises(ValueError):
        build()


def test_support_rejects_a_zero_direction():
    with pytest.raises(ValueError, match='direction'):
        ConvexPolytope.box([1.0, 1.0, 1.0]).support([0.0, 0.0, 0.0])


def test_pickled_copy_is_the_same_shape_under_its_own_key():
    """The node's worker process sends polytopes by pickle: a copy must never share a key."""
    import pickle
    rng = numpy.random.default_rng(11)
    for shape in (ConvexPolytope.from_points(rng.normal(size=(40, 3))),
                  ConvexPolytope.sphere(0.2), ConvexPolytope.box([0.1, 0.2, 0.3])):
        copy = pickle.loads(pickle.dumps(shape))
        assert copy._key != shape._key
        assert numpy.array_equal(copy.vertices, shape.vertices)
        assert numpy.array_equal(copy.neighbor_indices, shape.neighbor_indices)
        assert copy.radius == shape.radius and copy.kind == shape.kind
