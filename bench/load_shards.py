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
The load benchmark's shard rows: a sharded robot started as a user starts one, and its figures.

A row with ``shards`` writes a shards file (docs/shards.md) and runs ``ros2 launch
launch/shards.launch.py`` with it: one ``gjk_distance`` process per shard in the namespace
``/s<i>``, each with the launch file's parameter file (``config/gjk_distance.yaml``) plus its
overrides, every shard's ``~/obstacles`` remapped onto the one marker topic the arm publishes
(``obstacles_topic``), and the ``gjk_aggregator`` at the root with its default deadline.

- **split by obstacles**: complementary patterns over the arm's marker names (``bench/<i>``):
  shard 0 takes the even indices (``obstacle_include``), shard 1 the rest (the same pattern
  as ``obstacle_exclude``): half each, whatever the count;
- **split by cameras**: each shard reads its own cameras (``observation_sources`` with their
  blocks), the first ``obstacle_include`` its cameras and the last ``obstacle_exclude`` every
  other shard's (a source is the obstacle of its name).

The aggregated answer at any moment rests on the latest cycle of every shard, so what it says
about a camera is what the latest cycle of the shard that reads it says: ``aggregate_samples``
pairs each aggregator output with the latest records of every shard received before it.
"""

import os
import sys

from bench import live_node
import numpy
import yaml

# The obstacle split: bench_obstacles names its markers bench/<index>.
EVEN_MARKERS = 'bench/*[02468]'
AGGREGATOR = '/gjk_aggregator'
LAUNCH_FILE = os.path.join(live_node.REPO_ROOT, 'launch', 'shards.launch.py')


def shard_name(index):
    """Return shard ``index``'s name (its namespace under the root)."""
    return f's{index}'


def shard_nodes(count):
    """Return the fully qualified node names of ``count`` shards."""
    return [f'/{shard_name(index)}/gjk_distance' for index in range(count)]


def camera_split(cameras, count):
    """Return the camera indices of each of ``count`` shards (consecutive, as even as can be)."""
    return [list(part) for part in numpy.array_split(numpy.arange(cameras), count)]


def scope(row, index):
    """Return shard ``index``'s scope parameters: complementary patterns (module docstring)."""
    if not row.cameras:
        key = 'obstacle_include' if index == 0 else 'obstacle_exclude'
        return {key: [EVEN_MARKERS]}
    from bench.load_publishers import camera_name

    parts = camera_split(row.cameras, row.shards)
    if index < row.shards - 1:
        return {'obstacle_include': [camera_name(i) for i in parts[index]]}
    return {'obstacle_exclude': [camera_name(i) for part in parts[:-1] for i in part]}


def nested(parameters):
    """Return ``{'camera0.type': ...}`` keys as the YAML block ``{'camera0': {'type': ...}}``."""
    tree = {}
    for name, value in parameters.items():
        *blocks, key = name.split('.')
        branch = tree
        for block in blocks:
            branch = branch.setdefault(block, {})
        branch[key] = value
    return tree


def shards_document(row, parameters_of):
    """
    Return the shards file of a row as a dict (``gjk_ros/ros/shards/plan.py`` reads it).

    ``parameters_of(cameras)`` returns the row's ``{name: value}`` for a node reading those
    camera indices (``load_bench.row_parameters``).
    """
    if row.cameras:
        parts = camera_split(row.cameras, row.shards)
    elif row.shards == 2:
        parts = [[], []]
    else:
        raise ValueError('obstacle rows split in two shards only (even and odd markers)')
    shards = {}
    for index, cameras in enumerate(parts):
        parameters = dict(parameters_of(cameras), rate_hz=float(row.rate_hz),
                          **scope(row, index))
        shards[shard_name(index)] = {'parameters': nested(parameters)}
        if row.one_core:
            shards[shard_name(index)]['cpus'] = [instance_cpu(index)]
    return {'shards': shards}


def write_shards_file(row, parameters_of, work_dir):
    """Write the row's shards file into ``work_dir``; return its path."""
    path = os.path.join(work_dir, 'shards.yaml')
    with open(path, 'w') as out:
        yaml.safe_dump(shards_document(row, parameters_of), out, default_flow_style=None)
    return path


def instance_cpu(index):
    """Return the CPU of instance ``index`` of a one-core row: this process's CPUs in order."""
    cpus = sorted(os.sched_getaffinity(0))
    if index >= len(cpus):
        raise RuntimeError(f'instance {index} needs a CPU of its own; this process may use '
                           f'{len(cpus)}')
    return cpus[index]


def ros2_command():
    """Return the ``ros2`` command of this Python's environment; raise naming what is missing."""
    ros2 = os.path.join(os.path.dirname(sys.executable), 'ros2')
    if not os.access(ros2, os.X_OK):
        raise RuntimeError(f'no ros2 command next to {sys.executable}: the shard rows start '
                           'launch/shards.launch.py (make ros-tools installs the launch stack)')
    return ros2


def launch_command(shards_file, ros2=None):
    """Return ``ros2 launch launch/shards.launch.py`` with the benchmark's arguments."""
    from gjk_ros.demo.monitor import NODE_NAME

    return [ros2 or ros2_command(), 'launch', LAUNCH_FILE, f'shards_file:={shards_file}',
            f'params_file:={live_node.PARAMS_FILE}', 'fixed_frame:=world',
            f'obstacles_topic:=/{NODE_NAME}/obstacles']


def shard_pids(instances):
    """Return {shard or 'aggregator': pid} from the ``instance`` texts (``host:pid``) heard."""
    pids = {}
    for node, instance in instances.items():
        name = 'aggregator' if node == AGGREGATOR else node.strip('/').split('/')[0]
        pids[name] = int(instance.rsplit(':', 1)[1])
    return pids


def aggregate_samples(safety, shard_samples):
    """
    Return one sample per aggregator output: its receive time, stamp and the camera stamps.

    ``safety``: (receive_ns, stamp_ns) of the aggregator's outputs; ``shard_samples``: {shard:
    [(receive_ns, stamp_ns, counts, {camera: stamp_ns}), ...]} in receive order. A shard
    publishes its records before its summary, so the records it sent last before an aggregator
    output are those of the cycle the output rests on.
    """
    samples = []
    latest = {shard: (numpy.array([s[0] for s in mine], dtype=numpy.int64), mine)
              for shard, mine in shard_samples.items()}
    for received, stamp in safety:
        cameras = {}
        for times, mine in latest.values():
            at = int(numpy.searchsorted(times, received, side='right')) - 1
            if at >= 0:
                cameras.update(mine[at][3])
        samples.append((received, stamp, None, cameras))
    return samples


def first_arrivals(safety):
    """Return the (receive_ns, stamp_ns) rows of ``safety`` whose stamp arrives the first time."""
    rows = numpy.asarray(safety, dtype=numpy.int64).reshape(-1, 2)
    if not len(rows):
        return rows
    order = numpy.argsort(rows[:, 0], kind='stable')
    _, first = numpy.unique(rows[order, 1], return_index=True)
    return rows[order[numpy.sort(first)]]
