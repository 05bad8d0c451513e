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
Speed and separation monitoring: ISO/TS 15066's protective separation distance, as it writes it.

ISO/TS 15066:2016 clause 5.5.4 (speed and separation monitoring), formula (1) with constant
speeds over the intervals:

    S_p = v_h (T_r + T_s) + v_r T_r + S_s + C + Z_d + Z_r

- ``v_h (T_r + T_s)``: how far the person approaches while the robot reacts and stops; ``v_h``
  1.6 m/s (ISO 13855's walking speed) unless the risk assessment says otherwise.
- ``v_r T_r``: how far the robot travels towards the person during its reaction time ``T_r``
  (sensing, processing and the controller's response), ``v_r`` its directed speed towards the
  person: here a link's closing speed on the pair's normal, without the person's own motion
  (that is ``v_h``'s), and never below 0 (a receding link is given no credit).
- ``S_s`` and ``T_s``: the robot's stopping distance and time, constants or a table by speed
  (the rated stopping data of ISO 10218-1 Annex B, read at ``v_r``).
- ``C``: the intrusion distance (ISO 13855: how far a body part reaches past the sensing field
  before it is detected); ``Z_d``, ``Z_r``: the position uncertainties of the person (the
  sensor's tolerance) and of the robot.

The margin is ``d - S_p`` with ``d`` the separation distance (the node's swept lower bound), and
the speed scaling is the largest factor ``a`` in [0, 1] whose speed ``a v_r`` keeps the margin
non-negative: every term grows with the speed, so the margin falls as ``a`` rises and the
factor is exact where the terms are piecewise linear in speed (constants or a table).

Fail-safe, as the node's other outputs: any unknown input (a NaN or -inf distance, a NaN speed,
an unset term, a speed beyond the stopping table) gives a margin of -inf and a scaling of 0. A
convenience for integrators, not a rated safety function: ``T_r``, ``T_s``, ``S_s`` (or the
table), ``C``, ``Z_d`` and ``Z_r`` must come from the rated data of the robot, its controller
and the sensors, and have no defaults.
"""

from dataclasses import dataclass, fields
import math

import numpy as np

__all__ = ['SeparationSettings', 'SeparationVerdict', 'StoppingTable', 'evaluate_group',
           'protective_distance', 'separation_margin', 'speed_scaling']

# ISO 13855's walking speed of a person approaching a hazard (m/s), ISO/TS 15066's default v_h.
HUMAN_WALKING_SPEED = 1.6


@dataclass(frozen=True)
class StoppingTable:
    """
    Rated stopping behaviour by speed, linear between rows.

    Attributes
    ----------
    speeds : tuple of float
        Robot speeds (m/s), strictly increasing from 0; a speed beyond the last is unknown.
    distances : tuple of float
        Stopping distance ``S_s`` at each speed (metres), non-decreasing.
    times : tuple of float
        Stopping time ``T_s`` at each speed (seconds), non-decreasing.

    """

    speeds: tuple
    distances: tuple
    times: tuple

    def problem(self):
        """Return why the table cannot be used, or None."""
        columns = {'speeds': self.speeds, 'distances': self.distances, 'times': self.times}
        sizes = {len(column) for column in columns.values()}
        if len(sizes) != 1 or len(self.speeds) < 2:
            return ('stopping_table: speeds, distances and times need the same number of rows, '
                    'at least 2')
        for name, column in columns.items():
            if not all(math.isfinite(value) and value >= 0.0 for value in column):
                return f'stopping_table: every {name} value must be finite and >= 0'
        if self.speeds[0] != 0.0 or any(b <= a for a, b in zip(self.speeds, self.speeds[1:])):
            return 'stopping_table: speeds must start at 0 and increase strictly'
        for name in ('distances', 'times'):
            column = columns[name]
            if any(b < a for a, b in zip(column, column[1:])):
                return f'stopping_table: {name} must not decrease with speed'
        return None

    def at(self, speed):
        """Return ``(S_s, T_s)`` arrays at ``speed`` (NaN beyond the last row or for NaN)."""
        speed = np.asarray(speed, dtype=np.float64)
        distance = np.interp(speed, self.speeds, self.distances)
        time = np.interp(speed, self.speeds, self.times)
        unknown = ~(speed <= self.speeds[-1])
        return np.where(unknown, math.nan, distance), np.where(unknown, math.nan, time)


@dataclass(frozen=True)
class SeparationSettings:
    """
    The terms of ISO/TS 15066's formula for one obstacle group (people, fixtures, ...).

    Speeds in m/s, times in seconds, lengths in metres. NaN means "not supplied": the rated
    terms have no default, and a group with any of them unset is unknown (scaling 0). With a
    ``stopping_table``, ``stopping_time`` and ``stopping_distance`` are read from it instead.
    """

    human_speed: float = HUMAN_WALKING_SPEED
    reaction_time: float = math.nan
    stopping_time: float = math.nan
    stopping_distance: float = math.nan
    intrusion_distance: float = math.nan
    human_uncertainty: float = math.nan
    robot_uncertainty: float = math.nan
    stopping_table: StoppingTable = None

    def missing(self):
        """Return the names of the terms still unset (NaN), in declaration order."""
        table_terms = ('stopping_time', 'stopping_distance') if self.stopping_table else ()
        return [f.name for f in fields(self) if f.name != 'stopping_table'
                and f.name not in table_terms and math.isnan(getattr(self, f.name))]

    def problem(self):
        """Return why the set terms cannot be used (naming the term), or None."""
        for f in fields(self):
            if f.name == 'stopping_table':
                continue
            value = getattr(self, f.name)
            if not (math.isnan(value) or (math.isfinite(value) and value >= 0.0)):
                return f'{f.name} must be a finite number >= 0 (or unset), got {value!r}'
        return self.stopping_table.problem() if self.stopping_table else None

    def stopping(self, speed):
        """Return ``(S_s, T_s)`` arrays at the robot ``speed`` (the table's, or the constants)."""
        speed = np.asarray(speed, dtype=np.float64)
        if self.stopping_table is not None:
            return self.stopping_table.at(speed)
        return (np.full(speed.shape, self.stopping_distance),
                np.full(speed.shape, self.stopping_time))


@dataclass(frozen=True)
class SeparationVerdict:
    """
    One group's answer: the smallest margin and the scaling that keeps every margin >= 0.

    ``pair`` is the index of the pair that limits the scaling (the smallest margin when the
    scaling is 1), -1 for an empty group; ``missing`` the unset terms, or ``problem`` why the
    settings cannot be used (both make the verdict unknown).
    """

    margin: float
    scaling: float
    pair: int
    missing: tuple = ()
    problem: str = ''


def _robot_speed(robot_speed):
    """``v_r``: a link's closing speed, never below 0 (NaN stays NaN)."""
    speed = np.asarray(robot_speed, dtype=np.float64)
    return np.where(speed < 0.0, 0.0, speed)


def _usable(settings):
    return not settings.missing() and settings.problem() is None


def protective_distance(settings, robot_speed):
    """
    Return ``S_p`` (metres) at each directed robot speed ``v_r`` (m/s).

    NaN where the speed or a term is unknown (unset, beyond the stopping table).
    """
    speed = _robot_speed(robot_speed)
    if not _usable(settings):
        return np.full(speed.shape, math.nan)[()]
    stop_distance, stop_time = settings.stopping(speed)
    reaction = settings.reaction_time
    return (settings.human_speed * (reaction + stop_time) + speed * reaction + stop_distance
            + settings.intrusion_distance + settings.human_uncertainty
            + settings.robot_uncertainty)[()]


def separation_margin(settings, distance, robot_speed):
    """
    Return ``d - S_p`` for each pair: the separation left beyond the protective distance.

    ``distance`` the separation distance (metres; the swept lower bound), ``robot_speed`` the
    link's closing speed ``v_r`` (m/s). -inf where anything is unknown; +inf for a pair with
    nothing in range (a distance of +inf).
    """
    distance = np.asarray(distance, dtype=np.float64)
    required = protective_distance(settings, robot_speed)
    distance, required = np.broadcast_arrays(distance, required)
    known = ~np.isnan(distance) & (distance > -math.inf) & ~np.isnan(required)
    margin = np.full(distance.shape, -math.inf)
    margin[known] = distance[known] - required[known]
    return margin[()]


def _scaling_one(settings, distance, speed):
    """Return the largest factor in [0, 1] whose speed keeps ``distance - S_p`` >= 0."""
    def margin(factor):
        return float(distance - protective_distance(settings, factor * speed))

    if not margin(1.0) < 0.0:
        return 1.0 if margin(1.0) >= 0.0 else 0.0  # NaN: unknown
    if not margin(0.0) >= 0.0:
        return 0.0
    # The margin is linear in the factor between the table's speeds: solve on the segment
    # where it changes sign.
    breaks = [0.0]
    if settings.stopping_table is not None and speed > 0.0:
        breaks += sorted(v / speed for v in settings.stopping_table.speeds if 0.0 < v < speed)
    breaks.append(1.0)
    for low, high in zip(breaks, breaks[1:]):
        at_low, at_high = margin(low), margin(high)
        if at_high < 0.0:
            return low + (high - low) * at_low / (at_low - at_high)
    return 1.0


def speed_scaling(settings, distance, robot_speed):
    """
    Return the speed factor in [0, 1] of each pair that keeps its margin non-negative.

    0 where the margin is negative even at standstill or anything is unknown (see
    :func:`separation_margin`), 1 where the current speed keeps the margin non-negative.
    """
    distance = np.asarray(distance, dtype=np.float64)
    speed = _robot_speed(robot_speed)
    distance, speed = np.broadcast_arrays(distance, speed)
    out = np.zeros(distance.shape)
    if _usable(settings):
        for index in np.ndindex(distance.shape):
            d, v = float(distance[index]), float(speed[index])
            if not (math.isnan(d) or d == -math.inf or math.isnan(v)):
                out[index] = _scaling_one(settings, d, v)
    return out[()]


def evaluate_group(settings, distances, robot_speeds):
    """
    Return the :class:`SeparationVerdict` of one obstacle group's pairs.

    The group's margin is its pairs' smallest and its scaling their smallest: the robot's
    speed scales every link's. An empty group is clear (margin +inf, scaling 1): whether an
    empty scope may count as clear is the caller's rule, as for ``~/min_distance``.
    """
    missing, problem = tuple(settings.missing()), settings.problem() or ''
    distances = np.asarray(distances, dtype=np.float64).reshape(-1)
    speeds = np.asarray(robot_speeds, dtype=np.float64).reshape(-1)
    if distances.shape != speeds.shape:
        raise ValueError(f'robot_speeds: expected {distances.size} speeds, got {speeds.size}')
    if missing or problem:
        return SeparationVerdict(-math.inf, 0.0, -1, missing, problem)
    if distances.size == 0:
        return SeparationVerdict(math.inf, 1.0, -1)
    margins = np.atleast_1d(separation_margin(settings, distances, speeds))
    scalings = np.atleast_1d(speed_scaling(settings, distances, speeds))
    worst = int(np.argmin(scalings)) if scalings.min() < 1.0 else int(np.argmin(margins))
    return SeparationVerdict(float(margins.min()), float(scalings.min()), worst)
