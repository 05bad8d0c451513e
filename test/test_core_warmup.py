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
Where the compiled kernels are cached, and the kernel groups of the warm-up.

The cache tests run child processes on a copy of the core: the user's cache keyed by a digest
of the sources (found again by a reinstall elsewhere, left by an edit), NUMBA_CACHE_DIR, the
pruning of old folders, and numba's own folders, guarded, where that cache cannot be written.
"""

from concurrent.futures import ThreadPoolExecutor
import os
import pathlib
import shutil
import subprocess
import sys
import time

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


KERNEL = 'from ._jit import njit\n\n\n@njit\ndef plus(x):\n    return x + 1.0\n'
COMPILE = ('from gjk_ros.core import _jit; from gjk_ros.core.zz_kernel import plus; '
           'plus(1.0); print(_jit.cache_directory()); print(sum(plus.stats.cache_hits.values()))')


def copy_with_kernel(root):
    """Copy the core with one tiny kernel of its own (a file every copy has alike)."""
    core = copy_package(root)
    (core / 'zz_kernel.py').write_text(KERNEL)
    return core


def compile_kernel(root, env_updates):
    """Call the copy's kernel in a child process; return (cache folder, whether it was loaded)."""
    env = {key: value for key, value in os.environ.items() if key != 'NUMBA_CACHE_DIR'}
    env.update(PYTHONPATH=str(root), **env_updates)
    result = subprocess.run([sys.executable, '-c', COMPILE], env=env, cwd=str(root),
                            capture_output=True, text=True, check=True)
    folder, hits = result.stdout.split()
    return pathlib.Path(folder), int(hits) > 0


def test_a_reinstall_of_the_same_source_loads_its_kernels(tmp_path):
    """Another path, new file times, the same source: the kernel is loaded, not compiled."""
    env = {'XDG_CACHE_HOME': str(tmp_path / 'cache')}
    copy_with_kernel(tmp_path / 'first')
    folder, loaded = compile_kernel(tmp_path / 'first', env)
    assert tmp_path / 'cache' / 'gjk_ros' in folder.parents and folder.name.startswith('core-')
    assert not loaded
    copy_with_kernel(tmp_path / 'second')
    assert compile_kernel(tmp_path / 'second', env) == (folder, True)


def test_an_edit_of_any_kernel_source_gets_its_own_folder(tmp_path):
    """Numba alone would miss an edit of a file the kernel does not live in (inlined code)."""
    env = {'XDG_CACHE_HOME': str(tmp_path / 'cache')}
    core = copy_with_kernel(tmp_path)
    folder, _ = compile_kernel(tmp_path, env)
    with open(core / 'tolerances.py', 'a', encoding='utf-8') as stream:
        stream.write('\n')
    edited, loaded = compile_kernel(tmp_path, env)
    assert edited != folder and not loaded
    with open(core / 'warmup.py', 'a', encoding='utf-8') as stream:
        stream.write('\n')   # no kernel lives there: the kernels stay
    assert compile_kernel(tmp_path, env) == (edited, True)


def test_numba_cache_dir_holds_the_digest_folders(tmp_path):
    core = copy_package(tmp_path / 'src')
    cache_root = tmp_path / 'numba-cache'
    folder = run_probe(tmp_path / 'src', {'NUMBA_CACHE_DIR': str(cache_root)})
    assert folder.parent == cache_root / 'gjk_ros'
    assert not (core / '__pycache__').exists()


def test_old_digest_folders_are_pruned(tmp_path):
    root = tmp_path / 'cache' / 'gjk_ros'
    for age in range(6):
        old = root / f'core-old{age}'
        old.mkdir(parents=True)
        stamp = time.time() - 3600 * (age + 1)
        os.utime(old, (stamp, stamp))
    copy_package(tmp_path / 'src')
    folder = run_probe(tmp_path / 'src', {'XDG_CACHE_HOME': str(tmp_path / 'cache')})
    kept = sorted(entry.name for entry in root.iterdir())
    assert kept == sorted([folder.name, 'core-old0', 'core-old1', 'core-old2'])


def test_without_a_writable_user_cache_numba_folders_are_guarded(tmp_path):
    """The user cache is a file here: numba's in-tree folder, dropped when a source changes."""
    core = copy_package(tmp_path / 'src')
    blocked = tmp_path / 'not-a-folder'
    blocked.write_text('')
    env = {'XDG_CACHE_HOME': str(blocked)}
    folder = run_probe(tmp_path / 'src', env)
    assert folder == core / '__pycache__'
    stale = folder / 'gjk.gjk-1.py311.nbi'
    stale.write_bytes(b'')
    run_probe(tmp_path / 'src', env)
    assert stale.exists()  # unchanged sources: the cache is kept
    with open(core / 'tolerances.py', 'a', encoding='utf-8') as stream:
        stream.write('\n')
    run_probe(tmp_path / 'src', env)
    assert not stale.exists()


def test_read_only_install_without_user_cache_uses_numbas_user_folder(tmp_path):
    """Read-only sources and no writable gjk_ros cache: numba's user folder, guarded."""
    core = copy_package(tmp_path / 'install')
    user_cache = tmp_path / 'home-cache'
    user_cache.mkdir()
    (user_cache / 'gjk_ros').write_text('')   # our root cannot be a folder
    folder = run_probe(tmp_path / 'install', {'XDG_CACHE_HOME': str(user_cache)},
                       read_only=True)
    assert user_cache / 'numba' in folder.parents
    assert (folder / 'gjk_core_sources.sha256').exists()
    assert not (core / '__pycache__').exists()


def test_warm_up_covers_every_public_entry_point():
    """The groups compile what the node (PairSet), the planner, signed_distance, swept run."""
    assert set(warmup.GROUPS) == {'pairset', 'signed_distance', 'planning', 'points', 'swept',
                                  'meshes'}
    seconds = warmup.warm_up(warmup.GROUPS, jobs=1)  # here: the suite compiles these anyway
    assert list(seconds) == list(warmup.GROUPS)


def test_the_node_groups_leave_out_the_planner_and_the_single_pair_api():
    assert set(warmup.NODE_GROUPS) == {'pairset', 'points'}
    assert warmup.GROUPS[:len(warmup.NODE_GROUPS)] == warmup.NODE_GROUPS  # compiled first


@pytest.mark.parametrize('name', ['pairset', 'signed_distance', 'planning', 'points', 'swept',
                                  'meshes'])
def test_warm_up_group_runs_the_public_api(name):
    assert warmup.warm_up_group(name) >= 0.0


def test_unknown_groups_are_named_in_the_error():
    with pytest.raises(ValueError, match=r"unknown \['planner'\]"):
        warmup.warm_up(['pairset', 'planner'])


def _extra_warm_up():
    """Stand in for a warm-up of another layer (run in a pool process)."""
    return 0.25


def test_groups_and_extra_warm_ups_run_in_parallel_processes():
    seconds = warmup.warm_up(['points', 'pairset'], jobs=2, extra={'extra': _extra_warm_up})
    assert list(seconds) == ['pairset', 'points', 'extra']  # GROUPS order, then the extras
    assert seconds['extra'] == pytest.approx(0.0, abs=0.2)  # timed around the call, not 0.25
    assert all(value >= 0.0 for value in seconds.values())


def test_a_group_waits_for_the_group_whose_kernels_it_calls():
    """The planning group starts after pairset ends; another uses the free process meanwhile."""
    events = []

    def task(name, seconds):
        def run():
            events.append(('start', name))
            time.sleep(seconds)
            events.append(('end', name))
        return run

    tasks = {'pairset': task('pairset', 0.3), 'points': task('points', 0.05),
             'planning': task('planning', 0.05), 'signed_distance': task('signed_distance', 0.1)}
    with ThreadPoolExecutor(max_workers=2) as pool:
        seconds = warmup._run_in_order(pool, 2, tasks)
    assert set(seconds) == set(tasks)
    assert events.index(('start', 'planning')) > events.index(('end', 'pairset'))
    assert events.index(('start', 'signed_distance')) < events.index(('end', 'pairset'))


# The node's cycle, in a fresh interpreter: after warm_up_group('pairset') the first cycle of a
# node-sized layout must find every kernel it calls compiled (no signature added).
NODE_CYCLE = """
import numpy as np
from gjk_ros.core import bodypairs, distance, pairset, rigid, warmup
from gjk_ros.core.polytope import ConvexPolytope
from gjk_ros.ros.compute.pairs import InputState
kernels = (pairset._update_pairs, bodypairs.reduce_pairs, rigid._valid_poses,
           distance.first_invalid_pose)
warmup.warm_up_group('pairset')
before = [len(kernel.signatures) for kernel in kernels]
pieces = [ConvexPolytope.box([0.2, 0.1, 0.3]), ConvexPolytope.cylinder(0.1, 0.4),
          ConvexPolytope.from_points(np.random.default_rng(1).normal(size=(40, 3))),
          ConvexPolytope.sphere(0.2)]
engine = bodypairs.BodyPairs(pieces, [[(0, 2), (1, 2)], [(0, 3), (1, 3)]], [0.01, 0.01],
                             [0.0, 0.05])
poses = np.tile(np.eye(4), (4, 1, 1))
poses[:, 0, 3] = [0.0, 0.3, 1.0, -1.0]
inputs = np.array([InputState.OK, InputState.OK, InputState.STALE, InputState.OK])
pair_inputs = np.maximum(inputs[engine.piece_pairs[:, 0]], inputs[engine.piece_pairs[:, 1]])
rigid.valid_pose_mask(poses)
engine.update(poses, pair_inputs == InputState.OK, 2.0)
print([len(kernel.signatures) for kernel in kernels] == before)
"""


def test_the_node_cycle_compiles_nothing_after_the_pairset_group():
    pytest.importorskip('gjk_ros.ros.compute.pairs')
    result = subprocess.run([sys.executable, '-c', NODE_CYCLE], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ['True']
