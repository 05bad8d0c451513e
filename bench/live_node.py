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
What the benchmarks of the running node share: its processes, its diagnostics, the machine.

The node benchmarks (``bench.node_bench``, ``bench.load_bench``) start the ``gjk_distance``
node and their publishers as child processes, spin a subscriber in their own process and read
figures from three places: the node's outputs (stamps, records), its ``/diagnostics`` (its own
per-period counters) and ``/proc`` (CPU time of each process). This module holds those pieces
once; it imports rclpy only inside the functions that need it.
"""

import json
import os
import platform
import subprocess
import time

import numpy

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(REPO_ROOT, 'bench', 'results')
# The parameter file the launch file passes (README: launch settings).
PARAMS_FILE = os.path.join(REPO_ROOT, 'config', 'gjk_distance.yaml')


# -- processes -------------------------------------------------------------------------------

def process_cpu_seconds(pid):
    """
    Return the user + system CPU seconds used so far by process ``pid`` (all its threads).

    Reads fields 14 and 15 of ``/proc/<pid>/stat`` (after the parenthesised command name,
    which may contain spaces); 0 once the process is gone.
    """
    try:
        with open(f'/proc/{pid}/stat') as stat:
            fields = stat.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0.0
    # fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def parent_pid(pid):
    """Return the parent pid of process ``pid`` (field 4 of ``/proc/<pid>/stat``), or None."""
    try:
        with open(f'/proc/{pid}/stat') as stat:
            return int(stat.read().rsplit(')', 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def launch_node_command(rate_hz, parameters=(), params_file=PARAMS_FILE):
    """
    Return the node's command line as the launch file starts it, plus ``name:=value`` overrides.

    The launch file passes ``config/gjk_distance.yaml``; ``node_command`` adds the demo's node
    name, ``fixed_frame`` world and ``rate_hz``.
    """
    from gjk_ros.demo.monitor import node_command

    command = node_command(rate_hz, parameters)
    # The parameter file goes first: the -p overrides after it win (rcl applies them in order).
    at = command.index('--ros-args') + 1
    return command[:at] + ['--params-file', params_file] + command[at:]


class Children:
    """
    Child processes of one measurement (started in their own sessions, stopped together).

    Parameters
    ----------
    work_dir : str
        Where each child's log goes (``<name>.log``).

    """

    def __init__(self, work_dir):
        self._work_dir = work_dir
        self.processes = {}

    def start(self, name, command, cwd=REPO_ROOT):
        """Start ``command`` as child ``name``; return its pid."""
        from gjk_ros.demo.monitor import start_child

        log = os.path.join(self._work_dir, f'{name}.log')
        self.processes[name] = (start_child(command, log, cwd=cwd), log)
        return self.processes[name][0].pid

    def check(self):
        """Raise RuntimeError with its log tail when a child has exited."""
        from gjk_ros.demo.monitor import log_tail

        for name, (process, log) in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f'{name} exited with code {process.returncode}:\n'
                                   f'{log_tail(log)}')

    def pids(self):
        """Return {name: pid} of every child."""
        return {name: process.pid for name, (process, _) in self.processes.items()}

    def stop(self):
        """Stop every child, the last started first (publishers before the node)."""
        from gjk_ros.demo.monitor import stop_child

        for name in reversed(list(self.processes)):
            stop_child(self.processes[name][0])


def spin_for(executor, seconds, children):
    """Spin ``executor`` for ``seconds``, raising when a child dies."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        children.check()
        executor.spin_once(timeout_sec=0.01)


def spin_until(executor, condition, timeout, children):
    """
    Spin until ``condition()``.

    Raises TimeoutError after ``timeout`` s, RuntimeError as soon as a child dies.
    """
    end = time.monotonic() + timeout
    while not condition():
        children.check()
        if time.monotonic() > end:
            raise TimeoutError(f'timed out after {timeout:g} s waiting for the node')
        executor.spin_once(timeout_sec=0.05)


# -- what the node says -----------------------------------------------------------------------

def compute_values(message):
    """
    Return the key/values of the node's compute entry in a DiagnosticArray, or None.

    The node publishes one ``DiagnosticStatus`` named ``<node>: compute`` per diagnostics
    period, with ``cycles``, ``compute_time_mean_ms``, ``cycle_time_mean_ms``, ``pairs``,
    ``computed_piece_pairs``, ``cache_hit_rate``, ``rebuilds`` and more over that period.
    """
    for status in message.status:
        if status.name.endswith(': compute'):
            return {entry.key: entry.value for entry in status.values}
    return None


def drop_counts(message):
    """
    Return {'<entry>: <key>': value} of every diagnostics value whose key names drops.

    Any key containing 'drop' counts (dropped messages, clouds, transforms), in any entry; an
    empty dict means the node reports none.
    """
    return {f'{status.name}: {entry.key}': entry.value for status in message.status
            for entry in status.values if 'drop' in entry.key.lower()}


def names_listed(names_json, links, obstacles):
    """Tell whether a ``~/names`` JSON text lists at least ``links`` links and ``obstacles``."""
    if names_json is None:
        return False
    names = json.loads(names_json)
    return (len(names.get('links', [])) >= links
            and len(names.get('obstacles', [])) >= obstacles)


def percentile(values, share):
    """Return the ``share`` (0..1) quantile of ``values`` (linear interpolation)."""
    return float(numpy.quantile(numpy.asarray(values, dtype=float), share))


# -- the machine ------------------------------------------------------------------------------

def revision():
    """Return ``git describe --always --dirty`` of the checkout, or 'unknown'."""
    try:
        return subprocess.run(['git', 'describe', '--always', '--dirty'], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return 'unknown'


def machine():
    """Return the CPU model, core count and Python version."""
    model = platform.processor() or 'unknown CPU'
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            model = next(line.split(':', 1)[1].strip() for line in cpuinfo
                         if line.startswith('model name'))
    except (OSError, StopIteration):
        pass
    return f'{model}, {os.cpu_count()} cores, Python {platform.python_version()}'


def uptime():
    """Return ``uptime``'s line (load averages), or the 1/5/15 min load averages."""
    try:
        return subprocess.run(['uptime'], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return 'load average: %.2f, %.2f, %.2f' % os.getloadavg()
