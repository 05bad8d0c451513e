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
Give an editable install the file layout of a colcon install.

`pip install -e .` puts the code on the path and the console scripts in `<prefix>/bin`, but it
ignores `data_files` and setup.cfg's `script_dir`. ROS tools need both: the ament index marker,
`share/<package>/package.xml`, the launch and config folders, and the executables in
`<prefix>/lib/<package>/` (where launch_ros looks for them). This script reads the lists from
setup.py itself, so there is one source of truth, and links each file into the prefix. The links
point at the working tree, as with `colcon build --symlink-install`: edits show up at once, and
only a new file needs another run. Files this script linked earlier but that setup.py no longer
lists are removed.

Usage: python tools/install_layout.py PREFIX

"""

# setuptools' own copy of distutils (its .pth hook provides it), the one setup() runs through.
from distutils.core import run_setup
import os
import sys

MANIFEST = 'gjk_ros_layout.txt'


def read_setup(setup_py='setup.py'):
    """
    Return the package name, data_files and console script names that setup.py declares.

    Parameters
    ----------
    setup_py : str
        Path of the setup script.

    Returns
    -------
    tuple
        (name, data_files as a list of (folder, [files]), list of console script names).

    """
    dist = run_setup(setup_py, stop_after='config')
    scripts = [
        spec.split('=', 1)[0].strip()
        for spec in (dist.entry_points or {}).get('console_scripts', [])
    ]
    return dist.get_name(), list(dist.data_files or []), scripts


def link(target, link_path):
    """
    Make `link_path` a symbolic link to `target`, replacing what was there.

    Parameters
    ----------
    target : str
        Absolute path the link points to.
    link_path : str
        Where the link is created (parent folders are created too).

    """
    os.makedirs(os.path.dirname(link_path), exist_ok=True)
    if os.path.islink(link_path) or os.path.isfile(link_path):
        os.remove(link_path)
    os.symlink(target, link_path)


def remove_stale(prefix, wanted):
    """
    Remove links made by an earlier run that are no longer wanted.

    Parameters
    ----------
    prefix : str
        Installation prefix.
    wanted : set of str
        Paths (relative to the prefix) that this run created.

    """
    manifest = os.path.join(prefix, MANIFEST)
    if not os.path.exists(manifest):
        return
    with open(manifest, encoding='utf-8') as stream:
        previous = {line.strip() for line in stream if line.strip()}
    for relative in sorted(previous - wanted):
        path = os.path.join(prefix, relative)
        if os.path.islink(path):
            os.remove(path)


def install_layout(prefix):
    """
    Link data files and console scripts into `prefix` as colcon would install them.

    Parameters
    ----------
    prefix : str
        Installation prefix (the virtual environment's folder).

    """
    prefix = os.path.abspath(prefix)
    # setup.py globs relative to the working folder, so run it from the repository root.
    source_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(source_root)
    name, data_files, scripts = read_setup()
    created = set()
    for folder, files in data_files:
        for source in files:
            relative = os.path.join(folder, os.path.basename(source))
            link(os.path.join(source_root, source), os.path.join(prefix, relative))
            created.add(relative)
    for script in scripts:
        installed = os.path.join(prefix, 'bin', script)
        if not os.path.exists(installed):
            sys.exit(f'error: {installed} is missing; run pip install -e . first')
        relative = os.path.join('lib', name, script)
        link(installed, os.path.join(prefix, relative))
        created.add(relative)
    remove_stale(prefix, created)
    with open(os.path.join(prefix, MANIFEST), 'w', encoding='utf-8') as stream:
        stream.write(''.join(line + '\n' for line in sorted(created)))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    install_layout(sys.argv[1])
