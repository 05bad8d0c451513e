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
Planner workload: UR5 and Panda trajectories against 20 obstacles, all pairs, versus Pinocchio.

For each robot of ``example-robot-data`` (URDF, SRDF, meshes through ``package://``): 20 seeded
obstacles (boxes and random convex hulls) around the arm, a smooth seeded trajectory of N
configurations within the joint limits, and every pair measured at every configuration: each
link against each obstacle, and every self-collision pair the SRDF leaves enabled (adjacent
links excluded), with no distance cut-off.

- gjk_ros: :class:`gjk_ros.planning.RobotDistances`, ``trajectory(Q)`` (tracked from one
  configuration to the next; forward kinematics included), and ``distances(q)`` called once per
  configuration (one Python call each).
- Pinocchio + coal: ``pinocchio.computeDistances(model, data, geometry_model, geometry_data, q)``
  on the same geometry: every piece becomes a ``coal.Convex`` of the same hull vertices (boxes
  as ``coal.Box``), attached to the same frames, with the same collision pairs; forward
  kinematics included, coal's default request (warm start from the last call's support guess).

Accuracy: at ``--checked`` configurations spread along the trajectory, every piece pair's exact
signed distance (bench/exact.py, the Minkowski-difference hull); a body pair's exact distance is
the minimum over its piece pairs. The tables give the largest |error| of each method.

Run: ``.venv/bin/python -m bench.planning_bench`` (``--quick`` for 200 configurations). Needs
``pin`` and ``example-robot-data`` (bench extras); writes bench/results/planning.md and .csv.
"""

import argparse
import csv
import os
import time

from bench.exact import BodyGeometry, exact_signed_distance
import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')
ROBOTS = {
    'ur5': ('robots/ur_description/urdf/ur5_robot.urdf', 'robots/ur_description/srdf/ur5.srdf'),
    'panda': ('robots/panda_description/urdf/panda.urdf',
              'robots/panda_description/srdf/panda.srdf'),
    'kinova': ('robots/kinova_description/robots/kinova.urdf',
               'robots/kinova_description/srdf/kinova.srdf'),
}


def robot_data_dir():
    """Share directory of the pip package ``example-robot-data``, or None."""
    import sysconfig
    candidate = os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share',
                             'example-robot-data')
    return candidate if os.path.isdir(candidate) else None


def make_obstacles(count, seed):
    """Seeded boxes and random convex hulls in the arm's workspace (0.25-0.9 m from the base)."""
    from gjk_ros.planning import Obstacle
    rng = numpy.random.default_rng(seed)
    obstacles, specs = [], []
    for i in range(count):
        direction = rng.normal(size=3)
        direction[2] = abs(direction[2])
        pose = numpy.eye(4)
        pose[:3, 3] = direction / numpy.linalg.norm(direction) * rng.uniform(0.25, 0.9)
        pose[:3, :3] = _rotation(rng)
        if i % 2 == 0:
            size = rng.uniform(0.04, 0.2, 3)
            geometry, spec = {'type': 'box', 'size': size.tolist()}, ('box', size)
        else:
            points = rng.normal(size=(30, 3)) * rng.uniform(0.02, 0.08, 3)
            geometry = {'type': 'points', 'points': points.ravel().tolist()}
            spec = ('points', points)
        obstacles.append(Obstacle(f'obstacle_{i}', geometry, pose=pose))
        specs.append(spec)
    return obstacles, specs


def make_trajectory(kinematics, count, seed, waypoints=6):
    """Piecewise-linear path through seeded waypoints within the limits (|q| <= pi)."""
    rng = numpy.random.default_rng(seed)
    lower = numpy.maximum(kinematics.lower, -numpy.pi)
    upper = numpy.minimum(kinematics.upper, numpy.pi)
    points = rng.uniform(lower, upper, (waypoints, kinematics.dof))
    s = numpy.linspace(0.0, waypoints - 1, count)
    index = numpy.minimum(s.astype(int), waypoints - 2)
    t = (s - index)[:, None]
    return points[index] * (1.0 - t) + points[index + 1] * t


def pinocchio_q(model, kinematics, qs):
    """Pinocchio configurations for our configurations, joint by joint (mimic applied)."""
    values = kinematics.joint_values(qs)
    column = {joint.name: i for i, joint in enumerate(kinematics.joints)}
    out = numpy.zeros((len(qs), model.nq))
    for j in range(1, model.njoints):
        name, start, size = model.names[j], model.idx_qs[j], model.nqs[j]
        value = values[:, column[name]]
        if size == 1:
            out[:, start] = value
        elif size == 2:  # continuous: (cos, sin)
            out[:, start], out[:, start + 1] = numpy.cos(value), numpy.sin(value)
        else:
            raise NotImplementedError(f'joint {name} with nq={size}')
    return out


def build_pinocchio(robot, urdf_xml, specs, pairs=None):
    """
    Pinocchio model and a coal geometry model of the same pieces and pairs as ``robot``.

    ``pairs`` (piece pair indices) selects the collision pairs; default all of them.
    """
    import coal
    import pinocchio
    model = pinocchio.buildModelFromXML(urdf_xml)
    geometry = pinocchio.GeometryModel()
    bodies = robot.pair_set.bodies
    links = len(robot._piece_link)
    for index, shape in enumerate(bodies):
        if index < links:
            link = robot.kinematics.links[robot._piece_link[index]]
            frame = model.frames[model.getFrameId(link)]
            joint, placement = frame.parentJoint, frame.placement
        else:
            obstacle = robot._piece_obstacle[index - links]
            joint = 0
            placement = pinocchio.SE3(robot._obstacle_poses[obstacle])
            spec = specs[obstacle]
        origin = pinocchio.SE3(robot._body_origins[index])
        if index >= links and spec[0] == 'box':
            collision = coal.Box(*spec[1])
        else:
            collision = _coal_hull(coal, shape.vertices)
        geometry.addGeometryObject(pinocchio.GeometryObject(
            f'piece_{index}', int(joint), placement * origin, collision))
    chosen = robot.pair_set.pairs if pairs is None else robot.pair_set.pairs[pairs]
    for a, b in chosen:
        geometry.addCollisionPair(pinocchio.CollisionPair(int(a), int(b)))
    return model, geometry


def gjk_trajectory(robot, qs):
    """Seconds per configuration of one cold-started tracked trajectory(), and its result."""
    robot.reset()
    start = time.perf_counter()
    result = robot.trajectory(qs)
    return (time.perf_counter() - start) / len(qs), result


def gjk_calls(robot, qs):
    """Seconds per configuration of one distances() call per configuration."""
    robot.reset()
    start = time.perf_counter()
    for q in qs:
        robot.distances(q)
    return (time.perf_counter() - start) / len(qs)


def pinocchio_run(model, geometry, pin_qs, checked=()):
    """Seconds per configuration of computeDistances, and piece distances at ``checked``."""
    import pinocchio
    data, geometry_data = model.createData(), geometry.createData()
    answers = {}
    start = time.perf_counter()
    for q in pin_qs:
        pinocchio.computeDistances(model, data, geometry, geometry_data, q)
    elapsed = (time.perf_counter() - start) / len(pin_qs)
    for n in checked:
        pinocchio.computeDistances(model, data, geometry, geometry_data, pin_qs[n])
        answers[n] = numpy.array([r.min_distance for r in geometry_data.distanceResults])
    return elapsed, answers


def time_methods(robot, qs, pinocchio_setup, reps):
    """
    Interleave the timed runs (one of each method per round) and keep each method's times.

    Interleaving puts every method under the same load of this shared machine; the report gives
    the minimum (the least disturbed run) and the median.
    """
    robot.trajectory(qs[:20])  # compile and allocate outside the clock
    times = {'gjk': [], 'gjk_call': [], 'pinocchio': []}
    result = None
    for _ in range(reps):
        seconds, result = gjk_trajectory(robot, qs)
        times['gjk'].append(seconds)
        times['gjk_call'].append(gjk_calls(robot, qs))
        if pinocchio_setup is not None:
            times['pinocchio'].append(pinocchio_run(*pinocchio_setup)[0])
    return times, result


def exact_pieces(robot, qs, checked):
    """Exact signed distance of every piece pair at the checked configurations."""
    geometries = [BodyGeometry.from_points(body.vertices) for body in robot.pair_set.bodies]
    poses = robot.body_poses(qs[checked])
    exact = numpy.empty((len(checked), robot.pair_set.num_pairs))
    for row in range(len(checked)):
        for k, (a, b) in enumerate(robot.pair_set.pairs):
            exact[row, k] = exact_signed_distance(geometries[a], poses[row, a], geometries[b],
                                                  poses[row, b])
    return exact


def body_minimum(robot, piece_values):
    """Body-pair minimum over piece pairs of (rows, piece pairs) values."""
    groups, sizes = robot.engine.groups, robot.engine.group_sizes
    out = numpy.empty((piece_values.shape[0], len(sizes)))
    for k, size in enumerate(sizes):
        out[:, k] = piece_values[:, groups[k, :size]].min(axis=1)
    return out


def bench_robot(name, data_dir, args):
    """Run one robot; return a dict of figures."""
    from gjk_ros.planning import RobotDistances
    urdf_path, srdf_path = (os.path.join(data_dir, p) for p in ROBOTS[name])
    urdf_xml, srdf_xml = open(urdf_path).read(), open(srdf_path).read()
    obstacles, specs = make_obstacles(args.obstacles, args.seed)
    started = time.perf_counter()
    robot = RobotDistances(urdf_xml, srdf_xml=srdf_xml, obstacles=obstacles,
                           package_paths={'example-robot-data': data_dir})
    build_seconds = time.perf_counter() - started
    qs = make_trajectory(robot.kinematics, args.configs, args.seed)
    checked = numpy.linspace(0, len(qs) - 1, args.checked).astype(int)
    try:
        model, geometry = build_pinocchio(robot, urdf_xml, specs)
        pin_qs = pinocchio_q(model, robot.kinematics, qs)
        setup = (model, geometry, pin_qs)
    except ImportError as error:
        setup, missing = None, f'not installed: {error}'
    times, result = time_methods(robot, qs, setup, args.reps)
    figures = {
        'robot': name, 'configs': len(qs), 'obstacles': len(obstacles),
        'model_build_s': build_seconds,
        'body_pairs': len(robot.pairs), 'self_pairs': int(robot._is_self.sum()),
        'piece_pairs': robot.pair_set.num_pairs,
        'gjk_us_per_config_min': min(times['gjk']) * 1e6,
        'gjk_us_per_config_median': float(numpy.median(times['gjk'])) * 1e6,
        'gjk_single_call_us_min': min(times['gjk_call']) * 1e6,
        'gjk_iterations_per_pair': float(result.iterations.mean()),
        'support_calls_per_pair': float(result.support_calls.mean()),
        'penetrating_fraction': float((result.distance < 0).mean()),
    }
    exact = body_minimum(robot, exact_pieces(robot, qs, checked))
    figures['gjk_max_error'] = float(numpy.abs(result.distance[checked] - exact).max())
    if setup is None:
        figures['pinocchio'] = missing
        return figures
    answers = pinocchio_run(*setup, checked=checked.tolist())[1]
    coal_bodies = body_minimum(robot, numpy.array([answers[n] for n in checked]))
    figures.update({
        'pinocchio_coal_us_per_config_min': min(times['pinocchio']) * 1e6,
        'pinocchio_coal_us_per_config_median': float(numpy.median(times['pinocchio'])) * 1e6,
        'coal_max_error': float(numpy.abs(coal_bodies - exact).max()),
        'speedup_min': min(times['pinocchio']) / min(times['gjk']),
        'speedup_median': float(numpy.median(times['pinocchio']) / numpy.median(times['gjk'])),
    })
    return figures


def write_results(rows, args):
    """Write bench/results/planning.csv and planning.md."""
    os.makedirs(RESULTS, exist_ok=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    with open(os.path.join(RESULTS, 'planning.csv'), 'w', newline='') as stream:
        writer = csv.DictWriter(stream, keys)
        writer.writeheader()
        writer.writerows(rows)
    lines = ['# Planner workload: all pairs per configuration, gjk_ros vs Pinocchio + coal', '',
             f'{args.configs} configurations, {args.obstacles} obstacles, seed {args.seed}, '
             f'{args.reps} interleaved runs of each method (min and median); errors against '
             'the exact reference at '
             f'{args.checked} configurations. Command: `python -m bench.planning_bench'
             f'{" --quick" if args.quick else ""}`.', '',
             '| ' + ' | '.join(keys) + ' |', '|' + ' --- |' * len(keys)]
    for row in rows:
        lines.append('| ' + ' | '.join(_cell(row.get(k, '')) for k in keys) + ' |')
    with open(os.path.join(RESULTS, 'planning.md'), 'w') as stream:
        stream.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


def parse_arguments(argv=None):
    """Return the settings (``--quick``: 200 configurations, 3 checked, 2 runs)."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--configs', type=int, default=1000)
    parser.add_argument('--obstacles', type=int, default=20)
    parser.add_argument('--checked', type=int, default=10)
    parser.add_argument('--reps', type=int, default=7)
    parser.add_argument('--seed', type=int, default=7)
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS))
    parser.add_argument('--quick', action='store_true')
    args = parser.parse_args(argv)
    if args.quick:
        args.configs, args.checked, args.reps = 200, 3, 2
    return args


def measure(args):
    """
    Run every robot of ``args`` (see ``parse_arguments``); return their rows.

    Raises ImportError when example-robot-data is not installed (a bench extra).
    """
    data_dir = robot_data_dir()
    if data_dir is None:
        raise ImportError('example-robot-data is not installed (pip install -r '
                          'bench/requirements.txt)')
    return [bench_robot(name, data_dir, args) for name in args.robots]


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


def _rotation(rng):
    q = rng.normal(size=4)
    x, y, z, w = q / numpy.linalg.norm(q)
    return numpy.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _coal_hull(coal, vertices):
    points = coal.StdVec_Vec3s()
    points.extend([numpy.array(v, dtype=float) for v in vertices])
    return coal.Convex.convexHull(points, False, 'Qt')


def _cell(value):
    if isinstance(value, float):
        return f'{value:.3g}'
    return str(value)


if __name__ == '__main__':
    raise SystemExit(main())
