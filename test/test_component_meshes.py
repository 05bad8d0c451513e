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

"""The node's mesh modes without a ROS graph: parameters, the worker's pieces, diagnostics."""

import math

from component_fakes import context, FakeFrames, InlineWorker
from gjk_ros.models.mesh_bodies import MESH_MODES, MeshUse, parse_mode_overrides, SurfacePiece
from gjk_ros.ros.compute.bodies import BodyRegistry, LINK, OBSTACLE
from gjk_ros.ros.inputs.limits import IngestLimits, MeshSettings
from gjk_ros.ros.inputs.limits import MESH_MODES as NODE_MESH_MODES
from gjk_ros.ros.params import Config
from gjk_ros.ros.params.validation import validate_parameter
import numpy
import pytest
from reference import signed_distance_reference
from test_core_mesh import frame_triangles, triangle_distance

rclpy_serialization = pytest.importorskip('rclpy.serialization')
pytest.importorskip('visualization_msgs.msg')

from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402, I100
from geometry_msgs.msg import Point  # noqa: E402
from gjk_ros.ros.inputs.sources.marker_arrays import MarkerSource  # noqa: E402
from gjk_ros.ros.inputs.sources.parameter_bodies import ParameterBodySource  # noqa: E402
from gjk_ros.ros.inputs.sources.robot_model import RobotModelSource  # noqa: E402
from gjk_ros.ros.outputs.diagnostics import mesh_status  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

# A box of half size 0.1 in the hole of the frame (inner half width 0.3): 0.2 from the mesh,
# inside its hull (a 1 x 1 x 0.2 slab).
LINK_HALF = 0.1
LINK_POINTS = numpy.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                          float) * LINK_HALF
# Brute force over the triangles (the mesh is closed and the box outside it): the reference.
EXPECTED = triangle_distance(LINK_POINTS, numpy.eye(4), frame_triangles())
# An STL file holds float32 coordinates.
EXPECTED_FILE = triangle_distance(LINK_POINTS, numpy.eye(4),
                                  frame_triangles().astype(numpy.float32).astype(float))


# -- parameters -------------------------------------------------------------------------------

def test_mesh_parameters_are_validated_as_the_models_parse_them():
    assert NODE_MESH_MODES == MESH_MODES
    for mode in ('',) + MESH_MODES:
        assert validate_parameter('mesh_mode', mode) is None
    assert 'must be' in validate_parameter('mesh_mode', 'convex')
    entries = ['shelf*:exact', 'panda_*:hull', 'a:b:parts', 'bin: parts']
    assert validate_parameter('mesh_mode_overrides', entries) is None
    assert Config(mesh_mode_overrides=tuple(entries)).ingest_limits().mesh.overrides == \
        parse_mode_overrides(entries)
    for bad in ('shelf', ':exact', 'shelf:solid'):
        assert bad in validate_parameter('mesh_mode_overrides', [bad])
        with pytest.raises(ValueError):
            parse_mode_overrides([bad])
    assert validate_parameter('max_mesh_pieces', 0) is not None
    assert validate_parameter('max_mesh_pieces', 64) is None


def test_a_body_mode_is_its_override_then_mesh_mode_then_its_kind_default():
    settings = Config(mesh_mode_overrides=('shelf*:hull', 'panda_hand:exact'),
                      decompose_meshes=('*/cup.stl',)).ingest_limits().mesh
    assert settings.mode_of('shelf_1', 'obstacle') == ('hull', True)
    assert settings.mode_of('panda_hand', 'link') == ('exact', True)
    assert settings.mode_of('table', 'obstacle') == ('exact', False)
    assert settings.mode_of('panda_link1', 'link') == ('hull', False)
    # decompose_meshes decides a URI's mode only when nobody chose one.
    assert settings.mode_of('cup', 'obstacle', 'package://p/cup.stl') == ('parts', False)
    assert settings.mode_of('shelf_2', 'obstacle', 'package://p/cup.stl') == ('hull', True)
    every = Config(mesh_mode='hull').ingest_limits().mesh
    assert every.mode_of('table', 'obstacle') == ('hull', True)
    assert Config(max_mesh_pieces=7).ingest_limits().mesh == MeshSettings(max_pieces=7)


# -- the worker's pieces ----------------------------------------------------------------------

def frame_marker(ns='fixtures', marker_id=0, frame_id='world'):
    marker = Marker(ns=ns, id=marker_id, type=Marker.TRIANGLE_LIST, action=Marker.ADD)
    marker.header.frame_id = frame_id
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = 1.0
    marker.points = [Point(x=float(x), y=float(y), z=float(z))
                     for x, y, z in frame_triangles().reshape(-1, 3)]
    return marker


def marker_pieces(kind, config=Config(), frame_id='world'):
    ctx, logger = context(InlineWorker(config.ingest_limits()))
    source = MarkerSource(kind, ctx)
    source.configure(config)
    source.on_message(rclpy_serialization.serialize_message(
        MarkerArray(markers=[frame_marker(frame_id=frame_id)])))
    ctx.ingestor.finish()
    data = source.collect(0, FakeFrames())
    return data, source


def distance_to(pieces):
    """Return the link's distance to the union of pieces, each by the independent reference."""
    best = math.inf
    for piece in pieces:
        points = piece.shape.vertices @ piece.origin[:3, :3].T + piece.origin[:3, 3]
        found = signed_distance_reference(LINK_POINTS, points).distance
        best = min(best, max(found, 0.0) if isinstance(piece, SurfacePiece) else found)
    return best


def test_a_non_convex_obstacle_marker_is_its_exact_pieces_and_measures_the_mesh():
    data, source = marker_pieces(OBSTACLE)
    pieces = [entry.piece for entry in data.pieces]
    assert len(pieces) > 1 and {entry.body for entry in data.pieces} == {'fixtures/0'}
    assert len({entry.key for entry in data.pieces}) == len(pieces)
    assert data.frames == ('world',) * len(pieces)
    (use,) = source.mesh_uses()
    assert (use.body, use.mode, use.watertight) == ('fixtures/0', 'exact', True)
    assert use.pieces == len(pieces)
    assert not any(isinstance(piece, SurfacePiece) for piece in pieces)
    # The box in the hole is 0.2 from the frame: the exact pieces say so, the hull overlaps.
    assert EXPECTED == pytest.approx(0.2, abs=1e-15)
    assert distance_to(pieces) == pytest.approx(EXPECTED, abs=1e-12)
    hull, _ = marker_pieces(OBSTACLE, Config(mesh_mode='hull'))
    (entry,) = hull.pieces
    assert distance_to([entry.piece]) < 0.0


def test_a_link_marker_keeps_its_hull_unless_an_override_names_it():
    data, source = marker_pieces(LINK, frame_id='tool')
    assert len(data.pieces) == 1 and data.pieces[0].body == 'tool'
    exact, source = marker_pieces(LINK, Config(mesh_mode_overrides=('tool:exact',)), 'tool')
    assert len(exact.pieces) > 1 and source.mesh_uses()[0].body == 'tool'


def test_an_open_mesh_is_surface_pieces_and_said_not_watertight_by_name():
    triangles = frame_triangles()[:-2]  # one inner wall triangle pair gone: open
    marker = frame_marker()
    marker.points = [Point(x=float(x), y=float(y), z=float(z))
                     for x, y, z in triangles.reshape(-1, 3)]
    ctx, logger = context(InlineWorker(IngestLimits()))
    source = MarkerSource(OBSTACLE, ctx)
    source.configure(Config())
    source.on_message(rclpy_serialization.serialize_message(MarkerArray(markers=[marker])))
    ctx.ingestor.finish()
    data = source.collect(0, FakeFrames())
    (use,) = source.mesh_uses()
    assert use.watertight is False
    assert any(isinstance(entry.piece, SurfacePiece) for entry in data.pieces)
    warnings = [text for entry in data.pieces for text in entry.piece.warnings]
    assert len(warnings) == 1 and warnings[0].startswith('fixtures/0: ')
    assert 'not watertight' in warnings[0]


def write_frame_stl(path):
    trimesh = pytest.importorskip('trimesh')
    triangles = frame_triangles()
    mesh = trimesh.Trimesh(triangles.reshape(-1, 3), numpy.arange(len(triangles) * 3)
                           .reshape(-1, 3), process=True)
    mesh.export(str(path))
    return str(path)


def test_parameter_and_urdf_meshes_are_built_in_their_mode_and_rebuilt_when_it_changes(
        tmp_path):
    uri = 'file://' + write_frame_stl(tmp_path / 'frame.stl')
    text = '[{name: fixture, pieces: [{type: mesh, uri: "%s"}]}]' % uri
    config = Config(static_obstacles=text)
    worker = InlineWorker(config.ingest_limits())
    ctx, _ = context(worker)
    source = ParameterBodySource(ctx)
    source.configure(config)
    ctx.ingestor.finish()
    pieces = [entry.piece for entry in source.collect(0, FakeFrames()).pieces]
    assert len(pieces) > 1 and distance_to(pieces) == pytest.approx(EXPECTED_FILE, abs=1e-12)
    (use,) = source.mesh_uses()
    assert (use.mode, use.watertight, use.label) == ('exact', True, 'mesh ' + uri)
    # mesh_mode hull: built again (the worker restarts with the new settings in the node).
    config = Config(static_obstacles=text, mesh_mode='hull')
    worker.state.limits = config.ingest_limits()
    source.configure(config)
    ctx.ingestor.finish()
    (entry,) = source.collect(0, FakeFrames()).pieces
    assert entry.piece.mesh == () and distance_to([entry.piece]) < 0.0
    (use,) = source.mesh_uses()
    # The hull's top reaches 0.3 beyond the mesh at the hole's centre.
    assert use.mode == 'hull' and use.hull_deviation == pytest.approx(0.3, abs=0.01)

    urdf = ('<robot name="r"><link name="holder"><collision><geometry><mesh filename="%s"/>'
            '</geometry></collision></link></robot>' % uri)
    config = Config(mesh_mode_overrides=('holder:exact',))
    worker = InlineWorker(Config().ingest_limits())
    ctx, _ = context(worker)
    robot = RobotModelSource(ctx)
    robot.configure(Config())
    robot.on_description(rclpy_serialization.serialize_message(String(data=urdf)))
    ctx.ingestor.finish()
    (entry,) = robot.collect(0, FakeFrames()).pieces
    assert entry.kind == LINK and robot.mesh_uses()[0].mode == 'hull'
    worker.state.limits = config.ingest_limits()
    robot.configure(config)
    ctx.ingestor.finish()
    pieces = [entry.piece for entry in robot.collect(0, FakeFrames()).pieces]
    assert len(pieces) > 1 and distance_to(pieces) == pytest.approx(EXPECTED_FILE, abs=1e-12)
    assert robot.mesh_uses()[0].mode == 'exact'


def test_a_mesh_past_the_piece_bound_keeps_its_hull_and_says_so():
    data, source = marker_pieces(OBSTACLE, Config(max_mesh_pieces=2))
    (entry,) = data.pieces
    (use,) = source.mesh_uses()
    assert use.mode == 'hull' and 'more than 2 convex pieces' in use.note
    assert any('more than 2 convex pieces' in text for text in entry.piece.warnings)


def file_marker_pieces(uri, config):
    marker = frame_marker()
    marker.type, marker.mesh_resource, marker.points = Marker.MESH_RESOURCE, uri, []
    ctx, _ = context(InlineWorker(config.ingest_limits()))
    source = MarkerSource(OBSTACLE, ctx)
    source.configure(config)
    source.on_message(rclpy_serialization.serialize_message(MarkerArray(markers=[marker])))
    ctx.ingestor.finish()
    return source.collect(0, FakeFrames()).pieces, source.mesh_uses()


def test_decompose_meshes_wins_over_mesh_mode_and_an_override_wins_over_both(tmp_path):
    uri = 'file://' + write_frame_stl(tmp_path / 'frame.stl')
    for mode in ('', 'hull', 'exact', 'parts'):
        pieces, (use,) = file_marker_pieces(uri, Config(mesh_mode=mode,
                                                        decompose_meshes=('*/frame.stl',)))
        # The hull, kept decomposable: the decomposer replaces it by its parts once ready.
        (entry,) = pieces
        assert use.mode == 'parts' and not use.note, mode
        assert entry.piece.mesh == (uri, (1.0, 1.0, 1.0))
    for override, count in (('hull', 1), ('exact', 2)):
        pieces, (use,) = file_marker_pieces(uri, Config(
            mesh_mode_overrides=('fixtures/*:%s' % override,), decompose_meshes=('*.stl',)))
        assert use.mode == override and len(pieces) >= count
        assert all(entry.piece.mesh == () for entry in pieces)


def test_a_piece_that_changes_only_its_mesh_or_warnings_is_a_new_version(tmp_path):
    # The body registry keeps a piece of unchanged shape (its tracked caches survive), but the
    # layout also acts on the decomposable mesh and logs each warning: a hull made
    # decomposable, or one kept past max_mesh_pieces, must reach it.
    uri = 'file://' + write_frame_stl(tmp_path / 'frame.stl')
    builds = [file_marker_pieces(uri, config)[0] for config in (
        Config(mesh_mode='hull'), Config(mesh_mode='hull', decompose_meshes=('*.stl',)),
        Config(max_mesh_pieces=1))]
    shapes = [entry.piece.shape.vertices for (entry,) in builds]
    assert all(numpy.array_equal(shapes[0], other) for other in shapes[1:])
    registry = BodyRegistry()
    versions, uids = [], set()
    for (entry,) in builds + [builds[-1]]:
        registry.set_piece(OBSTACLE, 'frame', entry.key, entry.piece)
        versions.append(registry.version)
        uids.update(tracked.uid for tracked in registry.pieces(OBSTACLE, 'frame'))
    assert versions[0] < versions[1] < versions[2] == versions[3], 'the same piece again'
    assert len(uids) == 1, 'a piece of unchanged shape keeps its tracked identity'


# -- diagnostics ------------------------------------------------------------------------------

def test_the_meshes_entry_says_what_each_body_became():
    uses = [MeshUse('shelf', 'mesh package://p/shelf.stl', 'exact', 12, True),
            MeshUse('bin', 'mesh of 40 triangles', 'exact', 30, False),
            MeshUse('panda_link1', 'mesh package://p/link1.stl', 'hull', 1, None, 0.0013),
            MeshUse('cupboard', 'mesh c.stl', 'hull', 1, None, math.nan,
                    'cupboard: c.stl needs more than 4 convex pieces to be exact; using its '
                    'convex hull')]
    status = mesh_status('gjk', uses)
    values = {value.key: value.value for value in status.values}
    assert status.level == DiagnosticStatus.WARN
    assert values['shelf'] == 'mesh package://p/shelf.stl: exact, 12 piece(s), watertight'
    assert 'not watertight' in values['bin']
    assert values['panda_link1'].endswith('hull, reaches 0.0013 m beyond the mesh')
    assert 'more than 4 convex pieces' in values['cupboard']
    assert status.message.startswith('4 mesh(es): 2 exact, 2 hull')
    assert 'bin' in status.message and 'cupboard' in status.message
    quiet = mesh_status('gjk', uses[:1])
    assert quiet.level == DiagnosticStatus.OK
