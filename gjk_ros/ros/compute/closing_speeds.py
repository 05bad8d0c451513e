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

The separation monitoring's ``v_r`` is the robot's part of that rate alone (``robot_speeds``):
``-n . (0 - v_link(witness))``, the link's speed towards the obstacle, the obstacle's own motion
left out (ISO/TS 15066 counts it in ``v_h``). A record without witnesses (BEYOND: its bounding
spheres are farther apart than ``max_distance``) has no rate, but its link's speed towards
anything is bounded by how fast the link's points move: ``|v(c)| + |w| r`` over each link
piece's bounding sphere (centre ``c``, radius ``r``), the largest over the record's pieces.
"""

from gjk_ros.core.closing import distance_rate, time_to_contact
from gjk_ros.core.interpolation import FrameMotion
from gjk_ros.ros.compute.pairs import InputState, value_rows
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
        self._uids, self._source = [], None
        self._time = self._previous_time = numpy.zeros(0, dtype=numpy.int64)
        self._pose = self._previous_pose = numpy.zeros((0, 4, 4))
        self._motion = None  # (FrameMotion of the moving pieces, their row, seconds)

    def update(self, uids, poses, inputs, times):
        """
        Take this cycle's samples and return what ``_point_velocities`` needs.

        (P,) uids, (P, 4, 4) poses of the pieces' frames, (P,) inputs, (P,) int ns.
        """
        if uids is not self._source:  # the layout's list: a new one only on a rebuild
            self._source = uids
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


def _link_speed_bounds(samples, centre_velocities, radii, link_pieces, owner, count):
    """
    Return each record's bound on its link's point speeds (NaN where it is unknown).

    ``centre_velocities`` (P, 3) the velocities of the pieces' bounding centres, ``radii`` (P,)
    their radii, ``link_pieces`` (m,) the link piece of each piece pair, ``owner`` its record.
    """
    motion, row, seconds, _ = samples
    turn = numpy.zeros(len(radii))
    moving = numpy.flatnonzero(row >= 0)
    if len(moving):
        turn[moving] = motion.angle[row[moving]] / seconds[row[moving]]
    piece_bound = numpy.linalg.norm(centre_velocities, axis=1) + turn * radii
    bounds = numpy.full(count, -numpy.inf)
    with numpy.errstate(invalid='ignore'):  # an unknown velocity makes its record's bound NaN
        numpy.maximum.at(bounds, owner, piece_bound[link_pieces])
    bounds[bounds == -numpy.inf] = numpy.nan
    return bounds


class ClosingSpeeds:
    """
    Fill the ``closing_speed`` and ``time_to_contact`` fields of a cycle's records.

    ``robot_speeds`` (r,) holds, after each update, each record's ``v_r``: its link's speed
    towards the obstacle (measured records), or the bound on its link's point speeds (the
    others); NaN where the link's velocity is unknown; None after an update that did not ask
    for them (no separation groups).
    """

    def __init__(self):
        self.velocities = PieceVelocities()
        self.robot_speeds = numpy.zeros(0)
        self._layout = None
        self._pieces = None  # (records with pieces, their link piece, their obstacle piece)
        self._spheres = None  # (centres, radii) of the pieces, and each piece pair's record

    def update(self, tracker, shapes, poses, origins, inputs, times, records, robot_speeds=True):
        """
        Write each record's rate fields (in place).

        ``tracker`` the cycle's PairTracker (its layout names each record's pieces), ``shapes``
        its pieces' shapes, ``poses``, ``origins``, ``inputs`` and ``times`` the pieces' poses,
        their poses in their frames (``Layout.placement``), input states and transform data
        times (int ns, ``Frames.pose_pieces``), ``records`` the tracker's records this cycle.
        ``robot_speeds``: also fill :attr:`robot_speeds` (only the separation groups read it;
        None otherwise).
        """
        samples = self.velocities.update(tracker.layout.piece_uids, frame_poses(poses, origins),
                                         inputs, times)
        if tracker.layout is not self._layout:
            self._take_layout(tracker.layout, shapes)
        having, link_pieces, obstacle_pieces = self._pieces
        centres, radii, owner = self._spheres
        measured = _MEASURED[records['status'][having]]
        index, link_pieces, obstacle_pieces = having[measured], link_pieces[measured], \
            obstacle_pieces[measured]
        # The measured records' values in one gather: link and obstacle witnesses, normal,
        # distance, error bound (pairs.VALUE_FIELDS).
        values = value_rows(records, index)
        link, obstacle, normal = values[:, 0:3], values[:, 3:6], values[:, 6:9]
        points, pieces = [link, obstacle], [link_pieces, obstacle_pieces]
        if robot_speeds:  # and the pieces' centres, for the bound of the records not measured
            points.append(numpy.einsum('nij,nj->ni', poses[:, :3, :3], centres) +
                          poses[:, :3, 3])
            pieces.append(numpy.arange(len(poses)))
        # One call for every point.
        count = len(index)
        velocities = _point_velocities(samples, numpy.concatenate(pieces),
                                       numpy.concatenate(points))
        link_velocity = velocities[:count]
        rate = distance_rate(normal, link_velocity, velocities[count:2 * count])
        # + 0.0: a pair at rest reads 0, not -0.
        records['closing_speed'][index] = -rate + 0.0
        self.robot_speeds = None
        if robot_speeds:
            self.robot_speeds = _link_speed_bounds(samples, velocities[2 * count:], radii,
                                                   self._layout.pairs[:, 0], owner,
                                                   len(records))
            self.robot_speeds[index] = -distance_rate(normal, link_velocity,
                                                      numpy.zeros_like(link_velocity)) + 0.0
        # An APPROXIMATE distance is known within its bound: contact comes no later than the
        # lower end's.
        records['time_to_contact'][index] = time_to_contact(values[:, 9] - values[:, 10], rate)

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
