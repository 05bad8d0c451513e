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
The claims of Cameron 1997, section 4 (and the iteration claim of section 3): one function each.

Every claim function takes (table, sizes) and returns its report line with the verdict, or ''
when the run has no data for it. Figures 3 and 4 use the scene without rotation at 3 diameters.
"""

import math

import numpy

from .constants import EXACT_DEPTH, FIG34, MAIN, PAPER_FIG4_FLATNESS, TARGET_FLATNESS
from .table import bullet, finite_median, floats, ratios_by_size, sci, span, us

ROTATIONS = (0.0, 6.0, 12.0)


def section_claims(results, table):
    """Return the Claims section ('' when gjk_ros did not run)."""
    if MAIN not in table.methods():
        return ''
    sizes = table.sizes()
    lines = ['## Claims of Cameron 1997, section 4\n',
             "Figures 3 and 4 use the scene without rotation at 3 diameters (the paper's "
             '"reasonable average distance"); times are PairSet per-pair times.\n']
    lines += [claim(table, sizes) for claim in CLAIMS]
    return '\n'.join(line for line in lines if line) + '\n'


def ratio(table, size, numerator, denominator):
    """Return the ratio of two (key, method, distance, rotation) values at one hull size."""
    key, method, distance, rotation = numerator
    top = table.value(key, method, size, distance, rotation)
    key, method, distance, rotation = denominator
    return top / table.value(key, method, size, distance, rotation)


def fig34_ratios(table, sizes, numerator, denominator):
    """Return (size, ratio) where finite of two (key, method) values in the Fig. 3/4 scene."""
    scene = (FIG34['distance'], FIG34['rotation_deg'])
    ratios = [(size, ratio(table, size, numerator + scene, denominator + scene))
              for size in sizes]
    return [(s, r) for s, r in ratios if math.isfinite(r)]


def claim_iterations(table, sizes):
    """Section 3: the loop runs once or twice per tracked call, 3-6 times cold."""
    tracked = [table.value('iterations_tracked', MAIN, s, **FIG34) for s in sizes]
    cold = [table.value('iterations_cold', MAIN, s, **FIG34) for s in sizes]
    all_tracked = [float(r['iterations_tracked']) for r in table.where(method=MAIN)
                   if r['distance'] != 'overlap']
    # The paper's numbers are what its GJK needed; fewer iterations is no failure.
    met = max(tracked) <= 2.0 and max(cold) <= 6.0
    return bullet(
        '"The loop body is typically executed once or twice per call when tracking, and on '
        'average 3-6 times at initialisation, even for hundreds of vertices" (section 3)', met,
        'Mean GJK iterations, translation-only scene: tracked %s, cold (first step) %s over '
        'sizes %d..%d; tracked over every separated scene %s.' % (
            span(tracked), span(cold), sizes[0], sizes[-1], span(all_tracked)))


def claim_fig3(table, sizes):
    """Fig. 3: hill climbing helps without tracking, most for large hulls."""
    finite = fig34_ratios(table, sizes, ('sequence_ns', 'gjk_batch_cold_nohc'),
                          ('sequence_ns', 'gjk_batch_cold_hc'))
    if not finite:
        return ''
    met = finite[-1][1] > finite[0][1] and finite[-1][1] > 1.0
    return bullet('Fig. 3 "usefulness of hill-climbing, most noticeable for larger hulls" (no '
                  'tracking)', met,
                  'Time without / with hill climbing: %s.' % ratios_by_size(finite))


def claim_fig4_linear(table, sizes):
    """Fig. 4: with tracking and without hill climbing the time is almost linear in n."""
    method = 'gjk_batch_track_nohc'
    times = [(s, table.value('tracked_ns', method, s, **FIG34)) for s in sizes]
    times = [(s, t) for s, t in times if math.isfinite(t)]
    if len(times) < 2:
        return ''
    (s0, t0), (s1, t1) = times[-2], times[-1]
    slope = math.log(t1 / t0) / math.log(s1 / s0)
    iterations = [table.value('iterations_tracked', method, s, **FIG34) for s in sizes]
    met = slope > 0.5 and max(iterations) < 2.0
    return bullet('Fig. 4 "without hill-climbing an almost linear function ... average number of '
                  'iterations quite close to 1"', met,
                  'Log-log slope of tracked time between %d and %d vertices %.2f (1 = linear); '
                  'tracked iterations %s.' % (s0, s1, slope, span(iterations)))


def claim_fig4_flat(table, sizes):
    """Fig. 4: with hill climbing the tracked time is nearly constant (32-42 us, 10..500)."""
    times = {s: table.value('sequence_ns', MAIN, s, **FIG34) for s in sizes}
    upto512 = [t for s, t in times.items() if s <= 512 and math.isfinite(t)]
    every = [t for t in times.values() if math.isfinite(t)]
    if not upto512:
        return ''
    spread = max(upto512) / min(upto512)
    spread_all = max(every) / min(every)
    return bullet('Fig. 4 "with hill-climbing ... very close to being a constant, 32-42 us for '
                  'hull sizes between 10 and 500" (spread %.2fx)' % PAPER_FIG4_FLATNESS,
                  spread <= TARGET_FLATNESS,
                  'Sequence-mean time spread over 8..512 vertices %.2fx (%s us), over all sizes '
                  '%.2fx (%s us at %d).' % (
                      spread, span([t / 1000.0 for t in upto512]), spread_all,
                      us(times[max(sizes)]), max(sizes)))


def claim_tracking_gain(table, sizes):
    """Section 4: tracking cuts the time (untracked is roughly twice the tracked time)."""
    finite = fig34_ratios(table, sizes, ('sequence_ns', 'gjk_batch_cold_hc'),
                          ('tracked_ns', MAIN))
    if not finite:
        return ''
    median = float(numpy.median([r for _, r in finite]))
    return bullet('Tracking pays ("times ... without tracking roughly twice the times taken '
                  'here")', median >= 1.5,
                  'Untracked / tracked time (hill climbing on): %s; median %.2fx.' % (
                      ratios_by_size(finite), median),
                  note=' (median ratio >= 1.5 counts as "roughly twice")')


def each_scene(table, sizes, numerator, denominator):
    """Return a ratio of two (key, method, distance) values per size and rotation per step."""
    return [ratio(table, size, numerator + (rot,), denominator + (rot,))
            for size in sizes for rot in ROTATIONS]


def claim_fig5_closer(table, sizes):
    """Fig. 5: objects 1 diameter apart take slightly longer than 3 diameters apart."""
    closer = each_scene(table, sizes, ('iterations_tracked', MAIN, 'gap1'),
                        ('iterations_tracked', MAIN, 'gap3'))
    median = finite_median(closer)
    return bullet('Fig. 5 "as the objects are moved to roughly 1 object diameter apart the times '
                  'increase slightly" (judged on GJK iterations, which timing noise does not '
                  'blur)', median >= 1.0,
                  'Tracked iterations at 1 / 3 diameters: median %.2fx (range %s).' % (
                      median, span(closer)))


def claim_fig5_overlap(table, sizes):
    """Fig. 5: overlapping objects tend to the untracked time."""
    overlap = each_scene(table, sizes, ('sequence_ns', MAIN, 'overlap'),
                         ('sequence_ns', MAIN, 'gap3'))
    share = each_scene(table, sizes, ('sequence_ns', MAIN, 'overlap'),
                       ('sequence_ns', 'gjk_batch_cold_hc', 'overlap'))
    median = finite_median(overlap)
    return bullet('Fig. 5 overlapping: "the usefulness of the tracking information drops off, '
                  'and the times start to increase towards what we would see without '
                  'tracking"', median > 1.0,
                  'Overlapping / 3-diameter sequence time: median %.2fx (range %s); overlapping '
                  'tracked / untracked: median %.2fx (range %s).' % (
                      median, span(overlap), finite_median(share), span(share)))


def claim_fig5_rotation(table, sizes):
    """Fig. 5: rotation per step moves the witness features (more iterations at 12 deg)."""
    rotation = [ratio(table, size, ('iterations_tracked', MAIN, 'gap1', 12.0),
                      ('iterations_tracked', MAIN, 'gap1', 0.0)) for size in sizes]
    median = finite_median(rotation)
    return bullet('Fig. 5 rotation (0/6/12 deg per step) moves the witness features',
                  median >= 1.0,
                  'Tracked iterations at 12 / 0 deg (1 diameter): median %.2fx (range %s).' % (
                      median, span(rotation)))


def claim_boxes(table, sizes):
    """Section 4: boxes are even faster than random hulls."""
    boxes = [float(r['sequence_ns']) for r in table.where(method=MAIN, shape='box')
             if r['distance'] != 'overlap']
    hulls = [float(r['sequence_ns']) for r in table.where(method=MAIN, shape='hull', size=8)
             if r['distance'] != 'overlap']
    if not boxes or not hulls:
        return ''
    box_ratio = numpy.median(boxes) / numpy.median(hulls)
    return bullet('"With boxes we find that the computation times are even lower" (10-20 us '
                  'against 32-42 us)', box_ratio <= 1.0,
                  'Box / 8-vertex hull sequence time, separated scenes: %.2fx (box median %s '
                  'us).' % (box_ratio, us(numpy.median(boxes))))


def claim_mtd(table, sizes):
    """Section 5: the penetration measure (MTD) is computed exactly."""
    rows = table.where(method=MAIN, distance='overlap')
    errors = floats(rows, 'max_error_penetrating')
    if not errors:
        return ''
    epa = [float(r.get('epa_iterations_tracked', float('nan'))) for r in rows]
    return bullet('Section 5 (MTD for penetrating objects): gjk_ros returns the exact MTD',
                  max(errors) <= EXACT_DEPTH,
                  note='; largest depth error %s; mean EPA iterations per tracked overlapping '
                  'query %s' % (sci(max(errors)), span(epa)))


# The claims in the report's order.
CLAIMS = (claim_iterations, claim_fig3, claim_fig4_linear, claim_fig4_flat, claim_tracking_gain,
          claim_fig5_closer, claim_fig5_overlap, claim_fig5_rotation, claim_boxes, claim_mtd)
