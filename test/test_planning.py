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
RobotDistances against the exact reference; tracking, padding, filtering, decomposition cache.

Expected distances come from test/reference.py (exact Minkowski-difference hulls of world box
corners); link poses for it come from the independent FK of test_models_kinematics.
"""

import itertools

from gjk_ros.core import Status
from gjk_ros.models import decomposition
from gjk_ros.planning import Obstacle, RobotDistances
import numpy as np
import pytest
from reference import signed_distance_reference, transform_points
from scipy.spatial.transform import Rotation
from test_models_kinematics import reference_fk

# A 4-link arm of boxes; link3 has two boxes (a body of two pieces).
ARM_URDF = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.3 0.3 0.1"/></geometry></collision></link>
  <link name="link1"><collision><origin xyz="0 0 0.2"/>
    <geometry><box size="0.08 0.08 0.4"/></geometry></collision></link>
  <link name="link2"><collision><origin xyz="0.2 0 0"/>
    <geometry><box size="0.4 0.06 0.06"/></geometry></collision></link>
  <link name="link3">
    <collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.05 0.05"/></geometry>
    </collision>
    <collision><origin xyz="0.3 0 0.05" rpy="0 0.4 0"/>
      <geometry><box size="0.05 0.12 0.1"/></geometry></collision></link>
  <link name="marker"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="link2"/><child link="link3"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="m" type="fixed"><parent link="link3"/><child link="marker"/></joint>
</robot>"""

SRDF = """<robot name="arm"><disable_collisions link1="base" link2="link2" reason="Never"/>
</robot>"""

BOXES = {  # link -> [(origin xyz, rpy, size)]
    'base': [((0, 0, 0), (0, 0, 0), (0.3, 0.3, 0.1))],
    'link1': [((0, 0, 0.2), (0, 0, 0), (0.08, 0.08, 0.4))],
    'link2': [((0.2, 0, 0), (0, 0, 0), (0.4, 0.06, 0.06))],
    'link3': [((0.15, 0, 0), (0, 0, 0), (0.3, 0.05, 0.05)),
              ((0.3, 0, 0.05), (0, 0.4, 0), (0.05, 0.12, 0.1))],
}


def _pose(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)):
    out = np.eye(4)
    out[:3, :3] = Rotation.from_euler('xyz', rpy).as_matrix()
    out[:3, 3] = xyz
    return out


def _corners(size):
    half = np.asarray(size, dtype=float) / 2.0
    return np.array(list(itertools.product(*[(-h, h) for h in half])))


OBSTACLES = [
    Obstacle('crate', {'type': 'box', 'size': [0.2, 0.3, 0.25]},
             _pose((0.5, 0.1, 0.5), (0.1, 0, 0.3))),
    Obstacle('post', [{'type': 'box', 'size': [0.05, 0.05, 0.6], 'xyz': [0, 0, 0.3]},
                      {'type': 'box', 'size': [0.2, 0.2, 0.02]}], _pose((-0.3, 0.35, 0.0))),
]
OBSTACLE_BOXES = {
    'crate': [((0, 0, 0), (0, 0, 0), (0.2, 0.3, 0.25))],
    'post': [((0, 0, 0.3), (0, 0, 0), (0.05, 0.05, 0.6)),
             ((0, 0, 0), (0, 0, 0), (0.2, 0.2, 0.02))],
}


def _world_boxes(frame_pose, boxes):
    return [transform_points(frame_pose @ _pose(xyz, rpy), _corners(size))
            for xyz, rpy, size in boxes]


def _expected(first, second):
    return min(signed_distance_reference(a, b).distance for a in first for b in second)


def _configurations(count, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2.5, 2.5, (count, 3))


def _robot(**kwargs):
    return RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=OBSTACLES, **kwargs)


def test_self_pairs_exclude_adjacent_and_srdf_disabled():
    robot = _robot()
    assert robot.links == ('base', 'link1', 'link2', 'link3')
    assert robot.self_collision_pairs() == (('base', 'link3'), ('link1', 'link3'))
    assert robot.pairs[:2] == (('base', 'crate'), ('base', 'post'))
    no_srdf = RobotDistances(ARM_URDF, obstacles=OBSTACLES)
    assert ('base', 'link2') in no_srdf.self_collision_pairs()
    assert _robot(self_collision=False).self_collision_pairs() == ()


def test_distances_match_exact_reference():
    robot = _robot()
    qs = _configurations(12, seed=4)
    results = robot.trajectory(qs)
    penetrating = 0
    for n, q in enumerate(qs):
        link_poses = reference_fk(ARM_URDF, dict(zip(('j1', 'j2', 'j3'), q)))
        bodies = {link: _world_boxes(link_poses[link], BOXES[link]) for link in BOXES}
        bodies.update({o.name: _world_boxes(o.pose, OBSTACLE_BOXES[o.name]) for o in OBSTACLES})
        for k, (first, second) in enumerate(results.pairs):
            expected = _expected(bodies[first], bodies[second])
            assert results.distance[n, k] == pytest.approx(expected, abs=1e-9)
            assert results.status[n, k] in (Status.SEPARATED, Status.TOUCHING,
                                            Status.PENETRATING)
            penetrating += expected < 0
    assert penetrating > 0  # the sample covers overlaps too
    gap = results.witness_b - results.witness_a
    np.testing.assert_allclose(gap, results.distance[..., None] * results.normal, atol=1e-9)


def test_tracked_trajectory_equals_cold_and_single_calls():
    qs = np.linspace([-1.0, 0.2, -0.5], [1.5, 1.2, 2.0], 60)
    tracked = _robot().trajectory(qs)
    cold = _robot(tracking=False).trajectory(qs)
    np.testing.assert_allclose(tracked.distance, cold.distance, atol=1e-9)
    assert tracked.iterations.mean() < cold.iterations.mean()
    robot = _robot()
    for n in (0, 1, 2):
        single = robot.distances(qs[n])
        np.testing.assert_allclose(single.distance, tracked.distance[n], atol=1e-9)
        assert single.distance.shape == (len(robot.pairs),)


def test_padding_is_subtracted_and_moves_witnesses():
    q = np.array([0.3, 0.8, -0.4])
    plain = _robot().distances(q)
    padded_obstacles = [Obstacle(o.name, o.geometry, o.pose, padding=0.01 * (i + 1))
                        for i, o in enumerate(OBSTACLES)]
    padded = RobotDistances(ARM_URDF, srdf_xml=SRDF, obstacles=padded_obstacles,
                            padding=0.005, link_padding={'link3': 0.03}).distances(q)
    for k, (first, second) in enumerate(plain.pairs):
        own = 0.005 + (0.03 if first == 'link3' else 0.0)
        # Every link carries the global padding; a self pair's second link too.
        other = {'crate': 0.01, 'post': 0.02}.get(
            second, 0.005 + (0.03 if second == 'link3' else 0.0))
        assert padded.distance[k] == pytest.approx(plain.distance[k] - own - other, abs=1e-12)
        np.testing.assert_allclose(padded.witness_a[k],
                                   plain.witness_a[k] + own * plain.normal[k], atol=1e-12)
        np.testing.assert_allclose(padded.witness_b[k],
                                   plain.witness_b[k] - other * plain.normal[k], atol=1e-12)


def test_beyond_pairs_are_nan_and_ignored_by_min_distance():
    robot = _robot(max_distance=0.05)
    result = robot.distances(np.array([0.0, -1.5, 0.0]))
    beyond = result.status == Status.BEYOND
    assert beyond.any() and np.isnan(result.distance[beyond]).all()
    measured = ~beyond
    assert result.min_distance() == pytest.approx(
        (result.distance[measured] - result.error_bound[measured]).min())


def test_obstacle_poses_per_configuration():
    robot = _robot()
    qs = np.zeros((2, 3))
    poses = np.array([[o.pose for o in OBSTACLES]] * 2)
    poses[1, :, 2, 3] += 1.0  # lift every obstacle by 1 m in the second configuration
    result = robot.trajectory(qs, poses)
    k = result.index('base', 'post')
    assert result.distance[1, k] == pytest.approx(result.distance[0, k] + 1.0 - 0.0, abs=0.2)
    assert result.distance[1, k] > result.distance[0, k]
    with pytest.raises(ValueError, match='obstacle_poses'):
        robot.trajectory(qs, poses[:, :1])


# Decomposition ---------------------------------------------------------------------------------

def _l_mesh():
    import trimesh
    leg = trimesh.creation.box([0.4, 0.1, 0.1], _pose((0.15, 0.0, 0.0)))
    arm = trimesh.creation.box([0.1, 0.1, 0.4], _pose((0.0, 0.0, 0.15)))
    return trimesh.util.concatenate([leg, arm])


def _fake_coacd(calls):
    def run(vertices, faces, settings):
        calls.append(settings)
        return [vertices[vertices[:, 0] > 0.049], vertices[vertices[:, 0] <= 0.051]]
    return run


def test_decomposition_is_cached_on_disk(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(decomposition, '_run_coacd', _fake_coacd(calls))
    mesh = _l_mesh()
    first = decomposition.decompose_mesh(mesh.vertices, mesh.faces, cache_dir=str(tmp_path))
    second = decomposition.decompose_mesh(mesh.vertices, mesh.faces, cache_dir=str(tmp_path))
    assert len(calls) == 1
    assert len(first) == len(second) == 2
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    decomposition.decompose_mesh(mesh.vertices, mesh.faces, {'threshold': 0.1},
                                 cache_dir=str(tmp_path))
    decomposition.decompose_mesh(mesh.vertices * 2.0, mesh.faces, cache_dir=str(tmp_path))
    assert len(calls) == 3  # other settings, other mesh: new keys
    with pytest.raises(ValueError, match='unknown decomposition setting'):
        decomposition.decompose_mesh(mesh.vertices, mesh.faces, {'thresh': 1})


def test_default_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    assert decomposition.default_cache_dir() == str(tmp_path / 'gjk_ros' / 'decomposition')


def test_robot_decomposes_matching_meshes_once(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(decomposition, '_run_coacd', _fake_coacd(calls))
    path = tmp_path / 'l_shape.stl'
    _l_mesh().export(path)
    obstacle = Obstacle('bracket', {'type': 'mesh', 'uri': f'file://{path}'},
                        _pose((0.6, 0.0, 0.3)))
    options = {'obstacles': [obstacle], 'decompose': {'*l_shape.stl': {}},
               'decomposition_cache': str(tmp_path / 'cache')}
    robot = RobotDistances(ARM_URDF, **options)
    assert robot.pair_set.num_bodies == 5 + 2
    again = RobotDistances(ARM_URDF, **options)
    assert len(calls) == 1 and again.pair_set.num_bodies == 7
    hull_only = RobotDistances(ARM_URDF, obstacles=[obstacle], mesh_mode='hull')
    assert hull_only.pair_set.num_bodies == 6


def _surface_distance(triangles, point):
    """Unsigned distance from a point to a triangle soup (closest point on each triangle)."""
    import trimesh
    closest = trimesh.triangles.closest_point(triangles, np.repeat(point, len(triangles), 0))
    return float(np.linalg.norm(closest - point, axis=1).min())


def _hull_signed_distance(points, point):
    """Signed distance from a point to the convex hull of points (negative inside)."""
    import trimesh
    hull = trimesh.convex.convex_hull(points)
    inside = hull.face_normals @ point[0] - np.einsum(
        'ij,ij->i', hull.face_normals, hull.triangles[:, 0])
    if inside.max() <= 0.0:
        return float(inside.max())
    return _surface_distance(hull.triangles, point)


def test_coacd_parts_approach_the_true_mesh(tmp_path):
    pytest.importorskip('coacd')
    mesh = _l_mesh()
    settings = {'mcts_iterations': 30, 'resolution': 1000, 'preprocess_resolution': 30}
    parts = decomposition.decompose_mesh(mesh.vertices, mesh.faces, settings,
                                         cache_dir=str(tmp_path))
    assert len(parts) >= 2
    point = np.array([[0.15, 0.0, 0.15]])  # in the L's notch: outside the mesh, inside its hull
    exact = _surface_distance(mesh.triangles, point)
    hull = _hull_signed_distance(mesh.vertices, point)
    pieces = min(_hull_signed_distance(part, point) for part in parts)
    assert hull < 0.0 < exact
    assert abs(pieces - exact) < 0.1 * abs(hull - exact)
