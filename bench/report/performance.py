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
Write docs/performance.md from the results stored in bench/results.

Usage: ``python -m bench.report.performance [--results bench/results] [--page
docs/performance.md]``; ``python -m bench.run`` calls ``write_page`` after its report whenever
it writes into bench/results, so ``make bench`` keeps the page and the results together.

The page only carries what the stored files say, each block under the command that reproduces
it: the sections of report.md that judge a target or a claim (``python -m bench.run``), then the
first table of each stand-alone benchmark's Markdown file (single calls, planner batches,
decomposition, the node, hostile input) with the command that file states. A file that is
missing is named as missing, never filled in.
"""

import argparse
import json
import os
import re
import sys

RESULTS = os.path.join('bench', 'results')
PAGE = os.path.join('docs', 'performance.md')
RUN_COMMAND = '.venv/bin/python -m bench.run'
# Sections of report.md on the page, in this order (the rest stays in report.md), and where the
# accuracy section is cut: the peers' collision-API depths are one row per scene.
REPORT_SECTIONS = ('## Peer targets', '## Targets', '## Claims of Cameron 1997',
                   '## Headline', '## Accuracy against the exact reference', '## Figures')
CUT_BEFORE = "Penetration depth from the peers' collision APIs"
# Stand-alone benchmarks: (heading, file in bench/results, what it measures, its command when
# the file does not state one).
STANDALONE = (
    ('One pair per Python call', 'single_call.md',
     'A tracked sequence of one pair, one Python call per step: `DistanceQuery`, '
     "`signed_distance` and coal's `ComputeDistance` functor.",
     '.venv/bin/python -m bench.single_call'),
    ('Planner workload', 'planning.md',
     'Every link-obstacle and self pair at every configuration of a trajectory, forward '
     'kinematics included, against Pinocchio + coal `computeDistances` on the same convex '
     'pieces.', None),
    ('The answer contract at exact contacts', 'contact_suite.md',
     'Touching configurations built from support points, every pair of shape kinds, sizes 1e-4 '
     'to 1e3 m, near the origin and 1e3 m out, both orders, at every entry point: answers '
     'checked and contract violations (docs/contract.md).',
     '.venv/bin/python -m bench.contact_suite'),
    ('Planner checks: yes/no, certified motions, gradients', 'planner_checks.md',
     "`in_collision` per random configuration against Pinocchio + coal's `computeCollisions`, "
     'OMPL RRTConnect solve times, certified and discrete motion checks against a dense exact '
     'check, gradients against finite differences (docs/planning.md).',
     '.venv/bin/python -m bench.planner_checks'),
    ('Observation sources: a 640x480 depth cloud', 'observations.md',
     'One organized 307,200-point cloud at 30 Hz against the Panda: decoding, placement and '
     'self-filtering per cloud, the exact nearest point of every link piece per cycle, cloud '
     'to distances latency, exactness against brute force, machine-independent work, the '
     'output gap, and a scipy cKDTree baseline.', '.venv/bin/python -m bench.observations_bench'),
    ('Convex hull against convex decomposition', 'decomposition.md',
     'A point probe on a seeded path through two non-convex meshes (an L bracket and an open '
     "bin): the distance to the hull and to CoACD's parts, each against the exact distance to "
     'the mesh.', None),
    ('The node at 100 Hz TF', 'node_bench.md',
     'The running node on a live graph: compute per cycle, TF-to-`~/distances` latency against '
     'the DDS transport baseline, CPU share.', None),
    ('The node at 1 kHz TF', 'node_bench_1khz.md',
     'The same node and scene with `/tf` published at 1 kHz (the command writes '
     '`node_bench.md`; this run is stored as `node_bench_1khz.md`).', None),
    ('The node under load: cameras, obstacles, kilohertz TF', 'load_bench.md',
     "The node as a process with the launch file's parameters against real publishers in "
     "processes of their own (the Panda's joints on /tf from forward kinematics, obstacle "
     'markers, 640x480 depth clouds at 30 Hz), one row per input of a real robot, each '
     "figure beside the issue's target: `camera1`, one camera with TF at 100 Hz and "
     '`rate_hz` 100 (clouds used, cloud to output latency, VALID share, output rate); '
     '`camera4`, four such cameras (latency, clouds used per camera); `obstacles1000`, '
     '1,000 markers around the arm (TF to output latency); `obstacles3000`, 3,000 markers '
     'with the default `max_distance` at `rate_hz` 30; `tf1k`, /tf at 1 kHz with 50 '
     'frames a message; `overload`, /tf at 1 kHz with 500 frames a message, ten times '
     '`tf1k` (latency in cycles, and the drops the node reports in /diagnostics); '
     '`single_1x`, `single_1.6x` and `shards2`, how throughput grows with shards: one node '
     'pinned to one core at N markers (1,200 by default, `--shard-obstacles`), one node at '
     '1.6 N on both cores, and 1.6 N split over two shards, a core each, and the aggregator '
     'started by `launch/shards.launch.py`, the three read on the safety path only so that '
     "they load the machine alike (`shards2` is met when its TF to the aggregator's `~/safety` "
     "p99 is at most `single_1x`'s in the same run; each shard's own p99 is beside it); "
     '`camera4_shards`, the four cameras over two shards (cloud to aggregator output '
     "latency, clouds used per camera). load_bench.md adds the node's own counters per row "
     '(cycles, pairs, piece pairs computed), the record statuses, CPU shares and the machine '
     'load.', None),
    ('Hostile input', 'stress.md',
     'The longest gap between two `~/distances` messages while the node receives one heavy or '
     'hostile input, and memory under marker churn.', None),
)


def read_text(path):
    """Return a file's text, or None when it does not exist."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def report_section(report, heading):
    """Return the section of report.md that starts with ``heading``, up to the next '## '."""
    lines = report.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith('## ')),
               len(lines))
    return '\n'.join(lines[start:end]).strip()


def first_table(text):
    """Return the lines of the first Markdown table in ``text`` ([] when there is none)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('|')), None)
    if start is None:
        return []
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith('|')),
               len(lines))
    return lines[start:end]


def preamble(text):
    """Return the paragraph between a results file's title and its first table, joined."""
    lines = []
    for line in text.splitlines()[1:]:
        if line.startswith('|'):
            break
        lines.append(line.strip())
    return ' '.join(line for line in lines if line)


def stated_command(text):
    """Return the command a results file states (``Command: `...```, or its code block)."""
    match = re.search(r'(?:Command|Reproduce): `([^`]+)`', text)
    if match:
        return match.group(1)
    block = re.search(r'```\n(.*?)```', text, re.DOTALL)
    if block:
        return ' '.join(part.strip().rstrip('\\').strip()
                        for part in block.group(1).splitlines() if part.strip())
    return None


def setup_lines(run):
    """Describe the machine and the versions of the main run (run.json)."""
    if run is None:
        return ['`run.json` is missing: run `make bench`.']
    env, config = run.get('environment', {}), run.get('config', {})
    versions = ', '.join('%s %s' % (name, env.get(name, '?')) for name in (
        'python', 'numpy', 'scipy', 'numba', 'coal', 'python-fcl', 'mujoco'))
    return ['Main run: `%s%s --seed %s`, %.0f s on %s, %s cores (load average %.1f at the start, '
            '%.1f at the end); %s.' % (
                RUN_COMMAND, ' --quick' if config.get('quick') else '', config.get('seed', 0),
                run.get('elapsed_s', float('nan')), env.get('cpu', '?'), env.get('cores', '?'),
                env.get('load_average_start', float('nan')),
                env.get('load_average_end', float('nan')), versions)]


def main_run_part(results, run):
    """Return the page's part made by ``python -m bench.run``: report.md's verdict sections."""
    report = read_text(os.path.join(results, 'report.md'))
    if report is None:
        return ['## Main run\n', '`report.md` is missing: run `make bench`.\n']
    parts = ['## Main run: `make bench`\n',
             "Cameron's section 4 experiments, and coal, python-fcl and MuJoCo on the same "
             'tracked sequences, every answer checked against an exact Minkowski-difference '
             'reference. Reproduce: `make bench` (or `%s` after `make install` and '
             '`.venv/bin/pip install -r bench/requirements.txt`). Full report, counters per '
             'scene and construction times: [bench/results/report.md](../bench/results/report.md);'
             ' every figure: '
             '`timings.csv`, `references.csv`, `depth_apis.csv`, `builds.csv`, `run.json`.\n'
             % RUN_COMMAND] + [line + '\n' for line in setup_lines(run)]
    for heading in REPORT_SECTIONS:
        section = report_section(report, heading)
        if section is not None:
            if CUT_BEFORE in section:
                section = section[:section.index(CUT_BEFORE)] + (
                    "The depths reported by the peers' collision APIs (`fcl.collide`, MuJoCo's "
                    '`mj_collision`), scene by scene: report.md.')
            parts.append(demote(section) + '\n')
    return parts


def demote(section):
    """
    Fit a report.md section under the main run: '### ' headings, links into bench/results.

    report.md links its figures by file name; the page lives in docs/.
    """
    section = re.sub(r'\]\((?!https?:|\.\./|#)([^)]+)\)', r'](../bench/results/\1)', section)
    return '\n'.join('#' + line if line.startswith('## ') else line
                     for line in section.splitlines())


def standalone_part(results):
    """Return one block per stand-alone benchmark: what, command, preamble and first table."""
    parts = ['## Stand-alone benchmarks\n',
             'Each writes its own file in bench/results; the command is the one that file '
             'records. The node benchmarks need the ROS environment shown in their command.\n']
    for heading, name, what, default_command in STANDALONE:
        text = read_text(os.path.join(results, name))
        parts.append('### %s\n' % heading)
        if text is None:
            parts.append('`bench/results/%s` is missing.\n' % name)
            continue
        command = stated_command(text) or default_command
        table = first_table(text)
        churn = [line for line in text.splitlines() if line.startswith('Churn:')]
        link = '[%s](../bench/results/%s)' % (name, name)
        parts += ['%s Reproduce: `%s` (%s).\n' % (what, command, link),
                  preamble(text) + '\n', '\n'.join(table) + '\n']
        parts += [line + '\n' for line in churn]
    return parts


def render_page(results):
    """Return docs/performance.md's text from the files in ``results``."""
    run_text = read_text(os.path.join(results, 'run.json'))
    run = json.loads(run_text) if run_text else None
    head = ['# Performance and accuracy\n',
            'Generated by `python -m bench.report.performance` from the files in bench/results '
            '(`make bench` writes both); do not edit by hand. Times are wall-clock on the '
            'machine named below, which is shared with other work: compare figures within one '
            'table, not across tables. Counters (GJK iterations, support calls, hill-climb '
            'steps, EPA iterations) and errors do not depend on the machine.\n']
    parts = head + main_run_part(results, run) + standalone_part(results)
    return '\n'.join(part.rstrip('\n') + '\n' for part in parts if part.strip())


def write_page(results=RESULTS, page=PAGE):
    """Write the performance page; return its path."""
    directory = os.path.dirname(page)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(page, 'w', encoding='utf-8') as handle:
        handle.write(render_page(results))
    return page


def main(argv=None):
    """Write docs/performance.md from bench/results (run from the repository root)."""
    parser = argparse.ArgumentParser(prog='python -m bench.report.performance',
                                     description='Write the performance page from bench/results.')
    parser.add_argument('--results', default=RESULTS, help='results folder (%(default)s)')
    parser.add_argument('--page', default=PAGE, help='page to write (%(default)s)')
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(write_page(args.results, args.page))
    return 0


if __name__ == '__main__':
    sys.exit(main())
