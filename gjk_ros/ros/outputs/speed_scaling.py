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
Speed scaling for manipulators: a factor in [0, 1] from the fail-safe minimum distance.

A convenience for integrators, not a rated safety function (docs/managed_node.md). An arm
driver's speed scaling (UR's ``speed_scaling``, MoveIt Servo's velocity scaling near
collisions) takes a factor; Nav2's collision monitor slows or stops a base with debounced
actions (``trigger``/``release`` consecutive points). This module is the same for a distance:

- **Ramp.** ``ramp(d)`` is 0 at or below ``stop_distance``, 1 at or beyond
  ``slowdown_distance`` and linear between (the simplest monotone ramp; a speed proportional to
  the remaining gap keeps the time to contact roughly constant near the stop distance).
- **Unknown is stop.** A minimum that is -inf (the node's "unknown": not ready, stale inputs,
  paused by ``~/toggle``) or NaN gives 0 at once, whatever the debounce. +inf (no obstacle,
  when ``allow_no_obstacles`` says that is clear) is beyond every distance: ramp 1.
- **Hysteresis.** The factor goes down following ``ramp(d)`` and up following
  ``ramp(d - release_margin)``: a distance hovering at one point of the ramp cannot make the
  factor chatter, since it must grow by ``release_margin`` before the factor rises again.
- **Debounce.** A lower factor is taken after ``trigger_cycles`` consecutive cycles that each
  ask for less than the current factor; a higher one after ``release_cycles`` consecutive
  cycles that each allow more. The factor taken is the latest cycle's. A cycle that does not
  ask for a change resets the count. ``trigger_cycles`` 1 slows at once (the default: slowing
  late is the unsafe direction); unknown never waits.

Pure Python, no ROS: ``SpeedScaler`` is one state machine, stepped once per published cycle.
"""

from dataclasses import dataclass
import math

__all__ = ['ramp', 'ScalingSettings', 'SpeedScaler']


@dataclass(frozen=True)
class ScalingSettings:
    """
    The contract of one scaler (the node's ``slowdown_distance`` ... parameters).

    Distances in metres, counts in cycles (``rate_hz`` cycles per second at most).
    """

    slowdown_distance: float = 0.3
    stop_distance: float = 0.05
    release_margin: float = 0.02
    trigger_cycles: int = 1
    release_cycles: int = 3

    def problem(self):
        """Why these settings cannot work together, or None."""
        if not self.stop_distance < self.slowdown_distance:
            return ('stop_distance (%g) must be less than slowdown_distance (%g)'
                    % (self.stop_distance, self.slowdown_distance))
        if self.trigger_cycles < 1 or self.release_cycles < 1:
            return 'scaling_trigger_cycles and scaling_release_cycles must be at least 1'
        if not self.release_margin >= 0.0:
            return 'scaling_release_margin must be >= 0, got %g' % self.release_margin
        return None


def ramp(distance, settings):
    """
    Return the factor a distance allows, without hysteresis or debounce.

    0 at or below ``stop_distance`` and for an unknown distance (-inf or NaN), 1 at or beyond
    ``slowdown_distance`` (+inf included), linear between.
    """
    if math.isnan(distance) or distance == -math.inf:
        return 0.0
    span = settings.slowdown_distance - settings.stop_distance
    return min(max((distance - settings.stop_distance) / span, 0.0), 1.0)


class SpeedScaler:
    """
    One debounced, hysteretic factor; see the module docstring for the contract.

    The factor starts at 0: nothing measured yet is unknown, and the first measurements must
    hold for ``release_cycles`` before motion is allowed.
    """

    def __init__(self, settings=ScalingSettings()):
        self.settings = settings
        self.factor = 0.0
        self._lower = 0   # consecutive cycles asking for less than the factor
        self._higher = 0  # consecutive cycles allowing more than the factor

    def configure(self, settings):
        """Take new settings; the factor and the counts carry over."""
        self.settings = settings

    def reset(self):
        """Back to 0, as at start (unknown)."""
        self.factor, self._lower, self._higher = 0.0, 0, 0

    def step(self, distance):
        """
        Account for one cycle's minimum distance; return the factor to publish.

        Parameters
        ----------
        distance : float
            The fail-safe minimum (``~/min_distance``): -inf or NaN when unknown.

        """
        settings = self.settings
        if math.isnan(distance) or distance == -math.inf:
            self.reset()
            return self.factor
        lower = ramp(distance, settings)
        higher = ramp(distance - settings.release_margin, settings)
        self._lower = self._lower + 1 if lower < self.factor else 0
        self._higher = self._higher + 1 if higher > self.factor else 0
        if self._lower >= settings.trigger_cycles:
            self.factor, self._lower = lower, 0
        elif self._higher >= settings.release_cycles:
            self.factor, self._higher = higher, 0
        return self.factor
