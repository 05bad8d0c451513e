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
The benchmark scenes' rotations come from gjk_ros's one rotation code (``core.rigid``).

Each step turns body B by an angle in ``[0, rotation_deg]`` about a random axis; measured here
from the poses alone (the angle of ``R_k R_{k-1}^T``, from its trace).
"""

import pathlib
import sys

from gjk_ros.core import rigid
from hypothesis import given, settings, strategies
import numpy
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import scenes  # noqa: E402, I100


def test_scenes_have_no_rotation_code_of_their_own():
    assert scenes.quaternion_matrix is rigid.quaternion_matrix
    assert not hasattr(scenes, 'axis_angle_matrix')


def turn_angles(rotations):
    """Return the angle (degrees) of each step's turn ``R_k R_{k-1}^T``."""
    turns = numpy.einsum('kij,klj->kil', rotations[1:], rotations[:-1])
    cosines = numpy.clip((numpy.trace(turns, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
    return numpy.degrees(numpy.arccos(cosines))


@settings(max_examples=30)
@given(seed=strategies.integers(0, 2 ** 32 - 1),
       rotation_deg=strategies.sampled_from([0.0, 0.5, 5.0, 45.0, 170.0]))
def test_each_step_turns_body_b_by_at_most_rotation_deg(seed, rotation_deg):
    spec = scenes.SceneSpec('box', 8, 1.0, rotation_deg, num_pairs=2, steps=6)
    poses = scenes.make_scene(spec, seed=seed).poses
    for pair in range(2):
        rotations = poses[:, 2 * pair + 1, :3, :3]
        numpy.testing.assert_allclose(numpy.einsum('kji,kjl->kil', rotations, rotations),
                                      numpy.broadcast_to(numpy.eye(3), rotations.shape),
                                      atol=1e-12)
        assert numpy.linalg.det(rotations) == pytest.approx(1.0, abs=1e-12)
        angles = turn_angles(rotations)
        assert numpy.all(angles <= rotation_deg + 1e-5)
        if rotation_deg == 0.0:
            numpy.testing.assert_array_equal(rotations, rotations[:1].repeat(6, axis=0))
        # Body A never turns.
        numpy.testing.assert_array_equal(poses[:, 2 * pair, :3, :3],
                                         poses[:1, 2 * pair, :3, :3].repeat(6, axis=0))


def test_the_turns_spread_over_the_whole_range():
    spec = scenes.SceneSpec('box', 8, 1.0, 30.0, num_pairs=20, steps=10)
    poses = scenes.make_scene(spec, seed=7).poses
    angles = numpy.concatenate([turn_angles(poses[:, 2 * pair + 1, :3, :3])
                                for pair in range(20)])
    # 180 draws uniform in [0, 30] degrees: the extremes of the range are reached.
    assert angles.min() < 2.0 and angles.max() > 28.0
