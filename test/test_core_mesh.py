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
Non-convex meshes in the core: winding numbers, exact convex pieces, the tracked mesh distance.

Every expected answer is independent of the core: inside is decided by a winding number written
here in numpy, distances to triangles and to pieces by the naive Minkowski-difference reference
(``reference.signed_distance_reference``), volumes by the divergence theorem.
"""

from gjk_ros.core import ConvexPolytope, MeshBody, MeshDistance, Status
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.mesh_pieces import mesh_pieces, TooManyPieces
from gjk_ros.core.winding import winding_numbers
from mbm import kitchen_mesh
import numpy
import pytest
from reference import make_pose, random_rotation, signed_distance_reference
from scipy.spatial import ConvexHull

EXACT = 1e-9


# Independent references --------------------------------------------------------------------------

def reference_winding(points, triangles):
    """Winding numbers by the solid-angle sum (Van Oosterom and Strackee), in numpy."""
    a = triangles[None, :, 0] - points[:, None]
    b = triangles[None, :, 1] - points[:, None]
    c = triangles[None, :, 2] - points[:, None]
    la, lb, lc = (numpy.linalg.norm(v, axis=2) for v in (a, b, c))
    triple = numpy.einsum('ptk,ptk->pt', a, numpy.cross(b, c))
    below = (la * lb * lc + numpy.einsum('ptk,ptk->pt', a, b) * lc
             + numpy.einsum('ptk,ptk->pt', a, c) * lb + numpy.einsum('ptk,ptk->pt', b, c) * la)
    return (2.0 * numpy.arctan2(triple, below)).sum(axis=1) / (4.0 * numpy.pi)


def mesh_volume(triangles):
    """Signed volume enclosed by triangles (divergence theorem)."""
    return float(numpy.einsum('ij,ij->i', triangles[:, 0],
                              numpy.cross(triangles[:, 1], triangles[:, 2])).sum() / 6.0)


def box_triangles(half, centre=(0.0, 0.0, 0.0)):
    """Return the 12 outward triangles of an axis-aligned box."""
    corners = numpy.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = corners * half + centre
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return numpy.array([[corners[q[0]], corners[q[i]], corners[q[i + 1]]] for q in quads
                        for i in (1, 2)])


def frame_triangles():
    """Return a closed non-convex picture frame: a square ring (genus 1) of square bars."""
    outer, inner, half_height = 0.5, 0.3, 0.1
    ring = []
    square = [(1, 1), (-1, 1), (-1, -1), (1, -1)]
    for k in range(4):
        (x0, y0), (x1, y1) = square[k], square[(k + 1) % 4]
        o0, o1 = numpy.array([x0, y0]) * outer, numpy.array([x1, y1]) * outer
        i0, i1 = numpy.array([x0, y0]) * inner, numpy.array([x1, y1]) * inner
        top = [numpy.r_[p, half_height] for p in (o0, o1, i1, i0)]
        bottom = [numpy.r_[p, -half_height] for p in (o0, o1, i1, i0)]
        ring += [[top[0], top[1], top[2]], [top[0], top[2], top[3]]]
        ring += [[bottom[0], bottom[2], bottom[1]], [bottom[0], bottom[3], bottom[2]]]
        ring += [[bottom[0], bottom[1], top[1]], [bottom[0], top[1], top[0]]]  # outer wall
        ring += [[bottom[3], top[2], bottom[2]], [bottom[3], top[3], top[2]]]  # inner wall
    return numpy.array(ring)


def wavy_sheet(count, size=1.0, seed=0):
    """Return an open height-field sheet of 2 (count - 1)^2 triangles."""
    x, y = numpy.meshgrid(numpy.linspace(-size, size, count), numpy.linspace(-size, size, count))
    z = 0.1 * size * numpy.sin(3 * x / size + seed) * numpy.cos(2 * y / size)
    grid = numpy.stack([x, y, z], -1)
    a, b = grid[:-1, :-1].reshape(-1, 3), grid[:-1, 1:].reshape(-1, 3)
    c, d = grid[1:, :-1].reshape(-1, 3), grid[1:, 1:].reshape(-1, 3)
    return numpy.concatenate([numpy.stack([a, b, d], 1), numpy.stack([a, d, c], 1)])


def world(points, pose):
    return points @ pose[:3, :3].T + pose[:3, 3]


def expected_mesh_distance(link_points, pose, found, mesh_pose):
    """Return the reference answer against a decomposition: the closest piece (surfaces >= 0)."""
    best = numpy.inf
    for piece in found.solids:
        best = min(best, signed_distance_reference(world(link_points, pose),
                                                   world(piece, mesh_pose)).distance)
    for piece in found.surfaces:
        best = min(best, max(0.0, signed_distance_reference(
            world(link_points, pose), world(piece, mesh_pose)).distance))
    return best


def triangle_distance(link_points, pose, triangles):
    """Unsigned distance of a convex link (hull of points) to a triangle soup."""
    points = world(link_points, pose)
    return min(max(0.0, signed_distance_reference(points, t).distance) for t in triangles)


# Winding numbers ---------------------------------------------------------------------------------

def test_winding_numbers_match_the_reference_inside_outside_and_inverted():
    rng = numpy.random.default_rng(1)
    triangles = frame_triangles()
    points = rng.uniform(-0.6, 0.6, size=(500, 3))
    expected = reference_winding(points, triangles)
    assert numpy.allclose(winding_numbers(points, triangles), expected, atol=1e-12)
    assert set(numpy.round(expected).astype(int)) == {0, 1}
    inverted = triangles[:, ::-1]
    assert numpy.allclose(winding_numbers(points, inverted), -expected, atol=1e-12)


# Exact pieces ------------------------------------------------------------------------------------

def vertex_parts(triangles):
    """Split a soup into parts connected through shared corner points (scipy, no core)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    _, ids = numpy.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    count = len(triangles)
    rows = numpy.repeat(numpy.arange(count), 3)
    graph = coo_matrix((numpy.ones(rows.size), (rows, count + ids.ravel())),
                       shape=(count + ids.max() + 1,) * 2)
    labels = connected_components(graph, directed=False)[1][:count]
    return [triangles[labels == label] for label in numpy.unique(labels)]


def check_solid_decomposition(triangles, found, samples=3000, seed=0):
    """
    Check that the solids' union is what the closed parts enclose (either orientation).

    Same volume (the sum of the parts', to a layer 1e-9 of the size thick over the surface)
    and the same inside points (inside when some part's winding number is +-1).
    """
    parts = vertex_parts(triangles)
    volume = sum(ConvexHull(piece, qhull_options='Qt Q12').volume for piece in found.solids)
    size = numpy.linalg.norm(numpy.ptp(triangles.reshape(-1, 3), axis=0))
    area = 0.5 * numpy.linalg.norm(numpy.cross(triangles[:, 1] - triangles[:, 0],
                                               triangles[:, 2] - triangles[:, 0]), axis=1).sum()
    assert volume == pytest.approx(sum(abs(mesh_volume(p)) for p in parts),
                                   abs=EXACT * size * area)
    rng = numpy.random.default_rng(seed)
    low, high = triangles.reshape(-1, 3).min(axis=0), triangles.reshape(-1, 3).max(axis=0)
    points = rng.uniform(low, high, size=(samples, 3))
    inside = numpy.zeros(samples, bool)
    for part in parts:
        inside |= numpy.abs(reference_winding(points, part)) > 0.5
    covered = numpy.zeros(samples, bool)
    for piece in found.solids:
        planes = ConvexHull(piece, qhull_options='Qt Q12').equations
        covered |= (points @ planes[:, :3].T + planes[:, 3] <= 1e-12 * size).all(axis=1)
    assert (inside == covered).all()


def test_a_closed_convex_mesh_is_one_solid_piece():
    found = mesh_pieces(box_triangles([0.2, 0.1, 0.3]))
    assert (len(found.solids), len(found.surfaces), found.watertight) == (1, 0, True)
    assert found.convex_parts == 1


def test_a_closed_non_convex_mesh_is_cut_into_exact_convex_cells():
    triangles = frame_triangles()
    found = mesh_pieces(triangles)
    assert found.watertight and found.surfaces == () and found.convex_parts == 0
    assert 4 <= len(found.solids) <= 8  # four bars, merged back where convex
    check_solid_decomposition(triangles, found)


def test_an_inverted_closed_mesh_gives_the_same_solid():
    triangles = frame_triangles()[:, ::-1]
    check_solid_decomposition(triangles, mesh_pieces(triangles))


def test_an_open_mesh_is_its_flat_pieces():
    sheet = wavy_sheet(6)
    found = mesh_pieces(sheet)
    assert not found.watertight and found.solids == ()
    area = 0.5 * numpy.linalg.norm(numpy.cross(sheet[:, 1] - sheet[:, 0],
                                               sheet[:, 2] - sheet[:, 0]), axis=1).sum()
    pieces_area = 0.0
    for piece in found.surfaces:
        centre = piece.mean(axis=0)
        pieces_area += 0.5 * numpy.linalg.norm(
            numpy.cross(piece[1:-1] - piece[0], piece[2:] - piece[0]), axis=1).sum() \
            if len(piece) > 3 else 0.5 * numpy.linalg.norm(
                numpy.cross(piece[1] - piece[0], piece[2] - piece[0]))
        assert numpy.isfinite(centre).all()
    assert pieces_area == pytest.approx(area, rel=EXACT)


def test_coplanar_triangles_of_an_open_mesh_merge_into_convex_polygons():
    # A box with its top removed: five rectangles, each from two triangles.
    open_box = box_triangles([0.1, 0.1, 0.1])
    open_box = open_box[numpy.abs(open_box[:, :, 2].mean(axis=1) - 0.1) > 1e-12]
    found = mesh_pieces(open_box)
    assert (found.open_parts, len(found.surfaces)) == (1, 5)


def test_a_smooth_closed_mesh_beyond_the_budget_is_refused():
    import trimesh
    sphere = trimesh.creation.uv_sphere(0.5, count=[24, 24])
    dented = sphere.vertices.copy()
    dented[:, 2] *= 1.0 + 0.3 * numpy.sin(5 * dented[:, 0])  # not convex any more
    with pytest.raises(TooManyPieces):
        mesh_pieces(dented[sphere.faces], max_pieces=8)


def test_kitchen_meshes_decompose_exactly():
    # Each door: an inverted box (the panel) and a handle; both closed, side by side.
    for name in ('cupboard_door_l', 'cupboard_door_r', 'dishwasher_door'):
        triangles = kitchen_mesh(name)
        found = mesh_pieces(triangles)
        assert found.watertight
        check_solid_decomposition(triangles, found, samples=1500)
    counter = mesh_pieces(kitchen_mesh('kitchen_counter'))
    assert (counter.closed_parts, counter.open_parts) == (2, 1)
    cupboard = mesh_pieces(kitchen_mesh('cupboard'))
    assert not cupboard.watertight  # its large part has a rectangular hole (two triangles)


# The tracked mesh distance -----------------------------------------------------------------------

LINK = numpy.array([[x, y, z] for x in (-0.05, 0.05) for y in (-0.03, 0.03)
                    for z in (-0.1, 0.1)])


def trajectory(rng, steps, start, step=0.004, spin=0.02):
    pose = make_pose(random_rotation(rng), start)
    for _ in range(steps):
        yield pose
        turn = make_pose(random_rotation(rng, spin))
        pose = pose @ turn
        pose[:3, 3] += rng.normal(size=3) * step


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_tracked_distance_to_an_open_sheet_is_the_exact_triangle_distance(seed):
    rng = numpy.random.default_rng(seed)
    sheet = wavy_sheet(12)
    mesh = MeshBody.from_triangles(sheet)
    link = ConvexPolytope.from_points(LINK)
    query = MeshDistance(link, mesh)
    mesh_pose = make_pose(random_rotation(rng), rng.normal(size=3) * 0.1)
    triangles = world(sheet.reshape(-1, 3), mesh_pose).reshape(-1, 3, 3)
    crossing = 0
    for pose in trajectory(rng, 40, world(numpy.array([[0.0, 0.0, 0.25]]), mesh_pose)[0]):
        distance = query(pose, mesh_pose)
        expected = triangle_distance(LINK, pose, triangles)
        assert distance == pytest.approx(expected, abs=EXACT * mesh.size)
        result = query.result()
        assert result.distance == distance
        if expected == 0.0:
            crossing += 1
            assert result.status == Status.TOUCHING
        else:
            gap = result.witness_b - result.witness_a
            assert numpy.allclose(gap, distance * result.normal, atol=EXACT)
    assert query.stats[1] < 40  # the list was reused


def test_tracked_distance_to_a_closed_non_convex_mesh_is_signed():
    rng = numpy.random.default_rng(3)
    triangles = frame_triangles()
    mesh = MeshBody.from_mesh(triangles)
    found = mesh.decomposition
    small = LINK * 0.3
    link = ConvexPolytope.from_points(small)
    query = MeshDistance(link, mesh)
    mesh_pose = make_pose(random_rotation(rng), [0.1, -0.2, 0.3])
    world_triangles = world(triangles.reshape(-1, 3), mesh_pose).reshape(-1, 3, 3)
    signs = set()
    # Through the bar at x = 0.4 (inside), across the hole (outside) and out again.
    for x in numpy.linspace(-0.7, 0.7, 57):
        pose = mesh_pose @ make_pose(random_rotation(rng, 0.3), [x, 0.02, 0.01])
        distance = query(pose, mesh_pose)
        expected = expected_mesh_distance(small, pose, found, mesh_pose)
        assert distance == pytest.approx(expected, abs=EXACT * mesh.size)
        centre = pose[:3, 3][None]
        inside = abs(reference_winding(centre, world_triangles)[0]) > 0.5
        if inside:
            assert distance < 0.0
        elif distance > 0.0:
            assert distance == pytest.approx(triangle_distance(small, pose, world_triangles),
                                             abs=EXACT * mesh.size)
        signs.add(numpy.sign(distance))
    assert signs == {-1.0, 1.0}


def test_a_link_deep_inside_a_closed_mesh_is_negative():
    mesh = MeshBody.from_mesh(box_triangles([0.5, 0.5, 0.5]))
    cube = numpy.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    query = MeshDistance(ConvexPolytope.from_points(cube), mesh)
    assert query(numpy.eye(4), numpy.eye(4)) == pytest.approx(-0.6, abs=EXACT)
    assert query.result().status == Status.PENETRATING


def test_a_large_sheet_is_tracked_with_little_work():
    sheet = wavy_sheet(101)  # 20,000 triangles
    mesh = MeshBody.from_triangles(sheet)
    link = ConvexPolytope.from_points(LINK)
    query = MeshDistance(link, mesh)
    rng = numpy.random.default_rng(5)
    poses = list(trajectory(rng, 30, [0.0, 0.0, 0.3], step=0.001, spin=0.005))
    query(poses[0], numpy.eye(4))
    before = query.stats.copy()
    for pose in poses[1:]:
        query(pose, numpy.eye(4))
    work = (query.stats - before) / (len(poses) - 1)
    assert work[0] < 100  # piece queries per step, of 20,000 pieces
    distance = query(poses[-1], numpy.eye(4))
    # Only triangles that come within the answer of the link's bounding sphere can be nearest.
    centre, reach = poses[-1][:3, 3], float(numpy.linalg.norm(LINK, axis=1).max())
    near = numpy.linalg.norm(sheet - centre, axis=2).min(axis=1) <= distance + reach + 0.03
    assert distance == pytest.approx(triangle_distance(LINK, poses[-1], sheet[near]),
                                     abs=EXACT)


def test_bodypairs_count_a_crossed_surface_piece_as_touching():
    triangle = ConvexPolytope.from_points([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
    solid = ConvexPolytope.box([0.1, 0.1, 0.1])
    link = ConvexPolytope.box([0.05, 0.05, 0.05])
    engine = BodyPairs([link, triangle, solid], [[(0, 1)], [(0, 2)]], [0.0, 0.0], [0.0, 0.0],
                       unsigned=[False, True, False])
    poses = numpy.stack([make_pose(None, [0.0, 0.0, 0.01]), numpy.eye(4),
                         make_pose(None, [0.0, 0.0, 0.12])])
    rows, status = engine.update(poses)
    assert rows[0, 0] == 0.0 and status[0] == Status.TOUCHING
    assert numpy.array_equal(rows[0, 1:4], rows[0, 4:7])
    assert rows[1, 0] == pytest.approx(-0.04, abs=EXACT) and status[1] == Status.PENETRATING
