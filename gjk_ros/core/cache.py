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
The tracked state of a pair between time steps (Box2D's b2SimplexCache contract).

Only vertex ids are kept ("the same points relative to the objects on which they lie", Cameron
1997 section 2): coordinates are recomputed from the new poses. Points on a smooth body (a
cylinder) have no id and are kept in that body's own frame. An empty cache means a cold start,
and a warm query gives the same answer as a cold one, only sooner.
"""

import numpy as np

from ._jit import njit
from .epa import epa_store_arrays
from .scene import layout, numpy_view, view

__all__ = ['SimplexCache', 'cache_arrays', 'unpack_cache']


def cache_arrays(count):
    """
    Allocate the flat per-pair cache arrays of ``count`` pairs (one flat tuple, no nesting).

    simplex count (m,); vertex id pairs (m, 4, 2); points in body frames (m, 4, 2, 3), used for
    smooth bodies only; hill-climbing seeds ``last_best`` (m, 2); then the tracked EPA polytope:
    sizes (m, 2), vertex id pairs, faces and face adjacency (see ``epa.epa_store_arrays``).
    """
    return (np.zeros(count, np.int32), np.zeros((count, 4, 2), np.int32),
            np.zeros((count, 4, 2, 3)), np.zeros((count, 2), np.int32),
            *epa_store_arrays(count))


def _single_cache():
    """Return the byte buffer of a one-pair cache and ``cache_arrays(1)`` as views of it."""
    buffer = np.zeros(CACHE_BYTES, np.uint8)
    return buffer, tuple(numpy_view(buffer, field, array.dtype)
                         for field, array in zip(_CACHE, cache_arrays(1)))


# A SimplexCache's arrays (``cache_arrays(1)``) are views of one byte buffer (scene.layout), so
# that signed_distance hands numba one array instead of eight (dispatch is paid per array).
_CACHE, CACHE_BYTES = layout([(array.dtype, array.shape) for array in cache_arrays(1)])


@njit(inline=True)
def unpack_cache(buffer):
    """Rebuild a one-pair ``cache_arrays`` tuple from a SimplexCache's byte buffer."""
    return (view(buffer, _CACHE[0], np.int32), view(buffer, _CACHE[1], np.int32),
            view(buffer, _CACHE[2], np.float64), view(buffer, _CACHE[3], np.int32),
            view(buffer, _CACHE[4], np.int32), view(buffer, _CACHE[5], np.int32),
            view(buffer, _CACHE[6], np.int32), view(buffer, _CACHE[7], np.int32))


def copy_row(source, k, target, j):
    """Copy pair ``k`` of cache arrays ``source`` into pair ``j`` of ``target``."""
    for s, t in zip(source, target):
        t[j] = s[k]


def clear_row(arrays, k):
    """Empty pair ``k``'s cache: its next query is a cold start."""
    arrays[0][k] = 0
    arrays[3][k] = 0
    arrays[4][k] = 0


class SimplexCache:
    """
    In/out warm-start state for ``signed_distance`` on one ordered pair (A, B).

    Create it empty (a cold start) and pass it to every query of the same pair. It remembers
    which bodies it was filled for and starts cold if it is handed another pair, so a cache can
    never inject vertex ids of the wrong bodies.
    """

    def __init__(self):
        """Start empty: the first query is a cold start."""
        self._buffer, self._arrays = _single_cache()
        self._bodies = None

    @property
    def is_empty(self):
        return int(self._arrays[0][0]) == 0 and int(self._arrays[4][0, 0]) == 0

    @property
    def count(self):
        """Return the number of simplex vertices kept (0 to 4)."""
        return int(self._arrays[0][0])

    @property
    def index_a(self):
        """Vertex ids on A of the kept simplex."""
        return self._arrays[1][0, :self.count, 0].copy()

    @property
    def index_b(self):
        """Vertex ids on B of the kept simplex."""
        return self._arrays[1][0, :self.count, 1].copy()

    @property
    def last_best(self):
        """Hill-climbing seeds: the last support vertex on A and on B."""
        return tuple(int(i) for i in self._arrays[3][0])

    @property
    def tracked_penetration(self):
        """Return True when a penetration polytope is kept for the next step."""
        return int(self._arrays[4][0, 0]) > 0

    def reset(self):
        """Forget everything: the next query is a cold start."""
        clear_row(self._arrays, 0)
        self._bodies = None

    def _bind(self, a, b):
        """Start cold when the cache was last used on another pair of bodies."""
        bodies = (a._key, b._key)
        if self._bodies != bodies:
            clear_row(self._arrays, 0)
            self._bodies = bodies

    def __repr__(self):
        return (f'SimplexCache(count={self.count}, index_a={self.index_a.tolist()}, '
                f'index_b={self.index_b.tolist()}, last_best={self.last_best}, '
                f'tracked_penetration={self.tracked_penetration})')
