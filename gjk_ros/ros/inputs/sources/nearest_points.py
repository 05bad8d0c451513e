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
A sensor cloud's nearest points to the robot's link pieces, and their answers.

The filtered points of one message in their search grid (``Cloud``); the exact search of the
point nearest to a link piece (``nearest_point``, ``gjk_ros.core.point_grid``), started from a
good first bound (``point_near``); and what an observation source's slot carries
(``NearestPoints``): its point pieces, one per link piece (``LinkPart``), and the answers of
their searches (``CloudAnswers``), which the pair tracker takes as the pairs' measurements.
"""

import collections
from dataclasses import dataclass

from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import nearest_answer
from gjk_ros.ros.inputs.sources.base import SourceData
import numpy

__all__ = ['Cloud', 'CloudAnswers', 'LinkPart', 'nearest_point', 'NearestPoints', 'point_near',
           'PreparedShapes', 'TRACKING_CAPACITY', 'TRACKING_MARGIN']

# Candidate tracking of each link piece's nearest point (``gjk_ros.core.point_tracking``):
# how far a piece may move from its pose at the cloud's stamp, and the most candidates kept.
# Off (no candidates): measured on the load benchmark's scene (docs/observations.md), the arm
# moves 15 to 26 mm in the 50 ms a cloud is used, and keeping enough candidates for that (1,024
# a piece) cost 20 ms a cloud on the background thread to save about 2 ms a cycle; with 64
# candidates the margins shrink to 3 to 7 mm and 81 % of the pieces are searched anyway.
TRACKING_MARGIN = 0.03
TRACKING_CAPACITY = 0


class Cloud:
    """
    The filtered points of one message in their search grid, with stamp and counts.

    ``tracker`` (``gjk_ros.core.point_tracking.NearestTracker``) holds the grid and each link
    piece's candidates, anchored at the message stamp.
    """

    def __init__(self, tracker, stamp_ns, removed, count):
        self.geometry = None        # the link pieces it was self-filtered against
        self.tracker = tracker
        self.grid = tracker.grid
        self.points = self.grid.points  # indexed by the search answers (see PointGrid)
        self.stamp_ns = stamp_ns
        self.removed = removed
        self.count = count

    def __len__(self):
        """Return how many points are left after the self-filter."""
        return len(self.grid)


class CloudAnswers:
    """
    The nearest-point answers of one cloud, one per link piece, as the pair tracker takes them.

    Row ``slots[part]`` of ``rows`` and ``nearest`` is the answer of the ``LinkPart`` for
    ``shapes`` at ``poses`` (``ok``: the piece had a pose). ``measure`` hands back that answer
    for the very same shape and pose, and searches the same cloud again for any other (one
    search, never a second measurement of a found point).
    """

    def __init__(self, cloud, slots, shapes, poses, rows, nearest, ok, prepared):
        self.cloud = cloud
        self._slots, self._shapes, self._poses = slots, shapes, poses
        self._rows, self._nearest, self._ok = rows, nearest, ok
        self._prepared = prepared

    def measure(self, item, shape, pose):
        """Return the ``NearestPoint`` of the cloud to ``shape`` at ``pose`` (for ``item``)."""
        slot = self._slots.get(item)
        if slot is None:
            return nearest_point(self.cloud, self._prepared.prepared(shape), pose)
        if self._ok[slot] and self._shapes[slot] is shape and \
                (self._poses[slot] == pose).all():
            return nearest_answer(self._rows[slot], self._nearest[slot])
        return nearest_point(self.cloud, self._prepared.prepared(shape), pose,
                             int(self._nearest[slot]))


@dataclass(frozen=True)
class NearestPoints(SourceData):
    """An observation source's slot: its point pieces and their answers (``CloudAnswers``)."""

    nearest: CloudAnswers = None


class PreparedShapes:
    """Each link shape prepared once for point distances (``PointDistanceShape``), by identity."""

    def __init__(self):
        self._shapes = {}

    def prepared(self, shape):
        entry = self._shapes.get(id(shape))
        if entry is None or entry[0] is not shape:
            entry = (shape, PointDistanceShape(shape))
            self._shapes[id(shape)] = entry
        return entry[1]


LinkPart = collections.namedtuple('LinkPart', 'link key part')
LinkPart.__doc__ = 'A convex part of a link piece: its link, its ``PieceKey``, its index.'


def nearest_point(cloud, prepared, pose, hint=None):
    """
    Return the ``NearestPoint`` of the cloud to a piece at ``pose`` (exact, in full).

    Parameters
    ----------
    cloud : Cloud
        Points in fixed_frame and their search grid (not empty).
    prepared : gjk_ros.core.point_distance.PointDistanceShape
        The piece.
    pose : (4, 4) float
        Piece-to-fixed_frame transform.
    hint : int, optional
        A point likely to be near (the last answer): it tightens the first bound.

    """
    return cloud.grid.nearest(prepared, pose, hint)


def point_near(cloud, position):
    """
    Return the index of a kept cloud point in the grid cell of ``position``, or None.

    A cheap first bound for a search in a new cloud: the last cloud's nearest point is
    usually close to the new one's.
    """
    grid = cloud.grid
    cell = numpy.floor((numpy.asarray(position) - grid.low) / grid.edge).astype(numpy.int64)
    if (cell < 0).any() or (cell >= grid.dims).any():
        return None
    flat = int(cell[0] + grid.dims[0] * (cell[1] + grid.dims[1] * cell[2]))
    first, last = int(grid.starts[flat]), int(grid.ends[flat])
    if first == last:
        return None
    gaps = ((grid.points[first:last] - position) ** 2).sum(axis=1)
    return first + int(numpy.argmin(gaps))
