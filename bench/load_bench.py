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
The live node under a real robot's load: cameras, a thousand obstacles, kilohertz TF, overload.

Each row starts the ``gjk_distance`` node as a process with the launch file's parameter file
(``config/gjk_distance.yaml``) plus the inputs the row names, the publishers of
``bench.load_publishers`` as processes of their own (the Panda's joints on ``/tf``, obstacle
markers, depth cameras), and subscribes here to ``~/distances``, ``~/names`` and
``/diagnostics``. After the node lists every body and a warm-up, it measures over a window:

- **latency** of an output: its reception time here minus the stamp of the input it rests on
  (one clock, one machine). The reception time is the middleware's (``received_timestamp`` of
  rmw's message info, when the sample reached this process's reader), so this subscriber's own
  decoding of a large ``~/distances`` message does not delay the next one's time. TF rows:
  outputs stamped exactly with a published ``/tf`` stamp (the output stamp is its oldest
  datum). Camera rows: each record's ``age`` is the time from
  its oldest datum to the cycle, so per camera the smallest age over the links (a link on a
  static chain, or any link whose transform is newer than the cloud) gives the cloud's stamp:
  ``stamp + max age - min age of that camera``, matched to the camera's published stamps;
- **clouds used**: the distinct published clouds some output rests on, per camera;
- **VALID**: the share of records with status VALID; **output rate**: messages per second;
- the node's own figures from ``/diagnostics`` (cycles, pairs, piece pairs computed, cycle
  time: machine-independent work beside the times), its CPU share from ``/proc``, and the
  counts of dropped input it reports (any key naming drops; 'not reported' when there is none).

Run from the repository root with the Makefile's ROS environment::

    AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=61 \
        .venv/bin/python -m bench.load_bench [--rows camera1 tf1k] [--duration 15] [--quick]

It writes ``bench/results/load_bench.md`` and ``load_bench.csv``. A benchmark, not a test: it
asserts nothing about speed; each row prints the issue's target beside the measured figure.
"""

import argparse
import csv
from dataclasses import dataclass, field, replace
import math
import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

from bench import core_scaling, live_node, load_shards
from bench.load_publishers import camera_name, camera_topic, robot_description
from gjk_ros.demo.monitor import NODE_NAME
from gjk_ros.ros.launch_arguments import cpu_command
from gjk_ros.ros.qos import cloud_publisher_environment
import numpy

RESULTS_NAME = 'load_bench'
STEADY_CYCLE_SHARE = 0.8
# A published input matches an output's derived stamp within this (clouds are 33 ms apart).
MATCH_TOLERANCE_NS = 1_000_000


@dataclass(frozen=True)
class Target:
    """
    A figure the issue asks for: ``metric`` ``bound`` (``<=`` or ``>=``) ``value``.

    With ``reference`` (a row key) the value is that row's same figure measured in the same run
    (``against``): the shard rows are judged against one node under the same conditions.
    """

    metric: str
    bound: str
    value: float
    text: str
    reference: str = ''

    def met(self, measured):
        """Return True/False, or None when nothing was measured."""
        if measured is None or not math.isfinite(measured) or not math.isfinite(self.value):
            return None
        return measured <= self.value if self.bound == '<=' else measured >= self.value

    def against(self, measured_rows):
        """Return this target with its reference row's figure as value (NaN if not run)."""
        if not self.reference:
            return self
        value = measured_rows.get(self.reference, {}).get(self.metric, math.nan)
        return replace(self, value=value)


@dataclass(frozen=True)
class Row:
    """
    One benchmark row: the node's settings, the publishers, the targets.

    Attributes
    ----------
    key, title : str
        Short name (``--rows``) and what it is.
    rate_hz : float
        The node's ``rate_hz``.
    tf_rate_hz : float
        The arm's ``/tf`` rate.
    frames : int
        Transforms in every ``/tf`` message (0: the moving joints only).
    obstacles, cameras : int
        Markers around the arm; 640x480 cameras at 30 Hz.
    max_distance : str or None
        Override of ``max_distance`` (None: the parameter file's, 1 m).
    targets : tuple of Target
        The issue's "Done means" for this row.
    filed : str
        What the issue measured for it when it was filed.
    shards : int
        0: one node; else that many shards started by ``launch/shards.launch.py`` and the
        aggregator (``bench.load_shards``): split by obstacles, or two cameras each.
    safety_only : bool
        The benchmark reads only the safety path (``~/safety``, ``~/safety_detail``: the
        aggregator's with shards), not ``~/distances``: the compared rows load the machine
        alike (no node builds a record cloud, no one decodes it).
    one_core : bool
        Every node on a CPU of its own (``taskset``; shard i on the i-th CPU this process may
        use, a single node on the first): one instance is one core's worth of work, whatever
        the node's threads could use.

    """

    key: str
    title: str
    rate_hz: float = 100.0
    tf_rate_hz: float = 100.0
    frames: int = 0
    obstacles: int = 0
    cameras: int = 0
    max_distance: object = None
    targets: tuple = ()
    filed: str = ''
    shards: int = 0
    safety_only: bool = False
    one_core: bool = False

    @property
    def cycle_ms(self):
        """Return the node's period, ms."""
        return 1000.0 / self.rate_hz


# The shard comparison's load: one node on one core holds 100 Hz at this many obstacles on this
# machine (cycles of 5 to 6 ms of the 10 ms period); shards2 has SHARD_GROWTH times as many.
SHARD_BASE_OBSTACLES = 1200
SHARD_GROWTH = 1.6
SAFETY_P99 = 'safety_latency_p99_ms'


def shard_rows(base=SHARD_BASE_OBSTACLES):
    """
    Return the rows that measure how throughput grows with shards, ``base`` obstacles at 1x.

    ``single_1x`` is the reference: one node on one core (an instance's share of the machine,
    as each shard has one) that holds 100 Hz. ``single_1.6x`` is one node with the shards'
    load and both cores (its pair engine's two threads: for contrast), ``shards2`` two shards
    with it, a core each: met when its TF -> ~/safety p99 is at most the reference's in the same
    run. Only the safety path is read.
    """
    grown = round(SHARD_GROWTH * base)
    same = 'at most single_1x in the same run'
    return (
        Row('single_1x', f'{base} obstacles on one node on one core (the shard reference), '
            'safety path only', obstacles=base, safety_only=True, one_core=True,
            targets=(Target('node_cycles_hz', '>=', 99.0, 'one node just holds 100 Hz'),),
            filed='not measured'),
        Row('single_1.6x', f'{grown} obstacles on one node (contrast), safety path only',
            obstacles=grown, safety_only=True,
            targets=(Target(SAFETY_P99, '<=', math.nan, f'TF -> ~/safety p99 {same}',
                            'single_1x'),),
            filed='not measured'),
        Row('shards2', f'{grown} obstacles on two shards, a core each, and the aggregator (half '
            'each)', obstacles=grown, shards=2, safety_only=True, one_core=True,
            targets=(Target(SAFETY_P99, '<=', math.nan,
                            f"TF -> aggregator's ~/safety p99 {same}", 'single_1x'),
                     Target('ready_pct', '>=', math.nan, 'answers measured (ready) at least '
                            'single_1x in the same run', 'single_1x')),
            filed='not measured'),
        Row('camera4_shards', 'four cameras on two shards (two each) and the aggregator',
            cameras=4, shards=2,
            targets=(Target('cloud_latency_p99_ms', '<=', 100.0,
                            'cloud -> aggregator output p99 <= 100 ms'),
                     Target('camera_used_hz_min', '>=', 10.0, 'every camera used at >= 10 Hz')),
            filed='not measured'),
    )


ROWS = (
    Row('camera1', 'one 640x480 camera at 30 Hz, Panda TF 100 Hz', cameras=1,
        targets=(Target('clouds_used_pct', '>=', 90.0, '>= 90 % of clouds used'),
                 Target('cloud_latency_p99_ms', '<=', 50.0, 'cloud -> output p99 <= 50 ms'),
                 Target('valid_pct', '>=', 100.0, '100 % VALID'),
                 Target('output_hz', '>=', 99.0, 'an output every cycle (100 Hz)')),
        filed='output 82-86 Hz, the node at a full core'),
    Row('camera4', 'four 640x480 cameras at 30 Hz, Panda TF 100 Hz', cameras=4,
        targets=(Target('cloud_latency_p99_ms', '<=', 100.0, 'cloud -> output p99 <= 100 ms'),
                 Target('camera_used_hz_min', '>=', 10.0, 'every camera used at >= 10 Hz')),
        filed='2-82 % VALID, stamp age p99 0.76-1.2 s'),
    Row('obstacles1000', '1,000 obstacles around the Panda, TF 100 Hz', obstacles=1000,
        targets=(Target('tf_latency_p99_ms', '<=', 10.0, 'TF -> output p99 <= 10 ms'),),
        filed='knee at 450-600 obstacles: latency 0.5 s, 8-57 % STALE'),
    Row('obstacles3000', '3,000 obstacles, default max_distance, rate_hz 30', rate_hz=30.0,
        obstacles=3000,
        targets=(Target('tf_latency_p99_ms', '<=', 33.0, 'TF -> output p99 <= 33 ms'),),
        filed='not measured'),
    Row('tf1k', '/tf at 1 kHz, 50 frames a message, 50 obstacles', tf_rate_hz=1000.0,
        frames=50, obstacles=50,
        targets=(Target('tf_latency_p99_ms', '<=', 10.0, 'TF -> output p99 <= 10 ms'),),
        filed='latency pinned at 102 ms (the /tf queue full)'),
    Row('overload', '/tf at 1 kHz, 500 frames a message (10x tf1k), 50 obstacles',
        tf_rate_hz=1000.0, frames=500, obstacles=50,
        targets=(Target('latency_p99_cycles', '<=', 2.0, 'latency <= 2 cycles (p99)'),
                 Target('drops_reported', '>=', 1.0, 'drops counted in /diagnostics')),
        filed='queues grow to a second of latency'),
) + shard_rows()
ROW_KEYS = tuple(row.key for row in ROWS)
SHARD_ROW_KEYS = tuple(row.key for row in shard_rows())


@dataclass
class Options:
    """How long to measure (``--quick`` shortens everything)."""

    duration: float = 15.0
    warmup: float = 5.0
    steady_timeout: float = 20.0
    startup_timeout: float = 180.0
    camera_qos: str = 'reliable'
    camera_transport: str = 'shm'
    transport: bool = False
    shard_obstacles: int = SHARD_BASE_OBSTACLES


def parse_args(argv=None):
    """Parse the command line into (rows, Options, results dir, domain id)."""
    parser = argparse.ArgumentParser(prog='python -m bench.load_bench',
                                     description=__doc__.strip().splitlines()[0])
    parser.add_argument('--rows', nargs='+', choices=ROW_KEYS, default=list(ROW_KEYS),
                        metavar='ROW', help='rows to run, of: %s (default: all)'
                        % ', '.join(ROW_KEYS))
    parser.add_argument('--duration', type=float, default=None,
                        help='measurement window per row, s (default 15; --quick 5)')
    parser.add_argument('--warmup', type=float, default=None,
                        help='seconds of traffic before the window (default 5; --quick 2)')
    parser.add_argument('--quick', action='store_true', help='short windows (make bench-quick)')
    parser.add_argument('--camera-qos', choices=('reliable', 'sensor_data'), default='reliable',
                        help='QoS of the cameras and of their observation sources (default '
                             'reliable on both ends)')
    parser.add_argument('--camera-transport', choices=('shm', 'default'), default='shm',
                        help="the cameras' Fast DDS transport: shm, docs/transport.md's "
                             "profile (a 32 MiB shared-memory segment); default, Fast DDS's "
                             'own (default shm)')
    parser.add_argument('--transport', action='store_true',
                        help='measure the transport table instead (one camera to a raw '
                             'subscriber per transport and QoS: docs/transport.md)')
    parser.add_argument('--shard-obstacles', type=int, default=SHARD_BASE_OBSTACLES,
                        help='obstacles of single_1x, the shard reference (single_1.6x and '
                             'shards2 have %g times as many; default %d)'
                             % (SHARD_GROWTH, SHARD_BASE_OBSTACLES))
    parser.add_argument('--startup-timeout', type=float, default=180.0,
                        help='seconds to wait for the node to list every body')
    parser.add_argument('--results-dir', default=live_node.RESULTS_DIR)
    parser.add_argument('--domain-id', type=int, default=None, help='ROS_DOMAIN_ID to use')
    args = parser.parse_args(argv)
    if any(value is not None and value <= 0.0 for value in (args.duration, args.warmup)):
        parser.error('--duration and --warmup must be positive')
    if not 1 <= args.shard_obstacles <= 10000:
        parser.error('--shard-obstacles must be in [1, 10000]')
    options = Options(steady_timeout=10.0 if args.quick else 20.0,
                      startup_timeout=args.startup_timeout, camera_qos=args.camera_qos,
                      camera_transport=args.camera_transport)
    options.duration = args.duration or (5.0 if args.quick else 15.0)
    options.warmup = args.warmup or (2.0 if args.quick else 5.0)
    options.transport = args.transport
    options.shard_obstacles = args.shard_obstacles
    table = ROWS[:-len(shard_rows())] + shard_rows(args.shard_obstacles)
    rows = [row for row in table if row.key in args.rows]
    return rows, options, args.results_dir, args.domain_id


# -- one row ----------------------------------------------------------------------------------

def row_parameters(row, options, cameras=None):
    """
    Return {name: value} the row adds to the parameter file (a camera's as ``<name>.<key>``).

    ``cameras``: the indices of the cameras this node reads (default every camera of the row).
    """
    parameters = {}
    if row.max_distance is not None:
        parameters['max_distance'] = row.max_distance
    if row.obstacles:
        # Published once (then acknowledged): static, or they would go STALE after
        # obstacle_timeout as a silent source.
        parameters['static_obstacle_namespaces'] = ['*']
    indices = range(row.cameras) if cameras is None else cameras
    if indices:
        parameters['observation_sources'] = [camera_name(index) for index in indices]
        for index in indices:
            name = camera_name(index)
            parameters.update({f'{name}.type': 'pointcloud', f'{name}.topic': camera_topic(index),
                               f'{name}.qos': options.camera_qos, f'{name}.min_height': 0.02})
    return parameters


def assignment(name, value):
    """Return ``name:=value`` as a ``-p`` argument writes it (a list of strings quoted)."""
    if isinstance(value, (list, tuple)):
        value = '[%s]' % ', '.join(f"'{item}'" for item in value)
    return f'{name}:={value}'


def node_parameters(row, options):
    """Return the ``name:=value`` assignments the row adds to the parameter file."""
    return [assignment(name, value) for name, value in row_parameters(row, options).items()]


def collision_links(urdf):
    """Return how many links of a URDF have collision geometry (the node's links)."""
    return sum(1 for link in ElementTree.fromstring(urdf).iter('link')
               if link.find('collision') is not None)


class Recorder:
    """
    What the subscriber callbacks collect (one row).

    ``nodes``: the fully qualified names of the distance nodes (one, or the shards);
    ``source``: the node whose safety outputs are the answer (that node, or the aggregator).
    """

    def __init__(self, row, nodes=(f'/{NODE_NAME}',), source=None):
        self.row = row
        self.nodes = tuple(nodes)
        self.source = source or self.nodes[0]
        # (receive_ns, stamp_ns, records per status, {camera: stamp_ns}) per output, per node.
        self.samples = {node: [] for node in self.nodes}
        self.safety = []         # (receive_ns, stamp_ns) per ~/safety message of the source
        # The same of each shard's own ~/safety (shard rows): where an aggregated tail starts.
        self.shard_safety = {node: [] for node in self.nodes} if self.source not in self.nodes \
            else {}
        self.measured = []       # per ~/safety_detail of the source: ready, minimum not -inf
        self.last_measured = False
        self.compute = {node: [] for node in self.nodes}  # compute entries inside the window
        self.drops = {}
        self.instances = {}      # {node: 'host:pid'} of every process that answers
        self.names = {}
        self.camera_ids = {}
        self.last_width = {}
        self.steady_nodes = {}
        self.recording = False

    @property
    def steady(self):
        """Whether every node kept up over its last diagnostics period."""
        return all(self.steady_nodes.get(node, False) for node in self.nodes)

    def on_distances(self, node, message, info):
        """Record the reception time, the stamp, statuses and camera stamps."""
        received = reception_time(info)
        self.last_width[node] = message.width
        if not self.recording:
            return
        from gjk_ros.ros.records import PairStatus, records_from_cloud

        records = records_from_cloud(message)
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        counts = numpy.bincount(records['status'], minlength=len(PairStatus))
        self.samples[node].append((received, stamp, counts, camera_stamps(
            records, stamp, self.camera_ids.get(node, {}))))

    def on_safety(self, message, info, node=None):
        """Record when a ~/safety message came and its stamp (the small, safety-path output)."""
        received = reception_time(info)
        if self.recording:
            kept = self.safety if node is None else self.shard_safety[node]
            kept.append((received, message.header.stamp.sec * 1_000_000_000 +
                         message.header.stamp.nanosec))

    def on_detail(self, message):
        """Record whether a ~/safety_detail answer vouches for a measurement."""
        if not message.status:
            return
        values = {entry.key: entry.value for entry in message.status[0].values}
        self.last_measured = (values.get('ready') == 'true' and
                              values.get('min_distance') not in (None, '-inf', 'nan'))
        if self.recording:
            self.measured.append(self.last_measured)

    def on_names(self, node, message):
        """Keep a node's latest names JSON (and its camera sources' obstacle ids)."""
        from gjk_ros.ros.records import names_from_json

        self.names[node] = message.data
        _, obstacles = names_from_json(message.data)
        self.camera_ids[node] = {name: obstacle_id for obstacle_id, name in obstacles.items()
                                 if name.startswith('camera')}

    def on_diagnostics(self, message):
        """Keep the compute entries, the drop counts and which processes answer."""
        for status in message.status:
            node, _, entry = ('/' + status.name).rpartition(': ')
            if entry in ('inputs', 'aggregate'):
                self.instances[node] = {e.key: e.value for e in status.values}.get('instance')
        values = live_node.compute_values(message)
        node = next((('/' + s.name).rpartition(': ')[0] for s in message.status
                     if s.name.endswith(': compute')), None)
        if values is None or node not in self.compute:
            return
        if self.recording:
            self.compute[node].append(values)
            self.drops.update(live_node.drop_counts(message))
        self.steady_nodes[node] = (int(values.get('rebuilds', 1)) == 0 and int(values.get(
            'cycles', 0)) >= STEADY_CYCLE_SHARE * self.row.rate_hz)

    def listed(self, links, bodies):
        """Tell whether every node lists the links and, together, ``bodies`` obstacles."""
        if any(node not in self.names for node in self.nodes):
            return False
        tables = list(self.tables().values())
        return (all(len(links_of) >= links for links_of, _ in tables) and
                len(set().union(*(obstacles.values() for _, obstacles in tables))) >= bodies)

    def tables(self):
        """Return {node: (links, obstacles)} of the names each node listed last."""
        from gjk_ros.ros.records import names_from_json

        return {node: names_from_json(text) for node, text in self.names.items()}


def camera_stamps(records, stamp_ns, camera_ids):
    """
    Return {camera: stamp of the cloud its records rest on} of one output (ns).

    ``age`` is the time from a record's oldest datum to the cycle, and the output stamp is the
    oldest datum of all, so the cycle is at stamp + the largest age; a camera's cloud is the
    newest datum of its records, cycle - the smallest age of a camera record (its cloud or
    older: a link chain older than the cloud gives an older stamp, which then matches no cloud).
    """
    ages = records['age']
    finite = numpy.isfinite(ages)
    if not finite.any():
        return {}
    cycle = stamp_ns + round(float(ages[finite].max()) * 1e9)
    found = {}
    for name, obstacle_id in camera_ids.items():
        mine = finite & (records['obstacle_id'] == obstacle_id)
        if mine.any():
            found[name] = cycle - round(float(ages[mine].min()) * 1e9)
    return found


def reception_time(info):
    """
    Return when a message reached this process (ns, system clock): the middleware's time.

    rmw's message info carries it (``received_timestamp``); an RMW that leaves it 0 gets this
    callback's time instead.
    """
    return info.get('received_timestamp') or time.time_ns()


def subscribe(recorder):
    """Create the benchmark's subscriber node: the nodes' names (and records), the answer."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import PointCloud2, Range
    from std_msgs.msg import String

    from gjk_ros.ros.qos import LATCHED_QOS

    node = Node('gjk_load_bench')
    # Reliable and deep: every output the node sends is counted, none lost here.
    stream = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    for name in recorder.nodes:
        if not recorder.row.safety_only:
            node.create_subscription(
                PointCloud2, f'{name}/distances',
                lambda message, info, name=name: recorder.on_distances(name, message, info),
                stream)
        node.create_subscription(String, f'{name}/names', lambda message, name=name:
                                 recorder.on_names(name, message), LATCHED_QOS)
    node.create_subscription(Range, f'{recorder.source}/safety', recorder.on_safety, stream)
    for name in recorder.shard_safety:
        node.create_subscription(
            Range, f'{name}/safety',
            lambda message, info, name=name: recorder.on_safety(message, info, name), stream)
    node.create_subscription(DiagnosticArray, f'{recorder.source}/safety_detail',
                             recorder.on_detail, stream)
    node.create_subscription(DiagnosticArray, '/diagnostics', recorder.on_diagnostics, 10)
    return node


def start_publishers(row, options, children, work_dir, nodes=None):
    """Start the arm and the cameras; return {publisher: stamp log path}."""
    logs = {'arm': os.path.join(work_dir, 'arm_stamps.txt')}
    names = [item for node in nodes or () for item in ('--names-topic', f'{node}/names')]
    children.start('arm', [sys.executable, '-m', 'bench.load_publishers', 'arm', '--rate-hz',
                           str(row.tf_rate_hz), '--frames', str(row.frames), '--obstacles',
                           str(row.obstacles), '--stamp-log', logs['arm']] + names)
    environment = []
    if row.cameras and options.camera_transport == 'shm':
        environment = ['env'] + ['%s=%s' % item for item in
                                 cloud_publisher_environment(work_dir).items()]
    for index in range(row.cameras):
        name = camera_name(index)
        logs[name] = os.path.join(work_dir, f'{name}_stamps.txt')
        children.start(name, environment + [
            sys.executable, '-m', 'bench.load_publishers', 'camera', '--index', str(index),
            '--count', str(row.cameras), '--qos', options.camera_qos, '--stamp-log', logs[name]])
    return logs


def read_stamps(path):
    """Return the sorted int64 stamps a publisher logged."""
    with open(path) as stamps:
        return numpy.sort(numpy.array([int(line) for line in stamps if line.strip()],
                                      dtype=numpy.int64))


def start_nodes(row, options, children, work_dir):
    """
    Start the row's distance node(s); return (Recorder, the node's pid or None with shards).

    Shards: ``ros2 launch launch/shards.launch.py`` with the row's shards file
    (``bench.load_shards``); their pids come from their ``/diagnostics`` instance.
    """
    if not row.shards:
        prefix = cpu_command((load_shards.instance_cpu(0),) if row.one_core else ())
        pid = children.start('node', prefix + live_node.launch_node_command(
            row.rate_hz, node_parameters(row, options)))
        return Recorder(row), pid
    shards_file = load_shards.write_shards_file(
        row, lambda cameras: row_parameters(row, options, cameras), work_dir)
    children.start('launch', load_shards.launch_command(shards_file))
    return Recorder(row, load_shards.shard_nodes(row.shards), load_shards.AGGREGATOR), None


def waiting_for(recorder, links, bodies):
    """Return what start-up still waits for (the node(s) listing every body, ...), or None."""
    if not recorder.listed(links, bodies):
        return (f'~/names of {", ".join(recorder.nodes)} listing {links} links and '
                f'{bodies} bodies (heard: %s)' % ('; '.join(
                    f'{node} {len(links_of)} links, {len(obstacles)} bodies' for node, (
                        links_of, obstacles) in recorder.tables().items()) or 'nothing'))
    if recorder.row.shards and len(recorder.instances) < recorder.row.shards + 1:
        return ('/diagnostics of every shard and the aggregator (heard: %s)'
                % (', '.join(recorder.instances) or 'none'))
    if recorder.row.safety_only:
        return None if recorder.last_measured else f'a measured answer on {recorder.source}'
    width = sum(recorder.last_width.get(node, 0) for node in recorder.nodes)
    return None if width >= links * bodies else f'{links * bodies} records (last {width})'


def processes(recorder, children, node_pid):
    """
    Return {name: pid} of the processes whose CPU the row reports.

    Raises RuntimeError when an answering process is not one this benchmark started (a shared
    ROS domain): the single node by its pid, each shard and the aggregator as a child of the
    launch process.
    """
    pids = dict(children.pids(), bench=os.getpid())
    if node_pid is not None:
        instance = recorder.instances.get(recorder.source)
        if instance is not None and not instance.endswith(f':{node_pid}'):
            raise RuntimeError(f'the node that answered is {instance}, not the one this '
                               f'benchmark started (pid {node_pid}): is the ROS domain shared?')
        return pids
    for name, pid in load_shards.shard_pids(recorder.instances).items():
        if live_node.parent_pid(pid) != pids['launch']:
            raise RuntimeError(f'{name} (pid {pid}) is not a child of the launch this '
                               'benchmark started: is the ROS domain shared?')
        pids[name] = pid
    return pids


def measure(row, options, work_dir):
    """Run one row: start everything, wait, measure, stop; return the raw figures."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    urdf, robot_label = robot_description()
    links = collision_links(urdf)
    children = live_node.Children(work_dir)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    try:
        recorder, node_pid = start_nodes(row, options, children, work_dir)
        logs = start_publishers(row, options, children, work_dir,
                                recorder.nodes if row.shards else None)
        executor = SingleThreadedExecutor()
        executor.add_node(subscribe(recorder))
        bodies = row.obstacles + row.cameras
        try:
            live_node.spin_until(executor, lambda: waiting_for(recorder, links, bodies) is None,
                                 options.startup_timeout, children)
        except TimeoutError as error:
            raise TimeoutError(f'{error}: {waiting_for(recorder, links, bodies)}') from None
        steady_start, steady = time.monotonic(), True
        try:
            live_node.spin_until(executor, lambda: recorder.steady, options.steady_timeout,
                                 children)
        except TimeoutError:
            steady = False  # Measured anyway: the report says the node never kept up.
        steady_wait = time.monotonic() - steady_start
        live_node.spin_for(executor, options.warmup, children)
        pids = processes(recorder, children, node_pid)
        cpu_start = {name: live_node.process_cpu_seconds(pid) for name, pid in pids.items()}
        load = [os.getloadavg()[0], None]
        window = [time.time_ns(), None]
        wall_start = time.monotonic()
        recorder.recording = True
        live_node.spin_for(executor, options.duration, children)
        recorder.recording = False
        wall = time.monotonic() - wall_start
        window[1], load[1] = time.time_ns(), os.getloadavg()[0]
        cpu = {name: live_node.process_cpu_seconds(pid) - cpu_start[name]
               for name, pid in pids.items()}
    finally:
        children.stop()
        rclpy.try_shutdown()
    raw = {'safety': recorder.safety, 'measured': recorder.measured, 'drops': recorder.drops,
           'stamps': {name: read_stamps(path) for name, path in logs.items()},
           'window_ns': tuple(window), 'load': tuple(load), 'wall_s': wall, 'cpu_s': cpu,
           'links': links, 'robot': robot_label, 'steady': steady,
           'steady_wait_s': steady_wait}
    if not row.shards:
        node = recorder.nodes[0]
        return dict(raw, samples=recorder.samples[node], compute=recorder.compute[node],
                    parameters=node_parameters(row, options))
    shard = {node: node.strip('/').split('/')[0] for node in recorder.nodes}
    samples = {shard[node]: mine for node, mine in recorder.samples.items()}
    return dict(raw, shard_samples=samples,
                shard_compute={shard[node]: mine for node, mine in recorder.compute.items()},
                shard_safety={shard[node]: mine for node, mine in recorder.shard_safety.items()},
                samples=[] if row.safety_only else load_shards.aggregate_samples(
                    recorder.safety, samples),
                compute=[], parameters=shard_assignments(row, options))


def shard_assignments(row, options):
    """Return ``<shard>: name:=value`` texts of every shard's overrides (the report's)."""
    document = load_shards.shards_document(
        row, lambda cameras: row_parameters(row, options, cameras))
    return [f'{shard}: ' + ', '.join(assignment(name, value) for name, value in
                                     entry['parameters'].items() if not isinstance(value, dict))
            for shard, entry in document['shards'].items()]


# -- figures ----------------------------------------------------------------------------------

def matched(stamps, published):
    """
    Return a mask: which ``stamps`` are one of ``published`` (sorted), within the tolerance.

    A negative stamp stands for none (an output that rests on no cloud) and matches nothing.
    """
    stamps = numpy.asarray(stamps, dtype=numpy.int64)
    if not len(published) or not len(stamps):
        return numpy.zeros(len(stamps), dtype=bool)
    nearest = numpy.abs(_nearest(stamps, published) - stamps)
    return (stamps >= 0) & (nearest <= MATCH_TOLERANCE_NS)


def _quantiles(values_ms):
    if not len(values_ms):
        return math.nan, math.nan, math.nan
    return (live_node.percentile(values_ms, 0.5), live_node.percentile(values_ms, 0.99),
            float(numpy.max(values_ms)))


def summarise(row, raw):
    """
    Return {metric: value} of one row (NaN where nothing was measured).

    ``raw['samples']`` are the outputs the row reads: the node's records, or with shards one
    per aggregator output (``load_shards.aggregate_samples``); a safety-only row has none, and
    its outputs are the ``~/safety`` messages.
    """
    samples, wall = raw['samples'], raw['wall_s']
    outputs = raw['safety'] if row.safety_only else samples
    figures = {'output_hz': len(outputs) / wall}
    records = [s for mine in raw.get('shard_samples', {}).values() for s in mine] \
        if row.shards else samples
    figures.update(status_shares(records))
    measured = raw.get('measured') or []
    figures['ready_pct'] = 100.0 * sum(measured) / len(measured) if measured else math.nan
    receive = numpy.array([s[0] for s in samples], dtype=numpy.int64)
    stamps = numpy.array([s[1] for s in samples], dtype=numpy.int64)
    start, end = raw['window_ns']
    arm = raw['stamps']['arm']
    figures['tf_published_hz'] = numpy.count_nonzero((arm >= start) & (arm < end)) / wall
    exact = numpy.isin(stamps, arm)
    latency = (receive[exact] - stamps[exact]) / 1e6
    figures['tf_matched_pct'] = 100.0 * exact.mean() if len(exact) else math.nan
    p50, p99, most = _quantiles(latency)
    figures.update(tf_latency_p50_ms=p50, tf_latency_p99_ms=p99, tf_latency_max_ms=most)
    figures['latency_p99_cycles'] = p99 / row.cycle_ms
    figures['latency_max_cycles'] = most / row.cycle_ms
    # The same through ~/safety: a small message, so the difference is the record cloud's
    # packing and transport.
    safety = numpy.array(raw.get('safety') or numpy.zeros((0, 2)), dtype=numpy.int64)
    matched = safety[numpy.isin(safety[:, 1], arm)] if len(safety) else safety
    p50, p99, _ = _quantiles((matched[:, 0] - matched[:, 1]) / 1e6)
    figures.update(safety_latency_p50_ms=p50, safety_latency_p99_ms=p99)
    for shard, mine in raw.get('shard_safety', {}).items():
        mine = numpy.array(mine or numpy.zeros((0, 2)), dtype=numpy.int64)
        mine = mine[numpy.isin(mine[:, 1], arm)] if len(mine) else mine
        figures[f'{shard}_safety_latency_p99_ms'] = _quantiles((mine[:, 0] - mine[:, 1])
                                                               / 1e6)[1]
    if row.shards:
        # An aggregated answer is sent on every shard's summary, each time resting on the
        # oldest shard's stamp: the first arrival of a stamp is the shards' own latency.
        first = load_shards.first_arrivals(matched)
        figures['safety_first_latency_p99_ms'] = _quantiles((first[:, 0] - first[:, 1])
                                                            / 1e6)[1]
    if row.cameras:
        figures.update(camera_figures(row, raw, receive))
    figures.update(node_figures(raw))
    return figures


def status_shares(samples):
    """Return {'<status>_pct': share of the window's records} (``valid_pct`` among them)."""
    from gjk_ros.ros.records import PairStatus

    if not samples:
        return {'valid_pct': math.nan}
    counts = numpy.sum([s[2][:len(PairStatus)] for s in samples], axis=0)
    total = counts.sum()
    return {f'{status.name.lower()}_pct': 100.0 * counts[status] / total if total else math.nan
            for status in PairStatus}


def camera_figures(row, raw, receive):
    """Clouds used, per-camera use rate and cloud -> output latency."""
    figures, latencies, used_total, published_total = {}, [], 0, 0
    matched_total, outputs_total = 0, 0
    start, end = raw['window_ns']
    used_rates = []
    for index in range(row.cameras):
        name = camera_name(index)
        published = raw['stamps'][name]
        # Clouds sent in the window, less the last 0.2 s (a cycle after the window uses them).
        sent = published[(published >= start) & (published < end - 200_000_000)]
        derived = numpy.array([s[3].get(name, -1) for s in raw['samples']], dtype=numpy.int64)
        hit = matched(derived, published)
        matched_total, outputs_total = matched_total + hit.sum(), outputs_total + len(hit)
        latencies.append((receive[hit] - derived[hit]) / 1e6)
        nearest = _nearest(derived[hit], published)
        used = numpy.intersect1d(nearest, sent)
        used_total, published_total = used_total + len(used), published_total + len(sent)
        rate = len(used) / max(raw['wall_s'] - 0.2, 1e-9)
        used_rates.append(rate)
        figures[f'{name}_published_hz'] = len(sent) / max(raw['wall_s'] - 0.2, 1e-9)
        figures[f'{name}_used_hz'] = rate
    figures['clouds_used_pct'] = (100.0 * used_total / published_total if published_total
                                  else math.nan)
    figures['camera_used_hz_min'] = min(used_rates) if used_rates else math.nan
    # Outputs whose derived cloud stamp is a published cloud (the rest rest on a link chain
    # older than the cloud, or on no cloud yet).
    figures['cloud_matched_pct'] = (100.0 * matched_total / outputs_total if outputs_total
                                    else math.nan)
    p50, p99, most = _quantiles(numpy.concatenate(latencies) if latencies else [])
    figures.update(cloud_latency_p50_ms=p50, cloud_latency_p99_ms=p99,
                   cloud_latency_max_ms=most)
    return figures


def _nearest(stamps, published):
    """Return the published stamp nearest each of ``stamps`` (published sorted, non-empty)."""
    if not len(stamps):
        return numpy.array([], dtype=numpy.int64)
    if len(published) == 1:
        return numpy.full(len(stamps), published[0])
    at = numpy.clip(numpy.searchsorted(published, stamps), 1, len(published) - 1)
    before, after = published[at - 1], published[at]
    return numpy.where(numpy.abs(after - stamps) < numpy.abs(stamps - before), after, before)


def node_figures(raw):
    """Return the node's own counters (per cycle, machine-independent) and the CPU shares."""
    figures = {}
    cpu = raw['cpu_s']
    for name, seconds in cpu.items():
        figures[f'cpu_{name}_pct'] = 100.0 * seconds / raw['wall_s']
    cameras = [seconds for name, seconds in cpu.items() if name.startswith('camera')]
    if cameras:
        figures['cpu_cameras_pct'] = 100.0 * sum(cameras) / raw['wall_s']
    figures['load_start'], figures['load_end'] = raw['load']
    figures['drops_reported'] = _drops(raw['drops'])
    shards = raw.get('shard_compute')
    if not shards:
        return dict(figures, **cycle_figures(raw['compute']))
    # Sharded: each shard's counters, and the robot's (records summed, the slowest shard's
    # cycles); CPU of the shards and the aggregator together.
    for shard, periods in shards.items():
        figures.update({f'{shard}_{key}': value
                        for key, value in cycle_figures(periods).items()})
    figures['node_cycles_hz'] = min(figures[f'{shard}_node_cycles_hz'] for shard in shards)
    for key in ('pairs', 'piece_pairs', 'computed_piece_pairs'):
        figures[key] = sum(figures[f'{shard}_{key}'] for shard in shards)
    figures['cpu_shards_pct'] = sum(figures.get(f'cpu_{name}_pct', 0.0)
                                    for name in list(shards) + ['aggregator'])
    return figures


def cycle_figures(compute):
    """Return a node's cycle counters over its diagnostics periods (cycle-weighted means)."""
    periods = [p for p in compute if int(p.get('cycles', 0)) > 0]
    if not periods:
        return {key: math.nan for key in ('node_cycles_hz', 'cycle_time_ms', 'core_time_ms',
                                          'pairs', 'piece_pairs', 'computed_piece_pairs')}
    cycles = numpy.array([int(p['cycles']) for p in periods], dtype=float)

    def weighted(key):
        return float(numpy.average([float(p[key]) for p in periods], weights=cycles))
    return {'node_cycles_hz': float(cycles.sum()) / len(periods),
            'cycle_time_ms': weighted('cycle_time_mean_ms'),
            'core_time_ms': weighted('compute_time_mean_ms'),
            'pairs': float(numpy.mean([int(p['pairs']) for p in periods])),
            'piece_pairs': float(numpy.mean([int(p['piece_pairs']) for p in periods])),
            'computed_piece_pairs': float(sum(int(p['computed_piece_pairs']) for p in periods)
                                          / cycles.sum())}


def _drops(drops):
    """1 when the node reports drop counts, 0 ('not reported') when it does not."""
    return 1.0 if drops else 0.0


# -- report -----------------------------------------------------------------------------------

# (metric, label, unit, format) of the per-row tables, in order.
METRICS = (
    ('output_hz', 'outputs per second', 'Hz', '%.1f'),
    ('valid_pct', 'records VALID', '%', '%.1f'),
    ('stale_pct', 'records STALE', '%', '%.1f'),
    ('invalid_pct', 'records INVALID', '%', '%.1f'),
    ('approximate_pct', 'records APPROXIMATE', '%', '%.1f'),
    ('beyond_pct', 'records BEYOND (max_distance)', '%', '%.1f'),
    ('pending_pct', 'records PENDING', '%', '%.1f'),
    ('tf_published_hz', '/tf published (arm process)', 'Hz', '%.0f'),
    ('tf_matched_pct', 'outputs stamped with a /tf stamp', '%', '%.1f'),
    ('tf_latency_p50_ms', 'TF -> output latency p50', 'ms', '%.1f'),
    ('tf_latency_p99_ms', 'TF -> output latency p99', 'ms', '%.1f'),
    ('tf_latency_max_ms', 'TF -> output latency max', 'ms', '%.1f'),
    ('latency_p99_cycles', 'TF -> output latency p99 in cycles', 'cycles', '%.2f'),
    ('safety_latency_p50_ms', 'TF -> ~/safety latency p50', 'ms', '%.1f'),
    ('safety_latency_p99_ms', 'TF -> ~/safety latency p99', 'ms', '%.1f'),
    ('safety_first_latency_p99_ms', 'TF -> ~/safety latency p99, first answer of each stamp',
     'ms', '%.1f'),
    ('ready_pct', 'answers measured (~/safety_detail ready, minimum not -inf)', '%', '%.1f'),
    ('latency_max_cycles', 'TF -> output latency max in cycles', 'cycles', '%.2f'),
    ('cloud_matched_pct', 'camera records matched to a published cloud', '%', '%.1f'),
    ('clouds_used_pct', 'clouds used (all cameras)', '%', '%.1f'),
    ('camera_used_hz_min', 'clouds used per second, slowest camera', 'Hz', '%.1f'),
    ('cloud_latency_p50_ms', 'cloud -> output latency p50', 'ms', '%.1f'),
    ('cloud_latency_p99_ms', 'cloud -> output latency p99', 'ms', '%.1f'),
    ('cloud_latency_max_ms', 'cloud -> output latency max', 'ms', '%.1f'),
    ('node_cycles_hz', 'node cycles per second (/diagnostics)', 'Hz', '%.1f'),
    ('cycle_time_ms', 'node cycle time, mean (/diagnostics)', 'ms', '%.2f'),
    ('core_time_ms', 'of which in the core (/diagnostics)', 'ms', '%.2f'),
    ('pairs', 'records per cycle', '', '%.0f'),
    ('piece_pairs', 'piece pairs', '', '%.0f'),
    ('computed_piece_pairs', 'piece pairs computed per cycle', '', '%.0f'),
    ('cpu_node_pct', 'node CPU', '% of a core', '%.0f'),
    ('cpu_shards_pct', 'shards and aggregator CPU, together', '% of a core', '%.0f'),
    ('cpu_aggregator_pct', 'aggregator CPU', '% of a core', '%.0f'),
    ('cpu_launch_pct', 'ros2 launch process CPU', '% of a core', '%.0f'),
    ('cpu_arm_pct', 'arm publisher CPU (harness)', '% of a core', '%.0f'),
    ('cpu_bench_pct', 'this subscriber CPU (harness)', '% of a core', '%.0f'),
    ('cpu_cameras_pct', 'camera publishers CPU, together (harness)', '% of a core', '%.0f'),
    ('load_start', '1-minute load average, window start', '', '%.2f'),
    ('load_end', '1-minute load average, window end', '', '%.2f'),
)


def format_value(metric, value):
    """Return a figure as text ('not reported' for absent drop counts, '-' for NaN)."""
    if metric == 'drops_reported':
        return 'reported' if value == 1.0 else 'not reported'
    if value is None or not math.isfinite(value):
        return '-'
    fmt = next((f for m, _, _, f in METRICS if m == metric), '%.2f')
    return fmt % value


def verdict(target, value):
    """Return 'met', 'not met' or 'not measured'."""
    met = target.met(value)
    return 'not measured' if met is None else ('met' if met else 'not met')


def summary_table(results):
    """Markdown table: one line per row target, measured figure beside the target."""
    lines = ['| row | figure | measured | target (issue) | verdict | when filed |',
             '| --- | --- | --- | --- | --- | --- |']
    for row, figures, _ in results:
        for target in row.targets:
            value = figures.get(target.metric, math.nan)
            unit = next((u for m, _, u, _ in METRICS if m == target.metric), '')
            shown = format_value(target.metric, value)
            if shown not in ('-', 'reported', 'not reported') and unit:
                shown += ' ' + unit
            lines.append(f'| {row.key}: {row.title} | {target.metric} | {shown} | '
                         f'{target.text} | {verdict(target, value)} | {row.filed} |')
    return lines


def row_section(row, figures, raw):
    """Markdown section of one row: settings, every figure, drops."""
    if 'error' in raw:
        return [f'### {row.key}: {row.title}', '',
                'Not measured: %s' % raw['error'].strip().splitlines()[0], '']
    lines = [f'### {row.key}: {row.title}', '',
             f'{nodes_text(row, raw)} Publishers: arm /tf at {row.tf_rate_hz:g} Hz ('
             f"{f'{row.frames} transforms' if row.frames else 'the moving joints'} a message), "
             f'{row.obstacles} obstacle markers; {row.cameras} camera(s) 640x480 at 30 Hz '
             f"({raw.get('camera_qos', 'reliable')}, transport "
             f"{raw.get('camera_transport', 'default')}). Robot: {raw['robot']}. "
             f"{steady_text(raw)} Window {raw['wall_s']:.1f} s.", '',
             '| figure | value | unit |', '| --- | --- | --- |']
    for metric, label, unit, _ in METRICS:
        value = figures.get(metric)
        if value is not None and (math.isfinite(value) or metric.startswith('cloud')):
            lines.append(f'| {label} | {format_value(metric, value)} | {unit} |')
    for index in range(row.cameras):
        name = camera_name(index)
        lines.append(f"| {name}: published / used | {figures[f'{name}_published_hz']:.1f} / "
                     f"{figures[f'{name}_used_hz']:.1f} | Hz |")
    for shard in raw.get('shard_compute', {}):
        lines.append(f'| {shard}: cycles per second, cycle time, records, CPU, TF -> its own '
                     '~/safety p99 | '
                     + ', '.join(format_value(metric, figures.get(key, math.nan)) for metric, key
                                 in (('node_cycles_hz', f'{shard}_node_cycles_hz'),
                                     ('cycle_time_ms', f'{shard}_cycle_time_ms'),
                                     ('pairs', f'{shard}_pairs'),
                                     ('cpu_node_pct', f'cpu_{shard}_pct'),
                                     ('safety_latency_p99_ms',
                                      f'{shard}_safety_latency_p99_ms')))
                     + ' | Hz, ms, -, % of a core, ms |')
    drops = '; '.join(f'{key} = {value}' for key, value in sorted(raw['drops'].items()))
    lines += ['', f"Drops in /diagnostics: {drops or 'not reported'}.", '']
    return lines


def nodes_text(row, raw):
    """Say how the row's node(s) ran, with the parameters the row adds to the file."""
    added = ', '.join('`%s`' % p for p in raw['parameters']) or 'nothing'
    what = 'the node outputs' if not row.shards else "the aggregator's outputs"
    reads = (f' The benchmark reads {what} ~/safety and ~/safety_detail only (no ~/distances: '
             'none is built).' if row.safety_only else '')
    if not row.shards:
        return (f'Node: `rate_hz` {row.rate_hz:g}, parameter file config/gjk_distance.yaml '
                f'plus {added}.{reads}')
    return (f'{row.shards} shards and the aggregator, started by `ros2 launch '
            'launch/shards.launch.py` (parameter file config/gjk_distance.yaml, `fixed_frame` '
            'world, every shard on the one marker topic, the default deadline) with a shards '
            f'file of `rate_hz` {row.rate_hz:g} and {added}.{reads}')


def steady_text(raw):
    """Say whether the node kept up before the window (a 1 s period near rate_hz, no rebuild)."""
    if raw['steady']:
        return (f"The node kept up {raw['steady_wait_s']:.1f} s after it listed every body (a "
                f'1 s period of at least {STEADY_CYCLE_SHARE:.0%} of rate_hz cycles, no rebuild).')
    return (f"The node did not keep up within {raw['steady_wait_s']:.0f} s of listing every "
            'body; measured anyway.')


def command_line(rows, options):
    """Return the command that reproduces a run."""
    parts = ['AMENT_PREFIX_PATH=$PWD/.venv ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST '
             '.venv/bin/python -m bench.load_bench']
    if [row.key for row in rows] != list(ROW_KEYS):
        parts.append('--rows ' + ' '.join(row.key for row in rows))
    parts.append(f'--duration {options.duration:g} --warmup {options.warmup:g}')
    if options.shard_obstacles != SHARD_BASE_OBSTACLES and any(
            row.key in SHARD_ROW_KEYS for row in rows):
        parts.append(f'--shard-obstacles {options.shard_obstacles}')
    if options.camera_qos != 'reliable':
        parts.append(f'--camera-qos {options.camera_qos}')
    if options.camera_transport != 'shm':
        parts.append(f'--camera-transport {options.camera_transport}')
    return ' '.join(parts)


def markdown(results, options, context):
    """Return load_bench.md."""
    rows = [row for row, _, _ in results]
    robot = next((raw['robot'] for _, _, raw in results if 'robot' in raw), '-')
    head = [
        '# The live node under load', '',
        f"Each row: the node as a process with the launch file's parameters, real publishers in "
        f'processes of their own, {options.duration:g} s window after {options.warmup:g} s of '
        f"warm-up. Machine: {context['machine']}; revision `{context['revision']}`; "
        f"{context['date']}. Robot: {robot}. Load before: `{context['uptime_before']}`; "
        f"after: `{context['uptime_after']}`: a 1-minute load above 2 means other work competed "
        "for the 2 cores (each row gives the load over its window, and the node's CPU share and "
        'cycles per second show what it got). Targets are the '
        "issue's; 'when filed' is what the issue measured on this machine before the work.", '']
    lines = head + summary_table(results) + ['']
    if context.get('core_scaling'):
        lines += [core_scaling.markdown(context['core_scaling'], options.shard_obstacles)]
    for row, figures, raw in results:
        lines += row_section(row, figures, raw)
    lines += [
        'How the figures are measured: latency is the reception time in this process (the '
        "middleware's, from rmw's message info) minus the stamp of the input an output rests "
        'on (TF rows: outputs stamped exactly with a '
        "published /tf stamp; camera rows: the cloud stamp derived from the records' ages, "
        'matched to the stamps the camera published). Clouds used: distinct published clouds '
        'some output rests on. The node figures are its own /diagnostics counters over the '
        'window, CPU from /proc. A camera cloud is rendered once (boxes and floor, not the '
        'arm) and republished with fresh stamps.', '',
        f'Reproduce: `{command_line(rows, options)}`', '']
    return '\n'.join(lines)


def write_results(results, options, context, results_dir):
    """Write load_bench.md and load_bench.csv; return the .md path."""
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, RESULTS_NAME + '.csv'), 'w', newline='') as out:
        writer = csv.writer(out)
        writer.writerow(['row', 'metric', 'value', 'target', 'verdict', 'rate_hz',
                         'tf_rate_hz', 'frames', 'obstacles', 'cameras'])
        for row, figures, _ in results:
            targets = {t.metric: t for t in row.targets}
            for metric, value in sorted(figures.items()):
                target = targets.get(metric)
                writer.writerow([row.key, metric, '%.6g' % value,
                                 target.text if target else '',
                                 verdict(target, value) if target else '', row.rate_hz,
                                 row.tf_rate_hz, row.frames, row.obstacles, row.cameras])
    path = os.path.join(results_dir, RESULTS_NAME + '.md')
    with open(path, 'w') as report:
        report.write(markdown(results, options, context))
    return path


def print_row(row, figures):
    """Print a row's targets beside the measured figures."""
    print(f'{row.key}: {row.title}')
    for target in row.targets:
        value = figures.get(target.metric, math.nan)
        print(f'  {target.metric:<24} {format_value(target.metric, value):>12}   '
              f'target {target.text:<36} {verdict(target, value)}')
    sys.stdout.flush()


@dataclass
class Run:
    """A finished run: (row, figures, raw) per row and the machine context."""

    results: list = field(default_factory=list)
    context: dict = field(default_factory=dict)


def judged(row, measured):
    """Return ``row`` with its reference targets' values (from ``measured``) in their text."""
    targets = []
    for target in row.targets:
        if target.reference:
            target = target.against(measured)
            target = replace(target, text=f'{target.text} '
                             f'({format_value(target.metric, target.value)})')
        targets.append(target)
    return replace(row, targets=tuple(targets))


def run(rows, options, progress=print):
    """Measure every row; return a Run."""
    done = Run(context={'machine': live_node.machine(), 'revision': live_node.revision(),
                        'date': time.strftime('%Y-%m-%d %H:%M'),
                        'uptime_before': live_node.uptime()})
    measured = {}
    for row in rows:
        progress(f'load bench row {row.key}: {row.title}')
        try:
            with tempfile.TemporaryDirectory(prefix='gjk_load_bench_') as work_dir:
                raw = measure(row, options, work_dir)
        except (TimeoutError, RuntimeError) as error:
            # One row that cannot start (a node never ready on an overloaded machine) is
            # reported as not measured; the other rows still run.
            progress(f'{row.key}: not measured: {error}')
            done.results.append((judged(row, measured), {}, {'error': str(error)}))
            continue
        raw['camera_qos'] = options.camera_qos
        raw['camera_transport'] = options.camera_transport
        figures = summarise(row, raw)
        measured[row.key] = figures
        row = judged(row, measured)
        print_row(row, figures)
        done.results.append((row, figures, raw))
    if any(row.key in SHARD_ROW_KEYS for row in rows):
        # What two CPUs at once give on this machine: the ceiling of the shard rows.
        progress('core scaling: the pair engine and the interpreter alone and on two CPUs')
        done.context['core_scaling'] = core_scaling.measure(options.shard_obstacles)
    done.context['uptime_after'] = live_node.uptime()
    return done


# -- the transport table ----------------------------------------------------------------------

# (label, the camera's environment, the subscriber's environment): Fast DDS's own transports;
# the cloud publisher profile (qos.cloud_publisher_environment); UDPv4 alone on both ends, what
# a subscriber on another machine gets (here over loopback, where nothing is lost on a wire).
TRANSPORTS = (('default', False, ()), ('shm', True, ()),
              ('udp', False, ('FASTDDS_BUILTIN_TRANSPORTS=UDPv4',)))


# How long the subscriber keeps listening after the window (clouds published inside it that are
# still on their way count as arrived).
TRANSPORT_GRACE_S = 1.0


def transport_figures(published, received, window):
    """Return the figures of one transport: clouds that arrived, sequence gaps, latency."""
    start, end = window
    published = published[(published >= start) & (published < end)]
    inside = received[(received[:, 1] >= start) & (received[:, 1] < end)] if len(received) \
        else numpy.zeros((0, 3), dtype=numpy.int64)
    sequence = inside[:, 2]
    latency = (inside[:, 0] - inside[:, 1]) / 1e6
    p50, p99, most = _quantiles(latency)
    return {'published': len(published), 'arrived': len(inside),
            'arrived_pct': 100.0 * len(inside) / max(len(published), 1),
            'sequence_gaps': int(sequence.max() - sequence.min() + 1 - len(sequence))
            if len(sequence) else 0,
            'latency_p50_ms': p50, 'latency_p99_ms': p99, 'latency_max_ms': most}


def measure_transport(label, shm, listener_env, qos, options, work_dir):
    """Run one camera and one raw subscriber with a transport and QoS; return its figures."""
    children = live_node.Children(work_dir)
    camera_env = list(listener_env)
    if shm:
        camera_env += ['%s=%s' % item for item in cloud_publisher_environment(work_dir).items()]
    stamps, log = (os.path.join(work_dir, f'{label}_{qos}_{name}.txt')
                   for name in ('stamps', 'received'))
    prefix = (lambda env: ['env'] + list(env) if env else [])
    try:
        children.start('listener', prefix(listener_env) + [
            sys.executable, '-m', 'bench.load_publishers', 'listen', '--qos', qos,
            '--log', log])
        children.start('camera', prefix(camera_env) + [
            sys.executable, '-m', 'bench.load_publishers', 'camera', '--qos', qos,
            '--stamp-log', stamps])
        time.sleep(options.warmup)  # traffic before the window (discovery, first clouds)
        start = time.time_ns()
        time.sleep(options.duration)
        window = (start, time.time_ns())
        time.sleep(TRANSPORT_GRACE_S)  # what was published in the window may still arrive
        children.check()
    finally:
        children.stop()
    with open(log) as lines:
        received = numpy.array([[int(v) for v in line.split()] for line in lines if line.strip()],
                               dtype=numpy.int64).reshape(-1, 3)
    return transport_figures(read_stamps(stamps), received, window)


def transport_markdown(results, context):
    """Return transport.md: one row per (transport, QoS)."""
    lines = ['# One 640x480 camera at 30 Hz to a raw subscriber, per transport and QoS', '',
             f"Machine: {context['machine']}; revision `{context['revision']}`; "
             f"{context['date']}. Load before: `{context['uptime_before']}`; after: "
             f"`{context['uptime_after']}`. Clouds 3.7 MB (x, y, z float32); the subscriber "
             'reads each cloud header as the node does (raw). Reproduce: `python -m '
             'bench.load_bench --transport`.', '',
             '| transport | QoS | published | arrived | sequence gaps | latency p50 | p99 | max |',
             '| --- | --- | --- | --- | --- | --- | --- | --- |']
    for (label, qos), f in results:
        lines.append(f"| {label} | {qos} | {f['published']} | {f['arrived']} "
                     f"({f['arrived_pct']:.0f} %) | {f['sequence_gaps']} | "
                     f"{f['latency_p50_ms']:.1f} ms | {f['latency_p99_ms']:.1f} ms | "
                     f"{f['latency_max_ms']:.1f} ms |")
    return '\n'.join(lines) + '\n'


def run_transport(options, results_dir, progress=print):
    """Measure every transport and QoS; write transport.md; return its path."""
    context = {'machine': live_node.machine(), 'revision': live_node.revision(),
               'date': time.strftime('%Y-%m-%d %H:%M'), 'uptime_before': live_node.uptime()}
    results = []
    for label, shm, listener_env in TRANSPORTS:
        for qos in ('reliable', 'sensor_data'):
            with tempfile.TemporaryDirectory(prefix='gjk_transport_') as work_dir:
                figures = measure_transport(label, shm, listener_env, qos, options, work_dir)
            progress(f"transport {label} {qos}: {figures['arrived']} of "
                     f"{figures['published']} clouds, p99 {figures['latency_p99_ms']:.1f} ms")
            results.append(((label, qos), figures))
    context['uptime_after'] = live_node.uptime()
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, 'transport.md')
    with open(path, 'w') as out:
        out.write(transport_markdown(results, context))
    return path


def main(argv=None):
    """Run the rows asked for and write the results."""
    rows, options, results_dir, domain_id = parse_args(argv)
    if domain_id is not None:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
    if options.transport:
        print(f'results written to {run_transport(options, results_dir)}')
        return 0
    print(f'before: {live_node.uptime()}')
    done = run(rows, options)
    print(f"after: {done.context['uptime_after']}")
    path = write_results(done.results, options, done.context, results_dir)
    print(f'results written to {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
