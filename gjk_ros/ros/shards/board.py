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

The aggregator publishes on every shard summary (the lowest latency a consumer can have: no
timer stands between a shard's cycle and the whole robot's answer), and from its watchdog
when a shard's silence changes or nothing was published for half the deadline, so that its
own outputs keep the deadline they offer even when every shard is silent.
"""

import math

from gjk_ros.ros.shards.summary import merge
from gjk_ros.ros.shards.watch import ShardWatch

__all__ = ['ShardBoard']


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
        self._silent = None  # the silent shards when it was

    def on_summary(self, name, message, steady_now):
        """Take a shard's ``~/safety_detail``; return the aggregate to publish."""
        self.watches[name].heard(message, steady_now)
        return self._hand_out(steady_now)

    def on_tick(self, steady_now):
        """Return the aggregate to publish when a silence changed or one is due, else None."""
        silent = self._silent_now(steady_now)
        overdue = self.published is None or steady_now - self.published >= self.deadline / 2
        if silent != self._silent or overdue:
            return self._hand_out(steady_now)
        return None

    def aggregate(self, steady_now):
        """Return the whole robot's answer now (``summary.merge``)."""
        return merge([(name, watch.summary, watch.silence(steady_now))
                      for name, watch in self.watches.items()])

    def max_range(self):
        """Return the smallest ``max_range`` the shards announce (+inf before any)."""
        return min((watch.max_range for watch in self.watches.values()), default=math.inf)

    def _silent_now(self, steady_now):
        return tuple(name for name, watch in self.watches.items()
                     if watch.silence(steady_now) is not None)

    def _hand_out(self, steady_now):
        aggregate = self.aggregate(steady_now)
        self.published, self._silent = steady_now, aggregate.silent
        return aggregate
