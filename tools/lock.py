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
Pin every package ``make venv`` installs: the lock file and the checks around it.

The requirement files keep the loose ranges a ROS install or a user's own environment needs;
the lock (``requirements.lock``) holds the one set that was resolved from them, every package
at an exact version with the sha256 of the file pip chose, so that ``make venv`` installs the
same bytes today and next month (pip's hash-checking mode: a file that changed, or a package
the lock does not list, stops the install).

It is made with pip alone: ``pip install --dry-run --ignore-installed --report`` resolves the
requirement files as a fresh install would, with this machine's indexes, and reports each
chosen archive with its hash. The interpreter that resolves must be the one the venv is made
from (CPython 3.11 for the ROS 2 Jazzy wheels): environment markers and wheel tags are
resolved for it, and the lock says which it was.

Usage::

    python tools/lock.py write LOCK REQUIREMENTS...     # make lock
    python tools/lock.py check LOCK REQUIREMENTS...     # the lock was made from these files?
    python tools/lock.py subset LOCK NAME...            # those packages' pins, to install first
    python tools/lock.py compare LOCK PYTHON            # installed versions against the lock

``check`` exits 1 when a requirement file changed after the lock was written (``make venv``
refuses a stale lock rather than installing something nobody resolved); ``compare`` lists the
packages whose installed version differs (``make test-latest`` prints the drift).
"""

import argparse
import hashlib
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import sysconfig
import tempfile

EXIT_OK = 0
EXIT_STALE = 1
EXIT_USAGE = 2

_INPUTS = re.compile(r'^# inputs sha256: ([0-9a-f]{64})$', re.M)
_PIN = re.compile(r'^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)', re.M)


def canonical_name(name):
    """Return a distribution name in its PEP 503 normal form (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r'[-_.]+', '-', name).lower()


def inputs_digest(requirement_files):
    """
    Return the sha256 of the requirement files' names and contents, in the order given.

    The lock records it, so a later edit of any requirement file is noticed.
    """
    digest = hashlib.sha256()
    for path in requirement_files:
        path = pathlib.Path(path)
        digest.update(path.name.encode() + b'\0' + path.read_bytes() + b'\0')
    return digest.hexdigest()


def resolve(python, requirement_files):
    """
    Resolve the requirement files as a fresh install into ``python``'s environment would.

    Returns pip's installation report (``install``: one entry per package, with the chosen
    archive's URL and hashes).
    """
    with tempfile.TemporaryDirectory(prefix='gjk_ros_lock_') as work:
        report = os.path.join(work, 'report.json')
        command = [python, '-m', 'pip', 'install', '--dry-run', '--ignore-installed',
                   '--quiet', '--disable-pip-version-check', '--report', report]
        for path in requirement_files:
            command += ['-r', str(path)]
        subprocess.run(command, check=True)
        with open(report, encoding='utf-8') as stream:
            return json.load(stream)


def pins(report):
    """
    Return the resolved packages as sorted ``(name, version, [sha256...], requested)`` tuples.

    Raises ValueError when pip chose an archive without a sha256 (a local folder or a VCS
    checkout), which a lock could not pin.
    """
    result = []
    for item in report['install']:
        name, version = item['metadata']['name'], item['metadata']['version']
        hashes = item['download_info'].get('archive_info', {}).get('hashes', {})
        if 'sha256' not in hashes:
            raise ValueError(f'{name} {version}: pip chose {item["download_info"]["url"]}, '
                             'which has no sha256 to pin')
        result.append((canonical_name(name), version, [hashes['sha256']],
                       bool(item.get('requested'))))
    return sorted(result)


def lock_text(entries, requirement_files, digest, report):
    """Return the lock file's text: a header saying what it was made from, then the pins."""
    environment = report.get('environment', {})
    target = '%s %s on %s %s' % (environment.get('implementation_name', sys.implementation.name),
                                 environment.get('python_full_version',
                                                 platform.python_version()),
                                 environment.get('sys_platform', sys.platform),
                                 environment.get('platform_machine', platform.machine()))
    lines = [
        '# Exact versions and file hashes of everything `make venv` installs, resolved by',
        '# `make lock` (tools/lock.py) from: ' + ', '.join(map(str, requirement_files)) + '.',
        '# Edit those files, never this one; then run `make lock` and commit both.',
        f'# resolved for: {target} ({sysconfig.get_platform()}), pip {report.get("pip_version")}',
        f'# inputs sha256: {digest}',
    ]
    for name, version, hashes, requested in entries:
        lines.append(f'{name}=={version} \\')
        lines.extend(f'    --hash=sha256:{value}' + (' \\' if k + 1 < len(hashes) else '')
                     for k, value in enumerate(hashes))
        if requested:
            lines[-1] += '  # requested'
    return '\n'.join(lines) + '\n'


def lock_entries(lock_path):
    """Return ``{canonical name: the pin's lines (name==version and its hashes)}`` of a lock."""
    entries, name = {}, None
    for line in pathlib.Path(lock_path).read_text(encoding='utf-8').splitlines():
        match = _PIN.match(line)
        if match:
            name = canonical_name(match.group(1))
            entries[name] = [line]
        elif name is not None and line.startswith('    --hash='):
            entries[name].append(line)
        else:
            name = None
    return entries


def locked_versions(lock_path):
    """Return ``{canonical name: version}`` of a lock file."""
    text = pathlib.Path(lock_path).read_text(encoding='utf-8')
    return {canonical_name(name): version for name, version in _PIN.findall(text)}


def recorded_digest(lock_path):
    """Return the inputs digest a lock file records, or None."""
    match = _INPUTS.search(pathlib.Path(lock_path).read_text(encoding='utf-8'))
    return match.group(1) if match else None


def installed_versions(python):
    """Return ``{canonical name: version}`` of the distributions ``python`` can import."""
    script = ('import importlib.metadata as m, json; print(json.dumps({d.metadata["Name"]: '
              'd.version for d in m.distributions() if d.metadata["Name"]}))')
    output = subprocess.run([python, '-c', script], check=True, capture_output=True,
                            text=True).stdout
    return {canonical_name(name): version for name, version in json.loads(output).items()}


def drift(locked, installed):
    """Return report lines for every locked package installed at another version, or missing."""
    lines = []
    for name in sorted(locked):
        if name not in installed:
            lines.append(f'{name}: locked {locked[name]}, not installed')
        elif installed[name] != locked[name]:
            lines.append(f'{name}: locked {locked[name]}, installed {installed[name]}')
    return lines


def _write(options):
    digest = inputs_digest(options.requirements)
    report = resolve(options.python, options.requirements)
    text = lock_text(pins(report), options.requirements, digest, report)
    pathlib.Path(options.lock).write_text(text, encoding='utf-8')
    print(f'{options.lock}: {text.count("==")} packages pinned')
    return EXIT_OK


def _check(options):
    if not pathlib.Path(options.lock).is_file():
        print(f'{options.lock} is missing: run `make lock`', file=sys.stderr)
        return EXIT_STALE
    if recorded_digest(options.lock) != inputs_digest(options.requirements):
        print(f'{options.lock} was not made from the current '
              f'{", ".join(map(str, options.requirements))}: run `make lock` and commit the '
              'result (or `make LOCK= ...` to install the loose ranges)', file=sys.stderr)
        return EXIT_STALE
    return EXIT_OK


def _subset(options):
    entries = lock_entries(options.lock)
    names = [canonical_name(name) for name in options.names]
    missing = [name for name in names if name not in entries]
    if missing:
        print(f'{options.lock} does not pin {", ".join(missing)}', file=sys.stderr)
        return EXIT_STALE
    for name in names:
        # The last hash line of a pin may carry a comment; a subset is a lock of its own.
        lines = [line.split('  #')[0] for line in entries[name]]
        print('\n'.join(lines))
    return EXIT_OK


def _compare(options):
    lines = drift(locked_versions(options.lock), installed_versions(options.python))
    print(f'{len(lines)} package(s) differ from {options.lock}' + (':' if lines else ''))
    for line in lines:
        print('  ' + line)
    return EXIT_OK


def main(argv=None):
    """Run ``tools/lock.py``; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0].strip())
    commands = parser.add_subparsers(dest='command', required=True)
    write = commands.add_parser('write', help='resolve the requirement files into LOCK')
    write.add_argument('--python', default=sys.executable,
                       help='interpreter to resolve for (default: this one)')
    check = commands.add_parser('check', help='exit 1 unless LOCK was made from these files')
    for command in (write, check):
        command.add_argument('lock')
        command.add_argument('requirements', nargs='+')
    subset = commands.add_parser('subset', help="print these packages' pins from LOCK")
    subset.add_argument('lock')
    subset.add_argument('names', nargs='+')
    compare = commands.add_parser('compare', help='list installed versions that differ')
    compare.add_argument('lock')
    compare.add_argument('python', help='interpreter of the environment to compare')
    options = parser.parse_args(argv)
    return {'write': _write, 'check': _check, 'subset': _subset,
            'compare': _compare}[options.command](options)


if __name__ == '__main__':
    sys.exit(main())
