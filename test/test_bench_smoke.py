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
Smoke test of the benchmark (bench/): scenes, the exact reference and a tiny end-to-end run.

No timing is asserted. Peers that are not installed (coal, python-fcl, mujoco come with
bench/requirements.txt, not with the test environment) are skipped by the harness itself.
"""

import pathlib
import sys

import numpy
import pytest
from reference import signed_distance_reference
from scipy.spatial import ConvexHull

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# After the path set-up:
from bench import exact, peer_targets, report, run, scenes  # noqa: E402, I100
from bench.report import performance  # noqa: E402


def test_scenes_are_seeded_and_as_specified():
    spec = scenes.SceneSpec('hull', 16, 1.0, 6.0, num_pairs=3, steps=4)
    first = scenes.make_scene(spec, seed=5)
    again = scenes.make_scene(spec, seed=5)
    other = scenes.make_scene(spec, seed=6)
    numpy.testing.assert_array_equal(first.poses, again.poses)
    assert not numpy.allclose(first.poses, other.poses)
    assert first.poses.shape == (4, 6, 4, 4)
    assert [len(ConvexHull(p).vertices) for p in first.points] == [16] * 6
    rotations = first.poses[..., :3, :3]
    numpy.testing.assert_allclose(numpy.einsum('...ji,...jk->...ik', rotations, rotations),
                                  numpy.broadcast_to(numpy.eye(3), rotations.shape), atol=1e-12)
    for pair in range(3):
        radius_a = numpy.linalg.norm(first.points[2 * pair], axis=1).max()
        radius_b = numpy.linalg.norm(first.points[2 * pair + 1], axis=1).max()
        centres = first.poses[0, 2 * pair:2 * pair + 2, :3, 3]
        # A gap of 1 diameter: bounding spheres one mean diameter (r_a + r_b) apart.
        assert numpy.linalg.norm(centres[1] - centres[0]) == pytest.approx(
            2.0 * (radius_a + radius_b))


def test_exact_reference_matches_the_naive_one():
    rng = numpy.random.default_rng(3)
    overlapping = 0
    for trial in range(40):
        size = int(rng.choice([8, 12, 24]))
        body_a = scenes.sphere_points(size, rng) if trial % 4 else scenes.box_points(
            rng.uniform(0.3, 1.0, 3))
        body_b = scenes.sphere_points(size, rng)
        pose_a, pose_b = numpy.eye(4), numpy.eye(4)
        pose_a[:3, :3], pose_b[:3, :3] = scenes.random_rotation(rng), scenes.random_rotation(rng)
        pose_b[:3, 3] = scenes.sphere_points(1, rng)[0] * rng.uniform(0.2, 3.0)
        fast = exact.exact_signed_distance(exact.BodyGeometry.from_points(body_a), pose_a,
                                           exact.BodyGeometry.from_points(body_b), pose_b)
        naive = signed_distance_reference(scenes.transform(pose_a, body_a),
                                          scenes.transform(pose_b, body_b)).distance
        assert fast == pytest.approx(naive, abs=1e-12)
        overlapping += fast < 0.0
    assert 0 < overlapping < 40


def test_certificate_brackets_the_distance_and_rejects_false_witnesses():
    body = exact.BodyGeometry.from_points(scenes.box_points([1.0, 1.0, 1.0]))
    pose_a, pose_b = numpy.eye(4), numpy.eye(4)
    pose_b[:3, 3] = [3.5, 0.25, 0.0]
    lower, upper = exact.certify_separation(body, pose_a, body, pose_b, [1.0, 0.5, 0.0],
                                            [2.5, 0.5, 0.0], [1.0, 0.0, 0.0])
    assert lower == pytest.approx(1.5) and upper == pytest.approx(1.5)
    # A witness point outside its body proves nothing.
    assert exact.certify_separation(body, pose_a, body, pose_b, [1.2, 0.5, 0.0],
                                    [2.5, 0.5, 0.0], [1.0, 0.0, 0.0]) is None
    # A poor normal gives a loose but still valid lower bound.
    lower, upper = exact.certify_separation(body, pose_a, body, pose_b, [1.0, 0.5, 0.0],
                                            [2.5, 0.5, 0.0], [1.0, 0.3, 0.0])
    assert lower < 1.5 <= upper


@pytest.mark.slow
def test_tiny_run_checks_every_answer_and_writes_the_report(tmp_path):
    config = run.Config(sizes=(8, 16), num_pairs=2, steps=3, reps=1, method_budget_s=0.05,
                        hull_budget_s=10.0, out=str(tmp_path), boxes=False, extras=False,
                        methods=('gjk_batch_track_hc', 'gjk_batch_cold_hc', 'coal_warm', 'fcl',
                                 'mujoco'))
    results = run.run_benchmark(config)
    report.write_all(results, config.out)

    methods = {row['method'] for row in results.timings}
    assert len(results.timings) == 18 * len(methods)
    # The hull budget covers this tiny run: every query has an exact answer.
    for row in results.references:
        assert row['certified'] + row['hull'] == row['queries'] == 6
    for row in results.timings:
        assert row['checked'] == 6
        assert numpy.isfinite(row['max_error'])
        assert row['tracked_ns'] > 0.0
    text = (tmp_path / 'report.md').read_text()
    for heading in ('## Setup', '## Accuracy against the exact reference', '## Profile'):
        assert heading in text
    for name in ('timings.csv', 'references.csv', 'depth_apis.csv', 'run.json'):
        assert (tmp_path / name).is_file()
    if 'gjk_batch_track_hc' in methods:
        assert '## Targets' in text and '## Claims of Cameron 1997, section 4' in text
        # Without the extras the batch and start-up rows say so, never a figure.
        assert text.count('not measured: skipped') == 4 and '## Peer targets' in text
        assert {'fig3.png', 'fig4.png', 'fig5.png'} <= {p.name for p in tmp_path.iterdir()}


def test_performance_page_carries_the_stored_figures_and_their_commands(tmp_path):
    (tmp_path / 'report.md').write_text(
        '# title\n\n## Setup\n\nnot on the page\n\n## Peer targets (x)\n\n| a |\n|---|\n'
        '| 1.23 us |\n\n## Figures\n\n![Fig. 3](fig3.png)\n')
    (tmp_path / 'single_call.md').write_text(
        '# Single\n\n2000 calls per run.\n\n| vertices | us |\n|---|---|\n| 8 | 1.00 |\n')
    (tmp_path / 'planning.md').write_text(
        '# Planner\n\nCommand: `python -m bench.planning_bench --quick`.\n\n| robot |\n'
        '| --- |\n| ur5 |\n\nafter the table\n')
    page = performance.render_page(str(tmp_path))
    assert '### Peer targets (x)' in page and '| 1.23 us |' in page
    assert 'not on the page' not in page and '](../bench/results/fig3.png)' in page
    assert 'Reproduce: `.venv/bin/python -m bench.single_call`' in page and '| 8 | 1.00 |' in page
    assert 'Reproduce: `python -m bench.planning_bench --quick`' in page
    assert 'after the table' not in page
    # Nothing stored, nothing made up: a missing file is named as missing.
    assert '`bench/results/stress.md` is missing.' in page
    assert '`run.json` is missing' in page


def _timing(distance, rotation, method, **values):
    return dict({'shape': 'hull', 'size': 2048, 'distance': distance,
                 'rotation_deg': rotation, 'method': method}, **values)


def test_peer_target_rows_judge_each_target_against_its_peer():
    rows = [_timing('gap1', 0.0, 'gjk_batch_track_hc', cold_ns=6000.0,
                    hill_climb_steps_cold=9.0),
            _timing('gap1', 0.0, 'mujoco', cold_ns=7000.0),
            _timing('gap3', 6.0, 'gjk_batch_track_hc', cold_ns=8000.0,
                    hill_climb_steps_cold=7.0),
            _timing('gap3', 6.0, 'mujoco', cold_ns=7500.0),
            _timing('overlap', 6.0, 'gjk_batch_track_hc', tracked_ns=40e3, max_error=1e-15,
                    epa_iterations_tracked=26.0, hill_climb_steps_tracked=250.0),
            _timing('overlap', 6.0, 'mujoco', tracked_ns=45e3, max_error=3e-2)]
    table = report.Table(rows)
    cold = peer_targets.row_cold_2048(table)
    assert cold.met is False and cold.ours == 8.0 and cold.peer_value == 7.5  # worst scene
    overlap = peer_targets.row_rotating_overlap(table)
    assert overlap.met is True and overlap.ours == 40.0
    single = [(8, peer_targets.QUERY_TRACKED, 7.5, 1.0, 1.0, 0.0),
              (8, peer_targets.COAL_WARM, 1.5, None, None, 0.0),
              (8, peer_targets.QUERY_COLD, 2.0, 3.0, 4.0, 0.0),
              (8, peer_targets.CALL_COLD, 5.0, 3.0, 4.0, 0.0),
              (8, peer_targets.COAL_COLD, 1.1, None, None, 0.0)]
    assert peer_targets.row_single_tracked(single).met is False
    cold = peer_targets.row_single_cold(single)
    assert cold.met is True and '5.0 us with `signed_distance`' in cold.why  # 2.0 <= 2 x 1.1
    planning = {'planning': [
        {'robot': 'ur5', 'gjk_us_per_config_median': 70.0, 'gjk_max_error': 1e-15,
         'pinocchio_coal_us_per_config_median': 160.0, 'coal_max_error': 5e-7,
         'piece_pairs': 177, 'gjk_iterations_per_pair': 1.5},
        {'robot': 'panda', 'gjk_us_per_config_median': 70.0, 'gjk_max_error': 1e-3,
         'pinocchio_coal_us_per_config_median': 160.0, 'coal_max_error': 5e-7,
         'piece_pairs': 384, 'gjk_iterations_per_pair': 1.5},
        {'robot': 'kinova', 'pinocchio': 'not installed: pinocchio'}]}
    assert peer_targets.row_batch(planning, 'ur5').met is True
    assert peer_targets.row_batch(planning, 'panda').met is False  # faster but not exact
    kinova = peer_targets.row_batch(planning, 'kinova')
    assert kinova.met is None and 'not installed: pinocchio' in kinova.why
    assert peer_targets.row_startup({'startup': [2.5, 3.5, 2.9]}).met is True  # median 2.9 s
    unmeasured = peer_targets.row_startup({'startup': None, 'startup_error': 'no ROS graph'})
    assert unmeasured.met is None and 'no ROS graph' in unmeasured.why
    text = peer_targets.section(table, {}, report.verdict)
    # Two single-call rows, three batch rows and the start-up.
    assert text.count('**not measured**') == 6
