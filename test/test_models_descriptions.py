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

"""Pieces from dict descriptions (gjk_ros.models.descriptions) and the piece type."""

import itertools

from gjk_ros.models import CollisionPiece, ModelError, piece_from_description
from gjk_ros.models import ResourceResolver
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
import trimesh

DIRECTIONS = np.vstack([np.eye(3), -np.eye(3),
                        np.random.default_rng(3).normal(size=(40, 3))])


def piece_support(piece, directions=DIRECTIONS):
    rotation, translation = piece.origin[:3, :3], piece.origin[:3, 3]
    return np.array([d @ (rotation @ piece.shape.support(rotation.T @ d) + translation)
                     for d in directions])


def points_support(points, directions=DIRECTIONS):
    return (np.asarray(points, dtype=float) @ directions.T).max(axis=0)


def transform(points, xyz, rpy):
    return np.asarray(points) @ Rotation.from_euler('xyz', rpy).as_matrix().T + xyz


def test_box_with_pose():
    xyz, rpy = [0.5, 0.0, -0.2], [0.1, 0.2, 0.3]
    piece = piece_from_description('table', 'world',
                                   {'type': 'box', 'size': [1.0, 0.6, 0.05], 'xyz': xyz,
                                    'rpy': rpy})
    assert (piece.body, piece.frame_id, piece.description) == ('table', 'world',
                                                               'box 1x0.6x0.05')
    corners = list(itertools.product((-0.5, 0.5), (-0.3, 0.3), (-0.025, 0.025)))
    np.testing.assert_allclose(piece_support(piece),
                               points_support(transform(corners, xyz, rpy)), atol=1e-12)


def test_sphere_cylinder_capsule():
    norms = np.linalg.norm(DIRECTIONS, axis=1)
    along = np.abs(DIRECTIONS[:, 2])
    across = np.linalg.norm(DIRECTIONS[:, :2], axis=1)
    sphere = piece_from_description('s', 'f', {'type': 'sphere', 'radius': 0.3,
                                               'xyz': '1 0 0'})
    np.testing.assert_allclose(piece_support(sphere), DIRECTIONS[:, 0] + 0.3 * norms,
                               atol=1e-12)
    cylinder = piece_from_description('c', 'f', {'type': 'cylinder', 'radius': 0.1,
                                                 'length': 0.8})
    np.testing.assert_allclose(piece_support(cylinder), 0.4 * along + 0.1 * across, atol=1e-9)
    capsule = piece_from_description('k', 'f', {'type': 'capsule', 'radius': 0.1,
                                                'length': 0.8})
    np.testing.assert_allclose(piece_support(capsule), 0.4 * along + 0.1 * norms, atol=1e-12)


def test_points_nested_or_flat_with_radius():
    points = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    nested = piece_from_description('p', 'f', {'type': 'points', 'points': points})
    flat = piece_from_description('p', 'f', {'type': 'points', 'radius': 0.05,
                                             'points': list(np.ravel(points))})
    np.testing.assert_allclose(piece_support(nested), points_support(points), atol=1e-12)
    np.testing.assert_allclose(piece_support(flat), points_support(points)
                               + 0.05 * np.linalg.norm(DIRECTIONS, axis=1), atol=1e-12)


def test_mesh_with_uniform_and_per_axis_scale(tmp_path):
    mesh = trimesh.creation.box((0.2, 0.4, 0.6))
    path = str(tmp_path / 'crate.obj')
    mesh.export(path)
    resolver = ResourceResolver()
    uniform = piece_from_description('crate', 'f', {'type': 'mesh', 'uri': path, 'scale': 2},
                                     resolver=resolver)
    per_axis = piece_from_description('crate', 'f', {'type': 'mesh', 'uri': 'file://' + path,
                                                     'scale': [1, 2, 3]}, resolver=resolver)
    plain = piece_from_description('crate', 'f', {'type': 'mesh', 'uri': path},
                                   resolver=resolver)
    np.testing.assert_allclose(piece_support(uniform), points_support(mesh.vertices * 2),
                               atol=1e-9)
    np.testing.assert_allclose(piece_support(per_axis),
                               points_support(mesh.vertices * [1, 2, 3]), atol=1e-9)
    np.testing.assert_allclose(piece_support(plain), points_support(mesh.vertices), atol=1e-9)


@pytest.mark.parametrize('description, words', [
    ([1, 2, 3], 'must be a mapping'),
    ({}, 'shape type must be one of box, sphere, cylinder, capsule, mesh, points, cone, '
         'ellipsoid, half_space, got None'),
    ({'type': 'torus'}, "got 'torus'"),
    ({'type': 'box'}, 'box: missing key size'),
    ({'type': 'box', 'size': [1, 1, 1], 'colour': 'red'}, 'unknown keys colour'),
    ({'type': 'box', 'size': [1, 1]}, 'box size must be 3 numbers'),
    ({'type': 'box', 'size': [1, 1, 1], 'xyz': [0, 0]}, 'xyz must be 3 numbers'),
    ({'type': 'sphere', 'radius': 0}, 'sphere radius must be > 0'),
    ({'type': 'sphere', 'radius': float('nan')}, 'must be finite'),
    ({'type': 'cylinder', 'radius': 1}, 'missing key length'),
    ({'type': 'capsule', 'radius': 1, 'length': -1}, 'capsule length must be > 0'),
    ({'type': 'mesh', 'uri': ''}, 'uri must be a non-empty string'),
    ({'type': 'mesh', 'uri': '/no/such.stl'}, 'cannot open mesh file /no/such.stl'),
    ({'type': 'mesh', 'uri': '/no/such.stl', 'scale': [1, 2]}, 'one number or three'),
    ({'type': 'points', 'points': []}, 'at least one number'),
    ({'type': 'points', 'points': [0, 0, 0, 1]}, 'x, y, z triples'),
    ({'type': 'points', 'points': [1, 1, 1]}, 'the hull has no size'),
    ({'type': 'points', 'points': [0, 0, 0, 1, 1, 1], 'radius': -1}, 'radius must be finite'),
])
def test_invalid_descriptions_name_the_body(description, words):
    with pytest.raises(ModelError) as caught:
        piece_from_description('shelf', 'world', description)
    assert caught.value.body == 'shelf'
    assert words in caught.value.reason


def test_empty_frame_id_is_rejected():
    with pytest.raises(ModelError, match='shelf: frame_id is empty'):
        piece_from_description('shelf', '', {'type': 'sphere', 'radius': 1})


def test_pieces_are_immutable():
    piece = piece_from_description('ball', 'world', {'type': 'sphere', 'radius': 1})
    with pytest.raises(ValueError):
        piece.origin[0, 3] = 5.0
    with pytest.raises(AttributeError):
        piece.body = 'other'
    assert piece != piece_from_description('ball', 'world', {'type': 'sphere', 'radius': 1})


def test_piece_rejects_a_bad_origin():
    shape = piece_from_description('ball', 'world', {'type': 'sphere', 'radius': 1}).shape
    with pytest.raises(ValueError, match='origin must be a finite'):
        CollisionPiece('ball', 'world', np.full((4, 4), np.nan), shape, 'sphere')
