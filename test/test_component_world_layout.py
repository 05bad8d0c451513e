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
The world, the layout, the frames and readiness without a ROS graph.

Slots are handed to the world as sources hand them each cycle (``SourceData``); the layout is
refreshed, placed and judged from them; poses come from a ``Frames`` fed serialized TF as its
subscription would feed it. Nothing spins.
"""

from component_fakes import NoDecomposition, NS, RecordingLogger
from gjk_ros.core import ConvexPolytope
from gjk_ros.models import CollisionPiece
from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.compute.layout import Layout
from gjk_ros.ros.compute.pairs import InputState
from gjk_ros.ros.compute.readiness import Readiness
from gjk_ros.ros.compute.world import World
from gjk_ros.ros.inputs.sources.base import (CollisionRules, PieceKey, RobotLinks, SourceData,
                                             SourcePiece, state_data)
from gjk_ros.ros.inputs.timekeeping import NodeClocks, TIMELESS, UNKNOWN
from gjk_ros.ros.params import Config
from gjk_ros.ros.problems import ProblemLog
from gjk_ros.ros.records import PairStatus
import numpy
import pytest


class RosClock:
    """rclpy's Clock as NodeClocks reads it: ``now().nanoseconds``."""

    def __init__(self, now_ns):
        self.nanoseconds = now_ns

    def now(self):
        return self


def piece(body, frame, half=0.1, x=0.0):
    origin = numpy.eye(4)
    origin[0, 3] = x
    return CollisionPiece(body, frame, origin, ConvexPolytope.box([half] * 3), 'box')


def entry(source, kind, body, item, **geometry):
    return SourcePiece(kind, body, PieceKey(source, item), **geometry)


def robot(*links):
    return state_data(tuple(entry('robot_description', LINK, name, (name, 0),
                                  piece=piece(name, name)) for name in links), 'world')


def obstacles(source, *placed, stale=None, times=None):
    """Return a stream's slot: obstacles at x in 'world', with data times and staleness."""
    pieces = tuple(entry(source, OBSTACLE, '%s/%d' % (source, index), (index,),
                         piece=piece('%s/%d' % (source, index), 'world'))
                   for index, _ in enumerate(placed))
    origins = numpy.tile(numpy.eye(4), (len(placed), 1, 1))
    origins[:, 0, 3] = placed
    count = len(placed)
    return SourceData(pieces, ('world',) * count, origins,
                      numpy.array(times or [10 * NS] * count, dtype=numpy.int64),
                      numpy.array(stale or [False] * count, dtype=bool))


def test_a_slot_is_replaced_wholesale_and_unchanged_pieces_keep_their_caches():
    world = World()
    world.replace('robot_description', robot('arm', 'hand'))
    first = obstacles('obstacles', 0.5, 0.7)
    world.replace('obstacles', first)
    assert world.bodies.names(LINK) == ['arm', 'hand']
    assert world.bodies.names(OBSTACLE) == ['obstacles/0', 'obstacles/1']
    version, arrangement = world.bodies.version, world.arrangement
    (tracked,) = world.bodies.pieces(OBSTACLE, 'obstacles/0')
    moved = SourceData(first.pieces, first.frames, first.origins + 1.0, first.times,
                       first.stale)
    world.replace('obstacles', moved)  # the same pieces, elsewhere: nothing to rebuild
    assert (world.bodies.version, world.arrangement) == (version, arrangement)
    world.replace('obstacles', SourceData(first.pieces[:1], first.frames[:1],
                                          first.origins[:1], first.times[:1],
                                          first.stale[:1]))
    assert world.bodies.names(OBSTACLE) == ['obstacles/0'] and world.arrangement > arrangement
    assert world.bodies.pieces(OBSTACLE, 'obstacles/0')[0].uid == tracked.uid
    world.replace('obstacles', SourceData())
    assert world.bodies.names(OBSTACLE) == []


def test_link_pieces_are_one_list_while_nothing_they_read_changes():
    world = World()
    arm = robot('arm', 'hand')
    world.replace('robot_description', arm)
    near = obstacles('obstacles', 0.5)
    world.replace('obstacles', near)
    first = world.link_pieces()
    assert [link.name for link in first] == ['arm', 'hand']
    world.replace('obstacles', SourceData(near.pieces, near.frames, near.origins + 1.0,
                                          near.times, near.stale))  # an obstacle moved
    world.replace('robot_description', arm)
    assert world.link_pieces() is first, 'no link slot changed: the same list'
    moved = SourceData(arm.pieces, arm.frames, arm.origins + 1.0, arm.times, arm.stale)
    world.replace('robot_description', moved)  # the same pieces, placed elsewhere
    again = world.link_pieces()
    assert again is not first and all(link.origin[0, 0] == 2.0 for link in again)
    assert world.link_pieces() is again
    world.replace('robot_description', robot('arm', 'hand', 'finger'))
    assert [link.name for link in world.link_pieces()] == ['arm', 'finger', 'hand']


def test_rules_and_link_semantics_come_from_the_slots_that_hold_them():
    world = World()
    links = RobotLinks(adjacent=frozenset({frozenset(('a', 'b'))}), groups={'g': {'a'}})
    world.replace('robot_description', state_data((), 'world', links=links))
    rules = CollisionRules(padding=(('a', 0.1),))
    world.replace('planning_scene', state_data((), 'world', rules=rules))
    assert world.adjacent_links == links.adjacent and world.link_groups == {'g': {'a'}}
    assert world.collision_rules is rules
    world.replace('planning_scene', state_data((), 'world'))
    assert world.collision_rules == CollisionRules()


def test_rejected_and_pending_pieces_make_their_bodies_invalid_and_pending():
    world, logger = World(), RecordingLogger()
    world.replace('obstacles', state_data((
        entry('obstacles', OBSTACLE, 'bad/0', ('bad', 0), error='empty mesh'),
        entry('obstacles', OBSTACLE, 'slow/0', ('slow', 0), pending=True)), 'world'))
    world.report_problems(ProblemLog(logger))
    assert world.bodies.all_errors() == [(OBSTACLE, 'bad/0', 'empty mesh')]
    assert world.bodies.is_pending(OBSTACLE, 'slow/0')
    assert "obstacle 'bad/0' rejected: empty mesh" in logger.text()
    world.replace('obstacles', SourceData())
    world.report_problems(ProblemLog(logger))


def layout_of(world, **parameters):
    layout = Layout(NoDecomposition(), lambda names: None)
    layout.configure(Config(**parameters))
    layout.refresh(world)
    return layout


def test_the_layout_places_pieces_as_their_sources_did_and_judges_them_per_source():
    world = World()
    world.replace('robot_description', robot('arm'))
    world.replace('obstacles', obstacles('obstacles', 0.5, 0.7, stale=[False, True],
                                         times=[12 * NS, 11 * NS]))
    layout = layout_of(world)
    frames, origins, frame_index = layout.placement(world)
    assert frames == ['arm', 'world']
    by_name = {location.name: index for index, location in enumerate(layout.locations)}
    assert origins[by_name['obstacles/1']][0, 3] == 0.7
    assert [frames[index] for index in frame_index] == [
        'arm' if location.kind == LINK else 'world' for location in layout.locations]
    assert layout.link_frames() == ['arm']  # the link pieces' frames (readiness asks)
    inputs = numpy.zeros(len(layout.locations), dtype=numpy.int64)
    times = numpy.full(len(layout.locations), TIMELESS, dtype=numpy.int64)
    layout.judge(world, inputs, times)
    assert inputs[by_name['obstacles/1']] == InputState.STALE
    assert inputs[by_name['obstacles/0']] == InputState.OK
    assert times[by_name['obstacles/0']] == 12 * NS and times[by_name['arm']] == TIMELESS
    assert layout.placement(world)[1] is origins  # nothing moved: nothing recomputed


def test_a_piece_its_source_cannot_place_has_no_frame():
    world = World()
    world.replace('robot_description', robot('arm'))
    data = obstacles('obstacles', 0.5)
    world.replace('obstacles', SourceData(data.pieces, (None,), data.origins, data.times,
                                          data.stale))
    layout = layout_of(world)
    frames, _, frame_index = layout.placement(world)
    index = [location.name for location in layout.locations].index('obstacles/0')
    assert frames == ['arm'] and frame_index[index] == len(frames)
    assert layout.link_frames() == ['arm']


def test_scope_and_records():
    world = World()
    world.replace('robot_description', robot('arm', 'hand'))
    world.replace('obstacles', obstacles('obstacles', 0.5))
    layout = layout_of(world, link_exclude=('hand',))
    assert [location.name for location in layout.locations] == ['arm', 'obstacles/0']
    poses = numpy.tile(numpy.eye(4), (2, 1, 1))
    poses[1, 0, 3] = 0.5
    records = layout.tracker.compute(poses, numpy.zeros(2, dtype=numpy.int64), 1.0)
    assert records['status'].tolist() == [PairStatus.VALID]
    assert records['distance'][0] == pytest.approx(0.3)


def test_readiness_says_why_and_logs_once():
    logger = RecordingLogger()
    readiness = Readiness(ProblemLog(logger))
    assert readiness.check(None, ['waiting for robot_description'], [], ['arm']) == [
        'waiting for robot_description', 'no link in scope',
        'no usable transform for link frame(s) arm']
    readiness.check(None, ['waiting for robot_description'], [], ['arm'])
    assert logger.text().count('waiting for robot_description') == 1
    assert readiness.check(None, [], [0], []) == [] and readiness.ready


def test_frames_pose_pieces_from_raw_tf_and_grade_them():
    pytest.importorskip('tf2_msgs.msg')
    from geometry_msgs.msg import TransformStamped
    from gjk_ros.ros.inputs.frames import Frames
    from rclpy.serialization import serialize_message
    from tf2_msgs.msg import TFMessage
    logger = RecordingLogger()
    clocks = NodeClocks(RosClock(20 * NS), logger)
    frames = Frames(ProblemLog(logger), clocks, lambda: None)
    frames.configure(Config(tf_timeout=0.5))
    moving = TransformStamped()
    moving.header.frame_id, moving.child_frame_id = 'world', 'arm'
    moving.header.stamp.sec = 20
    moving.transform.translation.x = 1.0
    moving.transform.rotation.w = 1.0
    frames.store(serialize_message(TFMessage(transforms=[moving])), static=False)
    origins = numpy.tile(numpy.eye(4), (2, 1, 1))
    poses, inputs, times = frames.pose_pieces(['arm', 'ghost'], origins,
                                              numpy.array([0, 1]), 20 * NS,
                                              lambda index: (LINK, 'piece %d' % index))
    assert poses[0][0, 3] == 1.0 and inputs.tolist() == [InputState.OK, InputState.STALE]
    assert times.tolist() == [20 * NS, UNKNOWN]
    _, inputs, _ = frames.pose_pieces(['arm'], origins[:1], numpy.array([0]), 21 * NS,
                                      lambda index: (LINK, 'arm'))
    assert inputs.tolist() == [InputState.STALE]  # older than tf_timeout
    assert "frame 'ghost'" in logger.text()
    lookup = frames.lookup_latest(['arm'], 20 * NS)['arm']
    assert lookup.matrix[0, 3] == 1.0
