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

"""The node's swept records (compute/sweeping.py) over a real engine, without a graph."""

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.ros.compute.sweeping import SweptRecords
import numpy
import pytest

PLATE = ConvexPolytope.box((0.3, 0.3, 0.0025))  # a 5 mm plate
CUBE = ConvexPolytope.box((0.01, 0.01, 0.01))
ACTIVE = numpy.ones(1, dtype=bool)


def _poses(x, z):
    poses = numpy.tile(numpy.eye(4), (2, 1, 1))
    poses[0, :3, 3] = (x, 0.0, z)
    return poses


def _engine():
    return BodyPairs([CUBE, PLATE], [[(0, 1)]], [0.0], [0.0])


def _cycle(engine, swept, poses, active=ACTIVE):
    engine.update(poses, active)
    return swept.update(engine, poses, numpy.inf, 1e-4, 0.05)


def test_the_first_cycle_has_no_interval():
    lower, fraction = _cycle(_engine(), SweptRecords(), _poses(0.0, 0.03))
    assert numpy.isnan(lower).all() and numpy.isnan(fraction).all()


def test_a_cube_passing_through_a_thin_plate_between_two_samples_is_contact():
    engine, swept = _engine(), SweptRecords()
    _cycle(engine, swept, _poses(0.0, 0.03))
    lower, fraction = _cycle(engine, swept, _poses(0.0, -0.03))
    assert engine.rows[0][0, 0] == pytest.approx(0.0175, abs=1e-12), 'both samples are apart'
    # The deepest instant is the middle, 12.5 mm deep (the cube's half plus the plate's).
    assert lower[0] <= -0.0125 + 1e-12
    assert lower[0] >= -0.0125 - 1e-4 - 0.05 * 0.0125
    assert fraction[0] == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize('seed', range(5))
def test_a_motion_past_the_plate_is_bracketed_and_never_contact(seed):
    # A cube sliding 3-33 mm over the plate: the swept bound is below the dense minimum, within
    # the bracket asked for, and positive.
    rng = numpy.random.default_rng(seed)
    start = (rng.uniform(-0.2, 0.2), rng.uniform(0.015, 0.05))
    end = (start[0] + rng.uniform(-0.033, 0.033), rng.uniform(0.015, 0.05))
    engine, swept = _engine(), SweptRecords()
    _cycle(engine, swept, _poses(*start))
    lower, _ = _cycle(engine, swept, _poses(*end))
    dense = min(signed_distance(CUBE, pose[0], PLATE, pose[1]).distance
                for pose in (_poses(start[0] + s * (end[0] - start[0]),
                                    start[1] + s * (end[1] - start[1]))
                             for s in numpy.linspace(0.0, 1.0, 201)))
    assert 0.0 < lower[0] <= dense + 1e-12
    assert lower[0] >= dense - 1e-4 - 0.05 * dense


def test_a_pair_not_measured_at_both_ends_and_a_new_engine_have_no_interval():
    engine, swept = _engine(), SweptRecords()
    _cycle(engine, swept, _poses(0.0, 0.03), active=numpy.zeros(1, dtype=bool))
    lower, _ = _cycle(engine, swept, _poses(0.0, -0.03))
    assert numpy.isnan(lower[0]), 'the pair was not measured at the last cycle'
    rebuilt = _engine()
    lower, _ = _cycle(rebuilt, swept, _poses(0.0, 0.03))
    assert numpy.isnan(lower[0]), 'a rebuilt engine starts without an interval'
    assert swept.update(None, _poses(0.0, 0.03), numpy.inf, 1e-4, 0.05) is None
