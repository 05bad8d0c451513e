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
The node driven as a user would: ``ros2 launch``, ``ros2 param``, ``ros2 topic echo``.

One ``ros2 launch gjk_ros gjk_distance.launch.py`` process serves the module, in a namespace of
its own on the test's own ROS domain, with ``rviz:=true`` and a stand-in ``rviz2`` package (a
script that keeps the config it is given), since RViz itself cannot run here. The ros2 command
line needs its daemon here (``--no-daemon`` waits only 0.5 s for discovery); the daemon is per
ROS domain, so it is isolated with the domain, and it is stopped at the end.

Skipped where the ros2 command line is not installed (``make test`` installs it from
../shared/ros-tools when that folder exists; a ROS 2 install has it).
"""

import os
import pathlib
import re
import signal
import subprocess
import sys

from gjk_ros.ros.records import names_from_json
from node_harness import (box_urdf, marker, Scene, STARTUP_TIMEOUT, TIMEOUT, wait_until)
import pytest
import yaml

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROS2 = pathlib.Path(sys.executable).parent / 'ros2'
NAMESPACE = 'cli_%d' % os.getpid()
NODE = '/%s/gjk_distance' % NAMESPACE
# ros2 CLI calls start a Python process and discover the graph: a few seconds each at worst.
CLI_TIMEOUT = 60.0
FAKE_RVIZ2 = """#!/bin/sh
# Stand-in for rviz2: keep the arguments and the config file, then wait to be stopped.
echo "$@" > "{out}/rviz2_args"
cp "$2" "{out}/rviz2_config.rviz"
sleep 600 &
trap 'kill $!; exit 0' INT TERM
wait
"""


# Runs a command with SIGINT at its default disposition. A process started in the background
# by a non-interactive shell (`make test &`) inherits SIGINT ignored, and so would ros2 launch,
# which then never sees the Ctrl-C this test sends it.
DEFAULT_SIGINT = [sys.executable, '-c', 'import os, signal, sys; '
                  'signal.signal(signal.SIGINT, signal.SIG_DFL); '
                  'os.execv(sys.argv[1], sys.argv[1:])']


def fake_rviz2_prefix(root):
    """Return an ament prefix holding a package 'rviz2' whose executable is FAKE_RVIZ2."""
    (root / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (root / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'rviz2').write_text('')
    (root / 'share' / 'rviz2').mkdir(parents=True)
    (root / 'lib' / 'rviz2').mkdir(parents=True)
    program = root / 'lib' / 'rviz2' / 'rviz2'
    program.write_text(FAKE_RVIZ2.format(out=root))
    program.chmod(0o755)
    return root


def ros2(env, *arguments, timeout=CLI_TIMEOUT):
    """Run one ros2 command; return its completed process (output as text)."""
    return subprocess.run([str(ROS2), *arguments], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope='module')
def cli_env(tmp_path_factory):
    """Environment of the launch and the CLI calls: this module's domain, a fake rviz2."""
    if not ROS2.exists():
        pytest.skip('the ros2 command line is not installed (make test installs it from '
                    '../shared/ros-tools when that folder exists)')
    root = tmp_path_factory.mktemp('ros2_cli')
    env = dict(os.environ)  # conftest: this process's own domain, LOCALHOST, ROS_LOG_DIR
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        [str(fake_rviz2_prefix(root / 'fake_rviz2')), env['AMENT_PREFIX_PATH']])
    env['PYTHONUNBUFFERED'] = '1'
    ros2(env, 'daemon', 'start')
    try:
        yield env, root
    finally:
        ros2(env, 'daemon', 'stop')


@pytest.fixture(scope='module')
def launch(cli_env):
    """``ros2 launch`` the node with a namespace, rviz:=true and a short parameter file."""
    env, root = cli_env
    params = root / 'params.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'fixed_frame': 'world', 'rate_hz': 20.0, 'tf_timeout': 2.0}}}))
    log_path = root / 'launch.log'
    with open(log_path, 'wb') as log:
        process = subprocess.Popen(
            DEFAULT_SIGINT + [
                str(ROS2), 'launch', 'gjk_ros', 'gjk_distance.launch.py',
                'namespace:=' + NAMESPACE, 'params_file:=' + str(params), 'fixed_frame:=base',
                'rviz:=true'],
            env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        yield process, log_path
    finally:
        stop(process)


def stop(process):
    """Ctrl-C the launch (it stops its children), then make sure the whole session is gone."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(TIMEOUT * 2)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(TIMEOUT)


@pytest.fixture(scope='module')
def scene(cli_env, launch):
    """Publish a one-link robot on the global /robot_description and a cube beside it."""
    env, _ = cli_env
    process, log_path = launch
    with Scene(int(os.environ['ROS_DOMAIN_ID']), node_namespace='/' + NAMESPACE) as scene:
        scene.send_static_tf('world', 'base')
        scene.send_static_tf('base', 'arm')
        scene.send_urdf(box_urdf('clibot', {'arm': [('box', (0.2, 0.2, 0.2), (0, 0, 0))]}))

        def launched_node_has_the_robot():
            assert process.poll() is None, 'ros2 launch exited:\n' + log_path.read_text()
            names = scene.message('names')
            return names is not None and 'arm' in names_from_json(names.data)[0].values()
        wait_until(launched_node_has_the_robot, STARTUP_TIMEOUT,
                   'the launched node to read /robot_description (remapped)')
        scene.wait_for_subscribers('obstacles')
        scene.send_markers([marker('cli', 0, frame_id='base', xyz=(0.18, 0.0, 0.0))])
        scene.wait_for_records(lambda records: any(r.is_measured for r in records),
                               STARTUP_TIMEOUT, 'the first distance')
        # The daemon discovers the graph on its own schedule; the CLI only sees what it knows.
        wait_until(lambda: NODE in ros2(env, 'node', 'list').stdout.split(), CLI_TIMEOUT,
                   'the ros2 daemon to list %s' % NODE, period=0.5)
        yield scene


def test_launched_node_is_the_one_in_our_namespace(cli_env, scene):
    env, _ = cli_env
    result = ros2(env, 'node', 'list')
    assert NODE in result.stdout.split(), result.stdout + result.stderr


def test_param_get_and_set(cli_env, scene):
    env, _ = cli_env
    result = ros2(env, 'param', 'get', NODE, 'fixed_frame')
    assert result.stdout.strip() == 'String value is: base', result.stdout + result.stderr
    result = ros2(env, 'param', 'set', NODE, 'rate_hz', '25.0')
    assert result.stdout.strip() == 'Set parameter successful', result.stdout + result.stderr
    result = ros2(env, 'param', 'get', NODE, 'rate_hz')
    assert result.stdout.strip() == 'Double value is: 25.0', result.stdout + result.stderr
    result = ros2(env, 'param', 'set', NODE, 'rate_hz', '-1.0')
    # The CLI prints the node's reason on stderr.
    assert result.stderr.startswith('Setting parameter failed'), result.stdout + result.stderr
    assert 'rate_hz' in result.stderr
    assert ros2(env, 'param', 'get', NODE, 'rate_hz').stdout.strip() == 'Double value is: 25.0'


def test_topic_echo_once_min_distance(cli_env, scene):
    env, _ = cli_env
    result = ros2(env, 'topic', 'echo', '--once', NODE + '/min_distance')
    assert result.returncode == 0, result.stdout + result.stderr
    # The message as YAML, possibly after a line such as "A message was lost!!!" (the CLI's
    # message-lost event report, followed by tab-indented counts).
    (value,) = re.findall(r'^data: (\S+)$', result.stdout, re.M)
    # The 0.2 m cube link and the 0.1 m cube obstacle 0.18 m apart: 3 cm.
    assert yaml.safe_load(value) == pytest.approx(0.03, abs=1e-9), result.stdout


def test_rviz_true_starts_rviz2_with_this_nodes_config(cli_env, scene):
    _, root = cli_env
    config_path = root / 'fake_rviz2' / 'rviz2_config.rviz'
    wait_until(config_path.exists, TIMEOUT, 'rviz2 to be started')
    arguments = (root / 'fake_rviz2' / 'rviz2_args').read_text().split()
    assert arguments[0] == '-d' and '__node:=rviz2' in arguments
    config = yaml.safe_load(config_path.read_text())
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'base'
    topics = {}  # the first display of each class
    for display in manager['Displays']:
        topics.setdefault(display['Class'].rsplit('/', 1)[-1],
                          display.get('Topic', {}).get('Value'))
    assert topics['PointCloud2'] == NODE + '/distances'
    assert topics['MarkerArray'] == NODE + '/markers'


def test_launch_stops_cleanly(launch, scene):
    process, log_path = launch
    stop(process)
    assert process.returncode == 0, log_path.read_text()[-4000:]
    assert 'process has died' not in log_path.read_text()
