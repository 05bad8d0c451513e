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
Swept distances: what happened between the last cycle's poses and this one's.

A distance sampled each cycle misses what a link passes through between two samples: at 30 Hz
a tool at 1 m/s moves 33 mm, more than a 5 mm plate. Each cycle the pieces move from the poses
of the last cycle to this one's as tf2 interpolates (linear translation, shortest-arc slerp),
and the core's ``SweptPairs`` (docs/motion.md) brackets every record's minimum signed distance
over that motion by conservative advancement, from the two cycles' own measurements as its end
samples; a pair that both ends leave far apart costs no query. The result is a certified lower
bound (``swept_distance``) and its instant (``swept_fraction``, 0 at the last cycle, 1 now),
which the fail-safe minimum takes when it is lower than the sample.

Only pairs measured in both cycles sweep: a layout rebuild, a piece without a good pose at
either end, or the first cycle have no interval, and their swept fields are NaN (the sample
alone stands, as before). Each piece is its own frame here (its pose is its frame's pose
composed with its origin, a rigid map), so the interval is the piece's own motion.
"""

from gjk_ros.core.interpolation import FrameMotion
from gjk_ros.core.status import Status
from gjk_ros.core.swept import pair_rows, SweptPairs
import numpy

__all__ = ['SweptRecords']

_NO_ANSWER = (Status.BEYOND, Status.INACTIVE)


class SweptRecords:
    """
    The swept lower bound of each record of a ``PairTracker``'s engine, cycle to cycle.

    ``update`` after the tracker's own measurement each cycle; ``reset`` when sweeping stops.
    ``witnesses`` (K, 6) holds, after each update, each body pair's two witness points at its
    swept minimum's instant (``fixed_frame``; NaN where there is no swept bound), for display.
    """

    def __init__(self):
        self.witnesses = numpy.zeros((0, 6))
        self._engine = None
        self._swept = None
        self._last = None  # (piece poses, engine rows, engine pairs measured) of the last cycle

    def reset(self):
        """Forget the last cycle: the next one has no interval."""
        self._engine = self._swept = self._last = None

    def update(self, engine, poses, max_distance, tolerance, relative_tolerance):
        """
        Bracket each body pair's minimum over the motion since the last call.

        Parameters
        ----------
        engine : gjk_ros.core.bodypairs.BodyPairs or None
            The tracker's engine, just updated with ``poses``: the piece pairs it was asked to
            measure are those not INACTIVE.
        poses : (P, 4, 4) float
            This cycle's piece poses.
        max_distance : float
            As the tracker's: a pair whose spheres stay this far apart sweeps to nothing.
        tolerance, relative_tolerance : float
            The bracket asked for (``SweptPairs.update``).

        Returns
        -------
        tuple of ((K,) float, (K,) float) or None
            Per body pair of the engine, the swept lower bound (``distance - error_bound``) and
            its fraction of the interval, NaN where there is none; None without an engine.

        """
        if engine is None:
            self.reset()
            return None
        if engine is not self._engine:
            self._engine, self._last = engine, None
            self._swept = SweptPairs.from_engine(engine, numpy.arange(len(engine.pieces)))
        end = pair_rows(engine.pair_set)
        active = end.status != Status.INACTIVE
        last = self._last
        self._last = (numpy.array(poses, dtype=numpy.float64), end, active)
        count = engine.num_body_pairs
        self.witnesses = numpy.full((count, 6), numpy.nan)
        if last is None:
            return numpy.full(count, numpy.nan), numpy.full(count, numpy.nan)
        start_poses, start, was_active = last
        rows, status = self._swept.update(FrameMotion(start_poses, poses), start, end,
                                          active=active & was_active, max_distance=max_distance,
                                          tolerance=tolerance,
                                          relative_tolerance=relative_tolerance)
        unanswered = numpy.isin(status, _NO_ANSWER)
        lower = numpy.where(unanswered, numpy.nan, rows[:, 0] - rows[:, 10])
        self.witnesses = numpy.where(unanswered[:, None], numpy.nan, rows[:, 1:7])
        return lower, numpy.where(unanswered, numpy.nan, self._swept.fraction)
