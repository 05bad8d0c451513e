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
The project's own targets: one function a target, each with its why_... explanation.

A target function returns its report line with the verdict; the matching why_... function returns
indented bullets that explain a miss from the counters and the profile ('' when there is nothing
to explain).
"""

import math

import numpy

from .constants import (EXACT_DEPTH, MAIN, SHORT, TARGET_BATCH_NS, TARGET_COAL_RATIO,
                        TARGET_FLATNESS, TARGET_ITERATIONS)
from .table import bullet, floats, num, sci, us


def section_targets(results, table):
    """Return the Targets section: one line per project target, each with its explanation."""
    lines = ['## Targets\n']
    if MAIN not in table.methods():
        return '\n'.join(lines + ['gjk_ros did not run: no target can be measured.\n'])
    sizes = table.sizes()
    for target, why in TARGETS:
        lines.append(target(results, table, sizes))
        if why is not None:
            lines.append(why(results, table, sizes))
    return '\n'.join(line for line in lines if line) + '\n'


def worst_over_scenes(table, key, method, size, pick=max, distances=None):
    """
    Return (value, scene) of the worst value of a field over the hull scenes of one size.

    ``pick`` is max or min; ``distances`` limits the scenes to those distance settings.
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


def counters_at(table, size, distance, rotation_deg):
    """Format gjk_ros's counters in one scene, e.g. 'GJK 1.0, support 1.0, HC 0.4, EPA 0.0'."""
    values = [table.value(key, MAIN, size, distance, rotation_deg) for key in
              ('iterations_tracked', 'support_calls_tracked', 'hill_climb_steps_tracked',
               'epa_iterations_tracked')]
    return 'GJK %s, support %s, HC %s, EPA %s' % tuple(num(v, 1) for v in values)


def by_size(sizes, values):
    """Format per-size times, e.g. '8: 0.31, 16: 0.33' (``values``: size -> (ns, scene))."""
    return ', '.join('%d: %s' % (size, us(values[size][0])) for size in sizes)


def target_batch_time(results, table, sizes):
    """Target: tracked batch query below 0.5 us per pair at every size."""
    worst = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size) for size in sizes}
    separated = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size,
                                         distances=('gap3', 'gap1')) for size in sizes}
    met = all(v[0] < TARGET_BATCH_NS for v in worst.values())
    return bullet('Tracked batch query < 0.5 us per pair at every size', met,
                  'Worst scene per size (us): %s. Separated scenes only: %s.' % (
                      by_size(sizes, worst), by_size(sizes, separated)))


def why_batch_time(results, table, sizes):
    """Explain a missed batch-time target from the fixed costs and the counters."""
    worst = [worst_over_scenes(table, 'tracked_ns', MAIN, size) for size in sizes]
    if all(value < TARGET_BATCH_NS for value, _ in worst):
        return ''
    pairs = results.config.num_pairs
    fixed = results.profile.get('pairset_update_inactive_ns')
    points = results.profile.get('pairset_update_points_ns')
    lines = []
    if fixed is not None:
        lines.append('  - Why: one PairSet.update costs %s us before any geometry (all pairs '
                     'inactive: pose validation, argument handling, numba dispatch), %s us per '
                     'pair at %d pairs%s.' % (
                         us(fixed), us(fixed / pairs), pairs,
                         ': that alone exceeds the target' if fixed / pairs >= TARGET_BATCH_NS
                         else ''))
        if points is not None:
            lines.append('  - A PairSet of single points (the least work a query can do) costs '
                         '%s us per pair, %s us per pair above the fixed cost: the floor of the '
                         'compiled per-pair path.' % (
                             us(points / pairs), us(max(points - fixed, 0.0) / pairs)))
        lines.append(why_batch_net(table, sizes, fixed / pairs))
    lines.append(why_batch_slowest(table, sizes))
    return '\n'.join(line for line in lines if line)


def why_batch_net(table, sizes, fixed_per_pair):
    """Give the worst separated scene per size without the fixed cost of a PairSet.update."""
    net = {size: worst_over_scenes(table, 'tracked_ns', MAIN, size,
                                   distances=('gap3', 'gap1'))[0] - fixed_per_pair
           for size in sizes}
    return ('  - Without that fixed cost the worst separated scene per size would take (us per '
            'pair): %s: %s.' % (
                ', '.join('%d: %s' % (size, us(max(value, 0.0))) for size, value in net.items()),
                'within the target' if all(v < TARGET_BATCH_NS for v in net.values())
                else 'still above the target somewhere'))


def why_batch_slowest(table, sizes):
    """Name the slowest overlapping scene and its counters ('' without overlapping scenes)."""
    overlap = [(table.value('tracked_ns', MAIN, size, 'overlap', rot), size, rot)
               for size in sizes for rot in (0.0, 6.0, 12.0)]
    overlap = [item for item in overlap if math.isfinite(item[0])]
    if not overlap:
        return ''
    value, size, rot = max(overlap)
    return ('  - Slowest scene: overlapping, %d vertices, %g deg/step, %s us per pair (counters '
            'per tracked query: %s): EPA expansions and the hill-climbing walks of their support '
            'calls dominate; fewer expansions per tracked step and shorter walks (each starting '
            'next to the face being expanded) would cut it.' % (
                size, rot, us(value), counters_at(table, size, 'overlap', rot)))


def target_coal_ratio(results, table, sizes):
    """Target: at least 3x faster than coal warm-started per call on the same sequences."""
    claim = '>= 3x faster than coal warm-started'
    if 'coal_warm' not in table.methods():
        return bullet(claim, None, note=' (coal not installed)')
    ratios, call_ratios = [], []
    for row in table.where(method='coal_warm', shape='hull'):
        key = (row['size'], row['distance'], row['rotation_deg'])
        mine = table.value('tracked_ns', MAIN, *key)
        call = table.value('tracked_ns', 'gjk_call_track', *key)
        ratios.append((float(row['tracked_ns']) / mine, row['scene'], row['size']))
        if math.isfinite(call):
            call_ratios.append(float(row['tracked_ns']) / call)
    if not ratios:
        return bullet(claim, None)
    worst = min(ratios)
    per_size = {}
    for ratio, _, size in ratios:
        per_size[size] = min(per_size.get(size, float('inf')), ratio)
    text = bullet(claim + ' per call on the same tracked sequences (coal per-call time / gjk_ros '
                  'PairSet per-pair time, tracked steps)', worst[0] >= TARGET_COAL_RATIO,
                  'Smallest ratio per size: %s; overall smallest %.2fx (%s).' % (
                      ', '.join('%d: %.2fx' % (s, per_size[s]) for s in sorted(per_size)),
                      worst[0], worst[1]))
    if call_ratios:
        text += (' Per call against per call (gjk_ros signed_distance with a SimplexCache): '
                 '%.2fx to %.2fx.' % (min(call_ratios), max(call_ratios)))
    return text


def why_coal_ratio(results, table, sizes):
    """Put a coal ratio in context with the per-call floors ('' without the data)."""
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


def flatness_ratios(table, small, large):
    """Return (time at ``large`` / time at ``small``, distance, rotation) per hull scene."""
    ratios = []
    for distance, rotation in table.scenes():
        a = table.value('tracked_ns', MAIN, small, distance, rotation)
        b = table.value('tracked_ns', MAIN, large, distance, rotation)
        if math.isfinite(a) and math.isfinite(b):
            ratios.append((b / a, distance, rotation))
    return ratios


def target_flatness(results, table, sizes):
    """Target: tracked time at 2048 vertices within 1.5x of the time at 8."""
    small, large = min(sizes), max(sizes)
    ratios = [(ratio, '%s/%g deg' % (distance, rotation))
              for ratio, distance, rotation in flatness_ratios(table, small, large)]
    if not ratios or small != 8 or large != 2048:
        return bullet('Tracked time at 2048 within 1.5x of 8', None,
                      note=' (sizes %d..%d ran)' % (small, large))
    worst = max(ratios)
    return bullet('Tracked time at 2048 within 1.5x of the time at 8 (PairSet, tracked steps)',
                  worst[0] <= TARGET_FLATNESS, 'Ratio per scene: %s; worst %.2fx (%s).' % (
                      ', '.join('%s %.2fx' % (name, ratio) for ratio, name in ratios),
                      worst[0], worst[1]))


def why_flatness(results, table, sizes):
    """Show the counters at the smallest and largest size of the scenes that miss flatness."""
    small, large = min(sizes), max(sizes)
    missed = ['%s/%g deg: %s -> %s' % (distance, rotation,
                                       counters_at(table, small, distance, rotation),
                                       counters_at(table, large, distance, rotation))
              for ratio, distance, rotation in flatness_ratios(table, small, large)
              if ratio > TARGET_FLATNESS]
    if not missed:
        return ''
    return ('  - Counters per tracked query at %d -> %d vertices in the scenes that miss: %s. '
            'Work that grows with size is what breaks flatness; time growing at constant '
            'counters points at memory effects or noise.' % (small, large, '; '.join(missed)))


def target_depth(results, table, sizes):
    """Target: exact penetration depth where the peers' defaults are not."""
    mine = floats(table.where(method=MAIN), 'max_error_penetrating')
    checked = sum(int(r['checked_penetrating']) for r in table.where(method=MAIN))
    if not mine:
        return bullet('Exact penetration depth', None,
                      note=' (no penetrating query checked)')
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
    return bullet(
        "Exact penetration depth where peers' defaults are not", worst_mine <= EXACT_DEPTH,
        "gjk_ros largest depth error %s over %d hull-checked penetrating queries. Peers' "
        'largest: %s. Peers wrong by more than 1e-6 somewhere: %s.' % (
            sci(worst_mine), checked,
            '; '.join('%s %s (%s)' % (name, sci(v[0]), v[1])
                      for name, v in sorted(peer_worst.items())) or 'none ran',
            ', '.join(sorted(inexact)) or 'none'))


def target_iterations(results, table, sizes):
    """Target: mean GJK iterations per tracked step at most 2."""
    claim = 'Mean GJK iterations per tracked step <= 2'
    rows = [r for r in table.where(method=MAIN, shape='hull') if 'iterations_tracked' in r]
    if not rows:
        return bullet(claim, None)
    worst = max(rows, key=lambda r: r['iterations_tracked'])
    separated = [r for r in rows if r['distance'] != 'overlap']
    worst_sep = max(separated, key=lambda r: r['iterations_tracked']) if separated else worst
    mean = float(numpy.mean([r['iterations_tracked'] for r in rows]))
    return bullet(claim, float(worst['iterations_tracked']) <= TARGET_ITERATIONS,
                  'Mean over all hull scenes %.2f; worst scene %.2f (%s); worst separated scene '
                  '%.2f (%s).' % (mean, worst['iterations_tracked'], worst['scene'],
                                  worst_sep['iterations_tracked'], worst_sep['scene']))


def why_iterations(results, table, sizes):
    """Name the scenes above 2 GJK iterations per tracked query, and why."""
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


# (target, explanation) in the report's order.
TARGETS = ((target_batch_time, why_batch_time), (target_coal_ratio, why_coal_ratio),
           (target_flatness, why_flatness), (target_depth, None),
           (target_iterations, why_iterations))
