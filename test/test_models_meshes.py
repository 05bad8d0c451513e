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

"""Mesh URIs, mesh loading, convexity and caching (gjk_ros.models.meshes)."""

import importlib.util
import os
import sys

from gjk_ros.models import meshes
from gjk_ros.models import ModelError, ResourceResolver
import numpy as np
import pytest
import trimesh

DIRECTIONS = np.vstack([np.eye(3), -np.eye(3),
                        np.random.default_rng(7).normal(size=(40, 3))])
HAVE_PYCOLLADA = importlib.util.find_spec('collada') is not None


def support_values(shape, directions=DIRECTIONS):
    return np.array([direction @ shape.support(direction) for direction in directions])


def point_support_values(points, directions=DIRECTIONS):
    return (np.asarray(points) @ directions.T).max(axis=0)


def box_mesh(size=(0.2, 0.4, 0.6), centre=(0.0, 0.0, 0.0)):
    mesh = trimesh.creation.box(size)
    mesh.apply_translation(centre)
    return mesh


def l_shape_mesh():
    """Return a closed L-shaped prism: a 1 x 1 x 0.2 slab with a 0.5 x 0.5 corner notch."""
    outline = np.array([[0, 0], [1, 0], [1, 0.5], [0.5, 0.5], [0.5, 1], [0, 1]], float)
    n = len(outline)
    vertices = np.vstack([np.column_stack([outline, np.zeros(n)]),
                          np.column_stack([outline, np.full(n, 0.2)])])
    # The L is star-shaped from its reflex corner (vertex 3), so a fan from it triangulates it.
    caps = [(3, (3 + k) % n, (4 + k) % n) for k in range(1, n - 1)]
    faces = [face[::-1] for face in caps] + [tuple(i + n for i in face) for face in caps]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, j + n), (i, j + n, i + n)]
    return trimesh.Trimesh(vertices, faces, process=False)


def write(mesh, path):
    path = str(path)
    mesh.export(path)
    return path


def test_resolve_plain_file_and_relative_paths(tmp_path):
    resolver = ResourceResolver(base_dir=str(tmp_path))
    assert resolver.resolve('/abs/mesh.stl') == '/abs/mesh.stl'
    assert resolver.resolve('meshes/a.stl') == os.path.join(str(tmp_path), 'meshes/a.stl')
    assert resolver.resolve('file:///abs/my%20mesh.stl') == '/abs/my mesh.stl'
    assert resolver.resolve('file://localhost/abs/a.stl') == '/abs/a.stl'


def test_relative_path_defaults_to_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ResourceResolver().resolve('a.stl') == os.path.join(str(tmp_path), 'a.stl')


@pytest.mark.parametrize('uri, words', [
    ('', 'empty mesh URI'),
    ('http://example.com/a.stl', "unsupported URI scheme 'http://'"),
    ('model://thing/a.stl', "unsupported URI scheme 'model://'"),
    ('file://somehost/a.stl', "host 'somehost'"),
    ('package://', 'package://<package>/<path>'),
    ('package://only_package', 'package://<package>/<path>'),
])
def test_resolve_rejects_bad_uris(uri, words):
    with pytest.raises(ModelError) as caught:
        ResourceResolver().resolve(uri)
    assert words in caught.value.reason


def test_package_override_needs_no_ament_index(tmp_path):
    resolver = ResourceResolver(package_paths={'my_robot': str(tmp_path)})
    assert resolver.resolve('package://my_robot/meshes/a.stl') == os.path.join(
        str(tmp_path), 'meshes/a.stl')


def make_ament_prefix(root, package):
    marker = root / 'share' / 'ament_index' / 'resource_index' / 'packages' / package
    marker.parent.mkdir(parents=True)
    marker.write_text('')
    share = root / 'share' / package
    (share / 'meshes').mkdir(parents=True)
    return share


def test_package_uri_through_a_fake_ament_prefix(tmp_path, monkeypatch):
    pytest.importorskip('ament_index_python')
    share = make_ament_prefix(tmp_path / 'prefix', 'fake_robot')
    write(box_mesh(), share / 'meshes' / 'box.stl')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'prefix'))
    resolver = ResourceResolver()
    assert resolver.resolve('package://fake_robot/meshes/box.stl') == str(
        share / 'meshes' / 'box.stl')
    hull, is_convex, count = resolver.load_mesh('package://fake_robot/meshes/box.stl')
    assert is_convex and count == 8
    np.testing.assert_allclose(support_values(hull),
                               point_support_values(box_mesh().vertices), atol=1e-6)


def test_unknown_package_names_the_package(tmp_path, monkeypatch):
    pytest.importorskip('ament_index_python')
    make_ament_prefix(tmp_path / 'prefix', 'fake_robot')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'prefix'))
    with pytest.raises(ModelError) as caught:
        ResourceResolver().resolve('package://other_robot/meshes/box.stl')
    assert caught.value.body == 'package://other_robot/meshes/box.stl'
    assert "package 'other_robot' not found" in caught.value.reason


def test_missing_ament_index_python_is_a_model_error(monkeypatch):
    monkeypatch.setitem(sys.modules, 'ament_index_python.packages', None)
    with pytest.raises(ModelError, match='ament_index_python is not installed'):
        ResourceResolver().resolve('package://fake_robot/meshes/box.stl')


@pytest.mark.parametrize('extension', ['stl', 'obj', 'STL'])
def test_load_mesh_formats_and_scale(tmp_path, extension):
    mesh = box_mesh(centre=(0.1, -0.2, 0.3))
    path = write(mesh, tmp_path / f'box.{extension.lower()}')
    if extension != extension.lower():
        os.rename(path, tmp_path / f'box.{extension}')
        path = str(tmp_path / f'box.{extension}')
    scale = np.array([2.0, -1.0, 0.5])
    hull, is_convex, count = ResourceResolver().load_mesh(path, scale)
    assert is_convex and count == 8
    np.testing.assert_allclose(support_values(hull),
                               point_support_values(mesh.vertices * scale), atol=1e-6)


def test_file_uri_loads_the_same_file(tmp_path):
    path = write(box_mesh(), tmp_path / 'box.stl')
    hull, _, _ = ResourceResolver().load_mesh('file://' + path)
    np.testing.assert_allclose(support_values(hull),
                               point_support_values(box_mesh().vertices), atol=1e-6)


def collada_text(vertices, faces, unit_meter, matrix):
    positions = ' '.join(f'{v:.9g}' for v in np.ravel(vertices))
    indices = ' '.join(str(i) for i in np.ravel(faces))
    unit = f'<unit name="u" meter="{unit_meter}"/>' if unit_meter is not None else ''
    return f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>{unit}<up_axis>Y_UP</up_axis></asset>
  <library_geometries>
    <geometry id="shape" name="shape"><mesh>
      <source id="shape-positions">
        <float_array id="shape-array" count="{np.size(vertices)}">{positions}</float_array>
        <technique_common>
          <accessor source="#shape-array" count="{len(vertices)}" stride="3">
            <param name="X" type="float"/><param name="Y" type="float"/>
            <param name="Z" type="float"/>
          </accessor>
        </technique_common>
      </source>
      <vertices id="shape-vertices"><input semantic="POSITION" source="#shape-positions"/>
      </vertices>
      <triangles count="{len(faces)}">
        <input semantic="VERTEX" source="#shape-vertices" offset="0"/><p>{indices}</p>
      </triangles>
    </mesh></geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="scene"><node id="part">
      <matrix>{' '.join(f'{v:.9g}' for v in np.ravel(matrix))}</matrix>
      <instance_geometry url="#shape"/>
    </node></visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
"""


@pytest.mark.skipif(not HAVE_PYCOLLADA, reason='pycollada is not installed')
def test_dae_applies_unit_and_node_transform_but_not_up_axis(tmp_path):
    # A 100 mm cube, its node moved 100 mm along x, in a file whose unit is the millimetre.
    cube = box_mesh(size=(100.0, 100.0, 100.0))
    matrix = np.eye(4)
    matrix[0, 3] = 100.0
    path = tmp_path / 'cube.dae'
    path.write_text(collada_text(cube.vertices, cube.faces, 0.001, matrix))
    hull, is_convex, count = ResourceResolver().load_mesh(str(path), (1.0, 2.0, 1.0))
    expected = (cube.vertices + [100.0, 0.0, 0.0]) * 0.001 * [1.0, 2.0, 1.0]
    assert is_convex and count == 8
    np.testing.assert_allclose(support_values(hull), point_support_values(expected),
                               atol=1e-9)


@pytest.mark.skipif(not HAVE_PYCOLLADA, reason='pycollada is not installed')
def test_dae_without_unit_is_in_metres(tmp_path):
    cube = box_mesh(size=(0.1, 0.1, 0.1))
    path = tmp_path / 'cube.dae'
    path.write_text(collada_text(cube.vertices, cube.faces, None, np.eye(4)))
    hull, _, _ = ResourceResolver().load_mesh(str(path))
    np.testing.assert_allclose(support_values(hull), point_support_values(cube.vertices),
                               atol=1e-9)


def test_dae_without_pycollada_says_so(tmp_path, monkeypatch):
    path = tmp_path / 'cube.dae'
    path.write_text(collada_text(box_mesh().vertices, box_mesh().faces, None, np.eye(4)))
    monkeypatch.setattr(meshes, '_have_pycollada', lambda: False)
    with pytest.raises(ModelError, match='needs the Python package pycollada'):
        ResourceResolver().load_mesh(str(path))


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(ModelError) as caught:
        ResourceResolver().load_mesh(str(tmp_path / 'nowhere.stl'))
    assert caught.value.body == str(tmp_path / 'nowhere.stl')
    assert 'cannot open mesh file' in caught.value.reason
    assert 'No such file' in caught.value.reason


@pytest.mark.parametrize('name, content, words', [
    ('empty.stl', b'', 'no triangles'),
    ('empty.obj', b'# nothing here\n', 'no triangles'),
    ('points_only.obj', b'v 0 0 0\nv 1 0 0\nv 0 1 0\n', 'no triangles'),
    ('garbage.stl', b'this is not a mesh ' * 20, 'no triangles'),
    ('mesh.xyz3', b'solid', "unsupported mesh format '.xyz3'"),
    ('mesh', b'solid', 'without a file extension'),
    ('point.obj', b'v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n', 'the mesh has no size'),
])
def test_unusable_mesh_files_are_rejected(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ModelError) as caught:
        ResourceResolver().load_mesh(str(path))
    assert words in caught.value.reason


def test_non_finite_vertices_are_rejected(tmp_path):
    mesh = box_mesh()
    vertices = mesh.vertices.copy()
    vertices[3] = [np.nan, 0.0, np.inf]
    with np.errstate(invalid='ignore'):   # trimesh computes face normals to write STL
        path = write(trimesh.Trimesh(vertices, mesh.faces, process=False), tmp_path / 'nan.stl')
    with pytest.raises(ModelError, match='non-finite vertex coordinates'):
        ResourceResolver().load_mesh(path)


def test_unused_non_finite_vertex_does_not_matter(tmp_path):
    path = tmp_path / 'extra.obj'
    path.write_text('v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv nan nan nan\n'
                    'f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n')
    hull, is_convex, count = ResourceResolver().load_mesh(str(path))
    assert is_convex and count == 4
    np.testing.assert_allclose(support_values(hull), point_support_values(
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]), atol=1e-12)


@pytest.mark.parametrize('scale, words', [
    ((1.0, 0.0, 1.0), 'must not be zero'),
    ((1.0, np.nan, 1.0), 'must be finite'),
    ((1.0, 1.0), 'must be 3 numbers'),
])
def test_bad_scale_is_rejected(tmp_path, scale, words):
    path = write(box_mesh(), tmp_path / 'box.stl')
    with pytest.raises(ModelError, match=words):
        ResourceResolver().load_mesh(path, scale)


def test_l_shape_is_not_convex_and_its_hull_is_used(tmp_path):
    mesh = l_shape_mesh()
    path = write(mesh, tmp_path / 'l.obj')
    info = ResourceResolver().load_mesh_info(path)
    assert not info.is_convex
    # The deepest faces are the triangles of the two notch walls: their centroids are 0.2 / 3
    # from a cap (z = 0 or 0.2), nearer than the hull's diagonal facet x + y = 1.5.
    assert info.concavity == pytest.approx(0.2 / 3.0, abs=1e-9)
    np.testing.assert_allclose(support_values(info.hull), point_support_values(mesh.vertices),
                               atol=1e-9)


@pytest.mark.parametrize('mesh', [
    trimesh.creation.icosphere(subdivisions=3, radius=0.3),
    trimesh.creation.cylinder(radius=0.05, height=0.4, sections=48),
    trimesh.creation.capsule(height=0.5, radius=0.1),
    box_mesh(size=(1e-3, 2e-3, 3e-3)),
    box_mesh(size=(30.0, 40.0, 50.0)),
], ids=['icosphere', 'cylinder', 'capsule', 'tiny box', 'large box'])
def test_convex_meshes_are_recognised_through_float32_stl(tmp_path, mesh):
    path = write(mesh, tmp_path / 'convex.stl')
    _, is_convex, count = ResourceResolver().load_mesh(path)
    assert is_convex
    assert count == len(np.unique(mesh.vertices.astype(np.float32), axis=0))


def test_open_convex_surface_is_convex(tmp_path):
    # Five faces of a box (no lid): every face is on the hull boundary.
    mesh = box_mesh(size=(1.0, 1.0, 1.0))
    lid = mesh.face_normals[:, 2] > 0.5
    open_box = trimesh.Trimesh(mesh.vertices, mesh.faces[~lid], process=False)
    _, is_convex, _ = ResourceResolver().load_mesh(write(open_box, tmp_path / 'open.stl'))
    assert is_convex


def flat_l_plate(double_sided=False):
    """Three unit squares forming an L, in a tilted plane; optionally every face twice."""
    points = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2]], float)
    faces = np.array([[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4], [3, 4, 7], [3, 7, 6]])
    if double_sided:
        faces = np.vstack([faces, faces[:, ::-1]])
    tilt = trimesh.transformations.rotation_matrix(0.7, [1.0, 2.0, 3.0])[:3, :3]
    return trimesh.Trimesh(np.column_stack([points, np.zeros(8)]) @ tilt.T, faces,
                           process=False)


@pytest.mark.parametrize('double_sided', [False, True])
def test_flat_meshes_are_judged_in_their_plane(tmp_path, double_sided):
    square = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
                             [[0, 1, 2], [0, 2, 3]] + ([[2, 1, 0], [3, 2, 0]] if double_sided
                                                       else []), process=False)
    plate = flat_l_plate(double_sided)
    resolver = ResourceResolver()
    square_info = resolver.load_mesh_info(write(square, tmp_path / 'square.obj'))
    plate_info = resolver.load_mesh_info(write(plate, tmp_path / 'plate.obj'))
    assert square_info.is_convex
    assert not plate_info.is_convex
    # The notch edges' midpoints (1.5, 1) and (1, 1.5) lie 0.5 / sqrt(2) from the hull edge
    # x + y = 3.
    assert plate_info.concavity == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-6)
    np.testing.assert_allclose(support_values(plate_info.hull),
                               point_support_values(plate.vertices), atol=1e-9)


def test_collinear_triangles_give_a_segment(tmp_path):
    path = tmp_path / 'needle.obj'
    path.write_text('v 0 0 0\nv 1 1 1\nv 2 2 2\nf 1 2 3\n')
    hull, is_convex, count = ResourceResolver().load_mesh(str(path))
    assert is_convex and count == 3
    np.testing.assert_allclose(support_values(hull),
                               point_support_values([[0, 0, 0], [2, 2, 2]]), atol=1e-12)


def test_hulls_are_cached_by_path_and_scale(tmp_path):
    path = write(box_mesh(), tmp_path / 'box.stl')
    resolver = ResourceResolver()
    first = resolver.load_mesh(path)[0]
    assert resolver.load_mesh(path)[0] is first
    assert resolver.load_mesh('file://' + path)[0] is first
    doubled = resolver.load_mesh(path, (2.0, 2.0, 2.0))[0]
    assert doubled is not first
    np.testing.assert_allclose(support_values(doubled), 2.0 * support_values(first),
                               atol=1e-9)


def test_the_cache_keeps_the_most_recently_used(tmp_path):
    paths = [write(box_mesh(size=(1.0, 1.0, size)), tmp_path / f'box{size}.stl')
             for size in (1.0, 2.0, 3.0)]
    resolver = ResourceResolver(cache_size=2)
    first = resolver.load_mesh(paths[0])[0]
    second = resolver.load_mesh(paths[1])[0]
    assert resolver.load_mesh(paths[0])[0] is first     # used again: now the most recent
    resolver.load_mesh(paths[2])                          # evicts paths[1], not paths[0]
    assert resolver.load_mesh(paths[0])[0] is first
    reloaded = resolver.load_mesh(paths[1])[0]
    assert reloaded is not second
    np.testing.assert_allclose(support_values(reloaded), support_values(second), atol=1e-12)


def test_a_rewritten_file_is_reloaded(tmp_path):
    path = tmp_path / 'box.stl'
    resolver = ResourceResolver()
    write(box_mesh(size=(1.0, 1.0, 1.0)), path)
    small = resolver.load_mesh(str(path))[0]
    write(box_mesh(size=(3.0, 3.0, 3.0)), path)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    large = resolver.load_mesh(str(path))[0]
    np.testing.assert_allclose(support_values(large), 3.0 * support_values(small), atol=1e-6)


def test_in_memory_mesh_data(tmp_path):
    mesh = box_mesh(centre=(1.0, 0.0, 0.0))
    data = mesh.export(file_type='stl')
    resolver = ResourceResolver()
    info = resolver.load_mesh_data(data, '.STL', (1.0, 1.0, 3.0), name='part.stl')
    assert info.is_convex and info.vertex_count == 8 and info.path == '<data>'
    np.testing.assert_allclose(support_values(info.hull),
                               point_support_values(mesh.vertices * [1, 1, 3]), atol=1e-6)
    assert resolver.load_mesh_data(data, 'stl', (1.0, 1.0, 3.0)).hull is info.hull
    with pytest.raises(ModelError, match='part.bin: unsupported mesh format'):
        resolver.load_mesh_data(data, 'bin', name='part.bin')


def test_triangles_hull_checks_like_a_file():
    tetra = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 0, 1], [1, 0, 0]]])
    info = meshes.triangles_hull('obstacle', tetra)
    assert info.is_convex and info.vertex_count == 4
    with pytest.raises(ModelError, match='obstacle: 1 of 2 mesh triangles'):
        meshes.triangles_hull('obstacle', np.where(np.arange(18).reshape(2, 3, 3) == 17,
                                                   np.nan, tetra))
    with pytest.raises(ModelError, match='no triangles'):
        meshes.triangles_hull('obstacle', np.zeros((0, 3, 3)))


def test_model_error_text_and_pickling():
    import pickle
    error = ModelError('link_1', 'mesh file missing')
    assert str(error) == 'link_1: mesh file missing'
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.body, copy.reason, str(copy)) == ('link_1', 'mesh file missing', str(error))


def test_nearest_candidate_distances_match_trimesh_with_degenerate_triangles():
    """The compiled point-triangle distance of hull_deviation, against trimesh's."""
    rng = np.random.default_rng(1)
    triangles = rng.normal(size=(300, 3, 3))
    triangles[:20, 2] = triangles[:20, 0] + 0.5 * (triangles[:20, 1] - triangles[:20, 0])
    triangles[20:30, 1] = triangles[20:30, 0]   # an edge of zero length
    triangles[30:35] = triangles[30:35, :1]     # a point
    points = 1.5 * rng.normal(size=(2000, 3))
    candidates = rng.integers(0, len(triangles), size=(len(points), 8))
    ours = meshes.nearest_candidate_distances(points, triangles, candidates)
    closest = trimesh.triangles.closest_point(triangles[candidates].reshape(-1, 3, 3),
                                              np.repeat(points, 8, axis=0))
    expected = np.linalg.norm(closest - np.repeat(points, 8, axis=0), axis=1)
    np.testing.assert_allclose(ours, expected.reshape(-1, 8).min(axis=1), rtol=0, atol=1e-12)


def test_load_mesh_triangles_scales_and_checks_like_the_hull(tmp_path):
    path = write(l_shape_mesh(), tmp_path / 'l.stl')
    resolver = ResourceResolver()
    mesh = trimesh.load(path, process=False)
    triangles = resolver.load_mesh_triangles(str(path), (2.0, 1.0, 0.5))
    assert triangles.shape == (len(mesh.faces), 3, 3)
    assert np.allclose(triangles, mesh.triangles * [2.0, 1.0, 0.5])
    with pytest.raises(ModelError, match='cannot open mesh file'):
        resolver.load_mesh_triangles(str(tmp_path / 'missing.stl'))


def test_exact_pieces_are_decomposed_once_per_key(tmp_path):
    path = write(l_shape_mesh(), tmp_path / 'l.stl')
    resolver = ResourceResolver()
    triangles = resolver.load_mesh_triangles(str(path))
    first = resolver.exact_pieces(('l', 1.0), triangles, 64)
    assert resolver.exact_pieces(('l', 1.0), triangles, 64) is first
    assert first.watertight and len(first.solids) >= 2  # an L: not one convex piece
