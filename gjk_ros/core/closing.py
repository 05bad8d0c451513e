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
"""

import math

import numpy as np

__all__ = ['closing_speed', 'distance_rate', 'time_to_contact']


def _vectors(values, name, count=None):
    array = np.asarray(values, dtype=np.float64)
    if array.size % 3:
        raise ValueError(f'{name}: expected (n, 3) vectors, got shape {array.shape}')
    array = array.reshape(-1, 3)
    if count is not None and array.shape[0] != count:
        raise ValueError(f'{name}: expected {count} vectors (n, 3), got {array.shape[0]}')
    return array


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
    relative = _vectors(velocity_b, 'velocity_b', count) - \
        _vectors(velocity_a, 'velocity_a', count)
    return np.einsum('ij,ij->i', normal, relative)


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
    distance = np.asarray(distance, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64)
    distance, rate = np.broadcast_arrays(distance, rate)
    out = np.full(distance.shape, math.nan)
    known = np.isfinite(rate) & ~np.isnan(distance) & (distance > -math.inf)
    contact = known & (distance <= 0.0)
    closing = known & (distance > 0.0) & (rate < 0.0)
    out[contact] = 0.0
    out[known & (distance > 0.0) & (rate >= 0.0)] = math.inf
    with np.errstate(over='ignore'):
        out[closing] = distance[closing] / -rate[closing]
    return out if out.ndim else float(out)
