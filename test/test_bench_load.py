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
The live-node load benchmark without a ROS graph: its rows, arguments and figure arithmetic.

Nothing here starts a process; the figures are computed from synthetic samples whose answers
are known, and the publishers' pre-serialized messages are read back with rclpy's own
deserializer.
"""

import math
import pathlib
import sys

import numpy
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# After the path set-up:
from bench import live_node, load_bench, load_publishers, node_bench  # noqa: E402, I100
from gjk_ros.ros.records import new_records, PairStatus  # noqa: E402


def test_arguments_default_to_every_row_and_quick_shortens_the_windows():
    rows, options, _, domain = load_bench.parse_args([])
    assert [row.key for row in rows] == list(load_bench.ROW_KEYS)
    assert (options.duration, options.warmup, domain) == (15.0, 5.0, None)
    rows, options, _, _ = load_bench.parse_args(['--quick', '--rows', 'tf1k', 'camera1'])
    # Rows run in the table's order, whatever the command line's.
    assert [row.key for row in rows] == ['camera1', 'tf1k']
    assert (options.duration, options.warmup) == (5.0, 2.0)
    _, options, _, domain = load_bench.parse_args(['--duration', '30', '--domain-id', '61'])
    assert (options.duration, domain) == (30.0, 61)


@pytest.mark.parametrize('argv', [['--rows', 'nonsense'], ['--duration', '0'],
                                  ['--warmup', '-1']])
def test_bad_arguments_are_refused(argv, capsys):
    with pytest.raises(SystemExit):
        load_bench.parse_args(argv)
    assert 'error' in capsys.readouterr().err


def test_rows_carry_the_issue_targets():
    rows = {row.key: row for row in load_bench.ROWS}
    assert len(rows) == len(load_bench.ROWS)
    known = {metric for metric, _, _, _ in load_bench.METRICS} | {'drops_reported'}
    for row in rows.values():
        assert row.targets, row.key
        assert {t.metric for t in row.targets} <= known, row.key
    camera = {t.metric: (t.bound, t.value) for t in rows['camera1'].targets}
    assert camera == {'clouds_used_pct': ('>=', 90.0), 'cloud_latency_p99_ms': ('<=', 50.0),
                      'valid_pct': ('>=', 100.0), 'output_hz': ('>=', 99.0)}
    assert rows['camera4'].cameras == 4
    assert (rows['obstacles1000'].obstacles, rows['obstacles1000'].rate_hz) == (1000, 100.0)
    assert (rows['obstacles3000'].obstacles, rows['obstacles3000'].rate_hz) == (3000, 30.0)
    assert rows['obstacles3000'].max_distance is None   # the parameter file's default
    assert (rows['tf1k'].tf_rate_hz, rows['tf1k'].frames) == (1000.0, 50)
    # Overload is ten times the TF row's transforms per second.
    overload = rows['overload']
    assert overload.tf_rate_hz * overload.frames == 10 * rows['tf1k'].tf_rate_hz * 50


def test_targets_judge_and_say_when_nothing_was_measured():
    at_most = load_bench.Target('x', '<=', 10.0, '')
    assert at_most.met(10.0) and not at_most.met(10.1)
    assert at_most.met(math.nan) is None and at_most.met(None) is None
    assert load_bench.verdict(at_most, math.nan) == 'not measured'
    at_least = load_bench.Target('x', '>=', 90.0, '')
    assert load_bench.verdict(at_least, 89.9) == 'not met'
    assert load_bench.format_value('drops_reported', 0.0) == 'not reported'
    assert load_bench.format_value('drops_reported', 1.0) == 'reported'


def test_node_parameters_name_each_camera_and_keep_the_defaults_otherwise():
    rows = {row.key: row for row in load_bench.ROWS}
    options = load_bench.Options(camera_qos='reliable')
    parameters = load_bench.node_parameters(rows['camera4'], options)
    assert parameters[0] == "observation_sources:=['camera0', 'camera1', 'camera2', 'camera3']"
    assert 'camera3.topic:=/camera3/depth/points' in parameters
    assert 'camera0.qos:=reliable' in parameters
    assert not any(p.startswith('max_distance') for p in parameters)
    assert load_bench.node_parameters(rows['tf1k'], options) == [
        "static_obstacle_namespaces:=['*']"]
    command = live_node.launch_node_command(100.0, ['a:=1'])
    after = command.index('--ros-args') + 1
    assert command[after:after + 2] == ['--params-file', live_node.PARAMS_FILE]
    assert command[-2:] == ['-p', 'a:=1']


def _records(obstacle_ids, ages):
    records = new_records(len(ages))
    records['obstacle_id'] = obstacle_ids
    records['age'] = ages
    return records


def test_camera_stamps_come_from_the_record_ages():
    # Cycle at 10 s; camera A's cloud 40 ms old (a link on a static chain shows it exactly,
    # a moving link's older chain shows 45 ms); camera B's cloud 10 ms old; one record with
    # missing data (inf) is ignored.
    cycle = 10_000_000_000
    records = _records([1, 1, 2, 2, 2], [0.040, 0.045, 0.010, 0.045, math.inf])
    stamp = cycle - 45_000_000     # the oldest datum of all
    found = load_bench.camera_stamps(records, stamp, {'A': 1, 'B': 2, 'C': 3})
    assert found == {'A': cycle - 40_000_000, 'B': cycle - 10_000_000}
    assert load_bench.camera_stamps(_records([1], [math.inf]), stamp, {'A': 1}) == {}


def test_matching_allows_the_tolerance_only():
    published = numpy.array([100, 2_000_000, 5_000_000], dtype=numpy.int64)
    stamps = numpy.array([100, 2_900_000, 3_100_000, -1, 9_000_000], dtype=numpy.int64)
    numpy.testing.assert_array_equal(load_bench.matched(stamps, published),
                                     [True, True, False, False, False])
    numpy.testing.assert_array_equal(load_bench._nearest(stamps[:2], published),
                                     [100, 2_000_000])


def _sample(received, stamp, statuses, cameras=None):
    counts = numpy.bincount(statuses, minlength=len(PairStatus))
    return (received, stamp, counts, cameras or {})


def test_summary_of_a_camera_row_with_known_answers():
    row = load_bench.Row('c', 'test', rate_hz=100.0, cameras=1)
    ms = 1_000_000
    start = 1_000 * ms
    clouds = numpy.arange(start, start + 1_000 * ms, 100 * ms)    # 10 clouds at 10 Hz
    tf = numpy.arange(start, start + 1_000 * ms, 10 * ms)
    # Outputs every 10 ms; each rests on the newest cloud but one (clouds[:-1] used, with a
    # latency of 100 ms + 5 ms); the first uses no cloud yet; one record of two is STALE.
    samples = []
    for index, received in enumerate(range(start + 5 * ms, start + 1_000 * ms, 10 * ms)):
        newest = (received - start) // (100 * ms)
        cameras = {} if newest == 0 else {'camera0': int(clouds[newest - 1])}
        samples.append(_sample(received, int(tf[index]), [PairStatus.VALID, PairStatus.STALE],
                               cameras))
    raw = {'samples': samples, 'wall_s': 1.0, 'window_ns': (start, start + 1_000 * ms),
           'stamps': {'arm': tf, 'camera0': clouds}, 'compute': [], 'drops': {},
           'cpu_s': {'node': 0.5}, 'load': (1.0, 2.0)}
    figures = load_bench.summarise(row, raw)
    assert figures['output_hz'] == 100.0
    assert figures['valid_pct'] == 50.0 and figures['stale_pct'] == 50.0
    assert figures['tf_latency_p50_ms'] == pytest.approx(5.0)
    # Clouds sent before the window's last 0.2 s: 8; used among them: 8 (clouds 0..7).
    assert figures['clouds_used_pct'] == pytest.approx(100.0)
    # Output i (i >= 10) rests on cloud i // 10 - 1: 105 to 195 ms old, evenly.
    assert figures['cloud_latency_p50_ms'] == pytest.approx(150.0)
    assert figures['cloud_latency_max_ms'] == pytest.approx(195.0)
    assert figures['cloud_matched_pct'] == pytest.approx(90.0)
    assert figures['cpu_node_pct'] == 50.0 and figures['drops_reported'] == 0.0
    assert math.isnan(figures['node_cycles_hz'])


def test_node_counters_are_weighted_by_cycles():
    periods = [{'cycles': '100', 'cycle_time_mean_ms': '2.0', 'compute_time_mean_ms': '1.0',
                'pairs': '10', 'piece_pairs': '20', 'computed_piece_pairs': '1000'},
               {'cycles': '50', 'cycle_time_mean_ms': '5.0', 'compute_time_mean_ms': '4.0',
                'pairs': '10', 'piece_pairs': '20', 'computed_piece_pairs': '500'},
               {'cycles': '0'}]
    figures = load_bench.node_figures({'compute': periods, 'cpu_s': {}, 'wall_s': 2.0,
                                       'drops': {'n: inputs: dropped_tf': '3'},
                                       'load': (0.0, 0.0)})
    assert figures['node_cycles_hz'] == 75.0
    assert figures['cycle_time_ms'] == pytest.approx(3.0)
    assert figures['computed_piece_pairs'] == 10.0
    assert figures['drops_reported'] == 1.0


def test_the_report_shows_each_target_beside_its_figure():
    row = load_bench.ROWS[0]
    figures = {'clouds_used_pct': 95.0, 'cloud_latency_p99_ms': 70.0, 'valid_pct': 100.0,
               'output_hz': math.nan}
    lines = load_bench.summary_table([(row, figures, {})])
    assert len(lines) == 2 + len(row.targets)
    assert '| 95.0 % | >= 90 % of clouds used | met |' in lines[2]
    assert '| 70.0 ms | cloud -> output p99 <= 50 ms | not met |' in lines[3]
    assert '| - | an output every cycle (100 Hz) | not measured |' in lines[5]
    options = load_bench.Options(duration=5.0, warmup=2.0)
    assert load_bench.command_line([row], options).endswith(
        '.venv/bin/python -m bench.load_bench --rows camera1 --duration 5 --warmup 2')


def test_tf_template_writes_stamps_and_poses_in_place():
    serialization = pytest.importorskip('rclpy.serialization')
    tf2_msgs = pytest.importorskip('tf2_msgs.msg')
    frames = [('world', 'a'), ('a', 'b'), ('b', 'flood_3')]
    template = load_publishers.TfTemplate(frames)
    poses = numpy.arange(21.0).reshape(3, 7) / 7.0
    for stamp_ns in (1_234_567_890_123_456_789, 5):
        message = serialization.deserialize_message(template.fill(stamp_ns, poses),
                                                    tf2_msgs.TFMessage)
        for (parent, child), transform, pose in zip(frames, message.transforms, poses):
            assert (transform.header.frame_id, transform.child_frame_id) == (parent, child)
            stamp = transform.header.stamp
            assert stamp.sec * 1_000_000_000 + stamp.nanosec == stamp_ns
            t, r = transform.transform.translation, transform.transform.rotation
            assert [t.x, t.y, t.z, r.x, r.y, r.z, r.w] == list(pose)


def test_joint_transforms_recompose_forward_kinematics():
    from gjk_ros.models.kinematics import parse_kinematics
    from gjk_ros.core.rigid import quaternion_matrix

    urdf, _ = load_publishers.robot_description()
    kinematics = parse_kinematics(urdf)
    motion = load_publishers.joint_motion(kinematics)
    q = load_publishers.configuration(motion, 1.3)
    assert numpy.all(q >= kinematics.lower) and numpy.all(q <= kinematics.upper)
    links = kinematics.forward(q)
    index = {link: i for i, link in enumerate(kinematics.links)}
    moving = [(index[j.parent], index[j.child]) for j in kinematics.joints if j.type != 'fixed']
    for (parent, child), row in zip(moving, load_publishers.joint_transforms(moving, links)):
        relative = numpy.eye(4)
        relative[:3, :3] = quaternion_matrix(*row[3:])
        relative[:3, 3] = row[:3]
        numpy.testing.assert_allclose(links[parent] @ relative, links[child], atol=1e-12)


def test_a_late_publisher_restarts_its_schedule_instead_of_bursting():
    now = load_publishers.time.monotonic()
    start, delay = load_publishers.pace(now, 10, 0.001)    # tick 10 of a 1 kHz loop begun now
    assert start == now and 0.0 < delay <= 0.010
    start, delay = load_publishers.pace(now - 1.0, 10, 0.001)     # 990 ms late
    assert delay == 0.0 and start == pytest.approx(now - 0.010, abs=0.01)


def test_node_bench_still_parses_its_arguments():
    options = node_bench.parse_args(['--rate-hz', '50'])
    assert (options.rate_hz, options.tf_rate_hz) == (50.0, 50.0)


def test_the_camera_cloud_renders_with_the_models_transforms():
    from bench.load_publishers import camera_of, render_cloud
    camera = camera_of(0, 1)
    points = render_cloud(camera)
    assert points.dtype == numpy.float32 and points.shape[1] == 3
    hits = numpy.isfinite(points).all(axis=1)
    assert 0 < hits.sum() < len(points), 'boxes and floor seen, one pixel in ten dropped'


def test_a_500_frame_tf_template_reads_back_every_stamp_and_pose():
    # The overload row's message: a marker's bytes also occur inside other fields.
    from bench.load_publishers import TfTemplate
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage
    frames = [('world' if i == 0 else 'f%d' % i, 'f%d' % (i + 1)) for i in range(500)]
    poses = numpy.random.default_rng(0).normal(size=(500, 7))
    message = deserialize_message(TfTemplate(frames).fill(123_456_789_012, poses), TFMessage)
    for transform, pose in zip(message.transforms, poses):
        assert (transform.header.stamp.sec, transform.header.stamp.nanosec) == (123, 456_789_012)
        t, q = transform.transform.translation, transform.transform.rotation
        assert [t.x, t.y, t.z, q.x, q.y, q.z, q.w] == pose.tolist()
