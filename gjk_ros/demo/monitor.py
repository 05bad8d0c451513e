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
``gjk-ros demo``: run the distance node on the demo scene, print and plot the distances.

Three processes take part: the distance node and the scene publisher run as child processes
(each in its own session, so that only this process sees Ctrl-C and stops them in order), and
this process subscribes to the node's outputs like any consumer would, prints a per-pair table
and writes a plot of every pair's signed distance over time at the end.

This module imports rclpy only inside ``run_demo``, so the table and plot helpers can be used
and tested without ROS.
"""

from dataclasses import dataclass, field
import importlib.util
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

# Below this absolute signed distance (m) a pair is shown as touching: the arm moves
# continuously, so an exact zero is never sampled, and 2 mm is below what the eye reads on
# the plot.
TOUCH_TOLERANCE = 0.002
# Pairs closer than this (m) are flagged as near.
NEAR_DISTANCE = 0.05
NODE_NAME = 'gjk_distance'
# How long a child gets to exit after SIGINT, then after SIGTERM, before SIGKILL (s).
STOP_GRACE = (5.0, 2.0)
# Once running, this long (s) without a newer cycle of distances means the node or the scene
# is stuck. It counts from the last new cycle, not from the last table: a table interval longer
# than this is only a slow refresh.
DATA_TIMEOUT = 10.0
# Domain ids the demo may pick by itself (those of the test suite's locks, see conftest.py).
DEMO_DOMAIN_IDS = range(1, 101)
_ANSI_CURSOR_UP_AND_CLEAR = '\x1b[{count}F\x1b[J'
# The node's swept distances, and a tf_timeout above the scene's TF gaps (up to 0.6 s while
# the tool crosses the guard plate, demo/dropout.py): a gap is not a stale transform.
SWEPT_PARAMETERS = ('swept_distances:=true', 'tf_timeout:=1.0')


@dataclass
class DemoOptions:
    """
    Settings of one demo run (the ``gjk-ros demo`` options).

    Attributes
    ----------
    duration : float
        Seconds to run after the first distances arrive.
    plot : str
        Path of the PNG of distances over time written at the end.
    scene_plot : str
        Path of the PNG of the received ``~/markers`` (hulls, witness segments) at the instant
        of the smallest distance, written at the end.
    interval : float or None
        Seconds between table refreshes; None picks 0.5 s on a terminal, 2 s otherwise.
    domain_id : int or None
        ROS_DOMAIN_ID for this process and its children; None picks a free one (see
        ``hold_free_domain``), so the demo never talks to another graph.
    rate_hz : float
        Node compute rate and scene TF rate.
    startup_timeout : float
        Seconds to wait for the first distances (the first start compiles the kernels).
    log_dir : str or None
        Where the children's output goes; None makes a temporary folder.
    collision_objects : bool
        The scene publishes its obstacles as moveit_msgs/CollisionObject and the node reads
        them through its planning scene source (``planning_scene`` true).

    """

    duration: float = 20.0
    plot: str = 'gjk_demo_distances.png'
    scene_plot: str = 'gjk_demo_scene.png'
    interval: float = None
    domain_id: int = None
    rate_hz: float = 50.0
    startup_timeout: float = 120.0
    log_dir: str = None
    collision_objects: bool = False


@dataclass
class PairHistory:
    """
    Signed distance of every pair over time, as received.

    Attributes
    ----------
    times : dict of (str, str) to list of float
        Seconds since the first cloud, per (link, obstacle).
    distances : dict of (str, str) to list of float
        Signed distance, NaN where the record was not a measurement.
    ids : dict of (str, str) to (int, int)
        The pair's (link_id, obstacle_id), which orders pairs as the node does.

    """

    times: dict = field(default_factory=dict)
    distances: dict = field(default_factory=dict)
    ids: dict = field(default_factory=dict)
    passes: list = field(default_factory=list)

    def add(self, elapsed, records):
        """Append one cloud's records at ``elapsed`` seconds (and note any SweptContact)."""
        for record in records:
            key = (record.link, record.obstacle)
            before = self.distances[key][-1] if key in self.distances else math.nan
            if record.is_measured and before > 0.0 and record.distance > 0.0 and \
                    record.swept_distance < 0.0:
                self.passes.append(SweptContact(elapsed, str(record.link), str(record.obstacle),
                                                record.swept_distance, record.swept_fraction,
                                                before, record.distance))
            value = record.distance if record.is_measured else math.nan
            self.times.setdefault(key, []).append(elapsed)
            self.distances.setdefault(key, []).append(value)
            self.ids[key] = (record.link_id, record.obstacle_id)

    @property
    def pairs(self):
        """Return the (link, obstacle) keys in the node's order (link id, obstacle id)."""
        return sorted(self.times, key=self.ids.__getitem__)


@dataclass(frozen=True)
class SweptContact:
    """
    A cycle whose swept distance is contact while both its samples are apart.

    The node's ``swept_distance`` (a certified lower bound over the motion since its last
    cycle) is negative, and the pair's sampled distances of that cycle and of the one before
    (``before``, ``after``) are positive: a pass-through that sampling alone misses.
    """

    elapsed: float
    link: str
    obstacle: str
    swept_distance: float
    swept_fraction: float
    before: float
    after: float

    def describe(self):
        """Return one line saying what the node reported, and when."""
        return (f't = {self.elapsed:5.1f} s  {self.link} / {self.obstacle}: swept contact '
                f'{self.swept_distance:+.4f} m at {self.swept_fraction:.2f} of the interval, '
                f'both samples apart ({self.before:+.4f}, {self.after:+.4f} m)')


def contact_label(record):
    """
    Return a word that says how close a pair is.

    Parameters
    ----------
    record : gjk_ros.ros.records.DistanceRecord
        One pair from ``read_distances``.

    Returns
    -------
    str
        'PENETRATING', 'touching', 'near', 'clear', or '-' when there is no measurement.

    """
    if not record.is_measured:
        return '-'
    if record.distance < -TOUCH_TOLERANCE:
        return 'PENETRATING'
    if record.distance <= TOUCH_TOLERANCE:
        return 'touching'
    return 'near' if record.distance < NEAR_DISTANCE else 'clear'


def format_distance(record):
    """Return the signed distance with a sign and 4 decimals, or 'nan'."""
    return f'{record.distance:+.4f}' if record.is_measured else 'nan'


def format_table(records, elapsed, node_min_distance=None, passes=()):
    """
    Format the latest records as a fixed-width table.

    Parameters
    ----------
    records : list of DistanceRecord
        One per pair, with names.
    elapsed : float
        Seconds since the first cloud.
    node_min_distance : float, optional
        The fail-safe minimum of the same cloud (``fail_safe_minimum``), shown in the header.
    passes : sequence of SweptContact
        The pass-throughs so far: their count and the last one follow the table.

    Returns
    -------
    list of str
        The lines, header first.

    """
    rows = sorted(records, key=lambda r: (r.link_id, r.obstacle_id))
    measured = [r for r in rows if r.is_measured]
    header = f't = {elapsed:5.1f} s   pairs {len(rows)}'
    if measured:
        closest = min(measured, key=lambda r: r.distance)
        header += f'   closest {closest.distance:+.4f} m ({closest.link} / {closest.obstacle})'
    if node_min_distance is not None:
        header += f'   fail-safe minimum {node_min_distance:+.4f}'
    link_width = max([len('link')] + [len(str(r.link)) for r in rows])
    obstacle_width = max([len('obstacle')] + [len(str(r.obstacle)) for r in rows])
    lines = [header, f"{'link':<{link_width}}  {'obstacle':<{obstacle_width}}  "
                     f"{'distance [m]':>12}  {'status':<11}  contact"]
    for record in rows:
        lines.append(f'{str(record.link):<{link_width}}  {str(record.obstacle):<{obstacle_width}}'
                     f'  {format_distance(record):>12}  {record.status.name.lower():<11}'
                     f'  {contact_label(record)}')
    if passes:
        lines.append(f'passed through between two samples: {len(passes)} so far; last: '
                     f'{passes[-1].describe()}')
    return lines


def summary_lines(history):
    """
    Summarise a run: per pair, the smallest and largest distance and the time in contact.

    Parameters
    ----------
    history : PairHistory
        What was received.

    Returns
    -------
    list of str

    """
    lines = ['summary over the run (measured samples only):',
             f"{'link':<12}  {'obstacle':<12}  {'min [m]':>9}  {'max [m]':>9}  penetrating"]
    for key in history.pairs:
        values = [v for v in history.distances[key] if not math.isnan(v)]
        if not values:
            lines.append(f'{key[0]!s:<12}  {key[1]!s:<12}  {"no measurement":>21}')
            continue
        share = sum(v < -TOUCH_TOLERANCE for v in values) / len(values)
        lines.append(f'{key[0]!s:<12}  {key[1]!s:<12}  {min(values):+9.4f}  '
                     f'{max(values):+9.4f}  {100.0 * share:5.1f} %')
    lines.append('swept contact while both samples were positive (a pass-through only the '
                 f'swept distance sees): {len(history.passes)} cycle(s)')
    lines += ['  ' + contact.describe() for contact in history.passes]
    return lines


def plot_history(history, path):
    """
    Write a PNG of signed distance over time: one panel per link, one line per obstacle.

    Parameters
    ----------
    history : PairHistory
        What was received.
    path : str
        Output file.

    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    links = list(dict.fromkeys(str(link) for link, _ in history.pairs))
    obstacles = list(dict.fromkeys(str(obstacle) for _, obstacle in history.pairs))
    colors = {name: f'C{index % 10}' for index, name in enumerate(obstacles)}
    figure, axes = pyplot.subplots(max(len(links), 1), 1, sharex=True, squeeze=False,
                                   figsize=(9.0, 1.9 * max(len(links), 1) + 1.2))
    for axis, link in zip(axes[:, 0], links):
        for (pair_link, obstacle) in history.pairs:
            if str(pair_link) == link:
                axis.plot(history.times[(pair_link, obstacle)],
                          history.distances[(pair_link, obstacle)],
                          color=colors[str(obstacle)], label=str(obstacle), linewidth=1.2)
        axis.axhline(0.0, color='black', linewidth=0.8)
        axis.axhspan(axis.get_ylim()[0], 0.0, color='red', alpha=0.08)
        axis.set_ylabel(f'{link}\n[m]')
        axis.grid(True, alpha=0.3)
    axes[0, 0].legend(loc='lower left', bbox_to_anchor=(0.0, 1.0), ncol=max(len(obstacles), 1),
                      fontsize='small', frameon=False)
    figure.suptitle('gjk_ros demo: signed distance (MTD) per link / obstacle pair '
                    '(below 0 = penetration, gaps = no measurement)', fontsize='medium')
    axes[-1, 0].set_xlabel('time since first distances [s]')
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def node_command(rate_hz, parameters=()):
    """
    Return the command line that starts the distance node.

    Prefers the ``gjk_distance_node`` console script next to this interpreter and falls back
    to running the node module with this interpreter.

    Parameters
    ----------
    rate_hz : float
        The node's ``rate_hz``.
    parameters : sequence of str
        More ``name:=value`` parameter assignments.

    Returns
    -------
    list of str

    """
    script = os.path.join(os.path.dirname(sys.executable), 'gjk_distance_node')
    program = [script] if os.access(script, os.X_OK) else [
        sys.executable, '-c', 'import sys; from gjk_ros.ros.node import main; sys.exit(main())']
    command = program + ['--ros-args', '-r', f'__node:={NODE_NAME}',
                         '-p', 'fixed_frame:=world', '-p', f'rate_hz:={float(rate_hz)}']
    for assignment in parameters:
        command += ['-p', assignment]
    return command


def scene_command(rate_hz, collision_objects=False):
    """Return the command line that starts the demo scene publisher (with its depth camera)."""
    return [sys.executable, '-m', 'gjk_ros.demo.depth_camera', '--rate-hz', str(float(rate_hz)),
            '--obstacle-topic', f'/{NODE_NAME}/obstacles'] + (
                ['--collision-objects'] if collision_objects else [])


def _die_with_parent():
    """Ask Linux to SIGTERM the child if this process dies without stopping it."""
    try:
        import ctypes
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # Not Linux: the children still watch their parent or get stopped normally.


def start_child(command, log_path, cwd=None):
    """
    Start a child process in its own session, with output to ``log_path``.

    Parameters
    ----------
    command : list of str
        Program and arguments.
    log_path : str
        File for stdout and stderr.
    cwd : str, optional
        Working directory of the child.

    Returns
    -------
    subprocess.Popen

    """
    with open(log_path, 'wb') as log:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, cwd=cwd,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_die_with_parent if sys.platform == 'linux' else None)


def stop_child(process):
    """
    Stop a child and everything in its session: SIGINT, then SIGTERM, then SIGKILL.

    Parameters
    ----------
    process : subprocess.Popen
        A process started by ``start_child``.

    Returns
    -------
    int
        Its exit code.

    """
    for sig, grace in ((signal.SIGINT, STOP_GRACE[0]), (signal.SIGTERM, STOP_GRACE[1]),
                       (signal.SIGKILL, None)):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def log_tail(path, lines=15):
    """Return the last ``lines`` lines of a log file."""
    try:
        with open(path, encoding='utf-8', errors='replace') as log:
            return ''.join(log.readlines()[-lines:])
    except OSError:
        return ''


class TablePrinter:
    """
    Print tables, redrawing in place on a terminal and appending otherwise.

    Parameters
    ----------
    stream : file
        Where to write.

    """

    def __init__(self, stream):
        self._stream = stream
        self._in_place = stream.isatty()
        self._previous_lines = 0

    def show(self, lines):
        """Print ``lines`` as the current table."""
        if self._in_place and self._previous_lines:
            self._stream.write(_ANSI_CURSOR_UP_AND_CLEAR.format(count=self._previous_lines))
        elif self._previous_lines:
            self._stream.write('\n')
        self._stream.write('\n'.join(lines) + '\n')
        self._stream.flush()
        self._previous_lines = len(lines)

    @property
    def default_interval(self):
        """Return 0.5 s on a terminal, 2 s when the output is a file or pipe."""
        return 0.5 if self._in_place else 2.0


class SceneSnapshot:
    """
    The received ``~/markers`` at the instant of the smallest distance of the run.

    The node publishes ``~/distances`` and ``~/markers`` of a cycle one after the other, so
    when a cloud brings a new smallest distance, the next marker message is kept.
    """

    def __init__(self):
        from gjk_ros.demo.snapshot import MarkerState

        self.state = MarkerState()
        self.closest = math.inf
        self.markers = None
        self.elapsed = None
        self._elapsed_now = 0.0
        self._wanted = False

    def on_records(self, records, elapsed):
        """Note a cloud's records; the next markers are kept if it holds a new minimum."""
        self._elapsed_now = elapsed
        distances = [r.distance for r in records if r.is_measured]
        if distances and min(distances) < self.closest:
            self.closest = min(distances)
            self._wanted = True

    def on_markers(self, array, now):
        """Apply a MarkerArray received at ``now`` (monotonic seconds)."""
        self.state.apply(array, now)
        if self._wanted or self.markers is None:
            self.markers = self.state.live(now)
            self.elapsed = self._elapsed_now
            self._wanted = False


class LatestCycle:
    """
    The newest cycle of ``~/distances`` the monitor received, on the data's own clock.

    The node stamps a cycle with the oldest datum it rests on, so ``elapsed`` (the latest
    stamp minus the first) moves on only while the scene keeps publishing; ``progressed_at``
    is when (monotonic seconds) it last did. A stalled scene or node is noticed from it.

    Attributes
    ----------
    records : list of DistanceRecord or None
        The latest cycle's records (None before the first).
    min_distance : float or None
        The fail-safe minimum of the same cycle, rebuilt from its records.
    elapsed : float
        Seconds of data time since the first cycle.
    progressed_at : float
        Monotonic time of the last cycle with a newer stamp (of the start before the first).

    """

    def __init__(self, now):
        self.records = None
        self.min_distance = None
        self.elapsed = 0.0
        self.progressed_at = now
        self._first_stamp = None

    def add(self, records, stamp, now):
        """Take a cycle's records, stamped ``stamp`` (s of ROS time), received at ``now``."""
        from gjk_ros.ros.records import fail_safe_minimum

        if self._first_stamp is None:
            self._first_stamp = stamp
        elapsed = stamp - self._first_stamp
        if self.records is None or elapsed > self.elapsed:
            self.progressed_at = now
        self.elapsed = elapsed
        self.records = records
        self.min_distance = fail_safe_minimum(records, max_distance=math.inf)


def _make_monitor(history, snapshot):
    """Create the monitor node (rclpy must be initialised)."""
    from gjk_ros.ros.listener import DistanceListener, STREAM_QOS
    from rclpy.node import Node
    from visualization_msgs.msg import MarkerArray

    class DemoMonitor(Node):
        """Keep the latest cycle, the history of every pair and the scene snapshot."""

        def __init__(self):
            super().__init__('gjk_demo_monitor')
            self.cycle = LatestCycle(time.monotonic())
            self.listener = DistanceListener(self, self._on_records, f'/{NODE_NAME}')
            self.create_subscription(MarkerArray, f'/{NODE_NAME}/markers', self._on_markers,
                                     STREAM_QOS)

        def _on_markers(self, array):
            snapshot.on_markers(array, time.monotonic())

        def _on_records(self, records, header):
            if not records or any(r.link is None or r.obstacle is None for r in records):
                # No bodies yet, or a body newer than our names message (its update is on
                # the way): nothing to show.
                return
            self.cycle.add(records, header.stamp.sec + 1e-9 * header.stamp.nanosec,
                           time.monotonic())
            history.add(self.cycle.elapsed, records)
            snapshot.on_records(records, self.cycle.elapsed)

    return DemoMonitor()


def hold_free_domain():
    """
    Pick a ROS domain id no test or other demo on this machine holds, and hold it.

    The same per-id lock files as the test suite's (``test/conftest.py``): an exclusive
    ``flock`` on ``<tmp>/gjk_ros_test_domains/<id>.lock`` for ids 1 to 100, released when the
    returned file is closed or the process ends. Domain 0, every stray node's default, is
    never used.

    Returns
    -------
    tuple of (int, file)
        The id and the open lock file.

    """
    import fcntl

    lock_dir = os.path.join(tempfile.gettempdir(), 'gjk_ros_test_domains')
    os.makedirs(lock_dir, exist_ok=True)
    start = os.getpid() % len(DEMO_DOMAIN_IDS)
    for offset in range(len(DEMO_DOMAIN_IDS)):
        domain_id = DEMO_DOMAIN_IDS[(start + offset) % len(DEMO_DOMAIN_IDS)]
        handle = open(os.path.join(lock_dir, f'{domain_id}.lock'), 'a')
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        return domain_id, handle
    raise RuntimeError('every ROS domain id from 1 to 100 is held by tests or demos; '
                       'pass --domain-id')


class _Stop(Exception):
    """Raised from the SIGTERM handler to leave the run loop cleanly."""


def _raise_stop(signum, frame):
    raise _Stop()


def run_demo(options, out=None):
    """
    Run the demo: start the node and the scene, monitor, plot, stop everything.

    Parameters
    ----------
    options : DemoOptions
        Settings.
    out : file, optional
        Where to print (default stdout).

    Returns
    -------
    int
        0 when distances were received and plotted, 1 otherwise.

    """
    out = sys.stdout if out is None else out
    if options.collision_objects and importlib.util.find_spec('moveit_msgs') is None:
        print('--collision-objects needs the moveit_msgs messages, which are not installed '
              '(make venv builds them)', file=out, flush=True)
        return 1
    domain_lock = None
    if options.domain_id is None:
        domain_id, domain_lock = hold_free_domain()
    else:
        domain_id = options.domain_id
    os.environ['ROS_DOMAIN_ID'] = str(domain_id)
    try:
        return _run(options, out)
    finally:
        if domain_lock is not None:
            domain_lock.close()


def _run(options, out):
    """Run the demo on the domain set in the environment."""
    log_dir = options.log_dir or tempfile.mkdtemp(prefix='gjk_demo_')
    os.makedirs(log_dir, exist_ok=True)
    logs = {'node': os.path.join(log_dir, 'node.log'),
            'scene': os.path.join(log_dir, 'scene.log')}
    print(f"gjk-ros demo: ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, "
          f'node and scene output in {log_dir}', file=out, flush=True)
    history, snapshot = PairHistory(), SceneSnapshot()
    from gjk_ros.demo.depth_camera import DEPTH_CAMERA_PARAMETERS
    children = {}
    previous_sigterm = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        scene_input = ['planning_scene:=true'] if options.collision_objects else []
        children['node'] = start_child(
            node_command(options.rate_hz, list(DEPTH_CAMERA_PARAMETERS) + scene_input
                         + list(SWEPT_PARAMETERS)), logs['node'])
        children['scene'] = start_child(
            scene_command(options.rate_hz, options.collision_objects), logs['scene'])
        status = _monitor(options, history, snapshot, children, logs, out)
    except (KeyboardInterrupt, _Stop):
        print('\nstopped by signal', file=out, flush=True)
        status = 0 if history.pairs else 1
    finally:
        for name in ('scene', 'node'):
            if name in children:
                stop_child(children[name])
        signal.signal(signal.SIGTERM, previous_sigterm)
    return _finish(history, snapshot, options, out) if status == 0 else status


def _finish(history, snapshot, options, out):
    """Print the summary and write the plots; return the exit status."""
    if not history.pairs:
        print('no distances were received', file=out, flush=True)
        return 1
    print('\n'.join(summary_lines(history)), file=out)
    plot_history(history, options.plot)
    print(f'plot written to {os.path.abspath(options.plot)}', file=out, flush=True)
    _write_scene_plot(snapshot, options.scene_plot, out)
    return 0


def _write_scene_plot(snapshot, path, out):
    """Render the snapshot of ~/markers (a note in the title if none arrived)."""
    from gjk_ros.demo.snapshot import render_markers

    if snapshot.markers is None:
        title = f'no ~/markers received from /{NODE_NAME}'
    else:
        title = (f'/{NODE_NAME}/markers at t = {snapshot.elapsed:.1f} s, smallest distance '
                 f'{snapshot.closest:+.3f} m')
    render_markers(snapshot.markers or [], path, title)
    count = len(snapshot.markers or [])
    print(f'scene ({count} markers) written to {os.path.abspath(path)}', file=out, flush=True)


def _monitor(options, history, snapshot, children, logs, out):
    """Spin the monitor node until the run is over; return 0 or 1."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    try:
        monitor = _make_monitor(history, snapshot)
        executor = SingleThreadedExecutor()
        executor.add_node(monitor)
        return watch(executor, monitor.cycle, TablePrinter(out), options, children, logs, out,
                     passes=history.passes)
    finally:
        rclpy.try_shutdown()


def watch(executor, cycle, printer, options, children, logs, out, data_timeout=DATA_TIMEOUT,
          passes=()):
    """
    Wait for the first distances, then show tables until ``options.duration`` of data time.

    Parameters
    ----------
    executor : rclpy executor
        Spun (``spin_once``) to receive; the callbacks fill ``cycle``.
    cycle : LatestCycle
        The latest distances.
    printer : TablePrinter
        Shows the tables: the first at once, one every ``options.interval`` of data time,
        the last at ``options.duration``.
    options : DemoOptions
        ``startup_timeout``, ``interval``, ``duration``.
    children : dict of str to subprocess.Popen
        Processes whose death ends the run.
    logs : dict of str to str
        Each child's log file, whose tail a failure message shows.
    out : file
        Where messages go.
    data_timeout : float
        Seconds without a newer cycle after which the node or the scene counts as stuck.
    passes : list of SweptContact
        The pass-throughs seen so far (filled as the cycles come), shown under each table.

    Returns
    -------
    int
        0 after the last table, 1 when the distances did not come or stopped.

    """
    interval = options.interval or printer.default_interval
    print('waiting for the first distances from the gjk_distance node (a minute longer when '
          'gjk-ros warmup has not compiled its kernels)...', file=out, flush=True)
    started = time.monotonic()
    if not _spin_until(executor, lambda: cycle.records is not None, options.startup_timeout,
                       lambda: started, children, logs, out):
        return 1
    next_table = 0.0
    while True:
        target = min(next_table, options.duration)
        if not _spin_until(executor, lambda: cycle.elapsed >= target, data_timeout,
                           lambda: cycle.progressed_at, children, logs, out):
            return 1
        printer.show(format_table(cycle.records, cycle.elapsed, cycle.min_distance, passes))
        if cycle.elapsed >= options.duration:
            return 0
        next_table = cycle.elapsed + interval


def _spin_until(executor, condition, timeout, since, children, logs, out):
    """
    Spin until ``condition()`` holds; False (with a message) on a timeout or a dead child.

    The wait fails ``timeout`` seconds after ``since()`` (monotonic), which is asked again on
    every turn, so that the deadline moves on while data keeps coming.
    """
    while not condition():
        for name, process in children.items():
            if process.poll() is not None:
                print(f'the {name} process exited with code {process.returncode}; '
                      f'last lines of {logs[name]}:\n{log_tail(logs[name])}', file=out,
                      flush=True)
                return False
        if time.monotonic() > since() + timeout:
            print(f'no new distances from /{NODE_NAME} within {timeout:g} s; node log tail:\n'
                  f"{log_tail(logs['node'])}", file=out, flush=True)
            return False
        executor.spin_once(timeout_sec=0.05)
    return True
