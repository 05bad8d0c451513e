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
Exact non-convex meshes: the tracked link-vs-mesh step on 100k triangles, and the kitchen check.

1. A tracked step. A box link (the Panda hand's size) follows a seeded smooth path 5 to 40 mm
   above a wavy open sheet of 100,352 triangles (`MeshBody.from_triangles`), at two speeds:
   1 mm and 0.3 degrees per step (a 1 kHz loop at 1 m/s) and 0.25 mm and 0.075 degrees (1 kHz
   at 0.25 m/s, a collaborative arm's speed near obstacles). Per step: the time of one
   `MeshDistance` call, the pieces it measured and the listed slots it looked at (its work
   counters, machine-independent), and the answer checked against a brute-force
   minimum over every triangle near the link (the core's exact pair query on each; every 50th
   step). Beside it, when `coal` imports, coal's BVH distance (`BVHModelOBBRSS` against the
   same box, `coal.distance`) on the same poses, and its disagreement with the exact answer.
2. A planner check in MotionBenchMaker's kitchen (../shared/mbm, the doors open): the Panda
   against the kitchen's five meshes, `in_collision` on the same 2,000 random configurations
   with the meshes as hulls and measured exactly (the default: the Panda's links stay hulls);
   the verdicts that differ (hull-only contacts are false contacts), and the piece pairs each
   checks. With `coal`, its BVH collision check on the same link hulls and meshes, per
   configuration, and its contacts (a BVH is the mesh's triangles: a link wholly inside a
   closed mesh touches none of them).

Timings are medians of interleaved passes on this machine (2 cores, shared).

Run: ``.venv/bin/python -m bench.meshes_bench [--quick] [--only tracked|kitchen]``; writes
bench/results/meshes.md (``--only``: one part, to ``--output``).
"""

import argparse
import os
import pathlib
import sys
import tempfile
import time
import warnings

import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')
ROOT = pathlib.Path(__file__).resolve().parent.parent


def mbm_directory():
    """Return MotionBenchMaker's folder (../shared/mbm or $GJK_ROS_MBM), or None."""
    folder = pathlib.Path(os.environ.get('GJK_ROS_MBM', ROOT.parent / 'shared' / 'mbm'))
    return folder if (folder / 'scenes').is_dir() else None


def coal_module():
    """Return the coal module, or None when it does not import."""
    try:
        import coal
    except ImportError:
        return None
    return coal


def wavy_sheet(count, size=1.0):
    """Return an open height field of 2 (count - 1)^2 triangles, 10 % of its size deep."""
    x, y = numpy.meshgrid(numpy.linspace(-size, size, count), numpy.linspace(-size, size, count))
    z = 0.1 * size * numpy.sin(3 * x / size) * numpy.cos(2 * y / size)
    grid = numpy.stack([x, y, z], -1)
    a, b = grid[:-1, :-1].reshape(-1, 3), grid[:-1, 1:].reshape(-1, 3)
    c, d = grid[1:, :-1].reshape(-1, 3), grid[1:, 1:].reshape(-1, 3)
    return numpy.concatenate([numpy.stack([a, b, d], 1), numpy.stack([a, d, c], 1)])


def _rotation(axis, angle):
    axis = numpy.asarray(axis, float) / numpy.linalg.norm(axis)
    k = numpy.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return numpy.eye(3) + numpy.sin(angle) * k + (1 - numpy.cos(angle)) * k @ k


def sheet_path(steps, seed, stride=0.001):
    """Return poses 5 to 40 mm above the sheet: ``stride`` and 0.3 degrees per mm per step."""
    rng = numpy.random.default_rng(seed)
    poses = []
    rotation = _rotation(rng.normal(size=3), 0.3)
    heading = rng.normal(size=2)
    position = numpy.array([0.0, 0.0, 0.0])
    for i in range(steps):
        heading += rng.normal(size=2) * 0.05
        heading /= numpy.linalg.norm(heading)
        position[:2] = numpy.clip(position[:2] + stride * heading, -0.8, 0.8)
        ground = 0.1 * numpy.sin(3 * position[0]) * numpy.cos(2 * position[1])
        position[2] = ground + 0.13 + 0.0175 * (1 + numpy.sin(i * stride / 0.05))
        rotation = rotation @ _rotation(rng.normal(size=3), numpy.radians(300.0 * stride))
        pose = numpy.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, position
        poses.append(pose)
    return poses


def tracked_step(steps, seed, stride=0.001):
    """Measure the tracked step on the 100k-triangle sheet; return a dict of figures."""
    from gjk_ros.core import ConvexPolytope, MeshBody, MeshDistance
    sheet = wavy_sheet(225)
    started = time.perf_counter()
    mesh = MeshBody.from_triangles(sheet)
    build_s = time.perf_counter() - started
    half = numpy.array([0.1, 0.04, 0.06])  # about the Panda hand
    link = ConvexPolytope.box(half)
    query = MeshDistance(link, mesh)
    poses = sheet_path(steps, seed, stride)
    identity = numpy.eye(4)
    query(poses[0], identity)  # compiles on a fresh cache, and the first (cold) list
    query.reset()
    started = time.perf_counter()
    query(poses[0], identity)
    cold_us = (time.perf_counter() - started) * 1e6
    times, work, errors, answers = [], [], [], []
    counted = query.stats.copy()
    for i, pose in enumerate(poses[1:], 1):
        before = query.stats[0]
        started = time.perf_counter()
        distance = query(pose, identity)
        times.append(time.perf_counter() - started)
        work.append(query.stats[0] - before)
        answers.append(distance)
    # Checked after the timed loop: a brute force between two steps would leave the next steps
    # to start with caches full of its own data (coal's loop below has no such interruption).
    for i in range(50, len(poses), 50):
        errors.append(abs(answers[i - 1] - brute_force(link, poses[i], mesh, answers[i - 1])))
    figures = {'stride_mm': 1000.0 * stride, 'triangles': len(sheet), 'build_s': build_s,
               'cold_us': cold_us,
               'step_us_p50': 1e6 * numpy.median(times), 'step_us_p99':
               1e6 * numpy.percentile(times, 99), 'pieces_per_step': float(numpy.mean(work)),
               'rebuilds': int(query.stats[1]), 'steps': len(times),
               'scanned_per_step': float(query.stats[3] - counted[3]) / len(times),
               'nodes_per_step': float(query.stats[2] - counted[2]) / len(times),
               'max_error': max(errors), 'checked': len(errors),
               'min_distance': min(answers), 'max_distance': max(answers)}
    coal = coal_module()
    if coal is not None:
        figures.update(coal_step(coal, sheet, half, poses, answers))
    return figures


def brute_force(link, pose, mesh, distance):
    """Return the smallest unsigned distance over every piece that can be that near."""
    from gjk_ros.core import signed_distance
    centre = pose[:3, :3] @ link.bounding_center + pose[:3, 3]
    boxes = 0.5 * (mesh.piece_low + mesh.piece_high)
    reach = 0.5 * numpy.linalg.norm(mesh.piece_high - mesh.piece_low, axis=1)
    near = numpy.flatnonzero(numpy.linalg.norm(boxes - centre, axis=1) - reach
                             <= distance + link.bounding_radius + 1e-9)
    pieces, identity = mesh.pieces, numpy.eye(4)
    return min(max(0.0, signed_distance(link, pose, pieces[p], identity).distance)
               for p in near)


def coal_mesh(coal, triangles):
    """Return coal's BVH (OBBRSS) model of an (m, 3, 3) triangle soup."""
    vertices = numpy.ascontiguousarray(triangles, dtype=float).reshape(-1, 3)
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(vertices) // 3, len(vertices))
    model.addVertices(vertices)
    model.addTriangles(numpy.arange(len(vertices), dtype=numpy.int64).reshape(-1, 3))
    model.endModel()
    return model


def coal_step(coal, sheet, half, poses, answers):
    """Measure coal's BVH distance on the same path: its time and largest disagreement."""
    model = coal_mesh(coal, sheet)
    box = coal.Box(*(2 * half))
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    mesh_transform = coal.Transform3s()
    times, differences = [], []
    for pose, answer in zip(poses[1:], answers):
        transform = coal.Transform3s(pose[:3, :3], pose[:3, 3])
        result.clear()
        started = time.perf_counter()
        distance = coal.distance(box, transform, model, mesh_transform, request, result)
        times.append(time.perf_counter() - started)
        differences.append(abs(max(distance, 0.0) - answer))
    return {'coal_us_p50': 1e6 * numpy.median(times), 'coal_max_difference': max(differences)}


def kitchen_check(configurations, seed, passes):
    """Measure the kitchen's in_collision, hulls against exact meshes; return figures or None."""
    folder = mbm_directory()
    if folder is None:
        return None
    from gjk_ros.planning import load_obstacles, MeshWarning, RobotDistances
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, 'configs'))
    os.symlink(folder / 'scenes', os.path.join(root, 'configs', 'scenes'))
    paths = {'robowflex_resources': str(folder / 'robowflex_resources'),
             'motion_bench_maker': root}
    panda = folder / 'robowflex_resources' / 'panda'
    base = numpy.eye(4)
    base[:3, 3] = [-0.2, -0.4, 0.7]  # the inverse of kitchen_panda.yaml's base_offset
    robots = {}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MeshWarning)
        kitchen = load_obstacles(folder / 'scenes' / 'kitchen' / 'kitchen.urdf',
                                 package_paths=paths, joints={'cupboard_door_l_joint': -1.5,
                                                              'cupboard_door_r_joint': 1.5})
        # 'exact' is the default: the kitchen's meshes exact, the Panda's links their hulls.
        for mode, setting in (('hull', 'hull'), ('exact', None)):
            robots[mode] = RobotDistances(
                (panda / 'urdf' / 'panda.urdf').read_text(),
                srdf_xml=(panda / 'config' / 'panda.srdf').read_text(), obstacles=kitchen,
                package_paths=paths, base_pose=base, self_collision=False, mesh_mode=setting)
    k = robots['hull'].kinematics
    rng = numpy.random.default_rng(seed)
    qs = rng.uniform(numpy.maximum(k.lower, -2.9), numpy.minimum(k.upper, 2.9),
                     (configurations, k.dof))
    verdicts = {mode: robot.in_collision_batch(qs) for mode, robot in robots.items()}
    timing = {mode: [] for mode in robots}
    for _ in range(passes):
        for mode, robot in robots.items():
            started = time.perf_counter()
            for q in qs:
                robot.in_collision(q)
            timing[mode].append((time.perf_counter() - started) / len(qs))
    figures = {'configurations': configurations,
               'hull_contacts': int(verdicts['hull'].sum()),
               'exact_contacts': int(verdicts['exact'].sum()),
               'false_contacts': int((verdicts['hull'] & ~verdicts['exact']).sum()),
               'missed_by_hull': int((verdicts['exact'] & ~verdicts['hull']).sum())}
    for mode, robot in robots.items():
        figures[f'{mode}_us'] = 1e6 * numpy.median(timing[mode])
        figures[f'{mode}_piece_pairs'] = robot.pair_set.num_pairs
        figures[f'{mode}_work'] = check_work(robot, qs)
    figures['exact_pieces'] = {u.body: u.pieces for u in robots['exact'].mesh_uses
                               if u.mode == 'exact'}
    coal = coal_module()
    if coal is not None:
        figures.update(coal_kitchen(coal, robots['hull'], kitchen, paths, qs))
    return figures


def check_work(robot, qs):
    """Return the machine-independent work of one check, averaged over ``qs``."""
    group = robot.group(robot.kinematics.variable_names, include_constant=True)
    group.in_collision_batch(qs)
    tested, culled, _, supports, bodies = (group.stats / len(qs)).tolist()
    return {'tested': tested, 'culled': culled, 'supports': supports, 'bodies_culled': bodies}


def coal_kitchen(coal, robot, kitchen, paths, qs):
    """Time coal's collision check: the same link hulls against BVH models of the meshes."""
    from gjk_ros.models import ResourceResolver
    resolver = ResourceResolver(paths)
    links = [(i, piece) for i, (piece, owner) in enumerate(zip(robot.pieces, robot.piece_owners))
             if owner in robot.links]
    shapes = []
    for _, piece in links:
        vertices = coal.StdVec_Vec3s()
        vertices.extend(list(numpy.asarray(piece.shape.vertices, dtype=float)))
        shapes.append(coal.Convex.convexHull(vertices, False, None))
    models = []
    for obstacle in kitchen:
        for piece in obstacle.geometry:
            triangles = resolver.load_mesh_triangles(piece.mesh[0] if piece.mesh else '',
                                                     piece.mesh[1] if piece.mesh else 1.0) \
                if piece.mesh else None
            if triangles is None:
                continue
            models.append((coal_mesh(coal, triangles), obstacle.pose @ piece.origin))
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    poses = robot.body_poses(qs)
    started = time.perf_counter()
    contacts = 0
    for n in range(len(qs)):
        hit = False
        for (i, _), shape in zip(links, shapes):
            a = coal.Transform3s(poses[n, i][:3, :3], poses[n, i][:3, 3])
            for model, pose in models:
                result.clear()
                if coal.collide(shape, a, model, coal.Transform3s(pose[:3, :3], pose[:3, 3]),
                                request, result):
                    hit = True
                    break
            if hit:
                contacts += 1
                break
    return {'coal_check_us': 1e6 * (time.perf_counter() - started) / len(qs),
            'coal_contacts': contacts}


def write_report(steps, kitchen, path, command, only=None):
    """Write the figures as markdown (``only``: the one part that was run)."""
    lines = ['# Exact non-convex meshes', '', f'Command: `{command}`', '']
    if only != 'kitchen':
        lines += ['## Tracked link-vs-mesh step, 100k triangles', '']
        for step in steps:
            lines += _step_lines(step)
    if only != 'tracked':
        lines += _kitchen_lines(kitchen)
    with open(path, 'w') as stream:
        stream.write('\n'.join(lines) + '\n')
    return path


def _step_lines(step):
    return [
        f'{step["triangles"]:,} triangles (an open wavy sheet), a 0.2 x 0.08 x 0.12 m box '
        f'5-40 mm above it, {step["stride_mm"]:g} mm and {0.3 * step["stride_mm"]:g} degrees '
        f'per step, {step["steps"]} steps.', '',
        '| | gjk_ros MeshDistance | coal BVH distance |', '| --- | --- | --- |',
        '| tracked step, median | %.1f us | %s |' % (
            step['step_us_p50'], '%.1f us' % step['coal_us_p50'] if 'coal_us_p50' in step
            else 'coal not installed'),
        '| step, 99th percentile | %.1f us | |' % step['step_us_p99'],
        '| pieces measured per step | %.1f | |' % step['pieces_per_step'],
        '| listed slots looked at / hierarchy nodes visited per step | %.1f / %.1f | |' % (
            step['scanned_per_step'], step['nodes_per_step']),
        '| first (cold) call | %.0f us | |' % step['cold_us'],
        '| candidate-list rebuilds | %d | |' % step['rebuilds'],
        '| building the hierarchy | %.2f s | |' % step['build_s'],
        '| largest error against brute force (%d steps) | %.1e m | %s |' % (
            step['checked'], step['max_error'], '%.1e m' % step['coal_max_difference']
            if 'coal_max_difference' in step else ''), '']


def _kitchen_lines(kitchen):
    lines = ['## A planner check in the kitchen', '']
    if kitchen is None:
        lines += ['MotionBenchMaker scenes not found (../shared/mbm or $GJK_ROS_MBM): skipped.']
    else:
        lines += [
            "The Panda against MotionBenchMaker's kitchen (five meshes, doors open), "
            f'`in_collision` on {kitchen["configurations"]:,} random configurations.', '',
            '| | hull | exact | coal BVH |', '| --- | --- | --- | --- |',
            '| per check, median | %.1f us | %.1f us (%.2fx) | %s |' % (
                kitchen['hull_us'], kitchen['exact_us'], kitchen['exact_us'] / kitchen['hull_us'],
                '%.1f us' % kitchen['coal_check_us'] if 'coal_check_us' in kitchen
                else 'coal not installed'),
            '| piece pairs | %d | %d | |' % (kitchen['hull_piece_pairs'],
                                             kitchen['exact_piece_pairs']),
            '| per check: piece pairs tested / culled by their spheres | %.1f / %.1f | '
            '%.1f / %.1f | |' % (kitchen['hull_work']['tested'], kitchen['hull_work']['culled'],
                                 kitchen['exact_work']['tested'],
                                 kitchen['exact_work']['culled']),
            '| per check: support calls / cull groups skipped whole | %.1f / %.1f | '
            '%.1f / %.1f | |' % (kitchen['hull_work']['supports'],
                                 kitchen['hull_work']['bodies_culled'],
                                 kitchen['exact_work']['supports'],
                                 kitchen['exact_work']['bodies_culled']),
            '| contacts | %d | %d | %s |' % (
                kitchen['hull_contacts'], kitchen['exact_contacts'],
                kitchen.get('coal_contacts', '')),
            '| false contacts of the hull (free when exact) | %d | | |' % (
                kitchen['false_contacts']),
            '| contacts the hull missed | %d | | |' % kitchen['missed_by_hull'], '',
            'Exact pieces per mesh: ' + ', '.join(f'{k} {v}' for k, v in
                                                  kitchen['exact_pieces'].items()) + '.']
    return lines


def main(argv=None):
    """Run both measurements and write bench/results/meshes.md (or --output)."""
    parser = argparse.ArgumentParser(prog='python -m bench.meshes_bench')
    parser.add_argument('--quick', action='store_true', help='fewer steps and configurations')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--output', default=os.path.join(RESULTS, 'meshes.md'))
    parser.add_argument('--only', choices=('tracked', 'kitchen'),
                        help='run one of the two measurements')
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    steps, configurations, passes = (200, 200, 2) if args.quick else (2000, 2000, 5)
    tracked = [] if args.only == 'kitchen' else \
        [tracked_step(steps, args.seed, stride) for stride in (0.001, 0.00025)]
    kitchen = None if args.only == 'tracked' else \
        kitchen_check(configurations, args.seed, passes)
    command = '.venv/bin/python -m bench.meshes_bench' + (' --quick' if args.quick else '') + \
        (f' --only {args.only}' if args.only else '')
    print(write_report(tracked, kitchen, args.output, command, args.only))
    return 0


def run_in_suite(config, progress):
    """Run from bench.run with its quick flag and output folder (extras only)."""
    if not config.extras:
        return
    progress('meshes: tracked step on 100k triangles, the kitchen check')
    main(['--output', os.path.join(config.out, 'meshes.md'), '--seed', str(config.seed)] +
         (['--quick'] if config.quick else []))


if __name__ == '__main__':
    sys.exit(main())
