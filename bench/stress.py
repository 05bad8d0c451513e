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
Stress benchmark of the running node against heavy and hostile input.

The node (``rate_hz`` 30) serves one arm link and one healthy obstacle; this process feeds it
one input at a time, at sizes that would stall a node building geometry on its own executor
thread (the ingestion worker exists for them), and measures:

- longest output gap: the longest time between two ``~/distances`` messages from the moment
  the input is sent until the outcome is settled (target: no more than 2 cycles, 67 ms);
- settle time: until the offending body is rejected or built (its status, or the rejection
  in the node's log), or the parameter answered;
- peak memory: the node's and its worker's largest resident set (``VmHWM``), and the node's
  resident set after each input;
- churn: DELETEALL + 20 new ids per message at 30 Hz for ``--churn-seconds``: the node's RSS
  at the start and the end, and the size of ``~/names``.

Run from the repository root with the Makefile's environment::

    AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \
        .venv/bin/python -m bench.stress [--churn-seconds 600]

It writes ``bench/results/stress.md``. A benchmark, not a test: it asserts nothing.
"""

import argparse
import json
import math
import os
import platform
import struct
import sys
import tempfile
import time

import numpy

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(REPO_ROOT, 'bench', 'results')
RATE_HZ = 30.0
URDF = ('<robot name="stress"><link name="arm"><collision><geometry><box size="0.2 0.2 0.2"/>'
        '</geometry></collision></link></robot>')
ALIAS_BOMB = '\n'.join(['a: &a ["x","x","x","x","x","x","x","x","x"]'] + [
    '%s: &%s [%s]' % (name, name, ','.join(['*' + previous] * 9))
    for previous, name in zip('abcdefgh', 'bcdefghi')])


def memory_kib(pid, field):
    """``VmRSS`` or ``VmHWM`` of a process, KiB (0 if it is gone)."""
    try:
        with open('/proc/%d/status' % pid) as status:
            for line in status:
                if line.startswith(field + ':'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children_of(pid):
    """Pids of the direct children of a process (the geometry worker)."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry) as stat:
                    if int(stat.read().rsplit(')', 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def binary_stl(path, triangles):
    """Write a binary STL of ``triangles`` random triangles (about 50 bytes each)."""
    rng = numpy.random.default_rng(5)
    records = numpy.zeros(triangles, dtype=[('normal', '<f4', 3), ('vertices', '<f4', (3, 3)),
                                            ('attribute', '<u2')])
    records['vertices'] = rng.normal(size=(triangles, 3, 3)) * 0.1 + 0.8
    with open(path, 'wb') as stl:
        stl.write(b'\0' * 80 + struct.pack('<I', triangles))
        stl.write(records.tobytes())


class Harness:
    """The node process and an rclpy node here that feeds it and listens to it."""

    def __init__(self, work_dir):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import PointCloud2
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage
        from visualization_msgs.msg import MarkerArray

        from gjk_ros.demo.monitor import node_command, start_child

        self.work_dir = work_dir
        parameters = ["static_obstacle_namespaces:=['healthy']", 'max_distance:=5.0',
                      'publish_markers:=false']
        self.log = os.path.join(work_dir, 'node.log')
        self.process = start_child(node_command(RATE_HZ, parameters), self.log)
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        self.rclpy = rclpy
        self.node = rclpy.create_node('gjk_stress')
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        stream = QoSProfile(depth=2000, reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.VOLATILE)
        static = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.arrivals, self.latest_cloud, self.names = [], None, None
        self.node.create_subscription(PointCloud2, '/gjk_distance/distances', self._on_cloud,
                                      stream)
        self.node.create_subscription(String, '/gjk_distance/names', self._on_names, latched)
        self.urdf = self.node.create_publisher(String, '/robot_description', latched)
        self.tf_static = self.node.create_publisher(TFMessage, '/tf_static', static)
        self.markers = self.node.create_publisher(MarkerArray, '/gjk_distance/obstacles',
                                                  stream)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def _on_cloud(self, message):
        # The node's own cycle time (its clock; the stamp is "now" with static TF only): gaps
        # measured from it are the node's, not this process's (which blocks while it
        # serialises a 100,000-marker message).
        stamp = message.header.stamp
        self.arrivals.append(stamp.sec + stamp.nanosec * 1e-9)
        self.latest_cloud = message

    def _on_names(self, message):
        self.names = message.data

    def spin_until(self, condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)
            if condition():
                return True
        return False

    def spin_for(self, seconds):
        self.spin_until(lambda: False, seconds)

    def status_of(self, name):
        """Status of the arm-``name`` record in the latest cloud, or None."""
        from gjk_ros.ros import read_distances
        if self.latest_cloud is None or self.names is None:
            return None
        for record in read_distances(self.latest_cloud, self.names):
            if record.obstacle == name:
                return record.status
        return None

    def start_scene(self):
        from geometry_msgs.msg import TransformStamped
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage
        transform = TransformStamped()
        transform.header.frame_id, transform.child_frame_id = 'world', 'arm'
        transform.transform.rotation.w = 1.0
        self.tf_static.publish(TFMessage(transforms=[transform]))
        self.urdf.publish(String(data=URDF))
        self.spin_until(lambda: self.markers.get_subscription_count() > 0, 180.0)
        self.send([marker('healthy', 0, xyz=(0.0, 0.6, 0.0))])
        from gjk_ros.ros import PairStatus
        if not self.spin_until(lambda: self.status_of('healthy/0') == PairStatus.VALID, 180.0):
            raise RuntimeError('the node never measured the healthy pair; see %s' % self.log)

    def send(self, markers):
        from visualization_msgs.msg import MarkerArray
        self.markers.publish(MarkerArray(markers=markers))

    def set_parameter(self, name, value):
        from rclpy.parameter import Parameter
        from rclpy.parameter_client import AsyncParameterClient
        client = AsyncParameterClient(self.node, '/gjk_distance')
        self.spin_until(client.services_are_ready, 10.0)
        future = client.set_parameters([Parameter(name, value=value)])
        self.spin_until(future.done, 300.0)
        return future.result().results[0] if future.done() else None

    def logged(self, fragment):
        """Whether the node's log has a line with ``fragment`` (a rejection, by name)."""
        with open(self.log, errors='replace') as log:
            return fragment in log.read()

    def close(self):
        from gjk_ros.demo.monitor import stop_child
        stop_child(self.process)
        self.node.destroy_node()
        self.rclpy.try_shutdown()


def marker(ns, marker_id, marker_type=None, xyz=(0.0, 0.0, 0.0), points=None, action=0,
           mesh_resource=''):
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker
    result = Marker(ns=ns, id=marker_id, type=Marker.CUBE if marker_type is None else marker_type,
                    action=action, mesh_resource=mesh_resource)
    result.header.frame_id = 'world'
    result.pose.position.x, result.pose.position.y, result.pose.position.z = xyz
    result.pose.orientation.w = 1.0
    result.scale.x = result.scale.y = result.scale.z = 0.1 if points is None else 1.0
    if points is not None:
        result.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in points]
    return result


def triangle_points(count):
    angles = numpy.linspace(0.0, 40.0 * math.pi, count)
    return numpy.stack([0.8 + 0.1 * numpy.cos(angles), 0.1 * numpy.sin(angles),
                        numpy.arange(count) % 3 * 0.01], axis=1)


def measure_input(harness, label, send, settled, timeout=600.0):
    """Send one input; the longest output gap until settled, the settle time, memory."""
    harness.spin_for(1.0)
    start_index = len(harness.arrivals)
    started = time.monotonic()
    answer = send()
    done = harness.spin_until(lambda: settled(answer), timeout)
    settle = time.monotonic() - started
    harness.spin_for(2.0)
    times = harness.arrivals[max(start_index - 1, 0):]
    gaps = numpy.diff(times) if len(times) > 1 else numpy.array([math.inf])
    worker_peak = max([memory_kib(pid, 'VmHWM') for pid in children_of(harness.process.pid)]
                      or [0])
    return {'input': label, 'settled': done, 'settle_s': settle,
            'longest_gap_ms': 1e3 * float(gaps.max()),
            'node_rss_mib': memory_kib(harness.process.pid, 'VmRSS') / 1024.0,
            'worker_peak_mib': worker_peak / 1024.0}


def run_inputs(harness, work_dir, quick):
    from gjk_ros.ros import PairStatus
    from rclpy.serialization import serialize_message
    from visualization_msgs.msg import Marker, MarkerArray
    decided = (PairStatus.VALID, PairStatus.INVALID)
    rows = []
    sizes = (60_000,) if quick else (60_000, 300_000)
    for size in sizes:
        name = 'tri%d/0' % size
        points = triangle_points(size - size % 3)

        def send(points=points, size=size):
            harness.send([marker('tri%d' % size, 0, Marker.TRIANGLE_LIST, points=points)])
        rows.append(measure_input(harness, 'TRIANGLE_LIST of %d points' % size, send,
                                  lambda _, name=name: harness.status_of(name) in decided))
        harness.send([marker('tri%d' % size, 0, action=Marker.DELETE)])
    stl = os.path.join(work_dir, 'big.stl')
    binary_stl(stl, 1_300_000)  # 66 MB: over the default max_mesh_bytes (32 MiB)
    rows.append(measure_input(
        harness, 'MESH_RESOURCE, %d MB binary STL' % (os.path.getsize(stl) // 10**6),
        lambda: harness.send([marker('stl', 0, Marker.MESH_RESOURCE, mesh_resource='file://'
                                     + stl)]),
        lambda _: harness.status_of('stl/0') in decided))
    # Serialized here, before the measurement: rclpy takes seconds of this process's CPU to
    # serialize 100,000 Python markers, which on 2 cores would starve the node and be counted
    # as its gap; a real publisher pays that on its own CPU.
    many = serialize_message(MarkerArray(markers=[marker('many', index, xyz=(2.0, 0.0, 0.0))
                                                  for index in range(100_000)]))
    rows.append(measure_input(harness, 'MarkerArray of 100,000 markers (%d MB)'
                              % (len(many) // 10**6), lambda: harness.markers.publish(many),
                              lambda _: harness.logged('exceeds max_markers_per_message')))
    for label, text in (('static_obstacles alias bomb (%d bytes)' % len(ALIAS_BOMB),
                         ALIAS_BOMB),
                        ('static_obstacles, 1 MB malformed YAML', '{' + 'a: [' * 200_000),
                        ('static_obstacles, 5,000 nested brackets', '[' * 5000 + ']' * 5000)):
        rows.append(measure_input(harness, label,
                                  lambda text=text: harness.set_parameter('static_obstacles',
                                                                          text),
                                  lambda answer: answer is not None))
    return rows


def run_churn(harness, seconds):
    """DELETEALL + 20 new ids per message at 30 Hz; RSS and ~/names over time."""
    rss_start = memory_kib(harness.process.pid, 'VmRSS') / 1024.0
    started, step = time.monotonic(), 0
    samples = []
    while time.monotonic() - started < seconds:
        markers = [marker('churn', 0, action=3)]
        markers += [marker('churn', step * 20 + k, xyz=(2.0, 0.1 * k, 0.0)) for k in range(20)]
        harness.send(markers)
        step += 1
        harness.spin_for(1.0 / 30.0)
        if step % 300 == 0:
            samples.append((time.monotonic() - started,
                            memory_kib(harness.process.pid, 'VmRSS') / 1024.0,
                            len(harness.names or '')))
    rss_end = memory_kib(harness.process.pid, 'VmRSS') / 1024.0
    names = json.loads(harness.names or '{}')
    return {'seconds': seconds, 'messages': step, 'rss_start_mib': rss_start,
            'rss_end_mib': rss_end, 'names_bytes': len(harness.names or ''),
            'live_obstacles_named': len(names.get('obstacles', {})), 'samples': samples}


def write_report(rows, churn, path):
    lines = ['# gjk_distance stress benchmark', '',
             'Node `rate_hz` %g (a cycle every %.0f ms; target: no output gap longer than two '
             'cycles, %.0f ms). Machine: %s, %d cores, Python %s; load average %.2f at the end. '
             'Date: %s.' % (RATE_HZ, 1e3 / RATE_HZ, 2e3 / RATE_HZ, platform.processor() or
                            platform.machine(), os.cpu_count(), platform.python_version(),
                            os.getloadavg()[0], time.strftime('%Y-%m-%d %H:%M')), '',
             '| input | settled | settle time | longest output gap | node RSS after | '
             'worker peak RSS |', '| --- | --- | --- | --- | --- | --- |']
    for row in rows:
        lines.append('| %s | %s | %.2f s | %.0f ms | %.0f MiB | %.0f MiB |' % (
            row['input'], 'yes' if row['settled'] else 'NO', row['settle_s'],
            row['longest_gap_ms'], row['node_rss_mib'], row['worker_peak_mib']))
    if churn is not None:
        lines += ['', 'Churn: DELETEALL + 20 new ids per message at 30 Hz for %.0f s (%d '
                  'messages): node RSS %.1f MiB -> %.1f MiB; `~/names` %d bytes naming %d '
                  'obstacles at the end.' % (churn['seconds'], churn['messages'],
                                             churn['rss_start_mib'], churn['rss_end_mib'],
                                             churn['names_bytes'],
                                             churn['live_obstacles_named']), '',
                  '| time [s] | node RSS [MiB] | ~/names [bytes] |', '| --- | --- | --- |']
        lines += ['| %.0f | %.1f | %d |' % sample for sample in churn['samples']]
    lines += ['', 'Reproduce: `python -m bench.stress` (see the module docstring).', '']
    with open(path, 'w') as report:
        report.write('\n'.join(lines))
    return '\n'.join(lines)


def main(argv=None):
    """Run the inputs one by one, then the churn; write the report."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--churn-seconds', type=float, default=600.0)
    parser.add_argument('--quick', action='store_true', help='smaller inputs, 60 s of churn')
    parser.add_argument('--results-dir', default=RESULTS_DIR)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix='gjk_stress_') as work_dir:
        harness = Harness(work_dir)
        try:
            harness.start_scene()
            rows = run_inputs(harness, work_dir, options.quick)
            churn = run_churn(harness, 60.0 if options.quick else options.churn_seconds)
        finally:
            harness.close()
    os.makedirs(options.results_dir, exist_ok=True)
    print(write_report(rows, churn, os.path.join(options.results_dir, 'stress.md')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
