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
A mesh mode change applies to the bodies the node holds, without a ROS graph.

A one-shot marker and a planning-scene object, each a closed picture frame with a 0.2 m box in
its hole, are sent once; ``mesh_mode`` then goes hull and back to exact (the worker's limits
change as the node's ``Ingestor.set_limits`` changes them) and the held bodies are built again
from what the sources kept, never sent again. Distances are the independent reference's.
"""

from component_fakes import context, FakeFrames, InlineWorker
from gjk_ros.ros.inputs.jobs import MarkerRebuildJob, SceneRebuildJob
from gjk_ros.ros.params import Config
import numpy
import pytest
from test_component_meshes import distance_to, EXPECTED, frame_marker
from test_core_mesh import frame_triangles

rclpy_serialization = pytest.importorskip('rclpy.serialization')
moveit_msgs = pytest.importorskip('moveit_msgs.msg')

from geometry_msgs.msg import Point, Pose  # noqa: E402, I100
from gjk_ros.ros.inputs.sources.marker_arrays import MarkerSource  # noqa: E402
from gjk_ros.ros.inputs.sources.planning_scene import PlanningSceneSource  # noqa: E402
from shape_msgs.msg import Mesh, MeshTriangle, SolidPrimitive  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

EXACT, HULL = Config(planning_scene=True), Config(planning_scene=True, mesh_mode='hull')


def change(source, worker, config):
    """Set the node's parameters: the worker restarts with their limits, the source is told."""
    worker.state.limits = config.ingest_limits()
    source.configure(config)


def settle(source, worker):
    """Collect (which submits a rebuild), run the worker, collect its results."""
    source.collect(0, FakeFrames())
    worker.finish()
    return source.collect(0, FakeFrames())


def pieces_of(data, body):
    return [entry.piece for entry in data.pieces if entry.body == body and entry.piece]


def frame_object(object_id='frame', operation=moveit_msgs.CollisionObject.ADD):
    message = moveit_msgs.CollisionObject(id=object_id, operation=operation)
    message.header.frame_id = 'world'
    message.pose.orientation.w = 1.0
    triangles = frame_triangles()
    vertices, indices = numpy.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    message.meshes = [Mesh(vertices=[Point(x=x, y=y, z=z) for x, y, z in vertices.tolist()],
                           triangles=[MeshTriangle(vertex_indices=[int(i) for i in t])
                                      for t in indices.reshape(-1, 3)])]
    message.mesh_poses = [Pose()]
    message.mesh_poses[0].orientation.w = 1.0
    return message


def box_object(object_id='frame'):
    message = moveit_msgs.CollisionObject(id=object_id,
                                          operation=moveit_msgs.CollisionObject.ADD)
    message.header.frame_id = 'world'
    message.pose.orientation.w = 1.0
    message.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=[2.0, 2.0, 2.0])]
    message.primitive_poses = [Pose()]
    message.primitive_poses[0].orientation.w = 1.0
    return message


def send_object(source, message):
    source._receiver('/collision_object', 'object')(
        rclpy_serialization.serialize_message(message))


def test_a_one_shot_marker_is_built_again_when_mesh_mode_changes():
    worker = InlineWorker(EXACT.ingest_limits())
    ctx, _ = context(worker)
    source = MarkerSource('obstacle', ctx)
    source.configure(EXACT)
    source.on_message(rclpy_serialization.serialize_message(
        MarkerArray(markers=[frame_marker()])))
    exact = settle(source, worker)
    assert len(pieces_of(exact, 'fixtures/0')) > 1
    change(source, worker, HULL)
    source.collect(0, FakeFrames())
    (job, _, _), = worker.queued  # the held marker, from what the source kept: no message
    assert isinstance(job, MarkerRebuildJob) and job.markers[0][0] == ('fixtures', 0)
    worker.finish()
    (hull,) = pieces_of(source.collect(0, FakeFrames()), 'fixtures/0')
    assert distance_to([hull]) < 0.0
    assert source.mesh_uses() == []  # as when received in hull: a TRIANGLE_LIST's hull
    change(source, worker, EXACT)
    pieces = pieces_of(settle(source, worker), 'fixtures/0')
    assert len(pieces) > 1 and distance_to(pieces) == pytest.approx(EXPECTED, abs=1e-12)
    assert source.mesh_uses()[0].mode == 'exact'
    source.collect(0, FakeFrames())
    assert worker.queued == []  # nothing left to build again


def test_a_marker_built_before_the_change_reached_the_worker_is_built_again():
    worker = InlineWorker(EXACT.ingest_limits())
    ctx, _ = context(worker)
    source = MarkerSource('obstacle', ctx)
    source.configure(EXACT)
    source.on_message(rclpy_serialization.serialize_message(
        MarkerArray(markers=[frame_marker()])))
    worker.finish()                 # built in exact ...
    source.configure(HULL)          # ... but the node now asks for hull
    worker.state.limits = HULL.ingest_limits()
    source.collect(0, FakeFrames())
    worker.finish()
    (hull,) = pieces_of(source.collect(0, FakeFrames()), 'fixtures/0')
    assert distance_to([hull]) < 0.0


def test_a_scene_object_is_built_again_when_mesh_mode_changes():
    worker = InlineWorker(EXACT.ingest_limits())
    ctx, _ = context(worker)
    source = PlanningSceneSource(ctx)
    source.configure(EXACT)
    send_object(source, frame_object())
    exact = settle(source, worker)
    pieces = pieces_of(exact, 'frame')
    assert len(pieces) > 1 and distance_to(pieces) == pytest.approx(EXPECTED, abs=1e-12)
    change(source, worker, Config(planning_scene=True, mesh_mode_overrides=('frame:hull',)))
    source.collect(0, FakeFrames())
    (job, _, _), = worker.queued
    assert isinstance(job, SceneRebuildJob)
    ((key, kind, sent),) = job.objects
    assert key == ('objects', 'frame') and kind == 'obstacle' and sent.pieces == ()
    worker.finish()
    (hull,) = pieces_of(source.collect(0, FakeFrames()), 'frame')
    assert distance_to([hull]) < 0.0
    assert [use.mode for use in source.mesh_uses()] == ['hull']
    change(source, worker, EXACT)
    pieces = pieces_of(settle(source, worker), 'frame')
    assert len(pieces) > 1 and distance_to(pieces) == pytest.approx(EXPECTED, abs=1e-12)


def test_a_message_after_the_rebuild_wins_and_an_appended_mesh_is_rebuilt_too():
    worker = InlineWorker(EXACT.ingest_limits())
    ctx, _ = context(worker)
    source = PlanningSceneSource(ctx)
    source.configure(EXACT)
    send_object(source, box_object('box'))
    send_object(source, frame_object('box', moveit_msgs.CollisionObject.APPEND))
    send_object(source, frame_object('other'))
    settle(source, worker)
    change(source, worker, HULL)
    source.collect(0, FakeFrames())  # the rebuild is queued ...
    send_object(source, box_object('other'))  # ... then 'other' becomes a box
    worker.finish()
    data = source.collect(0, FakeFrames())
    # The APPENDed object keeps its box and has its mesh as a hull; 'other' is the box.
    assert len(pieces_of(data, 'box')) == 2
    assert [piece.description.startswith('box') for piece in pieces_of(data, 'box')] == \
        [True, False]
    (other,) = pieces_of(data, 'other')
    assert other.description.startswith('box')
    source.collect(0, FakeFrames())
    assert worker.queued == []


def test_rebuilt_object_reads_a_mesh_file_again_and_a_file_gone_rejects_it(tmp_path):
    from gjk_ros.models.collision_objects import MeshOptions, rebuilt_object, scene_object
    from test_component_meshes import write_frame_stl
    path = tmp_path / 'frame.stl'
    found = {'id': 'filed', 'header': {'frame_id': 'world'},
             'primitives': [{'type': 'sphere', 'dimensions': [0.1]}],
             'meshes': [{'resource': 'file://' + write_frame_stl(path)}]}
    _, built = scene_object(found, mesh_options=MeshOptions('exact'))
    assert built.error is None and built.has_meshes and len(built.pieces) > 2
    sphere = built.sources[0]
    assert built.sources[1].uri == 'file://%s' % path and built.sources[1].vertices is None
    hull = rebuilt_object(built, mesh_options=MeshOptions('hull'))
    assert len(hull.pieces) == 2 and hull.pieces[0] is sphere[0]  # the sphere is kept as is
    assert distance_to(hull.pieces[1:]) < 0.0
    path.unlink()
    gone = rebuilt_object(built, mesh_options=MeshOptions('hull'))
    assert gone.pieces == () and gone.error.startswith('meshes[1]: resource: ') or \
        'resource' in gone.error


def test_a_mesh_file_marker_is_built_again_from_its_file(tmp_path):
    from test_component_meshes import EXPECTED_FILE, write_frame_stl
    uri = 'file://' + write_frame_stl(tmp_path / 'frame.stl')
    marker = frame_marker()
    marker.type, marker.points, marker.mesh_resource = marker.MESH_RESOURCE, [], uri
    worker = InlineWorker(EXACT.ingest_limits())
    ctx, _ = context(worker)
    source = MarkerSource('obstacle', ctx)
    source.configure(EXACT)
    source.on_message(rclpy_serialization.serialize_message(MarkerArray(markers=[marker])))
    assert len(pieces_of(settle(source, worker), 'fixtures/0')) > 1
    change(source, worker, HULL)
    (hull,) = pieces_of(settle(source, worker), 'fixtures/0')
    assert distance_to([hull]) < 0.0
    assert [(use.mode, use.label) for use in source.mesh_uses()] == [('hull', 'mesh ' + uri)]
    change(source, worker, EXACT)
    pieces = pieces_of(settle(source, worker), 'fixtures/0')
    assert distance_to(pieces) == pytest.approx(EXPECTED_FILE, abs=1e-12)
