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
import os
import pathlib
import sys

import numpy
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# After the path set-up:
from bench import (live_node, load_bench, load_publishers, load_shards,  # noqa: E402, I100
                   node_bench)
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


# -- the shard rows ---------------------------------------------------------------------------

def test_the_shard_rows_grow_the_reference_load_and_judge_against_it():
    rows = {row.key: row for row in load_bench.ROWS}
    base = load_bench.SHARD_BASE_OBSTACLES
    assert rows['single_1x'].obstacles == base and not rows['single_1x'].shards
    assert rows['single_1.6x'].obstacles == rows['shards2'].obstacles == round(1.6 * base)
    assert rows['shards2'].shards == 2 and rows['camera4_shards'].shards == 2
    assert rows['camera4_shards'].cameras == 4 and not rows['camera4_shards'].safety_only
    # The compared rows read the same outputs: the safety path only.
    assert all(rows[key].safety_only for key in ('single_1x', 'single_1.6x', 'shards2'))
    # An instance is a core: the reference and each shard on one; the contrast on both.
    assert rows['single_1x'].one_core and rows['shards2'].one_core
    assert not rows['single_1.6x'].one_core and not rows['camera4_shards'].one_core
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) == 2:  # (one CPU: the row cannot run, and says so)
        document = load_shards.shards_document(rows['shards2'], lambda cameras: {})
        assert [entry['cpus'] for entry in document['shards'].values()] == [cpus[:1],
                                                                            cpus[1:]]
    document = load_shards.shards_document(rows['camera4_shards'], lambda cameras: {})
    assert all('cpus' not in entry for entry in document['shards'].values())
    references = {t.metric: t.reference for t in rows['shards2'].targets}
    assert references == {'safety_latency_p99_ms': 'single_1x', 'ready_pct': 'single_1x'}
    # --shard-obstacles scales all three; the other rows keep theirs.
    picked, options, _, _ = load_bench.parse_args(['--shard-obstacles', '250', '--rows',
                                                   'shards2', 'single_1x', 'obstacles1000'])
    assert [(row.key, row.obstacles) for row in picked] == [
        ('obstacles1000', 1000), ('single_1x', 250), ('shards2', 400)]
    assert load_bench.command_line(picked, options).endswith('--shard-obstacles 250')


@pytest.mark.parametrize('count', ['0', '10001', 'many'])
def test_a_bad_shard_obstacle_count_is_refused(count, capsys):
    with pytest.raises(SystemExit):
        load_bench.parse_args(['--shard-obstacles', count])
    assert 'shard-obstacles' in capsys.readouterr().err


def test_a_reference_target_takes_the_figure_of_its_row_in_the_same_run():
    row = {row.key: row for row in load_bench.ROWS}['shards2']
    measured = {'single_1x': {'safety_latency_p99_ms': 12.0, 'ready_pct': 100.0}}
    judged = {t.metric: t for t in load_bench.judged(row, measured).targets}
    latency = judged['safety_latency_p99_ms']
    assert latency.value == 12.0 and latency.text.endswith('(12.0)')
    assert load_bench.verdict(latency, 12.0) == 'met'
    assert load_bench.verdict(latency, 12.1) == 'not met'
    assert load_bench.verdict(judged['ready_pct'], 99.0) == 'not met'
    # The reference row not run: nothing to compare with.
    alone = load_bench.judged(row, {}).targets[0]
    assert load_bench.verdict(alone, 5.0) == 'not measured'


def _shard_row(**settings):
    return load_bench.Row('s', 'test', shards=2, **settings)


def test_the_obstacle_split_gives_every_marker_to_exactly_one_shard(tmp_path):
    import fnmatch
    from gjk_ros.ros.shards.plan import read_shards

    row = _shard_row(obstacles=37, safety_only=True)
    options = load_bench.Options()
    path = load_shards.write_shards_file(
        row, lambda cameras: load_bench.row_parameters(row, options, cameras), str(tmp_path))
    plans = read_shards(path)     # the launch file's own check of the file
    assert [plan.node for plan in plans] == load_shards.shard_nodes(2)
    names = [f'{spec.ns}/{spec.marker_id}' for spec in load_publishers.obstacle_specs(37)]

    def takes(plan, name):
        include = plan.parameters.get('obstacle_include', ['*'])
        exclude = plan.parameters.get('obstacle_exclude', [])
        return any(fnmatch.fnmatchcase(name, p) for p in include) and not any(
            fnmatch.fnmatchcase(name, p) for p in exclude)
    counts = [sum(takes(plan, name) for name in names) for plan in plans]
    assert counts == [19, 18]
    assert all(sum(takes(plan, name) for plan in plans) == 1 for name in names)
    for plan in plans:
        assert plan.parameters['rate_hz'] == 100.0
        assert plan.parameters['static_obstacle_namespaces'] == ['*']


def test_the_camera_split_gives_each_shard_two_cameras_and_their_obstacles(tmp_path):
    from gjk_ros.ros.shards.plan import read_shards

    row = _shard_row(cameras=4)
    options = load_bench.Options(camera_qos='sensor_data')
    path = load_shards.write_shards_file(
        row, lambda cameras: load_bench.row_parameters(row, options, cameras), str(tmp_path))
    first, second = (plan.parameters for plan in read_shards(path))
    assert first['observation_sources'] == ['camera0', 'camera1']
    assert second['observation_sources'] == ['camera2', 'camera3']
    assert first['camera1'] == {'type': 'pointcloud', 'topic': '/camera1/depth/points',
                                'qos': 'sensor_data', 'min_height': 0.02}
    assert first['obstacle_include'] == second['obstacle_exclude'] == ['camera0', 'camera1']
    assert 'camera2' in second and 'camera2' not in first
    texts = load_bench.shard_assignments(row, options)
    assert texts[0].startswith("s0: observation_sources:=['camera0', 'camera1']")
    with pytest.raises(ValueError, match='two shards'):
        load_shards.shards_document(load_bench.Row('s', 't', shards=3, obstacles=9), dict)


def test_the_shards_start_through_the_launch_file():
    command = load_shards.launch_command('/tmp/s.yaml', ros2='ros2')
    assert command[1:3] == ['launch', load_shards.LAUNCH_FILE]
    assert pathlib.Path(load_shards.LAUNCH_FILE).is_file()
    assert 'shards_file:=/tmp/s.yaml' in command and 'fixed_frame:=world' in command
    assert 'obstacles_topic:=/gjk_distance/obstacles' in command
    assert f'params_file:={live_node.PARAMS_FILE}' in command
    assert load_shards.shard_pids({'/s0/gjk_distance': 'vm:12', '/gjk_aggregator': 'vm:14'}) \
        == {'s0': 12, 'aggregator': 14}


def test_the_shard_rows_need_the_launch_stack_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, 'executable', str(tmp_path / 'python'))
    with pytest.raises(RuntimeError, match='launch stack'):
        load_shards.launch_command('/tmp/s.yaml')
    ros2 = tmp_path / 'ros2'
    ros2.write_text('#!/bin/sh\n')
    ros2.chmod(0o755)
    assert load_shards.launch_command('/tmp/s.yaml')[0] == str(ros2)


def test_an_aggregated_answer_rests_on_the_latest_records_of_every_shard():
    ms = 1_000_000
    shards = {'s0': [(10 * ms, 1, None, {'camera0': 100}), (20 * ms, 2, None, {'camera0': 200})],
              's1': [(15 * ms, 3, None, {'camera2': 300})]}
    safety = [(5 * ms, 0), (12 * ms, 1), (16 * ms, 1), (25 * ms, 2)]
    samples = load_shards.aggregate_samples(safety, shards)
    assert [s[3] for s in samples] == [{}, {'camera0': 100}, {'camera0': 100, 'camera2': 300},
                                       {'camera0': 200, 'camera2': 300}]
    assert [(s[0], s[1]) for s in samples] == safety
    # The first answer of each stamp: the later copies rest on the same datum.
    first = load_shards.first_arrivals(safety)
    assert first.tolist() == [[5 * ms, 0], [12 * ms, 1], [25 * ms, 2]]
    assert load_shards.first_arrivals([]).shape == (0, 2)


def test_summary_of_a_shard_row_reads_the_safety_path_and_each_shard():
    row = _shard_row(obstacles=10, safety_only=True)
    ms = 1_000_000
    tf = numpy.arange(0, 1_000 * ms, 10 * ms)
    # The aggregator answers twice a period: 2 ms after a stamp, then again 7 ms after it.
    safety = [(int(t) + 2 * ms, int(t)) for t in tf] + [(int(t) + 7 * ms, int(t)) for t in tf]
    period = {'cycles': '100', 'cycle_time_mean_ms': '4.0', 'compute_time_mean_ms': '3.0',
              'pairs': '55', 'piece_pairs': '60', 'computed_piece_pairs': '5000'}
    raw = {'samples': [], 'safety': sorted(safety), 'measured': [True] * 3 + [False],
           'wall_s': 1.0, 'window_ns': (0, 1_000 * ms), 'stamps': {'arm': tf},
           'compute': [], 'drops': {}, 'load': (1.0, 1.0),
           'shard_samples': {'s0': [], 's1': []},
           'shard_compute': {'s0': [period], 's1': [dict(period, cycles='90')]},
           # Each shard's own ~/safety: s0 1 ms after each stamp, s1 3 ms (and one not a TF).
           'shard_safety': {'s0': [(int(t) + ms, int(t)) for t in tf],
                            's1': [(int(t) + 3 * ms, int(t)) for t in tf] + [(5, 1)]},
           'cpu_s': {'s0': 0.5, 's1': 0.4, 'aggregator': 0.1, 'arm': 0.05}}
    figures = load_bench.summarise(row, raw)
    assert figures['output_hz'] == 200.0 and figures['ready_pct'] == 75.0
    assert math.isnan(figures['valid_pct'])     # no records read
    assert figures['safety_latency_p50_ms'] == pytest.approx(4.5)
    assert figures['safety_first_latency_p99_ms'] == pytest.approx(2.0)
    assert figures['s1_node_cycles_hz'] == 90.0 and figures['node_cycles_hz'] == 90.0
    assert figures['pairs'] == 110.0 and figures['s0_cycle_time_ms'] == 4.0
    assert figures['cpu_shards_pct'] == pytest.approx(100.0)
    assert figures['s0_safety_latency_p99_ms'] == pytest.approx(1.0)
    assert figures['s1_safety_latency_p99_ms'] == pytest.approx(3.0)
    raw.update(parameters=['s0: rate_hz:=100.0'], robot='r', steady=True, steady_wait_s=1.0)
    text = '\n'.join(load_bench.row_section(row, figures, raw))
    assert 'ros2 launch launch/shards.launch.py' in text and 'safety path' not in text
    assert ('| s1: cycles per second, cycle time, records, CPU, TF -> its own ~/safety p99 | '
            '90.0, 4.00, 55, 40, 3.0 |') in text
    assert "reads the aggregator's outputs ~/safety and ~/safety_detail only" in text


def _diagnostics(node, entry, **values):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    return DiagnosticArray(status=[DiagnosticStatus(name=f'{node}: {entry}', values=[
        KeyValue(key=key, value=str(value)) for key, value in values.items()])])


def test_the_recorder_keeps_each_shard_apart_and_says_what_start_up_waits_for():
    import json
    from std_msgs.msg import String

    row = _shard_row(obstacles=2, safety_only=True, rate_hz=10.0)
    recorder = load_bench.Recorder(row, load_shards.shard_nodes(2), load_shards.AGGREGATOR)
    assert load_bench.waiting_for(recorder, 3, 2).endswith(
        'listing 3 links and 2 bodies (heard: nothing)')
    recorder.on_names('/s0/gjk_distance', String(data=json.dumps({
        'links': {'0': 'a', '1': 'b', '2': 'c'}, 'obstacles': {'0': 'bench/0'}})))
    assert load_bench.waiting_for(recorder, 3, 2).endswith(
        '(heard: /s0/gjk_distance 3 links, 1 bodies)')
    recorder.on_names('/s1/gjk_distance', String(data=json.dumps({
        'links': {'0': 'a', '1': 'b', '2': 'c'}, 'obstacles': {'0': 'bench/1'}})))
    assert 'every shard and the aggregator' in load_bench.waiting_for(recorder, 3, 2)
    for node in ('s0/gjk_distance', 's1/gjk_distance'):
        recorder.on_diagnostics(_diagnostics(node, 'inputs', instance='vm:7'))
        recorder.on_diagnostics(_diagnostics(node, 'compute', cycles=10, rebuilds=0))
    assert recorder.steady and len(recorder.instances) == 2
    recorder.on_diagnostics(_diagnostics('gjk_aggregator', 'aggregate', instance='vm:9'))
    assert load_bench.waiting_for(recorder, 3, 2) == 'a measured answer on /gjk_aggregator'
    assert recorder.steady and set(recorder.compute) == set(recorder.nodes)
    recorder.recording = True
    recorder.on_diagnostics(_diagnostics('s1/gjk_distance', 'compute', cycles=5, rebuilds=0))
    assert not recorder.steady and recorder.compute['/s1/gjk_distance'][0]['cycles'] == '5'
    assert recorder.compute['/s0/gjk_distance'] == []
    # Another node's diagnostics (not a shard of this row) are ignored.
    recorder.on_diagnostics(_diagnostics('gjk_distance', 'compute', cycles=1, rebuilds=0))
    assert '/gjk_distance' not in recorder.compute


def test_the_arm_acknowledges_the_markers_on_every_shards_names():
    options = load_publishers.parse_args(['arm', '--stamp-log', 'x', '--names-topic', '/a/n',
                                          '--names-topic', '/b/n'])
    assert options.names_topic == ['/a/n', '/b/n']
    assert load_publishers.parse_args(['arm', '--stamp-log', 'x']).names_topic == []


def test_a_row_that_cannot_start_is_reported_and_the_others_still_run(monkeypatch, tmp_path):
    rows = {row.key: row for row in load_bench.ROWS}
    calls = []

    def measure(row, options, work_dir):
        calls.append(row.key)
        raise TimeoutError('timed out after 1 s waiting for the node: ~/names of /s0')
    monkeypatch.setattr(load_bench, 'measure', measure)
    done = load_bench.run([rows['single_1x'], rows['shards2']], load_bench.Options(),
                          progress=lambda text: None)
    assert calls == ['single_1x', 'shards2']
    assert [figures for _, figures, _ in done.results] == [{}, {}]
    path = load_bench.write_results(done.results, load_bench.Options(), done.context,
                                    str(tmp_path))
    text = pathlib.Path(path).read_text()
    assert 'Not measured: timed out after 1 s waiting for the node: ~/names of /s0' in text
    assert text.count('| not measured |') == 3     # shards2's two targets, single_1x's one
