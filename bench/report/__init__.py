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

Modules: table (look-ups, CSV, number formats, the verdict line), plots (the figures), claims
(one function a claim of the paper), targets (one function a project target), sections (the
other sections of report.md).
"""

import json
import os

from .claims import section_claims
from .plots import write_plots
from .sections import (section_accuracy, section_builds, section_contact, section_counters,
                       section_figures, section_headline, section_peer_targets,
                       section_planner_checks, section_profile, section_setup)
from .table import num, sci, Table, us, verdict, write_csv
from .targets import section_targets

__all__ = ['num', 'render_report', 'sci', 'Table', 'us', 'verdict', 'write_all', 'write_csv',
           'write_plots']


def write_all(results, out):
    """Write every output file of a bench.run.Results into ``out``; return report.md's path."""
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


def render_report(results, figures):
    """Render report.md from the results and the figures drawn (name -> file)."""
    table = Table(results.timings)
    parts = [
        '# gjk_ros benchmark: Cameron 1997 section 4, and peers\n',
        section_setup(results),
        section_targets(results, table),
        section_peer_targets(results, table),
        section_planner_checks(results, table),
        section_claims(results, table),
        section_headline(results, table),
        section_accuracy(results, table),
        section_contact(results),
        section_counters(table),
        section_profile(results, table),
        section_builds(results),
        section_figures(figures),
    ]
    return '\n'.join(part for part in parts if part)
