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
How fast a pair closes: the rate of its signed distance, and the time left to contact.

The signed distance of two convex bodies is ``max_u (u . x - h(u))`` over the support function
of A - B (apart and in penetration alike), and the maximiser is the pair's normal. Where it is
unique (the closest features are), the envelope theorem gives its rate from the witness points
alone, as the planner's gradients do in joint space:

    d(distance)/dt = n . (v_B(witness_b) - v_A(witness_a))

with ``n`` the unit normal from A to B and ``v_X(p)`` the velocity of the point of body X at
``p`` (``FrameMotion.point_velocities``: ``v + w x (p - o)``). Padding moves a witness along
the normal, which changes neither term. The closing speed is ``-d(distance)/dt``: positive
while the pair approaches. Where the closest features are not unique (a face turning parallel
to a face) the rate is one-sided; it is still the rate along the current witnesses.

``record_rates`` fills a whole cycle's records in one compiled call that releases the GIL: each
record's rate from its first piece pair's witnesses, the pieces moving with ``FrameMotion``
twists, and the link's part of the rate alone, or a bound on its points' speeds, for the
separation monitoring (``gjk_ros/ros/compute/closing_speeds.py``).
"""

import math

import numpy as np

from ._jit import njit
from .interpolation import point_velocity

__all__ = ['closing_speed', 'distance_rate', 'record_rates', 'time_to_contact']


def _vectors(values, name, count=None):
    array = np.ascontiguousarray(values, dtype=np.float64)
    if array.size % 3:
        raise ValueError(f'{name}: expected (n, 3) vectors, got shape {array.shape}')
    array = array.reshape(-1, 3)
    if count is not None and array.shape[0] != count:
        raise ValueError(f'{name}: expected {count} vectors (n, 3), got {array.shape[0]}')
    return array


@njit(inline=True)
def _rate(nx, ny, nz, ax, ay, az, bx, by, bz):
    """``n . (v_b - v_a)``: the envelope theorem's rate (module docstring)."""
    return nx * (bx - ax) + ny * (by - ay) + nz * (bz - az)


@njit(inline=True)
def _seconds_to_contact(distance, rate):
    """One pair's ``time_to_contact`` (its docstring)."""
    if not (math.isfinite(rate) and distance > -math.inf):  # (False for a NaN distance)
        return math.nan
    if distance <= 0.0:
        return 0.0
    if rate >= 0.0:
        return math.inf
    return distance / -rate


@njit
def _rates_into(normal, velocity_a, velocity_b, out):
    for n in range(out.shape[0]):
        out[n] = _rate(normal[n, 0], normal[n, 1], normal[n, 2], velocity_a[n, 0],
                       velocity_a[n, 1], velocity_a[n, 2], velocity_b[n, 0], velocity_b[n, 1],
                       velocity_b[n, 2])


@njit
def _times_into(distance, rate, out):
    for n in range(out.shape[0]):
        out[n] = _seconds_to_contact(distance[n], rate[n])


def distance_rate(normal, velocity_a, velocity_b):
    """
    Return d(distance)/dt of each pair (m/s): ``n . (v_b - v_a)`` (module docstring).

    Parameters
    ----------
    normal : (n, 3) float
        Unit normals from A to B (a record's ``normal``).
    velocity_a, velocity_b : (n, 3) float
        Velocities of the body points at ``witness_a`` and ``witness_b``, in the normal's frame.

    Returns
    -------
    (n,) float
        NaN where any input is NaN (an unmeasured pair).

    """
    normal = _vectors(normal, 'normal')
    count = normal.shape[0]
    out = np.empty(count)
    _rates_into(normal, _vectors(velocity_a, 'velocity_a', count),
                _vectors(velocity_b, 'velocity_b', count), out)
    return out


def closing_speed(normal, velocity_a, velocity_b):
    """Return each pair's closing speed, ``-distance_rate`` (m/s, positive when approaching)."""
    return -distance_rate(normal, velocity_a, velocity_b)


def time_to_contact(distance, rate):
    """
    Return the seconds left until contact at the current rate (a linear extrapolation).

    ``distance / -rate`` for a pair apart and closing; 0 at or past contact (distance <= 0);
    +inf for a pair apart that is not closing; NaN where the distance or the rate is unknown
    (NaN, or a distance of -inf: the node's unknown).
    """
    distance, rate = np.broadcast_arrays(np.asarray(distance, dtype=np.float64),
                                         np.asarray(rate, dtype=np.float64))
    out = np.empty(distance.size)
    _times_into(np.ascontiguousarray(distance).reshape(-1),
                np.ascontiguousarray(rate).reshape(-1), out)
    return out.reshape(distance.shape) if distance.ndim else float(out[0])


@njit(inline=True)
def _velocity(motion, row, at_rest, piece, x, y, z):
    """Return the velocity of the point ``(x, y, z)`` riding ``piece``; NaN where unknown."""
    start, delta, axis, angle, seconds = motion
    f = row[piece]
    if f >= 0:  # at the end of its frame's interval (the current pose), per unit of it
        vx, vy, vz = point_velocity(start, delta, axis, angle, f, 1.0, 1.0, x, y, z)
        return vx / seconds[f], vy / seconds[f], vz / seconds[f]
    if at_rest[piece]:
        return 0.0, 0.0, 0.0
    return math.nan, math.nan, math.nan


@njit
def _piece_speed_bounds(motion, row, at_rest, poses, centres, radii, out):
    """Fill each piece's bound on its points' speeds: ``|v(c)| + |w| r`` (NaN where unknown)."""
    angle, seconds = motion[3], motion[4]
    for p in range(out.shape[0]):
        c = (poses[p, 0, 0] * centres[p, 0] + poses[p, 0, 1] * centres[p, 1]
             + poses[p, 0, 2] * centres[p, 2] + poses[p, 0, 3],
             poses[p, 1, 0] * centres[p, 0] + poses[p, 1, 1] * centres[p, 1]
             + poses[p, 1, 2] * centres[p, 2] + poses[p, 1, 3],
             poses[p, 2, 0] * centres[p, 0] + poses[p, 2, 1] * centres[p, 1]
             + poses[p, 2, 2] * centres[p, 2] + poses[p, 2, 3])
        vx, vy, vz = _velocity(motion, row, at_rest, p, c[0], c[1], c[2])
        turn = angle[row[p]] / seconds[row[p]] if row[p] >= 0 else 0.0
        out[p] = math.sqrt(vx * vx + vy * vy + vz * vz) + turn * radii[p]


@njit
def _link_bound(pairs, begin, end, piece_bounds):
    """Return the largest bound of the link pieces of ``pairs[begin:end]`` (NaN: unknown)."""
    bound = -math.inf
    for m in range(begin, end):
        value = piece_bounds[pairs[m, 0]]
        if math.isnan(value):
            return math.nan
        bound = max(bound, value)
    return math.nan if bound == -math.inf else bound


@njit
def record_rates(motion, row, at_rest, pairs, spans, statuses, measured, words, columns,
                 robot, geometry, piece_bounds):
    """
    Write a cycle's records' closing speeds and times to contact, and fill ``robot``.

    Parameters
    ----------
    motion : tuple
        ``(start, delta, axis, angle, seconds)``: a :class:`FrameMotion`'s arrays over the
        moving pieces' frames and the (M,) seconds of each frame's interval.
    row : (P,) int64
        Each piece's frame in ``motion``, -1 for a piece not moving now.
    at_rest : (P,) bool
        The pieces known to be at rest (velocity 0); the others of row -1 are unknown (NaN).
    pairs : (m, 2) int64
        (link piece, obstacle piece) of each piece pair, grouped by record.
    spans : (r, 2) int64
        Each record's slice of ``pairs``; the first pair's pieces carry its witnesses.
    statuses : (r,) uint8
        Each record's status.
    measured : (256,) bool
        The statuses whose values are a measurement (the other records are left as they are).
    words : (r, k) float64
        The records as float64 words, read and written in place.
    columns : (7,) int64
        The words of the first of the link witness (3), obstacle witness (3) and unit normal
        (3), of the distance and error bound, and of the outputs: closing speed (``-rate``) and
        time to contact (of ``distance - error_bound``: contact comes no later than the lower
        end's).
    robot : (r,) or (0,) float64
        Filled when not empty: each measured record's ``-n . (0 - v_link)``, the link's speed
        towards the obstacle; each other record's largest bound on its link pieces' point
        speeds (``_piece_speed_bounds``); NaN where unknown.
    geometry : tuple
        ``(poses, centres, radii)``: the pieces' (P, 4, 4) poses and their bounding spheres
        (P, 3) in piece coordinates, (P,) radii; read only to fill ``robot``.
    piece_bounds : (P,) or (0,) float64
        Work array for ``robot`` (the same length as ``row`` when ``robot`` is filled).

    """
    link, obstacle, normal, distance, error_bound, speed, contact = \
        columns[0], columns[1], columns[2], columns[3], columns[4], columns[5], columns[6]
    with_robot = robot.shape[0] > 0
    if with_robot:
        _piece_speed_bounds(motion, row, at_rest, geometry[0], geometry[1], geometry[2],
                            piece_bounds)
    for r in range(spans.shape[0]):
        begin, end = spans[r, 0], spans[r, 1]
        if with_robot:
            robot[r] = _link_bound(pairs, begin, end, piece_bounds)
        if end <= begin or not measured[statuses[r]]:
            continue
        w = words[r]
        ax, ay, az = _velocity(motion, row, at_rest, pairs[begin, 0], w[link], w[link + 1],
                               w[link + 2])
        bx, by, bz = _velocity(motion, row, at_rest, pairs[begin, 1], w[obstacle],
                               w[obstacle + 1], w[obstacle + 2])
        nx, ny, nz = w[normal], w[normal + 1], w[normal + 2]
        rate = _rate(nx, ny, nz, ax, ay, az, bx, by, bz)
        # + 0.0: a pair at rest reads 0, not -0.
        w[speed] = -rate + 0.0
        w[contact] = _seconds_to_contact(w[distance] - w[error_bound], rate)
        if with_robot:
            robot[r] = -_rate(nx, ny, nz, ax, ay, az, 0.0, 0.0, 0.0) + 0.0
