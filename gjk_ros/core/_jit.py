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

Where compiled kernels are kept: in the user's cache, in a folder named by a digest of the core's
sources (``~/.cache/gjk_ros/core-<digest>``, under ``$XDG_CACHE_HOME`` or ``$NUMBA_CACHE_DIR``
when set). numba's own rule keys a kernel by its file's path and modification time, so a
reinstall of the same source (a new clone, ``pip install`` again, a colcon install tree)
compiled everything again, and an edit of a file a kernel inlines from was not seen at all
(stale inlined code: heap corruption when the layout of shared arrays changed). The digest
covers every kernel source and numba's and Python's versions: the same source finds its
kernels wherever it is installed, and any edit gets a folder of its own. The few most recently
used folders are kept. Where that cache cannot be written, numba's default folders are used,
guarded by the same digest (``_drop_stale_cache``).
"""

import hashlib
import os
import pathlib
import platform
import shutil

import numba

__all__ = ['njit', 'cache_directory']

# Compiled kernels never allocate: every work array is sized up front in Python (coal's rule), so
# numba's reference counting (NRT) is pure overhead here. Profiled with perf: 60% of a tracked
# PairSet query was spent in NRT's atomic increments and decrements, and compiling without NRT
# took a tracked query from about 1.6 us to 0.25 us per pair. A kernel that tried to allocate
# would fail to compile, so this cannot silently leak.
_OPTIONS = {'cache': True, 'fastmath': False, 'nogil': True, 'error_model': 'numpy',
            '_nrt': False}
_HERE = pathlib.Path(__file__).resolve().parent
# Files of this folder without kernels: editing them keeps the compiled kernels.
_NO_KERNELS = frozenset({'warmup.py'})
# Digest folders kept in the cache root (other checkouts, recent versions); older ones go.
_KEEP_FOLDERS = 4


def _source_digest():
    """Digest of what a compiled kernel depends on: the core's sources, numba, Python."""
    digest = hashlib.sha256(('%s %s %s' % (numba.__version__, platform.python_version(),
                                           platform.machine())).encode())
    for source in sorted(_HERE.glob('*.py')):
        if source.name not in _NO_KERNELS:
            digest.update(source.name.encode() + b'\0' + source.read_bytes() + b'\0')
    return digest.hexdigest()


_DIGEST = _source_digest()


def _cache_root():
    configured = os.environ.get('NUMBA_CACHE_DIR')
    if configured:
        return pathlib.Path(configured) / 'gjk_ros'
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return pathlib.Path(base) / 'gjk_ros'


def _digest_locator_class():
    """Return numba's cache locator for this folder's kernels, keyed by the digest, or None."""
    try:
        from numba.core.caching import _CacheLocator
    except ImportError:  # numba's internals moved: its default folders, guarded below
        return None

    class SourceDigestLocator(_CacheLocator):
        """This folder's kernels under ``<cache root>/core-<digest>``, stamped by the digest."""

        def __init__(self, py_func, py_file):
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(_cache_root() / ('core-' + _DIGEST[:32]))

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return _DIGEST

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if pathlib.Path(py_file).resolve().parent != _HERE:
                return None
            locator = cls(py_func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:
                return None
            return locator

    return SourceDigestLocator


def _install_locator():
    """Put the digest locator first in numba's list; False where numba has no such list."""
    locator = _digest_locator_class()
    try:
        from numba.core.caching import CacheImpl
        classes = CacheImpl._locator_classes
    except (ImportError, AttributeError):
        return False
    if locator is None:
        return False
    if not any(getattr(existing, '__name__', '') == locator.__name__
               and existing.__module__ == __name__ for existing in classes):
        classes.insert(0, locator)
    return True


def _probe():
    """Stand in for a kernel of this folder when asking numba where it caches them."""


def cache_directory():
    """
    Return the folder numba caches this package's kernels in, for this process.

    The digest folder of the user's cache when it can be written; else the folder numba picks
    itself: ``$NUMBA_CACHE_DIR``, ``__pycache__`` next to the sources, or ``~/.cache/numba`` (a
    read-only install). Should numba's internals move, ``__pycache__``.
    """
    try:
        from numba.core.caching import FunctionCache
        return pathlib.Path(FunctionCache(_probe).cache_path)
    except Exception:  # any failure of numba internals: use the default folder
        return _HERE / '__pycache__'


def _prune(folder):
    """Keep ``folder`` and the most recently used digest folders beside it; drop the rest."""
    try:
        os.utime(folder)
        siblings = sorted((entry for entry in folder.parent.glob('core-*') if entry != folder),
                          key=lambda entry: entry.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in siblings[_KEEP_FOLDERS - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def _drop_stale_cache(cache):
    """
    Delete the kernels of a folder numba chose itself when any core source changed.

    numba checks only the stamp of a function's own file, so a kernel cached before an edit of
    a file it calls would be loaded with stale inlined code. The digest stamp guards the set.
    """
    stamp = cache / 'gjk_core_sources.sha256'
    try:
        if stamp.read_text() == _DIGEST:
            return
    except OSError:
        pass
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for entry in cache.iterdir():
            if entry.suffix in ('.nbi', '.nbc'):
                entry.unlink(missing_ok=True)
        temporary = stamp.with_suffix(f'.{os.getpid()}')
        temporary.write_text(_DIGEST)
        temporary.replace(stamp)
    except OSError:
        pass  # no writable folder at all: numba cannot cache either, and compiles every run


def _prepare_cache():
    """Send this folder's kernels to the digest folder, or guard numba's own folder."""
    installed = _install_locator()
    folder = cache_directory()
    if installed and folder.name == 'core-' + _DIGEST[:32]:
        _prune(folder)
    else:
        _drop_stale_cache(folder)


_prepare_cache()


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


def frozen(kernel, signature, python_fallback):
    """
    Return ``kernel`` compiled (or loaded from the cache) for ``signature`` only.

    Compilation is then disabled, so that a call with any other argument types raises
    TypeError at once instead of compiling a new specialisation for a minute: the caller
    converts its arguments and calls again, and its fast path checks nothing in Python. Under
    NUMBA_DISABLE_JIT (no ``compile``) it returns ``python_fallback``, which converts the
    arguments as numba would.
    """
    if not hasattr(kernel, 'compile'):
        return python_fallback
    kernel.compile(signature)
    kernel.disable_compile()
    return kernel
