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
The source interface: every input that brings bodies into the world is a ``Source``.

Modelled on Nav2's collision monitor, where each ``Source`` subclass owns its subscription,
its parameters, the conversion of its messages and its timeout. Here a source:

- **subscribes** raw (bytes only: the node never converts a message on its executor thread; a
  100 MB message would hold the GIL for seconds) and hands the bytes to the geometry worker;
- **applies** what the worker built to the :class:`~gjk_ros.ros.world.World` on the compute
  thread (``on_result``), under piece keys whose first element is the source's ``name``;
- **places** its pieces: by default a piece moves with ``piece.frame_id`` at ``piece.origin``;
  a source may instead return a placement resolved once at a stamp (``placement``);
- **judges freshness** of its pieces (``silent``), its **readiness** (``not_ready``: why
  ``~/min_distance`` cannot vouch for the scope yet) and reports its **ages** for
  ``/diagnostics``.

Sources never look at each other; the node calls them in the cycle's fixed order
(docs/architecture.md).
"""

from gjk_ros.ros.timekeeping import TIMELESS

__all__ = ['Source']


class Source:
    """
    Base class of the node's inputs; every hook has a harmless default.

    Parameters
    ----------
    name : str
        Unique; the first element of every piece key the source owns.

    """

    def __init__(self, name):
        self.name = name

    def subscribe(self, node):
        """Create this source's subscriptions on ``node`` (raw messages)."""

    def configure(self, config):
        """Take this source's parameters from a new ``Config`` (start-up and every change)."""

    def submit(self, ingestor):
        """Queue work for the geometry worker that is not triggered by a message."""

    def owns(self, job_key):
        """Tell whether a finished ingestion job with ``job_key`` belongs to this source."""
        return False

    def on_result(self, result, world):
        """Apply a finished ingestion job (``IngestResult``) to ``world``."""

    def poll(self, world, now_ns):
        """Per-cycle upkeep before the layout (placement at stamps); ``now_ns``: ROS time, ns."""

    def keep_expired(self, kind, key, expires):
        """Tell whether a piece past its lifetime must stay (as STALE) rather than vanish."""
        return False

    def expired(self, kind, key):
        """Forget a piece of this source dropped at the end of its lifetime."""

    def placement(self, kind, key):
        """Return (frame, origin) of a piece placed at a stamp, or None (moves with its frame)."""
        return None

    def silent(self, pieces, now):
        """
        Which of this source's layout pieces lost their input (their pairs are STALE).

        Parameters
        ----------
        pieces : list of (kind, name, key)
            Pieces this source owns, in layout order.
        now : float
            ROS time, seconds.

        Returns
        -------
        list of bool
            Nav2's source_timeout, per piece; all False for a source that is state.

        """
        return [False] * len(pieces)

    def data_times(self, pieces):
        """
        When the data of each of this source's layout pieces was last confirmed.

        Returns
        -------
        list of int
            ROS time in integer ns per piece (a stamp or a receive time, never rounded);
            ``timekeeping.TIMELESS`` for state that does not age (the default),
            ``timekeeping.UNKNOWN`` for data never received.

        """
        return [TIMELESS] * len(pieces)

    def not_ready(self, now):
        """Return why the node cannot vouch for its scope yet (empty: nothing missing)."""
        return []

    def ages(self, now):
        """``{label: seconds since last heard}`` for ``/diagnostics``."""
        return {}

    def forget_heard(self):
        """ROS time jumped back: forget receive times (the source counts as unheard)."""

    def close(self):
        """Release what the source holds (the node is shutting down)."""
