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
Planner checks against Pinocchio + coal on example-robot-data arms, same scenes, same pairs.

- Yes/no check per random configuration (uniform within the joint limits, clipped to +-pi):
  ``RobotDistances.in_collision`` (one Python call each) and ``in_collision_batch`` against
  ``pinocchio.computeCollisions`` (stopping at the first collision, and over every pair), on
  bench.planning_bench's 20 seeded obstacles with every pair of both. Verdicts are compared
  with each other and with the exact reference (the smallest distance of ``distances(q)``,
  checked against the Minkowski-difference distance in bench.planning_bench).
- Gradients: ``gradients(q)`` against central finite differences of ``distances`` (largest
  error over separated pairs), and the time of each.
- The same yes/no check per random arm configuration on the planner scene below (mostly free
  configurations: every pair is tested, no early exit), with the planner's pairs.
- OMPL RRTConnect (ompl's Python bindings, optional): a table with boxes in front of the arm,
  the SRDF's arm group, seeded start and goal pairs, solve then simplify. Three checkers: coal
  and gjk_ros with OMPL's discrete motion check, and gjk_ros's certified ``edge_free`` motion
  validator. Every path is then checked densely with exact distances (samples no farther
  apart than 1 mm of link motion by the certified bound): a path "cuts" when a sample is
  inside an obstacle.

Run: ``.venv/bin/python -m bench.planner_checks`` (``--quick``: fewer configurations and
queries). Needs ``pin`` and ``example-robot-data``; ``ompl`` for the planner rows. Writes
bench/results/planner_checks.md and .json.
"""

import argparse
import json
import os
import statistics
import time

from bench import planning_bench
import numpy

RESULTS = planning_bench.RESULTS
ROBOTS = ('panda', 'ur5')
# The SRDF's arm group; the UR5's SRDF has none: every joint.
ARM_GROUPS = {'panda': 'arm', 'ur5': None}
# Dense path check: samples no farther apart than this much link motion (metres).
DENSE_STEP = 1e-3


def load_robot(name, obstacles, data_dir):
    """Build one example-robot-data arm with ``obstacles``; return it and its URDF."""
    from gjk_ros.planning import RobotDistances
    urdf_path, srdf_path = (os.path.join(data_dir, p) for p in planning_bench.ROBOTS[name])
    urdf_xml, srdf_xml = open(urdf_path).read(), open(srdf_path).read()
    robot = RobotDistances(urdf_xml, srdf_xml=srdf_xml, obstacles=obstacles,
                           package_paths={'example-robot-data': data_dir})
    return robot, urdf_xml


def random_configurations(kinematics, count, seed):
    """Uniform within the limits, clipped to +-pi."""
    rng = numpy.random.default_rng(seed)
    lower = numpy.maximum(kinematics.lower, -numpy.pi)
    upper = numpy.minimum(kinematics.upper, numpy.pi)
    return rng.uniform(lower, upper, (count, kinematics.dof))


class CoalChecker:
    """Pinocchio + coal over the same pieces and pairs, fed our configurations."""

    def __init__(self, robot, urdf_xml, specs, pairs=None):
        """Build the models; ``pairs`` selects piece pairs (default all)."""
        import pinocchio
        self.pinocchio = pinocchio
        self.model, self.geometry = planning_bench.build_pinocchio(robot, urdf_xml, specs,
                                                                   pairs)
        self.data, self.geometry_data = self.model.createData(), self.geometry.createData()
        self.kinematics = robot.kinematics
        probe = planning_bench.pinocchio_q(self.model, robot.kinematics,
                                           numpy.eye(robot.kinematics.dof))
        zero = planning_bench.pinocchio_q(self.model, robot.kinematics,
                                          numpy.zeros((1, robot.kinematics.dof)))[0]
        # Every arm here has one-variable joints only: the map is linear.
        self.offset, self.matrix = zero, (probe - zero).T

    def convert(self, qs):
        """Pinocchio configurations of (N, dof) configurations."""
        return numpy.asarray(qs) @ self.matrix.T + self.offset

    def collides(self, pin_q, stop=True):
        """Run computeCollisions at one Pinocchio configuration."""
        return bool(self.pinocchio.computeCollisions(self.model, self.data, self.geometry,
                                                     self.geometry_data, pin_q, stop))


def time_per_configuration(function, items):
    """Seconds per item of one pass."""
    start = time.perf_counter()
    function(items)
    return (time.perf_counter() - start) / len(items)


def check_verdicts(robot, coal, qs, reps):
    """Time the yes/no checks (us, medians of interleaved passes) and compare verdicts."""
    pin_qs = coal.convert(qs)
    methods = {
        'gjk_in_collision': lambda items: [robot.in_collision(q) for q in items],
        'gjk_batch': lambda items: robot.in_collision_batch(items),
        'coal_first': lambda items: [coal.collides(q, True) for q in items],
        'coal_all': lambda items: [coal.collides(q, False) for q in items],
    }
    inputs = {'gjk_in_collision': qs, 'gjk_batch': qs, 'coal_first': pin_qs,
              'coal_all': pin_qs}
    robot.in_collision_batch(qs[:10])
    times = {name: [] for name in methods}
    for _ in range(reps):
        for name, method in methods.items():
            times[name].append(time_per_configuration(method, inputs[name]))
    ours = robot.in_collision_batch(qs)
    theirs = numpy.array([coal.collides(q) for q in pin_qs])
    exact = numpy.array([robot.distances(q).min_distance() <= 0.0 for q in qs])
    figures = {f'{name}_us': statistics.median(values) * 1e6 for name, values in times.items()}
    figures.update({'configurations': len(qs), 'colliding_fraction': float(exact.mean()),
                    'gjk_disagrees_with_exact': int((ours != exact).sum()),
                    'coal_disagrees_with_exact': int((theirs != exact).sum()),
                    'gjk_disagrees_with_coal': int((ours != theirs).sum())})
    figures['speedup_vs_coal_first'] = figures['coal_first_us'] / figures['gjk_in_collision_us']
    return figures


def check_gradients(robot, qs, step=1e-6):
    """Largest |gradient - central difference| over separated pairs, and both times (us)."""
    robot.gradients(qs[:2])
    start = time.perf_counter()
    results, gradient = robot.gradients(qs)
    exact_us = (time.perf_counter() - start) / len(qs) * 1e6
    error, start = 0.0, time.perf_counter()
    for n, q in enumerate(qs):
        numeric = numpy.empty(gradient.shape[1:])
        for v in range(q.size):
            up, down = q.copy(), q.copy()
            up[v] += step
            down[v] -= step
            numeric[:, v] = (robot.distances(up).distance - robot.distances(down).distance) / (
                2 * step)
        apart = results.distance[n] > 1e-3
        error = max(error, float(numpy.abs(gradient[n][apart] - numeric[apart]).max(
            initial=0.0)))
    difference_us = (time.perf_counter() - start) / len(qs) * 1e6
    return {'gradient_us': exact_us, 'finite_difference_us': difference_us,
            'gradient_max_error': error}


def table_scene(seed):
    """Return a table in front of the arm with four boxes on it (obstacles, coal specs)."""
    from gjk_ros.planning import Obstacle
    rng = numpy.random.default_rng(seed)
    boxes = [((0.55, 0.0, 0.18), (0.5, 1.0, 0.04))]
    for _ in range(4):
        size = rng.uniform(0.05, 0.15, 3)
        boxes.append(((rng.uniform(0.4, 0.7), rng.uniform(-0.4, 0.4), 0.2 + size[2] / 2),
                      tuple(size)))
    obstacles, specs = [], []
    for i, (centre, size) in enumerate(boxes):
        pose = numpy.eye(4)
        pose[:3, 3] = centre
        obstacles.append(Obstacle(f'box_{i}', {'type': 'box', 'size': list(size)}, pose=pose))
        specs.append(('box', numpy.array(size)))
    return obstacles, specs


def valid_queries(group, count, seed, min_length=1.5):
    """Seeded (start, goal) pairs of the group: both clear by 1 cm, >= min_length rad apart."""
    kinematics = group.robot.kinematics
    rng = numpy.random.default_rng(seed)
    lower = numpy.maximum(kinematics.lower[group.variables], -numpy.pi)
    upper = numpy.minimum(kinematics.upper[group.variables], numpy.pi)
    samples = rng.uniform(lower, upper, (40 * count, group.dof))
    clear = samples[~group.in_collision_batch(samples, 0.01)]
    queries = []
    for start, goal in zip(clear[0::2], clear[1::2]):
        if numpy.linalg.norm(goal - start) >= min_length:
            queries.append((start, goal))
        if len(queries) == count:
            break
    return queries


def ompl_setup(group, validity, certified):
    """Return an OMPL setup over the group's space with a validity function (and validator)."""
    import ompl.base as base
    import ompl.geometric as geometric
    from gjk_ros.planning.ompl import motion_validator, state_space
    setup = geometric.SimpleSetup(state_space(group))
    information = setup.getSpaceInformation()
    dof = group.dof

    class Checker(base.StateValidityChecker):
        def isValid(self, state):  # noqa: N802 - OMPL's name
            return validity(numpy.fromiter((state[i] for i in range(dof)), numpy.float64, dof))

    keep = [Checker(information)]
    setup.setStateValidityChecker(keep[0])
    if certified:
        keep.append(motion_validator(information, group))
        information.setMotionValidator(keep[1])
    setup.setPlanner(geometric.RRTConnect(information))
    return setup, keep


def plan(setup, space, start, goal, seconds):
    """Solve then simplify one query; return (seconds, path (n, dof) or None)."""
    import ompl.util
    setup.clear()
    first, second = space.allocState(), space.allocState()
    for i, (a, b) in enumerate(zip(start, goal)):
        first[i], second[i] = float(a), float(b)
    setup.setStartAndGoalStates(first, second)
    began = time.perf_counter()
    solved = setup.solve(seconds)
    if not solved or not setup.haveExactSolutionPath():
        return time.perf_counter() - began, None
    setup.simplifySolution()
    elapsed = time.perf_counter() - began
    path = setup.getSolutionPath()
    ompl.util.setLogLevel(ompl.util.LogLevel.LOG_NONE)
    return elapsed, numpy.array([[path.getState(i)[j] for j in range(len(start))]
                                 for i in range(path.getStateCount())])


def path_depth(group, path):
    """Deepest penetration (m, >= 0) along a path, sampled at DENSE_STEP of link motion."""
    bounds = group.robot.pair_bounds[:, group.variables]
    deepest = 0.0
    for q0, q1 in zip(path[:-1], path[1:]):
        motion = float((bounds @ numpy.abs(q1 - q0)).max(initial=0.0))
        samples = max(2, int(numpy.ceil(motion / DENSE_STEP)) + 1)
        t = numpy.linspace(0.0, 1.0, samples)[:, None]
        full = group.full(q0 + t * (q1 - q0))
        distance = group.robot.trajectory(full).distance[:, group.pair_columns]
        deepest = max(deepest, float(-numpy.nanmin(distance, initial=0.0)))
    return deepest


def run_planners(robot, coal, group, queries, seconds):
    """Median solve + simplify time, solved count and cutting paths per checker."""
    import ompl.util
    ompl.util.setLogLevel(ompl.util.LogLevel.LOG_NONE)
    full = group.full
    pin = coal.convert
    checkers = {
        'coal': (lambda q: not coal.collides(pin(full(q)[None])[0]), False),
        'gjk': (lambda q: not group.in_collision(q), False),
        'gjk_certified': (lambda q: not group.in_collision(q), True),
    }
    figures = {'queries': len(queries)}
    for name, (validity, certified) in checkers.items():
        setup, keep = ompl_setup(group, validity, certified)
        times, cuts, deepest, solved = [], 0, 0.0, 0
        for start, goal in queries:
            elapsed, path = plan(setup, setup.getStateSpace(), start, goal, seconds)
            times.append(elapsed)
            if path is None:
                continue
            solved += 1
            depth = path_depth(group, path)
            cuts += depth > 0.0
            deepest = max(deepest, depth)
        figures.update({f'{name}_solve_ms': statistics.median(times) * 1e3,
                        f'{name}_solved': solved, f'{name}_cutting_paths': cuts,
                        f'{name}_deepest_cut_mm': deepest * 1e3})
        del keep
    return figures


def bench_robot(name, data_dir, args):
    """Every figure of one arm."""
    obstacles, specs = planning_bench.make_obstacles(20, args.seed)
    robot, urdf_xml = load_robot(name, obstacles, data_dir)
    coal = CoalChecker(robot, urdf_xml, specs)
    qs = random_configurations(robot.kinematics, args.configs, args.seed)
    figures = {'robot': name, 'piece_pairs': robot.pair_set.num_pairs}
    figures.update(check_verdicts(robot, coal, qs, args.reps))
    figures.update(check_gradients(robot, qs[:args.gradients]))
    figures.update(planner_rows(name, data_dir, args))
    return figures


def planner_rows(name, data_dir, args):
    """OMPL figures on the table scene, or why they are missing."""
    try:
        import ompl.geometric  # noqa: F401 - availability
    except ImportError:
        return {'ompl': 'not measured: ompl unavailable'}
    obstacles, specs = table_scene(args.seed)
    robot, urdf_xml = load_robot(name, obstacles, data_dir)
    group = robot.group(ARM_GROUPS[name] or robot.kinematics.variable_names)
    order = group._checks.order  # the same piece pairs for coal: the group's
    coal = CoalChecker(robot, urdf_xml, specs, pairs=numpy.sort(order))
    figures = table_verdicts(group, coal, args)
    queries = valid_queries(group, args.queries, args.seed)
    figures.update(run_planners(robot, coal, group, queries, args.solve_seconds))
    return figures


def table_verdicts(group, coal, args):
    """Yes/no per random group configuration on the table scene (mostly free), both ways."""
    kinematics = group.robot.kinematics
    rng = numpy.random.default_rng(args.seed)
    lower = numpy.maximum(kinematics.lower[group.variables], -numpy.pi)
    upper = numpy.minimum(kinematics.upper[group.variables], numpy.pi)
    qs = rng.uniform(lower, upper, (args.configs, group.dof))
    pin_qs = coal.convert(group.full(qs))
    group.in_collision_batch(qs[:10])
    ours, theirs = [], []
    for _ in range(args.reps):
        ours.append(time_per_configuration(
            lambda items: [group.in_collision(q) for q in items], qs))
        theirs.append(time_per_configuration(
            lambda items: [coal.collides(q, True) for q in items], pin_qs))
    verdicts = group.in_collision_batch(qs)
    coal_verdicts = numpy.array([coal.collides(q) for q in pin_qs])
    exact = numpy.array([group.min_distance(q) <= 0.0 for q in qs])
    return {'table_gjk_us': statistics.median(ours) * 1e6,
            'table_coal_us': statistics.median(theirs) * 1e6,
            'table_colliding_fraction': float(exact.mean()),
            'table_gjk_disagrees_with_exact': int((verdicts != exact).sum()),
            'table_coal_disagrees_with_exact': int((coal_verdicts != exact).sum())}


def parse_arguments(argv=None):
    """Parse the settings (``--quick``: 200 configurations, 5 queries, 2 passes)."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--configs', type=int, default=1000)
    parser.add_argument('--reps', type=int, default=5)
    parser.add_argument('--gradients', type=int, default=20)
    parser.add_argument('--queries', type=int, default=20)
    parser.add_argument('--solve-seconds', type=float, default=10.0)
    parser.add_argument('--seed', type=int, default=7)
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS))
    parser.add_argument('--quick', action='store_true')
    args = parser.parse_args(argv)
    if args.quick:
        args.configs, args.queries, args.reps, args.gradients = 200, 5, 2, 5
    return args


def measure(args):
    """Rows of every robot; ImportError without example-robot-data or Pinocchio."""
    data_dir = planning_bench.robot_data_dir()
    if data_dir is None:
        raise ImportError('example-robot-data is not installed (bench/requirements.txt)')
    import pinocchio  # noqa: F401 - the peer
    rows = []
    for name in args.robots:
        rows.append(bench_robot(name, data_dir, args))
        print(rows[-1], flush=True)
    return rows


def write_results(rows, args):
    """bench/results/planner_checks.json and .md."""
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, 'planner_checks.json'), 'w') as stream:
        json.dump(rows, stream, indent=1)
    text = section(rows, lambda met: '-' if met is None else ('met' if met else 'NOT met'))
    command = 'python -m bench.planner_checks' + (' --quick' if args.quick else '')
    with open(os.path.join(RESULTS, 'planner_checks.md'), 'w') as stream:
        stream.write(text + f'\nCommand: `{command}`.\n')
    print(text)


def target_rows(row):
    """(case, gjk_ros, peer figure, target, met, why) rows of one robot."""
    name = row['robot']
    rows = [(f'{name}: yes/no per random configuration (`in_collision`)',
             '%.1f us' % row['gjk_in_collision_us'], '%.1f us' % row['coal_first_us'],
             '<= coal / 2', row['gjk_in_collision_us'] * 2 <= row['coal_first_us'],
             'batch %.1f us; coal over all pairs %.1f us; verdicts off exact: ours %d, coal '
             '%d of %d (%.0f %% colliding)' % (
                 row['gjk_batch_us'], row['coal_all_us'], row['gjk_disagrees_with_exact'],
                 row['coal_disagrees_with_exact'], row['configurations'],
                 100 * row['colliding_fraction'])),
            (f'{name}: gradient d(distance)/dq, every pair', '%.0f us' % row['gradient_us'],
             '%.0f us (finite differences)' % row['finite_difference_us'], 'error <= 1e-6',
             row['gradient_max_error'] <= 1e-6, 'largest error %.1e over separated pairs'
             % row['gradient_max_error'])]
    if 'ompl' in row:
        rows.append((f'{name}: OMPL RRTConnect', '-', '-', '<= coal', None, row['ompl']))
        return rows
    rows += [(f'{name}: yes/no per random arm configuration, table scene',
              '%.1f us' % row['table_gjk_us'], '%.1f us' % row['table_coal_us'],
              '<= coal / 2', row['table_gjk_us'] * 2 <= row['table_coal_us'],
              "the planner rows' scene and pairs; %.0f %% colliding; verdicts off exact: ours "
              '%d, coal %d' % (100 * row['table_colliding_fraction'],
                               row['table_gjk_disagrees_with_exact'],
                               row['table_coal_disagrees_with_exact'])),
             (f'{name}: OMPL RRTConnect median solve + simplify (discrete motion check)',
              '%.1f ms' % row['gjk_solve_ms'], '%.1f ms' % row['coal_solve_ms'], '<= coal',
              row['gjk_solve_ms'] <= row['coal_solve_ms'],
              'solved %d / %d (coal %d); paths cutting obstacles %d (coal %d), deepest %.1f mm'
              % (row['gjk_solved'], row['queries'], row['coal_solved'],
                 row['gjk_cutting_paths'], row['coal_cutting_paths'],
                 max(row['gjk_deepest_cut_mm'], row['coal_deepest_cut_mm']))),
             (f'{name}: OMPL RRTConnect with the certified motion validator',
              '%.1f ms' % row['gjk_certified_solve_ms'], '%.1f ms (ours, discrete)'
              % row['gjk_solve_ms'], '0 cutting paths, <= 1.5x discrete',
              row['gjk_certified_cutting_paths'] == 0 and
              row['gjk_certified_solve_ms'] <= 1.5 * row['gjk_solve_ms'],
              'solved %d / %d; paths cutting obstacles %d (checked every %.0f mm of motion)'
              % (row['gjk_certified_solved'], row['queries'],
                 row['gjk_certified_cutting_paths'], DENSE_STEP * 1e3))]
    return rows


def section(rows, verdict):
    """Markdown table of every target row (``verdict`` renders met / not met / unknown)."""
    lines = ['## Planner checks against Pinocchio + coal (same scenes, same pairs, same run)\n',
             '| case | gjk_ros | peer | target | verdict | why |', '|---|---|---|---|---|---|']
    for row in rows:
        for case, ours, peer, target, met, why in target_rows(row):
            lines.append(f'| {case} | {ours} | {peer} | {target} | {verdict(met)} | {why} |')
    return '\n'.join(lines) + '\n'


def main(argv=None):
    """Command line entry point."""
    args = parse_arguments(argv)
    try:
        rows = measure(args)
    except ImportError as error:
        print(error)
        return 1
    write_results(rows, args)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
