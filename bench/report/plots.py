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

"""PNG figures: Fig. 3, 4 and 5 of Cameron 1997, the peer comparison and the depth accuracy."""

import math
import os

import numpy

from .constants import FIG34, HEADLINE, MAIN, PEER_ORDER, SHORT, TARGET_BATCH_NS
from .table import floats, size_series, Table

FIGURE_SIZES = {1: (6.5, 4.2), 2: (11, 4.2)}
# Floor of the accuracy plot's log axis (exact answers have error 0).
ERROR_FLOOR = 1e-17


def write_plots(results, out):
    """Draw every figure into ``out``; return figure name -> file name (only those drawn)."""
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


def new_figure(pyplot, title, panels=2):
    """
    Make a figure of panels over the hull size (log x axis, log y axis on the first panel).

    Two panels: the title above both and time per query on the left; one panel: its title.
    Returns the figure and the list of axes.
    """
    figure, grid = pyplot.subplots(1, panels, figsize=FIGURE_SIZES[panels], squeeze=False)
    axes = list(grid[0])
    if panels == 1:
        axes[0].set_title(title, fontsize=9)
    else:
        figure.suptitle(title, fontsize=10)
        axes[0].set_ylabel('time per query (us)')
    for panel in axes:
        panel.set_xscale('log', base=2)
        panel.set_xlabel('vertices per hull')
        panel.grid(True, which='both', alpha=0.3)
    axes[0].set_yscale('log')
    return figure, axes


def plot_series(axes, table, key, method, scene, style, label, **line):
    """Plot one field of one method over the hull sizes of a scene (``*_ns`` fields in us)."""
    sizes, values = size_series(table, key, method, **scene)
    if key.endswith('_ns'):
        values = numpy.array(values) / 1000.0
    axes.plot(sizes, values, style, label=label, **line)


def draw_fig3(pyplot, table):
    """Fig. 3: time and iterations against hull size without tracking, with and without HC."""
    return draw_fig34(
        pyplot, table, ('gjk_batch_cold_hc', 'gjk_batch_cold_nohc'),
        'Fig. 3: no tracking (every query cold), translation only, gap 3 diameters',
        ((0, 'sequence_ns', ''), (1, 'iterations_tracked', ': GJK iterations'),
         (1, 'support_calls_tracked', ': support calls', 0.5)),
        'per query', legend_size=8)


def draw_fig4(pyplot, table):
    """Fig. 4: time and iterations against hull size with tracking (sequences of 20)."""
    return draw_fig34(
        pyplot, table, ('gjk_batch_track_hc', 'gjk_batch_track_nohc'),
        'Fig. 4: tracking, sequences of 20 (first query cold), translation only, gap 3 diameters',
        ((0, 'sequence_ns', ' (sequence mean)'), (0, 'tracked_ns', ' (tracked steps)', 0.5),
         (1, 'iterations_tracked', ': GJK iterations'),
         (1, 'hill_climb_steps_tracked', ': hill-climb steps', 0.5)),
        'per tracked query', legend_size=7)


def draw_fig34(pyplot, table, methods, title, series, counter_label, legend_size):
    """
    Draw a Fig. 3/4 analogue: times (left) and counters (right) of two methods in its scene.

    ``series``: (panel, field, label suffix[, alpha]) per line; hill-climb steps only for the
    methods that hill-climb.
    """
    methods = table.present(methods)
    if not methods:
        return None
    figure, panels = new_figure(pyplot, title)
    for method, style in zip(methods, ('o-', 's--')):
        for panel, key, suffix, *alpha in series:
            if key.startswith('hill_climb') and not method.endswith('_hc'):
                continue
            line = {'alpha': alpha[0]} if alpha else {}
            plot_series(panels[panel], table, key, method, FIG34, style, SHORT[method] + suffix,
                        **line)
    panels[1].set_ylabel(counter_label)
    panels[0].legend(fontsize=legend_size)
    panels[1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def draw_fig5(pyplot, table):
    """Fig. 5: tracked time and iterations against hull size for rotation x distance."""
    if MAIN not in table.methods():
        return None
    figure, (left, right) = new_figure(
        pyplot, 'Fig. 5: gjk_ros PairSet tracked with hill climbing; rotation per step '
        '0/6/12 deg (solid/dotted/dashed) x distance')
    line_styles = {0.0: '-', 6.0: ':', 12.0: '--'}
    markers = {'gap3': 'o', 'gap1': 'x', 'overlap': 's'}
    names = {'gap3': '3 diameters', 'gap1': '1 diameter', 'overlap': 'overlapping'}
    for distance, rotation in table.scenes():
        scene = {'distance': distance, 'rotation_deg': rotation}
        style = markers[distance] + line_styles.get(rotation, '-')
        label = '%s, %g deg' % (names[distance], rotation)
        plot_series(left, table, 'sequence_ns', MAIN, scene, style, label)
        plot_series(right, table, 'iterations_tracked', MAIN, scene, style, label)
    right.set_ylabel('GJK iterations per tracked query')
    left.legend(fontsize=7, ncol=1)
    figure.tight_layout()
    return figure


def draw_peers(pyplot, table):
    """Peer comparison on the headline scene and overlapping at 6 deg/step (tracked steps)."""
    methods = table.present(PEER_ORDER)
    if not methods:
        return None
    figure, (left, right) = new_figure(
        pyplot, 'Tracked steps, gap 1 diameter, 6 deg per step (left) and overlapping, '
        '6 deg per step (right): time per query')
    right.set_yscale('log')
    right.set_ylabel('time per query (us)')
    overlap = {'distance': 'overlap', 'rotation_deg': 6.0}
    for method in methods:
        plot_series(left, table, 'tracked_ns', method, HEADLINE, 'o-', SHORT[method])
        plot_series(right, table, 'tracked_ns', method, overlap, 'o-', SHORT[method])
    left.axhline(TARGET_BATCH_NS / 1000.0, color='k', lw=0.8, ls=':', label='0.5 us target')
    left.legend(fontsize=7)
    figure.tight_layout()
    return figure


def draw_accuracy(pyplot, table):
    """Largest error against the exact reference on overlapping scenes, per method and size."""
    methods = table.present(PEER_ORDER)
    if not methods:
        return None
    figure, (axes,) = new_figure(
        pyplot, 'Penetration depth error vs exact Minkowski hull (overlapping scenes)', panels=1)
    for method in methods:
        sizes, errors = [], []
        for size in table.sizes():
            worst = max(floats(table.where(method=method, size=size, distance='overlap',
                                           shape='hull'), 'max_error_penetrating'),
                        default=float('nan'))
            if math.isfinite(worst):
                sizes.append(size)
                errors.append(max(worst, ERROR_FLOOR))
        axes.plot(sizes, errors, 'o-', label=SHORT[method])
    axes.set_ylabel('largest |depth error| (unit-radius bodies)')
    axes.legend(fontsize=7)
    figure.tight_layout()
    return figure
