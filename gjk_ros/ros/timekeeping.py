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
The node's two clocks, and whether ROS time can age data now.

Time conventions (README, "Time"):

- **Ages of data use ROS time** (the node clock; simulated time under ``use_sim_time``), as tf2
  and Nav2 do: a transform's age is ``now - header.stamp``, a source's silence ``now - receive
  time``, a marker's lifetime counts from its receive time.
- **Everything that must happen whatever ROS time does uses the steady clock**: the watchdog
  that keeps outputs coming, the diagnostics timer, and the check of ROS time itself below.
  A timer on ROS time never fires while ``/clock`` is absent or paused, which would freeze the
  last answer.
- **ROS time is an input too.** It cannot age anything while it is zero (``use_sim_time`` with
  nothing publishing ``/clock``) or while it does not advance (a stopped or paused simulator):
  then nothing is known to be fresh, every pair is STALE and ``~/min_distance`` is -inf with a
  reason naming ``/clock``. A paused simulation therefore reads as unknown, not as clear.
"""

__all__ = ['RosTimeMonitor']


class RosTimeMonitor:
    """
    Watch ROS time against the steady clock.

    Parameters
    ----------
    timeout : float
        Steady seconds ROS time may stand still before it is not trusted (``clock_timeout``).
    sim_time : bool
        Whether the node runs on ``/clock`` (``use_sim_time``); only shapes the reason.

    """

    def __init__(self, timeout, sim_time):
        self.timeout = float(timeout)
        self.sim_time = bool(sim_time)
        self._ros_ns = None
        self._advanced_at = None

    def observe(self, ros_ns, steady):
        """Record ROS time ``ros_ns`` read at steady time ``steady`` (seconds)."""
        if ros_ns != self._ros_ns or self._advanced_at is None:
            self._ros_ns, self._advanced_at = ros_ns, steady

    def problem(self, steady):
        """
        Why ROS time cannot age data at steady time ``steady``, or None when it can.

        Returns
        -------
        str or None
            The reason, naming ``/clock`` under ``use_sim_time``.

        """
        if self._ros_ns is None:
            return None
        source = "use_sim_time is true: is '/clock' published?" if self.sim_time else \
            'the system clock'
        if self._ros_ns <= 0:
            return 'ROS time is zero (%s)' % source
        still = steady - self._advanced_at
        if still > self.timeout:
            # The stable words come first: the problem log keys a reason by them.
            return 'ROS time stands still (%s) for %.1f s' % (source, still)
        return None
