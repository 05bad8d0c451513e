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

"""Result records of the core: the status of a query and its full answer."""

from dataclasses import dataclass
import enum

import numpy as np

__all__ = ['Status', 'DistanceResult']


class Status(enum.IntEnum):
    """What a distance record is (never an overloaded number: libccd/FCL#366)."""

    SEPARATED = 0       # distance - error_bound > 0: certainly apart
    TOUCHING = 1        # |distance| <= TOUCHING_REL * scale, or 0 in [distance - error_bound,
    #                     distance] (a smooth contact that GJK can only bound)
    PENETRATING = 2     # distance < 0: minus the exact penetration depth
    MAX_ITERATIONS = 3  # an iteration cap was hit: distance is within error_bound of the truth
    DEGENERATE = 4      # overlap proven but no usable EPA face: distance 0, error_bound bounds it
    BEYOND = 5          # PairSet only: bounding spheres farther apart than max_distance (NaN)
    INACTIVE = 6        # PairSet only: not computed in this update (NaN)


@dataclass(frozen=True)
class DistanceResult:
    """
    The answer of one query, in the world frame.

    Attributes
    ----------
    distance : float
        Signed distance (the MTD): > 0 apart, 0 touching, < 0 minus the penetration depth.
    witness_a, witness_b : (3,) float
        Closest points on A and B (deepest points in penetration):
        ``witness_b - witness_a == distance * normal``.
    normal : (3,) float
        Unit vector from A towards B. Moving B by ``-distance * normal`` makes the bodies touch.
    status : Status
        See ``Status``.
    error_bound : float
        The true signed distance lies within ``error_bound`` below ``distance`` (separated:
        Cameron's G-test bound g / |v|; penetrating: the EPA support gap).
    iterations, support_calls, hill_climb_steps, epa_iterations : int
        Machine-independent cost counters of the query.

    """

    distance: float
    witness_a: np.ndarray
    witness_b: np.ndarray
    normal: np.ndarray
    status: Status
    iterations: int
    error_bound: float
    support_calls: int
    hill_climb_steps: int
    epa_iterations: int

    @classmethod
    def from_row(cls, out, k):
        """
        Build a record from row ``k`` of kernel output arrays.

        ``out`` is ``(values, status, counts)`` as made by ``query.output_arrays``: values
        columns are distance, witness_a (3), witness_b (3), normal (3), error_bound.
        """
        values, status, counts = out
        row = values[k]
        return cls(distance=float(row[0]), witness_a=row[1:4].copy(), witness_b=row[4:7].copy(),
                   normal=row[7:10].copy(), status=Status(int(status[k])),
                   iterations=int(counts[k, 0]), error_bound=float(row[10]),
                   support_calls=int(counts[k, 1]), hill_climb_steps=int(counts[k, 2]),
                   epa_iterations=int(counts[k, 3]))
