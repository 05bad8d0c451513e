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
Output stamps and tf2's rules through the node.

The node runs in this process with real rclpy, its real TF buffer, its real ingestion worker
and the real core; its ROS clock is driven by the test in integer nanoseconds near today's
epoch (where a float of seconds is off by up to 128 ns) and its callbacks are called directly,
so that hypothesis can try many timelines. Checked:

- every output header of a cycle (``~/distances``, ``~/safety``, ``~/safety_detail``) is, to
  the nanosecond, the stamp of the oldest datum the cycle's records rest on, computed here
  independently: a transform chain's latest common time or a marker source's receive time;
- tf2's behaviours of test/test_tf2_semantics.py hold through the node: a non-unit quaternion
  is normalised and measured, a late message naming an old parent keeps the newer history, a
  chain of tf2's depth is measured and a deeper one refused without stopping the outputs;
- a datum stamped outside what a header can carry is refused by name (TF, markers, clouds).
"""

from dataclasses import dataclass, field
import math
import time

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros.inputs.tf_buffer import MAX_GRAPH_DEPTH
from gjk_ros.ros.inputs.timekeeping import MAX_STAMP_NS, NS_PER_S, TIMELESS, UNKNOWN
from gjk_ros.ros.records import PairStatus, read_distances
from hypothesis import given, HealthCheck, settings, strategies
import numpy
import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('tf2_msgs')

from component_fakes import Recorder  # noqa: E402, I100
from geometry_msgs.msg import TransformStamped  # noqa: E402, I100
from gjk_ros.ros.node import DistanceNode  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import PointCloud2, PointField  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

# A rod along x (rotations show), and a cube on it.
ROD = (0.4, 0.1, 0.1)
CUBE = 0.1
URDF = ('<robot name="r">'
        '<link name="arm"><collision><geometry><box size="%g %g %g"/></geometry></collision>'
        '</link><link name="hand"><collision><geometry><box size="%g %g %g"/></geometry>'
        '</collision></link></robot>' % (ROD + (CUBE,) * 3))
LINK_FRAMES = {'arm': ('arm',), 'hand': ('hand', 'arm')}  # each link's chain up to 'world'
OBSTACLE = 0.05
EPOCH_NS = 1_764_000_000 * NS_PER_S + 992_890_186  # late 2025, with nanoseconds
STATIC_NAMESPACE = 'fixture'


def stamp_ns(header):
    return header.stamp.sec * NS_PER_S + header.stamp.nanosec


def transform(parent, child, stamp, xyz=(0.0, 0.0, 0.0), quaternion=(0.0, 0.0, 0.0, 1.0)):
    message = TransformStamped()
    message.header.frame_id, message.child_frame_id = parent, child
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp, NS_PER_S)
    translation, rotation = message.transform.translation, message.transform.rotation
    translation.x, translation.y, translation.z = (float(v) for v in xyz)
    rotation.x, rotation.y, rotation.z, rotation.w = (float(v) for v in quaternion)
    return message


@dataclass
class Truth:
    """What the test sent, and the stamp rule of docs/semantics.md applied to it here."""

    now: int = EPOCH_NS
    steady: float = 0.0
    edges: dict = field(default_factory=dict)    # frame -> (static, [stamps])
    heard: dict = field(default_factory=dict)    # namespace -> receive time (ns)
    markers: set = field(default_factory=set)    # namespaces with a live marker
    sent: set = field(default_factory=set)       # every stamp and receive time sent

    def link_time(self, link):
        """tf2's latest common time of the link's chain, TIMELESS or UNKNOWN."""
        chain = [self.edges.get(frame) for frame in LINK_FRAMES[link]]
        if any(edge is None for edge in chain):
            return UNKNOWN
        dynamic = [stamps for static, stamps in chain if not static]
        if not dynamic:
            return TIMELESS
        common = min(stamps[-1] for stamps in dynamic)
        if any(stamps[0] > common for stamps in dynamic):
            return UNKNOWN  # an edge has no data that old: extrapolation
        return common

    def header_stamp(self):
        """Return the oldest datum of the records; 0 if only unknown ones; now if timeless."""
        records = [min(self.link_time(link),
                       TIMELESS if namespace == STATIC_NAMESPACE else self.heard[namespace])
                   for link in LINK_FRAMES for namespace in self.markers]
        dated = [stamp for stamp in records if stamp not in (TIMELESS, UNKNOWN)]
        if dated:
            return min(dated)
        return 0 if UNKNOWN in records else self.now


class Driver:
    """The node in this process, with its clock and its stamped publishers replaced."""

    def __init__(self, node):
        self.node = node
        self.truth = Truth()
        node.cycle.clocks.now_ns = lambda: self.truth.now
        node.cycle.clocks.steady = lambda: self.truth.steady
        node.cycle.clocks.last_now_ns = self.truth.now
        self.outputs = {name: Recorder() for name in ('distances', 'safety', 'safety_detail')}
        for name, recorder in self.outputs.items():
            setattr(node.cycle.outputs, name, recorder)
        node.cycle.outputs.names = Recorder()
        node.cycle.outputs.markers = Recorder(listeners=0)
        node.cycle.sources['robot_description'].on_description(
            serialize_message(String(data=URDF)))

    def tf(self, frame, age_ns, static=False, xyz=(0.0, 0.0, 0.0),
           quaternion=(0.0, 0.0, 0.0, 1.0)):
        parent = 'world' if frame == 'arm' else 'arm'
        stamp = self.truth.now - age_ns
        self.send([transform(parent, frame, stamp, xyz, quaternion)], static)
        old_static, stamps = self.truth.edges.get(frame, (static, []))
        stamps = sorted(set(stamps + [stamp])) if old_static == static else [stamp]
        self.truth.edges[frame] = (static, stamps)
        self.truth.sent.add(stamp)

    def send(self, transforms, static=False):
        self.node.cycle.frames.store(serialize_message(TFMessage(transforms=transforms)), static)

    def advance(self, nanoseconds):
        self.truth.now += nanoseconds
        self.truth.steady += nanoseconds * 1e-9

    def publish(self, namespace, markers=None):
        if markers is None:
            markers = [cube_marker(namespace, (0.6, 0.0, 0.0))]
        self.node.cycle.sources['obstacles'].on_message(
            serialize_message(MarkerArray(markers=markers)))
        self.truth.heard[namespace] = self.truth.now
        self.truth.sent.add(self.truth.now)
        if any(marker.action == Marker.ADD for marker in markers):
            self.truth.markers.add(namespace)

    def delete_all(self, namespace):
        self.publish(namespace, [Marker(ns=namespace, action=Marker.DELETEALL)])
        self.truth.markers.discard(namespace)

    def cycle(self):
        """One cycle once the worker has built what was submitted; return its header stamp."""
        deadline = time.monotonic() + 30.0
        published = len(self.outputs['distances'].messages)
        self.node._run_cycle()
        cycle = self.node.cycle
        while (cycle.ingestor.pending() or cycle.world.bodies.pending_count() or
               cycle.sources['robot_description'].busy) and \
                time.monotonic() < deadline:
            time.sleep(0.005)
            self.node._run_cycle()
        assert len(self.outputs['distances'].messages) > published, 'a cycle published nothing'
        assert not self.node.problems.active(('cycle',)), self.node.problems.active(('cycle',))
        headers = [self.outputs[name].messages[-1].header for name in self.outputs]
        stamps = {stamp_ns(header) for header in headers}
        assert len(stamps) == 1, 'the outputs of one cycle carry one stamp'
        return stamps.pop()

    def records(self):
        return read_distances(self.outputs['distances'].messages[-1])

    def record(self, link):
        names = self.node.cycle.world.names
        found = [record for record in self.records()
                 if names.names_by_id('link').get(record.link_id) == link]
        assert len(found) == 1, found
        return found[0]

    def reset(self):
        """Start from no transform and no obstacle (the robot model stays)."""
        for namespace in list(self.truth.markers) + ['a', 'b', STATIC_NAMESPACE]:
            self.delete_all(namespace)
        self.truth = Truth(now=self.truth.now + 100 * NS_PER_S,
                           steady=self.truth.steady + 100.0)
        self.node.cycle.clocks.last_now_ns = self.truth.now
        self.node.cycle.frames.buffer._edges.clear()  # static transforms too: a new robot
        self.cycle()


def cube_marker(namespace, xyz, frame_id='world', stamp=0, frame_locked=True):
    marker = Marker(ns=namespace, id=0, type=Marker.CUBE, action=Marker.ADD)
    marker.header.frame_id = frame_id
    marker.header.stamp.sec, marker.header.stamp.nanosec = divmod(stamp, NS_PER_S)
    marker.frame_locked = frame_locked
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = xyz
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = 2 * OBSTACLE
    return marker


@pytest.fixture(scope='module')
def driver():
    context = rclpy.context.Context()
    rclpy.init(context=context)
    parameters = [Parameter('tf_timeout', value=1.0),
                  Parameter('obstacle_timeout', value=1.0),
                  Parameter('max_distance', value=math.inf),
                  Parameter('rate_hz', value=1000.0),
                  Parameter('static_obstacle_namespaces', value=[STATIC_NAMESPACE]),
                  Parameter('observation_sources', value=['cam']),
                  Parameter('cam.topic', value='/test_cam')]
    node = DistanceNode(context=context, parameter_overrides=parameters)
    try:
        yield Driver(node)
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


# -- every header is exactly the oldest datum ---------------------------------------------------

ages = strategies.integers(0, 300_000_000)
events = strategies.one_of(
    strategies.tuples(strategies.just('tf'), strategies.sampled_from(['arm', 'hand']), ages,
                      strategies.sampled_from([False, False, False, True])),
    strategies.tuples(strategies.just('advance'), strategies.integers(1, 700_000_000)),
    strategies.tuples(strategies.just('publish'),
                      strategies.sampled_from(['a', 'b', STATIC_NAMESPACE])),
    strategies.tuples(strategies.just('delete_all'), strategies.sampled_from(['a', 'b'])),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
@given(timeline=strategies.lists(events, min_size=1, max_size=12))
def test_every_header_is_exactly_the_oldest_datum_of_its_cycle(driver, timeline):
    driver.reset()
    for event in [('publish', 'a'), ('tf', 'arm', 0, False)] + timeline:
        getattr(driver, event[0])(*event[1:])
        published = driver.cycle()
        assert published == driver.truth.header_stamp(), (event, driver.truth)
        assert published in driver.truth.sent | {0, driver.truth.now}


# -- tf2's rules through the node ---------------------------------------------------------------

def rod_distance(rod_pose, obstacle_xyz):
    obstacle = numpy.eye(4)
    obstacle[:3, 3] = obstacle_xyz
    return signed_distance(ConvexPolytope.box([v / 2 for v in ROD]), rod_pose,
                           ConvexPolytope.box([OBSTACLE] * 3), obstacle).distance


def pose(xyz=(0.0, 0.0, 0.0), yaw=0.0):
    matrix = numpy.eye(4)
    matrix[:2, :2] = [[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]
    matrix[:3, 3] = xyz
    return matrix


def test_a_non_unit_static_quaternion_is_normalised_and_measured(driver):
    # static_transform_publisher passes the quaternion it is given; tf2 normalises (0, 0, 1, 1)
    # to a 90 degree yaw (test_tf2_semantics: a finite non-unit quaternion is normalised).
    driver.reset()
    driver.send([transform('world', 'arm', 0, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0, 1.0))],
                static=True)
    driver.tf('hand', 0, static=True, xyz=(0.0, 5.0, 0.0))
    driver.publish('a', [cube_marker('a', (0.0, 0.35, 0.0))])
    driver.cycle()
    record = driver.record('arm')
    assert record.status == PairStatus.VALID
    expected = rod_distance(pose(yaw=math.pi / 2), (0.0, 0.35, 0.0))
    assert record.distance == pytest.approx(expected, abs=1e-9)
    assert expected == pytest.approx(0.1)  # the rod turned: along y, 0.2 m from its centre


def test_a_late_message_naming_the_old_parent_keeps_the_newer_history(driver):
    # A grasp: arm under 'world' until t1, under 'carrier' from t2; a message stamped between
    # them that still names 'world' arrives last (test_tf2_semantics: re-parenting).
    driver.reset()
    driver.send([transform('world', 'carrier', 0, (1.0, 0.0, 0.0))], static=True)
    driver.tf('hand', 0, static=True, xyz=(0.0, 5.0, 0.0))
    driver.publish('a', [cube_marker('a', (1.5, 0.0, 0.0))])
    now = driver.truth.now
    driver.send([transform('world', 'arm', now - 300_000_000)])
    driver.send([transform('carrier', 'arm', now - 100_000_000)])
    driver.send([transform('world', 'arm', now - 200_000_000)])
    stamp = driver.cycle()
    record = driver.record('arm')
    assert record.status == PairStatus.VALID
    assert record.distance == pytest.approx(rod_distance(pose((1.0, 0.0, 0.0)),
                                                         (1.5, 0.0, 0.0)), abs=1e-9)
    assert stamp == now - 100_000_000


def test_a_chain_of_tf2_depth_is_measured_and_a_deeper_one_refused(driver):
    driver.reset()
    frames = ['world'] + ['link_%d' % index for index in range(MAX_GRAPH_DEPTH - 1)] + ['arm']
    driver.send([transform(parent, child, 0, (0.001, 0.0, 0.0))
                 for parent, child in zip(frames, frames[1:])], static=True)
    driver.tf('hand', 0, static=True, xyz=(0.0, 5.0, 0.0))
    driver.publish('a', [cube_marker('a', (1.5, 0.0, 0.0))])
    driver.cycle()
    record = driver.record('arm')
    assert record.status == PairStatus.VALID  # 1000 edges: as deep as tf2 goes
    assert record.distance == pytest.approx(rod_distance(pose((1.0, 0.0, 0.0)),
                                                         (1.5, 0.0, 0.0)), abs=1e-9)
    driver.send([transform('world', 'above', 0)], static=True)
    driver.send([transform('above', 'link_0', 0, (0.001, 0.0, 0.0))], static=True)
    published = len(driver.outputs['distances'].messages)
    driver.cycle()  # 1001 edges: refused, never raised; the outputs keep coming
    assert len(driver.outputs['distances'].messages) == published + 1
    assert driver.record('arm').status == PairStatus.INVALID
    assert driver.record('hand').status == PairStatus.INVALID  # hand hangs off arm
    assert 'MAX_GRAPH_DEPTH' in ' '.join(driver.node.problems.active(('frame',)).values())


def test_a_transform_stamped_past_int32_seconds_is_refused_by_name(driver):
    driver.reset()
    driver.tf('arm', 0)
    driver.tf('hand', 0)
    driver.publish('a')
    good = driver.cycle()
    past_the_end = (2 ** 31 - 1) * NS_PER_S + 2 ** 32 - 1  # sec 2^31 - 1, nanosec 2^32 - 1
    driver.send([transform('world', 'arm', past_the_end)])
    assert driver.cycle() == good
    reports = driver.node.problems.active(('tf',))
    assert any("'world' -> 'arm'" in text and 'header' in text for text in reports.values())
    driver.advance(2 * NS_PER_S)  # the refused datum never ages into the output either
    stamp = driver.cycle()
    assert stamp == good and 0 <= stamp <= MAX_STAMP_NS
    assert driver.record('arm').status == PairStatus.STALE
    driver.tf('arm', 0)  # a good one clears the report
    driver.cycle()
    assert not driver.node.problems.active(('tf',))


def test_a_marker_placed_at_an_impossible_stamp_is_rejected_by_name(driver):
    driver.reset()
    driver.tf('arm', 0)
    driver.tf('hand', 0)
    marker = cube_marker('a', (0.6, 0.0, 0.0), frame_id='arm', stamp=-NS_PER_S,
                         frame_locked=False)
    marker.header.stamp.sec, marker.header.stamp.nanosec = -1, 0
    driver.publish('a', [marker])
    driver.cycle()
    assert driver.record('arm').status == PairStatus.INVALID
    reports = driver.node.problems.active(('body',)).values()
    assert any("'a/0' rejected" in text and 'header' in text for text in reports), reports


def test_a_cloud_stamped_past_int32_seconds_is_refused_by_name(driver):
    driver.reset()
    driver.tf('arm', 0)
    driver.tf('hand', 0)
    cloud = PointCloud2(height=1, width=1, point_step=12, row_step=12, is_dense=True)
    cloud.header.frame_id = 'world'
    cloud.header.stamp.sec, cloud.header.stamp.nanosec = 2 ** 31 - 1, 2 ** 32 - 1
    cloud.fields = [PointField(name=axis, offset=4 * index, datatype=PointField.FLOAT32,
                               count=1) for index, axis in enumerate('xyz')]
    cloud.data = numpy.array([1.0, 0.0, 0.0], dtype='<f4').tobytes()
    source = driver.node.cycle.sources['cam']
    source.on_message(serialize_message(cloud))
    driver.cycle()
    assert source.failure is not None and 'header' in source.failure
    assert "'cam'" in ' '.join(driver.node.problems.active(('input',)).values())
