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
The benchmark's lock (bench/requirements.lock): current, hashed, and in step with the venv's.

`make bench` installs it in pip's hash-checking mode with requirements.lock's versions as
constraints; these checks say, without a network, what that install would refuse.
"""

import pathlib
import re
import subprocess


REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH_LOCK = REPO_ROOT / 'bench' / 'requirements.lock'
BENCH_REQUIREMENTS = REPO_ROOT / 'bench' / 'requirements.txt'
LOCK = REPO_ROOT / 'requirements.lock'
PIN = re.compile(r'^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)', re.M)


def test_the_bench_lock_was_made_from_the_bench_requirements(lock_tool):
    """Edit bench/requirements.txt, then run `make bench-lock`: make bench refuses a stale lock."""
    assert lock_tool.main(['check', str(BENCH_LOCK), str(BENCH_REQUIREMENTS)]) == 0


def test_every_bench_requirement_is_pinned_at_its_version_with_a_hash(lock_tool):
    locked = lock_tool.locked_versions(BENCH_LOCK)
    for name, version in PIN.findall(BENCH_REQUIREMENTS.read_text()):
        assert locked.get(lock_tool.canonical_name(name)) == version, name
    entries = re.findall(r'^(\S+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})',
                         BENCH_LOCK.read_text(), re.M)
    assert len(entries) == len(locked) > len(PIN.findall(BENCH_REQUIREMENTS.read_text()))


def test_the_bench_lock_changes_no_package_of_the_venv(lock_tool):
    """A package both locks pin is at one version in both (the install's constraints)."""
    bench, main = lock_tool.locked_versions(BENCH_LOCK), lock_tool.locked_versions(LOCK)
    shared = set(bench) & set(main)
    assert shared, 'the peers share numpy and matplotlib with the venv'
    assert {name: (bench[name], main[name]) for name in shared
            if bench[name] != main[name]} == {}
    bench_hashes, main_hashes = (
        {name: {line.split('  #')[0] for line in lines[1:]}
         for name, lines in lock_tool.lock_entries(path).items()} for path in (BENCH_LOCK, LOCK))
    for name in shared:
        assert bench_hashes[name] & main_hashes[name], name  # the same file


def test_make_bench_installs_the_lock_with_hashes_only():
    """The recipe, as make would run it (make -n prints without running)."""
    stamps = '/nonexistent/.stamps'
    commands = subprocess.run(
        ['make', '-n', '-B', '--no-print-directory', 'VENV=/nonexistent',
         stamps + '/bench-requirements'], cwd=REPO_ROOT, capture_output=True, text=True,
        check=False).stdout.replace('\\\n', ' ')
    install = [line for line in commands.splitlines()
               if 'pip' in line and 'install' in line and 'bench/' in line]
    assert len(install) == 1, commands
    assert '--require-hashes' in install[0] and '--no-deps' in install[0]
    assert '-r bench/requirements.lock' in install[0]
    assert '-c %s/lock-pins.txt' % stamps in install[0]
    assert 'tools/lock.py check bench/requirements.lock bench/requirements.txt' in commands
