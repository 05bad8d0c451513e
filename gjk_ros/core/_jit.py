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
The one numba decorator of the core.

Every kernel is compiled with ``cache=True`` (compiled code is reused across processes) and
without fastmath: the GJK sub-algorithm and EPA decide Voronoi regions and visibility from the
signs of determinants, and fastmath's reassociation would change those signs on near-degenerate
input. ``error_model='numpy'`` removes the per-division zero checks; every division in the core is
guarded explicitly. Setting ``NUMBA_DISABLE_JIT=1`` runs the same source as plain Python, for
debugging and coverage.
"""

import numba

__all__ = ['njit', 'njit_inline']

_OPTIONS = dict(cache=True, fastmath=False, nogil=True, error_model='numpy')


def njit(function):
    """Compile ``function`` with the core's numba options."""
    return numba.njit(**_OPTIONS)(function)


def njit_inline(function):
    """
    Like ``njit``, and inlined into its callers at numba's IR level.

    For the small helpers of the per-pair hot path that take array tuples (bodies, work arrays):
    as separate functions every call increments and decrements the reference count of every
    array in the tuple, which cost more than the geometry itself (measured 2.5 us per tracked
    query before, see bench/results/report.md). Inlined, numba prunes those pairs.
    """
    return numba.njit(inline='always', **_OPTIONS)(function)
