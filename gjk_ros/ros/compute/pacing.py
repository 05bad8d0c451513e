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
When to run a compute cycle: on new TF, at most ``rate_hz`` on average.

The node computes when a transform arrives (so the output follows the input within one cycle's
work, not up to one timer period later) and, from a watchdog timer, when no transform came for
a period and a quarter (so outputs keep coming, as STALE, when TF stops). A token bucket caps
the average rate: each cycle spends one token, tokens refill at ``rate_hz`` and the bucket holds
at most ``burst`` of them, so the jitter of a TF stream at exactly ``rate_hz`` does not make every
other message miss its cycle, and the long-run rate never exceeds ``rate_hz``.

The watchdog asks "is the last transform a period old?", not "is the last cycle a period old?":
the watchdog's own cycles count in the second test, and timer callbacks run late by a varying
amount, so it failed whenever one tick was less late than the one before; with static TF only a
third of the cycles were skipped (measured: 202 outputs in 10 s at ``rate_hz`` 30, gaps of
67 ms). Asking about arrivals also keeps a tick just before each message of a TF stream at
``rate_hz`` from taking the token that message needs (its output would lag a whole period); the
quarter period of slack keeps it so when a message comes a little late, or at the same instant
as the tick (found by the property test: a message one period after the last, ordered after
the tick by rounding, lost its cycle). When TF stops, outputs continue at most 2.25 periods
after the last one, plus the timer's lateness.

A transform that finds the bucket empty (it came less than a period after the last cycle)
*waits*: the node restarts the watchdog's period when it starts waiting, and the next tick, one
period later, finds a token (one refills per period) and runs its cycle. So the output computed
from a transform comes at most a period after it arrived, plus the timer's lateness, whatever
the phase of the watchdog: a client that sends a transform and waits for an output stamped at or
after it never waits for the watchdog's slack. A stream faster than ``rate_hz`` restarts the
watchdog at most once per cycle, and the tokens still cap the cycles at ``rate_hz``.
"""

__all__ = ['CyclePacer', 'WATCHDOG_SLACK']

# A transform older than this many periods leaves the cycles to the watchdog.
WATCHDOG_SLACK = 1.25
# A period's refill, (now - then) * rate_hz, may round to just below one token.
_ROUNDING = 1e-9


class CyclePacer:
    """
    A token bucket over cycles.

    Parameters
    ----------
    rate_hz : float
        Longest-run cycle rate, > 0.
    burst : float
        Most tokens kept, >= 1; 1.5 lets a cycle come up to half a period early.

    """

    def __init__(self, rate_hz, burst=1.5):
        self._rate_hz = float(rate_hz)
        self._burst = float(burst)
        self._tokens = self._burst
        self._updated = None
        self._last_arrival = None
        self.waiting = False  # a transform arrived and no cycle ran since

    @property
    def rate_hz(self):
        """Return the longest-run cycle rate, Hz."""
        return self._rate_hz

    @property
    def period(self):
        """Seconds between cycles at ``rate_hz``."""
        return 1.0 / self._rate_hz

    def set_rate(self, rate_hz):
        """Change the rate; the tokens already earned are kept."""
        self._rate_hz = float(rate_hz)

    def _refill(self, now):
        if self._updated is not None and now > self._updated:
            self._tokens = min(self._burst,
                               self._tokens + (now - self._updated) * self._rate_hz)
        self._updated = now if self._updated is None else max(self._updated, now)

    def try_start(self, now):
        """
        Take a token for a cycle on a transform arriving at ``now`` (monotonic seconds).

        Returns
        -------
        bool
            True if the cycle may run (the token is spent).

        """
        self._last_arrival = now
        self.waiting = True
        return self._take_token(now)

    def try_start_from_watchdog(self, now):
        """
        Take a token at a watchdog tick for a waiting transform, or when none came for a while.

        A tick runs a cycle when a transform is waiting for its token (module docstring) or no
        transform arrived for ``WATCHDOG_SLACK`` periods. A TF stream at ``rate_hz`` keeps
        this False whatever its phase relative to the timer (its own cycles are paced by the
        tokens); without one every tick runs a cycle.

        Returns
        -------
        bool
            True if the cycle may run (the token is spent).

        """
        due = self.waiting or self._last_arrival is None or \
            now - self._last_arrival >= WATCHDOG_SLACK * self.period
        return due and self._take_token(now)

    def _take_token(self, now):
        self._refill(now)
        if self._tokens < 1.0 - _ROUNDING:
            return False
        self._tokens = max(self._tokens - 1.0, 0.0)
        self.waiting = False  # this cycle reads every transform that arrived before it
        return True
