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
Every source kind without a ROS graph: raw bytes in, ``collect`` out (Nav2's sources_test).

Each test makes a source with fake frames, fake clocks and the geometry worker's own handlers
run in this thread (``component_fakes``), hands it serialized messages as its subscription
would, and checks the ``SourceData`` it answers: pieces, placement, data times, staleness and
not-ready reasons. Nothing spins.
"""

import inspect
import math
import time

from component_fakes import context, FakeClocks, FakeFrames, InlineWorker, NS
from gjk_ros.core import ConvexPolytope
from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.inputs.sources.base import Source, SOURCE_HOOKS, source_valid, state_data
from gjk_ros.ros.inputs.timekeeping import TIMELESS, UNKNOWN
from gjk_ros.ros.params import Config, ObservationSettings, parsed_bodies
import numpy
import pytest

rclpy_serialization = pytest.importorskip('rclpy.serialization')
pytest.importorskip('visualization_msgs.msg')

from builtin_interfaces.msg import Duration  # noqa: E402, I100
from gjk_ros.ros.inputs.sources.marker_arrays import MarkerSource  # noqa: E402
from gjk_ros.ros.inputs.sources.observations import (  # noqa: E402
    ObservationSource, SequenceGaps)
from gjk_ros.ros.inputs.sources.parameter_bodies import ParameterBodySource  # noqa: E402
from gjk_ros.ros.inputs.sources.robot_model import RobotModelSource  # noqa: E402
from sensor_msgs.msg import PointCloud2, PointField  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

URDF = ('<robot name="r"><link name="base"><collision><geometry><box size="0.2 0.2 0.2"/>'
        '</geometry></collision></link><link name="arm"><collision><geometry>'
        '<sphere radius="0.1"/></geometry></collision></link>'
        '<joint name="j" type="fixed"><parent link="base"/><child link="arm"/></joint></robot>')
SRDF = ('<robot name="r"><group name="all"><link name="base"/><link name="arm"/></group>'
        '<disable_collisions link1="base" link2="arm" reason="Adjacent"/></robot>')


def serialized(message):
    return rclpy_serialization.serialize_message(message)


def cube(ns, marker_id, x=0.0, lifetime=0.0, frame_id='world', frame_locked=True, stamp=0,
         size=0.1, action=Marker.ADD):
    marker = Marker(ns=ns, id=marker_id, type=Marker.CUBE, action=action,
                    frame_locked=frame_locked)
    marker.header.frame_id = frame_id
    marker.header.stamp.sec, marker.header.stamp.nanosec = divmod(stamp, NS)
    marker.pose.position.x = float(x)
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = size
    seconds = int(lifetime)
    marker.lifetime = Duration(sec=seconds, nanosec=int(round((lifetime - seconds) * 1e9)))
    return marker


def markers(*items):
    return serialized(MarkerArray(markers=list(items)))


# -- the base ---------------------------------------------------------------------------------


def test_the_base_has_six_hooks_and_defaults_that_harm_nothing():
    public = sorted(name for name in vars(Source) if not name.startswith('_'))
    assert public == sorted(SOURCE_HOOKS) and len(SOURCE_HOOKS) <= 6
    source = Source('nothing', context()[0])
    data = source.collect(0, FakeFrames())
    assert data.pieces == () and data.not_ready == () and source.parameter_specs('x') == ()
    source.close()


def test_one_freshness_rule():
    assert source_valid(10 * NS, 10 * NS + NS // 2, 0.5)
    assert not source_valid(10 * NS, 10 * NS + NS // 2 + 1, 0.5)
    assert not source_valid(None, 0, 0.5) and not source_valid(UNKNOWN, 0, 0.5)
    assert source_valid(TIMELESS, 10**18, 0.5)
    assert source_valid(None, 10**18, 0.0)  # no timeout (Nav2's 0): never stale


# -- markers ----------------------------------------------------------------------------------


def marker_source(obstacle_timeout=2.0, required=(), static=()):
    ctx, logger = context()
    source = MarkerSource(OBSTACLE, ctx)
    source.configure(Config(obstacle_timeout=obstacle_timeout,
                            required_obstacle_sources=tuple(required),
                            static_obstacle_namespaces=tuple(static)))
    return source, ctx, logger


def send(source, ctx, *items):
    source.on_message(markers(*items))
    ctx.ingestor.finish()


def test_a_marker_is_a_placed_piece_and_a_moved_one_keeps_its_geometry():
    source, ctx, _ = marker_source()
    frames = FakeFrames()
    send(source, ctx, cube('a', 0, x=0.5))
    first = source.collect(ctx.clocks.now, frames)
    (entry,) = first.pieces
    assert (entry.kind, entry.body, entry.key.item) == (OBSTACLE, 'a/0', ('a', 0, 0))
    assert first.frames == ('world',) and first.origins[0][0, 3] == 0.5
    assert first.times.tolist() == [ctx.clocks.now] and not first.stale.any()
    ctx.clocks.now += NS // 10
    send(source, ctx, cube('a', 0, x=0.7))
    moved = source.collect(ctx.clocks.now, frames)
    assert moved.pieces is first.pieces  # the same geometry: no rebuild downstream
    assert moved.origins[0][0, 3] == 0.7 and moved.times.tolist() == [ctx.clocks.now]
    send(source, ctx, cube('a', 0, x=0.7, size=0.2))
    assert source.collect(ctx.clocks.now, frames).pieces is not first.pieces


def test_a_silent_namespace_is_stale_and_a_required_one_makes_the_node_not_ready():
    source, ctx, logger = marker_source(obstacle_timeout=1.0, required=('a', 'never'))
    frames = FakeFrames()
    send(source, ctx, cube('a', 0))
    data = source.collect(ctx.clocks.now, frames)
    assert not data.stale.any()
    assert data.not_ready == ("required obstacle source 'never' has not published",)
    ctx.clocks.now += 2 * NS
    data = source.collect(ctx.clocks.now, frames)
    assert data.stale.all() and "'a' silent for 2.0 s" in ' '.join(data.not_ready)
    assert "obstacle source 'a' silent" in logger.text()
    assert source.status(ctx.clocks.now).silent == ('obstacle:a',)


def test_a_static_namespace_never_ages():
    source, ctx, _ = marker_source(obstacle_timeout=1.0, static=('map*',))
    send(source, ctx, cube('map', 0))
    ctx.clocks.now += 100 * NS
    data = source.collect(ctx.clocks.now, FakeFrames())
    assert data.times.tolist() == [TIMELESS] and not data.stale.any()


def test_a_marker_past_its_lifetime_stays_stale_until_its_namespace_is_heard_again():
    """A dead publisher never makes an obstacle vanish; a live one that stops renewing does."""
    source, ctx, _ = marker_source(obstacle_timeout=100.0)
    frames = FakeFrames()
    send(source, ctx, cube('dead', 0, lifetime=1.0), cube('live', 0, lifetime=1.0))
    ctx.clocks.now += 2 * NS
    data = source.collect(ctx.clocks.now, frames)
    assert [entry.body for entry in data.pieces] == ['dead/0', 'live/0'] and data.stale.all()
    send(source, ctx, cube('live', 1))  # 'live' is heard after the lifetime ended
    data = source.collect(ctx.clocks.now, frames)
    assert [entry.body for entry in data.pieces] == ['dead/0', 'live/1']
    assert data.stale.tolist() == [True, False]


def test_a_renewed_marker_expires_on_its_latest_lifetime():
    source, ctx, _ = marker_source(obstacle_timeout=100.0)
    frames = FakeFrames()
    send(source, ctx, cube('c', 0, lifetime=3.0))
    ctx.clocks.now += 2 * NS
    send(source, ctx, cube('c', 0, lifetime=3.0))   # renewed: now expires 5 s after start
    ctx.clocks.now += 2 * NS
    data = source.collect(ctx.clocks.now, frames)
    assert not data.stale.any()
    ctx.clocks.now += 2 * NS
    send(source, ctx, cube('c', 1))                 # 'c' heard after c/0 expired: it goes
    assert [entry.body for entry in source.collect(ctx.clocks.now, frames).pieces] == ['c/1']


def test_deleteall_clears_its_namespace_only():
    source, ctx, _ = marker_source()
    send(source, ctx, cube('a', 0), cube('a', 1), cube('b', 0))
    send(source, ctx, Marker(ns='a', action=Marker.DELETEALL))
    data = source.collect(ctx.clocks.now, FakeFrames())
    assert [entry.body for entry in data.pieces] == ['b/0']


def test_a_marker_not_frame_locked_is_placed_once_at_its_stamp():
    source, ctx, _ = marker_source()
    frames = FakeFrames()
    frames.waiting.add('head')
    send(source, ctx, cube('seen', 0, x=1.0, frame_id='head', frame_locked=False,
                           stamp=ctx.clocks.now - NS))
    data = source.collect(ctx.clocks.now, frames)
    assert data.frames == (None,)  # its transform has not come: not placed, STALE downstream
    frames.waiting.clear()
    frames.place('head', (0.0, 2.0, 0.0))
    data = source.collect(ctx.clocks.now, frames)
    assert data.frames == ('world',)
    assert data.origins[0][:3, 3].tolist() == [1.0, 2.0, 0.0]
    assert ('head', ctx.clocks.now - NS) in frames.asked
    frames.place('head', (0.0, 5.0, 0.0))  # the head moves on: the obstacle stays where seen
    assert source.collect(ctx.clocks.now, frames).origins[0][1, 3] == 2.0


def test_only_markers_still_to_place_are_looked_up_each_cycle():
    source, ctx, _ = marker_source()
    frames = FakeFrames()
    frames.place('head', (0.0, 2.0, 0.0))
    send(source, ctx, *[cube('seen', k, x=k, frame_id='head', frame_locked=False,
                             stamp=ctx.clocks.now - NS) for k in range(50)],
         cube('later', 0, frame_id='lidar', frame_locked=False, stamp=ctx.clocks.now - NS))
    source.collect(ctx.clocks.now, frames)
    assert len(frames.asked) == 51  # each marker once; 'lidar' is unknown (a warning)
    frames.asked.clear()
    for _ in range(3):
        data = source.collect(ctx.clocks.now, frames)
    assert frames.asked == [('lidar', ctx.clocks.now - NS)] * 3  # only the one not placed
    frames.place('lidar', (0.0, 0.0, 1.0))
    data = source.collect(ctx.clocks.now, frames)
    assert data.frames == ('world',) * 51
    frames.asked.clear()
    source.collect(ctx.clocks.now, frames)
    assert frames.asked == []
    # A marker sent again at a new stamp is placed again, at that stamp.
    send(source, ctx, cube('seen', 3, x=3, frame_id='head', frame_locked=False,
                           stamp=ctx.clocks.now))
    frames.place('head', (0.0, 4.0, 0.0))
    data = source.collect(ctx.clocks.now, frames)
    assert frames.asked == [('head', ctx.clocks.now)]
    moved = [entry.body for entry in data.pieces].index('seen/3')
    assert data.origins[moved][:3, 3].tolist() == [3.0, 4.0, 0.0]


def test_a_bad_marker_is_a_rejected_piece_by_name():
    source, ctx, logger = marker_source()
    bad = cube('bad', 0, size=math.nan)
    send(source, ctx, bad, cube('good', 0))
    data = source.collect(ctx.clocks.now, FakeFrames())
    rejected = {entry.body: entry.error for entry in data.pieces}
    assert rejected['good/0'] is None and rejected['bad/0']


def test_an_oversize_message_is_refused_by_topic_and_refreshes_nothing():
    source, ctx, logger = marker_source()
    source.configure(Config(max_message_bytes=10))
    source.on_message(markers(cube('a', 0)))
    assert not ctx.ingestor.queued and 'exceeds max_message_bytes' in logger.text()


def test_a_jump_back_of_ros_time_forgets_what_was_heard():
    source, ctx, _ = marker_source(obstacle_timeout=1.0)
    send(source, ctx, cube('a', 0))
    source.collect(ctx.clocks.now, FakeFrames())
    ctx.clocks.jump_back(ctx.clocks.now - 10 * NS)
    data = source.collect(ctx.clocks.now, FakeFrames())
    assert data.times.tolist() == [UNKNOWN] and data.stale.all()


# -- the robot model --------------------------------------------------------------------------


def test_the_robot_model_is_link_pieces_and_link_semantics():
    ctx, _ = context()
    source = RobotModelSource(ctx)
    source.configure(Config(robot_description_timeout=5.0))
    frames = FakeFrames()
    assert source.collect(0, frames).not_ready == ('waiting for robot_description',)
    source.on_description(serialized(String(data=URDF)))
    source.on_semantic(serialized(String(data=SRDF)))
    assert source.collect(0, frames).not_ready == ('robot_description being built',)
    ctx.ingestor.finish()
    data = source.collect(0, frames)
    assert data.not_ready == ()
    assert sorted(entry.body for entry in data.pieces) == ['arm', 'base']
    assert all(entry.kind == LINK for entry in data.pieces)
    assert data.frames == tuple(entry.body for entry in data.pieces)
    assert data.times.tolist() == [TIMELESS] * 2 and not data.stale.any()
    assert data.links.adjacent == {frozenset(('base', 'arm'))}
    assert data.links.disabled == {frozenset(('base', 'arm'))}
    assert data.links.groups == {'all': frozenset(('base', 'arm'))}
    assert source.collect(0, frames) is data  # nothing new: the same slot


def test_a_rejected_robot_model_says_why_and_keeps_the_previous_one():
    ctx, logger = context()
    source = RobotModelSource(ctx)
    source.configure(Config())
    source.on_description(serialized(String(data=URDF)))
    ctx.ingestor.finish()
    built = source.collect(0, FakeFrames())
    source.on_description(serialized(String(data='<robot')))
    ctx.ingestor.finish()
    data = source.collect(0, FakeFrames())
    assert data.pieces is built.pieces and 'robot_description rejected' in logger.text()
    assert source.status(0).error


def test_no_robot_model_after_the_timeout_names_the_topic():
    clocks = FakeClocks()
    ctx, _ = context(clocks=clocks)
    source = RobotModelSource(ctx)
    source.configure(Config(robot_description_timeout=5.0))
    clocks.steady_time = 6.0
    (reason,) = source.collect(0, FakeFrames()).not_ready
    assert 'no robot_description after 6 s' in reason and 'robot_description' in reason


# -- parameter bodies -------------------------------------------------------------------------

BODIES = ('[{name: table, frame_id: desk, pieces: [{type: box, size: [1, 1, 0.1]}]}, '
          '{name: bad, type: box, size: [1, 1]}]')


def test_parameter_bodies_are_parsed_once_and_built_by_the_worker(monkeypatch):
    from gjk_ros.ros.params import body_texts
    parses = []
    real = body_texts.parse_body_descriptions
    monkeypatch.setattr(body_texts, 'parse_body_descriptions',
                        lambda text, limits: parses.append(text) or real(text, limits))
    body_texts._parsed.cache_clear()
    config = Config(static_obstacles=BODIES)
    parsed_bodies(BODIES, config.ingest_limits())  # as the parameter callback validates it
    ctx, _ = context()
    source = ParameterBodySource(ctx)
    source.configure(config)
    assert parses.count(BODIES) == 1
    frames = FakeFrames()
    assert source.collect(0, frames).not_ready == (
        'static_obstacles / link_geometry being built',)
    ctx.ingestor.finish()
    data = source.collect(0, frames)
    assert data.not_ready == ()
    found = {entry.body: entry for entry in data.pieces}
    assert found['table'].piece is not None and found['table'].kind == OBSTACLE
    assert found['bad'].error and found['bad'].piece is None
    assert data.frames[[entry.body for entry in data.pieces].index('table')] == 'desk'


def test_an_unchanged_text_is_not_built_again():
    ctx, _ = context()
    source = ParameterBodySource(ctx)
    source.configure(Config(static_obstacles=BODIES))
    ctx.ingestor.finish()
    source.configure(Config(static_obstacles=BODIES, rate_hz=10.0))
    assert not ctx.ingestor.queued


# -- the planning scene -----------------------------------------------------------------------


def test_a_collision_object_is_decoded_once_into_a_placed_obstacle_and_rules():
    moveit_msgs = pytest.importorskip('moveit_msgs.msg')
    shape_msgs = pytest.importorskip('shape_msgs.msg')
    from gjk_ros.ros.inputs.sources.planning_scene import PlanningSceneSource
    ctx, _ = context()
    source = PlanningSceneSource(ctx)
    source.configure(Config(planning_scene=True))
    message = moveit_msgs.CollisionObject(id='box', operation=moveit_msgs.CollisionObject.ADD)
    message.header.frame_id = 'table'
    message.pose.orientation.w = 1.0
    message.primitives = [shape_msgs.SolidPrimitive(type=shape_msgs.SolidPrimitive.BOX,
                                                    dimensions=[0.1, 0.1, 0.1])]
    pose = message.pose.__class__()
    pose.orientation.w = 1.0
    message.primitive_poses = [pose]
    source._receiver('/collision_object', 'object')(serialized(message))
    (job, _, _), = ctx.ingestor.queued
    assert job.data == serialized(message)  # the raw bytes: decoded in the worker only
    assert source.collect(0, FakeFrames()).not_ready
    ctx.ingestor.finish()
    data = source.collect(0, FakeFrames())
    (entry,) = data.pieces
    assert (entry.kind, entry.body) == (OBSTACLE, 'box') and data.frames == ('table',)
    assert data.not_ready == () and data.rules is not None and not data.stale.any()


# -- observations -----------------------------------------------------------------------------


def cloud(points, stamp_ns, frame_id='world'):
    message = PointCloud2(height=1, width=len(points), point_step=12,
                          row_step=12 * len(points), is_dense=True)
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, NS)
    message.fields = [PointField(name=axis, offset=4 * index, datatype=PointField.FLOAT32,
                                 count=1) for index, axis in enumerate('xyz')]
    message.data = numpy.asarray(points, dtype='<f4').tobytes()
    return serialized(message)


def robot_in(world, fixed_frame='world'):
    from gjk_ros.models import CollisionPiece
    from gjk_ros.ros.inputs.sources.base import PieceKey, SourcePiece
    arm = CollisionPiece('arm', 'arm', numpy.eye(4), ConvexPolytope.box([0.1] * 3), 'box')
    world.replace('robot_description', state_data(
        (SourcePiece(LINK, 'arm', PieceKey('robot_description', ('arm', 0)), arm),),
        fixed_frame))


def collect_until(source, now_ns, frames, done, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        data = source.collect(now_ns, frames)
        if done(data) or time.monotonic() > deadline:
            return data
        time.sleep(0.01)


def test_a_cloud_is_self_filtered_and_its_nearest_point_per_link_piece_is_exact():
    ctx, _ = context()
    robot_in(ctx.world)
    settings = ObservationSettings('cam', topic='/cam', source_timeout=1.0)
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,),
                            self_filter_padding=0.02))
    frames = FakeFrames()
    frames.place('arm', (0.0, 0.0, 0.0))
    now = ctx.clocks.now
    data = source.collect(now, frames)
    assert data.pieces == () and data.not_ready == ()  # never heard, not required
    rng = numpy.random.default_rng(7)
    points = rng.uniform(-1.0, 1.0, (500, 3))
    points = numpy.vstack([points, [[0.05, 0.0, 0.0], [0.3, 0.0, 0.0]]])  # one on the robot
    source.on_message(cloud(points, now))
    data = collect_until(source, now, frames, lambda data: len(data.pieces) == 1)
    (entry,) = data.pieces
    assert entry.kind == OBSTACLE and entry.body == 'cam' and data.frames == ('world',)
    assert data.times.tolist() == [now] and not data.stale.any()
    kept = points.astype(numpy.float32).astype(float)
    outside = numpy.abs(kept).max(axis=1) > 0.1 + 0.02
    gaps = numpy.linalg.norm(numpy.maximum(numpy.abs(kept[outside]) - 0.1, 0.0), axis=1)
    nearest = kept[outside][numpy.argmin(gaps)]
    assert numpy.allclose(data.origins[0][:3, 3], nearest)
    ctx.clocks.now += 2 * NS  # older than source_timeout: stale, and not ready once heard
    data = source.collect(ctx.clocks.now, frames)
    assert data.stale.all() and 'source_timeout' in ' '.join(data.not_ready)
    source.close()


def test_a_cloud_whose_link_frames_have_not_come_waits_and_a_required_source_is_not_ready():
    ctx, _ = context()
    robot_in(ctx.world)
    settings = ObservationSettings('cam', topic='/cam')
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,),
                            required_observation_sources=('cam',)))
    frames = FakeFrames()
    frames.waiting.add('arm')
    assert source.collect(ctx.clocks.now, frames).not_ready == (
        "observation source 'cam' has not published",)
    source.on_message(cloud([[1.0, 0.0, 0.0]], ctx.clocks.now))
    data = source.collect(ctx.clocks.now, frames)
    assert data.pieces == () and 'no cloud usable yet' in ' '.join(data.not_ready)
    frames.waiting.clear()
    frames.place('arm')
    data = collect_until(source, ctx.clocks.now, frames, lambda data: len(data.pieces) == 1)
    assert data.not_ready == () and data.origins[0][0, 3] == 1.0
    source.close()


def test_a_source_counts_the_clouds_it_received_used_superseded_and_refused():
    """Latest wins: every cloud received is used, superseded, refused or on its way."""
    from gjk_ros.ros.inputs.sources.observations import CloudCounts
    ctx, _ = context()
    robot_in(ctx.world)
    settings = ObservationSettings('cam', topic='/cam')
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,),
                            observation_max_bytes=1000))
    frames = FakeFrames()
    frames.waiting.add('arm')
    now = ctx.clocks.now
    source.on_message(cloud(numpy.zeros((100, 3)), now))  # 1200 bytes of points: refused
    for x in (1.0, 2.0, 3.0):  # the first waits for its transforms, the third replaces the second
        source.on_message(cloud([[x, 0.0, 0.0]], now))
    source.collect(now, frames)
    assert source.status(now).counts == CloudCounts(received=4, superseded=1, refused=1)
    frames.waiting.clear()
    frames.place('arm')
    data = collect_until(source, now, frames, lambda data: len(data.pieces) == 1)
    assert data.origins[0][0, 3] == 3.0  # the newest, and the first one superseded by it
    assert source.status(now).counts == CloudCounts(received=4, used=1, superseded=2,
                                                    refused=1)
    source.on_message(b'\x00\x01\x00\x00junk')
    source.collect(now, frames)
    status = source.status(now)
    assert status.counts == CloudCounts(received=5, used=1, superseded=2, refused=2)
    assert status.heard == {'observation:cam': now}
    source.close()


def test_a_jump_back_drops_the_clouds_received_before_it():
    """In flight or waiting, a cloud of the old time is never used after the jump."""
    from gjk_ros.ros.inputs.sources.observations import CloudCounts
    ctx, _ = context()
    robot_in(ctx.world)
    settings = ObservationSettings('cam', topic='/cam', source_timeout=1.0)
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,)))
    frames = FakeFrames()
    frames.place('arm')
    before = ctx.clocks.now
    source.collect(before, frames)
    source.on_message(cloud([[1.0, 0.0, 0.0]], before))  # processed at once (idle)
    source.on_message(cloud([[2.0, 0.0, 0.0]], before))  # waits for the thread
    ctx.clocks.jump_back(before - 10 * NS)
    source._pool.submit(lambda: None).result()  # the cloud in flight has finished
    data = source.collect(ctx.clocks.now, frames)
    assert data.pieces == () and source.cloud is None
    assert source.counts == CloudCounts(received=2, superseded=2)
    source.on_message(cloud([[3.0, 0.0, 0.0]], ctx.clocks.now))
    data = collect_until(source, ctx.clocks.now, frames, lambda data: len(data.pieces) == 1)
    assert data.origins[0][0, 3] == 3.0 and data.times.tolist() == [ctx.clocks.now]
    source.close()


def test_every_source_kind_answers_with_arrays_that_follow_its_pieces():
    """The shape every slot must have, whatever the source kind (the world relies on it)."""
    ctx, _ = context(worker=InlineWorker())
    sources = [RobotModelSource(ctx), ParameterBodySource(ctx), MarkerSource(OBSTACLE, ctx)]
    for source in sources:
        source.configure(Config(static_obstacles=BODIES))
    sources[0].on_description(serialized(String(data=URDF)))
    sources[2].on_message(markers(cube('a', 0), cube('b', 1)))
    ctx.ingestor.finish()
    for source in sources:
        data = source.collect(ctx.clocks.now, FakeFrames())
        count = len(data.pieces)
        assert count and len(data.frames) == count and data.origins.shape == (count, 4, 4)
        assert data.times.shape == (count,) and data.stale.shape == (count,)
        assert len({entry.key for entry in data.pieces}) == count
        assert all(entry.key.source == source.name for entry in data.pieces)


def test_sequence_gaps_count_what_one_publisher_sent_and_never_arrived():
    gaps = SequenceGaps()
    assert [gaps.lost(sequence, 1) for sequence in (1, 2, 5, 6, 10)] == [0, 0, 2, 0, 3]
    assert gaps.lost(3, 1) == 0, 'a number going back: a restarted publisher, counted anew'
    assert gaps.lost(5, 1) == 1
    assert gaps.lost(9, 2) == 0 and gaps.lost(12, 1) == 0, 'two publishers interleave: no count'
    assert gaps.lost(14, 1) == 1
    assert gaps.lost(0, 1) == 0 and gaps.lost(20, 1) == 0, 'an RMW that does not number'


class _Subscription:
    """A raw subscription's reader queue: what ``draining.take_waiting`` takes from."""

    def __init__(self, message, qos, raw):
        self.msg_type, self.qos_profile, self.raw = message, qos, raw
        self.handle, self.waiting = self, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def take_message(self, message, raw):
        return self.waiting.pop(0) if self.waiting else None


class _GraphNode:
    """What an observation source asks of its node: a subscription, and its publisher count."""

    def __init__(self, publishers):
        self.publishers, self.callbacks, self.subscriptions = publishers, [], []

    def create_subscription(self, message, topic, callback, qos, raw=False):
        self.callbacks.append(callback)
        self.subscriptions.append(_Subscription(message, qos, raw))
        return self.subscriptions[-1]

    def count_publishers(self, topic):
        return self.publishers

    def destroy_subscription(self, subscription):
        pass


def test_an_observation_source_counts_the_clouds_lost_on_the_way():
    ctx, _ = context()
    settings = ObservationSettings('cam', topic='/cam')
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,)))
    node = _GraphNode(publishers=1)
    source.subscribe(node)
    (callback,) = node.callbacks
    # rclpy passes the message info to a callback that takes two arguments, and only then.
    with pytest.raises(TypeError):
        inspect.signature(callback).bind(object())
    inspect.signature(callback).bind(object(), object())
    message = cloud([[1.0, 0.0, 0.0]], ctx.clocks.now)
    for sequence in (4, 5, 8, 9):
        callback(message, {'publication_sequence_number': sequence})
    assert (source.counts.received, source.counts.lost) == (4, 2)
    assert source.status(ctx.clocks.now).counts.lost == 2
    source.close()


def test_a_callback_supersedes_the_clouds_waiting_behind_it_and_uses_the_newest():
    """Latest wins in the reader queue too: one callback, the newest cloud, every one counted."""
    from gjk_ros.ros.inputs.sources.observations import CloudCounts
    ctx, _ = context()
    robot_in(ctx.world)
    settings = ObservationSettings('cam', topic='/cam', qos='reliable')
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,)))
    node = _GraphNode(publishers=1)
    source.subscribe(node)
    (callback,), (subscription,) = node.callbacks, node.subscriptions
    now = ctx.clocks.now
    # Three clouds wait behind the one the executor hands over; the one numbered 4 never came.
    subscription.waiting = [(cloud([[x, 0.0, 0.0]], now), {'publication_sequence_number': n})
                            for x, n in ((2.0, 2), (3.0, 3), (5.0, 5))]
    callback(cloud([[1.0, 0.0, 0.0]], now), {'publication_sequence_number': 1})
    assert subscription.waiting == [], 'the callback took what waited'
    assert source.counts == CloudCounts(received=4, superseded=3, lost=1)
    frames = FakeFrames()
    frames.place('arm')
    data = collect_until(source, now, frames, lambda data: len(data.pieces) == 1)
    assert data.origins[0][0, 3] == 5.0, 'the newest cloud is the one used'
    assert source.counts == CloudCounts(received=4, used=1, superseded=3, lost=1)
    # At most a queue's depth is taken by one callback: the rest wait for the next.
    depth = subscription.qos_profile.depth
    subscription.waiting = [(cloud([[6.0, 0.0, 0.0]], now), {})] * (depth + 2)
    callback(cloud([[6.0, 0.0, 0.0]], now), {})
    assert len(subscription.waiting) == 2
    source.close()
