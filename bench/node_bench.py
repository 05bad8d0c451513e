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

r"""
Benchmark of the running ``gjk_distance`` node: 10 links x 50 obstacles at 100 Hz.

Three processes on one machine: the node (``rate_hz`` 100), a publisher (a 10-link arm as
URDF + TF at 100 Hz, 50 obstacles as markers) and this process, which subscribes to the node's
outputs. After a warm-up it measures, over a fixed window:

- compute time per cycle: the node's own figure from ``/diagnostics`` (the key that names the
  compute time), which times the geometry update of one cycle;
- latency: every ``~/distances`` message is stamped with the newest input it used, and the
  publisher stamps each ``/tf`` message with the wall time just before publishing it; so for
  each distances message whose stamp equals a published TF stamp, latency = receive time here
  minus that stamp (one clock, one machine). It includes the wait for the node's next timer
  tick (up to 1 / rate_hz), the compute, serialization and DDS transport, and this
  subscriber's own callback dispatch;
- CPU share of the node process: utime + stime from ``/proc/<pid>/stat`` over the window,
  divided by the window's wall time (100 % = one core busy).

Run from the repository root with the Makefile's environment::

    AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \\
        .venv/bin/python -m bench.node_bench

It writes ``bench/results/node_bench.md``, ``node_bench.csv`` (summary) and
``node_bench_samples.csv`` (one row per distances message). It is a benchmark, not a test: it
asserts nothing about speed.
"""

import argparse
import csv
import math
import os
import statistics
import sys
import tempfile
import time

from bench.live_node import Children, compute_values, machine, names_listed, percentile, \
    process_cpu_seconds, REPO_ROOT, RESULTS_DIR, revision, spin_for, spin_until
from gjk_ros.ros.inputs.tf_messages import decode_tf_message
import numpy

__all__ = ['bench_obstacles', 'bench_scene_config', 'bench_urdf', 'REPO_ROOT', 'RESULTS_DIR']
NUM_LINKS = 10
NUM_OBSTACLES = 50
LINK_LENGTH = 0.15
TARGET_COMPUTE_MS = 1.0
TARGET_LATENCY_P99_MS = 5.0
# The window starts once one diagnostics period (1 s) shows the node keeping up: at least this
# share of rate_hz cycles and no layout rebuild (it is done converting the obstacles).
STEADY_CYCLE_SHARE = 0.8
STEADY_TIMEOUT = 60.0
# Obstacles of the POINTS kind are hulls of this many random points (many vertices, so the
# hill-climbing support search matters).
HULL_POINTS = 40


# -- the benchmark scene ---------------------------------------------------------------------

def bench_urdf(num_links=NUM_LINKS):
    """
    Return the URDF of a chain of ``num_links`` links, one convex piece each.

    Joints alternate between z and y axes so the chain bends in 3D; the pieces cycle through
    box, cylinder and sphere.
    """
    shapes = ('<box size="0.08 0.08 {length}"/>',
              '<cylinder radius="0.045" length="{length}"/>',
              '<sphere radius="0.07"/>')
    parts = ['<?xml version="1.0"?>', '<robot name="bench_chain">', '<link name="world"/>']
    parent = 'world'
    for index in range(num_links):
        name = f'link{index}'
        shape = shapes[index % len(shapes)].format(length=LINK_LENGTH)
        parts.append(f'<link name="{name}"><collision><origin xyz="0 0 {LINK_LENGTH / 2}"/>'
                     f'<geometry>{shape}</geometry></collision></link>')
        axis = '0 0 1' if index % 2 == 0 else '0 1 0'
        offset = 0.05 if index == 0 else LINK_LENGTH
        parts.append(f'<joint name="joint{index}" type="revolute"><parent link="{parent}"/>'
                     f'<child link="{name}"/><origin xyz="0 0 {offset}"/><axis xyz="{axis}"/>'
                     '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>')
        parent = name
    parts.append('</robot>')
    return '\n'.join(parts)


def bench_obstacles(num_obstacles=NUM_OBSTACLES, seed=7):
    """
    Return ``num_obstacles`` ObstacleSpecs scattered around the chain (deterministic).

    They lie on a shell 0.25 to 1.0 m from the chain's axis, so some are touched or
    penetrated as the chain bends and most are not; kinds cycle through CUBE, SPHERE,
    CYLINDER and POINTS (hull of random points).
    """
    from visualization_msgs.msg import Marker

    from gjk_ros.demo.scene import FIXED_FRAME, ObstacleSpec

    rng = numpy.random.default_rng(seed)
    kinds = (Marker.CUBE, Marker.SPHERE, Marker.CYLINDER, Marker.POINTS)
    obstacles = []
    for index in range(num_obstacles):
        angle = rng.uniform(0.0, 2.0 * math.pi)
        radius = rng.uniform(0.25, 1.0)
        position = (radius * math.cos(angle), radius * math.sin(angle), rng.uniform(0.1, 1.6))
        size = tuple(rng.uniform(0.05, 0.2, 3))
        kind = kinds[index % len(kinds)]
        points = ()
        if kind in (Marker.SPHERE, Marker.CYLINDER):
            # Round, as obstacles usually are (an uneven SPHERE scale is an ellipsoid, which
            # the node approximates by a polytope of many vertices).
            size = (size[0], size[0], size[2])
        if kind == Marker.POINTS:
            points = tuple(map(tuple, rng.normal(0.0, 0.06, (HULL_POINTS, 3))))
            size = (0.01, 0.01, 0.01)
        obstacles.append(ObstacleSpec('bench', index, kind, FIXED_FRAME, position, size,
                                      points=points))
    return obstacles


def bench_scene_config(rate_hz, extra_frames=0):
    """
    Return the SceneConfig of the benchmark: chain, obstacles, sinusoidal joints.

    ``extra_frames`` more frames (a chain off ``world`` with no geometry) go out in the same
    TFMessage, as robot_state_publisher sends every frame of a bigger robot at once.
    """
    from gjk_ros.demo.scene import JointMotion, MovingFrame, SceneConfig

    motion = {f'joint{index}': JointMotion(offset=0.0, amplitude=0.4 + 0.05 * index,
                                           period=3.0 + 0.7 * index, phase=0.3 * index)
              for index in range(NUM_LINKS)}
    lift = numpy.eye(4)
    lift[2, 3] = 0.01
    frames = [MovingFrame('world' if index == 0 else f'extra{index - 1}', f'extra{index}',
                          lambda time: lift) for index in range(extra_frames)]
    return SceneConfig(urdf=bench_urdf(), joint_motion=motion, obstacles=bench_obstacles(),
                       moving_frames=frames, rate_hz=rate_hz)


def _acknowledging_publisher_class():
    import json

    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    from gjk_ros.demo.monitor import NODE_NAME
    from gjk_ros.demo.scene import ScenePublisher

    class AcknowledgingPublisher(ScenePublisher):
        """
        Republish the obstacles only until the node's ``~/names`` lists all of them.

        The node subscribes to markers with volatile QoS, so they are republished until it
        has them; after that they stay static, as the benchmark measures distance cycles, not
        marker conversion.
        """

        def __init__(self, config, **kwargs):
            super().__init__(config, **kwargs)
            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self._expected = len(config.obstacles)
            self.create_subscription(String, f'/{NODE_NAME}/names', self._on_names, latched)

        def _on_names(self, message):
            if len(json.loads(message.data).get('obstacles', [])) >= self._expected:
                self.stop_obstacle_republication()

    return AcknowledgingPublisher


def run_publisher(rate_hz, stamp_log_path, extra_frames=0):
    """Run the benchmark scene; write every /tf stamp (ns) to ``stamp_log_path``."""
    from gjk_ros.demo.scene import run_scene

    with open(stamp_log_path, 'w', buffering=1) as stamp_log:
        run_scene(bench_scene_config(rate_hz, extra_frames), args=[sys.argv[0]],
                  stamp_log=lambda stamp: stamp_log.write(f'{stamp}\n'),
                  node_class=_acknowledging_publisher_class())


# -- measurement ------------------------------------------------------------------------------

class Measurement:
    """Everything collected from the node's outputs (filled by subscription callbacks)."""

    def __init__(self, rate_hz):
        self.samples = []          # (stamp_ns, receive_ns, valid_pairs, width)
        self.tf_latency_ms = []    # /tf transport from the publisher to this process
        self.compute = []          # dicts of the node's compute diagnostics
        self.names = None
        self.recording = False
        self.last_width = 0
        self.steady = False
        self._rate_hz = rate_hz

    def on_cloud(self, message):
        """Record the receive time first, then what the message says."""
        received = time.time_ns()
        self.last_width = message.width
        if not self.recording:
            return
        from gjk_ros.ros.records import PairStatus, records_from_cloud

        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        points = records_from_cloud(message)
        valid = int(numpy.count_nonzero(points['status'] == PairStatus.VALID))
        self.samples.append((stamp, received, valid, message.width))

    def on_tf(self, data):
        """
        Record the transport latency of /tf itself, as a baseline.

        Read raw with the node's own decoder: converting every 50-frame message with rclpy
        would cost this harness a core at 1 kHz and starve the node it measures.
        """
        received = time.time_ns()
        if self.recording:
            entries = decode_tf_message(data)
            if entries:
                self.tf_latency_ms.append((received - entries[0][2]) / 1e6)

    def on_names(self, message):
        """Keep the latest names JSON."""
        self.names = message.data

    def on_diagnostics(self, message):
        """Keep the node's compute statistics of every period inside the window."""
        values = compute_values(message)
        if values is None:
            return
        if self.recording:
            self.compute.append(values)
        self.steady = (int(values.get('rebuilds', 1)) == 0 and int(values.get('cycles', 0))
                       >= STEADY_CYCLE_SHARE * self._rate_hz)


def _make_subscriber(measurement):
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.node import Node
    from rclpy.qos import (DurabilityPolicy, QoSProfile, qos_profile_sensor_data,
                           ReliabilityPolicy)
    from sensor_msgs.msg import PointCloud2
    from std_msgs.msg import String

    from tf2_msgs.msg import TFMessage

    from gjk_ros.demo.monitor import NODE_NAME
    from gjk_ros.ros.qos import TF_QOS

    node = Node('gjk_node_bench')
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(PointCloud2, f'/{NODE_NAME}/distances', measurement.on_cloud,
                             qos_profile_sensor_data)
    node.create_subscription(String, f'/{NODE_NAME}/names', measurement.on_names, latched)
    node.create_subscription(DiagnosticArray, '/diagnostics', measurement.on_diagnostics, 10)
    node.create_subscription(TFMessage, '/tf', measurement.on_tf, TF_QOS, raw=True)
    return node


def measure(options, work_dir):
    """
    Start the node and the publisher, measure, stop them.

    Returns
    -------
    dict
        Raw results: samples, compute figures, CPU seconds, window, published stamps.

    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from gjk_ros.demo.monitor import node_command

    stamp_log = os.path.join(work_dir, 'tf_stamps.txt')
    # The benchmark publishes its obstacles once: declare them static so that they do not go
    # STALE after obstacle_timeout (a live perception source would republish them).
    parameters = [f'max_distance:={options.max_distance}', 'publish_markers:=false',
                  "static_obstacle_namespaces:=['*']",
                  f'swept_distances:={str(options.swept).lower()}']
    children = Children(work_dir)
    measurement = Measurement(options.rate_hz)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    try:
        children.start('node', node_command(options.rate_hz, parameters))
        children.start('publisher', [
            sys.executable, '-m', 'bench.node_bench', '--publisher', '--tf-rate-hz',
            str(options.tf_rate_hz), '--extra-frames', str(options.extra_frames),
            '--stamp-log', stamp_log])
        executor = SingleThreadedExecutor()
        executor.add_node(_make_subscriber(measurement))
        spin_until(executor, lambda: names_listed(measurement.names, NUM_LINKS, NUM_OBSTACLES)
                   and measurement.last_width >= NUM_LINKS * NUM_OBSTACLES,
                   options.startup_timeout, children)
        steady_start = time.monotonic()
        try:
            spin_until(executor, lambda: measurement.steady, STEADY_TIMEOUT, children)
        except TimeoutError:
            pass  # Measured anyway; the report says the node never kept up.
        steady_wait = time.monotonic() - steady_start
        spin_for(executor, options.warmup, children)
        pids = dict(children.pids(), subscriber=os.getpid())
        load_start = os.getloadavg()[0]
        cpu_start = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
        wall_start = time.monotonic()
        measurement.recording = True
        spin_for(executor, options.duration, children)
        measurement.recording = False
        cpu_end = {name: process_cpu_seconds(pid) for name, pid in pids.items()}
        wall_end = time.monotonic()
        load_end = os.getloadavg()[0]
    finally:
        children.stop()
        rclpy.try_shutdown()
    with open(stamp_log) as stamps:
        published = {int(line) for line in stamps if line.strip()}
    return {'samples': measurement.samples, 'compute': measurement.compute,
            'tf_latency_ms': measurement.tf_latency_ms,
            'published': published,
            'cpu_seconds': {name: cpu_end[name] - cpu_start[name] for name in pids},
            'wall_seconds': wall_end - wall_start,
            'load_average': (load_start, load_end), 'steady_wait': steady_wait,
            'steady': measurement.steady}


# -- report -----------------------------------------------------------------------------------

def _compute_figures(periods):
    """
    Return the compute and cycle figures of the periods inside the window.

    (mean ms, p50 of period means, max ms, cache hit rate, mean GJK iterations, whole cycle
    mean ms).
    """
    nan = math.nan
    # The first period may have started before the window: only whole periods inside count.
    periods = [p for p in periods if int(p.get('cycles', 0)) > 0]
    if not periods:
        return nan, nan, nan, nan, nan, nan
    cycles = numpy.array([int(p['cycles']) for p in periods], dtype=float)

    def column(key):
        return numpy.array([float(p[key]) for p in periods])

    means = column('compute_time_mean_ms')
    return (float(numpy.average(means, weights=cycles)), float(numpy.median(means)),
            float(column('compute_time_max_ms').max()),
            float(numpy.average(column('cache_hit_rate'), weights=cycles)),
            float(numpy.average(column('mean_gjk_iterations'), weights=cycles)),
            float(numpy.average(column('cycle_time_mean_ms'), weights=cycles)))


def summarise(raw, options):
    """
    Reduce raw measurements to the reported figures.

    Returns
    -------
    list of (str, float, str, str)
        (metric, value, unit, target) rows; NaN where nothing was measured.

    """
    samples = raw['samples']
    latencies = [(received - stamp) / 1e6 for stamp, received, _, _ in samples
                 if stamp in raw['published']]
    mean_ms, median_ms, max_ms, hit_rate, iterations, cycle_ms = _compute_figures(
        raw['compute'])
    tf_latency = raw['tf_latency_ms']
    valid = [v for _, _, v, _ in samples]
    nan = math.nan
    return [
        ('compute per cycle, mean', mean_ms, 'ms', f'< {TARGET_COMPUTE_MS:g} ms'),
        ('whole cycle, mean', cycle_ms, 'ms', ''),
        ('compute per cycle, median of 1 s means', median_ms, 'ms', ''),
        ('compute per cycle, max', max_ms, 'ms', ''),
        ('cache hit rate (warm starts)', 100.0 * hit_rate, '%', ''),
        ('GJK iterations per pair, mean', iterations, '', ''),
        ('latency TF -> distances, p50', percentile(latencies, 0.5) if latencies else nan,
         'ms', ''),
        ('latency TF -> distances, p99', percentile(latencies, 0.99) if latencies else nan,
         'ms', f'< {TARGET_LATENCY_P99_MS:g} ms'),
        ('latency TF -> distances, max', max(latencies) if latencies else nan, 'ms', ''),
        ('baseline: /tf publisher -> this process, p50', percentile(tf_latency, 0.5)
         if tf_latency else nan, 'ms', ''),
        ('baseline: /tf publisher -> this process, p99', percentile(tf_latency, 0.99)
         if tf_latency else nan, 'ms', ''),
        ('node CPU share', 100.0 * raw['cpu_seconds']['node'] / raw['wall_seconds'],
         '% of one core', ''),
        ('publisher CPU share (harness)',
         100.0 * raw['cpu_seconds']['publisher'] / raw['wall_seconds'], '% of one core', ''),
        ('subscriber CPU share (harness)',
         100.0 * raw['cpu_seconds']['subscriber'] / raw['wall_seconds'], '% of one core', ''),
        ('distances messages per second', len(samples) / raw['wall_seconds'], 'Hz',
         f'{options.rate_hz:g} Hz'),
        ('messages matched to a TF stamp', 100.0 * len(latencies) / max(len(samples), 1), '%',
         ''),
        ('valid pairs per message, mean', statistics.fmean(valid) if valid else nan, 'pairs',
         f'{NUM_LINKS * NUM_OBSTACLES}'),
    ]


def write_results(rows, raw, options, results_dir=RESULTS_DIR):
    """Write node_bench.md, node_bench.csv and node_bench_samples.csv."""
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, 'node_bench.csv'), 'w', newline='') as summary:
        writer = csv.writer(summary)
        writer.writerow(['metric', 'value', 'unit', 'target'])
        writer.writerows([(m, f'{v:.4f}', u, t) for m, v, u, t in rows])
    with open(os.path.join(results_dir, 'node_bench_samples.csv'), 'w', newline='') as out:
        writer = csv.writer(out)
        writer.writerow(['stamp_ns', 'receive_ns', 'latency_ms', 'matched_tf_stamp',
                         'valid_pairs', 'pairs'])
        for stamp, received, valid, width in raw['samples']:
            writer.writerow([stamp, received, f'{(received - stamp) / 1e6:.4f}',
                             int(stamp in raw['published']), valid, width])
    with open(os.path.join(results_dir, 'node_bench.md'), 'w') as report:
        report.write(_markdown(rows, raw, options))


def _steady_text(raw, options):
    if not raw['steady']:
        return (f'The node never reached {STEADY_CYCLE_SHARE:.0%} of rate_hz within '
                f'{STEADY_TIMEOUT:g} s; measured anyway.')
    return ('The node reached steady state (a 1 s period of at least '
            f"{STEADY_CYCLE_SHARE:.0%} of rate_hz cycles, no rebuild) {raw['steady_wait']:.1f} s "
            'after it listed every body.')


def _markdown(rows, raw, options):
    table = '\n'.join(f'| {m} | {v:.3f} {u} | {t} |' for m, v, u, t in rows)
    return f"""# gjk_distance node benchmark

{NUM_LINKS} links x {NUM_OBSTACLES} obstacles ({NUM_LINKS * NUM_OBSTACLES} pairs), node
`rate_hz` {options.rate_hz:g}, TF published at {options.tf_rate_hz:g} Hz, `max_distance`
{options.max_distance}, window {options.duration:g} s after {options.warmup:g} s of warm-up.
Machine: {machine()}; 1-minute load average {raw['load_average'][0]:.2f} at the start of the
window and {raw['load_average'][1]:.2f} at its end (above 2 means other work competed for the
2 cores). Date: {time.strftime('%Y-%m-%d %H:%M')}, revision `{revision() or 'unknown'}`.
{_steady_text(raw, options)}

| metric | value | target |
| --- | --- | --- |
{table}

How each figure is measured:
- compute per cycle: the node's own figures in `/diagnostics` (entry `gjk_distance: compute`,
  keys `compute_time_mean_ms` and `compute_time_max_ms`, one per 1 s period, weighted by
  `cycles`). The node times the geometry update of a cycle (`PairSet.update` over every pair);
  composing poses from its TF tree and building and publishing the messages are not in it
  (they are in the CPU share).
- latency: receive time in the benchmark's subscriber minus the `~/distances` stamp, for the
  messages whose stamp equals the stamp of a published `/tf` message (the publisher stamps each
  TF message with the wall clock just before publishing it). It includes the wait for the
  node's next timer tick (0 to {1000.0 / options.rate_hz:.0f} ms: the node's timer and the TF
  publisher run with an arbitrary phase), the cycle itself (pose composition, compute, message
  building), serialization and DDS transport, and this subscriber's callback dispatch.
- baseline: the same measurement for `/tf` itself, received by this process straight from
  the publisher: what DDS transport and a Python callback cost on this machine right now.
- CPU share: utime + stime of the node process from `/proc/<pid>/stat` over the window,
  divided by the window's wall time (100 % = one core).

The machine has 2 cores shared by the node, the publisher, this subscriber (and anything else
running), so the figures include contention. Raw samples: `node_bench_samples.csv`.

Reproduce from the repository root:

```
AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \\
    .venv/bin/python -m bench.node_bench --duration {options.duration:g} \\
    --rate-hz {options.rate_hz:g} --tf-rate-hz {options.tf_rate_hz:g} \\
    --max-distance {options.max_distance}
```
"""


def parse_args(argv=None):
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--duration', type=float, default=20.0,
                        help='measurement window, s (default 20)')
    parser.add_argument('--warmup', type=float, default=5.0,
                        help='seconds of traffic before measuring (default 5)')
    parser.add_argument('--rate-hz', type=float, default=100.0,
                        help='node rate_hz (default 100)')
    parser.add_argument('--tf-rate-hz', type=float, default=None,
                        help='TF publication rate (default: the node rate); a faster TF '
                             'shortens the wait for the next tick that latency includes')
    parser.add_argument('--extra-frames', type=int, default=0,
                        help='more frames in every /tf message (a chain with no geometry, as '
                             "a bigger robot's robot_state_publisher sends), default 0")
    parser.add_argument('--max-distance', default='.inf',
                        help='node max_distance (default .inf: every pair is computed)')
    parser.add_argument('--swept', action='store_true',
                        help='node swept_distances:=true (the motion between two cycles too)')
    parser.add_argument('--startup-timeout', type=float, default=180.0,
                        help='seconds to wait for the node (cold numba compile included)')
    parser.add_argument('--results-dir', default=RESULTS_DIR, help='where to write results')
    parser.add_argument('--domain-id', type=int, default=None, help='ROS_DOMAIN_ID to use')
    parser.add_argument('--publisher', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--stamp-log', help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.tf_rate_hz is None:
        options.tf_rate_hz = options.rate_hz
    return options


def main(argv=None):
    """Run the benchmark (or, with --publisher, the benchmark's publisher process)."""
    options = parse_args(argv)
    if options.publisher:
        run_publisher(options.tf_rate_hz, options.stamp_log, options.extra_frames)
        return 0
    if options.domain_id is not None:
        os.environ['ROS_DOMAIN_ID'] = str(options.domain_id)
    with tempfile.TemporaryDirectory(prefix='gjk_node_bench_') as work_dir:
        raw = measure(options, work_dir)
    rows = summarise(raw, options)
    write_results(rows, raw, options, options.results_dir)
    for metric, value, unit, target in rows:
        print(f'{metric:<34} {value:10.3f} {unit:<14} {target}')
    print(f"results written to {os.path.join(options.results_dir, 'node_bench.md')}")
    return 0


if __name__ == '__main__':
    sys.exit(main())
