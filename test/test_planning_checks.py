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
Planner checks: yes/no verdicts, certified segments, gradients, groups, threads, OMPL.

The reference for every verdict is RobotDistances.distances, itself checked against the exact
Minkowski-difference distance in test_planning.py.
"""

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from test_planning import _configurations, _robot, ARM_URDF, OBSTACLES, SRDF

from gjk_ros.planning import EdgeCheck, RobotDistances  # noqa: I100 - after the test helpers

GROUP_SRDF = SRDF.replace('</robot>', '<group name="elbow"><joint name="j2"/><joint name="j3"/>'
                          '</group><group name="arm"><chain base_link="base" tip_link="link3"/>'
                          '</group></robot>')


def _closest(robot, q, columns=None):
    """Exact reference verdict input: the smallest measured distance at q (selected pairs)."""
    result = robot.distances(q)
    distance = result.distance if columns is None else result.distance[columns]
    return float(np.nanmin(distance, initial=np.inf))


@pytest.fixture(scope='module')
def robot():
    return _robot()


@pytest.mark.parametrize('margin', [0.0, 0.01, 0.04])
def test_in_collision_agrees_with_distances(robot, margin):
    qs = _configurations(150, seed=11)
    expected = np.array([_closest(robot, q) <= margin for q in qs])
    assert 10 < expected.sum() < len(qs) - 10  # both verdicts occur
    assert np.array_equal(robot.in_collision_batch(qs, margin), expected)
    assert [robot.in_collision(q, margin) for q in qs] == expected.tolist()


def test_scalars_are_plain_python(robot):
    q = _configurations(1, seed=2)[0]
    assert type(robot.in_collision(q)) is bool
    assert type(robot.min_distance(q)) is float
    assert type(robot.distances(q).min_distance()) is float
    assert isinstance(robot.edge_free(q, q), EdgeCheck)
    assert type(robot.edge_free(q, q).free) is bool


def test_colliding_pair_is_within_the_margin(robot):
    for q in _configurations(60, seed=5):
        pair = robot.colliding_pair(q, 0.05)
        if pair is None:
            assert _closest(robot, q) > 0.05
        else:
            result = robot.distances(q)
            assert result.distance[result.index(*pair)] <= 0.05


def test_checks_count_fewer_separation_steps_than_distances(robot):
    """Machine-independent work: early exit and separating planes do less than distances."""
    qs = _configurations(100, seed=8)
    group = robot.group(robot.kinematics.variable_names, include_constant=True)
    before = group.stats
    group.in_collision_batch(qs)
    iterations = (group.stats - before)[2]
    robot.reset()
    distance_iterations = robot.trajectory(qs).iterations.sum()
    assert iterations < distance_iterations


def test_margin_must_be_finite_and_not_negative(robot):
    q = _configurations(1, seed=2)[0]
    for margin in (-0.1, float('nan'), float('inf')):
        with pytest.raises(ValueError):
            robot.in_collision(q, margin)


def _dense_clearance(robot, q0, q1, samples=401, columns=None):
    """Smallest distance over ``samples`` evenly spaced configurations of the segment."""
    t = np.linspace(0.0, 1.0, samples)[:, None]
    result = robot.trajectory(q0 + t * (q1 - q0))
    distance = result.distance if columns is None else result.distance[:, columns]
    return np.nanmin(distance, axis=1, initial=np.inf)


@settings(max_examples=60)
@given(st.integers(0, 2 ** 31 - 1), st.floats(0.0, 0.05), st.floats(0.05, 1.5))
def test_edge_free_never_passes_a_colliding_segment(seed, margin, length):
    robot = _shared_robot()
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-2.5, 2.5, 3)
    direction = rng.normal(size=3)
    q1 = q0 + length * direction / np.linalg.norm(direction)
    verdict = robot.edge_free(q0, q1, margin)
    clearance = _dense_clearance(robot, q0, q1)
    t = np.linspace(0.0, 1.0, clearance.size)
    if verdict.free:
        assert clearance.min() > margin
    else:
        assert 0.0 <= verdict.certified <= verdict.fraction <= 1.0
    # Everything before the certified fraction is free, certified or not.
    assert (clearance[t < verdict.certified] > margin).all()


def test_edge_free_certifies_segments_with_clearance(robot):
    """Clearance well above margin + tolerance must be proven (the check is not vacuous)."""
    rng = np.random.default_rng(3)
    certified = 0
    for _ in range(120):
        q0 = rng.uniform(-2.5, 2.5, 3)
        q1 = q0 + rng.normal(scale=0.4, size=3)
        if _dense_clearance(robot, q0, q1).min() > 0.02:
            assert robot.edge_free(q0, q1, 0.0)
            certified += 1
    assert certified > 20


def test_edge_free_reports_the_contact(robot):
    qs = _configurations(80, seed=21)
    free = [q for q in qs if _closest(robot, q) > 0.01]
    hit = [q for q in qs if _closest(robot, q) < -0.01]
    verdict = robot.edge_free(free[0], hit[0])
    assert not verdict
    q = free[0] + verdict.fraction * (hit[0] - free[0])
    assert _closest(robot, q) <= 1e-4
    assert verdict.pair in robot.pairs


_ROBOT = []


def _shared_robot():
    if not _ROBOT:
        _ROBOT.append(_robot())
    return _ROBOT[0]


def test_gradients_match_finite_differences(robot):
    qs = _configurations(8, seed=31)
    results, gradient = robot.gradients(qs)
    assert gradient.shape == (8, len(robot.pairs), 3)
    step = 1e-6
    checked = 0
    for n, q in enumerate(qs):
        numeric = np.empty((len(robot.pairs), 3))
        for v in range(3):
            up, down = q.copy(), q.copy()
            up[v] += step
            down[v] -= step
            numeric[:, v] = (robot.distances(up).distance - robot.distances(down).distance) / (
                2 * step)
        apart = results.distance[n] > 1e-3
        assert np.abs(gradient[n][apart] - numeric[apart]).max() < 1e-6
        checked += apart.sum()
    assert checked > 20


def test_single_gradient_and_group_gradient(robot):
    q = _configurations(1, seed=4)[0]
    result, gradient = robot.gradients(q)
    assert gradient.shape == (len(robot.pairs), 3)
    group = robot.group(['j2', 'j3'], fixed=q)
    group_result, group_gradient = group.gradients(q[1:])
    columns = group.pair_columns
    np.testing.assert_allclose(group_gradient, gradient[columns][:, 1:], atol=1e-12)
    np.testing.assert_allclose(group_result.distance, result.distance[columns])


def test_srdf_groups_and_joint_lists():
    robot = RobotDistances(ARM_URDF, srdf_xml=GROUP_SRDF, obstacles=OBSTACLES)
    assert robot.group('elbow').variable_names == ('j2', 'j3')
    assert robot.group('arm').variable_names == ('j1', 'j2', 'j3')
    assert robot.group(['j3']).variable_names == ('j3',)
    with pytest.raises(KeyError):
        robot.group('missing')
    with pytest.raises(KeyError):
        robot.group(['nope'])


def test_group_leaves_out_constant_pairs_and_matches_the_robot():
    robot = RobotDistances(ARM_URDF, srdf_xml=GROUP_SRDF, obstacles=OBSTACLES)
    fixed = np.array([0.7, 0.0, 0.0])
    elbow = robot.group('elbow', fixed=fixed)
    # j2 and j3 move link2 and link3, never base or link1.
    assert ('base', 'crate') in elbow.constant_pairs
    assert ('link1', 'post') in elbow.constant_pairs
    assert all('link2' in pair or 'link3' in pair for pair in elbow.pairs)
    rng = np.random.default_rng(9)
    for q in rng.uniform(-2.5, 2.5, (80, 2)):
        full = elbow.full(q)
        expected = _closest(robot, full, elbow.pair_columns) <= 0.0
        assert elbow.in_collision(q) == expected


def test_pair_selection():
    robot = RobotDistances(ARM_URDF, srdf_xml=GROUP_SRDF, obstacles=OBSTACLES)
    only = robot.group('arm', pairs=[('crate', 'link3')])
    assert only.pairs == (('link3', 'crate'),)
    by_rule = robot.group('arm', pairs=lambda a, b: 'post' in (a, b))
    assert all('post' in pair for pair in by_rule.pairs)
    with pytest.raises(KeyError):
        robot.group('arm', pairs=[('link3', 'moon')])


def test_threads_give_the_single_thread_answers():
    robot = _robot()
    qs = _configurations(200, seed=41)
    reference = _robot()
    expected_distance = np.array([reference.distances(q).distance for q in qs])
    expected_hits = reference.in_collision_batch(qs, 0.02)
    answers, failures = {}, []

    def work(index):
        try:
            distance = np.array([robot.distances(q).distance for q in qs])
            hits = np.array([robot.in_collision(q, 0.02) for q in qs])
            answers[index] = (distance, hits)
        except Exception as error:  # reported below: a thread must not fail silently
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    for distance, hits in answers.values():
        np.testing.assert_allclose(distance, expected_distance, rtol=0, atol=1e-9)
        assert np.array_equal(hits, expected_hits)


def test_motion_bounds_hold(robot):
    """Distances change no faster than the pair bounds; link vertices move no farther."""
    kinematics = robot.kinematics
    rng = np.random.default_rng(12)
    engine = robot.engine
    radii = _link_radii(robot)
    owner_bounds = np.zeros((len(robot.pairs), 3))
    owner_bounds[engine.owner] = robot.pair_bounds
    for _ in range(30):
        q0 = rng.uniform(-2.5, 2.5, 3)
        q1 = q0 + rng.normal(scale=0.5, size=3)
        t = np.linspace(0.0, 1.0, 50)
        distance = robot.trajectory(q0 + t[:, None] * (q1 - q0)).distance
        rate = owner_bounds @ np.abs(q1 - q0)
        change = np.abs(distance[:, None] - distance[None])  # (n, n, K)
        span = np.abs(t[:, None] - t[None])[:, :, None]
        assert (change <= rate * span + 1e-9).all()
        poses = robot.link_poses(q0 + t[:, None] * (q1 - q0))
        for p, link in enumerate(robot._piece_link):
            points = engine.pieces[p].vertices
            world = np.einsum('nij,vj->nvi', poses[:, link, :3, :3] @ robot._body_origins[p][
                :3, :3], points) + (poses[:, link] @ robot._body_origins[p])[:, None, :3, 3]
            moved = np.linalg.norm(world - world[0], axis=2).max()
            assert moved <= kinematics.motion_bounds(radii)[link] @ np.abs(q1 - q0) + 1e-9


def _link_radii(robot):
    radii = np.zeros(len(robot.kinematics.links))
    for p, link in enumerate(robot._piece_link):
        shape, origin = robot.engine.pieces[p], robot._body_origins[p]
        reach = np.linalg.norm(origin[:3, :3] @ shape.bounding_center + origin[:3, 3])
        radii[link] = max(radii[link], reach + shape.bounding_radius)
    return radii


def test_ompl_planner_paths_are_certified():
    ompl_geometric = pytest.importorskip('ompl.geometric')
    from gjk_ros.planning.ompl import state_space, use_group
    robot = RobotDistances(ARM_URDF, srdf_xml=GROUP_SRDF, obstacles=OBSTACLES)
    group = robot.group('arm')
    setup = ompl_geometric.SimpleSetup(state_space(group))
    keep = use_group(setup, group)  # noqa: F841 - alive as long as the setup
    rng = np.random.default_rng(2)
    free = [q for q in rng.uniform(-2.5, 2.5, (200, 3)) if _closest(robot, q) > 0.02]
    space = setup.getStateSpace()
    start, goal = space.allocState(), space.allocState()
    for i in range(3):
        start[i], goal[i] = float(free[0][i]), float(free[1][i])
    setup.setStartAndGoalStates(start, goal)
    setup.setPlanner(ompl_geometric.RRTConnect(setup.getSpaceInformation()))
    assert setup.solve(10.0)
    path = setup.getSolutionPath()
    states = np.array([[path.getState(i)[j] for j in range(3)]
                       for i in range(path.getStateCount())])
    for q0, q1 in zip(states[:-1], states[1:]):
        assert _dense_clearance(robot, q0, q1).min() > 0.0


def test_warm_up_compiles_the_signatures_the_planner_calls():
    """A real robot's checks reuse the warm-up's specialisations (no compile on first use)."""
    from gjk_ros.core import bodypairs, chain, collision, warmup
    warmup.warm_up_group('planning')
    kernels = (collision.configurations_hit, collision.segment_hit, bodypairs.reduce_pairs,
               chain.chain_forward, chain.place_sequence)
    before = [len(kernel.signatures) for kernel in kernels]
    robot = _robot()
    qs = _configurations(3, seed=1)
    robot.in_collision(qs[0])
    robot.in_collision_batch(qs)
    robot.edge_free(qs[0], qs[1])
    robot.trajectory(qs)
    assert [len(kernel.signatures) for kernel in kernels] == before
