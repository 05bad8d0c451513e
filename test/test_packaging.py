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
The installed layout that ROS tools rely on, the layering rule of the package, and the lock.

The install prefix is found the way ROS finds it (the ament index on AMENT_PREFIX_PATH), so the
same tests hold for the embedded venv (make install) and for a colcon install.

"""

import ast
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from ament_index_python.packages import get_package_prefix
from ament_index_python.packages import get_package_share_directory
import pytest

PACKAGE = 'gjk_ros'
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope='module')
def prefix():
    return pathlib.Path(get_package_prefix(PACKAGE))


@pytest.fixture(scope='module')
def share(prefix):
    share = pathlib.Path(get_package_share_directory(PACKAGE))
    assert share == prefix / 'share' / PACKAGE
    return share


def test_ament_index_marker(prefix):
    marker = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE
    assert marker.is_file()


def test_package_xml_installed(share):
    installed = share / 'package.xml'
    assert installed.is_file()
    assert installed.read_bytes() == (REPO_ROOT / 'package.xml').read_bytes()


@pytest.mark.parametrize('folder, pattern, required', [
    ('launch', '*.launch.py', 'gjk_distance.launch.py'),
    ('config', '*.yaml', 'gjk_distance.yaml'),
    ('config', '*.rviz', 'gjk_distance.rviz'),
])
def test_share_folder_matches_sources(share, folder, pattern, required):
    sources = sorted((REPO_ROOT / folder).glob(pattern))
    assert required in [source.name for source in sources], f'{folder}/{required} is missing'
    for source in sources:
        installed = share / folder / source.name
        assert installed.is_file(), f'{installed} is not installed (run make install)'
        assert installed.read_bytes() == source.read_bytes(), f'{installed} is out of date'


@pytest.mark.parametrize('script', ['gjk_distance_node', 'gjk_aggregator', 'gjk-ros'])
def test_executables_where_launch_ros_looks(prefix, script):
    # launch_ros resolves Node(package=..., executable=...) to <prefix>/lib/<package>/<name>.
    executable = prefix / 'lib' / PACKAGE / script
    assert executable.is_file()
    assert os.access(executable, os.X_OK)


def test_venv_install_is_editable_with_scripts_on_path(prefix, tmp_path):
    if prefix.resolve() != pathlib.Path(sys.prefix).resolve():
        pytest.skip('not the embedded venv install (make install)')
    for script in ('gjk_distance_node', 'gjk_aggregator', 'gjk-ros'):
        assert os.access(prefix / 'bin' / script, os.X_OK), f'bin/{script} is missing'
    # From a folder outside the repository, the package must still resolve to the working tree.
    found = subprocess.run(
        [sys.executable, '-c', 'import gjk_ros; print(gjk_ros.__file__)'],
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert pathlib.Path(found).resolve().is_relative_to(REPO_ROOT)


@pytest.mark.parametrize('module', ['gjk_ros.core', 'gjk_ros.models', 'gjk_ros.demo',
                                    'gjk_ros.ros.rviz_config'])
def test_layer_does_not_import_rclpy(module, tmp_path):
    # A fresh interpreter: the test process itself may already have imported rclpy.
    code = f"import {module}, sys; assert 'rclpy' not in sys.modules, 'rclpy was imported'"
    result = subprocess.run(
        [sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# Type hash of tf2_msgs/msg/TFMessage in ROS 2 Jazzy (from its TFMessage.json). Equal hashes mean
# the locally built fallback interoperates with tf2_ros publishers of a real ROS 2 install.
JAZZY_TF_MESSAGE_HASH = 'RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'


@pytest.mark.ros
def test_tf2_msgs_type_hash_matches_jazzy(rclpy_context):
    from rclpy.node import Node
    from tf2_msgs.msg import TFMessage

    node = Node('tf_hash_probe', context=rclpy_context)
    try:
        node.create_publisher(TFMessage, 'tf_hash_probe', 1)
        # Local endpoints are known to the graph cache at once: no discovery wait is involved.
        endpoints = node.get_publishers_info_by_topic('tf_hash_probe')
        assert [str(e.topic_type_hash) for e in endpoints] == [JAZZY_TF_MESSAGE_HASH]
    finally:
        node.destroy_node()


# The rosdep key or ROS package that provides each top-level module the package imports.
MODULE_KEYS = {
    'ament_index_python': 'ament_index_python', 'builtin_interfaces': 'builtin_interfaces',
    'collada': 'python3-collada', 'diagnostic_msgs': 'diagnostic_msgs',
    'geometry_msgs': 'geometry_msgs', 'launch': 'launch', 'launch_ros': 'launch_ros',
    'matplotlib': 'python3-matplotlib', 'moveit_msgs': 'moveit_msgs',
    'mpl_toolkits': 'python3-matplotlib',
    'numba': 'python3-numba', 'numpy': 'python3-numpy', 'rcl_interfaces': 'rcl_interfaces',
    'rclpy': 'rclpy', 'scipy': 'python3-scipy', 'sensor_msgs': 'sensor_msgs',
    'shape_msgs': 'shape_msgs',
    'std_msgs': 'std_msgs', 'std_srvs': 'std_srvs', 'lifecycle_msgs': 'lifecycle_msgs',
    'tf2_msgs': 'tf2_msgs', 'trimesh': 'python3-trimesh-pip',
    'visualization_msgs': 'visualization_msgs', 'yaml': 'python3-yaml',
}


# Optional at run time, imported only inside the function that needs it, with no rosdep key:
# coacd (convex decomposition, the setup.py extra 'decomposition'; docs/development.md says
# how to get it), ompl (gjk_ros.planning.ompl's adapters; docs/planning.md).
OPTIONAL_MODULES = {'coacd', 'ompl'}


def imported_modules(paths):
    """Top-level names of every module imported by the given Python files."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split('.')[0])
    return names - set(sys.stdlib_module_names) - {PACKAGE}


def test_package_xml_declares_every_runtime_import():
    sources = list((REPO_ROOT / PACKAGE).rglob('*.py')) + list(
        (REPO_ROOT / 'launch').glob('*.py'))
    modules = imported_modules(sources) - OPTIONAL_MODULES
    unknown = modules - set(MODULE_KEYS)
    assert not unknown, f'add these modules to MODULE_KEYS and package.xml: {unknown}'
    package = ElementTree.parse(REPO_ROOT / 'package.xml').getroot()
    declared = {element.text for tag in ('depend', 'exec_depend') for element in
                package.iter(tag)}
    missing = {MODULE_KEYS[module] for module in modules} - declared
    assert not missing, f'package.xml lacks <exec_depend> for {sorted(missing)}'


def test_optional_modules_are_imported_only_where_needed():
    """An optional module imported at module level would break an install without it."""
    for path in (REPO_ROOT / PACKAGE).rglob('*.py'):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        top_level = {alias.name.split('.')[0] for node in tree.body
                     if isinstance(node, ast.Import) for alias in node.names}
        top_level |= {node.module.split('.')[0] for node in tree.body
                      if isinstance(node, ast.ImportFrom) and node.module}
        assert not top_level & OPTIONAL_MODULES, path


def test_every_module_folder_is_an_installed_package():
    """A folder without __init__.py works in the editable venv but is lost by colcon's install."""
    from setuptools import find_packages
    found = set(find_packages(str(REPO_ROOT), include=[PACKAGE, PACKAGE + '.*']))
    folders = {path.parent.relative_to(REPO_ROOT).as_posix().replace('/', '.')
               for path in (REPO_ROOT / PACKAGE).rglob('*.py')
               if '__pycache__' not in path.parts}
    assert folders <= found, f'add __init__.py to {sorted(folders - found)}'


# --- the lock (tools/lock.py, requirements.lock) -------------------------------------------------

LOCK = REPO_ROOT / 'requirements.lock'
LOCKED_FROM = [REPO_ROOT / name for name in ('requirements.txt', 'requirements-ros.txt',
                                             'tools/requirements-tf2-build.txt')]


def requirement_names(path):
    """Names of the requirements a requirement file lists (comments, extras, ranges removed)."""
    names = set()
    for line in path.read_text(encoding='utf-8').splitlines():
        line = line.split('#')[0].strip()
        if line:
            names.add(re.split(r'[\[<>=!~; ]', line)[0])
    return names


def test_the_lock_was_made_from_the_requirement_files(lock_tool):
    """Edit a requirement file, then run `make lock`: make venv refuses a stale lock."""
    assert lock_tool.main(['check', str(LOCK)] + [str(path) for path in LOCKED_FROM]) == 0


def test_the_lock_pins_every_requirement_with_a_hash(lock_tool):
    locked = lock_tool.locked_versions(LOCK)
    wanted = {lock_tool.canonical_name(name) for path in LOCKED_FROM
              for name in requirement_names(path)}
    assert wanted <= set(locked), sorted(wanted - set(locked))
    entries = re.findall(r'^(\S+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})', LOCK.read_text(),
                         re.M)
    assert len(entries) == len(locked)  # every pin has its hash line


def test_package_metadata_keeps_loose_ranges():
    """A ROS install resolves package.xml and setup.py: exact pins belong in the lock only."""
    setup = (REPO_ROOT / 'setup.py').read_text(encoding='utf-8')
    assert '==' not in setup
    assert ' version_eq=' not in (REPO_ROOT / 'package.xml').read_text(encoding='utf-8')


def test_a_changed_requirement_file_makes_the_lock_stale(lock_tool, tmp_path, capsys):
    requirements = tmp_path / 'requirements.txt'
    requirements.write_text('numpy>=1.26\n')
    report = {'pip_version': '23.2.1', 'environment': {}, 'install': [
        {'metadata': {'name': 'NumPy', 'version': '2.4.6'}, 'requested': True,
         'download_info': {'url': 'file:///wheels/numpy.whl',
                           'archive_info': {'hashes': {'sha256': 'a' * 64}}}}]}
    text = lock_tool.lock_text(lock_tool.pins(report), [requirements],
                               lock_tool.inputs_digest([requirements]), report)
    lock = tmp_path / 'requirements.lock'
    lock.write_text(text)
    assert lock_tool.locked_versions(lock) == {'numpy': '2.4.6'}
    assert f'numpy==2.4.6 \\\n    --hash=sha256:{"a" * 64}  # requested' in text
    assert lock_tool.main(['check', str(lock), str(requirements)]) == 0
    requirements.write_text('numpy>=2\n')
    assert lock_tool.main(['check', str(lock), str(requirements)]) == 1
    assert 'run `make lock`' in capsys.readouterr().err


def test_a_subset_of_the_lock_is_a_lock_of_its_own(lock_tool, capsys):
    """The Makefile installs the kernel packages first from such a subset (hash-checking)."""
    assert lock_tool.main(['subset', str(LOCK), 'NumPy', 'numba']) == 0
    text = capsys.readouterr().out
    pins = lock_tool.lock_entries(LOCK)
    assert text == '\n'.join(pins['numpy'] + pins['numba']).replace('  # requested', '') + '\n'
    assert lock_tool.main(['subset', str(LOCK), 'not-a-locked-package']) == 1
    assert 'does not pin not-a-locked-package' in capsys.readouterr().err


def test_an_archive_without_a_hash_cannot_be_locked(lock_tool):
    report = {'install': [{'metadata': {'name': 'local', 'version': '1.0'},
                           'download_info': {'url': 'file:///src/local', 'dir_info': {}}}]}
    with pytest.raises(ValueError, match='local 1.0: .* no sha256'):
        lock_tool.pins(report)


def test_drift_lists_versions_that_differ_from_the_lock(lock_tool):
    locked = {'numpy': '2.4.6', 'pyyaml': '6.0.3', 'scipy': '1.17.1'}
    installed = {'numpy': '2.4.6', 'pyyaml': '6.0.4'}
    assert lock_tool.drift(locked, installed) == ['pyyaml: locked 6.0.3, installed 6.0.4',
                                                  'scipy: locked 1.17.1, not installed']
