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

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

from gjk_ros.demo.monitor import contact_label, format_table, PairHistory, plot_history
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

    assert f'plot written to {plot}' in result.stdout
    _assert_valid_png(plot)
    scene = re.search(r'scene \((\d+) markers\) written to (\S+)$', result.stdout, re.M)
    assert scene and scene.group(2) == str(tmp_path / 'gjk_demo_scene.png'), result.stdout
    assert int(scene.group(1)) >= 1  # at least the witness segments
    _assert_valid_png(tmp_path / 'gjk_demo_scene.png')


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
    from gjk_ros.demo.scene import matrix_to_quaternion, rpy_matrix

    rng = numpy.random.default_rng(3)
    # Include the half turns, where the quaternion's w is 0 and a naive formula divides by it.
    angles = list(rng.uniform(-math.pi, math.pi, (200, 3))) + [
        (math.pi, 0.0, 0.0), (0.0, math.pi, 0.0), (0.0, 0.0, math.pi), (math.pi, 0.0, 0.5)]
    for rpy in angles:
        rotation = rpy_matrix(*rpy)
        numpy.testing.assert_allclose(rotation, rpy_to_matrix(rpy), atol=1e-12)
        quaternion = matrix_to_quaternion(rotation)
        numpy.testing.assert_allclose(quaternion_to_matrix(quaternion), rotation, atol=1e-12)
