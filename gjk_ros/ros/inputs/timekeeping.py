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

Time conventions (docs/semantics.md, "Time"):

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
- **Stamps are integers.** Every stamp, receive time and "oldest datum" is ROS time in integer
  nanoseconds: a float, of seconds or of nanoseconds (exact only up to 2^53 ns, 104 days),
  rounds today's stamps by up to 128 ns. Seconds as floats are only for durations.
- **One rule for stamps out of range.** A ``builtin_interfaces/Time`` carries ``sec`` as int32,
  so an output can only be stamped from 0 to ``MAX_STAMP_NS``. A datum stamped outside that
  (negative, or ``sec = 2^31 - 1`` with a ``nanosec`` that carries past it) is refused where it
  enters, by name (``stamp_problem``), so that no output is ever stamped with a wrapped or
  made-up time.
"""

import time

__all__ = ['MAX_STAMP_NS', 'NodeClocks', 'NS_PER_S', 'RosTimeMonitor', 'stamp_fields',
           'stamp_problem', 'TIMELESS', 'UNKNOWN']

NS_PER_S = 1_000_000_000
# The last instant a builtin_interfaces/Time can carry: sec is int32, nanosec below 1e9.
MAX_STAMP_NS = (2 ** 31 - 1) * NS_PER_S + NS_PER_S - 1
# The time of data that never ages (static transforms, geometry), and of data not known at
# all: the ends of int64, so that a minimum over stamps picks the right one.
TIMELESS = 2 ** 63 - 1
UNKNOWN = -2 ** 63


def stamp_problem(stamp_ns):
    """Return why a stamp (ns) cannot be carried by a header, or None when it can."""
    if 0 <= stamp_ns <= MAX_STAMP_NS:
        return None
    return ('stamp %d ns is outside what a header can carry (0 to %d ns: sec is int32)'
            % (stamp_ns, MAX_STAMP_NS))


def stamp_fields(stamp_ns):
    """
    Return (sec, nanosec) of a stamp in ns, exactly.

    Every stamp from data is checked where it enters (``stamp_problem``); only the node's own
    clock can be out of range, and then every pair is STALE (``RosTimeMonitor``) and the stamp
    is held at the nearest end of the range rather than wrapped.
    """
    return divmod(min(max(int(stamp_ns), 0), MAX_STAMP_NS), NS_PER_S)


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
        """Record ROS time ``ros_ns`` (int ns) read at steady time ``steady`` (seconds)."""
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
        if stamp_problem(self._ros_ns) is not None:
            return 'ROS time is beyond the last stamp a header can carry (%s)' % source
        still = steady - self._advanced_at
        if still > self.timeout:
            # The stable words come first: the problem log keys a reason by them.
            return 'ROS time stands still (%s) for %.1f s' % (source, still)
        return None


class NodeClocks:
    """
    ROS time and steady time for the node's components, and what ROS time does.

    Parameters
    ----------
    ros_clock : rclpy.clock.Clock
        The node's clock (ROS time; simulated time under ``use_sim_time``).
    logger : rclpy logger
        Where a jump back is reported.

    """

    def __init__(self, ros_clock, logger):
        self._ros_clock = ros_clock
        self._logger = logger
        self.monitor = RosTimeMonitor(1.0, False)
        self.last_now_ns = self.now_ns()
        self._jump_back_listeners = []

    def now_ns(self):
        """ROS time in integer nanoseconds: the clock of every receive time the node stamps."""
        return self._ros_clock.now().nanoseconds

    def now(self):
        """ROS time in seconds, for durations (silence, lifetimes, ages shown to people)."""
        return self.now_ns() * 1e-9

    @staticmethod
    def steady():
        """Steady-clock seconds: what must run whatever ROS time does."""
        return time.monotonic()

    def configure(self, timeout, sim_time):
        """Set ``clock_timeout`` and whether the node runs on ``/clock``."""
        self.monitor = RosTimeMonitor(timeout, sim_time)

    def on_jump_back(self, listener):
        """Call ``listener()`` whenever ROS time jumps back."""
        self._jump_back_listeners.append(listener)

    def check(self, now_ns):
        """Notice a jump back of ROS time (a simulator reset), as tf2_ros's buffer does."""
        if now_ns < self.last_now_ns:
            for listener in self._jump_back_listeners:
                listener()
            self._logger.warning(
                'time jumped back by %.3f s: cleared the /tf history (as tf2_ros does) and '
                "the obstacle sources' receive times" % ((self.last_now_ns - now_ns) * 1e-9))
        self.last_now_ns = now_ns

    def observe(self, now_ns):
        """Once per cycle: check for jumps and record whether ROS time advances."""
        self.check(now_ns)
        self.monitor.observe(now_ns, self.steady())

    def problem(self):
        """Why ROS time cannot age data now, or None."""
        return self.monitor.problem(self.steady())
