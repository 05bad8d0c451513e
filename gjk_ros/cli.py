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
The ``gjk-ros`` command line: ``demo``, ``check``, ``warmup`` and ``bench``.

Each subcommand imports what it needs when it runs, so ``gjk-ros check`` works without ROS
and ``gjk-ros --help`` is instant.
"""

import argparse
import os
import subprocess
import sys
import time

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
# The ROS domain ids rmw accepts (DDS derives ports from them; REP 2000's range is 0-232).
MAX_DOMAIN_ID = 232


def _add_demo(subparsers):
    parser = subparsers.add_parser(
        'demo', help='run the distance node on a moving demo arm; print and plot distances',
        description='Start the gjk_distance node and a demo scene (a moving arm near '
                    'obstacles, published as real URDF, TF and markers by a second process), '
                    'print a per-pair table while it runs and write a plot at the end, with a '
                    'picture of the scene as the node draws it on ~/markers. It runs on a ROS '
                    'domain of its own unless --domain-id is given. Ctrl-C stops it early '
                    '(the plots are still written).')
    parser.add_argument('--duration', type=_positive_seconds, default=20.0,
                        help='seconds to run once distances arrive (default 20)')
    parser.add_argument('--plot', default='gjk_demo_distances.png',
                        help='PNG of distance over time written at the end '
                             '(default ./gjk_demo_distances.png)')
    parser.add_argument('--scene-plot', default=None,
                        help='PNG of the hulls and witness segments received on ~/markers at '
                             'the instant of the smallest distance (default: '
                             'gjk_demo_scene.png next to --plot)')
    parser.add_argument('--interval', type=_positive_seconds, default=None,
                        help='seconds between table refreshes (default 0.5 on a terminal, '
                             '2 otherwise)')
    parser.add_argument('--domain-id', type=_domain_id, default=None,
                        help='ROS_DOMAIN_ID for the node, the scene and the monitor (default: '
                             'a free id from 1 to 100, held for the run, so the demo never '
                             'joins another graph; give yours to watch it in RViz)')
    parser.add_argument('--rate-hz', type=_rate_hz, default=50.0,
                        help="node compute rate and scene TF rate, within the node's "
                             'rate_hz range (default 50)')
    parser.add_argument('--startup-timeout', type=_positive_seconds, default=120.0,
                        help='seconds to wait for the first distances (default 120; the first '
                             'start compiles the geometry kernels)')
    parser.add_argument('--log-dir', default=None,
                        help='folder for the node and scene output (default: a temp folder)')
    parser.add_argument('--collision-objects', action='store_true',
                        help='publish the obstacles as moveit_msgs/CollisionObject on '
                             '/collision_object (as a MoveIt application adds them to the '
                             'planning scene) and read them with planning_scene:=true, instead '
                             'of markers')
    parser.set_defaults(handler=_run_demo)


def _add_check(subparsers):
    parser = subparsers.add_parser(
        'check', help='load a URDF or mesh file and list its convex pieces',
        description='Load a URDF (collision elements of every link) or a mesh file '
                    '(STL/OBJ/DAE/PLY/OFF) the way the node does and list the convex pieces, '
                    'warnings and errors. Exit code 1 if anything could not be loaded.')
    parser.add_argument('path', help='a .urdf file or a mesh file')
    parser.add_argument('--package-path', action='append', default=[], metavar='PKG=DIR',
                        help='resolve package://PKG/ under DIR (repeatable); other packages '
                             'are looked up in the ament index')
    parser.set_defaults(handler=_run_check)


def _add_warmup(subparsers):
    parser = subparsers.add_parser(
        'warmup', help='compile the geometry kernels now (make install runs it)',
        description="Compile geometry kernels into numba's cache, in parallel processes, so "
                    'that no later process waits for them. By default the kernels the '
                    'distance node runs (the groups pairset and points, and the mesh checks); '
                    'the planner and the single-pair API compile theirs when first used, or '
                    'now with --all or --group. Run it once after installing (colcon: ros2 run '
                    'gjk_ros gjk-ros warmup), as the user who runs the node.')
    parser.add_argument('--jobs', type=_positive_int, default=None,
                        help='processes to compile in (default: one per core)')
    parser.add_argument('--all', action='store_true',
                        help='every group, and the mesh checks')
    # The names are those of gjk_ros.core.warmup.GROUPS (test_cli checks): listed here rather
    # than imported, so that `gjk-ros --help` does not load numba.
    parser.add_argument('--group', action='append', default=[], metavar='NAME',
                        help="compile this group instead of the node's (repeatable): "
                             'pairset, points, planning, signed_distance, swept or meshes')
    parser.set_defaults(handler=_run_warmup)


def _positive_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a number of seconds: {text!r}') from None
    if not 0.0 < value < float('inf'):
        raise argparse.ArgumentTypeError(f'must be a positive number of seconds, got {text}')
    return value


def _rate_hz(text):
    from gjk_ros.ros.params import PARAMETERS

    spec = next(spec for spec in PARAMETERS if spec.name == 'rate_hz')
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a rate in Hz: {text!r}') from None
    if not spec.low < value <= spec.high:
        raise argparse.ArgumentTypeError(f'must be above {spec.low:g} and at most '
                                         f"{spec.high:g} Hz (the node's rate_hz), got {text}")
    return value


def _domain_id(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a whole number: {text!r}') from None
    if not 0 <= value <= MAX_DOMAIN_ID:
        raise argparse.ArgumentTypeError(f'must be from 0 to {MAX_DOMAIN_ID}, got {value}')
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a whole number: {text!r}') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'must be at least 1, got {value}')
    return value


def _add_bench(subparsers):
    parser = subparsers.add_parser(
        'bench', help='run the benchmarks (python -m bench.run, from a source checkout)',
        description='Run `python -m bench.run` from the source checkout, forwarding every '
                    'argument after `bench`.', add_help=False)
    parser.set_defaults(handler=_run_bench)


def build_parser():
    """Return the ``gjk-ros`` argument parser."""
    parser = argparse.ArgumentParser(
        prog='gjk-ros', description='Tracked GJK distances and exact MTD between robot links '
                                    'and obstacles.')
    subparsers = parser.add_subparsers(dest='command', metavar='{demo,check,warmup,bench}')
    subparsers.required = True
    _add_demo(subparsers)
    _add_check(subparsers)
    _add_warmup(subparsers)
    _add_bench(subparsers)
    return parser


def _run_demo(options, extra):
    from gjk_ros.demo.monitor import DemoOptions, run_demo

    scene_plot = options.scene_plot or os.path.join(os.path.dirname(options.plot),
                                                    'gjk_demo_scene.png')
    return run_demo(DemoOptions(
        duration=options.duration, plot=options.plot, scene_plot=scene_plot,
        interval=options.interval,
        domain_id=options.domain_id, rate_hz=options.rate_hz,
        startup_timeout=options.startup_timeout, log_dir=options.log_dir,
        collision_objects=options.collision_objects))


def _run_check(options, extra):
    package_paths = {}
    for item in options.package_path:
        name, separator, directory = item.partition('=')
        if not separator or not name or not directory:
            print(f'gjk-ros check: --package-path wants PKG=DIR, got {item!r}', file=sys.stderr)
            return EXIT_USAGE
        package_paths[name] = directory
    lines, errors = check_file(options.path, package_paths)
    if lines:
        print('\n'.join(lines))
    for error in errors:
        print(f'error: {error}', file=sys.stderr)
    return EXIT_FAILED if errors else EXIT_OK


def check_file(path, package_paths=None):
    """
    Load a URDF or a mesh file as the node would and describe the result.

    Parameters
    ----------
    path : str
        A URDF (recognised by its ``<robot`` root) or a mesh file.
    package_paths : dict of str to str, optional
        ``package://`` overrides; relative mesh paths are taken from the file's folder.

    Returns
    -------
    tuple of (list of str, list of str)
        Report lines, and one line per error (empty when everything loaded).

    """
    from gjk_ros.models import ModelError, ResourceResolver

    resolver = ResourceResolver(package_paths=package_paths,
                                base_dir=os.path.dirname(os.path.abspath(path)))
    try:
        if _looks_like_urdf(path):
            return _check_urdf(path, resolver)
        return _check_mesh(path, resolver)
    except ModelError as error:
        return [], [str(error)]


def _looks_like_urdf(path):
    if path.lower().endswith(('.urdf', '.xml')):
        return True
    try:
        with open(path, 'rb') as candidate:
            return b'<robot' in candidate.read(4096)
    except OSError:
        return False  # The mesh loader reports the missing file.


def _check_urdf(path, resolver):
    from gjk_ros.models import parse_urdf_collisions

    try:
        with open(path, encoding='utf-8') as urdf:
            model = parse_urdf_collisions(urdf.read(), resolver=resolver)
    except OSError as error:
        return [], [f'{path}: cannot read: {error.strerror}']
    count = sum(len(pieces) for pieces in model.pieces.values())
    lines = [f"robot '{model.robot_name}': {len(model.links)} links, {len(model.pieces)} with "
             f'collision geometry, {count} convex pieces']
    for link, pieces in model.pieces.items():
        lines.append(f"  {link}: {len(pieces)} piece{'s' if len(pieces) > 1 else ''}")
        lines.extend(f'    {_describe_shape(piece.description, piece.shape)}'
                     for piece in pieces)
    bare = [link for link in model.links
            if link not in model.pieces and link not in model.rejected_links]
    if bare:
        lines.append(f"links without collision geometry: {', '.join(bare)}")
    lines.extend(f'warning: {warning}' for warning in model.warnings)
    return lines, [str(error) for error in model.errors]


def _check_mesh(path, resolver):
    info = resolver.load_mesh_info(os.path.abspath(path))
    convexity = 'convex' if info.is_convex else (
        f'not convex: its hull reaches {info.hull_deviation:.3g} m '
        f'(+-{info.hull_deviation_error:.2g} m) beyond the mesh surface; the node uses the hull '
        '(and warns above hull_warning_threshold) unless decompose_meshes selects it')
    return [f'{path}: {convexity}, {info.vertex_count} distinct vertices',
            f'  {_describe_shape("hull", info.hull)}'], []


def _describe_shape(description, shape):
    if shape.kind == 'cylinder':
        geometry = 'exact cylinder'
    else:
        plural = 'vertex' if shape.num_vertices == 1 else 'vertices'
        geometry = f'convex hull of {shape.num_vertices} {plural}'
    if shape.radius > 0.0:
        geometry += f' swept by radius {shape.radius:g} m'
    return f'{description}: {geometry}, bounding radius {shape.bounding_radius:.4g} m'


def find_bench_root():
    """
    Return the source checkout that holds ``bench/run.py``, or None.

    Looks in the working directory first, then next to the installed ``gjk_ros`` package
    (an editable or in-tree install).
    """
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for root in (os.getcwd(), package_parent):
        if os.path.isfile(os.path.join(root, 'bench', 'run.py')):
            return root
    return None


def _run_warmup(options, extra):
    from gjk_ros.core.warmup import cache_directory, GROUPS, NODE_GROUPS, warm_up
    from gjk_ros.models.meshes import warm_up as warm_up_meshes

    unknown = sorted(set(options.group) - set(GROUPS))
    if unknown:
        print(f"gjk-ros warmup: unknown group {', '.join(unknown)}; the groups are "
              f"{', '.join(GROUPS)}", file=sys.stderr)
        return EXIT_USAGE
    groups = GROUPS if options.all else (options.group or NODE_GROUPS)
    started = time.perf_counter()
    seconds = warm_up(groups, options.jobs, extra={'mesh checks': warm_up_meshes})
    groups = ', '.join('%s %.1f s' % item for item in seconds.items())
    print('gjk-ros warmup: geometry kernels ready in %.1f s (%s); cache: %s'
          % (time.perf_counter() - started, groups, cache_directory()))
    return EXIT_OK


def _run_bench(options, extra):
    root = find_bench_root()
    if root is None:
        print('gjk-ros bench: bench/run.py not found; the benchmarks live in the source '
              'checkout, run this from its root', file=sys.stderr)
        return EXIT_USAGE
    return subprocess.call([sys.executable, '-m', 'bench.run'] + extra, cwd=root)


def main(argv=None):
    """Run ``gjk-ros``; return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    # Everything after `bench` belongs to bench.run, including its own --help.
    if argv[:1] == ['bench']:
        options, extra = parser.parse_args(argv[:1]), argv[1:]
    else:
        options, extra = parser.parse_args(argv), []
    return options.handler(options, extra)


if __name__ == '__main__':
    sys.exit(main())
