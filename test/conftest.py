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
Shared test set-up for gjk_ros.

What this file does for every test run
- Keeps ROS traffic on this machine and its logs out of ~/.ros: sets
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and, unless already set, ``ROS_LOG_DIR`` (a
  temporary folder removed at the end) and ``AMENT_PREFIX_PATH`` (this interpreter's prefix, i.e.
  the venv, where ``make install`` registers the package).
- Gives the test process its own ``ROS_DOMAIN_ID`` (held for the whole session, see
  ``ros_domain_id``), so an in-process node never talks to another test run.
- Skips tests marked ``ros`` when rclpy cannot be imported, and ignores launch_testing files
  (``test_*.launch.py``) when launch_testing is not installed (it is not on the package index).
- Marks ``graph`` every test that starts a ROS graph: one that asks for ``ros_domain_id``,
  ``ros_env`` or ``rclpy_context``, and every test of a module that imports ``node_harness``
  (node processes, launch files, the ros2 CLI) or rclpy itself (a node in the test process).
  ``make test-fast`` runs the others (``-m 'not graph'``); new test modules are sorted by
  these rules without marking anything by hand.
- Works the same in pytest-xdist workers (``make test`` runs ``-n``): each worker is a test
  process of its own, with its own session domain and log folder.
- Runs tests marked ``linter`` from the repository root, as the ament linters expect.
- Hypothesis: no per-example deadline (the first call of a numba function compiles it).

Fixtures for tests
- ``ros_domain_id``: an int in 1..100 that no other test, in this process or any other on this
  machine, holds while the test runs (an exclusive file lock per id; xdist-safe). Domain 0, the
  default every stray node uses, is never handed out.
- ``ros_env``: a dict for ``subprocess`` (``env=ros_env``) that starts a ROS process in an
  isolated graph: a copy of ``os.environ`` with ``ROS_DOMAIN_ID=ros_domain_id``,
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, ``ROS_LOG_DIR`` in the test's tmp_path and
  ``AMENT_PREFIX_PATH`` starting with the venv prefix. Start such processes with
  ``VENV_PYTHON`` (this interpreter) or a console script from ``VENV_BIN``: the ROS wheels need the
  venv's own interpreter.
- ``rclpy_context``: an initialised ``rclpy.context.Context`` on ``ros_domain_id`` for nodes
  created in the test process (``Node('name', context=rclpy_context)`` and an executor built
  with ``context=rclpy_context``); shut down after the test. Skips if rclpy is missing.

Module constants: ``REPO_ROOT``, ``VENV_PREFIX`` (``sys.prefix``), ``VENV_BIN``, ``VENV_PYTHON``.

"""

import os
import pathlib
import shutil
import sys
import tempfile

from hypothesis import settings
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV_PREFIX = pathlib.Path(sys.prefix)
VENV_BIN = pathlib.Path(sys.executable).parent
VENV_PYTHON = sys.executable

settings.register_profile('gjk_ros', deadline=None)
settings.load_profile('gjk_ros')


def _can_import(module_name):
    try:
        __import__(module_name)
    except Exception:  # a broken install fails with more than ImportError (missing .so)
        return False
    return True


HAVE_RCLPY = _can_import('rclpy')
HAVE_LAUNCH_TESTING = _can_import('launch_testing')

# launch_testing files are not plain pytest modules; without the plugin they cannot be collected.
collect_ignore_glob = [] if HAVE_LAUNCH_TESTING else ['*.launch.py']


class _DomainLock:
    """An exclusive, process-held lock on one ROS domain id (the demo's lock protocol)."""

    def __init__(self):
        from gjk_ros.demo.monitor import hold_free_domain
        self.domain_id, self._handle = hold_free_domain()

    def close(self):
        self._handle.close()


_session_domain = None
_session_log_dir = None


def pytest_configure(config):
    """Isolate the test process's own ROS graph before any test imports rclpy."""
    global _session_domain, _session_log_dir
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    if 'ROS_LOG_DIR' not in os.environ:
        _session_log_dir = tempfile.mkdtemp(prefix='gjk_ros_test_log_')
        os.environ['ROS_LOG_DIR'] = _session_log_dir
    _prepend_ament_prefix(os.environ, VENV_PREFIX)
    _session_domain = _DomainLock()
    os.environ['ROS_DOMAIN_ID'] = str(_session_domain.domain_id)


def pytest_unconfigure(config):
    """Release the session's domain id and remove its temporary log folder."""
    if _session_domain is not None:
        _session_domain.close()
    if _session_log_dir is not None:
        shutil.rmtree(_session_log_dir, ignore_errors=True)


# Fixtures that put a test on a ROS graph of its own.
GRAPH_FIXTURES = frozenset({'ros_domain_id', 'ros_env', 'rclpy_context'})
# Modules whose import by a test module means that its tests run ROS nodes.
GRAPH_MODULES = frozenset({'node_harness', 'rclpy'})


def starts_a_graph(item):
    """Return whether a collected test starts ROS nodes (see the module docstring)."""
    if GRAPH_FIXTURES & set(getattr(item, 'fixturenames', ())):
        return True
    module = getattr(item, 'module', None)
    if module is None:  # not a plain Python test (a launch_testing item): it runs a launch file
        return 'launch_test' in item.keywords or item.path.name.startswith('test_launch')
    imported = {getattr(value, '__module__', None) if not isinstance(value, type(pytest))
                else value.__name__ for value in vars(module).values()}
    return bool(GRAPH_MODULES & {str(name).split('.')[0] for name in imported})


def pytest_collection_modifyitems(config, items):
    """Mark tests that start a ROS graph; skip tests marked ``ros`` without rclpy."""
    skip_ros = pytest.mark.skip(reason='rclpy is not importable (no ROS 2 here; use make test)')
    for item in items:
        if starts_a_graph(item):
            item.add_marker(pytest.mark.graph)
        if not HAVE_RCLPY and 'ros' in item.keywords:
            item.add_marker(skip_ros)


def _prepend_ament_prefix(env, prefix):
    """Put `prefix` first on AMENT_PREFIX_PATH in `env` (a dict), once."""
    entries = [p for p in env.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    if str(prefix) not in entries:
        env['AMENT_PREFIX_PATH'] = os.pathsep.join([str(prefix)] + entries)


@pytest.fixture(autouse=True)
def _linters_run_from_repo_root(request, monkeypatch):
    # ament linters called with argv=[] check the current folder.
    if 'linter' in request.keywords:
        monkeypatch.chdir(REPO_ROOT)


@pytest.fixture(scope='module')
def lock_tool():
    """Import the repository's lock tool, ``tools/lock.py``, as a module."""
    sys.path.insert(0, str(REPO_ROOT / 'tools'))
    try:
        import lock
        yield lock
    finally:
        sys.path.remove(str(REPO_ROOT / 'tools'))


@pytest.fixture
def ros_domain_id():
    """Return a ROS domain id (1..100) held exclusively for this test."""
    lock = _DomainLock()
    try:
        yield lock.domain_id
    finally:
        lock.close()


@pytest.fixture
def ros_env(ros_domain_id, tmp_path):
    """Return an environment dict for subprocesses that run ROS nodes in an isolated graph."""
    env = dict(os.environ)
    env['ROS_DOMAIN_ID'] = str(ros_domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    log_dir = tmp_path / 'ros_log'
    log_dir.mkdir(exist_ok=True)
    env['ROS_LOG_DIR'] = str(log_dir)
    _prepend_ament_prefix(env, VENV_PREFIX)
    env['PYTHONUNBUFFERED'] = '1'  # so a test reading a child's output sees lines at once
    return env


@pytest.fixture
def rclpy_context(ros_domain_id):
    """Return an initialised rclpy context on this test's own domain; shut down afterwards."""
    rclpy = pytest.importorskip('rclpy')
    context = rclpy.context.Context()
    rclpy.init(context=context, domain_id=ros_domain_id)
    try:
        yield context
    finally:
        rclpy.try_shutdown(context=context)
