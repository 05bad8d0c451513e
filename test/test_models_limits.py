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

"""Bounds on what becomes geometry: parameter text, mesh files, magnitudes, convexity work."""

import struct
import time

from gjk_ros.models import meshes
from gjk_ros.models import ModelError, piece_from_description, ResourceResolver
from gjk_ros.models.meshes import triangles_hull
from gjk_ros.ros.params import parse_body_descriptions, validate_parameter
import numpy as np
import pytest
import trimesh

SECRET = 'SECRET-TOKEN-7f3a'
ALIAS_BOMB = 'a: &a [x, x, x, x, x, x, x, x, x]\n' + ''.join(
    f'{chr(98 + i)}: &{chr(98 + i)} [' + ', '.join([f'*{chr(97 + i)}'] * 9) + ']\n'
    for i in range(8))


@pytest.mark.parametrize('text, words', [
    ('[' * 5000 + ']' * 5000, 'nested deeper than 32'),
    ('{a: ' * 5000 + '1' + '}' * 5000, 'nested deeper than 32'),
    (''.join('  ' * depth + '- \n' for depth in range(40)), 'nested deeper than 32'),
    (ALIAS_BOMB, 'aliases'),
    ('[' + ', '.join(['1'] * 200_000) + ']', 'more than 100000 values'),
    (' ' * (1024 * 1024 + 1), 'more than the limit'),
], ids=['brackets', 'braces', 'indentation', 'aliases', 'nodes', 'size'])
def test_hostile_parameter_text_is_rejected_quickly(text, words):
    # Processor time of this process, not wall time: other test workers on the machine do not
    # count, and an expanded alias bomb or a quadratic scan would cost minutes, not seconds.
    started = time.process_time()
    with pytest.raises(ValueError, match=words):
        parse_body_descriptions(text)
    assert time.process_time() - started < 2.0
    assert words in validate_parameter('static_obstacles', text)


def test_a_malformed_megabyte_is_rejected_in_seconds_at_most():
    text = '[' + ', '.join([f'{SECRET}{index:07d}' for index in range(40_000)]) + ', {{ : ]'
    assert 0.9e6 < len(text) < 1024 * 1024
    started = time.process_time()
    with pytest.raises(ValueError) as caught:
        parse_body_descriptions(text)
    assert time.process_time() - started < 2.0
    assert 'line 1, column' in str(caught.value) and SECRET not in str(caught.value)


def test_limits_are_read_from_the_argument():
    class Limits:
        max_parameter_bytes, max_nesting, max_yaml_nodes = 10_000, 3, 50

    assert parse_body_descriptions('[{name: a, frame_id: w, type: sphere, radius: 1}]',
                                   Limits)
    with pytest.raises(ValueError, match='nested deeper than 3'):
        parse_body_descriptions('[{name: a, pieces: [{type: box, size: [1, 1, 1]}]}]', Limits)


@pytest.mark.parametrize('description, words', [
    ({'type': 'box', 'size': [1.0, 2e6, 1.0]}, 'within'),
    ({'type': 'sphere', 'radius': 10 ** 400}, 'only numbers'),
    ({'type': 'points', 'points': [0.0, 0.0, 0.0, 1.0, 1.0, 3e6]}, 'within'),
    ({'type': 'box', 'size': [1, 1, 1], 'xyz': [0, 0, -7e6]}, 'within'),
])
def test_absurd_magnitudes_are_rejected_naming_the_body(description, words):
    with pytest.raises(ModelError) as caught:
        piece_from_description('table', 'world', description)
    assert caught.value.body == 'table' and words in caught.value.reason
    assert len(str(caught.value)) < 300


def test_a_huge_list_is_not_echoed_in_the_error():
    values = [0.0] * 300_000 + [float('nan')]
    with pytest.raises(ModelError) as caught:
        piece_from_description('cloud', 'world', {'type': 'points', 'points': values})
    assert len(str(caught.value)) < 300


def test_mesh_scale_products_beyond_the_limit_are_rejected(tmp_path):
    path = tmp_path / 'box.stl'
    trimesh.creation.box(extents=(1000.0, 1.0, 1.0)).export(path)
    with pytest.raises(ModelError, match='beyond'):
        ResourceResolver().load_mesh(str(path), (5000.0, 1.0, 1.0))


def test_mesh_size_is_checked_before_reading(tmp_path):
    path = tmp_path / 'big.obj'
    path.write_bytes(b'v 0 0 0\n' * 1000)
    with pytest.raises(ModelError, match='8000 bytes, more than the limit of 4000'):
        ResourceResolver(max_mesh_bytes=4000).load_mesh(str(path))
    with pytest.raises(ModelError, match='more than the limit'):
        ResourceResolver(max_mesh_bytes=4000).load_mesh_data(b'\0' * 5000, 'stl')


def binary_stl(count, stored=None):
    """Return a binary STL header claiming ``count`` triangles, with ``stored`` of them."""
    stored = count if stored is None else stored
    triangle = struct.pack('<12fH', *([0.0] * 3 + [0, 0, 0, 1, 0, 0, 0, 1, 0]), 0)
    return b'\0' * 80 + struct.pack('<I', count) + triangle * stored


def test_declared_face_counts_are_checked_before_parsing():
    resolver = ResourceResolver(max_mesh_triangles=10)
    with pytest.raises(ModelError, match='declares 11 faces'):
        resolver.load_mesh_data(binary_stl(11), 'stl')
    header = ('ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n'
              'property float z\nelement face 99\nproperty list uchar int vertex_indices\n'
              'end_header\n')
    with pytest.raises(ModelError, match='declares 99 faces'):
        resolver.load_mesh_data(header.encode(), 'ply')
    with pytest.raises(ModelError, match='declares 50 faces'):
        resolver.load_mesh_data(b'OFF\n# comment\n3 50 0\n', 'off')
    assert resolver.load_mesh_data(binary_stl(10), 'stl', name='ok').vertex_count == 3


@pytest.mark.parametrize('name, content', [
    ('a.ply', f'ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n'
              f'{SECRET}\n'),
    ('a.off', f'OFF\n1 1 0\n{SECRET} 0 0\n3 0 0 0\n'),
    ('a.dae', f'<COLLADA><{SECRET}>'),
    ('a.obj', f'v {SECRET} 1 2\nf 1 1 1\n'),
])
def test_parser_errors_never_quote_the_file(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    try:
        ResourceResolver().load_mesh(str(path))
    except ModelError as error:
        assert SECRET not in str(error)


def test_convexity_of_a_convex_mesh_needs_no_exhaustive_search(monkeypatch):
    # With no budget for facet-by-facet search, every face must be settled by the O(n log n)
    # bounds (nearest facet centres, facets at a corner): this counts work, not time.
    monkeypatch.setattr(meshes, '_DEPTH_BUDGET', 0)
    monkeypatch.setattr(meshes, '_DEPTH_BLOCK_ELEMENTS', 1)
    sphere = trimesh.creation.icosphere(subdivisions=6)          # 245,760 triangle corners
    cylinder = trimesh.creation.cylinder(0.1, 1.0, sections=2000)  # long thin side faces
    for mesh in (sphere, cylinder):
        points, inverse = np.unique(mesh.vertices[mesh.faces].reshape(-1, 3), axis=0,
                                    return_inverse=True)
        triangles = points[inverse.reshape(-1, 3)]
        tolerance = meshes.CONVEXITY_TOLERANCE * float(np.linalg.norm(np.ptp(points, axis=0)))
        _, depth = meshes._hull_and_concavity(points, triangles, tolerance,
                                              inverse.reshape(-1, 3))
        assert depth == 0.0


def test_convexity_work_is_bounded_for_a_hostile_soup(monkeypatch):
    # Random triangles: every centroid is inside; the budget stops the exact search early.
    calls = []
    original = meshes._deepest

    def counted(*args):
        calls.append(len(args[0]))
        return original(*args)

    monkeypatch.setattr(meshes, '_deepest', counted)
    soup = np.random.default_rng(3).normal(size=(100_000, 3, 3))   # 300,000 points
    info = triangles_hull('soup', soup)
    assert not info.is_convex and info.concavity > 1.0 and calls == [100_000]


def ell_triangles(thickness=0.2):
    """Two boxes forming an L with 1 m arms; the hull is ``1 - 2 * thickness`` m out."""
    arm_x = trimesh.creation.box(extents=(1.0, thickness, thickness))
    arm_x.apply_translation((0.5, thickness / 2, thickness / 2))
    arm_y = trimesh.creation.box(extents=(thickness, 1.0, thickness))
    arm_y.apply_translation((thickness / 2, 0.5, thickness / 2))
    mesh = trimesh.util.concatenate([arm_x, arm_y])
    return mesh.vertices[mesh.faces]


def test_the_l_shape_warning_gives_the_hull_to_mesh_distance():
    # The hull's diagonal face from (1, t) to (t, 1) is farthest from the L at (0.6, 0.6):
    # min(x - t, y - t) is largest there, 1/2 - t/2 - t/2 = 0.4 m for t = 0.2.
    info = meshes.triangles_hull('ell', ell_triangles())
    assert not info.is_convex
    assert abs(info.hull_deviation - 0.4) <= info.hull_deviation_error < 0.05
    [warning] = meshes.mesh_shape(info, 'L', (1.0, 1.0, 1.0), 'arm').warnings
    assert warning.startswith('arm: L is not convex') and '0.4 m' in warning
    scaled = meshes.mesh_shape(info, 'L', (1.0, 1.0, 1.0), 'arm', hull_warning_threshold=0.5)
    assert scaled.warnings == ()


def test_convex_and_near_convex_meshes_do_not_warn():
    sphere = trimesh.creation.icosphere(subdivisions=3)
    info = meshes.triangles_hull('ball', sphere.vertices[sphere.faces])
    assert info.is_convex and meshes.mesh_shape(info, 'ball', (1, 1, 1), 'b').warnings == ()
    # A 0.1 mm dent in a 10 cm box: not convex, but the hull costs nothing worth a warning.
    box = trimesh.creation.box(extents=(0.1, 0.1, 0.1)).subdivide().subdivide()
    vertices = box.vertices.copy()
    top_centre = np.argmin(np.linalg.norm(vertices - (0.0, 0.0, 0.05), axis=1))
    vertices[top_centre, 2] -= 1e-4
    info = meshes.triangles_hull('box', vertices[box.faces])
    assert not info.is_convex and info.hull_deviation < 2e-4
    assert meshes.mesh_shape(info, 'box', (1, 1, 1), 'b').warnings == ()
