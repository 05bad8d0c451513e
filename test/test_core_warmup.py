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
Where the compiled kernels are cached, and the stale-cache guard in every such folder.

These tests import only ``gjk_ros.core._jit`` in child processes (no kernel is compiled), on a
copy of the core: in the source tree, with NUMBA_CACHE_DIR, and as a read-only install, where
numba falls back to the user's cache folder.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import gjk_ros.core
from gjk_ros.core import warmup
import pytest

CORE = pathlib.Path(gjk_ros.core.__file__).resolve().parent
PROBE = ('from gjk_ros.core import _jit; print(_jit.cache_directory())')


def copy_package(root):
    """Copy gjk_ros/__init__.py and gjk_ros/core/*.py under ``root``; return the core folder."""
    package = root / 'gjk_ros'
    (package / 'core').mkdir(parents=True)
    shutil.copy(CORE.parent / '__init__.py', package)
    for source in CORE.glob('*.py'):
        shutil.copy(source, package / 'core')
    return package / 'core'


def read_only_command(root, command):
    """
    Return ``command`` run with ``root`` read-only, or None when that cannot be arranged.

    Root writes through file modes, so as root the folder is bind-mounted read-only in a
    private mount namespace (``unshare``); another user gets the write bits removed.
    """
    if os.geteuid() != 0:
        for path in [root, *root.rglob('*')]:
            path.chmod(path.stat().st_mode & ~0o222)
        return command
    unshare = shutil.which('unshare')
    if unshare is None:
        return None
    check = subprocess.run([unshare, '-m', 'true'], capture_output=True)
    if check.returncode != 0:
        return None
    mount = f'mount --bind -o ro "{root}" "{root}" && exec "$0" "$@"'
    return [unshare, '-m', 'sh', '-c', mount, *command]


def run_probe(root, env_updates, read_only=False):
    """Import the copied core's _jit in a child process; return the cache folder it reports."""
    env = {key: value for key, value in os.environ.items() if key != 'NUMBA_CACHE_DIR'}
    env.update(PYTHONPATH=str(root), **env_updates)
    command = [sys.executable, '-c', PROBE]
    if read_only:
        command = read_only_command(root, command)
        if command is None:
            pytest.skip('cannot make a read-only folder here (root without unshare)')
    result = subprocess.run(command, env=env, cwd=str(root), capture_output=True, text=True,
                            check=True)
    return pathlib.Path(result.stdout.strip())


def test_in_tree_cache_and_guard(tmp_path):
    """A writable tree caches in __pycache__; an edit of any core file drops its kernels."""
    core = copy_package(tmp_path)
    folder = run_probe(tmp_path, {})
    assert folder == core / '__pycache__'
    stale = folder / 'gjk.gjk-1.py311.nbi'
    stale.write_bytes(b'')
    run_probe(tmp_path, {})
    assert stale.exists()  # unchanged sources: the cache is kept
    with open(core / 'tolerances.py', 'a', encoding='utf-8') as stream:
        stream.write('\n')
    run_probe(tmp_path, {})
    assert not stale.exists()


def test_numba_cache_dir_is_guarded(tmp_path):
    """With NUMBA_CACHE_DIR numba caches there, and the guard follows it."""
    core = copy_package(tmp_path / 'src')
    cache_root = tmp_path / 'numba-cache'
    folder = run_probe(tmp_path / 'src', {'NUMBA_CACHE_DIR': str(cache_root)})
    assert cache_root in folder.parents
    assert (folder / 'gjk_core_sources.sha256').exists()
    stale = folder / 'epa.epa_expand-1.py311.nbi'
    stale.write_bytes(b'')
    (core / 'simplex.py').write_text((core / 'simplex.py').read_text() + '\n')
    run_probe(tmp_path / 'src', {'NUMBA_CACHE_DIR': str(cache_root)})
    assert not stale.exists()
    assert not (core / '__pycache__' / 'gjk_core_sources.sha256').exists()


def test_read_only_install_uses_user_cache(tmp_path):
    """A read-only install caches in the user's folder (XDG_CACHE_HOME/numba), guarded."""
    core = copy_package(tmp_path / 'install')
    user_cache = tmp_path / 'home-cache'
    env = {'XDG_CACHE_HOME': str(user_cache)}
    folder = run_probe(tmp_path / 'install', env, read_only=True)
    assert user_cache / 'numba' in folder.parents
    assert (folder / 'gjk_core_sources.sha256').exists()
    assert not (core / '__pycache__').exists()


def test_warm_up_covers_every_public_entry_point():
    """The warm-up compiles what the node (PairSet), the planner and signed_distance run."""
    assert set(warmup.GROUPS) == {'pairset', 'signed_distance', 'planning', 'points'}
    seconds = warmup.warm_up(jobs=1)  # in this process: the suite compiles these anyway
    assert set(seconds) == set(warmup.GROUPS)


@pytest.mark.parametrize('name', ['pairset', 'signed_distance', 'planning', 'points'])
def test_warm_up_group_runs_the_public_api(name):
    assert warmup.warm_up_group(name) >= 0.0
