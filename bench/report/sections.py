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

"""The report's sections besides the targets and the claims: setup, tables, profile, figures."""

from .constants import HEADLINE, MAIN, PEER_ORDER, SHORT
from .table import floats, markdown_table, not_nan, num, sci, us, verdict
from .. import peer_targets
from ..scenes import STEP_TRANSLATION


def section_setup(results):
    """Describe what ran, how it was timed and how it was checked."""
    lines = ['## Setup\n'] + setup_run(results) + setup_method(results)
    if results.missing:
        missing = ', '.join('%s (%s)' % item for item in results.missing.items())
        lines.append('- Not run: %s.' % missing)
    caps = iteration_caps(results.environment)
    if caps:
        lines.append('- Iteration caps: ' + '; '.join(caps) + '.')
    return '\n'.join(lines) + '\n'


def setup_run(results):
    """Return the lines on the command, the machine and the versions."""
    config, env = results.config, results.environment
    return [
        '- Run: `python -m bench.run%s --seed %d` in %.0f s; %s; %s cores; load average %.1f '
        'at start, %.1f at end (the machine is shared: absolute times are noisy, ratios and '
        'counters less so).' % (' --quick' if config.quick else '', config.seed,
                                results.elapsed_s, env.get('cpu', '?'), env.get('cores', '?'),
                                env.get('load_average_start', float('nan')),
                                env.get('load_average_end', float('nan'))),
        '- Versions: Python %s, numpy %s, scipy %s, numba %s, coal %s, python-fcl %s, '
        'mujoco %s.' % tuple(env.get(k, '?') for k in (
            'python', 'numpy', 'scipy', 'numba', 'coal', 'python-fcl', 'mujoco')),
    ]


def setup_method(results):
    """Return the lines on the scenes, the timing and the correctness checks."""
    config = results.config
    return [
        '- Scenes: random hulls of %s points on the unit sphere (every point is a vertex) and '
        'random boxes; %d pairs x sequences of %d steps (first query cold, then tracked). Body '
        'A fixed, body B translating %.2f diameters per step in a constant random direction and '
        'rotating by a random angle in [0, 0/6/12 deg] about a random axis each step. Distance: '
        'bounding spheres 3 or 1 diameters apart, or centres at 0.2-0.8 x (r_a + r_b) '
        '(overlapping most of the time).' % (
            '/'.join(str(s) for s in config.sizes), config.num_pairs, config.steps,
            STEP_TRANSLATION),
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


def iteration_caps(env):
    """Return the iteration caps of gjk_ros and of the peers, as far as they are known."""
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
    return caps


def _fmt_dict(values):
    return ', '.join('%s=%s' % (k, v) for k, v in values.items())


def section_peer_targets(results, table):
    """Peer-target rows (see bench/peer_targets.py); empty when gjk_ros did not run."""
    if MAIN not in table.methods():
        return ''
    return peer_targets.section(table, results.extras, verdict)


def section_planner_checks(results, table):
    """Planner checks against Pinocchio + coal (see bench/planner_checks.py)."""
    if MAIN not in table.methods() or not results.extras:
        return ''
    from .. import planner_checks
    rows = results.extras.get('planner_checks')
    if not rows:
        why = results.extras.get('planner_checks_error') or 'skipped'
        return '## Planner checks against Pinocchio + coal\n\nnot measured: %s\n' % why
    return planner_checks.section(rows, verdict)


def section_contact(results):
    """Return the contact suite's counts per entry point (bench/contact_suite.py), or ''."""
    contact = getattr(results, 'contact', None)
    if not contact:
        return ''
    # The suite's own report, one heading level down.
    return contact['markdown'].replace('# Contact suite', '## Contact suite', 1)


def section_headline(results, table):
    """Headline tables: sizes x configurations on the headline scene, tracked and cold."""
    methods = table.present(PEER_ORDER)
    if not methods:
        return ''
    names = [SHORT[m] for m in methods]
    rows = []
    for size in table.sizes():
        coal = table.value('tracked_ns', 'coal_warm', size, **HEADLINE)
        batch = table.value('tracked_ns', MAIN, size, **HEADLINE)
        call = table.value('tracked_ns', 'gjk_call_track', size, **HEADLINE)
        rows.append(['%d' % size]
                    + [us(table.value('tracked_ns', m, size, **HEADLINE)) for m in methods]
                    + [num(coal / batch), num(coal / call)]
                    + [num(table.value(k, MAIN, size, **HEADLINE))
                       for k in ('iterations_tracked', 'support_calls_tracked',
                                 'hill_climb_steps_tracked')])
    cold = [['%d' % size] + [us(table.value('cold_ns', m, size, **HEADLINE)) for m in methods]
            for size in table.sizes()]
    lines = (['## Headline: tracked time per query (us), gap 1 diameter, 6 deg per step\n']
             + markdown_table(['vertices'] + names + [
                 'coal warm / gjk batch', 'coal warm / gjk call', 'GJK iter.', 'support calls',
                 'HC steps'], rows)
             + ['\nCold first step (us):\n'] + markdown_table(['vertices'] + names, cold)
             + ['\nAll scenes and methods: timings.csv (tracked_ns, cold_ns, sequence_ns, '
                'errors, counters).\n'])
    return '\n'.join(lines)


def largest(values):
    """Format the largest of some errors ('n/a' when there are none)."""
    return sci(max(values)) if values else 'n/a'


def section_accuracy(results, table):
    """Largest error of every method against the exact reference."""
    methods = table.present(SHORT)
    lines = (['## Accuracy against the exact reference\n'] + accuracy_summary(results.references)
             + accuracy_errors(table, methods)
             + ['\nLargest penetration depth error per size (hull-checked penetrating queries '
                'of every scene; "n/a": none checked):\n']
             + accuracy_depth(results.references, table, methods)
             + accuracy_depth_apis(results.depth_apis))
    return '\n'.join(lines) + '\n'


def accuracy_summary(refs):
    """Return how the queries were checked, and gjk_ros's warm-versus-cold agreement."""
    total = sum(int(r['queries']) for r in refs)
    certified = sum(int(r['certified']) for r in refs)
    hulled = sum(int(r['hull']) for r in refs)
    penetrating = sum(int(r['penetrating_checked']) for r in refs)
    lines = ['Queries: %d; settled by certificate %d, by exact hull %d (penetrating: %d); '
             'unchecked %d (hull budget). Largest certificate width %s. Per scene: '
             'references.csv.\n' % (total, certified, hulled, penetrating,
                                    total - certified - hulled,
                                    sci(max((float(r['max_width']) for r in refs),
                                            default=float('nan'))))]
    warm_cold = [float(r['warm_vs_cold_max_diff']) for r in refs if 'warm_vs_cold_max_diff' in r]
    if warm_cold:
        lines.append('gjk_ros warm (tracked) vs cold answers: largest difference %s over every '
                     'query.\n' % sci(max(warm_cold)))
    return lines


def accuracy_errors(table, methods):
    """Return the table of each method's largest error per hull size, and its wrong answers."""
    rows = []
    for method in methods:
        hull = table.where(method=method, shape='hull')
        every = table.where(method=method)
        rows.append([SHORT[method]]
                    + [largest(floats([r for r in hull if r['size'] == size], 'max_error',
                                      keep=not_nan)) for size in table.sizes()]
                    + ['%d' % sum(int(r['wrong']) for r in every),
                       largest(floats(every, 'max_error_separated', keep=not_nan)),
                       largest(floats(every, 'max_error_penetrating', keep=not_nan))])
    return markdown_table(['method'] + [str(s) for s in table.sizes()]
                          + ['wrong (> 1e-6)', 'separated max', 'penetrating max'], rows)


def accuracy_depth(refs, table, methods):
    """Return the table of each method's largest depth error per size, with the query counts."""
    families = [('hull', s) for s in table.sizes()] + [('box', 8)]
    rows = [[SHORT[method]] + [largest(floats(table.where(method=method, shape=shape, size=size),
                                              'max_error_penetrating', keep=not_nan))
                               for shape, size in families] for method in methods]
    rows.append(['queries checked'] + [
        str(sum(int(r['penetrating_checked']) for r in refs
                if r['shape'] == shape and r['size'] == size)) for shape, size in families])
    return markdown_table(['method'] + [str(s) for s in table.sizes()] + ['box 8'], rows)


def accuracy_depth_apis(depth_apis):
    """Return the table of the depth from the peers' collision APIs ([] without them)."""
    if not depth_apis:
        return []
    rows = [[row['api'], '%s %d' % (row['shape'], row['size']), '%g' % row['rotation_deg'],
             '%d' % row['checked_penetrating'], sci(float(row['max_error_penetrating'])),
             '%d' % row['wrong'], '%d' % row['missed']] for row in depth_apis]
    return (["\nPenetration depth from the peers' collision APIs (overlapping scenes, not "
             'timed):\n']
            + markdown_table(['API', 'vertices', 'rotation', 'checked', 'largest error', 'wrong',
                              'no contact'], rows))


def section_counters(table):
    """Machine-independent counters of gjk_ros by scene."""
    rows = sorted(table.where(method=MAIN), key=lambda r: (r['shape'], r['size'], r['distance'],
                                                           r['rotation_deg']))
    if not rows:
        return ''

    def tracked_and_cold(row, counter):
        return '%s (%s)' % (num(row.get(counter + '_tracked')), num(row.get(counter + '_cold')))

    cells = [[r['scene']]
             + [tracked_and_cold(r, counter) for counter in (
                 'iterations', 'support_calls', 'hill_climb_steps', 'epa_iterations')]
             + ['%s' % r.get(key, 'n/a') for key in (
                 'max_iterations_per_query', 'max_iterations_status', 'degenerate_status')]
             + [sci(r.get('witness_residual', float('nan')))] for r in rows]
    lines = (['## gjk_ros counters per query (PairSet, tracked steps; cold first step in '
              'brackets)\n']
             + markdown_table(['scene', 'GJK iterations', 'support calls', 'hill-climb steps',
                               'EPA iterations', 'max iter.', 'MAX_ITERATIONS', 'DEGENERATE',
                               'witness residual'], cells))
    return '\n'.join(lines) + '\n'


def section_profile(results, table):
    """Report the fixed costs that explain the timings."""
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
    for key, text in PROFILE_CALLS:
        if key in profile:
            lines.append(text % us(profile[key]))
    lines.append('- Empty Python loop, per iteration: %s us.' % us(profile['python_loop_ns']))
    return '\n'.join(lines) + '\n'


# Profile entries of one call each: key, line (with the time in us).
PROFILE_CALLS = (
    ('signed_distance_points_ns', '- signed_distance on two single points: %s us per call (the '
     'per-call floor of the Python API).'),
    ('coal_spheres_ns', "- coal ComputeDistance on two spheres: %s us per call (coal's binding "
     'floor).'),
    ('mujoco_spheres_ns', '- mujoco mj_geomDistance on two spheres: %s us per call.'),
)


def section_builds(results):
    """Tabulate the construction time of every method's objects per body (not in any query)."""
    if not results.builds:
        return ''
    steps, families = [], []
    for row in results.builds:
        if row['what'] not in steps:
            steps.append(row['what'])
        if (row['shape'], row['size']) not in families:
            families.append((row['shape'], row['size']))
    index = {(r['shape'], r['size'], r['what']): r['ms_per_body'] for r in results.builds}
    rows = [['%s %d' % family] + [num(index.get(family + (step,), float('nan')), 3)
                                  for step in steps] for family in families]
    lines = (['## Construction time per body (ms; PairSet rows: per pair member)\n']
             + markdown_table(['bodies'] + [SHORT.get(step, step) for step in steps], rows))
    return '\n'.join(lines) + '\n'


FIGURE_CAPTIONS = {
    'fig3': 'Fig. 3 analogue: no tracking, with and without hill climbing',
    'fig4': 'Fig. 4 analogue: tracking (sequences of 20), with and without hill climbing',
    'fig5': 'Fig. 5 analogue: rotation 0/6/12 deg x distance 3/1 diameters/overlapping',
    'peers': 'gjk_ros against coal, python-fcl and MuJoCo (tracked steps)',
    'accuracy': 'Largest penetration depth error per method and size',
}


def section_figures(figures):
    """Link the figures ('' when none was drawn)."""
    if not figures:
        return ''
    lines = ['## Figures\n']
    for name, filename in figures.items():
        lines.append('![%s](%s)\n' % (FIGURE_CAPTIONS[name], filename))
    return '\n'.join(lines)
