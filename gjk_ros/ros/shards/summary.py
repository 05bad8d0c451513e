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
What one shard says, and what the whole robot is: pure functions, no ROS graph.

A shard's summary is read from its ``~/safety_detail`` (diagnostic_msgs/DiagnosticArray): one
message per cycle holds the float64 fail-safe minimum (``~/safety`` carries it as a float32
``Range.range``, which may round up), the speed-scaling factor of the same cycle, whether the
node is ready, and the header stamped with the oldest datum the cycle rests on
(``outputs/safety.py``).

The merge rules (``merge``) keep the node's own fail-safe semantics for the whole robot:

- a shard that is silent (never heard, past its deadline, not alive) or unknown (its minimum
  -inf or NaN, not ready, an unreadable summary) makes the whole minimum -inf and the factor 0;
- otherwise the minimum is the smallest of the shards' minima (+inf only when every shard
  reads +inf) and the factor the smallest of their factors;
- the stamp is the oldest of the shards' stamps (0, "no time", while a shard has none).
"""

from dataclasses import dataclass
import math

__all__ = ['Aggregate', 'merge', 'read_summary', 'ShardSummary', 'stamp_ns', 'unreadable']

# The node's ~/safety_detail keys the aggregator reads (outputs/publishers.py).
MINIMUM_KEY = 'min_distance'
FACTOR_KEY = 'speed_scaling'
READY_KEY = 'ready'
MAX_DISTANCE_KEY = 'max_distance'
# Longest text taken from a shard's message into our own outputs and logs.
MAX_TEXT = 200


@dataclass(frozen=True)
class ShardSummary:
    """
    One cycle of one shard, as its ``~/safety_detail`` carries it.

    ``minimum`` is the shard's fail-safe minimum (-inf unknown), ``factor`` its speed scaling,
    ``stamp_ns`` its header stamp (ROS time), ``cause`` what the minimum rests on, ``link``
    and ``obstacle`` the pair behind it ('' when none), and ``max_distance`` its ``~/safety``'s
    ``max_range`` (+inf when the summary does not say).
    """

    minimum: float
    factor: float
    stamp_ns: int
    frame_id: str
    ready: bool
    cause: str
    link: str = ''
    obstacle: str = ''
    max_distance: float = math.inf

    @property
    def unknown(self):
        """Whether this summary vouches for nothing: not ready, or its minimum unknown."""
        return not self.ready or math.isnan(self.minimum) or self.minimum == -math.inf


def stamp_ns(stamp):
    """Return a builtin_interfaces/Time as integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def _number(values, key, low=-math.inf, high=math.inf):
    text = values.get(key)
    if text is None:
        raise ValueError("no '%s' value" % key)
    try:
        value = float(text[:MAX_TEXT])
    except ValueError:
        raise ValueError("'%s' is not a number" % key) from None
    if not low <= value <= high:
        raise ValueError("'%s' is %r, outside [%g, %g]" % (key, value, low, high))
    return value


def read_summary(message):
    """
    Read a shard's ``~/safety_detail`` message.

    Parameters
    ----------
    message : diagnostic_msgs.msg.DiagnosticArray
        One status, whose values hold ``min_distance``, ``speed_scaling`` and ``ready``.

    Returns
    -------
    ShardSummary

    Raises
    ------
    ValueError
        Naming what is missing or out of range (never quoting the message).

    """
    if not message.status:
        raise ValueError('no status in the message')
    status = message.status[0]
    values = {item.key: item.value for item in status.values}
    ready = values.get(READY_KEY)
    if ready not in ('true', 'false'):
        raise ValueError("'%s' is neither true nor false" % READY_KEY)
    minimum = _number(values, MINIMUM_KEY)
    factor = _number(values, FACTOR_KEY, 0.0, 1.0)
    header = message.header
    return ShardSummary(minimum=minimum, factor=factor, stamp_ns=stamp_ns(header.stamp),
                        frame_id=header.frame_id[:MAX_TEXT], ready=ready == 'true',
                        cause=status.message[:MAX_TEXT],
                        link=values.get('link', '')[:MAX_TEXT],
                        obstacle=values.get('obstacle', '')[:MAX_TEXT],
                        max_distance=_max_distance(values))


def _max_distance(values):
    """Return the announced ``max_distance`` (REP 117's ``max_range``: positive), or +inf."""
    try:
        value = float(values.get(MAX_DISTANCE_KEY, 'inf')[:MAX_TEXT])
    except ValueError:
        return math.inf  # informative only: a bad value does not make the summary unknown
    return value if value > 0.0 else math.inf


def unreadable(message, reason):
    """
    Return the unknown summary of a message ``read_summary`` refused, saying why.

    Its header is typed, so the stamp and frame still count; nothing else of it does.
    """
    header = message.header
    return ShardSummary(minimum=-math.inf, factor=0.0, stamp_ns=stamp_ns(header.stamp),
                        frame_id=header.frame_id[:MAX_TEXT], ready=False,
                        cause='unreadable summary: %s' % reason)


@dataclass(frozen=True)
class Aggregate:
    """
    The whole robot's answer, from every shard's latest summary.

    ``shard`` names the shard the answer rests on (the closest one, or the first silent or
    unknown one), ``cause`` says why, ``silent`` and ``unknown`` list the shards that make the
    minimum -inf, and ``frames`` the distinct frames the shards stamp their summaries in.
    """

    minimum: float
    factor: float
    stamp_ns: int
    frame_id: str
    shard: str
    cause: str
    link: str
    obstacle: str
    silent: tuple
    unknown: tuple
    frames: tuple

    @property
    def ready(self):
        """Whether every shard was heard in time and vouched for its scope."""
        return not self.silent and not self.unknown


def merge(shards):
    """
    Merge the shards' state into the whole robot's answer (module docstring: the rules).

    Parameters
    ----------
    shards : sequence of (str, ShardSummary or None, str or None)
        Per shard, in the configured order: its name, its latest summary (None before the
        first; an unreadable message is an unknown summary, ``unreadable``) and why it is
        silent (None when heard in time).

    Returns
    -------
    Aggregate

    """
    summaries = [summary for _, summary, _ in shards if summary is not None]
    stamp = 0 if len(summaries) < len(shards) else min(
        (summary.stamp_ns for summary in summaries), default=0)
    frames = tuple(sorted({summary.frame_id for summary in summaries}))
    frame_id = summaries[0].frame_id if summaries else ''
    silent = tuple(name for name, _, reason in shards if reason is not None)
    unknown = tuple(name for name, summary, reason in shards
                    if reason is None and (summary is None or summary.unknown))
    common = {'stamp_ns': stamp, 'frame_id': frame_id, 'silent': silent, 'unknown': unknown,
              'frames': frames}
    for name, summary, reason in shards:
        if reason is not None:
            return Aggregate(minimum=-math.inf, factor=0.0, shard=name, link='', obstacle='',
                             cause='%s is silent: %s' % (name, reason), **common)
    for name, summary, _ in shards:
        if summary is None or summary.unknown:
            cause = 'no summary' if summary is None else summary.cause
            return Aggregate(minimum=-math.inf, factor=0.0, shard=name, link='', obstacle='',
                             cause='%s is unknown: %s' % (name, cause), **common)
    if not shards:
        return Aggregate(minimum=-math.inf, factor=0.0, shard='', link='', obstacle='',
                         cause='no shard configured', **common)
    name, closest = min(((name, summary) for name, summary, _ in shards),
                        key=lambda item: item[1].minimum)
    return Aggregate(minimum=closest.minimum,
                     factor=min(summary.factor for summary in summaries), shard=name,
                     link=closest.link, obstacle=closest.obstacle,
                     cause='%s: %s' % (name, closest.cause), **common)
