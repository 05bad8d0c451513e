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
Write the benchmark results: CSV files, PNG plots (Fig. 3, 4, 5 of Cameron 1997) and report.md.

report.md answers each claim of the paper's section 4 and each project target with "met" or
"not met" and the numbers behind it. Times are per query in microseconds; "tracked" is the mean
over steps 2..20 of a sequence, "cold" the first step, "sequence" the mean of all 20 steps (the
paper's average for a sequence of 20).
"""

import csv
import json
import math
import os

import numpy

# Scenes the figures and the headline table are drawn from.
FIG34 = {'distance': 'gap3', 'rotation_deg': 0.0}
HEADLINE = {'distance': 'gap1', 'rotation_deg': 6.0}
MAIN = 'gjk_batch_track_hc'
# Targets of the project (issue 4).
TARGET_BATCH_NS = 500.0
TARGET_COAL_RATIO = 3.0
TARGET_FLATNESS = 1.5
TARGET_ITERATIONS = 2.0
EXACT_DEPTH = 1e-9
PAPER_FIG4_FLATNESS = 42.0 / 32.0

PEER_ORDER = ('gjk_batch_track_hc', 'gjk_call_track', 'coal_warm', 'coal_cold', 'fcl', 'mujoco')
SHORT = {
    'gjk_batch_track_hc': 'gjk batch tracked',
    'gjk_batch_track_nohc': 'gjk batch tracked, no HC',
    'gjk_batch_cold_hc': 'gjk batch cold',
    'gjk_batch_cold_nohc': 'gjk batch cold, no HC',
    'gjk_call_track': 'gjk call tracked',
    'gjk_call_cold': 'gjk call cold',
    'coal_warm': 'coal warm',
    'coal_cold': 'coal cold',
    'fcl': 'fcl',
    'mujoco': 'mujoco',
}


def write_all(results, out):
    """
    Write every output file.

    Parameters
    ----------
    results : bench.run.Results
        What the run measured.
    out : str
        Output folder (created if needed).

    Returns
    -------
    str
        Path of report.md.

    """
    os.makedirs(out, exist_ok=True)
    write_csv(os.path.join(out, 'timings.csv'), results.timings)
    write_csv(os.path.join(out, 'references.csv'), results.references)
    write_csv(os.path.join(out, 'depth_apis.csv'), results.depth_apis)
    write_csv(os.path.join(out, 'builds.csv'), results.builds)
    with open(os.path.join(out, 'run.json'), 'w') as handle:
        json.dump({'config': vars(results.config), 'environment': results.environment,
                   'profile': results.profile, 'missing': results.missing,
                   'elapsed_s': results.elapsed_s}, handle, indent=2, default=str)
    figures = write_plots(results, out)
    path = os.path.join(out, 'report.md')
    with open(path, 'w') as handle:
        handle.write(render_report(results, figures))
    return path


def write_csv(path, rows):
    """
    Write rows of dicts as CSV (the union of their keys as columns).

    Parameters
    ----------
    path : str
        File path.
    rows : list of dict
        Rows.

    """
    columns = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    with open(path, 'w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


class Table:
    """Look-ups into the timing rows."""

    def __init__(self, rows):
        """
        Index the rows.

        Parameters
        ----------
        rows : list of dict
            Timing rows of bench.run.

        """
        self.rows = rows
        self.index = {(r['shape'], r['size'], r['distance'], r['rotation_deg'], r['method']): r
                      for r in rows}

    def get(self, method, size, distance, rotation_deg, shape='hull'):
        """
        Return one row, or None.

        Parameters
        ----------
        method : str
            Method name.
        size : int
            Vertices per body.
        distance : str
            'gap3', 'gap1' or 'overlap'.
        rotation_deg : float
            Rotation per step.
        shape : str
            'hull' or 'box'.

        Returns
        -------
        dict or None
            The row.

        """
        return self.index.get((shape, size, distance, float(rotation_deg), method))

    def value(self, key, method, size, distance, rotation_deg, shape='hull'):
        """
        Return one field of one row (NaN when missing).

        Parameters
        ----------
        key : str
            Field name.
        method, size, distance, rotation_deg, shape
            As in `get`.

        Returns
        -------
        float
            The value.

        """
        row = self.get(method, size, distance, rotation_deg, shape)
        if row is None or row.get(key) is None:
            return float('nan')
        return float(row[key])

    def sizes(self, shape='hull'):
        """
        Return the sizes present.

        Parameters
        ----------
        shape : str
            Body family.

        Returns
        -------
        list of int
            Sorted sizes.

        """
        return sorted({r['size'] for r in self.rows if r['shape'] == shape})

    def methods(self):
        """
        Return the method names present.

        Returns
        -------
        set of str
            Names.

        """
        return {r['method'] for r in self.rows}

    def scenes(self, shape='hull'):
        """
        Return the (distance, rotation) settings present.

        Parameters
        ----------
        shape : str
            Body family.

        Returns
        -------
        list of tuple
            (distance label, rotation) pairs.

        """
        return sorted({(r['distance'], r['rotation_deg']) for r in self.rows
                       if r['shape'] == shape})

    def where(self, **conditions):
        """
        Return the rows matching every condition.

        Parameters
        ----------
        **conditions
            Field name -> value.

        Returns
        -------
        list of dict
            Matching rows.

        """
        return [r for r in self.rows if all(r.get(k) == v for k, v in conditions.items())]


def us(nanoseconds):
    """
    Format nanoseconds as microseconds.

    Parameters
    ----------
    nanoseconds : float
        Time.

    Returns
    -------
    str
        e.g. '0.42'.

    """
    if nanoseconds is None or not math.isfinite(nanoseconds):
        return 'n/a'
    value = nanoseconds / 1000.0
    return '%.3f' % value if value < 1.0 else '%.2f' % value if value < 100 else '%.0f' % value


def num(value, digits=2):
    """
    Format a number (n/a for NaN).

    Parameters
    ----------
    value : float
        Number.
    digits : int
        Decimals.

    Returns
    -------
    str
        Text.

    """
    if value is None or not math.isfinite(value):
        return 'n/a'
    return '%.*f' % (digits, value)


def sci(value):
    """
    Format an error in scientific notation.

    Parameters
    ----------
    value : float
        Error.

    Returns
    -------
    str
        e.g. '3.1e-16'.

    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 'n/a'
    if math.isinf(value):
        return 'missing'
    return '%.1e' % value


def verdict(met):
    """
    Return the verdict word.

    Parameters
    ----------
    met : bool or None
        True, False or None (could not be measured).

    Returns
    -------
    str
        '**met**', '**not met**' or '**not measured**'.

    """
    if met is None:
        return '**not measured**'
    return '**met**' if met else '**not met**'


# Plots -----------------------------------------------------------------------------------------

def write_plots(results, out):
    """
    Draw the figures that mirror the paper, and the peer comparison.

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    out : str
        Output folder.

    Returns
    -------
    dict
        Figure name -> file name (only those drawn).

    """
    try:
        import matplotlib
    except ImportError:  # the report still says everything; only the pictures are missing
        return {}
    matplotlib.use('Agg')
    from matplotlib import pyplot

    table = Table(results.timings)
    figures = {}
    drawers = (('fig3', draw_fig3), ('fig4', draw_fig4), ('fig5', draw_fig5),
               ('peers', draw_peers), ('accuracy', draw_accuracy))
    for name, draw in drawers:
        figure = draw(pyplot, table)
        if figure is None:
            continue
        filename = '%s.png' % name
        figure.savefig(os.path.join(out, filename), dpi=110)
        pyplot.close(figure)
        figures[name] = filename
    return figures


def size_series(table, key, method, distance, rotation_deg):
    """
    Return (sizes, values) of one field over the hull sizes.

    Parameters
    ----------
    table : Table
        Rows.
    key : str
        Field.
    method : str
        Method name.
    distance : str
        Distance label.
    rotation_deg : float
        Rotation.

    Returns
    -------
    tuple of (list, list)
        Sizes and values where present.

    """
    sizes, values = [], []
    for size in table.sizes():
        value = table.value(key, method, size, distance, rotation_deg)
        if math.isfinite(value):
            sizes.append(size)
            values.append(value)
    return sizes, values


def two_panel(pyplot, title):
    """
    Make a figure with a time panel and a counter panel.

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    title : str
        Figure title.

    Returns
    -------
    tuple
        (figure, time axes, counter axes).

    """
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(11, 4.2))
    figure.suptitle(title, fontsize=10)
    for axes in (left, right):
        axes.set_xscale('log', base=2)
        axes.set_xlabel('vertices per hull')
        axes.grid(True, which='both', alpha=0.3)
    left.set_yscale('log')
    left.set_ylabel('time per query (us)')
    return figure, left, right


def draw_fig3(pyplot, table):
    """
    Fig. 3: time and iterations against hull size without tracking, with and without HC.

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    table : Table
        Rows.

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure (None without data).

    """
    methods = [m for m in ('gjk_batch_cold_hc', 'gjk_batch_cold_nohc') if m in table.methods()]
    if not methods:
        return None
    figure, left, right = two_panel(
        pyplot, 'Fig. 3: no tracking (every query cold), translation only, gap 3 diameters')
    for method, style in zip(methods, ('o-', 's--')):
        sizes, times = size_series(table, 'sequence_ns', method, **FIG34)
        left.plot(sizes, numpy.array(times) / 1000.0, style, label=SHORT[method])
        sizes, iterations = size_series(table, 'iterations_tracked', method, **FIG34)
        right.plot(sizes, iterations, style, label=SHORT[method] + ': GJK iterations')
        sizes, supports = size_series(table, 'support_calls_tracked', method, **FIG34)
        right.plot(sizes, supports, style, alpha=0.5, label=SHORT[method] + ': support calls')
    right.set_ylabel('per query')
    left.legend(fontsize=8)
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def draw_fig4(pyplot, table):
    """
    Fig. 4: time and iterations against hull size with tracking (sequences of 20).

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    table : Table
        Rows.

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure.

    """
    methods = [m for m in ('gjk_batch_track_hc', 'gjk_batch_track_nohc')
               if m in table.methods()]
    if not methods:
        return None
    figure, left, right = two_panel(
        pyplot, 'Fig. 4: tracking, sequences of 20 (first query cold), translation only, '
        'gap 3 diameters')
    for method, style in zip(methods, ('o-', 's--')):
        sizes, times = size_series(table, 'sequence_ns', method, **FIG34)
        left.plot(sizes, numpy.array(times) / 1000.0, style,
                  label=SHORT[method] + ' (sequence mean)')
        sizes, times = size_series(table, 'tracked_ns', method, **FIG34)
        left.plot(sizes, numpy.array(times) / 1000.0, style, alpha=0.5,
                  label=SHORT[method] + ' (tracked steps)')
        sizes, iterations = size_series(table, 'iterations_tracked', method, **FIG34)
        right.plot(sizes, iterations, style, label=SHORT[method] + ': GJK iterations')
        sizes, steps = size_series(table, 'hill_climb_steps_tracked', method, **FIG34)
        if method.endswith('_hc'):
            right.plot(sizes, steps, style, alpha=0.5,
                       label=SHORT[method] + ': hill-climb steps')
    right.set_ylabel('per tracked query')
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def draw_fig5(pyplot, table):
    """
    Fig. 5: tracked time against hull size for rotation x distance.

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    table : Table
        Rows.

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure.

    """
    if MAIN not in table.methods():
        return None
    figure, left, right = two_panel(
        pyplot, 'Fig. 5: gjk_ros PairSet tracked with hill climbing; rotation per step '
        '0/6/12 deg (solid/dotted/dashed) x distance')
    line_styles = {0.0: '-', 6.0: ':', 12.0: '--'}
    markers = {'gap3': 'o', 'gap1': 'x', 'overlap': 's'}
    names = {'gap3': '3 diameters', 'gap1': '1 diameter', 'overlap': 'overlapping'}
    for distance, rotation in table.scenes():
        style = markers[distance] + line_styles.get(rotation, '-')
        label = '%s, %g deg' % (names[distance], rotation)
        sizes, times = size_series(table, 'sequence_ns', MAIN, distance, rotation)
        left.plot(sizes, numpy.array(times) / 1000.0, style, label=label)
        sizes, iterations = size_series(table, 'iterations_tracked', MAIN, distance, rotation)
        right.plot(sizes, iterations, style, label=label)
    right.set_ylabel('GJK iterations per tracked query')
    left.legend(fontsize=7, ncol=1)
    figure.tight_layout()
    return figure


def draw_peers(pyplot, table):
    """
    Peer comparison on the headline scene (tracked steps).

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    table : Table
        Rows.

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure.

    """
    methods = [m for m in PEER_ORDER if m in table.methods()]
    if not methods:
        return None
    figure, left, right = two_panel(
        pyplot, 'Tracked steps, gap 1 diameter, 6 deg per step (left) and overlapping, '
        '6 deg per step (right): time per query')
    right.set_yscale('log')
    right.set_ylabel('time per query (us)')
    for method in methods:
        sizes, times = size_series(table, 'tracked_ns', method, **HEADLINE)
        left.plot(sizes, numpy.array(times) / 1000.0, 'o-', label=SHORT[method])
        sizes, times = size_series(table, 'tracked_ns', method, 'overlap', 6.0)
        right.plot(sizes, numpy.array(times) / 1000.0, 'o-', label=SHORT[method])
    left.axhline(TARGET_BATCH_NS / 1000.0, color='k', lw=0.8, ls=':', label='0.5 us target')
    left.legend(fontsize=7)
    figure.tight_layout()
    return figure


def draw_accuracy(pyplot, table):
    """
    Largest error against the exact reference on overlapping scenes, per method and size.

    Parameters
    ----------
    pyplot : module
        matplotlib.pyplot.
    table : Table
        Rows.

    Returns
    -------
    matplotlib.figure.Figure or None
        The figure.

    """
    methods = [m for m in PEER_ORDER if m in table.methods()]
    if not methods:
        return None
    figure, axes = pyplot.subplots(figsize=(6.5, 4.2))
    floor = 1e-17
    for method in methods:
        sizes, errors = [], []
        for size in table.sizes():
            worst = max((float(r['max_error_penetrating']) for r in table.where(
                method=method, size=size, distance='overlap', shape='hull')
                if math.isfinite(float(r['max_error_penetrating']))), default=float('nan'))
            if math.isfinite(worst):
                sizes.append(size)
                errors.append(max(worst, floor))
        axes.plot(sizes, errors, 'o-', label=SHORT[method])
    axes.set_xscale('log', base=2)
    axes.set_yscale('log')
    axes.set_xlabel('vertices per hull')
    axes.set_ylabel('largest |depth error| (unit-radius bodies)')
    axes.set_title('Penetration depth error vs exact Minkowski hull (overlapping scenes)',
                   fontsize=9)
    axes.grid(True, which='both', alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


# Report ----------------------------------------------------------------------------------------

def render_report(results, figures):
    """
    Render report.md.

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    figures : dict
        Figure name -> file.

    Returns
    -------
    str
        Markdown text.

    """
    table = Table(results.timings)
    parts = [
        '# gjk_ros benchmark: Cameron 1997 section 4, and peers\n',
        section_setup(results),
        section_targets(results, table),
        section_issue10(results, table),
        section_claims(results, table),
        section_headline(results, table),
        section_accuracy(results, table),
        section_counters(table),
        section_profile(results, table),
        section_builds(results),
        section_figures(figures),
    ]
    return '\n'.join(part for part in parts if part)


def section_setup(results):
    """
    Describe what ran, how it was timed and checked.

    Parameters
    ----------
    results : bench.run.Results
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    config, env = results.config, results.environment
    lines = [
        '## Setup\n',
        '- Run: `python -m bench.run%s --seed %d` in %.0f s; %s; %s cores; load average %.1f '
        'at start, %.1f at end (the machine is shared: absolute times are noisy, ratios and '
        'counters less so).' % (' --quick' if config.quick else '', config.seed,
                                results.elapsed_s, env.get('cpu', '?'), env.get('cores', '?'),
                                env.get('load_average_start', float('nan')),
                                env.get('load_average_end', float('nan'))),
        '- Versions: Python %s, numpy %s, scipy %s, numba %s, coal %s, python-fcl %s, '
        'mujoco %s.' % tuple(env.get(k, '?') for k in (
            'python', 'numpy', 'scipy', 'numba', 'coal', 'python-fcl', 'mujoco')),
        '- Scenes: random hulls of %s points on the unit sphere (every point is a vertex) and '
        'random boxes; %d pairs x sequences of %d steps (first query cold, then tracked). Body '
        'A fixed, body B translating %.2f diameters per step in a constant random direction and '
        'rotating by a random angle in [0, 0/6/12 deg] about a random axis each step. Distance: '
        'bounding spheres 3 or 1 diameters apart, or centres at 0.2-0.8 x (r_a + r_b) '
        '(overlapping most of the time).' % (
            '/'.join(str(s) for s in config.sizes), config.num_pairs, config.steps,
            _step_translation()),
        '- Timing: one step of a scene (all pairs) is timed with `time.perf_counter_ns`; '
        'per-query time = step time / pairs; the median over %d repetitions (fewer for slow '
        'methods: %.1f s budget per method and scene; the repetitions of all methods are '
        'interleaved) after a discarded warm-up run, so numba compilation is excluded. Batch '
        '(PairSet) rows pay one Python call per step, per-call rows one Python call per pair '
        '(an empty Python loop of that shape costs %s us per '
        'iteration here). Pose objects of the peers (coal/fcl transforms, MuJoCo kinematics) '
        'are prepared outside the clock.' % (
            config.reps, config.method_budget_s,
            us(results.profile.get('python_loop_ns', float('nan')))),
        '- Correctness: every answer is compared with an exact reference (bench/reference.py): '
        'separated queries by a certificate (witness points inside the bodies and the '
        'separating slab along the normal, bounds meeting within 1e-9), any other query by '
        'the exact Minkowski-difference hull (bench/exact.py) under a %.1f s budget per scene '
        '(see "Accuracy" for how many queries that covered).' % config.hull_budget_s,
    ]
    if results.missing:
        missing = ', '.join('%s (%s)' % item for item in results.missing.items())
        lines.append('- Not run: %s.' % missing)
    caps = []
    if 'coal_defaults' in env:
        caps.append('coal DistanceRequest defaults: %s' % _fmt_dict(env['coal_defaults']))
    if 'mujoco_defaults' in env:
        caps.append('MuJoCo defaults: %s (native GJK/EPA; EPA stops at ccd_iterations; mesh '
                    'vertices are stored as float32)' % _fmt_dict(env['mujoco_defaults']))
    if env.get('python-fcl', 'missing') != 'missing':
        caps.append('python-fcl exposes no iteration caps: DistanceRequest(enable_signed_'
                    'distance) uses libccd GJK/EPA; collide() reports libccd MPR penetration')
    if 'gjk_ros_caps' in env:
        caps.append('gjk_ros caps: %s' % _fmt_dict(env['gjk_ros_caps']))
    if caps:
        lines.append('- Iteration caps: ' + '; '.join(caps) + '.')
    return '\n'.join(lines) + '\n'


def _step_translation():
    from .scenes import STEP_TRANSLATION
    return STEP_TRANSLATION


def _fmt_dict(values):
    return ', '.join('%s=%s' % (k, v) for k, v in values.items())


def worst_over_scenes(table, key, method, size, pick=max, distances=None):
    """
    Return the worst value of a field over the hull scenes of one size.

    Parameters
    ----------
    table : Table
        Rows.
    key : str
        Field.
    method : str
        Method name.
    size : int
        Vertices.
    pick : callable
        max or min.
    distances : tuple of str, optional
        Only these distance settings.

    Returns
    -------
    tuple of (float, str)
        Value and the scene it came from.

    """
    best = (float('nan'), '')
    for row in table.where(method=method, size=size, shape='hull'):
        if distances is not None and row['distance'] not in distances:
            continue
        value = float(row.get(key, float('nan')))
        if not math.isfinite(value):
            continue
        if not math.isfinite(best[0]) or pick(value, best[0]) == value:
            best = (value, row['scene'])
    return best


def section_targets(results, table):
    """
    One line per project target, with the verdict and the numbers.

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    lines = ['## Targets\n']
    sizes = table.sizes()
    if MAIN not in table.methods():
        return '\n'.join(lines + ['gjk_ros did not run: no target can be measured.\n'])
    lines.append(target_batch_time(table, sizes))
    lines.append(why_batch_time(results, table, sizes))
    lines.append(target_coal_ratio(table, sizes))
    lines.append(why_coal_ratio(results, table, sizes))
    lines.append(target_flatness(table, sizes))
    lines.append(why_flatness(table, sizes))
    lines.append(target_depth(results, table, sizes))
    lines.append(target_iterations(table, sizes))
    lines.append(why_iterations(table))
    return '\n'.join(line for line in lines if line) + '\n'


def section_issue10(results, table):
    """Issue 10's rows (see bench/issue10.py); empty when gjk_ros did not run."""
    from . import issue10
    if MAIN not in table.methods():
        return ''
    return issue10.section(table, results.extras, verdict)


def counters_at(table, size, distance, rotation_deg):
    """
    Format the main counters of one scene.

    Parameters
    ----------
    table : Table
        Rows.
    size : int
        Vertices.
    distance : str
        Distance label.
    rotation_deg : float
        Rotation.

    Returns
    -------
    str
        e.g. 'GJK 1.02, support 1.0, HC 0.4, EPA 0.0'.

    """
    values = [table.value(key, MAIN, size, distance, rotation_deg) for key in
              ('iterations_tracked', 'support_calls_tracked', 'hill_climb_steps_tracked',
               'epa_iterations_tracked')]
    return 'GJK %s, support %s, HC %s, EPA %s' % tuple(num(v, 1) for v in values)


def why_batch_time(results, table, sizes):
    """
    Explain a missed batch-time target from the fixed costs and the counters.

    Parameters
    ----------
    results : bench.run.Results
        Profile numbers.
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Indented markdown bullets ('' when the target is met).

    """
    worst = [worst_over_scenes(table, 'tracked_ns', MAIN, size) for size in sizes]
    if all(value < TARGET_BATCH_NS for value, _ in worst):
        return ''
    pairs = results.config.num_pairs
    lines = []
    fixed = results.profile.get('pairset_update_inactive_ns')
    if fixed is not None:
        lines.append('  - Why: one PairSet.update costs %s us before any geometry (all pairs '
                     'inactive: pose validation, argument handling, numba dispatch), %s us per '
                     'pair at %d pairs%s.' % (
                         us(fixed), us(fixed / pairs), pairs,
                         ': that alone exceeds the target' if fixed / pairs >= TARGET_BATCH_NS
                         else ''))
    points = results.profile.get('pairset_update_points_ns')
    if points is not None and fixed is not None:
        lines.append('  - A PairSet of single points (the least work a query can do) costs %s us '
                     'per pair, %s us per pair above the fixed cost: the floor of the compiled '
                     'per-pair path.' % (us(points / pairs), us(max(points - fixed, 0.0) / pairs)))
    if fixed is not None:
        net = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size,
                                       distances=('gap3', 'gap1'))[0] - fixed / pairs
               for size in sizes}
        lines.append('  - Without that fixed cost the worst separated scene per size would take '
                     '(us per pair): %s: %s.' % (
                         ', '.join('%d: %s' % (size, us(max(value, 0.0)))
                                   for size, value in net.items()),
                         'within the target' if all(v < TARGET_BATCH_NS for v in net.values())
                         else 'still above the target somewhere'))
    overlap = [(table.value('tracked_ns', MAIN, size, 'overlap', rot), size, rot)
               for size in sizes for rot in (0.0, 6.0, 12.0)]
    overlap = [item for item in overlap if math.isfinite(item[0])]
    if overlap:
        value, size, rot = max(overlap)
        lines.append('  - Slowest scene: overlapping, %d vertices, %g deg/step, %s us per pair '
                     '(counters per tracked query: %s): EPA expansions and the hill-climbing '
                     'walks of their support calls dominate; fewer expansions per tracked step '
                     'and shorter walks (each starting next to the face being expanded) would '
                     'cut it.' % (size, rot, us(value), counters_at(table, size, 'overlap', rot)))
    return '\n'.join(lines)


def why_coal_ratio(results, table, sizes):
    """
    Explain a missed coal ratio from the per-call floors.

    Parameters
    ----------
    results : bench.run.Results
        Profile numbers.
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Indented markdown bullet ('' without the data).

    """
    profile = results.profile
    if 'coal_spheres_ns' not in profile or 'coal_warm' not in table.methods():
        return ''
    parts = ['  - Context: coal answers a call on two spheres in %s us (its binding floor, '
             'result.clear() included)' % us(profile['coal_spheres_ns'])]
    if 'signed_distance_points_ns' in profile:
        parts.append('gjk_ros signed_distance on two points takes %s us'
                     % us(profile['signed_distance_points_ns']))
    if 'pairset_update_points_ns' in profile:
        parts.append('a PairSet of points %s us per pair' % us(
            profile['pairset_update_points_ns'] / results.config.num_pairs))
    closing = ('. A 3x margin needs the per-pair batch cost well under a third of the '
               'per-call cost of coal, so the fixed costs above must go first.')
    return '; '.join(parts) + closing


def why_flatness(table, sizes):
    """
    Show the counters at the smallest and largest size of the scenes that miss flatness.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Indented markdown bullet ('' when no scene misses).

    """
    small, large = min(sizes), max(sizes)
    missed = []
    for distance, rotation in table.scenes():
        a = table.value('tracked_ns', MAIN, small, distance, rotation)
        b = table.value('tracked_ns', MAIN, large, distance, rotation)
        if math.isfinite(a) and math.isfinite(b) and b / a > TARGET_FLATNESS:
            missed.append('%s/%g deg: %s -> %s' % (
                distance, rotation, counters_at(table, small, distance, rotation),
                counters_at(table, large, distance, rotation)))
    if not missed:
        return ''
    return ('  - Counters per tracked query at %d -> %d vertices in the scenes that miss: %s. '
            'Work that grows with size is what breaks flatness; time growing at constant '
            'counters points at memory effects or noise.' % (small, large, '; '.join(missed)))


def why_iterations(table):
    """
    Name the scenes above 2 GJK iterations per tracked query and why.

    Parameters
    ----------
    table : Table
        Rows.

    Returns
    -------
    str
        Indented markdown bullet ('' when none).

    """
    above = [r for r in table.where(method=MAIN, shape='hull')
             if float(r.get('iterations_tracked', 0.0)) > TARGET_ITERATIONS]
    if not above:
        return ''
    above.sort(key=lambda r: (r['size'], r['rotation_deg']))
    return ('  - Scenes above 2: %s. A hull of n points on a sphere has features about '
            'sqrt(4 pi / n) rad wide (4.5 deg at 2048), so a step that turns body B by up to '
            '12 deg carries the witness over several features, and each crossing costs a GJK '
            "iteration; the paper's hulls had at most ~500 vertices." % ', '.join(
                '%s %.2f' % (r['scene'], float(r['iterations_tracked'])) for r in above))


def target_batch_time(table, sizes):
    """
    Target: tracked batch query below 0.5 us per pair at every size.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    worst = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size) for size in sizes}
    separated = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size,
                                         distances=('gap3', 'gap1')) for size in sizes}
    met = all(v[0] < TARGET_BATCH_NS for v in worst.values())
    return ('- Tracked batch query < 0.5 us per pair at every size: %s. Worst scene per size '
            '(us): %s. Separated scenes only: %s.' % (
                verdict(met), ', '.join('%d: %s' % (s, us(worst[s][0])) for s in sizes),
                ', '.join('%d: %s' % (s, us(separated[s][0])) for s in sizes)))


def target_coal_ratio(table, sizes):
    """
    Target: at least 3x faster than coal warm-started per call on the same tracked sequences.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    if 'coal_warm' not in table.methods():
        return '- >= 3x faster than coal warm-started: %s (coal not installed).' % verdict(None)
    ratios, call_ratios = [], []
    for row in table.where(method='coal_warm', shape='hull'):
        key = (row['size'], row['distance'], row['rotation_deg'])
        mine = table.value('tracked_ns', MAIN, *key)
        call = table.value('tracked_ns', 'gjk_call_track', *key)
        ratios.append((float(row['tracked_ns']) / mine, row['scene']))
        if math.isfinite(call):
            call_ratios.append((float(row['tracked_ns']) / call, row['scene']))
    if not ratios:
        return '- >= 3x faster than coal warm-started: %s.' % verdict(None)
    worst = min(ratios)
    per_size = {}
    for ratio, scene in ratios:
        size = int(scene.split('-n')[1].split('-')[0])
        per_size[size] = min(per_size.get(size, float('inf')), ratio)
    text = ('- >= 3x faster than coal warm-started per call on the same tracked sequences '
            '(coal per-call time / gjk_ros PairSet per-pair time, tracked steps): %s. Smallest '
            'ratio per size: %s; overall smallest %.2fx (%s).' % (
                verdict(worst[0] >= TARGET_COAL_RATIO),
                ', '.join('%d: %.2fx' % (s, per_size[s]) for s in sorted(per_size)),
                worst[0], worst[1]))
    if call_ratios:
        worst_call = min(call_ratios)
        best_call = max(call_ratios)
        text += (' Per call against per call (gjk_ros signed_distance with a SimplexCache): '
                 '%.2fx to %.2fx.' % (worst_call[0], best_call[0]))
    return text


def target_flatness(table, sizes):
    """
    Target: tracked time at 2048 within 1.5x of the time at 8.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    small, large = min(sizes), max(sizes)
    ratios = []
    for distance, rotation in table.scenes():
        a = table.value('tracked_ns', MAIN, small, distance, rotation)
        b = table.value('tracked_ns', MAIN, large, distance, rotation)
        if math.isfinite(a) and math.isfinite(b):
            ratios.append((b / a, '%s/%g deg' % (distance, rotation)))
    if not ratios or small != 8 or large != 2048:
        return ('- Tracked time at 2048 within 1.5x of 8: %s (sizes %d..%d ran).' % (
            verdict(None), small, large))
    worst = max(ratios)
    return ('- Tracked time at 2048 within 1.5x of the time at 8 (PairSet, tracked steps): %s. '
            'Ratio per scene: %s; worst %.2fx (%s).' % (
                verdict(worst[0] <= TARGET_FLATNESS),
                ', '.join('%s %.2fx' % (name, ratio) for ratio, name in ratios), worst[0],
                worst[1]))


def target_depth(results, table, sizes):
    """
    Target: exact penetration depth where the peers' defaults are not.

    Parameters
    ----------
    results : bench.run.Results
        Rows (depth APIs).
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    mine = [float(r['max_error_penetrating']) for r in table.where(method=MAIN)
            if math.isfinite(float(r['max_error_penetrating']))]
    checked = sum(int(r['checked_penetrating']) for r in table.where(method=MAIN))
    if not mine:
        return '- Exact penetration depth: %s (no penetrating query checked).' % verdict(None)
    worst_mine = max(mine)
    peer_worst = {}
    for method in ('coal_warm', 'coal_cold', 'fcl', 'mujoco'):
        errors = [(float(r['max_error_penetrating']), r['scene'])
                  for r in table.where(method=method)
                  if math.isfinite(float(r['max_error_penetrating']))]
        if errors:
            peer_worst[SHORT[method] + ' distance'] = max(errors)
    for row in results.depth_apis:
        value = float(row['max_error_penetrating'])
        if math.isfinite(value):
            name = row['api'].split(' (')[0]
            peer_worst[name] = max(peer_worst.get(name, (0.0, '')), (value, row['scene']))
    inexact = {name: v for name, v in peer_worst.items() if v[0] > 1e-6}
    met = worst_mine <= EXACT_DEPTH
    return ("- Exact penetration depth where peers' defaults are not: %s. gjk_ros largest "
            "depth error %s over %d hull-checked penetrating queries. Peers' largest: %s. "
            'Peers wrong by more than 1e-6 somewhere: %s.' % (
                verdict(met), sci(worst_mine), checked,
                '; '.join('%s %s (%s)' % (name, sci(v[0]), v[1])
                          for name, v in sorted(peer_worst.items())) or 'none ran',
                ', '.join(sorted(inexact)) or 'none'))


def target_iterations(table, sizes):
    """
    Target: mean GJK iterations per tracked step at most 2.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    rows = [r for r in table.where(method=MAIN, shape='hull') if 'iterations_tracked' in r]
    if not rows:
        return '- Mean GJK iterations per tracked step <= 2: %s.' % verdict(None)
    worst = max(rows, key=lambda r: r['iterations_tracked'])
    separated = [r for r in rows if r['distance'] != 'overlap']
    worst_sep = max(separated, key=lambda r: r['iterations_tracked']) if separated else worst
    mean = float(numpy.mean([r['iterations_tracked'] for r in rows]))
    return ('- Mean GJK iterations per tracked step <= 2: %s. Mean over all hull scenes %.2f; '
            'worst scene %.2f (%s); worst separated scene %.2f (%s).' % (
                verdict(float(worst['iterations_tracked']) <= TARGET_ITERATIONS), mean,
                worst['iterations_tracked'], worst['scene'], worst_sep['iterations_tracked'],
                worst_sep['scene']))


def section_claims(results, table):
    """
    Answer each claim of the paper's section 4 (and the iteration claim of section 3).

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    if MAIN not in table.methods():
        return ''
    sizes = table.sizes()
    lines = ['## Claims of Cameron 1997, section 4\n',
             "Figures 3 and 4 use the scene without rotation at 3 diameters (the paper's "
             '"reasonable average distance"); times are PairSet per-pair times.\n']
    lines.append(claim_iterations(table, sizes))
    lines.append(claim_fig3(table, sizes))
    lines.append(claim_fig4_linear(table, sizes))
    lines.append(claim_fig4_flat(table, sizes))
    lines.append(claim_tracking_gain(table, sizes))
    lines.append(claim_fig5(table, sizes))
    lines.append(claim_boxes(table))
    lines.append(claim_mtd(table))
    return '\n'.join(line for line in lines if line) + '\n'


def _range(values):
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 'n/a'
    return '%.2f-%.2f' % (min(finite), max(finite))


def claim_iterations(table, sizes):
    """
    Section 3: the loop runs once or twice per tracked call, 3-6 times cold.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    tracked = [table.value('iterations_tracked', MAIN, s, **FIG34) for s in sizes]
    cold = [table.value('iterations_cold', MAIN, s, **FIG34) for s in sizes]
    all_tracked = [float(r['iterations_tracked']) for r in table.where(method=MAIN)
                   if r['distance'] != 'overlap']
    # The paper's numbers are what its GJK needed; fewer iterations is no failure.
    met = max(tracked) <= 2.0 and max(cold) <= 6.0
    return ('- "The loop body is typically executed once or twice per call when tracking, and on '
            'average 3-6 times at initialisation, even for hundreds of vertices" (section 3): '
            '%s. Mean GJK iterations, translation-only scene: tracked %s, cold (first step) %s '
            'over sizes %d..%d; tracked over every separated scene %s.' % (
                verdict(met), _range(tracked), _range(cold), sizes[0], sizes[-1],
                _range(all_tracked)))


def claim_fig3(table, sizes):
    """
    Fig. 3: hill climbing helps without tracking, most for large hulls.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    ratios = []
    for size in sizes:
        a = table.value('sequence_ns', 'gjk_batch_cold_nohc', size, **FIG34)
        b = table.value('sequence_ns', 'gjk_batch_cold_hc', size, **FIG34)
        ratios.append((size, a / b))
    finite = [(s, r) for s, r in ratios if math.isfinite(r)]
    if not finite:
        return ''
    grows = finite[-1][1] > finite[0][1]
    met = grows and finite[-1][1] > 1.0
    return ('- Fig. 3 "usefulness of hill-climbing, most noticeable for larger hulls" (no '
            'tracking): %s. Time without / with hill climbing: %s.' % (
                verdict(met), ', '.join('%d: %.2fx' % item for item in finite)))


def claim_fig4_linear(table, sizes):
    """
    Fig. 4: with tracking and without hill climbing the time is almost linear in n.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    method = 'gjk_batch_track_nohc'
    times = [(s, table.value('tracked_ns', method, s, **FIG34)) for s in sizes]
    times = [(s, t) for s, t in times if math.isfinite(t)]
    if len(times) < 2:
        return ''
    (s0, t0), (s1, t1) = times[-2], times[-1]
    slope = math.log(t1 / t0) / math.log(s1 / s0)
    iterations = [table.value('iterations_tracked', method, s, **FIG34) for s in sizes]
    met = slope > 0.5 and max(iterations) < 2.0
    return ('- Fig. 4 "without hill-climbing an almost linear function ... average number of '
            'iterations quite close to 1": %s. Log-log slope of tracked time between %d and %d '
            'vertices %.2f (1 = linear); tracked iterations %s.' % (
                verdict(met), s0, s1, slope, _range(iterations)))


def claim_fig4_flat(table, sizes):
    """
    Fig. 4: with hill climbing the tracked time is nearly constant (32-42 us, 10..500).

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    times = {s: table.value('sequence_ns', MAIN, s, **FIG34) for s in sizes}
    upto512 = [t for s, t in times.items() if s <= 512 and math.isfinite(t)]
    every = [t for t in times.values() if math.isfinite(t)]
    if not upto512:
        return ''
    spread = max(upto512) / min(upto512)
    spread_all = max(every) / min(every)
    return ('- Fig. 4 "with hill-climbing ... very close to being a constant, 32-42 us for hull '
            'sizes between 10 and 500" (spread %.2fx): %s. Sequence-mean time spread over '
            '8..512 vertices %.2fx (%s us), over all sizes %.2fx (%s us at %d).' % (
                PAPER_FIG4_FLATNESS, verdict(spread <= TARGET_FLATNESS), spread,
                _range([t / 1000.0 for t in upto512]), spread_all,
                us(times[max(sizes)]), max(sizes)))


def claim_tracking_gain(table, sizes):
    """
    Section 4: tracking cuts the time (untracked is roughly twice the tracked time).

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    ratios = []
    for size in sizes:
        a = table.value('sequence_ns', 'gjk_batch_cold_hc', size, **FIG34)
        b = table.value('tracked_ns', MAIN, size, **FIG34)
        ratios.append((size, a / b))
    finite = [(s, r) for s, r in ratios if math.isfinite(r)]
    if not finite:
        return ''
    median = float(numpy.median([r for _, r in finite]))
    return ('- Tracking pays ("times ... without tracking roughly twice the times taken here"): '
            '%s (median ratio >= 1.5 counts as "roughly twice"). Untracked / tracked time (hill '
            'climbing on): %s; median %.2fx.' % (
                verdict(median >= 1.5), ', '.join('%d: %.2fx' % item for item in finite),
                median))


def claim_fig5(table, sizes):
    """
    Fig. 5: closer objects take slightly longer, overlapping ones tend to the untracked time.

    Parameters
    ----------
    table : Table
        Rows.
    sizes : list of int
        Hull sizes.

    Returns
    -------
    str
        Markdown bullet.

    """
    closer, overlap, untracked_share, rotation = [], [], [], []
    for size in sizes:
        for rot in (0.0, 6.0, 12.0):
            far = table.value('iterations_tracked', MAIN, size, 'gap3', rot)
            near = table.value('iterations_tracked', MAIN, size, 'gap1', rot)
            closer.append(near / far)
            over = table.value('sequence_ns', MAIN, size, 'overlap', rot)
            apart = table.value('sequence_ns', MAIN, size, 'gap3', rot)
            untracked = table.value('sequence_ns', 'gjk_batch_cold_hc', size, 'overlap', rot)
            overlap.append(over / apart)
            untracked_share.append(over / untracked)
        still = table.value('iterations_tracked', MAIN, size, 'gap1', 0.0)
        turning = table.value('iterations_tracked', MAIN, size, 'gap1', 12.0)
        rotation.append(turning / still)

    def median(values):
        finite = [v for v in values if math.isfinite(v)]
        return float(numpy.median(finite)) if finite else float('nan')

    closer_med, overlap_med = median(closer), median(overlap)
    share_med, rotation_med = median(untracked_share), median(rotation)
    lines = [
        '- Fig. 5 "as the objects are moved to roughly 1 object diameter apart the times '
        'increase slightly" (judged on GJK iterations, which timing noise does not blur): %s. '
        'Tracked iterations at 1 / 3 diameters: median %.2fx (range %s).' % (
            verdict(closer_med >= 1.0), closer_med, _range(closer)),
        '- Fig. 5 overlapping: "the usefulness of the tracking information drops off, and the '
        'times start to increase towards what we would see without tracking": %s. Overlapping '
        '/ 3-diameter sequence time: median %.2fx (range %s); overlapping tracked / untracked: '
        'median %.2fx (range %s).' % (
            verdict(overlap_med > 1.0), overlap_med, _range(overlap), share_med,
            _range(untracked_share)),
        '- Fig. 5 rotation (0/6/12 deg per step) moves the witness features: %s. Tracked '
        'iterations at 12 / 0 deg (1 diameter): median %.2fx (range %s).' % (
            verdict(rotation_med >= 1.0), rotation_med, _range(rotation)),
    ]
    return '\n'.join(lines)


def claim_boxes(table):
    """
    Section 4: boxes are even faster than random hulls.

    Parameters
    ----------
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown bullet.

    """
    boxes = [float(r['sequence_ns']) for r in table.where(method=MAIN, shape='box')
             if r['distance'] != 'overlap']
    hulls = [float(r['sequence_ns']) for r in table.where(method=MAIN, shape='hull', size=8)
             if r['distance'] != 'overlap']
    if not boxes or not hulls:
        return ''
    ratio = numpy.median(boxes) / numpy.median(hulls)
    return ('- "With boxes we find that the computation times are even lower" (10-20 us against '
            '32-42 us): %s. Box / 8-vertex hull sequence time, separated scenes: %.2fx (box '
            'median %s us).' % (verdict(ratio <= 1.0), ratio, us(numpy.median(boxes))))


def claim_mtd(table):
    """
    Section 5: the penetration measure (MTD) is computed exactly.

    Parameters
    ----------
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown bullet.

    """
    rows = table.where(method=MAIN, distance='overlap')
    errors = [float(r['max_error_penetrating']) for r in rows
              if math.isfinite(float(r['max_error_penetrating']))]
    if not errors:
        return ''
    epa = [float(r.get('epa_iterations_tracked', float('nan'))) for r in rows]
    return ('- Section 5 (MTD for penetrating objects): gjk_ros returns the exact MTD: %s; '
            'largest depth error %s; mean EPA iterations per tracked overlapping query %s.' % (
                verdict(max(errors) <= EXACT_DEPTH), sci(max(errors)), _range(epa)))


def section_headline(results, table):
    """
    Headline table: sizes x configurations on the headline scene.

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    methods = [m for m in PEER_ORDER if m in table.methods()]
    if not methods:
        return ''
    lines = ['## Headline: tracked time per query (us), gap 1 diameter, 6 deg per step\n',
             '| vertices | ' + ' | '.join(SHORT[m] for m in methods)
             + ' | coal warm / gjk batch | coal warm / gjk call | GJK iter. | support calls | '
             'HC steps |',
             '|' + '---|' * (len(methods) + 6)]
    for size in table.sizes():
        cells = [us(table.value('tracked_ns', m, size, **HEADLINE)) for m in methods]
        coal = table.value('tracked_ns', 'coal_warm', size, **HEADLINE)
        batch = table.value('tracked_ns', MAIN, size, **HEADLINE)
        call = table.value('tracked_ns', 'gjk_call_track', size, **HEADLINE)
        counters = [num(table.value(k, MAIN, size, **HEADLINE))
                    for k in ('iterations_tracked', 'support_calls_tracked',
                              'hill_climb_steps_tracked')]
        lines.append('| %d | %s | %s | %s | %s |' % (
            size, ' | '.join(cells), num(coal / batch), num(coal / call), ' | '.join(counters)))
    lines.append('\nCold first step (us):\n')
    lines.append('| vertices | ' + ' | '.join(SHORT[m] for m in methods) + ' |')
    lines.append('|' + '---|' * (len(methods) + 1))
    for size in table.sizes():
        lines.append('| %d | %s |' % (size, ' | '.join(
            us(table.value('cold_ns', m, size, **HEADLINE)) for m in methods)))
    lines.append('\nAll scenes and methods: timings.csv (tracked_ns, cold_ns, sequence_ns, '
                 'errors, counters).\n')
    return '\n'.join(lines)


def section_accuracy(results, table):
    """
    Largest error of every method against the exact reference.

    Parameters
    ----------
    results : bench.run.Results
        Rows.
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    methods = [m for m in SHORT if m in table.methods()]
    lines = ['## Accuracy against the exact reference\n']
    refs = results.references
    total = sum(int(r['queries']) for r in refs)
    certified = sum(int(r['certified']) for r in refs)
    hulled = sum(int(r['hull']) for r in refs)
    penetrating = sum(int(r['penetrating_checked']) for r in refs)
    lines.append('Queries: %d; settled by certificate %d, by exact hull %d (penetrating: %d); '
                 'unchecked %d (hull budget). Largest certificate width %s. Per scene: '
                 'references.csv.\n' % (total, certified, hulled, penetrating,
                                        total - certified - hulled,
                                        sci(max((float(r['max_width']) for r in refs),
                                                default=float('nan')))))
    warm_cold = [float(r['warm_vs_cold_max_diff']) for r in refs if 'warm_vs_cold_max_diff' in r]
    if warm_cold:
        lines.append('gjk_ros warm (tracked) vs cold answers: largest difference %s over every '
                     'query.\n' % sci(max(warm_cold)))
    lines.append('| method | ' + ' | '.join(str(s) for s in table.sizes())
                 + ' | wrong (> 1e-6) | separated max | penetrating max |')
    lines.append('|' + '---|' * (len(table.sizes()) + 4))
    for method in methods:
        rows = table.where(method=method, shape='hull')
        cells = []
        for size in table.sizes():
            errors = [float(r['max_error']) for r in rows if r['size'] == size
                      and not math.isnan(float(r['max_error']))]
            cells.append(sci(max(errors)) if errors else 'n/a')
        wrong = sum(int(r['wrong']) for r in table.where(method=method))
        sep = [float(r['max_error_separated']) for r in table.where(method=method)
               if not math.isnan(float(r['max_error_separated']))]
        pen = [float(r['max_error_penetrating']) for r in table.where(method=method)
               if not math.isnan(float(r['max_error_penetrating']))]
        lines.append('| %s | %s | %d | %s | %s |' % (
            SHORT[method], ' | '.join(cells), wrong, sci(max(sep)) if sep else 'n/a',
            sci(max(pen)) if pen else 'n/a'))
    lines.append('\nLargest penetration depth error per size (hull-checked penetrating queries '
                 'of every scene; "n/a": none checked):\n')
    lines.append('| method | ' + ' | '.join(str(s) for s in table.sizes()) + ' | box 8 |')
    lines.append('|' + '---|' * (len(table.sizes()) + 2))
    for method in methods:
        cells = []
        for shape, size in [('hull', s) for s in table.sizes()] + [('box', 8)]:
            errors = [float(r['max_error_penetrating'])
                      for r in table.where(method=method, shape=shape, size=size)
                      if not math.isnan(float(r['max_error_penetrating']))]
            cells.append(sci(max(errors)) if errors else 'n/a')
        lines.append('| %s | %s |' % (SHORT[method], ' | '.join(cells)))
    counts = []
    for shape, size in [('hull', s) for s in table.sizes()] + [('box', 8)]:
        counts.append(str(sum(int(r['penetrating_checked']) for r in refs
                              if r['shape'] == shape and r['size'] == size)))
    lines.append('| queries checked | %s |' % ' | '.join(counts))
    if results.depth_apis:
        lines.append("\nPenetration depth from the peers' collision APIs (overlapping scenes, "
                     'not timed):\n')
        lines.append('| API | vertices | rotation | checked | largest error | wrong | no '
                     'contact |')
        lines.append('|---|---|---|---|---|---|---|')
        for row in results.depth_apis:
            lines.append('| %s | %s %d | %g | %d | %s | %d | %d |' % (
                row['api'], row['shape'], row['size'], row['rotation_deg'],
                row['checked_penetrating'], sci(float(row['max_error_penetrating'])),
                row['wrong'], row['missed']))
    return '\n'.join(lines) + '\n'


def section_counters(table):
    """
    Machine-independent counters of gjk_ros by scene.

    Parameters
    ----------
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    rows = sorted(table.where(method=MAIN), key=lambda r: (r['shape'], r['size'], r['distance'],
                                                           r['rotation_deg']))
    if not rows:
        return ''
    lines = ['## gjk_ros counters per query (PairSet, tracked steps; cold first step in '
             'brackets)\n',
             '| scene | GJK iterations | support calls | hill-climb steps | EPA iterations | '
             'max iter. | MAX_ITERATIONS | DEGENERATE | witness residual |',
             '|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        lines.append('| %s | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s | %s | %s | %s |' % (
            r['scene'], num(r.get('iterations_tracked')), num(r.get('iterations_cold')),
            num(r.get('support_calls_tracked')), num(r.get('support_calls_cold')),
            num(r.get('hill_climb_steps_tracked')), num(r.get('hill_climb_steps_cold')),
            num(r.get('epa_iterations_tracked')), num(r.get('epa_iterations_cold')),
            r.get('max_iterations_per_query', 'n/a'), r.get('max_iterations_status', 'n/a'),
            r.get('degenerate_status', 'n/a'), sci(r.get('witness_residual', float('nan')))))
    return '\n'.join(lines) + '\n'


def section_profile(results, table):
    """
    Report the fixed costs that explain the timings.

    Parameters
    ----------
    results : bench.run.Results
        Profile numbers.
    table : Table
        Rows.

    Returns
    -------
    str
        Markdown.

    """
    profile = results.profile
    if not profile:
        return ''
    pairs = results.config.num_pairs
    lines = ['## Profile: fixed costs\n']
    if 'pairset_update_inactive_ns' in profile:
        lines.append('- PairSet.update with all %d pairs inactive: %s us per call (%s us per '
                     'pair): the Python wrapper, pose checks and numba dispatch of a batch.' % (
                         pairs, us(profile['pairset_update_inactive_ns']),
                         us(profile['pairset_update_inactive_ns'] / pairs)))
        lines.append('- PairSet.update on %d pairs of single points: %s us per pair (the '
                     'smallest possible query plus the batch overhead).' % (
                         pairs, us(profile['pairset_update_points_ns'] / pairs)))
    if 'signed_distance_points_ns' in profile:
        lines.append('- signed_distance on two single points: %s us per call (the per-call '
                     'floor of the Python API).' % us(profile['signed_distance_points_ns']))
    if 'coal_spheres_ns' in profile:
        lines.append("- coal ComputeDistance on two spheres: %s us per call (coal's binding "
                     'floor).' % us(profile['coal_spheres_ns']))
    if 'mujoco_spheres_ns' in profile:
        lines.append('- mujoco mj_geomDistance on two spheres: %s us per call.'
                     % us(profile['mujoco_spheres_ns']))
    lines.append('- Empty Python loop, per iteration: %s us.' % us(profile['python_loop_ns']))
    return '\n'.join(lines) + '\n'


def section_builds(results):
    """
    Tabulate the construction time of every method's objects per body (not in any query).

    Parameters
    ----------
    results : bench.run.Results
        Build rows.

    Returns
    -------
    str
        Markdown.

    """
    if not results.builds:
        return ''
    steps = []
    for row in results.builds:
        if row['what'] not in steps:
            steps.append(row['what'])
    families = []
    for row in results.builds:
        if (row['shape'], row['size']) not in families:
            families.append((row['shape'], row['size']))
    index = {(r['shape'], r['size'], r['what']): r['ms_per_body'] for r in results.builds}
    lines = ['## Construction time per body (ms; PairSet rows: per pair member)\n',
             '| bodies | ' + ' | '.join(SHORT.get(step, step) for step in steps) + ' |',
             '|' + '---|' * (len(steps) + 1)]
    for shape, size in families:
        lines.append('| %s %d | %s |' % (shape, size, ' | '.join(
            num(index.get((shape, size, step), float('nan')), 3) for step in steps)))
    return '\n'.join(lines) + '\n'


def section_figures(figures):
    """
    Link the figures.

    Parameters
    ----------
    figures : dict
        Name -> file.

    Returns
    -------
    str
        Markdown.

    """
    captions = {
        'fig3': 'Fig. 3 analogue: no tracking, with and without hill climbing',
        'fig4': 'Fig. 4 analogue: tracking (sequences of 20), with and without hill climbing',
        'fig5': 'Fig. 5 analogue: rotation 0/6/12 deg x distance 3/1 diameters/overlapping',
        'peers': 'gjk_ros against coal, python-fcl and MuJoCo (tracked steps)',
        'accuracy': 'Largest penetration depth error per method and size',
    }
    if not figures:
        return ''
    lines = ['## Figures\n']
    for name, filename in figures.items():
        lines.append('![%s](%s)\n' % (captions[name], filename))
    return '\n'.join(lines)
