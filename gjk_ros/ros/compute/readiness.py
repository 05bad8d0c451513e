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
Readiness: whether ``~/min_distance`` can vouch for its whole scope now.

Ready means: ROS time can age data (``timekeeping.py``), every source has what it needs (the
robot model built, parameter bodies built, required obstacle sources heard and fresh), some
link is in scope, and every link in scope has a usable transform. While not ready,
``~/min_distance`` is -inf and the reasons are logged once and listed in ``/diagnostics``.
"""

import collections

__all__ = ['Readiness']

# At most this many frames are named in one reason.
_FRAMES_NAMED = 5


class Readiness:
    """
    The reasons of the last cycle, logged once when they appear and once when they go.

    Parameters
    ----------
    problems : gjk_ros.ros.problems.ProblemLog
        Where the reasons are logged.

    """

    def __init__(self, problems):
        self._problems = problems
        self.reasons = []

    @property
    def ready(self):
        """Whether the last check found nothing missing."""
        return not self.reasons

    def check(self, clock_problem, source_reasons, link_ids, frames_without_transform,
              paused=None):
        """
        Collect and report why the node cannot vouch for its scope (empty when ready).

        Parameters
        ----------
        clock_problem : str or None
            Why ROS time cannot age data.
        source_reasons : list of str
            What the sources miss (``Source.not_ready``).
        link_ids : list of int
            The links in scope.
        frames_without_transform : list of str
            Link frames without a usable transform.
        paused : str or None
            Why nothing is measured (``managed.PAUSED_REASON``), or None when measuring.

        """
        reasons = [paused] if paused is not None else []
        reasons += [clock_problem] if clock_problem is not None else []
        reasons += source_reasons
        if not link_ids:
            reasons.append('no link in scope')
        if frames_without_transform:
            reasons.append('no usable transform for link frame(s) %s'
                           % ', '.join(frames_without_transform[:_FRAMES_NAMED]))
        self._report(reasons)
        self.reasons = reasons
        return reasons

    def _report(self, reasons):
        # Keyed by the reason's first words so that a changing count does not log again.
        current = {_NotReady('not ready', reason.split(':')[0].split(' after ')[0]): reason
                   for reason in reasons}
        for key, reason in current.items():
            self._problems.report(key, 'not ready, ~/min_distance is -inf: %s' % reason)
        self._problems.keep_only(('not ready',), set(current),
                                 lambda key: 'ready: %s resolved' % key.what)


# A reason the node is not ready, as the problem log keys it (by its first words).
_NotReady = collections.namedtuple('_NotReady', 'topic what')
