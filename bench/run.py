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
Reproduce Cameron 1997 section 4 with gjk_ros.core and compare with coal, python-fcl and MuJoCo.

Usage: ``python -m bench.run [--quick] [--out bench/results] [--seed 0]``. Writes report.md,
CSV files and PNG plots into the output folder (see bench/report/).

For every body size the bodies are built once; each of the nine motion scenes (rotation
0/6/12 degrees per step x gap 3/1 diameters/overlapping) is then answered by every method,
every answer is compared with the exact reference (bench/reference.py), and the timings and
gjk_ros counters are summarised per scene and method.
"""

import argparse
from dataclasses import dataclass, field
import os
import platform
import sys
import time

import numpy

from . import (contact_suite, load_bench, meshes_bench, motion_bench, observations_bench,
               peer_targets, peers, reference, report, scenes)
from .report import performance

DEFAULT_OUT = os.path.join('bench', 'results')
# The run whose answers certify separated queries and give the counters.
CLAIM_METHOD = 'gjk_batch_track_hc'
# MuJoCo's default ccd_iterations (35) caps its EPA; this is the raised cap checked beside it.
MUJOCO_RAISED_CAP = 1000
COLD_METHOD = 'gjk_batch_cold_hc'


@dataclass
class Config:
    """
    What to run.

    Attributes
    ----------
    sizes : tuple of int
        Hull sizes (vertices per body).
    num_pairs : int
        Pairs per scene.
    steps : int
        Sequence length.
    reps : int
        Timed repetitions of every scene (after one warm-up run).
    method_budget_s : float
        Seconds one method may spend on the timed repetitions of one scene (fewer repetitions
        when it is slow, never fewer than one).
    hull_budget_s : float
        Seconds of exact-hull checks per scene (bench/reference.py).
    seed : int
        Run seed.
    out : str
        Output folder.
    boxes : bool
        Also run the box scenes.
    methods : tuple of str or None
        Method names to run (None: all available).
    quick : bool
        The short configuration.
    extras : bool
        Also run the single-call, planner-batch and node start-up measurements of the peer
        targets (bench/peer_targets.py) and the contact suite (bench/contact_suite.py).

    """

    sizes: tuple = scenes.HULL_SIZES
    num_pairs: int = 100
    steps: int = scenes.STEPS
    reps: int = 5
    method_budget_s: float = 0.4
    hull_budget_s: float = 1.5
    seed: int = 0
    out: str = DEFAULT_OUT
    boxes: bool = True
    methods: object = None
    quick: bool = False
    extras: bool = True


def quick_config(**overrides):
    """
    Return the short configuration (under a minute once numba's cache is warm).

    Parameters
    ----------
    **overrides
        Config fields to change.

    Returns
    -------
    Config
        Fewer sizes, pairs and repetitions.

    """
    values = {'sizes': (8, 64, 512, 2048), 'num_pairs': 20, 'reps': 3, 'method_budget_s': 0.2,
              'hull_budget_s': 0.25, 'quick': True}
    values.update(overrides)
    return Config(**values)


@dataclass
class Results:
    """
    Everything the report is made from.

    Attributes
    ----------
    config : Config
        What was run.
    environment : dict
        Machine, versions and the peers' default caps.
    timings : list of dict
        One row per scene and method (times, errors, counters).
    references : list of dict
        One row per scene (how its queries were checked, warm-vs-cold agreement).
    depth_apis : list of dict
        Penetration depth from the peers' collision APIs, overlapping scenes only.
    builds : list of dict
        Construction time of every method's objects per body family.
    profile : dict
        Call overheads for the profile section.
    missing : dict
        Methods that could not run, and why.
    elapsed_s : float
        Wall time of the run.
    contact : dict or None
        The contact suite's answers checked and violations per entry point
        (``contact_suite.measure``).

    """

    config: Config
    environment: dict = field(default_factory=dict)
    timings: list = field(default_factory=list)
    references: list = field(default_factory=list)
    depth_apis: list = field(default_factory=list)
    builds: list = field(default_factory=list)
    profile: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)
    elapsed_s: float = 0.0
    extras: dict = field(default_factory=dict)
    contact: object = None


def scene_specs(config, shape, size):
    """
    Return the nine motion scenes of one body family.

    Parameters
    ----------
    config : Config
        Pair count and sequence length.
    shape : str
        'hull' or 'box'.
    size : int
        Vertices per body.

    Returns
    -------
    list of scenes.SceneSpec
        Rotation x distance grid.

    """
    return [scenes.SceneSpec(shape, size, gap, rotation, config.num_pairs, config.steps)
            for rotation in scenes.ROTATIONS_DEG for gap in scenes.DISTANCES]


# Secondary configurations run on a few scenes only, to keep the default run within minutes:
# the figures need the no-hill-climbing runs on the Fig. 3/4 scene, the per-call API is compared
# on the 6 deg scenes.
FIG34_SCENE = ('gap3', 0.0)
SECONDARY_SCENES = {
    'gjk_batch_track_nohc': {FIG34_SCENE, ('gap1', 6.0)},
    'gjk_batch_cold_nohc': {FIG34_SCENE, ('gap1', 6.0)},
    'gjk_call_track': {FIG34_SCENE, ('gap3', 6.0), ('gap1', 6.0), ('overlap', 6.0)},
    'gjk_call_cold': {FIG34_SCENE, ('gap1', 6.0)},
}


def runs_on(method, spec):
    """
    Tell whether a method runs on a scene.

    Parameters
    ----------
    method : peers.Method
        The method.
    spec : scenes.SceneSpec
        The scene.

    Returns
    -------
    bool
        False for a secondary configuration outside its scenes.

    """
    scenes_of_method = SECONDARY_SCENES.get(method.name)
    if scenes_of_method is None:
        return True
    return (spec.distance_label, spec.rotation_deg) in scenes_of_method


def families(config):
    """
    Return the (shape, size) body families to run.

    Parameters
    ----------
    config : Config
        Sizes and whether boxes are included.

    Returns
    -------
    list of tuple
        ('hull', n) for every size, then ('box', 8).

    """
    result = [('hull', size) for size in config.sizes]
    if config.boxes:
        result.append(('box', 8))
    return result


def select_methods(config, core):
    """
    Return the methods to run and the reasons for the missing ones.

    Parameters
    ----------
    config : Config
        Optional method filter.
    core : module or None
        gjk_ros.core.

    Returns
    -------
    tuple of (list, dict)
        Methods and name -> reason.

    """
    methods, missing = peers.available_methods(core)
    if config.methods is not None:
        methods = [m for m in methods if m.name in config.methods]
    return methods, missing


def warm_up(method, scene, config):
    """
    Run a method once untimed and choose its number of timed repetitions.

    Parameters
    ----------
    method : peers.Method
        The method (already built for the scene's bodies).
    scene : scenes.Scene
        The scene.
    config : Config
        Repetitions and budget.

    Returns
    -------
    int
        Repetitions that fit the method's budget (at least one).

    """
    start = time.perf_counter()
    method.run_once(scene, None)
    warmup_s = time.perf_counter() - start
    if warmup_s > config.method_budget_s:
        # The first run may have compiled (numba) or allocated: time a second one.
        start = time.perf_counter()
        method.run_once(scene, None)
        warmup_s = time.perf_counter() - start
    return int(max(1, min(config.reps, config.method_budget_s // max(warmup_s, 1e-9))))


def timed_runs(methods, scene, config):
    """
    Time every method on one scene, interleaving their repetitions.

    Repetition r of every method runs before repetition r + 1 of any, so a burst of load from
    other processes on a shared machine hits all methods alike instead of one.

    Parameters
    ----------
    methods : list of peers.Method
        Built methods.
    scene : scenes.Scene
        The scene.
    config : Config
        Repetitions and budget.

    Returns
    -------
    dict
        Method name -> peers.Run (answers from each method's last repetition).

    """
    steps, pairs = scene.spec.steps, scene.spec.num_pairs
    reps = {method.name: warm_up(method, scene, config) for method in methods}
    runs = {name: peers.Run(times_ns=numpy.zeros((count, steps)),
                            distance=numpy.full((steps, pairs), numpy.nan))
            for name, count in reps.items()}
    for rep in range(max(reps.values(), default=0)):
        for method in methods:
            run = runs[method.name]
            if rep < reps[method.name]:
                last = rep == reps[method.name] - 1
                run.times_ns[rep] = method.run_once(scene, run if last else None)
    return runs


def summarise_times(run):
    """
    Reduce a run's timings to the reported numbers.

    Parameters
    ----------
    run : peers.Run
        Timings in ns, (reps, steps).

    Returns
    -------
    dict
        cold_ns (first step), tracked_ns (mean of the later steps), sequence_ns (mean of all
        steps, the paper's "average time" for a sequence of 20), each from per-step medians.

    """
    per_step = numpy.median(run.times_ns, axis=0)
    best_step = numpy.min(run.times_ns, axis=0)
    return {'reps': int(run.times_ns.shape[0]), 'cold_ns': float(per_step[0]),
            'tracked_ns': float(numpy.mean(per_step[1:])),
            'sequence_ns': float(numpy.mean(per_step)),
            'tracked_min_ns': float(numpy.mean(best_step[1:]))}


def summarise_counters(run, ref):
    """
    Average the gjk_ros counters over the cold and the tracked steps.

    Parameters
    ----------
    run : peers.Run
        A gjk_ros run with counters.
    ref : reference.Reference
        Exact answers (for the wrong-status check).

    Returns
    -------
    dict
        Mean counters, status counts and the witness consistency residual.

    """
    if not run.counters:
        return {}
    row = {}
    for key, values in run.counters.items():
        row['%s_cold' % key] = float(numpy.mean(values[0]))
        row['%s_tracked' % key] = float(numpy.mean(values[1:]))
    status = run.status
    row['max_iterations_status'] = int(numpy.count_nonzero(status == 3))
    row['degenerate_status'] = int(numpy.count_nonzero(status == 4))
    row['max_iterations_per_query'] = int(numpy.max(run.counters['iterations']))
    residual = (run.witness_b - run.witness_a) - run.distance[..., None] * run.normal
    row['witness_residual'] = float(numpy.nanmax(numpy.abs(residual)))
    return row


def peer_depths(methods_by_name, scene, ref):
    """
    Check the peers' collision APIs on an overlapping scene (not timed).

    Parameters
    ----------
    methods_by_name : dict
        Built methods by name.
    scene : scenes.Scene
        An overlapping scene.
    ref : reference.Reference
        Exact answers.

    Returns
    -------
    list of dict
        One row per collision API.

    """
    rows = []
    penetrating = ref.checked & (ref.value < 0.0)
    apis = []
    if 'fcl' in methods_by_name:
        apis.append(('fcl.collide (contact penetration_depth)',
                     methods_by_name['fcl'].collide_depths))
    if 'mujoco' in methods_by_name:
        mujoco_method = methods_by_name['mujoco']
        apis.append(('mujoco mj_collision (deepest contact dist)',
                     mujoco_method.collision_depths))
        # Same query as the timed one with the default cap raised: shows what the cap costs.
        apis.append(('mujoco mj_geomDistance, ccd_iterations=%d' % MUJOCO_RAISED_CAP,
                     lambda s: mujoco_method.geom_distances(s, MUJOCO_RAISED_CAP)))
    for name, function in apis:
        depths = function(scene)
        errors = reference.answer_errors(numpy.where(penetrating, depths, numpy.nan), ref)
        rows.append({'scene': scene.spec.name, 'size': scene.spec.size,
                     'shape': scene.spec.shape, 'rotation_deg': scene.spec.rotation_deg,
                     'api': name, 'checked_penetrating': errors['checked_penetrating'],
                     'max_error_penetrating': errors['max_error_penetrating'],
                     'missed': int(numpy.count_nonzero(penetrating & numpy.isnan(depths))),
                     'wrong': int(numpy.count_nonzero(
                         penetrating & (numpy.abs(depths - ref.value) > reference.WRONG_ANSWER)))})
    return rows


def run_scene(scene, methods, geometries, config, results):
    """
    Run every method on one scene and append the summary rows.

    Parameters
    ----------
    scene : scenes.Scene
        The scene.
    methods : list of peers.Method
        Built methods.
    geometries : list of exact.BodyGeometry
        Exact-reference bodies.
    config : Config
        Budgets.
    results : Results
        Filled in place.

    """
    methods = [method for method in methods if runs_on(method, scene.spec)]
    runs = timed_runs(methods, scene, config)
    ref = reference.compute_reference(scene, geometries, runs.get(CLAIM_METHOD),
                                      config.hull_budget_s, config.seed)
    spec = scene.spec
    base = {'scene': spec.name, 'shape': spec.shape, 'size': spec.size,
            'distance': spec.distance_label, 'rotation_deg': spec.rotation_deg}
    ref_row = dict(base, **ref.summary(), hull_seconds=ref.hull_seconds)
    if CLAIM_METHOD in runs and COLD_METHOD in runs:
        ref_row['warm_vs_cold_max_diff'] = float(numpy.nanmax(numpy.abs(
            runs[CLAIM_METHOD].distance - runs[COLD_METHOD].distance)))
    results.references.append(ref_row)
    for method in methods:
        run = runs[method.name]
        row = dict(base, method=method.name, label=method.label, family=method.family,
                   batch=method.batch, tracked=method.tracked)
        row.update(summarise_times(run))
        row.update(reference.answer_errors(run.distance, ref))
        row.update(summarise_counters(run, ref))
        results.timings.append(row)
    if spec.gap is None:
        by_name = {method.name: method for method in methods}
        results.depth_apis.extend(peer_depths(by_name, scene, ref))


def build_methods(methods, bodies, core):
    """
    Build every method's objects for one body family (gjk_ros polytopes are shared).

    Parameters
    ----------
    methods : list of peers.Method
        Methods to build.
    bodies : list of numpy.ndarray
        Body-frame vertices.
    core : module or None
        gjk_ros.core.

    Returns
    -------
    dict
        Seconds spent per step: 'gjk_ros ConvexPolytope.from_points', then one entry per
        method (PairSet construction for the batch methods).

    """
    seconds = {}
    polytopes = None
    if core is not None and any(m.family == 'gjk_ros' for m in methods):
        start = time.perf_counter()
        polytopes = [core.ConvexPolytope.from_points(p) for p in bodies]
        seconds['gjk_ros ConvexPolytope.from_points'] = time.perf_counter() - start
    coal_shapes = None
    for method in methods:
        start = time.perf_counter()
        if method.family == 'gjk_ros':
            method.build_from_polytopes(polytopes)
        elif method.family == 'coal' and coal_shapes is not None:
            method.build_from_shapes(coal_shapes)
        else:
            method.build(bodies)
            if method.family == 'coal':
                coal_shapes = method.shapes
        seconds[method.name] = time.perf_counter() - start
    return seconds


def environment(core, methods):
    """
    Describe the machine, the versions and the peers' default caps.

    Parameters
    ----------
    core : module or None
        gjk_ros.core.
    methods : list of peers.Method
        Methods that ran.

    Returns
    -------
    dict
        Flat description for the report.

    """
    import numba
    import scipy
    info = {'python': platform.python_version(), 'numpy': numpy.__version__,
            'scipy': scipy.__version__, 'numba': numba.__version__,
            'platform': platform.platform(), 'cpu': cpu_model(), 'cores': os.cpu_count(),
            'load_average_start': os.getloadavg()[0]}
    for name, module in (('coal', peers.coal), ('python-fcl', peers.fcl),
                         ('mujoco', peers.mujoco)):
        info[name] = getattr(module, '__version__', 'missing') if module else 'missing'
    if peers.coal is not None:
        info['coal_defaults'] = peers.coal_defaults()
    if peers.mujoco is not None:
        info['mujoco_defaults'] = peers.MujocoCall().iteration_caps()
    if core is not None:
        from gjk_ros.core import tolerances
        info['gjk_ros_caps'] = {key: getattr(tolerances, key) for key in dir(tolerances)
                                if key.isupper() and ('MAX' in key or 'MIN_VERTICES' in key)}
    return info


def cpu_model():
    """
    Return the CPU model name (Linux), or the platform's processor string.

    Returns
    -------
    str
        Model name.

    """
    try:
        with open('/proc/cpuinfo') as handle:
            for line in handle:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_benchmark(config, progress=None):
    """
    Run everything the configuration asks for.

    Parameters
    ----------
    config : Config
        What to run.
    progress : callable, optional
        Called with one line of progress text per scene.

    Returns
    -------
    Results
        Rows for the report.

    """
    start = time.perf_counter()
    core, core_error = peers.import_core()
    methods, missing = select_methods(config, core)
    if core_error:
        missing['gjk_ros'] = core_error
    results = Results(config=config, missing=missing)
    results.environment = environment(core, methods)
    for shape, size in families(config):
        bodies = scenes.make_bodies(shape, size, config.num_pairs, config.seed)
        build_start = time.perf_counter()
        for step, seconds in build_methods(methods, bodies, core).items():
            results.builds.append({'shape': shape, 'size': size, 'bodies': len(bodies),
                                   'what': step, 'seconds': seconds,
                                   'ms_per_body': 1000.0 * seconds / len(bodies)})
        geometries = reference.body_geometries(bodies)
        build_s = time.perf_counter() - build_start
        for spec in scene_specs(config, shape, size):
            scene_start = time.perf_counter()
            run_scene(scenes.make_scene(spec, config.seed, bodies), methods, geometries,
                      config, results)
            if progress is not None:
                progress('%-28s %5.1f s (build %.1f s)' % (
                    spec.name, time.perf_counter() - scene_start, build_s))
            build_s = 0.0
    results.profile = peers.profile_overheads(core, config.num_pairs)
    if config.extras and core is not None:
        if progress is not None:
            progress('peer targets: single calls, planner batches, node start-up')
        results.extras = peer_targets.measure_extras(config.quick)
    if config.extras and core is not None:
        if progress is not None:
            progress('contact suite: the answer contract at exact contacts, every entry point')
        results.contact = contact_suite.measure(config.quick, config.seed)
    if config.extras and core is not None:
        if progress is not None:
            progress('observation sources: a 640x480 cloud against the Panda')
        observations_bench.main(
            ['--output', os.path.join(config.out, 'observations.md'), '--seed',
             str(config.seed)] + (['--clouds', '3', '--cycles', '20'] if config.quick else []))
    if config.extras and core is not None:
        if progress is not None:
            progress('swept distances: arm scenes at 30 Hz')
        motion_bench.main(['--output', os.path.join(config.out, 'motion.md'), '--seed',
                           str(config.seed)] + (['--cycles', '20'] if config.quick else []))
    meshes_bench.run_in_suite(config, progress)
    if config.extras and core is not None:
        run_load_bench(config, progress)
    results.environment['load_average_end'] = os.getloadavg()[0]
    results.elapsed_s = time.perf_counter() - start
    return results


def run_load_bench(config, progress):
    """
    Run the live-node load benchmark (bench/load_bench.py) into the output folder.

    It starts the node and its publishers on the ROS graph of this environment (``make
    bench`` sets it up); when they cannot start, the reason is printed and the rest of the
    report is still written.
    """
    if progress is not None:
        progress('the live node under load: cameras, obstacles, kilohertz TF, overload')
    try:
        load_bench.main((['--quick'] if config.quick else []) + ['--results-dir', config.out])
    except (ImportError, OSError, RuntimeError) as error:
        if progress is not None:
            progress('load benchmark not run: %s' % error)


def parse_args(argv):
    """
    Parse the command line.

    Parameters
    ----------
    argv : list of str
        Arguments without the program name.

    Returns
    -------
    argparse.Namespace
        quick, out, seed.

    """
    parser = argparse.ArgumentParser(
        prog='python -m bench.run',
        description='Reproduce Cameron 1997 section 4 with gjk_ros and compare with peers.')
    parser.add_argument('--quick', action='store_true',
                        help='fewer sizes, pairs and repetitions (under a minute)')
    parser.add_argument('--out', default=DEFAULT_OUT, help='output folder (default %(default)s)')
    parser.add_argument('--seed', type=int, default=0, help='scene seed (default %(default)s)')
    return parser.parse_args(argv)


def main(argv=None):
    """
    Run the benchmark and write the report.

    Parameters
    ----------
    argv : list of str, optional
        Command line arguments (default: sys.argv[1:]).

    Returns
    -------
    int
        Exit code (0).

    """
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.quick:
        config = quick_config(seed=args.seed, out=args.out)
    else:
        config = Config(seed=args.seed, out=args.out)

    def progress(line):
        sys.stdout.write(line + '\n')
        sys.stdout.flush()

    results = run_benchmark(config, progress)
    path = report.write_all(results, config.out)
    progress('report: %s (%.0f s)' % (path, results.elapsed_s))
    if os.path.abspath(config.out) == os.path.abspath(DEFAULT_OUT):
        # The stored results changed: the documentation's performance page follows them.
        progress('performance page: %s' % performance.write_page(config.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
