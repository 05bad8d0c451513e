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
Each record's closing speed and time to contact, from the pieces' last two transform samples.

A piece's velocity is the motion of its frame between the frame's poses at the piece's last
two distinct transform data times (``Frames.pose_pieces``), moved as tf2 interpolates the frame
(``core.interpolation.FrameMotion``: a constant twist over the interval). The frame, not the
piece: a piece away from its frame's origin moves on an arc, and its chord is not its
velocity; the frame's pose is the piece's composed with the inverse of its origin. A cycle
without a new transform keeps the last twist: it is not a piece at rest. A piece on static
transforms is at rest (0); a piece without a pose, or with one sample only, has no velocity
(NaN). Obstacles move with their frames only: a source
that places an obstacle anew gives no velocity (0 on a static frame, docs/motion.md).

The record's rate is the envelope theorem's (``core.closing``): ``n . (v_obstacle(witness) -
v_link(witness))`` with each witness's velocity as a point of its body. Every piece of a body
rides one frame, so any of the record's link pieces (and obstacle pieces) gives that body's
point velocities; the record's first piece pair is taken. Vectorised over the records: no
Python per record.

A record without witnesses (BEYOND: its bounding spheres are farther apart than
``max_distance``) has no rate, but its closing speed is bounded by how fast its bodies' points
move: ``|v(c)| + |w| r`` over each piece's bounding sphere (centre ``c``, radius ``r``), summed
for the two pieces and taken over the record's piece pairs (``speed_bounds``; the separation
monitoring's ``v_r`` of such a pair).
"""

from gjk_ros.core.closing import distance_rate, time_to_contact
from gjk_ros.core.interpolation import FrameMotion
from gjk_ros.ros.compute.pairs import InputState
from gjk_ros.ros.inputs.timekeeping import TIMELESS, UNKNOWN
from gjk_ros.ros.records import PairStatus, status_table
import numpy

__all__ = ['ClosingSpeeds', 'frame_poses', 'PieceVelocities']

_MEASURED = status_table([PairStatus.VALID, PairStatus.APPROXIMATE])


class PieceVelocities:
    """
    Each piece's last two distinct transform samples, and the motion between them.

    ``update`` once a cycle with the pieces' poses, inputs and transform data times; the
    pieces are matched across layouts by uid.
    """

    def __init__(self):
        self._uids = []
        self._time = self._previous_time = numpy.zeros(0, dtype=numpy.int64)
        self._pose = self._previous_pose = numpy.zeros((0, 4, 4))
        self._motion = None  # (FrameMotion of the moving pieces, their row, seconds)

    def update(self, uids, poses, inputs, times):
        """
        Take this cycle's samples and return what ``_point_velocities`` needs.

        (P,) uids, (P, 4, 4) poses of the pieces' frames, (P,) inputs, (P,) int ns.
        """
        if list(uids) != self._uids:
            self._remap(list(uids))
        times = numpy.asarray(times, dtype=numpy.int64)
        sampled = (numpy.asarray(inputs) == InputState.OK) & (times != TIMELESS) & \
            (times != UNKNOWN)
        new = sampled & (times != self._time)
        if new.any() or self._motion is None:
            # A time before the last sample (ROS time jumped back) starts the history afresh.
            self._previous_time[new] = numpy.where(times[new] > self._time[new],
                                                   self._time[new], UNKNOWN)
            self._previous_pose[new] = self._pose[new]
            self._time[new], self._pose[new] = times[new], poses[new]
            moving = numpy.flatnonzero(self._previous_time != UNKNOWN)
            row = numpy.full(len(times), -1, dtype=numpy.int64)
            row[moving] = numpy.arange(len(moving))
            seconds = (self._time[moving] - self._previous_time[moving]) * 1e-9
            self._motion = (FrameMotion(self._previous_pose[moving], self._pose[moving]), row,
                            seconds)
        motion, row, seconds = self._motion
        # The current pose must be the last sample's: a piece sampled before that is not now.
        moving = sampled & (row >= 0) & (times == self._time)
        at_rest = (numpy.asarray(inputs) == InputState.OK) & (times == TIMELESS)
        return motion, numpy.where(moving, row, -1), seconds, at_rest

    def _remap(self, uids):
        """Carry the samples of the pieces that survive a rebuild over (by uid)."""
        old = {uid: index for index, uid in enumerate(self._uids)}
        count = len(uids)
        time = numpy.full(count, UNKNOWN, dtype=numpy.int64)
        previous_time = time.copy()
        pose = numpy.tile(numpy.eye(4), (count, 1, 1))
        previous_pose = pose.copy()
        for index, uid in enumerate(uids):
            if uid in old:
                time[index], previous_time[index] = self._time[old[uid]], \
                    self._previous_time[old[uid]]
                pose[index], previous_pose[index] = self._pose[old[uid]], \
                    self._previous_pose[old[uid]]
        self._uids, self._time, self._previous_time = uids, time, previous_time
        self._pose, self._previous_pose, self._motion = pose, previous_pose, None


def frame_poses(poses, origins):
    """Return the (P, 4, 4) poses of the pieces' frames: ``pose @ inverse(origin)``."""
    rotation = numpy.swapaxes(origins[:, :3, :3], 1, 2)
    inverse = numpy.zeros_like(origins)
    inverse[:, :3, :3] = rotation
    inverse[:, :3, 3] = -numpy.einsum('nij,nj->ni', rotation, origins[:, :3, 3])
    inverse[:, 3, 3] = 1.0
    return numpy.matmul(poses, inverse)


def _point_velocities(samples, pieces, points):
    """Return the (n, 3) velocities of world ``points`` riding ``pieces``; NaN where unknown."""
    motion, row, seconds, at_rest = samples
    out = numpy.full(points.shape, numpy.nan)
    out[at_rest[pieces]] = 0.0
    moving = numpy.flatnonzero(row[pieces] >= 0)
    if len(moving):
        frames = row[pieces[moving]]
        # Per unit fraction of each piece's own interval, at its end (the current pose).
        out[moving] = motion.point_velocities(frames, points[moving], 1.0, 1.0) / \
            seconds[frames][:, None]
    return out


def _speed_bounds(samples, poses, spheres, layout, owner, count):
    """Return each record's bound on its closing speed (NaN where a velocity is unknown)."""
    centres, radii = spheres
    world = numpy.einsum('nij,nj->ni', poses[:, :3, :3], centres) + poses[:, :3, 3]
    pieces = numpy.arange(len(poses))
    motion, row, seconds, _ = samples
    speed = numpy.linalg.norm(_point_velocities(samples, pieces, world), axis=1)
    turn = numpy.zeros(len(poses))
    moving = numpy.flatnonzero(row >= 0)
    if len(moving):
        turn[moving] = motion.angle[row[moving]] / seconds[row[moving]]
    piece_bound = speed + turn * radii
    bounds = numpy.full(count, -numpy.inf)
    with numpy.errstate(invalid='ignore'):  # an unknown velocity makes its record's bound NaN
        numpy.maximum.at(bounds, owner, piece_bound[layout.pairs[:, 0]]
                         + piece_bound[layout.pairs[:, 1]])
    bounds[bounds == -numpy.inf] = numpy.nan
    return bounds


class ClosingSpeeds:
    """
    Fill the ``closing_speed`` and ``time_to_contact`` fields of a cycle's records.

    ``speed_bounds`` (r,) holds, after each update, each record's bound on its closing speed.
    """

    def __init__(self):
        self.velocities = PieceVelocities()
        self.speed_bounds = numpy.zeros(0)
        self._layout = None
        self._pieces = None  # (records with pieces, their link piece, their obstacle piece)
        self._spheres = None  # (centres, radii) of the pieces, and each piece pair's record

    def update(self, tracker, shapes, poses, origins, inputs, times, records):
        """
        Write each record's rate fields (in place).

        ``tracker`` the cycle's PairTracker (its layout names each record's pieces), ``shapes``
        its pieces' shapes, ``poses``, ``origins``, ``inputs`` and ``times`` the pieces' poses,
        their poses in their frames (``Layout.placement``), input states and transform data
        times (int ns, ``Frames.pose_pieces``), ``records`` the tracker's records this cycle.
        """
        samples = self.velocities.update(tracker.layout.piece_uids, frame_poses(poses, origins),
                                         inputs, times)
        if tracker.layout is not self._layout:
            self._take_layout(tracker.layout, shapes)
        self.speed_bounds = _speed_bounds(samples, poses, self._spheres[:2], self._layout,
                                          self._spheres[2], len(records))
        having, link_pieces, obstacle_pieces = self._pieces
        chosen = records[having]
        measured = _MEASURED[chosen['status']]
        index, link_pieces, obstacle_pieces = having[measured], link_pieces[measured], \
            obstacle_pieces[measured]
        chosen = chosen[measured]
        link = numpy.stack([chosen['link_x'], chosen['link_y'], chosen['link_z']], axis=1)
        obstacle = numpy.stack([chosen['obstacle_x'], chosen['obstacle_y'],
                                chosen['obstacle_z']], axis=1)
        normal = numpy.stack([chosen['normal_x'], chosen['normal_y'], chosen['normal_z']],
                             axis=1)
        rate = distance_rate(normal, _point_velocities(samples, link_pieces, link),
                             _point_velocities(samples, obstacle_pieces, obstacle))
        records['closing_speed'][index] = -rate
        # An APPROXIMATE distance is known within its bound: contact comes no later than the
        # lower end's.
        records['time_to_contact'][index] = time_to_contact(
            chosen['distance'] - chosen['error_bound'], rate)

    def _take_layout(self, layout, shapes):
        self._layout = layout
        spans = numpy.array([(spec.start, spec.stop) for spec in layout.records],
                            dtype=numpy.int64).reshape(-1, 2)
        having = numpy.flatnonzero(spans[:, 1] > spans[:, 0])
        first = layout.pairs[spans[having, 0]].reshape(-1, 2)
        self._pieces = (having, first[:, 0], first[:, 1])
        centres = numpy.array([shape.bounding_center for shape in shapes],
                              dtype=float).reshape(-1, 3)
        radii = numpy.array([shape.bounding_radius for shape in shapes], dtype=float)
        owner = numpy.repeat(numpy.arange(len(spans)), spans[:, 1] - spans[:, 0])
        self._spheres = (centres, radii, owner)
