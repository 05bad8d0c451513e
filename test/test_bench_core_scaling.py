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

"""The core-scaling calibration of the load benchmark: its scene, its processes and its table."""

import os
import pathlib
import sys

import numpy
import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import core_scaling  # noqa: E402, I100


def test_the_scene_is_seeded_and_pairs_every_link_with_every_obstacle():
    bodies, pairs, poses, drift = core_scaling.scene(7)
    again = core_scaling.scene(7)
    assert len(bodies) == core_scaling.LINKS + 7 and len(pairs) == core_scaling.LINKS * 7
    assert set(map(tuple, pairs)) == {(link, core_scaling.LINKS + obstacle)
                                      for link in range(core_scaling.LINKS)
                                      for obstacle in range(7)}
    numpy.testing.assert_array_equal(poses, again[2])
    numpy.testing.assert_array_equal(drift, again[3])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason='needs two CPUs')
def test_each_workload_runs_alone_and_on_two_cpus_at_once():
    rows = core_scaling.measure(obstacles=5, steps=3)
    assert [row['workload'] for row in rows] == ['pair update', 'interpreter']
    for row in rows:
        assert row['alone_ms'] > 0.0 and row['together_ms'] > 0.0
        assert row['efficiency'] == pytest.approx(row['alone_ms'] / row['together_ms'])
    table = core_scaling.markdown(rows, 5)
    assert '| pair update |' in table and '11 link hulls x 5 boxes' in table
    assert '%.2fx one' % (2 * rows[1]['efficiency']) in table


def test_one_cpu_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {0})
    with pytest.raises(RuntimeError, match='needs two CPUs'):
        core_scaling.measure(obstacles=5, steps=3)
