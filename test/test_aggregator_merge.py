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
The aggregator's rules without a ROS graph: summaries, the merge, silence, when it publishes.

Shard summaries are real ``~/safety_detail`` messages built as the node builds them
(``outputs/publishers.py``'s keys); time is a number the test sets (the steady clock), and the
publishers are ``component_fakes.Recorder``.
"""

import math

from component_fakes import Recorder
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from gjk_ros.ros.shards.board import is_news, ShardBoard
from gjk_ros.ros.shards.outputs import AggregatorOutputs, ERROR, OK, WARN
from gjk_ros.ros.shards.settings import resolved, settings_from
from gjk_ros.ros.shards.summary import merge, read_summary, ShardSummary
from gjk_ros.ros.shards.watch import ShardWatch
from hypothesis import given, strategies
import pytest

NS = 1_000_000_000
DEADLINE = 0.25
A, B, C = '/robot/a/gjk_distance', '/robot/b/gjk_distance', '/robot/c/gjk_distance'


def detail(minimum, factor=1.0, stamp_ns=5 * NS, ready=True, frame_id='world', cause=None,
           **extra):
    """Return a shard's ~/safety_detail with the node's keys and value formats."""
    message = DiagnosticArray()
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, NS)
    values = {'min_distance': repr(float(minimum)), 'link': 'arm', 'obstacle': 'box/0',
              'ready': str(ready).lower(), 'frame_id': frame_id,
              'speed_scaling': repr(float(factor))}
    values.update(extra)
    message.status = [DiagnosticStatus(
        name='gjk_distance: safety', message=cause or 'closest: arm to box/0 (VALID)',
        values=[KeyValue(key=key, value=value) for key, value in values.items()])]
    return message


def summary(minimum, factor=1.0, stamp_ns=5 * NS, ready=True):
    return ShardSummary(minimum=minimum, factor=factor, stamp_ns=stamp_ns, frame_id='world',
                        ready=ready, cause='closest', link='arm', obstacle='box/0')


# -- reading a shard's summary --------------------------------------------------------------

def test_a_summary_is_read_exactly_from_the_detail():
    read = read_summary(detail(0.1 + 0.2, factor=0.25, stamp_ns=7 * NS + 3))
    assert read.minimum == 0.1 + 0.2  # the float64 repr, not Range's float32
    assert read.factor == 0.25 and read.stamp_ns == 7 * NS + 3 and read.ready
    assert read.frame_id == 'world' and read.link == 'arm' and read.obstacle == 'box/0'
    assert not read.unknown and read.max_distance == math.inf  # not said: no limit


@pytest.mark.parametrize('text, read', [('0.75', 0.75), ('inf', math.inf), ('nan', math.inf),
                                        ('-1.0', math.inf), ('0.0', math.inf),
                                        ('far', math.inf)])
def test_the_announced_max_distance_is_positive_or_none(text, read):
    summary = read_summary(detail(0.3, max_distance=text))
    assert summary.max_distance == read and not summary.unknown  # informative only


@pytest.mark.parametrize('minimum, ready', [(-math.inf, False), (-math.inf, True),
                                            (0.3, False)])
def test_unknown_or_not_ready_summaries_are_unknown(minimum, ready):
    assert read_summary(detail(minimum, factor=0.0, ready=ready)).unknown


@pytest.mark.parametrize('message, named', [
    (DiagnosticArray(), 'no status'),
    (detail(0.3, min_distance='close'), "'min_distance' is not a number"),
    (detail(0.3, min_distance='nan'), "'min_distance' is nan"),
    (detail(0.3, speed_scaling='1.5'), "'speed_scaling' is 1.5"),
    (detail(0.3, speed_scaling='nan'), "'speed_scaling' is nan"),
    (detail(0.3, ready='yes'), "'ready' is neither"),
])
def test_an_unreadable_summary_is_refused_naming_the_value(message, named):
    with pytest.raises(ValueError, match=named):
        read_summary(message)


def test_an_unreadable_message_makes_its_shard_unknown_not_silent():
    watch = ShardWatch(A, DEADLINE)
    watch.heard(detail(0.3, speed_scaling='2.0', stamp_ns=9 * NS), 1.0)
    assert watch.silence(1.0) is None
    assert watch.summary.unknown and watch.summary.stamp_ns == 9 * NS
    assert 'unreadable summary' in watch.summary.cause and watch.unreadable == 1
    result = merge([(A, watch.summary, None)])
    assert result.minimum == -math.inf and result.factor == 0.0 and result.unknown == (A,)


# -- the merge rules --------------------------------------------------------------------------

def test_the_minimum_is_the_closest_shard_and_the_factor_the_smallest():
    result = merge([(A, summary(0.4, factor=1.0, stamp_ns=8 * NS), None),
                    (B, summary(0.2, factor=0.6, stamp_ns=6 * NS), None),
                    (C, summary(0.3, factor=0.5, stamp_ns=7 * NS), None)])
    assert result.minimum == 0.2 and result.shard == B and result.factor == 0.5
    assert result.stamp_ns == 6 * NS  # the oldest stamp used
    assert result.ready and result.cause.startswith(B)


def test_unknown_from_any_shard_is_unknown_for_all():
    result = merge([(A, summary(0.4), None), (B, summary(-math.inf, 0.0, ready=False), None)])
    assert result.minimum == -math.inf and result.factor == 0.0
    assert result.unknown == (B,) and not result.ready and 'is unknown' in result.cause


def test_a_silent_shard_is_unknown_for_all_and_named_first():
    result = merge([(A, summary(0.4), None), (B, summary(-math.inf, ready=False), None),
                    (C, summary(0.3), 'no summary for 0.300 s (deadline 0.25 s)')])
    assert result.minimum == -math.inf and result.factor == 0.0
    assert result.shard == C and 'is silent: no summary' in result.cause
    assert result.silent == (C,) and result.unknown == (B,)


def test_a_shard_never_heard_gives_no_time():
    result = merge([(A, summary(0.4), None), (B, None, 'never heard')])
    assert result.minimum == -math.inf and result.stamp_ns == 0


def test_infinity_only_when_every_shard_reads_it():
    assert merge([(A, summary(math.inf), None), (B, summary(math.inf), None)]).minimum == \
        math.inf
    assert merge([(A, summary(math.inf), None), (B, summary(2.0), None)]).minimum == 2.0


def test_different_frames_are_listed():
    other = ShardSummary(0.5, 1.0, 5 * NS, 'base', True, 'closest')
    result = merge([(A, summary(0.4), None), (B, other, None)])
    assert result.frames == ('base', 'world') and result.frame_id == 'world'


_SHARD = strategies.tuples(
    strategies.one_of(strategies.floats(-1.0, 5.0), strategies.just(-math.inf),
                      strategies.just(math.inf)),
    strategies.floats(0.0, 1.0), strategies.integers(0, 10 * NS), strategies.booleans(),
    strategies.sampled_from([None, None, None, 'never heard', 'deadline missed']))


@given(strategies.lists(_SHARD, min_size=1, max_size=6))
def test_the_merge_is_fail_safe(shards):
    """Never above any shard's minimum or factor; -inf whenever anything is not vouched for."""
    state = [('/s%d' % index, summary(minimum, factor, stamp, ready), silence)
             for index, (minimum, factor, stamp, ready, silence) in enumerate(shards)]
    result = merge(state)
    assert all(result.minimum <= item.minimum and result.factor <= item.factor
               for _, item, _ in state)
    assert result.stamp_ns == min(item.stamp_ns for _, item, _ in state)
    vouched = all(silence is None and not item.unknown for _, item, silence in state)
    closest = min(item.minimum for _, item, _ in state)
    assert (result.minimum == -math.inf) == (not vouched or closest == -math.inf)
    assert result.ready == vouched
    if not vouched:
        assert result.factor == 0.0


# -- silence ------------------------------------------------------------------------------------

def test_a_shard_is_silent_until_heard_and_after_the_deadline_on_the_steady_clock():
    watch = ShardWatch(A, DEADLINE)
    assert watch.silence(0.0) == 'never heard'
    watch.heard(detail(0.3), 10.0)
    assert watch.silence(10.0 + DEADLINE) is None
    assert watch.silence(10.0 + DEADLINE + 1e-3).startswith('no summary for 0.251 s')


def test_middleware_events_make_a_shard_silent_until_its_next_message():
    watch = ShardWatch(A, DEADLINE)
    watch.heard(detail(0.3), 10.0)
    watch.on_deadline_missed(1)
    assert 'missed deadline' in watch.silence(10.1)
    watch.heard(detail(0.3), 10.2)
    assert watch.silence(10.2) is None and watch.deadlines_missed == 1
    watch.on_liveliness(0)
    assert 'liveliness lost' in watch.silence(10.3)
    watch.on_liveliness(1)
    assert watch.silence(10.3) is None


def test_an_incompatible_offer_is_named_while_never_heard():
    watch = ShardWatch(A, DEADLINE)
    watch.on_incompatible('DEADLINE')
    assert 'incompatible QoS: DEADLINE' in watch.silence(0.0)


# -- when the board publishes ---------------------------------------------------------------

def test_news_is_published_and_silence_at_the_next_tick():
    board = ShardBoard([A, B], DEADLINE)
    assert board.on_tick(0.0).silent == (A, B)  # the first tick publishes: nothing heard
    assert board.on_tick(0.05) is None
    assert board.on_summary(A, detail(0.4), 0.06).silent == (B,)
    both = board.on_summary(B, detail(0.2, stamp_ns=4 * NS), 0.07)
    assert both.ready and both.minimum == 0.2 and both.stamp_ns == 4 * NS
    assert board.on_summary(A, detail(0.1), 0.2).minimum == 0.1  # nearer: out at once
    # B is silent once its deadline passes: the next tick publishes at once.
    assert board.on_tick(0.07 + DEADLINE) is None
    silent = board.on_tick(0.07 + DEADLINE + 0.01)
    assert silent.minimum == -math.inf and silent.silent == (B,)
    # With nothing new, the watchdog keeps the outputs' own deadline: every half deadline.
    quiet = 0.07 + DEADLINE + 0.02
    assert board.on_tick(quiet) is None
    assert board.on_tick(quiet + DEADLINE / 2) is not None


def test_bad_news_goes_out_at_once_and_good_news_once_per_round():
    board = ShardBoard([A, B], DEADLINE)
    board.on_summary(A, detail(0.4, stamp_ns=1 * NS), 0.01)
    assert board.on_summary(B, detail(0.5, stamp_ns=1 * NS), 0.01).stamp_ns == 1 * NS
    # A answers the next stamp, farther: it waits for B's answer of that stamp.
    assert board.on_summary(A, detail(0.45, stamp_ns=2 * NS), 0.02) is None
    both = board.on_summary(B, detail(0.6, stamp_ns=2 * NS), 0.02)
    assert both.stamp_ns == 2 * NS and both.minimum == 0.45
    # Nearer, a smaller factor, or unknown: out at once, on the older stamp of the round.
    nearer = board.on_summary(A, detail(0.3, stamp_ns=3 * NS), 0.03)
    assert nearer.minimum == 0.3 and nearer.stamp_ns == 2 * NS
    slower = board.on_summary(A, detail(0.35, 0.5, stamp_ns=4 * NS), 0.04)
    assert slower.factor == 0.5 and slower.minimum == 0.35
    unknown = board.on_summary(A, detail(-math.inf, 0.0, ready=False, stamp_ns=5 * NS), 0.05)
    assert unknown.minimum == -math.inf and unknown.unknown == (A,)
    # Known again is news too (which shards are unknown changed).
    assert board.on_summary(A, detail(0.35, 0.5, stamp_ns=6 * NS), 0.06).unknown == ()
    # A round that ends farther still goes out.
    assert board.on_summary(B, detail(0.7, stamp_ns=6 * NS), 0.06).stamp_ns == 6 * NS


@given(strategies.lists(strategies.tuples(
    strategies.sampled_from([A, B]), strategies.integers(1, 6),
    strategies.sampled_from([-math.inf, -0.1, 0.0, 0.2, 0.5, math.inf]),
    strategies.sampled_from([0.0, 0.5, 1.0])), max_size=30))
def test_no_answer_held_back_is_worse_or_newer_than_the_last_published(timeline):
    """Over any timeline: a held answer is never more cautious, nor resting on a newer round."""
    board = ShardBoard([A, B], DEADLINE)
    last = None
    for shard, stamp, minimum, factor in timeline:
        published = board.on_summary(shard, detail(minimum, factor, stamp_ns=stamp * NS,
                                                   ready=minimum > -math.inf), 0.0)
        current = board.aggregate(0.0)
        if published is None:
            assert last is not None and not is_news(current, last)
            assert current.minimum >= last.minimum and current.factor >= last.factor
            assert current.stamp_ns <= last.stamp_ns
        else:
            assert published == current
            last = published


def test_the_outputs_carry_one_header_and_the_nodes_keys():
    node = _FakeNode()
    outputs = AggregatorOutputs(node, DEADLINE)
    board = ShardBoard([A, B], DEADLINE)
    board.on_summary(A, detail(0.4, factor=1.0, stamp_ns=9 * NS, max_distance='5.0'), 1.0)
    outputs.publish(board.on_summary(B, detail(0.2, factor=0.5, stamp_ns=8 * NS,
                                               max_distance='2.0'), 1.0), board.max_range())
    (minimum,), (safety,), (scaling,), (message,) = (
        node.published[topic] for topic in ('~/min_distance', '~/safety', '~/speed_scaling',
                                            '~/safety_detail'))
    assert minimum.data == 0.2 and scaling.data == 0.5
    assert safety.range == pytest.approx(0.2) and safety.max_range == 2.0
    assert safety.header == message.header and message.header.stamp.sec == 8
    assert read_summary(message) == ShardSummary(0.2, 0.5, 8 * NS, 'world', True,
                                                 '%s: closest: arm to box/0 (VALID)' % B,
                                                 'arm', 'box/0', 2.0)
    values = {item.key: item.value for item in message.status[0].values}
    assert values['shard'] == B and message.status[0].name == 'robot/gjk_aggregator: safety'


def test_diagnostics_name_the_silent_and_the_unknown_shard():
    node = _FakeNode()
    outputs = AggregatorOutputs(node, DEADLINE)
    board = ShardBoard([A, B, C], DEADLINE)
    board.on_summary(A, detail(0.4), 1.0)
    board.on_summary(B, detail(-math.inf, 0.0, ready=False, cause='not ready: no link'), 1.0)
    outputs.publish_diagnostics(board, 1.1, _Stamp())
    (message,) = node.published['/diagnostics']
    statuses = {status.name: status for status in message.status}
    prefix = 'robot/gjk_aggregator: '
    assert statuses[prefix + 'aggregate'].level == ERROR
    assert statuses[prefix + 'shard ' + A].level == OK
    assert statuses[prefix + 'shard ' + B].message == 'unknown: not ready: no link'
    assert statuses[prefix + 'shard ' + C].message == 'silent: never heard'
    values = {item.key: item.value for item in statuses[prefix + 'aggregate'].values}
    assert values['silent'] == C and values['unknown'] == B
    board.on_summary(B, detail(-0.01, 0.0), 1.2)
    board.on_summary(C, detail(0.3), 1.2)
    outputs.publish_diagnostics(board, 1.2, _Stamp())
    statuses = {status.name: status for status in node.published['/diagnostics'][-1].status}
    assert statuses[prefix + 'aggregate'].level == WARN  # in contact, and known


def test_diagnostics_say_how_old_each_shards_summaries_arrive_per_period():
    node = _FakeNode()
    outputs = AggregatorOutputs(node, DEADLINE)
    board = ShardBoard([A, B], DEADLINE)
    for stamp, arrival in ((5 * NS, 5 * NS + 4_000_000), (6 * NS, 6 * NS + 10_000_000)):
        board.on_summary(A, detail(0.4, stamp_ns=stamp), 1.0, arrival)
    board.on_summary(B, detail(0.3, stamp_ns=0), 1.0, 6 * NS)  # no time: no age
    outputs.publish_diagnostics(board, 1.1, _Stamp())

    def ages(shard):
        statuses = {status.name: status for status in node.published['/diagnostics'][-1].status}
        values = {item.key: item.value
                  for item in statuses['robot/gjk_aggregator: shard ' + shard].values}
        return values['arrival_age_ms_mean'], values['arrival_age_ms_max']

    assert ages(A) == ('7.00', '10.00')
    assert ages(B) == ('', '')
    # Each entry covers the period since the last one.
    board.on_summary(A, detail(0.4, stamp_ns=7 * NS), 1.2, 7 * NS - 1_000_000)
    outputs.publish_diagnostics(board, 1.2, _Stamp())
    assert ages(A) == ('-1.00', '-1.00')  # the clocks of two machines disagree
    outputs.publish_diagnostics(board, 1.3, _Stamp())
    assert ages(A) == ('', '')


# -- parameters ---------------------------------------------------------------------------------

@pytest.mark.parametrize('values, named', [
    ({'shards': [], 'deadline': 0.25}, 'shards is empty'),
    ({'shards': ['/a/gjk_distance', 'b c'], 'deadline': 0.25}, "entry 'b c' is not"),
    ({'shards': ['/a/gjk_distance', '~/x'], 'deadline': 0.25}, 'is not a ROS node name'),
    ({'shards': ['/a//gjk_distance'], 'deadline': 0.25}, 'is not a ROS node name'),
    ({'shards': ['/a/gjk_distance'] * 2, 'deadline': 0.25}, 'names a shard twice'),
    ({'shards': ['/s%d/n' % i for i in range(65)], 'deadline': 0.25}, 'at most 64'),
    ({'shards': ['/a/gjk_distance'], 'deadline': 0.0}, 'deadline must be'),
    ({'shards': ['/a/gjk_distance'], 'deadline': math.nan}, 'deadline must be'),
    ({'shards': ['/a/gjk_distance'], 'deadline': True}, 'deadline must be'),
])
def test_bad_parameters_are_refused_naming_the_parameter(values, named):
    with pytest.raises(ValueError, match=named):
        settings_from(values)


def test_good_parameters_are_kept():
    settings = settings_from({'shards': ['/a/gjk_distance', 'b/gjk_distance'],
                              'deadline': 0.5})
    assert settings.shards == ('/a/gjk_distance', 'b/gjk_distance')
    assert settings.deadline == 0.5


def test_relative_shard_names_join_the_aggregators_namespace():
    assert resolved(['/a/gjk_distance', 'b/gjk_distance'], '/robot') == [
        '/a/gjk_distance', '/robot/b/gjk_distance']
    assert resolved(['b/gjk_distance'], '/') == ['/b/gjk_distance']
    with pytest.raises(ValueError, match='twice once resolved'):
        resolved(['/robot/b/gjk_distance', 'b/gjk_distance'], '/robot')


class _FakeNode:
    """What AggregatorOutputs asks of a node: its name and publishers (Recorders)."""

    def __init__(self):
        self.published = {}

    def get_fully_qualified_name(self):
        return '/robot/gjk_aggregator'

    def create_publisher(self, message_type, topic, qos):
        recorder = Recorder()
        self.published[topic] = recorder.messages
        return recorder


class _Stamp:
    """A builtin_interfaces/Time stand-in (the diagnostics header's stamp)."""

    sec = 0
    nanosec = 0
