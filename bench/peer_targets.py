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
Peer targets: the cases where a peer library is the one to beat, each measured beside it.

One function per row, each returning a ``Row``: the case, gjk_ros's figure, the peer's, the
target, the verdict and why (counters where the core has them). The scene rows read the main
run's timings; the single-call rows run ``bench.single_call`` (``DistanceQuery`` against coal's
``ComputeDistance`` functor, like with like), the batch rows ``bench.planning_bench`` (a tracked
trajectory against Pinocchio + coal's ``computeDistances``, on example-robot-data arms), the
start-up row ``bench.startup`` (which needs a ROS graph). A row whose measurement could not run
says "not measured" and why, never a figure.
"""

from dataclasses import dataclass
import math
import statistics

from .single_call import CALL_COLD, CALL_TRACKED, COAL_COLD, COAL_WARM, QUERY_COLD, QUERY_TRACKED

__all__ = ['Row', 'measure_extras', 'section']

SINGLE_CALL_VERTICES = 8
TARGET_STARTUP_S = 3.0
COLD_SIZE = 2048
EXACT = 1e-9
MAIN = 'gjk_batch_track_hc'
# The planner workload inside make bench: fewer configurations than its own default.
PLANNING_ARGS = ['--configs', '300', '--reps', '3', '--checked', '3']


@dataclass
class Row:
    """One line of the peer-target table (times in microseconds, None when not measured)."""

    case: str
    ours: object
    peer: str
    peer_value: object
    target: str
    met: object
    why: str
    unit: str = 'us'


def measure_extras(quick):
    """
    Run the measurements the scene runs do not cover: single calls, batches, start-up.

    Returns
    -------
    dict
        ``single_call``: bench.single_call rows; ``planning``: bench.planning_bench rows or
        None, ``planning_error`` why not; ``startup``: seconds per run or None,
        ``startup_error`` why not.

    """
    from . import planner_checks, planning_bench, single_call, startup
    steps, repeats = (300, 3) if quick else (2000, 7)
    extras = {'single_call': single_call.measure(SINGLE_CALL_VERTICES, steps, repeats)}
    arguments = ['--quick', '--robots', 'ur5'] if quick else PLANNING_ARGS
    _attempt(extras, 'planning',
             lambda: planning_bench.measure(planning_bench.parse_arguments(arguments)))
    _attempt(extras, 'planner_checks', lambda: planner_checks.measure(
        planner_checks.parse_arguments(['--quick'] if quick else [])))
    _attempt(extras, 'startup', lambda: startup.measure(1 if quick else 3, timeout=120.0))
    return extras


def _attempt(extras, name, measure):
    """Store ``measure()`` as ``extras[name]``, or None and why in ``extras[name + '_error']``."""
    extras[name], extras[name + '_error'] = None, None
    try:
        extras[name] = measure()
    except Exception as error:  # noqa: B902 -- a missing extra or ROS graph: the row says why
        extras[name + '_error'] = '%s: %s' % (type(error).__name__, error)


def _single(rows, method):
    """Microseconds per call of one bench.single_call method, or None."""
    found = [row[2] for row in rows if row[1] == method]
    return found[0] if found else None


def row_single_tracked(single):
    """Judge a tracked DistanceQuery (8 vertices) against coal's warm functor: <= coal."""
    ours, peer = _single(single, QUERY_TRACKED), _single(single, COAL_WARM)
    met = None if ours is None or peer is None else ours <= peer
    call = _single(single, CALL_TRACKED)
    return Row('single pair per Python call, tracked, %d vertices (`DistanceQuery`)'
               % SINGLE_CALL_VERTICES, ours, 'coal warm', peer, '<= coal', met,
               'one numba dispatch of 7 byte buffers (%s us with `signed_distance`, which '
               'builds a DistanceResult per call)' % _figure_or_dash(call))


def row_single_cold(single):
    """Judge a cold DistanceQuery (8 vertices) against coal's default guess: <= 2x coal."""
    ours, peer = _single(single, QUERY_COLD), _single(single, COAL_COLD)
    met = None if ours is None or peer is None else ours <= 2.0 * peer
    call = _single(single, CALL_COLD)
    return Row('single pair per Python call, cold, %d vertices (`DistanceQuery`)'
               % SINGLE_CALL_VERTICES, ours, 'coal', peer, '<= 2x coal', met,
               'as above (%s us with `signed_distance`)' % _figure_or_dash(call))


def _figure_or_dash(value):
    return '-' if value is None else '%.1f' % value


def row_batch(extras, robot):
    """Judge a planner's batch on one arm against Pinocchio + coal: faster, and exact."""
    case = 'batch against batch, %s: all pairs per configuration, FK included' % robot
    found = [row for row in extras.get('planning') or [] if row.get('robot') == robot]
    if not found or 'pinocchio_coal_us_per_config_median' not in found[0]:
        why = extras.get('planning_error') or (found[0].get('pinocchio') if found else None)
        return Row(case, None, 'Pinocchio + coal', None, 'faster, exact', None,
                   'not measured: %s' % (why or 'skipped'))
    row = found[0]
    ours, peer = row['gjk_us_per_config_median'], row['pinocchio_coal_us_per_config_median']
    return Row(case, ours, 'Pinocchio + coal', peer, 'faster, exact',
               ours < peer and row['gjk_max_error'] <= EXACT,
               '%d piece pairs; %.2f GJK iterations per pair; error %.1e (coal %.1e)'
               % (row['piece_pairs'], row['gjk_iterations_per_pair'], row['gjk_max_error'],
                  row['coal_max_error']))


def _separated_scenes(table, size):
    return [(distance, rotation) for distance, rotation in table.scenes()
            if distance != 'overlap' and table.get(MAIN, size, distance, rotation)]


def row_cold_2048(table):
    """First (cold) PairSet query at 2048 vertices against MuJoCo: target <= MuJoCo."""
    scenes = _separated_scenes(table, COLD_SIZE)
    if not scenes:
        return Row('cold query, %d vertices (PairSet)' % COLD_SIZE, None, 'MuJoCo', None,
                   '<= MuJoCo', None, 'no %d-vertex scene in this run' % COLD_SIZE)
    ours = [table.value('cold_ns', MAIN, COLD_SIZE, d, r) / 1e3 for d, r in scenes]
    peer = [table.value('cold_ns', 'mujoco', COLD_SIZE, d, r) / 1e3 for d, r in scenes]
    steps = [table.value('hill_climb_steps_cold', MAIN, COLD_SIZE, d, r) for d, r in scenes]
    met = None if any(math.isnan(p) for p in peer) else all(
        o <= p for o, p in zip(ours, peer))
    return Row('cold query, %d vertices (PairSet), worst separated scene' % COLD_SIZE,
               max(ours), 'MuJoCo', max(peer), '<= MuJoCo in every scene', met,
               'hill-climb steps per cold query %.1f-%.1f (seeded from 26 directions)'
               % (min(steps), max(steps)))


def row_rotating_overlap(table):
    """Tracked overlap at 2048 vertices, 6-12 deg/step, against MuJoCo: <= MuJoCo, exact."""
    scenes = [('overlap', r) for r in (6.0, 12.0) if table.get(MAIN, COLD_SIZE, 'overlap', r)]
    if not scenes:
        return Row('tracked overlap, %d vertices, 6-12 deg/step' % COLD_SIZE, None, 'MuJoCo',
                   None, '<= MuJoCo, exact', None, 'no such scene in this run')
    ours = [table.value('tracked_ns', MAIN, COLD_SIZE, d, r) / 1e3 for d, r in scenes]
    peer = [table.value('tracked_ns', 'mujoco', COLD_SIZE, d, r) / 1e3 for d, r in scenes]
    error = max(table.value('max_error', MAIN, COLD_SIZE, d, r) for d, r in scenes)
    peer_error = max(table.value('max_error', 'mujoco', COLD_SIZE, d, r) for d, r in scenes)
    epa = [table.value('epa_iterations_tracked', MAIN, COLD_SIZE, d, r) for d, r in scenes]
    climbs = [table.value('hill_climb_steps_tracked', MAIN, COLD_SIZE, d, r) for d, r in scenes]
    met = None if any(math.isnan(p) for p in peer) else \
        all(o <= p for o, p in zip(ours, peer)) and error <= EXACT
    return Row('tracked overlap, %d vertices, 6-12 deg/step, worst' % COLD_SIZE, max(ours),
               'MuJoCo', max(peer), '<= MuJoCo, still exact', met,
               'EPA re-expands %.0f-%.0f times per step (%.0f-%.0f hill-climb steps, over 100 '
               'pairs of 2,048-vertex hulls that do not fit in cache); error %.1e (MuJoCo %.1e, '
               'its EPA capped at 35 iterations)'
               % (min(epa), max(epa), min(climbs), max(climbs), error, peer_error))


def row_startup(extras):
    """Node start to first ~/distances: target <= 3 s."""
    seconds = extras.get('startup')
    if not seconds:
        return Row('node start to first distances', None, '(C++ peers: under 1 s)', None,
                   '<= %g s' % TARGET_STARTUP_S, None,
                   'not measured: %s' % (extras.get('startup_error') or 'skipped'), 's')
    median = statistics.median(seconds)
    return Row('node start to first distances (median of %d)' % len(seconds), median,
               '(C++ peers: under 1 s)', None, '<= %g s' % TARGET_STARTUP_S,
               median <= TARGET_STARTUP_S,
               "imports, kernels from the numba cache, the geometry worker's start", 's')


def rows(table, extras):
    """Return every peer-target row: single calls, cold, overlap, batches, start-up."""
    from .planning_bench import ROBOTS
    single = extras.get('single_call') or []
    return [row_single_tracked(single), row_single_cold(single), row_cold_2048(table),
            row_rotating_overlap(table), *(row_batch(extras, robot) for robot in ROBOTS),
            row_startup(extras)]


def _figure(value, unit):
    return '-' if value is None else '%.2f %s' % (value, unit)


def section(table, extras, verdict):
    """Render the peer-target table (``verdict`` is report.verdict)."""
    lines = ['## Peer targets (each against its peer, same run)\n',
             '| case | gjk_ros | peer | peer figure | target | verdict | why |',
             '|---|---|---|---|---|---|---|']
    for row in rows(table, extras):
        lines.append('| %s | %s | %s | %s | %s | %s | %s |' % (
            row.case, _figure(row.ours, row.unit), row.peer,
            _figure(row.peer_value, row.unit), row.target, verdict(row.met), row.why))
    return '\n'.join(lines) + '\n'
