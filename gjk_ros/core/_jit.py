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

__all__ = ['njit']


def njit(function):
    """Compile ``function`` with the core's numba options."""
    return numba.njit(cache=True, fastmath=False, nogil=True, error_model='numpy')(function)
