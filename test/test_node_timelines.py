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
Property tests over random input timelines.

The node runs in this process with real rclpy, its real TF buffer, its real ingestion worker
process and the real core; only its clock is driven by the test and its callbacks are called
directly (the DDS wiring is covered by the live-process tests), so that hypothesis can try
hundreds of timelines. A timeline is a random sequence of: TF published or not, time passing,
obstacle sources publishing, stopping, resuming, deleting, valid and invalid markers, the
robot model arriving, and ROS time itself standing still, jumping back or forward, or reading
zero while the steady clock runs on (a simulator's ``/clock``). After every cycle:

- ``~/min_distance`` is -inf whenever some input in scope is not fresh or not ready
  (model missing, TF older than tf_timeout, a silent source, a marker kept past its lifetime
  because its source has not been heard since, a body not built, a rejected body, ROS time
  zero or standing still for longer than clock_timeout);
- otherwise it equals the exact minimum over the pairs in scope (independent computation
  with ``signed_distance``), and so never exceeds it;
- a cycle always publishes (one input never stops the outputs).
"""

from dataclasses import dataclass, field
import math
import time

from gjk_ros.core import ConvexPolytope, signed_distance
from hypothesis import event as hypothesis_event, given, HealthCheck, settings, strategies
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
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

HALF = 0.1
URDF = ('<robot name="r"><link name="arm"><collision><geometry><box size="0.2 0.2 0.2"/>'
        '</geometry></collision></link></robot>')
TF_TIMEOUT = 0.5
OBSTACLE_TIMEOUT = 1.0
CLOCK_TIMEOUT = 0.5
SOURCES = ('a', 'b')


@dataclass
class Truth:
    """What the test published, and the rules of README applied to it independently."""

    now: float = 100.0
    steady: float = 0.0
    ros_advanced_at: float = 0.0     # steady time at which ROS time last changed
    model: bool = False
    tf_stamp: float = None
    tf_good: bool = True
    heard: dict = field(default_factory=dict)        # source -> last publication time
    markers: dict = field(default_factory=dict)      # (source, id) -> (centre, expires, ok)

    def expire(self):
        """Drop markers past their lifetime whose source was heard after it ended."""
        for key, (_, expires, _) in list(self.markers.items()):
            if expires is not None and expires < self.now and \
                    self.heard.get(key[0], -math.inf) > expires:
                del self.markers[key]

    def expected_min(self):
        """-inf if anything in scope is unknown, else the exact minimum."""
        self.expire()
        clock_untrusted = self.now <= 0 or self.steady - self.ros_advanced_at > CLOCK_TIMEOUT
        if not self.model or self.tf_stamp is None or not self.tf_good or clock_untrusted or \
                self.now - self.tf_stamp > TF_TIMEOUT or not self.markers:
            return -math.inf
        distances = []
        for (source, _), (centre, expires, ok) in self.markers.items():
            silent = self.now - self.heard.get(source, -math.inf) > OBSTACLE_TIMEOUT
            past_lifetime = expires is not None and expires < self.now
            if silent or past_lifetime or not ok:
                return -math.inf
            distances.append(exact(centre))
        return min(distances)


def exact(centre):
    pose = numpy.eye(4)
    pose[:3, 3] = centre
    return signed_distance(ConvexPolytope.box([HALF] * 3), numpy.eye(4),
                           ConvexPolytope.box([0.05] * 3), pose).distance


class Driver:
    """The node in this process, with its clock and its publishers replaced."""

    def __init__(self, node):
        self.node = node
        self.truth = Truth()
        node.cycle.clocks.now_ns = lambda: round(self.truth.now * 1e9)
        node.cycle.clocks.steady = lambda: self.truth.steady
        node.cycle.clocks.last_now_ns = node.cycle.clocks.now_ns()
        node.cycle.sources['robot_description'].forget_model()
        self.min_distance = Recorder()
        self.distances = Recorder()
        node.cycle.outputs.min_distance = self.min_distance
        node.cycle.outputs.distances = self.distances
        node.cycle.outputs.names = Recorder()
        node.cycle.outputs.markers = Recorder(listeners=0)

    def tf(self, quaternion=(0.0, 0.0, 0.0, 1.0)):
        transform = TransformStamped()
        transform.header.frame_id, transform.child_frame_id = 'world', 'arm'
        stamp = int(round(self.truth.now * 1e9))
        transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(stamp, 10**9)
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = quaternion
        self.node.cycle.frames.store(serialize_message(TFMessage(transforms=[transform])),
                                     static=False)
        self.truth.tf_stamp = self.truth.now
        self.truth.tf_good = quaternion == (0.0, 0.0, 0.0, 1.0)

    def bad_tf(self):
        """Publish an absurd but finite quaternion: INVALID, never an identity rotation."""
        self.tf((1e154, 1e154, 0.0, 1e154))

    def advance(self, seconds):
        """Both clocks run on."""
        self.truth.now += seconds
        self.truth.steady += seconds
        self.truth.ros_advanced_at = self.truth.steady

    def clock_stands(self, seconds):
        """Only the steady clock runs: /clock stopped or paused."""
        self.truth.steady += seconds

    def clock_jumps(self, seconds):
        """ROS time jumps (a simulator reset, or a jump ahead); back clears TF and sources."""
        before, self.truth.now = self.truth.now, max(self.truth.now + seconds, 0.0)
        if self.truth.now != before:
            self.truth.ros_advanced_at = self.truth.steady
        if self.truth.now < before:
            self.truth.tf_stamp = None
            self.truth.heard.clear()

    def clock_zero(self):
        """ROS time reads zero: use_sim_time and nothing publishes /clock."""
        self.clock_jumps(-self.truth.now)

    def model(self):
        self.node.cycle.sources['robot_description'].on_description(
            serialize_message(String(data=URDF)))
        self.truth.model = True

    def publish(self, source, ids, lifetime, bad):
        markers = []
        for marker_id, centre in ids:
            marker = Marker(ns=source, id=marker_id, type=Marker.CUBE, action=Marker.ADD)
            marker.header.frame_id = 'world'
            marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = centre
            marker.pose.orientation.w = 1.0
            size = float('nan') if bad else 0.1
            marker.scale.x = marker.scale.y = marker.scale.z = size
            marker.lifetime.sec, marker.lifetime.nanosec = 0, int(lifetime * 1e9)
            markers.append(marker)
            expires = self.truth.now + lifetime if lifetime > 0 else None
            self.truth.markers[(source, marker_id)] = (centre, expires, not bad)
        self.node.cycle.sources['obstacles'].on_message(
            serialize_message(MarkerArray(markers=markers)))
        self.truth.heard[source] = self.truth.now

    def delete_all(self, source):
        marker = Marker(ns=source, action=Marker.DELETEALL)
        self.node.cycle.sources['obstacles'].on_message(
            serialize_message(MarkerArray(markers=[marker])))
        self.truth.heard[source] = self.truth.now
        for key in [key for key in self.truth.markers if key[0] == source]:
            del self.truth.markers[key]

    def cycle(self):
        """One cycle once the worker has built what was submitted (bounded wait)."""
        deadline = time.monotonic() + 20.0
        published = len(self.min_distance.messages)
        self.node._run_cycle()
        cycle = self.node.cycle
        while (cycle.ingestor.pending() or cycle.world.bodies.pending_count() or
               cycle.sources['robot_description'].busy) and \
                time.monotonic() < deadline:
            time.sleep(0.005)
            self.node._run_cycle()
        assert len(self.min_distance.messages) > published, 'a cycle published nothing'
        return self.min_distance.messages[-1].data


@pytest.fixture(scope='module')
def driver():
    context = rclpy.context.Context()
    rclpy.init(context=context)
    parameters = [Parameter('tf_timeout', value=TF_TIMEOUT),
                  Parameter('obstacle_timeout', value=OBSTACLE_TIMEOUT),
                  Parameter('clock_timeout', value=CLOCK_TIMEOUT),
                  Parameter('max_distance', value=math.inf),
                  Parameter('rate_hz', value=1000.0)]
    node = DistanceNode(context=context, parameter_overrides=parameters)
    try:
        yield Driver(node)
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


centres = strategies.tuples(*[strategies.sampled_from([-0.6, -0.3, 0.3, 0.6])] * 3)
events = strategies.one_of(
    strategies.tuples(strategies.just('tf')),
    strategies.tuples(strategies.just('bad_tf')),
    strategies.tuples(strategies.just('model')),
    strategies.tuples(strategies.just('advance'),
                      strategies.sampled_from([0.05, 0.2, 0.4, 0.7, 1.2])),
    strategies.tuples(strategies.just('clock_stands'),
                      strategies.sampled_from([0.1, 0.3, 0.6, 1.5])),
    strategies.tuples(strategies.just('clock_jumps'),
                      strategies.sampled_from([-50.0, -0.3, 0.3, 50.0])),
    strategies.tuples(strategies.just('clock_zero')),
    strategies.tuples(strategies.just('publish'), strategies.sampled_from(SOURCES),
                      strategies.lists(strategies.tuples(strategies.integers(0, 2), centres),
                                       min_size=1, max_size=3,
                                       unique_by=lambda item: item[0]),
                      strategies.sampled_from([0.0, 0.3, 2.0]),
                      strategies.sampled_from([False, False, False, True])),
    strategies.tuples(strategies.just('delete_all'), strategies.sampled_from(SOURCES)),
)


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
@given(timeline=strategies.lists(events, min_size=1, max_size=12),
       ready_first=strategies.sampled_from([True, True, True, False]))
def test_min_distance_is_fail_safe_over_random_timelines(driver, timeline, ready_first):
    _reset(driver)
    if ready_first:  # most timelines start from a working robot, to reach measured cycles
        timeline = [('model',), ('tf',)] + timeline
    for event in timeline:
        getattr(driver, event[0])(*event[1:])
        published = driver.cycle()
        expected = driver.truth.expected_min()
        event_name = 'unknown' if expected == -math.inf else 'measured'
        hypothesis_event('cycle: %s' % event_name)
        if expected == -math.inf:
            assert published == -math.inf, (event, driver.truth)
        else:
            assert published <= expected + 1e-9, (event, driver.truth)
            assert published == pytest.approx(expected, abs=1e-9), (event, driver.truth)


def _reset(driver):
    """Start each example from an empty scene: no obstacles, no model, TF forgotten."""
    for source in SOURCES:
        driver.delete_all(source)
    driver.truth = Truth(now=driver.truth.now + 100.0, steady=driver.truth.steady + 100.0,
                         ros_advanced_at=driver.truth.steady + 100.0)
    node = driver.node
    node.cycle.clocks.last_now_ns = node.cycle.clocks.now_ns()
    node.cycle.frames.buffer.clear_dynamic()
    node.cycle.sources['robot_description'].forget_model()
    driver.cycle()
