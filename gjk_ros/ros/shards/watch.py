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
Whether one shard is heard: its latest summary and three independent checks of silence.

A shard that stops publishing (crashed, killed, frozen, deactivated, cut off) must make the
whole robot unknown within the deadline, and no one check is enough alone:

- **QoS deadline** (the middleware): the subscription requests ``deadline``; the middleware
  says when no message came within it, with no message from the shard (REP 2004's deadline
  event, which rclpy exposes as ``SubscriptionEventCallbacks.deadline``);
- **QoS liveliness** (the middleware): an AUTOMATIC lease of ``deadline``; a process that
  stops (SIGKILL, SIGSTOP, a lost machine) loses its lease;
- **the steady clock**: the aggregator's own watchdog compares the last receive time with
  ``deadline``, on a clock that neither ROS time nor a stuck middleware can stop.

An event only ever makes a shard silent; the next message makes it heard again (a message is
proof of life newer than any event about the past), so an event delivered late can cost one
fail-safe answer, never a made-up one.
"""

import math

from gjk_ros.ros.shards.summary import read_summary, unreadable

__all__ = ['ArrivalAges', 'ShardWatch']


class ShardWatch:
    """
    One shard, as the aggregator hears it.

    Parameters
    ----------
    name : str
        The shard node's fully qualified name.
    deadline : float
        Seconds: longest gap between two summaries before the shard is silent.

    """

    def __init__(self, name, deadline):
        self.name = name
        self.deadline = deadline
        self.summary = None
        self.received = None  # steady seconds of the last summary
        self.messages = 0
        self.unreadable = 0
        self.deadline_missed = False
        self.deadlines_missed = 0
        self.alive = True
        self.incompatible = ''
        self.arrival_ages = ArrivalAges()

    def heard(self, message, steady_now, ros_now_ns=None):
        """
        Take a ``~/safety_detail`` message; an unreadable one is an unknown summary.

        ``ros_now_ns``: ROS time at its arrival, which the summary's stamp is in (None: not
        known), for how old summaries arrive (``ArrivalAges``).
        """
        try:
            self.summary = read_summary(message)
        except ValueError as error:
            self.summary = unreadable(message, error)
            self.unreadable += 1
        self.received = steady_now
        self.messages += 1
        self.deadline_missed = False
        self.alive = True
        if ros_now_ns is not None and self.summary.stamp_ns > 0:
            self.arrival_ages.add((ros_now_ns - self.summary.stamp_ns) * 1e-9)

    def on_deadline_missed(self, total_count):
        """Note that the middleware saw no message within the deadline."""
        self.deadline_missed = True
        self.deadlines_missed = int(total_count)

    def on_liveliness(self, alive_count):
        """Take the middleware's count of the shard's live publishers."""
        self.alive = alive_count > 0

    def on_incompatible(self, policy):
        """Note a QoS offer this subscription cannot match (the shard is never heard)."""
        self.incompatible = str(policy)

    def silence(self, steady_now):
        """Why the shard counts as silent now, or None when it was heard in time."""
        if self.received is None:
            reason = 'never heard'
            if self.incompatible:
                reason += (" (incompatible QoS: %s; is the deadline below the shard's "
                           'offered period?)' % self.incompatible)
            return reason
        age = steady_now - self.received
        if age > self.deadline:
            return 'no summary for %.3f s (deadline %g s)' % (age, self.deadline)
        if self.deadline_missed:
            return 'the middleware reports a missed deadline (%g s)' % self.deadline
        if not self.alive:
            return 'the middleware reports its liveliness lost'
        return None


class ArrivalAges:
    """
    How old a shard's summaries are when they arrive, over one diagnostics period.

    The age is ROS time at arrival minus the summary's stamp: the shard's own latency from its
    oldest datum to its output, plus the transport. It is what the ``deadline`` must cover, so
    ``/diagnostics`` shows it per shard; a negative age means the machines' clocks disagree.
    """

    def __init__(self):
        self.count, self.total, self.largest = 0, 0.0, -math.inf

    def add(self, seconds):
        """Take one summary's age."""
        self.count += 1
        self.total += seconds
        self.largest = max(self.largest, seconds)

    def mean(self):
        """Return the mean age in seconds, or None when no summary arrived."""
        return self.total / self.count if self.count else None

    def restart(self):
        """Start a new period (after ``/diagnostics`` reported this one)."""
        self.count, self.total, self.largest = 0, 0.0, -math.inf
