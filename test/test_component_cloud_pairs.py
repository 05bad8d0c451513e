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
A cloud's pairs measured once: the nearest-point search's answers become the records.

An observation source is fed a cloud and collected as a cycle collects it; the world, the
layout and the pair tracker then make the records, with poses composed as the cycle composes
them. The records must equal brute force (every kept point against every link piece) and the
core's GJK on the same pieces (the tracker with no pair marked as a nearest point), statuses,
padding and the max_distance cull included; and the tracker must not search again when the
cycle's shapes and poses are those the source searched with.
"""

from dataclasses import replace
import time

from component_fakes import context, FakeFrames, NS
from gjk_ros.core import ConvexPolytope
from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.rigid import quaternion_matrix
from gjk_ros.ros.compute.bodies import LINK
from gjk_ros.ros.compute.layout import Layout
from gjk_ros.ros.compute.pairs import InputState, PairTracker
from gjk_ros.ros.inputs.sources.base import CollisionRules, PieceKey, SourceData, SourcePiece
from gjk_ros.ros.inputs.sources.base import state_data
from gjk_ros.ros.params import Config, ObservationSettings
from gjk_ros.ros.records import PairStatus
import numpy
import pytest

pytest.importorskip('rclpy')

from component_fakes import NoDecomposition  # noqa: E402, I100
from gjk_ros.ros.inputs.sources.observations import ObservationSource  # noqa: E402
from sensor_msgs.msg import PointCloud2, PointField  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402, I100

LINKS = {
    'base': [ConvexPolytope.box([0.1, 0.2, 0.05]), ConvexPolytope.sphere(0.06)],
    'upper': [ConvexPolytope.capsule(0.04, 0.3)],
    'lower': [ConvexPolytope.cylinder(0.05, 0.25),
              ConvexPolytope.from_points(numpy.random.default_rng(5).normal(size=(20, 3))
                                         * 0.08, radius=0.01)],
}


def cloud_message(points, stamp_ns):
    message = PointCloud2(height=1, width=len(points), point_step=12,
                          row_step=12 * len(points), is_dense=True)
    message.header.frame_id = 'world'
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, NS)
    message.fields = [PointField(name=axis, offset=4 * index, datatype=PointField.FLOAT32,
                                 count=1) for index, axis in enumerate('xyz')]
    message.data = numpy.asarray(points, dtype='<f4').tobytes()
    return serialize_message(message)


def robot_slot():
    from gjk_ros.models import CollisionPiece
    pieces = []
    for link, shapes in LINKS.items():
        for index, shape in enumerate(shapes):
            origin = numpy.eye(4)
            origin[:3, 3] = [0.02 * index, -0.03 * index, 0.05 * index]
            pieces.append(SourcePiece(LINK, link, PieceKey('robot_description', (link, index)),
                                      CollisionPiece(link, link, origin, shape, 'piece')))
    return state_data(tuple(pieces), 'world')


def place_links(frames, rng, spread=0.5):
    for link in LINKS:
        matrix = numpy.eye(4)
        quaternion = rng.normal(size=4)
        matrix[:3, :3] = quaternion_matrix(*(quaternion / numpy.linalg.norm(quaternion)))
        matrix[:3, 3] = rng.uniform(-spread, spread, 3)
        frames.matrices[link] = matrix


class Scene:
    """A source fed one cloud, the world and a layout, as one cycle runs them."""

    def __init__(self, seed, decomposer=None, **parameters):
        self.rng = numpy.random.default_rng(seed)
        self.ctx, _ = context()
        self.ctx.world.replace('robot_description', robot_slot())
        settings = ObservationSettings('cam', topic='/cam', source_timeout=1.0)
        self.config = Config(observation_sources=('cam',), observations=(settings,),
                             self_filter_padding=0.01, **parameters)
        self.source = ObservationSource(settings, self.ctx)
        self.source.configure(self.config)
        self.frames = FakeFrames()
        place_links(self.frames, self.rng)
        self.points = self.rng.uniform(-1.0, 1.0, (3000, 3))
        self.source.on_message(cloud_message(self.points, self.ctx.clocks.now))
        deadline = time.monotonic() + 60.0
        while not self.collect().pieces and time.monotonic() < deadline:
            time.sleep(0.01)
        assert self.source.cloud is not None, 'no cloud processed within 60 s'
        self.layout = Layout(decomposer or NoDecomposition(), lambda names: None)
        self.layout.configure(self.config)

    def collect(self):
        data = self.source.collect(self.ctx.clocks.now, self.frames)
        self.ctx.world.replace('cam', data)
        return data

    def records(self, max_distance=10.0, tracker=None):
        """Refresh, place, pose (as ``Frames.pose_pieces`` composes) and compute."""
        world, layout = self.ctx.world, self.layout
        layout.refresh(world)
        names, origins, frame_index = layout.placement(world)
        lookups = self.frames.lookup_latest(names, self.ctx.clocks.now)
        frame_poses = numpy.tile(numpy.eye(4), (len(names) + 1, 1, 1))
        for index, name in enumerate(names):
            frame_poses[index] = lookups[name].matrix
        poses = numpy.matmul(frame_poses[frame_index], origins)
        inputs = numpy.zeros(len(poses), dtype=numpy.int64)
        inputs[frame_index == len(names)] = InputState.STALE
        times = numpy.zeros(len(poses), dtype=numpy.int64)
        layout.judge(world, inputs, times)
        self.poses = poses
        return (tracker or layout.tracker).compute(poses, inputs, max_distance)

    def by_gjk(self, max_distance=10.0):
        """Return the same records with every pair measured by GJK (none marked as a point)."""
        tracker = PairTracker()
        layout = self.layout.tracker.layout
        tracker.rebuild(replace(layout, points=numpy.zeros(len(layout.pairs), dtype=bool),
                                measured=numpy.zeros((0, 4), dtype=numpy.int64)),
                        self.layout.shapes)
        return self.records(max_distance, tracker)

    def brute_force(self, link, scale=1.0):
        """Exact distance of every kept point to the link (every piece, as placed now)."""
        kept = self.source.cloud.grid.kept()
        best = numpy.inf
        for index, location in enumerate(self.layout.locations):
            if location.kind == LINK and location.name == link:
                shape = PointDistanceShape(self.layout.shapes[index])
                best = min(best, shape.signed_distances(kept, self.poses[index]).min())
        return best


def assert_answers(records):
    """Witness, point and normal of each measured record satisfy the core's contract."""
    measured = records[records['status'] == PairStatus.VALID]
    link = numpy.c_[measured['link_x'], measured['link_y'], measured['link_z']]
    point = numpy.c_[measured['obstacle_x'], measured['obstacle_y'], measured['obstacle_z']]
    normal = numpy.c_[measured['normal_x'], measured['normal_y'], measured['normal_z']]
    numpy.testing.assert_allclose(numpy.linalg.norm(normal, axis=1), 1.0, atol=1e-12)
    numpy.testing.assert_allclose(point - link, measured['distance'][:, None] * normal,
                                  atol=1e-9)


def compare_with_gjk(scene, records, max_distance=10.0):
    reference = scene.by_gjk(max_distance)
    assert records['status'].tolist() == reference['status'].tolist()
    valid = records['status'] == PairStatus.VALID
    numpy.testing.assert_allclose(records['distance'][valid], reference['distance'][valid],
                                  atol=1e-9)
    for axis in ('obstacle_x', 'obstacle_y', 'obstacle_z'):
        numpy.testing.assert_allclose(records[axis][valid], reference[axis][valid], atol=1e-9)


@pytest.mark.parametrize('seed', range(3))
def test_records_are_the_searches_answers_exact_and_equal_to_gjk(seed):
    scene = Scene(seed)
    for step in range(3):
        work = scene.source.cloud.grid.work.copy()
        records = scene.records()
        # The cycle's shapes and poses are those the source searched with: no new search.
        assert (scene.source.cloud.grid.work == work).all()
        assert len(records) == len(LINKS)
        assert (records['status'] == PairStatus.VALID).all()
        names = {index: name for name, index in
                 ((name, scene.ctx.world.names.id_of(LINK, name)[0]) for name in LINKS)}
        for record in records:
            assert record['distance'] == scene.brute_force(names[record['link_id']])
        assert_answers(records)
        compare_with_gjk(scene, records)
        # The links move after the cloud was filtered: points may now be inside a piece.
        place_links(scene.frames, scene.rng, spread=0.3 + 0.2 * step)
        scene.collect()
    assert scene.layout.tracker._engine is None  # every pair was a cloud's: no GJK at all


def test_a_link_moved_into_the_cloud_measures_a_negative_distance():
    scene = Scene(11)
    inside = scene.source.cloud.grid.kept()[0]
    matrix = numpy.eye(4)
    matrix[:3, 3] = inside  # the base's box is centred here: the point is 0.05 deep in it
    scene.frames.matrices['base'] = matrix
    scene.collect()
    records = scene.records()
    base = scene.ctx.world.names.id_of(LINK, 'base')[0]
    (record,) = records[records['link_id'] == base]
    assert record['distance'] == scene.brute_force('base') < -0.04
    assert_answers(records)
    compare_with_gjk(scene, records)


@pytest.mark.parametrize('max_distance', [0.05, 0.2, 0.5])
def test_padding_and_the_max_distance_cull_are_the_engines(max_distance):
    scene = Scene(21, padding=0.02, link_padding=('upper:0.03',))
    scene.collect()
    records = scene.records(max_distance)
    compare_with_gjk(scene, records, max_distance)
    statuses = set(records['status'].tolist())
    assert statuses <= {PairStatus.VALID, PairStatus.BEYOND}
    upper = scene.ctx.world.names.id_of(LINK, 'upper')[0]
    record = records[records['link_id'] == upper][0]
    if record['status'] == PairStatus.VALID:
        assert record['distance'] == pytest.approx(scene.brute_force('upper') - 0.05, abs=1e-12)


def test_a_scaled_link_is_searched_again_with_its_scaled_shape():
    scene = Scene(31)
    scene.ctx.world.replace('planning_scene', SourceData(
        rules=CollisionRules(scale=(('base', 1.5),))))
    records = scene.records()
    base = scene.ctx.world.names.id_of(LINK, 'base')[0]
    (record,) = records[records['link_id'] == base]
    assert record['distance'] == scene.brute_force('base')
    compare_with_gjk(scene, records)


def test_stale_clouds_and_links_without_transforms_are_stale_not_measured():
    scene = Scene(41)
    scene.ctx.clocks.now += 2 * NS  # older than source_timeout
    scene.collect()
    assert (scene.records()['status'] == PairStatus.STALE).all()
    scene.ctx.clocks.now -= 2 * NS
    scene.collect()
    del scene.frames.matrices['upper']
    scene.collect()
    records = scene.records()
    upper = scene.ctx.world.names.id_of(LINK, 'upper')[0]
    assert records['status'][records['link_id'] == upper].tolist() == [PairStatus.STALE]
    assert (records['status'][records['link_id'] != upper] == PairStatus.VALID).all()


class SplitBase:
    """A decomposer that has just split the base's box in two (after the source collected)."""

    version = 1

    def parts_for(self, piece):
        if piece.body != 'base' or piece.shape is not LINKS['base'][0]:
            return None
        return [ConvexPolytope.box([0.05, 0.2, 0.05]), ConvexPolytope.box([0.1, 0.1, 0.05])]


def test_a_link_piece_without_its_own_nearest_point_is_stale_never_beyond():
    scene = Scene(51, decomposer=SplitBase())
    records = scene.records(max_distance=10.0)
    base = scene.ctx.world.names.id_of(LINK, 'base')[0]
    assert records['status'][records['link_id'] == base].tolist() == [PairStatus.STALE]
    assert (records['status'][records['link_id'] != base] == PairStatus.VALID).all()
