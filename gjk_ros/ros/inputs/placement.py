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
Where a marker's piece sits, honouring ``frame_locked`` as RViz does.

- ``frame_locked`` true: the piece moves with ``header.frame_id`` (its pose is composed from
  the latest transforms every cycle, like a URDF link).
- ``frame_locked`` false (the message default): the piece is placed in ``fixed_frame`` with the
  transform of ``header.frame_id`` *at ``header.stamp``*, once, and stays there. This is the
  perception latency compensation RViz applies: an obstacle seen by a head camera does not
  turn with the head afterwards. A zero stamp means the latest transform (tf2's time 0).

Until the transform at the stamp is known (TF not there yet) the piece is unplaced and its
pairs are STALE; if the stamp is older than the TF history the node keeps, it can never be
placed, which is reported once (the pairs stay STALE until the marker is republished).
"""

from dataclasses import dataclass, field

__all__ = ['MarkerPlacement']


@dataclass
class MarkerPlacement:
    """
    Placement data of one marker piece (compute-thread state).

    Attributes
    ----------
    frame_id : str
        The marker's ``header.frame_id``.
    origin : (4, 4) float
        The marker's pose in ``frame_id``.
    frame_locked : bool
        Move with ``frame_id`` (True) or stay where it was seen (False).
    stamp_ns : int
        ``header.stamp`` in nanoseconds (0: the latest transform).
    placed : dict
        ``fixed_frame -> (4, 4) origin in that frame`` once resolved (frame_locked false).
    failure : str
        Why it cannot be placed ('' while waiting or placed).

    """

    frame_id: str
    origin: object
    frame_locked: bool
    stamp_ns: int
    placed: dict = field(default_factory=dict)
    failure: str = ''

    def same_place(self, other):
        """Whether ``other`` describes the same placement (no need to resolve again)."""
        return (other is not None and self.frame_id == other.frame_id
                and self.frame_locked == other.frame_locked
                and self.stamp_ns == other.stamp_ns
                and (self.origin == other.origin).all())
