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
Every shard's watch, the aggregate, and when to publish it: the aggregator without ROS.

A shard's summary is published at once when it is bad news: the aggregate is worse than the
last one published (a smaller minimum or speed factor), or other shards are silent or unknown.
Any other summary waits until it completes a round: every shard has answered past the stamp of the
last aggregate published (the oldest stamp advances). So no timer stands between a shard's cycle
and a warning, while shards cycling on the same transforms give one answer per cycle, each
resting on every shard's newest summary, instead of one per shard summary, half of them resting
on an older stamp. The watchdog publishes when a shard's silence changes, and whenever nothing
was published for half the deadline, so that the outputs keep the deadline they offer even when
every shard is silent.
"""

import math

from gjk_ros.ros.shards.summary import merge
from gjk_ros.ros.shards.watch import ShardWatch

__all__ = ['is_news', 'ShardBoard']


class ShardBoard:
    """
    The shards of one aggregator.

    Parameters
    ----------
    names : sequence of str
        The shards' fully qualified node names, in the order they are reported.
    deadline : float
        Seconds (``ShardWatch``).

    """

    def __init__(self, names, deadline):
        self.deadline = deadline
        self.watches = {name: ShardWatch(name, deadline) for name in names}
        self.published = None  # steady seconds of the last aggregate handed out
        self._last = None  # that aggregate

    def on_summary(self, name, message, steady_now, ros_now_ns=None):
        """
        Take a shard's ``~/safety_detail``; return the aggregate to publish, or None.

        ``ros_now_ns``: ROS time at its arrival (``ShardWatch.heard``).
        """
        self.watches[name].heard(message, steady_now, ros_now_ns)
        aggregate = self.aggregate(steady_now)
        return self._hand_out(aggregate, steady_now) if is_news(aggregate, self._last) \
            else None

    def on_tick(self, steady_now):
        """Return the aggregate to publish when a silence changed or one is due, else None."""
        silent = self._silent_now(steady_now)
        overdue = self.published is None or steady_now - self.published >= self.deadline / 2
        if self._last is None or silent != self._last.silent or overdue:
            return self._hand_out(self.aggregate(steady_now), steady_now)
        return None

    def aggregate(self, steady_now):
        """Return the whole robot's answer now (``summary.merge``)."""
        return merge([(name, watch.summary, watch.silence(steady_now))
                      for name, watch in self.watches.items()])

    def max_range(self):
        """Return the smallest ``max_distance`` the shards announce (+inf before any)."""
        return min((watch.summary.max_distance for watch in self.watches.values()
                    if watch.summary is not None), default=math.inf)

    def _silent_now(self, steady_now):
        return tuple(name for name, watch in self.watches.items()
                     if watch.silence(steady_now) is not None)

    def _hand_out(self, aggregate, steady_now):
        self.published, self._last = steady_now, aggregate
        return aggregate


def is_news(aggregate, last):
    """
    Whether ``aggregate`` goes out now, after ``last`` (None: nothing published yet).

    Worse than ``last`` goes out at once, whatever the stamps; anything else once the oldest
    stamp has advanced (module docstring). A minimum or factor that grew on an older stamp waits
    for the round: the answer already out is the more cautious one.
    """
    if last is None:
        return True
    return (aggregate.stamp_ns > last.stamp_ns or aggregate.minimum < last.minimum
            or aggregate.factor < last.factor or aggregate.silent != last.silent
            or aggregate.unknown != last.unknown or aggregate.frames != last.frames)
