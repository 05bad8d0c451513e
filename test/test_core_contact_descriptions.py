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

"""The exact primitives through the description input: cone, ellipsoid and half-space."""

from gjk_ros.core import signed_distance
from gjk_ros.core import Status
from gjk_ros.models.descriptions import piece_from_description
from gjk_ros.models.errors import ModelError
import numpy
import pytest


def _world_pose(piece):
    return numpy.asarray(piece.origin, dtype=float)


def test_table_top_half_space_measures_the_height_of_a_box_above_it():
    table = piece_from_description('table', 'world', {'type': 'half_space',
                                                      'xyz': [0.0, 0.0, 0.75]})
    box = piece_from_description('crate', 'world', {'type': 'box', 'size': [0.2, 0.2, 0.2],
                                                    'xyz': [1.0, 2.0, 0.9]})
    assert table.shape.kind == 'half_space' and 'half-space' in table.description
    result = signed_distance(table.shape, _world_pose(table), box.shape, _world_pose(box))
    assert result.distance == pytest.approx(0.05, abs=1e-15)
    numpy.testing.assert_allclose(result.normal, [0.0, 0.0, 1.0], atol=1e-15)
    assert result.status == Status.SEPARATED


def test_tilted_half_space_takes_its_normal_from_rpy():
    wall = piece_from_description('wall', 'world', {'type': 'half_space',
                                                    'rpy': [0.0, numpy.pi / 2.0, 0.0]})
    point = piece_from_description('probe', 'world', {'type': 'sphere', 'radius': 0.1,
                                                      'xyz': [0.5, 0.0, 0.0]})
    result = signed_distance(wall.shape, _world_pose(wall), point.shape, _world_pose(point))
    # Pitch by +90 deg turns +z into +x: the wall is x <= 0.
    assert result.distance == pytest.approx(0.4, abs=1e-15)
    numpy.testing.assert_allclose(result.normal, [1.0, 0.0, 0.0], atol=1e-15)


def test_cone_and_ellipsoid_are_exact_primitives():
    cone = piece_from_description('c', 'world', {'type': 'cone', 'radius': 0.2,
                                                 'length': 1.0})
    ellipsoid = piece_from_description('e', 'world', {'type': 'ellipsoid',
                                                      'semi_axes': '0.3 0.2 0.1'})
    assert cone.shape.kind == 'cone' and ellipsoid.shape.kind == 'ellipsoid'
    assert cone.warnings == () and ellipsoid.warnings == ()
    numpy.testing.assert_allclose(cone.shape.support([0.0, 0.0, 1.0]), [0.0, 0.0, 0.5])
    numpy.testing.assert_allclose(ellipsoid.shape.support([1.0, 0.0, 0.0]), [0.3, 0.0, 0.0])


@pytest.mark.parametrize('description', [
    {'type': 'cone', 'radius': 0.2},
    {'type': 'cone', 'radius': -0.2, 'length': 1.0},
    {'type': 'ellipsoid', 'semi_axes': [0.1, 0.2]},
    {'type': 'ellipsoid', 'semi_axes': [0.1, 0.0, 0.2]},
    {'type': 'half_space', 'normal': [0.0, 0.0, 1.0]},
])
def test_invalid_primitive_descriptions_are_named_errors(description):
    with pytest.raises(ModelError, match='thing'):
        piece_from_description('thing', 'world', description)
