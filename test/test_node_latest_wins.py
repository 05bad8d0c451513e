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
Latest wins: a callback takes what already waits on its subscription before its work.

On a real rclpy graph in this process (no node process): a reliable raw subscription, a burst
published before the executor spins, and the callbacks that follow. The TF input stores every
message of a burst (the buffer keeps the history) and starts its cycle once, on the newest;
overloaded, it decodes newest first within its budget and counts what it drops.
"""

import time

from component_fakes import FakeClocks, NS
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import TransformStamped
from gjk_ros.ros.inputs import frames as frames_module
from gjk_ros.ros.inputs.draining import take_waiting
from gjk_ros.ros.inputs.frames import Frames
from gjk_ros.ros.inputs.tf_messages import TfBatch
from gjk_ros.ros.outputs.diagnostics import InputAges, inputs_status
from gjk_ros.ros.params import Config
from gjk_ros.ros.qos import TF_QOS
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import UInt32
from tf2_msgs.msg import TFMessage

BURST = 40
WAIT_S = 10.0


class _Problems:
    """Count reports; a test here expects none."""

    def __init__(self):
        self.reported = []

    def report(self, key, message, level='error'):
        self.reported.append(message)
        return True

    def resolve(self, key, message=None):
        pass


class _Clocks(FakeClocks):

    def check(self, now_ns):
        pass


@pytest.fixture
def graph(rclpy_context):
    node = rclpy.create_node('latest_wins_test', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()


def spin_until(executor, done, what):
    """Spin until ``done()``; fail naming ``what`` after WAIT_S seconds."""
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, 'timed out waiting for ' + what
        executor.spin_once(timeout_sec=0.1)


def _matched(node, executor, publisher):
    spin_until(executor, lambda: publisher.get_subscription_count() > 0, 'the subscription')


@pytest.mark.parametrize('limit', [BURST, 5])
def test_a_callback_takes_what_waits_in_order_and_at_most_its_limit(graph, limit):
    node, executor = graph
    batches = []

    def on_message(data):
        batches.append([data] + list(take_waiting(subscription, limit)))

    subscription = node.create_subscription(UInt32, 'burst', on_message, TF_QOS, raw=True)
    publisher = node.create_publisher(UInt32, 'burst', TF_QOS)
    _matched(node, executor, publisher)
    for value in range(BURST):
        publisher.publish(UInt32(data=value))
    spin_until(executor, lambda: sum(map(len, batches)) >= BURST, 'the burst')
    taken = [rclpy.serialization.deserialize_message(data, UInt32).data
             for batch in batches for data in batch]
    assert taken == list(range(BURST)), 'every message once, oldest first'
    assert len(batches) < BURST, 'no callback took the messages waiting behind it'
    assert max(map(len, batches)) <= limit + 1


def test_a_destroyed_subscription_yields_nothing(graph):
    node, _ = graph
    subscription = node.create_subscription(UInt32, 'gone', lambda data: None, TF_QOS, raw=True)
    node.destroy_subscription(subscription)
    assert list(take_waiting(subscription, 10)) == []


def _tf(stamp_ns):
    transform = TransformStamped()
    transform.header.frame_id, transform.child_frame_id = 'world', 'hand'
    transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(stamp_ns, NS)
    transform.transform.translation.x = stamp_ns / NS
    transform.transform.rotation.w = 1.0
    return TFMessage(transforms=[transform])


def _tf_burst(graph, configure=None):
    """
    Publish BURST stamped transforms to a subscribed TF input; return it once it took them all.

    Returns (frames, stamps, seen): ``seen`` is the newest stamp in the buffer each time a cycle
    could start.
    """
    node, executor = graph
    seen = []
    frames = Frames(_Problems(), _Clocks(now_ns=200 * NS), lambda: seen.append(
        frames.lookup('world', 'hand', 0).stamp_ns))
    if configure is not None:
        configure(frames)
    frames.subscribe(node)
    publisher = node.create_publisher(TFMessage, '/tf', TF_QOS)
    _matched(node, executor, publisher)
    stamps = [100 * NS + k * NS // 100 for k in range(BURST)]
    for stamp in stamps:
        publisher.publish(_tf(stamp))
    spin_until(executor, lambda: frames.tf_messages + frames.tf_dropped >= BURST, 'the burst')
    frames.close()
    return frames, stamps, seen


def test_a_tf_burst_is_stored_whole_and_its_cycle_sees_the_newest(graph):
    frames, stamps, seen = _tf_burst(graph)
    assert frames.tf_messages == BURST
    assert len(seen) == frames.tf_callbacks < BURST
    assert seen[-1] == stamps[-1], 'the last cycle ran on the newest transform'
    assert seen == sorted(seen)
    # Every message is in the history: a time between two of them interpolates.
    middle = frames.buffer.lookup('world', 'hand', time_ns=(stamps[10] + stamps[11]) // 2)
    assert middle.matrix[0, 3] == pytest.approx((stamps[10] + stamps[11]) / 2 / NS, abs=1e-9)


def test_an_overloaded_tf_input_keeps_the_newest_and_counts_what_it_drops(graph, monkeypatch):
    # Half a period at 1 kHz is 0.5 ms, less than storing one transform is taken to cost.
    monkeypatch.setattr(frames_module, 'STORE_COST', 1e-3)
    frames, stamps, seen = _tf_burst(
        graph, lambda frames: frames.configure(Config(rate_hz=1000.0)))
    assert frames.tf_dropped == BURST - frames.tf_messages > 0
    assert frames.tf_messages <= frames.tf_callbacks, 'at most the newest past the budget'
    assert seen[-1] == stamps[-1], 'the newest transform is never the one dropped'
    assert seen == sorted(seen)


def test_a_cloud_burst_is_taken_by_few_callbacks_and_leaves_the_newest(graph):
    """Clouds queued while the executor was busy: the newest is kept, the rest superseded."""
    from component_fakes import context
    from gjk_ros.ros.inputs.sources.clouds import read_cloud_header
    from gjk_ros.ros.inputs.sources.observations import CloudCounts, ObservationSource
    from gjk_ros.ros.params import ObservationSettings
    from sensor_msgs.msg import PointCloud2
    node, executor = graph
    ctx, _ = context()
    settings = ObservationSettings('cam', topic='/burst_cloud', qos='reliable')
    source = ObservationSource(settings, ctx)
    source.configure(Config(observation_sources=('cam',), observations=(settings,)))
    handled = []
    take = source.on_message
    source.on_message = lambda data: handled.append(take(data))
    source.subscribe(node)
    publisher = node.create_publisher(PointCloud2, '/burst_cloud', 5)
    _matched(node, executor, publisher)
    for k in range(5):  # a reliable depth-5 queue holds them all
        message = PointCloud2()
        message.header.frame_id = 'world'
        message.header.stamp.sec = 100 + k
        publisher.publish(message)
    spin_until(executor, lambda: source.counts.received >= 5, 'the clouds')
    assert len(handled) < 5, 'no callback took the clouds waiting behind it'
    # Each callback keeps its newest; the first cloud kept waits for its transforms (no
    # cycle ran), a newer one replaces the newest: one or two kept, the rest superseded.
    kept = source._pending
    assert read_cloud_header(kept[-1]).stamp_ns == 104 * NS, 'the newest is kept'
    assert source.counts == CloudCounts(received=5, superseded=5 - len(kept))
    source.close()


def test_a_jump_back_forgets_the_held_message_too(monkeypatch):
    """A message held past the /tf budget was received before the jump: it never comes back."""
    from gjk_ros.ros.inputs.tf_buffer import TfStatus
    monkeypatch.setattr(frames_module, 'STORE_COST', 1.0)  # no message fits the budget
    frames = Frames(_Problems(), _Clocks(now_ns=1000 * NS), lambda: None)
    frames.configure(Config(rate_hz=100.0))
    frames.on_tf(rclpy.serialization.serialize_message(_tf(1000 * NS)))
    assert frames.tf_messages == 0, 'held, not stored'
    frames.clear_dynamic()  # ROS time jumped back
    assert frames.lookup('world', 'hand', 0).status != TfStatus.OK
    frames.on_tf(rclpy.serialization.serialize_message(_tf(500 * NS)))
    assert frames.lookup('world', 'hand', 0).stamp_ns == 500 * NS, 'the new time is used'


def test_dropped_transforms_make_the_inputs_entry_warn():
    entry = inputs_status('node', InputAges(tf=0.0, tf_messages=7, tf_dropped=3), 0.5)
    assert entry.level == DiagnosticStatus.WARN
    assert 'overloaded: 3 of 10 /tf messages dropped' in entry.message
    values = {value.key: value.value for value in entry.values}
    assert (values['tf_messages'], values['tf_dropped']) == ('7', '3')
    quiet = inputs_status('node', InputAges(tf=0.0, tf_messages=7), 0.5)
    assert quiet.level == DiagnosticStatus.OK and 'overloaded' not in quiet.message


def test_what_became_of_each_sources_messages_is_in_the_inputs_entry():
    from gjk_ros.ros.inputs.sources.observations import CloudCounts
    counts = CloudCounts(received=9, used=5, superseded=3, refused=1)
    entry = inputs_status('node', InputAges(tf=0.0, source_counts={'camera': counts}), 0.5)
    values = {value.key: value.value for value in entry.values}
    names = ('received', 'used', 'superseded', 'refused')
    assert [values['camera_%s' % name] for name in names] == ['9', '5', '3', '1']


def _batch(edges, stamp_ns):
    return TfBatch.from_entries((parent, child, stamp_ns, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
                                for parent, child in edges)


def test_a_dropped_message_keeps_the_edges_no_kept_message_carries():
    arm = [('base', 'link%d' % k) for k in range(3)]
    kept = [_batch(arm, 30)]
    dropped = [_batch(arm, 20), _batch([('map', 'odom')], 15), _batch(arm, 10),
               _batch([('map', 'odom'), ('base', 'link0')], 5), None]
    extra = frames_module._newest_of_other_edges(dropped, kept)
    assert [(list(zip(b.parents, b.children)), b.stamps.tolist()) for b in extra] == \
        [([('map', 'odom')], [15])], 'the newest of an edge only the dropped messages carry'
    assert frames_module._newest_of_other_edges(dropped[:1], kept) == []


def test_an_overloaded_tf_input_keeps_each_publishers_newest_edge(graph, monkeypatch):
    # A localisation transform sent once among a joint publisher's burst is not starved out.
    monkeypatch.setattr(frames_module, 'STORE_COST', 1e-3)
    node, executor = graph
    frames = Frames(_Problems(), _Clocks(now_ns=200 * NS),
                    lambda: frames.lookup('world', 'hand', 0))  # a cycle stores what is held
    frames.configure(Config(rate_hz=1000.0))
    frames.subscribe(node)
    publisher = node.create_publisher(TFMessage, '/tf', TF_QOS)
    _matched(node, executor, publisher)
    odom = _tf(100 * NS)
    odom.transforms[0].header.frame_id, odom.transforms[0].child_frame_id = 'map', 'odom'
    publisher.publish(odom)
    for k in range(1, BURST):
        publisher.publish(_tf(100 * NS + k * NS // 100))
    spin_until(executor, lambda: frames.tf_messages + frames.tf_dropped >= BURST, 'the burst')
    frames.close()
    assert frames.tf_dropped > 0
    assert frames.lookup('map', 'odom', 0).stamp_ns == 100 * NS
