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
Observation sources through the real node, against a brute-force reference.

The reference measures every remaining point against every link piece with the core's GJK/EPA
on a one-point polytope (not the kernel the node uses), after removing the points within the
self-filter padding of a link. The robot: ``arm`` is a 0.2 m cube on a dynamic frame, ``hand``
a box and a sphere; the camera frame ``cam`` is static and rotated.
"""

import math
import os
import time

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, matrix, NodeProcess, Scene,
                          session_domain_id, STARTUP_TIMEOUT, wait_until)
import numpy
import pytest
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import LaserScan, PointCloud2, PointField

pytestmark = pytest.mark.ros

TOLERANCE = 1e-9
PADDING = 0.02
ARM_POSE = ((0.0, 0.0, 0.5), (0.0, 0.0, 0.0, 1.0))
HAND_POSE = ((0.6, 0.0, 0.5), (0.0, 0.0, 0.3826834323650898, 0.9238795325112867))
CAM_POSE = ((-0.8, 0.3, 0.9), (0.1, 0.2, -0.3, 0.9273618495495703))
URDF = box_urdf('sensorbot', {
    'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))],
    'hand': [('box', (0.1, 0.1, 0.1), (0.0, 0.0, 0.0)), ('sphere', (0.05,), (0.0, 0.3, 0.0))],
})
POINT = ConvexPolytope.from_points(numpy.zeros((1, 3)))
BEST_EFFORT = qos_profile_sensor_data
RELIABLE = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)


def pose_of(xyz_quaternion):
    return matrix(*xyz_quaternion)


def link_pieces():
    """(link, shape, world pose) of every link piece, as the URDF places them."""
    arm, hand = pose_of(ARM_POSE), pose_of(HAND_POSE)
    sphere = hand @ matrix((0.0, 0.3, 0.0))
    return [('arm', ConvexPolytope.box([0.1] * 3), arm),
            ('hand', ConvexPolytope.box([0.05] * 3), hand),
            ('hand', ConvexPolytope.sphere(0.05), sphere)]


def point_distance(shape, pose, point):
    place = numpy.eye(4)
    place[:3, 3] = point
    return signed_distance(shape, pose, POINT, place).distance


def brute_force(points):
    """{link: (distance, point)} over the points the self-filter keeps (every point, piece)."""
    table = numpy.array([[point_distance(shape, pose, p) for _, shape, pose in link_pieces()]
                         for p in points])
    kept = (table > PADDING).all(axis=1)
    best = {}
    for column, (link, _, _) in enumerate(link_pieces()):
        for row in numpy.flatnonzero(kept):
            if link not in best or table[row, column] < best[link][0]:
                best[link] = (table[row, column], points[row])
    return best


def surface_points(rng, count):
    """Points on the arm's and the hand's surfaces: the robot seen by its own camera."""
    faces = rng.uniform(-0.1, 0.1, size=(count, 3))
    faces[numpy.arange(count), rng.integers(0, 3, count)] = rng.choice([-0.1, 0.1], count)
    arm = faces + ARM_POSE[0]
    sphere = pose_of(HAND_POSE) @ matrix((0.0, 0.3, 0.0))
    directions = rng.normal(size=(count, 3))
    ball = sphere[:3, 3] + 0.05 * directions / numpy.linalg.norm(directions, axis=1)[:, None]
    return numpy.vstack([arm, ball])


def scene_points(rng, count):
    """Obstacle points around the robot, and the robot's own surface points."""
    points = rng.uniform([-0.6, -0.8, 0.0], [1.2, 0.8, 1.2], size=(count, 3))
    return numpy.vstack([points, surface_points(rng, count // 10)])


def to_frame(points, pose):
    """World points expressed in a frame at ``pose`` (world <- frame)."""
    inverse = numpy.linalg.inv(pose)
    return points @ inverse[:3, :3].T + inverse[:3, 3]


def cloud_message(points, frame, stamp_ns, dtype='<f8', organized=None, junk=()):
    """Build a PointCloud2 with x, y, z of ``dtype`` behind an intensity field, and junk points."""
    points = numpy.vstack([points] + [numpy.array(junk, dtype=float).reshape(-1, 3)])
    size = numpy.dtype(dtype).itemsize
    layout = numpy.dtype({'names': ['intensity', 'x', 'y', 'z'],
                          'formats': ['<f4', dtype, dtype, dtype],
                          'offsets': [0, 8, 8 + size, 8 + 2 * size],
                          'itemsize': 8 + 3 * size + 4})
    data = numpy.zeros(len(points), dtype=layout)
    data['x'], data['y'], data['z'] = points.T
    datatype = PointField.FLOAT64 if size == 8 else PointField.FLOAT32
    message = PointCloud2()
    message.header.frame_id = frame
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(int(stamp_ns), 10 ** 9)
    message.height, message.width = organized or (1, len(points))
    message.fields = [PointField(name='intensity', offset=0, datatype=PointField.FLOAT32,
                                 count=1)] + [
        PointField(name=axis, offset=8 + index * size, datatype=datatype, count=1)
        for index, axis in enumerate('xyz')]
    message.point_step = layout.itemsize
    message.row_step = layout.itemsize * message.width
    message.data = data.tobytes()
    return message


def scan_message(ranges, frame, stamp_ns, angle_min=-1.0, increment=0.01, range_min=0.05,
                 range_max=4.0):
    message = LaserScan()
    message.header.frame_id = frame
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(int(stamp_ns), 10 ** 9)
    message.angle_min, message.angle_increment = angle_min, increment
    message.angle_max = angle_min + increment * (len(ranges) - 1)
    message.range_min, message.range_max = range_min, range_max
    message.ranges = [float(value) for value in ranges]
    return message


def scan_points(message):
    """Return the scan's points as the reference reads them (float32 values, its frame)."""
    ranges = numpy.array(message.ranges, dtype=numpy.float32).astype(float)
    angles = float(numpy.float32(message.angle_min)) + \
        float(numpy.float32(message.angle_increment)) * numpy.arange(len(ranges))
    with numpy.errstate(invalid='ignore'):
        keep = numpy.isfinite(ranges) & (ranges >= numpy.float32(message.range_min)) & \
            (ranges <= numpy.float32(message.range_max))
    return numpy.stack([ranges * numpy.cos(angles), ranges * numpy.sin(angles),
                        numpy.zeros_like(ranges)], axis=1)[keep]


class Sensors:
    """Publishers of the test's clouds and scans on the scene's node (kept per scene)."""

    _publishers = {}

    def __init__(self, scene):
        self.scene = scene
        self.publishers = Sensors._publishers.setdefault(id(scene), {})

    def send(self, topic, message, qos=BEST_EFFORT):
        key = (topic, id(qos))
        if key not in self.publishers:
            kind = PointCloud2 if isinstance(message, PointCloud2) else LaserScan
            self.publishers[key] = self.scene.node.create_publisher(kind, topic, qos)
        self.publishers[key].publish(message)


def expect_exact(scene, node, source, points, send):
    """Send (at 10 Hz) until each link's record for ``source`` is the brute-force nearest."""
    want = brute_force(points)
    sent = [time.monotonic()]

    def resend():
        if time.monotonic() - sent[0] >= 0.1:
            sent[0] = time.monotonic()
            send()

    def exact(records):
        for link, (distance, point) in want.items():
            record = find_record(records, link, source)
            if record is None or record.status != PairStatus.VALID or \
                    abs(record.distance - distance) > TOLERANCE or \
                    not numpy.allclose(record.point_on_obstacle, point, atol=TOLERANCE):
                resend()
                return False
            gap = record.point_on_obstacle - record.point_on_link
            assert numpy.allclose(gap, record.distance * record.normal, atol=TOLERANCE)
        return True
    return scene.wait_for_records(exact, what='%s exact' % source, node_process=node)


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('node'), {
            'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 10.0,
            'observation_sources': ['cloud', 'scan', 'small'],
            'cloud': {'type': 'pointcloud', 'topic': '/test_cloud', 'source_timeout': 2.0},
            'scan': {'type': 'scan', 'topic': '/test_scan', 'source_timeout': 2.0},
            'small': {'topic': '/test_small', 'source_timeout': 2.0},
            'self_filter_padding': PADDING, 'observation_max_points': 20000}) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'cam', *CAM_POSE)
        send_robot(scene, node)
        yield scene


def send_robot(scene, node):
    """Publish the two-link robot at ARM_POSE and HAND_POSE; wait until the node has it."""
    scene.send_tf('world', 'arm', *ARM_POSE)
    scene.send_tf('world', 'hand', *HAND_POSE)
    scene.send_urdf(URDF)
    wait_until(lambda: {'arm', 'hand'} <= set(scene.name_list('links')),
               STARTUP_TIMEOUT, 'the links on ~/names', node_process=node)


@pytest.mark.parametrize('seed', range(3))
def test_cloud_matches_brute_force(scene, node, seed):
    """Unorganized float64 cloud, best effort, with NaN/inf points and the robot's own points."""
    rng = numpy.random.default_rng(seed)
    points = scene_points(rng, 3000)
    sensors, cam = Sensors(scene), pose_of(CAM_POSE)
    junk = [[math.nan, 0.0, 0.0], [math.inf, 1.0, 1.0], [0.0, -math.inf, math.nan]]

    def send():
        sensors.send('/test_cloud', cloud_message(to_frame(points, cam), 'cam', scene.now_ns(),
                                                  junk=junk))
    send()
    expect_exact(scene, node, 'cloud', points, send)


def test_organized_float32_cloud_reliable_publisher(scene, node):
    rng = numpy.random.default_rng(7)
    local = to_frame(scene_points(rng, 1190), pose_of(CAM_POSE)).astype(numpy.float32)
    local = local[:1300].astype(float)
    cam = pose_of(CAM_POSE)
    world = local @ cam[:3, :3].T + cam[:3, 3]
    sensors = Sensors(scene)

    def send():
        sensors.send('/test_cloud', cloud_message(local, 'cam', scene.now_ns(), dtype='<f4',
                                                  organized=(13, 100)), RELIABLE)
    send()
    expect_exact(scene, node, 'cloud', world, send)


@pytest.mark.parametrize('seed', range(3))
def test_scan_matches_brute_force(scene, node, seed):
    """Seeded scans with inf, NaN and out-of-range returns, best effort."""
    rng = numpy.random.default_rng(3 + seed)
    ranges = rng.uniform(0.2, 3.0, size=200)
    ranges[::17] = math.inf
    ranges[5::23] = math.nan
    ranges[3::29] = 0.01        # under range_min: no return
    ranges[7::31] = 5.0         # over range_max: no return
    sensors, cam = Sensors(scene), pose_of(CAM_POSE)
    message = scan_message(ranges, 'cam', scene.now_ns())
    local = scan_points(message)
    world = local @ cam[:3, :3].T + cam[:3, 3]

    def send():
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(scene.now_ns(), 10 ** 9)
        sensors.send('/test_scan', message)
    send()
    expect_exact(scene, node, 'scan', world, send)


def test_own_points_never_nearest(scene, node):
    """A cloud of only the robot's own surface: nothing remains, no record for the source."""
    rng = numpy.random.default_rng(11)
    own = surface_points(rng, 500)
    far = numpy.array([[3.0, 3.0, 3.0]])
    sensors, cam = Sensors(scene), pose_of(CAM_POSE)

    def send():
        sensors.send('/test_cloud', cloud_message(to_frame(numpy.vstack([own, far]), cam),
                                                  'cam', scene.now_ns()))
    send()
    expect_exact(scene, node, 'cloud', numpy.vstack([own, far]), send)


def test_oversize_cloud_is_refused_by_name(scene, node):
    sensors = Sensors(scene)
    big = numpy.random.default_rng(5).uniform(1.0, 2.0, size=(20001, 3))
    message = cloud_message(big, 'world', scene.now_ns())

    def refused():
        # Resent until heard: a best-effort message sent before discovery is lost.
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(scene.now_ns(), 10 ** 9)
        sensors.send('/test_small', message)
        return node.lines_with("observation source 'small'", 'observation_max_points')
    wait_until(refused, what='the refusal naming the source', node_process=node, period=0.2)
