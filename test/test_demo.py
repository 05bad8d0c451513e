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
``gjk-ros demo``: the scene's kinematics, the table, and the whole demo end to end.

The end-to-end test runs the demo (node + scene publisher + monitor, real ROS 2 processes) in a
subprocess, on the free ROS domain it picks by itself, waits for it to exit (bounded by a
timeout) and reads what it printed and the two pictures it wrote. The scene picture is rendered
from received ``~/markers``; its renderer is also tested on synthetic markers.
"""

import io
import math
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

from gjk_ros.cli import build_parser
from gjk_ros.demo.monitor import contact_label, DemoOptions, format_table, LatestCycle, \
    PairHistory, plot_history, watch
from gjk_ros.ros.records import DistanceRecord, PairStatus
import numpy
import pytest

DEMO_SECONDS = 8
# Generous: a cold start compiles the numba kernels before the first distances.
DEMO_TIMEOUT = 400
PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'
ROW = re.compile(r'^(\S+)\s+(\S+/\d+)\s+([+-]\d+\.\d+|nan)\s+([a-z]+)\s+(\S+)$')
SUMMARY_ROW = re.compile(r'^(\S+)\s+(\S+/\d+)\s+([+-]\d+\.\d+)\s+([+-]\d+\.\d+)\s+[\d.]+ %$')


def _expected_pairs():
    """Links with collision geometry in the demo URDF x the demo's obstacle names."""
    from gjk_ros.demo.scene import demo_scene_config

    config = demo_scene_config()
    robot = ElementTree.fromstring(config.urdf)
    links = [link.get('name') for link in robot.iter('link') if link.find('collision') is not None]
    return {(link, obstacle.name) for link in links for obstacle in config.obstacles}


@pytest.mark.ros
@pytest.mark.slow
def test_demo_prints_distances_and_writes_a_plot(ros_env, tmp_path):
    pytest.importorskip('tf2_msgs.msg')
    pytest.importorskip('matplotlib')
    plot = tmp_path / 'distances.png'
    result = subprocess.run(
        [sys.executable, '-m', 'gjk_ros.cli', 'demo', '--duration', str(DEMO_SECONDS),
         '--interval', '1', '--plot', str(plot), '--log-dir', str(tmp_path / 'logs')],
        env=ros_env, cwd=tmp_path, capture_output=True, text=True, timeout=DEMO_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    # Its own domain: neither this test's nor the test process's.
    domain = int(re.search(r'ROS_DOMAIN_ID=(\d+)', result.stdout).group(1))
    assert domain not in (0, int(ros_env['ROS_DOMAIN_ID']), int(os.environ['ROS_DOMAIN_ID']))

    lines = result.stdout.splitlines()
    rows = [ROW.match(line) for line in lines]
    values = {}
    for row in filter(None, rows):
        if row.group(3) != 'nan':
            values.setdefault((row.group(1), row.group(2)), []).append(float(row.group(3)))
    expected = _expected_pairs()
    assert set(values) == expected, result.stdout
    assert all(math.isfinite(v) for series in values.values() for v in series)
    # Several refreshes, so the table really was updated while the scene moved.
    assert min(len(series) for series in values.values()) >= DEMO_SECONDS // 2

    summary = {(m.group(1), m.group(2)): (float(m.group(3)), float(m.group(4)))
               for m in filter(None, (SUMMARY_ROW.match(line) for line in lines))}
    assert set(summary) == expected
    # The scene is built so that within any 8 s some pair penetrates: the node must report
    # a negative MTD for it, and a positive distance for pairs that are apart.
    assert min(low for low, _ in summary.values()) < 0.0
    assert all(high > 0.0 for _, high in summary.values())

    # The node sweeps (the demo's settings): the summary counts the pass-throughs it saw.
    assert re.search(r'^swept contact while both samples were positive .*: \d+ cycle\(s\)$',
                     result.stdout, re.M), result.stdout
    assert f'plot written to {plot}' in result.stdout
    _assert_valid_png(plot)
    scene = re.search(r'scene \((\d+) markers\) written to (\S+)$', result.stdout, re.M)
    assert scene and scene.group(2) == str(tmp_path / 'gjk_demo_scene.png'), result.stdout
    assert int(scene.group(1)) >= 1  # at least the witness segments
    _assert_valid_png(tmp_path / 'gjk_demo_scene.png')


@pytest.mark.ros
@pytest.mark.slow
def test_demo_with_every_option_at_a_value_a_user_picks(ros_env, ros_domain_id, tmp_path):
    """Obstacles as MoveIt collision objects, a domain of the user's, tables every 12 s."""
    pytest.importorskip('moveit_msgs.msg')
    pytest.importorskip('matplotlib')
    plot, scene_plot = tmp_path / 'plots' / 'distances.png', tmp_path / 'pictures' / 'scene.png'
    plot.parent.mkdir()
    scene_plot.parent.mkdir()
    result = subprocess.run(
        [sys.executable, '-m', 'gjk_ros.cli', 'demo', '--duration', '14', '--interval', '12',
         '--rate-hz', '20', '--domain-id', str(ros_domain_id), '--startup-timeout', '300',
         '--plot', str(plot), '--scene-plot', str(scene_plot), '--log-dir',
         str(tmp_path / 'logs'), '--collision-objects'],
        env=ros_env, cwd=tmp_path, capture_output=True, text=True, timeout=DEMO_TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'ROS_DOMAIN_ID={ros_domain_id},' in result.stdout
    # A table at the start, one 12 s of data later, the last at 14 s: an interval longer than
    # the demo's data timeout is a slow refresh, not a stall.
    times = [float(t) for t in re.findall(r'^t = *([\d.]+) s', result.stdout, re.M)]
    assert len(times) == 3 and times[1] >= 12.0 and times[2] >= 14.0, result.stdout
    summary = {(m.group(1), m.group(2)) for m in filter(None, (
        SUMMARY_ROW.match(line) for line in result.stdout.splitlines()))}
    assert summary == _expected_pairs(), result.stdout
    _assert_valid_png(plot)
    _assert_valid_png(scene_plot)
    assert f'written to {scene_plot}' in result.stdout
    scene_log = (tmp_path / 'logs' / 'scene.log').read_text()
    assert 'at 20 Hz' in scene_log
    assert (tmp_path / 'logs' / 'node.log').stat().st_size > 0


def _assert_valid_png(path):
    from matplotlib import pyplot

    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = pyplot.imread(os.fspath(path))
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200
    assert image[..., :3].std() > 0.05  # lines on a background, not a blank canvas


def _record(link, obstacle, distance, status=PairStatus.VALID, ids=(0, 0)):
    nan3 = numpy.full(3, numpy.nan)
    return DistanceRecord(link, obstacle, ids[0], ids[1], distance, status, nan3, nan3, nan3,
                          0.0)


def test_table_shows_one_row_per_pair_in_node_order_and_flags_contact():
    records = [_record('b_link', 'o/1', -0.02, ids=(1, 1)),
               _record('b_link', 'o/0', 0.001, ids=(1, 0)),
               _record('a_link', 'o/0', math.nan, PairStatus.STALE, ids=(0, 0)),
               _record('a_link', 'o/1', 0.3, ids=(0, 1))]
    lines = format_table(records, elapsed=1.5)
    rows = [ROW.match(line).groups() for line in lines[2:]]
    assert [(r[0], r[1]) for r in rows] == [('a_link', 'o/0'), ('a_link', 'o/1'),
                                            ('b_link', 'o/0'), ('b_link', 'o/1')]
    assert [r[2] for r in rows] == ['nan', '+0.3000', '+0.0010', '-0.0200']
    assert [r[3] for r in rows] == ['stale', 'valid', 'valid', 'valid']
    assert [r[4] for r in rows] == ['-', 'clear', 'touching', 'PENETRATING']
    assert 'closest -0.0200 m (b_link / o/1)' in lines[0]


def test_contact_label_never_reads_a_distance_from_an_unmeasured_record():
    for status in (PairStatus.STALE, PairStatus.INVALID, PairStatus.BEYOND):
        assert contact_label(_record('l', 'o/0', -1.0, status)) == '-'
    assert contact_label(_record('l', 'o/0', 0.01)) == 'near'


def test_plot_of_a_history_is_a_png(tmp_path):
    pytest.importorskip('matplotlib')
    history = PairHistory()
    for step in range(50):
        history.add(0.1 * step, [_record('l', 'o/0', math.sin(0.2 * step), ids=(0, 0)),
                                 _record('l', 'o/1', math.nan, PairStatus.STALE, ids=(0, 1))])
    assert history.pairs == [('l', 'o/0'), ('l', 'o/1')]
    path = tmp_path / 'history.png'
    plot_history(history, str(path))
    _assert_valid_png(path)


@pytest.mark.ros
def test_scene_quaternions_match_their_rotation_matrices():
    pytest.importorskip('tf2_msgs.msg')
    from gjk_ros.models import rpy_to_matrix
    from gjk_ros.models.transforms import quaternion_to_matrix
    from gjk_ros.demo.scene import matrix_to_quaternion

    rng = numpy.random.default_rng(3)
    # Include the half turns, where the quaternion's w is 0 and a naive formula divides by it.
    angles = list(rng.uniform(-math.pi, math.pi, (200, 3))) + [
        (math.pi, 0.0, 0.0), (0.0, math.pi, 0.0), (0.0, 0.0, math.pi), (math.pi, 0.0, 0.5)]
    for rpy in angles:
        rotation = rpy_to_matrix(rpy)
        quaternion = matrix_to_quaternion(rotation)
        numpy.testing.assert_allclose(quaternion_to_matrix(quaternion), rotation, atol=1e-12)


class ScriptedExecutor:
    """
    Stands in for the monitor's executor: every spin delivers the next cycle of a scene.

    Each spin takes ``pause`` seconds of real time and advances the data clock by ``step``
    seconds, until ``stall_at``, from where the node keeps publishing cycles with the same
    (old) stamp, as it does when the scene stops.
    """

    def __init__(self, cycle, step=0.5, stall_at=math.inf, pause=0.01, silent=False):
        self.cycle, self.step, self.stall_at, self.pause = cycle, step, stall_at, pause
        self.silent = silent
        self.stamp = 1000.0

    def spin_once(self, timeout_sec):
        time.sleep(self.pause)
        if self.silent:
            return
        self.cycle.add([_record('l', 'o/0', 0.1)], self.stamp, time.monotonic())
        if self.stamp - 1000.0 < self.stall_at:
            self.stamp += self.step


class RecordingPrinter:
    """A TablePrinter that keeps the data time of every table it was shown."""

    default_interval = 2.0

    def __init__(self):
        self.times = []

    def show(self, lines):
        self.times.append(float(re.match(r't = *([\d.]+) s', lines[0]).group(1)))


class ExitedProcess:
    """A child process that has exited."""

    returncode = 3

    def poll(self):
        return self.returncode


def _watch(tmp_path, executor_options, children=None, data_timeout=0.2, **options):
    cycle, out, printer = LatestCycle(time.monotonic()), io.StringIO(), RecordingPrinter()
    logs = {'node': tmp_path / 'node.log'}
    logs['node'].write_text('last node line\n')
    status = watch(ScriptedExecutor(cycle, **executor_options), cycle, printer,
                   DemoOptions(**options), children or {}, logs, out, data_timeout=data_timeout)
    return status, printer.times, out.getvalue()


def test_a_table_interval_longer_than_the_data_timeout_is_only_a_slow_refresh(tmp_path):
    # 15 s of data take 0.3 s here, longer than the 0.2 s data timeout: the wait for the next
    # table is no stall while cycles keep coming (gjk-ros demo --interval 15).
    status, times, out = _watch(tmp_path, {}, interval=15.0, duration=20.0)
    assert status == 0, out
    assert [round(t) for t in times] == [0, 15, 20]  # the first, one interval on, the end


def test_the_last_table_is_shown_at_the_duration(tmp_path):
    status, times, _ = _watch(tmp_path, {'step': 1.0}, interval=3.0, duration=7.5)
    assert status == 0
    assert times == [0.0, 3.0, 6.0, 8.0]


def test_distances_that_stop_moving_end_the_run_with_the_node_log(tmp_path):
    status, times, out = _watch(tmp_path, {'stall_at': 5.0}, interval=2.0, duration=20.0)
    assert status == 1
    assert times == [0.0, 2.0, 4.0]
    assert 'no new distances from /gjk_distance within 0.2 s' in out
    assert 'last node line' in out


def test_no_first_distances_within_the_startup_timeout(tmp_path):
    started = time.monotonic()
    status, times, out = _watch(tmp_path, {'silent': True}, startup_timeout=0.3)
    assert status == 1 and times == []
    assert 'no new distances from /gjk_distance within 0.3 s' in out
    assert time.monotonic() - started >= 0.3


def test_a_child_that_exits_ends_the_run_naming_it(tmp_path):
    status, _, out = _watch(tmp_path, {'silent': True}, children={'node': ExitedProcess()})
    assert status == 1
    assert 'the node process exited with code 3' in out and 'last node line' in out


@pytest.mark.parametrize('argv', [
    ['--duration', '0'], ['--duration', 'inf'], ['--interval', '-1'], ['--interval', 'nan'],
    ['--startup-timeout', '0'], ['--rate-hz', '0'], ['--rate-hz', '5000'],
    ['--domain-id', '-1'], ['--domain-id', '233'], ['--domain-id', 'seven'],
])
def test_demo_options_out_of_range_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(['demo'] + argv)
    assert exit_info.value.code == 2
    assert f'argument {argv[0]}' in capsys.readouterr().err


def test_demo_options_at_values_a_user_picks():
    options = build_parser().parse_args([
        'demo', '--duration', '60', '--interval', '15', '--plot', 'run/d.png',
        '--scene-plot', 'run/s.png', '--domain-id', '42', '--rate-hz', '100',
        '--startup-timeout', '300', '--log-dir', 'run/logs', '--collision-objects'])
    assert (options.duration, options.interval, options.domain_id, options.rate_hz,
            options.startup_timeout) == (60.0, 15.0, 42, 100.0, 300.0)
    assert (options.plot, options.scene_plot, options.log_dir) == ('run/d.png', 'run/s.png',
                                                                   'run/logs')
    assert options.collision_objects


def test_collision_objects_without_moveit_msgs_say_what_is_missing(monkeypatch):
    import importlib.util

    from gjk_ros.demo import monitor

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *args: None
                        if name == 'moveit_msgs' else real_find_spec(name, *args))
    out = io.StringIO()
    assert monitor.run_demo(DemoOptions(collision_objects=True), out) == 1
    assert '--collision-objects needs the moveit_msgs messages' in out.getvalue()
