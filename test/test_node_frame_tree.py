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

"""The node's own TF tree: composition, staleness, invalid and missing transforms."""

import math

from gjk_ros.ros.frame_tree import FrameStatus, FrameTree
from hypothesis import given, strategies
import numpy

TIMEOUT = 0.5


def values(xyz, angle=0.0, axis=(0.0, 0.0, 1.0)):
    """Return (x, y, z, qx, qy, qz, qw) of a rotation by ``angle`` about ``axis``."""
    axis = numpy.asarray(axis, dtype=float) / numpy.linalg.norm(axis)
    return tuple(xyz) + tuple(axis * math.sin(angle / 2)) + (math.cos(angle / 2),)


def rigid(xyz, angle=0.0, axis=(0.0, 0.0, 1.0)):
    """Return the same transform as a matrix, by Rodrigues' formula (not the tree's code)."""
    axis = numpy.asarray(axis, dtype=float) / numpy.linalg.norm(axis)
    cross = numpy.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]],
                         [-axis[1], axis[0], 0]])
    matrix = numpy.eye(4)
    matrix[:3, :3] = numpy.eye(3) + math.sin(angle) * cross + \
        (1 - math.cos(angle)) * cross @ cross
    matrix[:3, 3] = xyz
    return matrix


def robot_tree(now=0.0):
    """Build world -> base (static) -> arm -> hand (dynamic); world -> table (static)."""
    tree = FrameTree()
    tree.set_transform('world', 'base', values((1.0, 0.0, 0.0), 0.5), 10, now, True)
    tree.set_transform('base', 'arm', values((0.0, 0.2, 0.3), -1.0, (1, 1, 0)), 20, now, False)
    tree.set_transform('arm', 'hand', values((0.1, 0.0, 0.0), 2.0, (0, 1, 0)), 30, now, False)
    tree.set_transform('world', 'table', values((0.0, 2.0, 0.0), 1.5), 5, now, True)
    return tree


def test_chain_to_the_root():
    lookup = robot_tree().lookup('world', 'hand', 0.1, TIMEOUT)
    expected = rigid((1.0, 0.0, 0.0), 0.5) @ rigid((0.0, 0.2, 0.3), -1.0, (1, 1, 0)) @ \
        rigid((0.1, 0.0, 0.0), 2.0, (0, 1, 0))
    assert lookup.status == FrameStatus.OK
    numpy.testing.assert_allclose(lookup.matrix, expected, atol=1e-12)
    assert lookup.stamp == 30


def test_through_a_common_ancestor():
    tree = robot_tree()
    hand_in_world = tree.lookup('world', 'hand', 0.0, TIMEOUT).matrix
    table_in_world = tree.lookup('world', 'table', 0.0, TIMEOUT).matrix
    lookup = tree.lookup('table', 'hand', 0.0, TIMEOUT)
    numpy.testing.assert_allclose(lookup.matrix, numpy.linalg.inv(table_in_world)
                                  @ hand_in_world, atol=1e-12)
    # Upwards: the target is an ancestor of the source and the other way round.
    up = tree.lookup('base', 'hand', 0.0, TIMEOUT).matrix
    down = tree.lookup('hand', 'base', 0.0, TIMEOUT).matrix
    numpy.testing.assert_allclose(up @ down, numpy.eye(4), atol=1e-12)


def test_a_frame_is_connected_to_itself():
    lookup = FrameTree().lookup('world', '/world', 0.0, TIMEOUT)
    assert lookup.status == FrameStatus.OK
    numpy.testing.assert_array_equal(lookup.matrix, numpy.eye(4))


def test_dynamic_transforms_go_stale_static_ones_never():
    tree = robot_tree(now=100.0)
    assert tree.lookup('world', 'base', 1e6, TIMEOUT).status == FrameStatus.OK
    assert tree.lookup('world', 'hand', 100.0 + TIMEOUT, TIMEOUT).status == FrameStatus.OK
    late = tree.lookup('world', 'hand', 100.0 + 2 * TIMEOUT, TIMEOUT)
    assert late.status == FrameStatus.STALE and late.culprit in ('arm', 'hand')
    assert late.age == 2 * TIMEOUT
    # Fresh data brings it back.
    tree.set_transform('base', 'arm', values((0.0, 0.0, 0.0)), 40, 101.0, False)
    tree.set_transform('arm', 'hand', values((0.0, 0.0, 0.0)), 40, 101.0, False)
    assert tree.lookup('world', 'hand', 101.2, TIMEOUT).status == FrameStatus.OK


def test_non_finite_and_zero_rotation_are_invalid_until_replaced():
    tree = robot_tree()
    tree.set_transform('base', 'arm', (math.nan, 0, 0, 0, 0, 0, 1), 50, 0.0, False)
    lookup = tree.lookup('world', 'hand', 0.0, TIMEOUT)
    assert lookup.status == FrameStatus.INVALID and lookup.culprit == 'arm'
    assert lookup.matrix is None
    tree.set_transform('base', 'arm', (0, 0, 0, 0, 0, 0, 0), 51, 0.0, False)
    assert tree.lookup('world', 'hand', 0.0, TIMEOUT).status == FrameStatus.INVALID
    tree.set_transform('base', 'arm', values((0, 0, 0)), 52, 0.0, False)
    assert tree.lookup('world', 'hand', 0.0, TIMEOUT).status == FrameStatus.OK
    # Unrelated frames never depended on it.
    assert tree.lookup('world', 'table', 0.0, TIMEOUT).status == FrameStatus.OK


def test_unknown_and_disconnected_frames_are_missing():
    tree = robot_tree()
    unknown = tree.lookup('world', 'ghost', 0.0, TIMEOUT)
    assert unknown.status == FrameStatus.MISSING and unknown.culprit == 'ghost'
    tree.set_transform('map', 'odom', values((0, 0, 0)), 1, 0.0, True)
    apart = tree.lookup('world', 'odom', 0.0, TIMEOUT)
    assert apart.status == FrameStatus.MISSING


def test_cycles_do_not_hang():
    tree = FrameTree()
    tree.set_transform('a', 'b', values((1, 0, 0)), 0, 0.0, True)
    tree.set_transform('b', 'c', values((1, 0, 0)), 0, 0.0, True)
    tree.set_transform('c', 'a', values((1, 0, 0)), 0, 0.0, True)
    assert tree.lookup('world', 'a', 0.0, TIMEOUT).status == FrameStatus.MISSING


def test_reparenting_and_ignored_transforms():
    tree = robot_tree()
    assert not tree.set_transform('arm', 'arm', values((0, 0, 0)), 0, 0.0, True)
    assert not tree.set_transform('', 'x', values((0, 0, 0)), 0, 0.0, True)
    tree.set_transform('/table', '/hand', values((0.0, 0.0, 1.0)), 60, 0.0, False)
    lookup = tree.lookup('table', 'hand', 0.0, TIMEOUT)
    numpy.testing.assert_allclose(lookup.matrix, rigid((0.0, 0.0, 1.0)), atol=1e-15)


def test_unnormalised_quaternion_is_normalised():
    tree = FrameTree()
    tree.set_transform('world', 'a', (0, 0, 0, 0, 0, 2 * math.sin(0.3), 2 * math.cos(0.3)),
                       0, 0.0, True)
    numpy.testing.assert_allclose(tree.lookup('world', 'a', 0.0, TIMEOUT).matrix,
                                  rigid((0, 0, 0), 0.6), atol=1e-15)


angles = strategies.floats(-math.pi, math.pi)
offsets = strategies.tuples(*[strategies.floats(-5, 5)] * 3)


@given(strategies.lists(strategies.tuples(offsets, angles), min_size=1, max_size=6),
       strategies.integers(0, 5))
def test_any_chain_matches_the_product(chain, split):
    """A random chain world -> f0 -> f1 ...; lookups between any two frames compose."""
    tree, poses, parent = FrameTree(), [numpy.eye(4)], 'world'
    for index, (xyz, angle) in enumerate(chain):
        tree.set_transform(parent, 'f%d' % index, values(xyz, angle, (1, 2, 3)), 0, 0.0, True)
        poses.append(poses[-1] @ rigid(xyz, angle, (1, 2, 3)))
        parent = 'f%d' % index
    source = len(chain) - 1
    target = min(split, source)
    lookup = tree.lookup('f%d' % target, 'f%d' % source, 0.0, TIMEOUT)
    expected = numpy.linalg.inv(poses[target + 1]) @ poses[source + 1]
    numpy.testing.assert_allclose(lookup.matrix, expected, atol=1e-9)
