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

import hashlib
import os
import pathlib

import numba

__all__ = ['njit', 'cache_directory']

# Compiled kernels never allocate: every work array is sized up front in Python (coal's rule), so
# numba's reference counting (NRT) is pure overhead here. Profiled 2026-11-21 with perf: 60% of a
# tracked PairSet query was spent in NRT's atomic increments and decrements, and compiling
# without NRT took a tracked query from about 1.6 us to 0.25 us per pair. A kernel that tried to
# allocate would fail to compile, so this cannot silently leak.
_OPTIONS = {'cache': True, 'fastmath': False, 'nogil': True, 'error_model': 'numpy',
            '_nrt': False}


def _probe():
    """Stand in for a kernel of this folder when asking numba where it caches them."""


def cache_directory():
    """
    Return the folder numba caches this package's kernels in, for this process.

    numba picks the first folder that it can write: ``$NUMBA_CACHE_DIR`` when set, else
    ``__pycache__`` next to the sources, else the user's cache (``~/.cache/numba``, a read-only
    install). Asking numba itself keeps the stale-cache guard on the folder that is really used;
    should its internals move, the guard falls back to ``__pycache__``.
    """
    here = pathlib.Path(__file__).resolve().parent
    try:
        from numba.core.caching import FunctionCache
        return pathlib.Path(FunctionCache(_probe).cache_path)
    except Exception:  # any failure of numba internals: use the default folder
        return here / '__pycache__'


def _drop_stale_cache():
    """
    Delete this package's numba cache when any core source changed.

    numba checks only the stamp of a function's own file, so a kernel cached before an edit of
    a file it calls would be loaded with stale inlined code (seen as heap corruption when the
    layout of the arrays they share changed). A hash of all core sources guards the whole set,
    in whichever folder numba caches them (a read-only install caches in the user's folder).
    """
    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for source in sorted(here.glob('*.py')):
        digest.update(source.name.encode() + source.read_bytes())
    cache = cache_directory()
    stamp = cache / 'gjk_core_sources.sha256'
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for entry in cache.iterdir():
            if entry.suffix in ('.nbi', '.nbc'):
                entry.unlink(missing_ok=True)
        temporary = stamp.with_suffix(f'.{os.getpid()}')
        temporary.write_text(digest.hexdigest())
        temporary.replace(stamp)
    except OSError:
        pass  # no writable folder at all: numba cannot cache either, and compiles every run


_drop_stale_cache()


def njit(function=None, *, inline=False, hold_gil=False):
    """
    Compile ``function`` with the core's numba options; ``inline=True`` inlines it.

    Kernels release the GIL (a PairSet update runs beside the node's other threads);
    ``hold_gil=True`` keeps it, for a kernel that shares its scratch arrays process-wide.

    ``inline=True`` inlines the function into its callers at numba IR level. It is set on the
    tracked query's hot path (query_pair and everything it calls on the GJK path): numba passes
    every array argument as about seven scalars, and query_pair alone takes two dozen arrays, so
    the calls cost more than the tracked GJK step they make. Measured 2026-11-22, 200 tracked
    pairs, one GJK iteration each: 0.73 -> 0.14-0.19 us per pair (8 and 150 vertices); the
    first, uncached compilation takes about 20 s longer.
    """
    options = dict(_OPTIONS, inline='always') if inline else dict(_OPTIONS)
    if hold_gil:
        options['nogil'] = False
    if function is None:
        return lambda wrapped: numba.njit(**options)(wrapped)
    return numba.njit(**options)(function)
