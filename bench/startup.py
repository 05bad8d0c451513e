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
Start-up time of the node: from starting ``gjk_distance_node`` to its first ``~/distances``.

The node_bench scene (10 links, 50 obstacles, TF at 100 Hz) is running before the node starts,
so the figure is the node's own start: interpreter, imports, loading (or compiling) the core's
kernels, building the bodies and the first cycle. Run from the repository root::

    AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \\
        .venv/bin/python -m bench.startup --runs 3

It prints one line per run and the median; it asserts nothing.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

from bench.node_bench import REPO_ROOT

PUBLISHER_SETTLE_S = 2.0
# The obstacles are republished this often (markers are volatile), so that a node started at
# any time has them within this delay: the figure is the node's start, not the scene's period.
OBSTACLE_PERIOD_S = 0.2


def run_publisher():
    """Run node_bench's scene, republishing the obstacles every OBSTACLE_PERIOD_S."""
    import dataclasses

    from bench.node_bench import bench_scene_config
    from gjk_ros.demo.scene import run_scene

    config = dataclasses.replace(bench_scene_config(100.0), obstacle_period=OBSTACLE_PERIOD_S)
    run_scene(config, args=[sys.argv[0]])


def _first_distances(executor, node_process, timeout):
    """Spin until the first ~/distances message with rows; return its arrival time."""
    arrived = []
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import PointCloud2

    from gjk_ros.demo.monitor import NODE_NAME

    node = executor.get_nodes()[0]
    subscription = node.create_subscription(
        PointCloud2, f'/{NODE_NAME}/distances',
        lambda message: arrived.append(time.monotonic()) if message.width else None,
        qos_profile_sensor_data)
    end = time.monotonic() + timeout
    try:
        while not arrived:
            if node_process.poll() is not None or time.monotonic() > end:
                raise RuntimeError('the node exited or timed out before its first distances')
            executor.spin_once(timeout_sec=0.01)
    finally:
        node.destroy_subscription(subscription)
    return arrived[0]


def _phases(log, started_wall):
    """Return when the node logged its start and its geometry ready, from its log stamps."""
    marks = {'constructed': 'computing distances in', 'geometry ready': 'being built resolved'}
    found = {}
    with open(log, encoding='utf-8', errors='replace') as stream:
        for line in stream:
            for name, text in marks.items():
                if text in line and name not in found:
                    found[name] = float(line.split('[')[2].split(']')[0]) - started_wall
    return ', '.join(f'{name} at {value:.2f} s' for name, value in found.items())


def measure(runs, timeout):
    """Start the scene once and the node ``runs`` times; return the start-up seconds."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.signals import SignalHandlerOptions

    from gjk_ros.demo.monitor import node_command, start_child, stop_child

    work_dir = tempfile.mkdtemp(prefix='gjk_startup_')
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    publisher = start_child(
        [sys.executable, '-m', 'bench.startup', '--publisher'],
        os.path.join(work_dir, 'publisher.log'),
        cwd=REPO_ROOT)
    seconds = []
    try:
        executor = SingleThreadedExecutor()
        executor.add_node(Node('gjk_startup_bench'))
        time.sleep(PUBLISHER_SETTLE_S)
        for run in range(runs):
            log = os.path.join(work_dir, f'node{run}.log')
            started, started_wall = time.monotonic(), time.time()
            node = start_child(node_command(100.0, ['publish_markers:=false']), log)
            try:
                seconds.append(_first_distances(executor, node, timeout) - started)
            finally:
                stop_child(node)
            print(f'run {run}: first ~/distances {seconds[-1]:.2f} s after the node started '
                  f'({_phases(log, started_wall)})')
    finally:
        stop_child(publisher)
        rclpy.try_shutdown()
    return seconds


def main(argv=None):
    """Measure and print the node's start-up time."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=300.0)
    parser.add_argument('--publisher', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.publisher:
        return run_publisher()
    seconds = measure(args.runs, args.timeout)
    print(f'median {statistics.median(seconds):.2f} s over {len(seconds)} runs '
          f'(min {min(seconds):.2f}, max {max(seconds):.2f})')


if __name__ == '__main__':
    main()
