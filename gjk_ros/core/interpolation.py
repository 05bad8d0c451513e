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
Frames between two samples, moved as tf2 interpolates them, and the velocities that implies.

tf2 places a frame between two stored transforms by linear interpolation of the translation and
spherical linear interpolation (slerp) of the rotation (``tf2::TimeCache::interpolate``), along
the shorter arc: ``tf2::slerp`` takes the quaternion of opposite sign when the two are more than
a half-turn apart. Over one sample interval that motion is

    R(s) = Rot(k, s theta) R0,    t(s) = t0 + s (t1 - t0),    s in [0, 1],

with ``Rot(k, theta) = R1 R0^T`` the relative rotation about the world axis ``k``, ``theta`` in
[0, pi]: a constant velocity of the frame origin and a constant angular velocity ``k theta`` per
unit of ``s``.

How a body moves over the interval (``FrameMotion.sphere_motion``), for a body inside the
sphere of centre ``c`` (frame coordinates) and radius ``r``: let ``T`` be the chord of its
centre, ``c_w(1) - c_w(0)``. Every point ``p`` of the body stays within

    |x_p(s) - x_p(a) - T (s - a)| <= rho |s - a|,    rho = theta (r + theta |c|),

of the pure translation by the chord: the centre's velocity ``t1 - t0 + w x R(s) c`` differs
from its mean over the interval, the chord, by at most ``theta^2 |c|`` (the arc turns by at most
``theta``), and the turn moves ``p`` about the centre by at most ``theta r |s - a|``. So a body
far from its frame origin, turning with it, counts as a translation plus a small turn, not as a
long lever; and no point moves faster than ``|T| + rho`` per unit of ``s``.
"""

import math

import numpy as np

from ._jit import njit
from .distance import check_poses

__all__ = ['FrameMotion', 'frame_at', 'point_velocity', 'sphere_motion_into']


@njit(inline=True)
def frame_at(start, delta, axis, angle, f, s, out):
    """
    Write frame ``f``'s pose at fraction ``s`` of its motion into ``out`` (4, 4).

    ``start`` (F, 4, 4), ``delta`` (F, 3), ``axis`` (F, 3), ``angle`` (F,) are the arrays of a
    :class:`FrameMotion`. The rotation is Rodrigues' formula for ``Rot(k, s theta)`` applied to
    the start rotation (module docstring).
    """
    phi = s * angle[f]
    c, sn = math.cos(phi), math.sin(phi)
    one = 1.0 - c
    kx, ky, kz = axis[f, 0], axis[f, 1], axis[f, 2]
    r00, r01, r02 = c + one * kx * kx, one * kx * ky - sn * kz, one * kx * kz + sn * ky
    r10, r11, r12 = one * ky * kx + sn * kz, c + one * ky * ky, one * ky * kz - sn * kx
    r20, r21, r22 = one * kz * kx - sn * ky, one * kz * ky + sn * kx, c + one * kz * kz
    for j in range(3):
        a, b, d = start[f, 0, j], start[f, 1, j], start[f, 2, j]
        out[0, j] = r00 * a + r01 * b + r02 * d
        out[1, j] = r10 * a + r11 * b + r12 * d
        out[2, j] = r20 * a + r21 * b + r22 * d
        out[3, j] = 0.0
    for i in range(3):
        out[i, 3] = start[f, i, 3] + s * delta[f, i]
    out[3, 3] = 1.0


@njit(inline=True)
def point_velocity(start, delta, axis, angle, f, fraction, duration, x, y, z):
    """
    Return the velocity ``(vx, vy, vz)`` of the world point ``(x, y, z)`` fixed in frame ``f``.

    The arrays are a :class:`FrameMotion`'s; the point is where it is at ``fraction`` of the
    interval of ``duration`` seconds: ``v + w x (p - o(fraction))``, with ``v = delta /
    duration`` and ``w = axis angle / duration`` constant over the interval (module docstring).
    """
    lx, ly, lz = delta[f, 0] / duration, delta[f, 1] / duration, delta[f, 2] / duration
    turn = angle[f] / duration
    wx, wy, wz = axis[f, 0] * turn, axis[f, 1] * turn, axis[f, 2] * turn
    dx = x - (start[f, 0, 3] + fraction * delta[f, 0])
    dy = y - (start[f, 1, 3] + fraction * delta[f, 1])
    dz = z - (start[f, 2, 3] + fraction * delta[f, 2])
    return lx + (wy * dz - wz * dy), ly + (wz * dx - wx * dz), lz + (wx * dy - wy * dx)


@njit
def _point_velocities_into(start, delta, axis, angle, frames, points, fraction, duration, out):
    for n in range(frames.shape[0]):
        out[n, 0], out[n, 1], out[n, 2] = point_velocity(
            start, delta, axis, angle, frames[n], fraction, duration, points[n, 0],
            points[n, 1], points[n, 2])


@njit
def _frames_at(start, delta, axis, angle, s, out):
    for f in range(start.shape[0]):
        frame_at(start, delta, axis, angle, f, s, out[f])


@njit(inline=True)
def _turn(m):
    """
    Return ``(x, y, z, w)``: the unit quaternion of rotation ``m`` with ``w >= 0``.

    Shepperd's method (the largest of the trace and the diagonal picks the stable formula), so
    that small turns keep their full precision; ``w >= 0`` is the shorter arc.
    """
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace >= m[0, 0] and trace >= m[1, 1] and trace >= m[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + trace, 0.0))
        w, x, y, z = 0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, \
            (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] >= m[1, 1] and m[0, 0] >= m[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + m[0, 0] - m[1, 1] - m[2, 2], 0.0))
        w, x, y, z = (m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, \
            (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] >= m[2, 2]:
        s = 2.0 * math.sqrt(max(1.0 + m[1, 1] - m[0, 0] - m[2, 2], 0.0))
        w, x, y, z = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, \
            (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 + m[2, 2] - m[0, 0] - m[1, 1], 0.0))
        w, x, y, z = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, \
            (m[1, 2] + m[2, 1]) / s, 0.25 * s
    if w < 0.0:
        return -x, -y, -z, -w
    return x, y, z, w


@njit
def _relative_motion(start, end, delta, axis, angle, relative):
    """Fill each frame's translation, world turn axis and angle (``relative``: (3, 3) work)."""
    for f in range(start.shape[0]):
        for i in range(3):
            delta[f, i] = end[f, i, 3] - start[f, i, 3]
            for j in range(3):
                relative[i, j] = (end[f, i, 0] * start[f, j, 0] + end[f, i, 1] * start[f, j, 1]
                                  + end[f, i, 2] * start[f, j, 2])
        x, y, z, w = _turn(relative)
        sine = math.sqrt(x * x + y * y + z * z)
        angle[f] = 2.0 * math.atan2(sine, w)
        if sine > 0.0:
            axis[f, 0], axis[f, 1], axis[f, 2] = x / sine, y / sine, z / sine
        else:
            axis[f, 0], axis[f, 1], axis[f, 2] = 1.0, 0.0, 0.0


@njit
def sphere_motion_into(start, end, angle, frames, centres, radii, chord, turn):
    """
    Fill the chord (n, 3) and turn bound (n,) of spheres riding frames (module docstring).

    ``start``, ``end``, ``angle`` are a :class:`FrameMotion`'s; ``frames`` (n,) the frame of
    each sphere, ``centres`` (n, 3) and ``radii`` (n,) the spheres in their frames.
    """
    for b in range(frames.shape[0]):
        f = frames[b]
        cx, cy, cz = centres[b, 0], centres[b, 1], centres[b, 2]
        for i in range(3):
            chord[b, i] = (end[f, i, 0] * cx + end[f, i, 1] * cy + end[f, i, 2] * cz + end[f, i, 3]
                           - start[f, i, 0] * cx - start[f, i, 1] * cy - start[f, i, 2] * cz
                           - start[f, i, 3])
        theta = angle[f]
        # An unbounded body (infinite radius) turns without bound only when its frame turns.
        turn[b] = theta * (radii[b] + theta * math.sqrt(cx * cx + cy * cy + cz * cz)) \
            if theta > 0.0 else 0.0


class FrameMotion:
    """
    The motion of ``F`` frames from their start poses to their end poses, as tf2 interpolates.

    Parameters
    ----------
    start, end : (F, 4, 4) float
        Frame-to-world transforms at the two samples (finite rigid transforms; ValueError
        naming ``start`` or ``end`` otherwise).

    Attributes
    ----------
    start, end : (F, 4, 4) float
        The poses, as float64 C arrays.
    delta : (F, 3) float
        Translation of each frame origin over the interval (metres).
    axis : (F, 3) float
        Unit world axis of each frame's rotation over the interval (x when it does not turn).
    angle : (F,) float
        Rotation angle over the interval, in [0, pi] (the shorter arc, as tf2's slerp).

    """

    def __init__(self, start, end):
        """Validate both pose sets and take the relative motion of every frame."""
        # Own writeable copies: the kernels are compiled for one array type only.
        self.start = check_poses(start, 'start').reshape(-1, 4, 4).copy()
        self.end = check_poses(end, 'end').reshape(-1, 4, 4).copy()
        if self.start.shape != self.end.shape:
            raise ValueError(f'end: expected {self.start.shape[0]} poses like start, got '
                             f'{self.end.shape[0]}')
        count = self.start.shape[0]
        self.delta, self.axis, self.angle = np.empty((count, 3)), np.empty((count, 3)), \
            np.empty(count)
        _relative_motion(self.start, self.end, self.delta, self.axis, self.angle,
                         np.empty((3, 3)))

    @property
    def num_frames(self):
        return self.start.shape[0]

    def arrays(self):
        """Return ``(start, delta, axis, angle)``, the arguments of :func:`frame_at`."""
        return self.start, self.delta, self.axis, self.angle

    def poses(self, fraction):
        """Return the (F, 4, 4) frame poses at ``fraction`` in [0, 1] of the interval."""
        fraction = float(fraction)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f'fraction must be in [0, 1], got {fraction!r}')
        out = np.empty_like(self.start)
        _frames_at(self.start, self.delta, self.axis, self.angle, fraction, out)
        return out

    def velocities(self, duration):
        """
        Return the (F, 3) linear and (F, 3) angular velocities of the frames (world frame).

        ``duration`` is the interval in seconds (> 0): the origin moves at ``delta /
        duration`` m/s and the frame turns at ``axis * angle / duration`` rad/s, both constant
        over the interval.
        """
        duration = _positive(duration, 'duration')
        return self.delta / duration, self.axis * (self.angle / duration)[:, None]

    def point_velocities(self, frames, points, fraction, duration):
        """
        Return the (n, 3) velocities of world points fixed in the given frames.

        ``frames`` (n,) frame index of each point, ``points`` (n, 3) where the points are at
        ``fraction`` of the interval: ``v + w x (p - o(fraction))`` with ``o`` the frame origin.
        """
        frames = np.ascontiguousarray(frames, dtype=np.int64).reshape(-1)
        points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
        if frames.size and (frames.min() < 0 or frames.max() >= self.num_frames):
            raise ValueError(f'frames: indices must be in [0, {self.num_frames})')
        if points.shape[0] != frames.size:
            raise ValueError(f'points: expected {frames.size} points (n, 3), got '
                             f'{points.shape[0]}')
        out = np.empty((frames.size, 3))
        _point_velocities_into(self.start, self.delta, self.axis, self.angle, frames, points,
                               float(fraction), _positive(duration, 'duration'), out)
        return out

    def sphere_motion(self, frames, centres, radii):
        """
        Return how bodies riding the frames move: their (n, 3) chords and (n,) turn bounds.

        ``frames`` (n,) the frame each body rides, ``centres`` (n, 3) and ``radii`` (n,) a
        sphere holding each body, in its frame's coordinates. The chord ``T`` is the world
        displacement of the centre over the interval and the turn bound ``rho`` bounds every
        point's deviation from that translation (module docstring), per unit of fraction. An
        unbounded body (infinite radius) has an unbounded turn only when its frame turns.
        """
        frames = np.ascontiguousarray(frames, dtype=np.int64).reshape(-1)
        centres = np.ascontiguousarray(centres, dtype=np.float64).reshape(-1, 3)
        radii = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
        if frames.size and (frames.min() < 0 or frames.max() >= self.num_frames):
            raise ValueError(f'frames: indices must be in [0, {self.num_frames})')
        if centres.shape[0] != frames.size or radii.size != frames.size:
            raise ValueError(f'centres, radii: expected {frames.size} spheres')
        chord, turn = np.empty((frames.size, 3)), np.empty(frames.size)
        sphere_motion_into(self.start, self.end, self.angle, frames, centres, radii, chord, turn)
        return chord, turn


def _positive(value, name):
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f'{name} must be a finite positive number of seconds, got {value!r}')
    return value
