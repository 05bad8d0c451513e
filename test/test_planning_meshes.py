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
The planner API on non-convex meshes: mesh_mode, exactness against triangles, the kitchen.

References are independent of the core: distances to the triangles by the naive
Minkowski-difference reference, inside by winding numbers computed here in numpy.
"""

import warnings

from gjk_ros.core import Status
from gjk_ros.models import ModelError
from gjk_ros.planning import load_obstacles, MeshWarning, Obstacle, RobotDistances
from mbm import kitchen_mesh, mbm_directory
import numpy
import pytest
from reference import signed_distance_reference
from test_core_mesh import (box_triangles, frame_triangles, reference_winding, vertex_parts,
                            wavy_sheet)

EXACT = 1e-9

# One cube link on a prismatic x joint and a revolute z joint: q = (x, angle).
PROBE_URDF = """<robot name="probe">
  <link name="base"/>
  <link name="carriage"/>
  <link name="tool"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="-5" upper="5" effort="1" velocity="1"/></joint>
  <joint name="turn" type="revolute"><parent link="carriage"/><child link="tool"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def _world(points, pose):
    return points @ pose[:3, :3].T + pose[:3, 3]


def _message(triangles, object_id):
    """Return a CollisionObject dict holding a triangle mesh."""
    points, ids = numpy.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    return {'id': object_id, 'meshes': [{'vertices': points.tolist(),
                                         'triangles': ids.reshape(-1, 3).tolist()}]}


def test_a_cube_inside_a_closed_mesh_box_is_negative_and_outside_exact():
    box = Obstacle('crate', box_triangles([0.5, 0.5, 0.5]))
    robot = RobotDistances(PROBE_URDF, obstacles=[box])
    assert robot.distances([0.0, 0.3]).distance[0] == pytest.approx(-0.6, abs=EXACT)
    assert robot.distances([0.0, 0.0]).status[0] == Status.PENETRATING
    assert robot.distances([0.9, 0.0]).distance[0] == pytest.approx(0.3, abs=EXACT)
    assert robot.in_collision([0.0, 0.0]) and not robot.in_collision([0.9, 0.0])


def test_an_open_sheet_is_unsigned():
    sheet = wavy_sheet(8, size=0.5)
    pose = numpy.eye(4)
    pose[:3, :3] = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]  # the sheet stands across the x axis
    with pytest.warns(MeshWarning, match='curtain: mesh of 98 triangles is not watertight'):
        robot = RobotDistances(PROBE_URDF, obstacles=[Obstacle('curtain', sheet, pose)])
    assert all(robot.unsigned[len(robot.links):])
    crossing = robot.distances([0.0, 0.2])
    assert crossing.distance[0] == 0.0 and crossing.status[0] == Status.TOUCHING
    cube = numpy.array([[x, y, z] for x in (-.1, .1) for y in (-.1, .1) for z in (-.1, .1)])
    triangles = _world(sheet.reshape(-1, 3), pose).reshape(-1, 3, 3)
    for x in (-0.6, -0.35, 0.4):
        tool = robot.link_poses(numpy.array([[x, 0.2]]))[0, robot.kinematics.link_index('tool')]
        expected = min(max(0.0, signed_distance_reference(_world(cube, tool), t).distance)
                       for t in triangles)
        assert robot.distances([x, 0.2]).distance[0] == pytest.approx(expected, abs=EXACT)


def test_a_body_in_the_hole_of_a_frame_is_free_exactly_and_in_contact_as_a_hull():
    frame = _message(frame_triangles(), 'frame')
    exact = RobotDistances(PROBE_URDF, obstacles=[Obstacle.from_collision_object(frame)])
    hull = RobotDistances(PROBE_URDF, obstacles=[Obstacle.from_collision_object(frame)],
                          mesh_mode='hull')
    assert not exact.in_collision([0.0, 0.0]) and hull.in_collision([0.0, 0.0])
    # The cube (half 0.1, turned) in the 0.6 wide hole: clearance to the inner wall.
    assert exact.distances([0.0, 0.0]).distance[0] == pytest.approx(0.2, abs=EXACT)
    assert exact.distances([0.4, 0.0]).distance[0] < 0.0  # inside the bar
    assert [u.mode for u in exact.mesh_uses] == []  # a message mesh: no file to report
    assert len(exact.pieces) > len(hull.pieces)


def test_mesh_mode_precedence_obstacle_then_overrides_then_mesh_mode():
    crate = box_triangles([0.1, 0.1, 0.1], centre=(1.0, 0.0, 0.0))
    frame = frame_triangles()
    obstacles = [Obstacle('crate', frame + [3.0, 0.0, 0.0]), Obstacle('frame_a', frame),
                 Obstacle('frame_b', frame + [0.0, 3.0, 0.0], mesh_mode='exact')]
    robot = RobotDistances(PROBE_URDF, obstacles=obstacles, mesh_mode='hull',
                           mesh_mode_overrides=['crate:exact', 'frame_*:hull'])
    modes = {u.body: u.mode for u in robot.mesh_uses}
    assert modes == {'crate': 'exact', 'frame_a': 'hull', 'frame_b': 'exact'}
    default = RobotDistances(PROBE_URDF, obstacles=[Obstacle('crate', crate)])
    assert [u.mode for u in default.mesh_uses] == ['exact']
    with pytest.raises(ValueError, match='mesh_mode_overrides'):
        RobotDistances(PROBE_URDF, obstacles=obstacles, mesh_mode_overrides=['crate:hulls'])
    with pytest.raises(ValueError, match='mesh_mode'):
        RobotDistances(PROBE_URDF, obstacles=[Obstacle('x', crate, mesh_mode='convex')])
    with pytest.raises(ModelError, match=r'x: a triangle mesh must be \(m, 3, 3\)'):
        RobotDistances(PROBE_URDF, obstacles=[Obstacle('x', numpy.zeros((4, 3)))])


def test_a_mesh_too_complex_to_be_exact_keeps_its_hull_and_says_so():
    with pytest.warns(MeshWarning, match='frame: mesh of 32 triangles needs more than 2'):
        robot = RobotDistances(PROBE_URDF, obstacles=[Obstacle('frame', frame_triangles())],
                               max_mesh_pieces=2)
    assert [(u.mode, u.pieces) for u in robot.mesh_uses] == [('hull', 1)]


# The kitchen ---------------------------------------------------------------------------------

# The Panda's hand inside the cupboard (its doors open), found by inverse kinematics.
INSIDE_CUPBOARD = [-6.87478847e-06, 1.08396985, -1.06141627e-04, 8.73e-02, 1.04180287e-04,
                   2.55572083, 0.785, 0.0]
DOORS_OPEN = {'cupboard_door_l_joint': -1.5, 'cupboard_door_r_joint': 1.5}
KITCHEN_MESHES = {'cupboard': 'cupboard', 'kitchen_counter': 'kitchen_counter',
                  'dishwasher_door': 'dishwasher_door', 'cupboard_door_l': 'cupboard_door_l',
                  'cupboard_door_r': 'cupboard_door_r'}


def _package_root():
    """Return a motion_bench_maker package folder whose configs/scenes are the shared ones."""
    import os
    import tempfile
    folder = mbm_directory()
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, 'configs'))
    os.symlink(folder / 'scenes', os.path.join(root, 'configs', 'scenes'))
    return root


def _kitchen(**options):
    folder = mbm_directory()
    paths = {'robowflex_resources': str(folder / 'robowflex_resources'),
             'motion_bench_maker': _package_root()}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MeshWarning)
        kitchen = load_obstacles(folder / 'scenes' / 'kitchen' / 'kitchen.urdf',
                                 package_paths=paths, joints=DOORS_OPEN)
        base = numpy.eye(4)
        base[:3, 3] = [-0.2, -0.4, 0.7]  # the inverse of kitchen_panda.yaml's base_offset
        panda = folder / 'robowflex_resources' / 'panda'
        robot = RobotDistances((panda / 'urdf' / 'panda.urdf').read_text(),
                               srdf_xml=(panda / 'config' / 'panda.srdf').read_text(),
                               obstacles=kitchen, package_paths=paths, base_pose=base,
                               self_collision=False, **options)
    return robot, kitchen


def test_a_kitchen_start_inside_the_cupboard_is_free_exactly():
    exact, _ = _kitchen()
    hull, _ = _kitchen(mesh_mode='hull')
    assert hull.in_collision(INSIDE_CUPBOARD)
    assert hull.colliding_pair(INSIDE_CUPBOARD)[1] == 'cupboard'
    assert not exact.in_collision(INSIDE_CUPBOARD)
    assert exact.min_distance(INSIDE_CUPBOARD) > 0.0
    hand = exact.distances(INSIDE_CUPBOARD)
    k = hand.index('panda_hand', 'cupboard')
    assert hand.distance[k] > 0.0 > hull.distances(INSIDE_CUPBOARD).distance[k]


def test_kitchen_meshes_report_their_mode_and_hull_reach():
    exact, _ = _kitchen()
    hull, _ = _kitchen(mesh_mode='hull')
    uses = {u.body: u for u in exact.mesh_uses}
    assert uses['cupboard'].mode == 'exact' and uses['cupboard'].watertight is False
    assert uses['cupboard_door_l'].watertight is True
    assert uses['panda_link4'].mode == 'hull'  # links keep their hulls by default
    reach = {u.body: u.hull_deviation for u in hull.mesh_uses}
    assert reach['cupboard'] == pytest.approx(0.149, abs=0.005)
    assert reach['kitchen_counter'] == pytest.approx(0.198, abs=0.005)


def test_the_non_watertight_cupboard_is_said_once_by_name():
    root = _package_root()
    uri = 'package://motion_bench_maker/configs/scenes/kitchen/meshes/cupboard.stl'
    cupboard = Obstacle('cupboard', [{'type': 'mesh', 'uri': uri}, {'type': 'mesh', 'uri': uri}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        RobotDistances(PROBE_URDF, obstacles=[cupboard],
                       package_paths={'motion_bench_maker': root})
    said = [str(w.message) for w in caught if issubclass(w.category, MeshWarning)]
    assert len(said) == 1 and said[0].startswith('cupboard: ') and 'not watertight' in said[0]


def _link_world_points(robot, q):
    """World vertices of every link piece at q, by link."""
    poses = robot.body_poses(numpy.array([q]))[0]
    points = {}
    for i, (piece, owner) in enumerate(zip(robot.pieces, robot.piece_owners)):
        if owner in robot.links:
            points.setdefault(owner, []).append(_world(piece.shape.vertices, poses[i]))
    return points


@pytest.mark.parametrize('seed', [0, 1])
def test_kitchen_distances_match_the_triangles_and_winding_numbers(seed):
    robot, kitchen = _kitchen()
    rng = numpy.random.default_rng(seed)
    k = robot.kinematics
    configurations = [numpy.array(INSIDE_CUPBOARD)] + list(
        rng.uniform(numpy.maximum(k.lower, -2.5), numpy.minimum(k.upper, 2.5), (2, k.dof)))
    meshes = {}
    for obstacle in kitchen:
        triangles = kitchen_mesh(KITCHEN_MESHES[obstacle.name])
        world = _world(triangles.reshape(-1, 3), obstacle.pose).reshape(-1, 3, 3)
        closed = [p for p in vertex_parts(world) if _is_closed(p)]
        meshes[obstacle.name] = (world, closed)
    checked = 0
    for q in configurations:
        results = robot.distances(q)
        links = _link_world_points(robot, q)
        for link, pieces in links.items():
            if len(pieces) != 1:
                continue
            points = pieces[0]
            for name, (triangles, closed) in meshes.items():
                k_pair = results.index(link, name)
                near = numpy.linalg.norm(triangles.mean(axis=1) - points.mean(axis=0),
                                         axis=1) < 1.0
                if not near.any():
                    continue
                surface = min(max(0.0, signed_distance_reference(points, t).distance)
                              for t in triangles[near])
                inside = any((numpy.abs(reference_winding(points, part)) > 0.5).any()
                             for part in closed)
                distance = results.distance[k_pair]
                if surface > 1e-6 and not inside:
                    # Far triangles cannot be nearer than the culling radius allows.
                    if surface < 0.5:
                        assert distance == pytest.approx(surface, abs=EXACT * 2.0)
                        checked += 1
                elif inside:
                    assert distance < 0.0
                    checked += 1
                else:
                    assert distance <= 1e-6
                    checked += 1
    assert checked >= 10


def _is_closed(triangles):
    """Every directed edge once and its reverse once (numpy, for the reference)."""
    _, ids = numpy.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    edges = {(int(a), int(b)) for face in ids for a, b in zip(face, numpy.roll(face, -1))}
    directed = [(int(a), int(b)) for face in ids for a, b in zip(face, numpy.roll(face, -1))]
    return len(directed) == len(edges) and all((b, a) in edges for a, b in directed)


def test_checks_follow_set_obstacle_poses():
    """The checks place obstacle pieces once per obstacle pose: moving them must be seen."""
    def obstacles(poses):
        return [Obstacle('frame', frame_triangles(), poses[0]),
                Obstacle('crate', box_triangles([0.1, 0.1, 0.1], centre=(1.0, 0.0, 0.0)),
                         poses[1])]

    robot = RobotDistances(PROBE_URDF, obstacles=obstacles(numpy.tile(numpy.eye(4), (2, 1, 1))))
    rng = numpy.random.default_rng(4)
    qs = numpy.column_stack([rng.uniform(-1.5, 1.5, 300), rng.uniform(-3, 3, 300)])
    for shift in ((0.45, 0.0), (-0.4, 0.1), (0.0, 0.0)):
        poses = numpy.tile(numpy.eye(4), (2, 1, 1))
        poses[0, :2, 3] = shift
        poses[1, :2, 3] = shift[::-1]
        robot.set_obstacle_poses(poses)
        moved = RobotDistances(PROBE_URDF, obstacles=obstacles(poses))
        expected = [float(numpy.nanmin(robot.distances(q).distance)) <= 0.01 for q in qs]
        assert 20 < sum(expected) < len(qs) - 20  # both verdicts occur
        assert robot.in_collision_batch(qs, 0.01).tolist() == expected
        assert [robot.in_collision(q, 0.01) for q in qs] == expected
        assert moved.in_collision_batch(qs, 0.01).tolist() == expected
        free = [robot.edge_free(a, b, 0.01).free for a, b in zip(qs[:40], qs[1:41])]
        assert free == [moved.edge_free(a, b, 0.01).free for a, b in zip(qs[:40], qs[1:41])]
