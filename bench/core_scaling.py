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
How much a second core adds on this machine: the same work alone on one CPU, then on two at once.

Shards are separate processes, so the most two shards can do is what two CPUs do at once. On a
virtual machine that is not always twice one CPU: vCPUs can share a physical core, caches and
memory bandwidth with each other and with other tenants. This measures it with the node's own
work, each process pinned to its CPU (``os.sched_setaffinity``) and started together:

- **pair update**: the compiled pair engine (``core.pairset.PairSet.update``, one thread) on a
  seeded scene of 11 link hulls against ``obstacles`` boxes, the links moving a little each
  step, as a shard's cycle does;
- **interpreter**: a loop of plain Python, the share of a cycle that is not compiled.

``efficiency`` is the time of one step alone over its time with both CPUs busy: two shards on
this machine do at most ``2 x efficiency`` times the work of one in the same time, before the
aggregator, the publishers and the middleware take their share.

Run: ``.venv/bin/python -m bench.core_scaling`` (``--obstacles``, ``--steps``); the load
benchmark runs it beside its shard rows. It asserts nothing.
"""

import argparse
import itertools
import multiprocessing
import os
import statistics
import time

import numpy

LINKS = 11
# Steps each process times; it reports their median.
DEFAULT_STEPS = 400


def scene(obstacles, seed=11):
    """Return (bodies, pairs, link poses over time, obstacle poses) of a seeded scene."""
    from gjk_ros.core import ConvexPolytope
    rng = numpy.random.default_rng(seed)
    links = [ConvexPolytope.from_points(rng.normal(size=(24, 3)) * (0.04, 0.04, 0.1))
             for _ in range(LINKS)]
    boxes = [ConvexPolytope.box(rng.uniform(0.02, 0.1, 3)) for _ in range(obstacles)]
    pairs = numpy.array([(link, LINKS + obstacle) for link in range(LINKS)
                         for obstacle in range(obstacles)], dtype=numpy.int64)
    poses = numpy.tile(numpy.eye(4), (LINKS + obstacles, 1, 1))
    poses[LINKS:, :3, 3] = rng.uniform(-1.0, 1.0, size=(obstacles, 3))
    poses[:LINKS, :3, 3] = rng.uniform(-0.3, 0.3, size=(LINKS, 3))
    drift = rng.uniform(-0.002, 0.002, size=(LINKS, 3))
    return links + boxes, pairs, poses, drift


def _pair_update(obstacles):
    """Return one step of the pair engine on the seeded scene (made and compiled now)."""
    from gjk_ros.core.pairset import PairSet
    bodies, pairs, poses, drift = scene(obstacles)
    pair_set = PairSet(bodies, pairs, threads=1)
    pair_set.update(poses, max_distance=1.0)  # compiles or loads the kernel: not timed
    steps = itertools.count()

    def step():
        # Back and forth, 50 steps each way: the links stay in the scene.
        poses[:LINKS, :3, 3] += drift * (1 if (next(steps) // 50) % 2 == 0 else -1)
        pair_set.update(poses, max_distance=1.0)
    return step


def _interpreter():
    """Return one step of plain Python."""
    def step():
        total = 0
        for value in range(20_000):
            total += value * value % 7
        return total
    return step


WORKLOADS = {'pair update': _pair_update, 'interpreter': _interpreter}


def _run(cpu, workload, arguments, steps, ready, start, results):
    os.sched_setaffinity(0, {cpu})
    step = WORKLOADS[workload](*arguments)
    ready.put(cpu)
    start.wait()  # every process times only its steps, all at once
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
    results.put((cpu, statistics.median(times)))


def median_step(cpus, workload, arguments, steps):
    """Return {cpu: median seconds per step} of ``workload`` run at once on each of ``cpus``."""
    context = multiprocessing.get_context('spawn')
    ready, start, results = context.Queue(), context.Event(), context.Queue()
    processes = [context.Process(target=_run, args=(cpu, workload, arguments, steps, ready,
                                                    start, results)) for cpu in cpus]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=600)
    start.set()
    medians = dict(results.get(timeout=600) for _ in processes)
    for process in processes:
        process.join()
    return medians


def measure(obstacles=1000, steps=DEFAULT_STEPS):
    """Return one row per workload: ms alone, ms with both CPUs busy, efficiency."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        raise RuntimeError('core scaling needs two CPUs; this process may use %d' % len(cpus))
    rows = []
    for workload, arguments in (('pair update', (obstacles,)), ('interpreter', ())):
        alone = median_step(cpus[:1], workload, arguments, steps)[cpus[0]]
        slower = max(median_step(cpus, workload, arguments, steps).values())
        rows.append({'workload': workload, 'alone_ms': 1e3 * alone,
                     'together_ms': 1e3 * slower, 'efficiency': alone / slower})
    return rows


def markdown(rows, obstacles):
    """Return the table of ``measure``'s rows."""
    lines = [f'Two CPUs at once (`bench/core_scaling.py`, {LINKS} link hulls x {obstacles} '
             'boxes for the pair update; each process pinned to its CPU, median step):', '',
             '| workload | alone, ms | both CPUs busy, ms | efficiency | two shards at most |',
             '| --- | --- | --- | --- | --- |']
    lines += [f"| {row['workload']} | {row['alone_ms']:.3f} | {row['together_ms']:.3f} | "
              f"{row['efficiency']:.2f} | {2 * row['efficiency']:.2f}x one |" for row in rows]
    return '\n'.join(lines) + '\n'


def main(argv=None):
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--obstacles', type=int, default=1000)
    parser.add_argument('--steps', type=int, default=DEFAULT_STEPS)
    options = parser.parse_args(argv)
    print(markdown(measure(options.obstacles, options.steps), options.obstacles))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
