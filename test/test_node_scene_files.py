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
MotionBenchMaker's scene files into the real node, through the real scene_publisher process.

The Panda of ../shared/mbm is the robot (its URDF on ``robot_description``, its link frames on
TF at the problem's start state, its root where MotionBenchMaker puts it: the inverse of the
problem's ``base_offset`` in ``base_link``). The packages its files name (``robowflex_resources``,
``motion_bench_maker``) are found as a ROS user has them: in an ament prefix on
``AMENT_PREFIX_PATH``, here a temporary one whose shares point into ../shared/mbm. Each scene
file is published by a ``scene_publisher`` process started after the node (a late joiner's
volatile subscription must get it); the node must hold every object by name with measured
records, and its distances match the planner API's on the same configuration.
"""

import os
import signal
import subprocess
import sys
import warnings

from gjk_ros.ros import PairStatus
from mbm import kitchen_mesh, mbm_directory
from node_harness import (find_record, node_environment, NodeProcess, Parameter, Scene,
                          session_domain_id, STARTUP_TIMEOUT, TIMEOUT, wait_until)
import numpy
import pytest
from scipy.spatial.transform import Rotation
import yaml

pytestmark = pytest.mark.ros

moveit_msgs = pytest.importorskip('moveit_msgs.msg')

START = {'rate_hz': 20.0, 'tf_timeout': 5.0, 'max_distance': 10.0, 'padding': 0.0,
         'fixed_frame': 'base_link', 'planning_scene': True, 'self_collision': False,
         'allow_no_obstacles': True}
MEASURED = (PairStatus.VALID, PairStatus.BEYOND)
# Each world file's problem file (its base_offset places the robot).
PROBLEMS = {'scene_box': 'box_panda', 'scene_cage': 'cage_panda',
            'scene_small': 'bookshelf_small_panda', 'scene_tall': 'bookshelf_tall_panda',
            'scene_thin': 'bookshelf_thin_panda', 'scene_table': 'table_pick_panda',
            'kitchen': 'kitchen_panda'}
# Where the planner API and the node must agree (the same core, poses through TF).
TOLERANCE = 1e-6
# An open cupboard mesh placed so that the Panda's hand is in it (found with the planner API):
# 0.058 m from its walls, inside its hull.
CUPBOARD_POSITION = [-0.634, -0.1, -0.539]


def ament_prefix(root, folder):
    """Make an ament prefix of the two packages the files name, shares in ../shared/mbm."""
    index = root / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for package in ('robowflex_resources', 'motion_bench_maker'):
        (index / package).write_text('')
    os.symlink(folder / 'robowflex_resources', root / 'share' / 'robowflex_resources')
    (root / 'share' / 'motion_bench_maker' / 'configs').mkdir(parents=True)
    os.symlink(folder / 'scenes', root / 'share' / 'motion_bench_maker' / 'configs' / 'scenes')
    return root


class World:
    """The node, the test's scene node, the Panda's kinematics and where its root sits."""

    def __init__(self, folder, env, node, scene, work):
        from gjk_ros.planning import RobotDistances
        self.folder, self.env, self.node, self.scene, self.work = folder, env, node, scene, work
        self.urdf = (folder / 'robowflex_resources' / 'panda' / 'urdf' / 'panda.urdf'
                     ).read_text()
        self.package_paths = {'robowflex_resources': str(folder / 'robowflex_resources')}
        self.robot = RobotDistances(self.urdf, package_paths=self.package_paths,
                                    self_collision=False)
        state = yaml.safe_load((folder / 'problems' / 'robot_panda.yaml').read_text())
        joints = state['robot_state']['joint_state']
        variables = self.robot.kinematics.variable_names
        self.q = self.robot.kinematics.configuration(
            {name: value for name, value in zip(joints['name'], joints['position'])
             if name in variables})
        self.reset = scene.node.create_publisher(moveit_msgs.PlanningScene, '/planning_scene',
                                                 10)
        self.base = numpy.eye(4)

    def place(self, problem):
        """Put the robot's links on TF where ``problem``'s base_offset puts its root."""
        offset = yaml.safe_load((self.folder / 'problems' / f'{problem}.yaml').read_text())
        pose = numpy.eye(4)
        pose[:3, :3] = Rotation.from_quat(offset['base_offset']['orientation']).as_matrix()
        pose[:3, 3] = offset['base_offset']['position']
        self.base = numpy.linalg.inv(pose)
        links = self.robot.kinematics.forward(self.q[None], self.base)[0]
        for name, link in zip(self.robot.kinematics.links, links):
            self.scene.send_tf('base_link', name, link[:3, 3],
                               Rotation.from_matrix(link[:3, :3]).as_quat())

    def clear(self):
        """Send a full, empty scene: the node holds no object (MoveIt's full-scene rule)."""
        self.reset.publish(moveit_msgs.PlanningScene(is_diff=False))
        wait_until(lambda: self.scene.name_list('obstacles') == [], TIMEOUT,
                   'the scene cleared', node_process=self.node)


class Publisher:
    """The ``scene_publisher`` node as a process of its own (as ``ros2 run`` starts it)."""

    def __init__(self, world, paths, name):
        self.log_path = world.work / f'{name}.log'
        files = '[%s]' % ', '.join('"%s"' % path for path in paths)
        command = [sys.executable, '-m', 'gjk_ros.ros.scene_publisher', '--ros-args',
                   '-p', f'scene_files:={files}', '-p', 'frame_id:=base_link']
        with open(self.log_path, 'wb') as log:
            self.process = subprocess.Popen(
                command, env=node_environment(world.env, world.work / f'{name}_ros_log'),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def output(self):
        return self.log_path.read_text(errors='replace')

    def wait_published(self):
        wait_until(lambda: 'objects and' in self.output() or self.process.poll() is not None,
                   STARTUP_TIMEOUT, 'the scene publisher to publish')
        assert self.process.poll() is None, self.output()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(TIMEOUT)


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    folder = mbm_directory()
    work = tmp_path_factory.mktemp('scene_files')
    prefix = ament_prefix(work / 'prefix', folder)
    env = dict(os.environ, AMENT_PREFIX_PATH=os.pathsep.join(
        [str(prefix)] + [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)
                         if p]))
    with NodeProcess(env, work / 'node', START) as node, \
            Scene(session_domain_id()) as scene:
        found = World(folder, env, node, scene, work)
        found.place('box_panda')
        scene.send_urdf(found.urdf)
        wait_until(lambda: set(scene.name_list('links')) >= set(found.robot.links),
                   STARTUP_TIMEOUT, "the Panda's links on ~/names", node_process=node)
        yield found


def measured(world, ids):
    """Wait until every (link, object) pair of ``ids`` has a measured record; return them."""
    links = world.robot.links

    def every_pair(records):
        found = [find_record(records, link, name) for link in links for name in ids]
        return all(record is not None and record.status in MEASURED for record in found)
    return world.scene.wait_for_records(every_pair, STARTUP_TIMEOUT,
                                        'every pair of %s measured' % ', '.join(ids),
                                        node_process=world.node)


# Every world file of MotionBenchMaker's scenes (the query files are not worlds).
WORLD_FILES = ['bookshelf/scene_small.yaml', 'bookshelf/scene_tall.yaml',
               'bookshelf/scene_thin.yaml', 'box/scene_box.yaml', 'cage/scene_cage.yaml',
               'kitchen/kitchen.urdf', 'kitchen/kitchen.yaml', 'table/scene_table.yaml']


def test_the_world_files_are_every_scene_of_motionbenchmaker():
    folder = mbm_directory() / 'scenes'
    found = sorted(str(path.relative_to(folder)) for path in folder.glob('*/*')
                   if path.suffix == '.urdf' or path.name.startswith(('scene_', 'kitchen.')))
    assert found == WORLD_FILES


@pytest.mark.parametrize('name', WORLD_FILES)
def test_a_scene_file_loads_unchanged_into_the_node(world, name):
    from gjk_ros.models.scene_files import read_scene_file
    path = world.folder / 'scenes' / name
    world.place(PROBLEMS[path.stem])
    ids = [found['id'] for found in read_scene_file(path).objects]
    if path.name == 'kitchen.yaml':
        # Its two meshes name .obj files its repository never held: said, by name.
        ids = ['Can1', 'Can2']
    said_before = {body: len(world.node.lines_with('%s: mesh of' % body, 'is not watertight'))
                   for body in ids}
    with Publisher(world, [path], path.name) as publisher:
        publisher.wait_published()
        wait_until(lambda: sorted(world.scene.name_list('obstacles')) == sorted(ids),
                   TIMEOUT, 'the objects of %s on ~/names' % path.name,
                   node_process=world.node)
        records = measured(world, ids)
        errors = [line for line in publisher.output().splitlines() if 'ERROR' in line]
    assert not any(record.status in (PairStatus.INVALID, PairStatus.PENDING)
                   for record in records)
    if path.name == 'kitchen.yaml':
        assert len(errors) == 2
        for error, body in zip(errors, ('diswasher', 'cupboard')):
            assert '%s: %s: meshes[0]: resource: ' % (path, body) in error
            assert 'objs/' in error  # the URI's file, never its contents
    else:
        assert errors == []
    if path.suffix == '.urdf':
        # The kitchen's meshes (exact, the obstacles' default): each open one said once, by
        # name (each link's mesh file is named after it).
        open_meshes = {body for body in ids if has_boundary_edges(kitchen_mesh(body))}
        assert open_meshes == {'cupboard', 'kitchen_counter'}
        for body in ids:
            said = world.node.lines_with('%s: mesh of' % body, 'is not watertight')
            assert len(said) == said_before[body] + (body in open_meshes), (body, said)
    world.clear()


def has_boundary_edges(triangles):
    """Whether a triangle mesh is open: an edge (vertices merged exactly) on one triangle only."""
    _, inverse = numpy.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    faces = inverse.reshape(-1, 3)
    edges = numpy.sort(numpy.concatenate([faces[:, [0, 1]], faces[:, [1, 2]],
                                          faces[:, [2, 0]]]), axis=1)
    _, counts = numpy.unique(edges, axis=0, return_counts=True)
    return bool((counts == 1).any())


def test_the_node_and_the_planner_api_agree_on_a_scene(world):
    from gjk_ros.planning import load_obstacles, RobotDistances
    path = world.folder / 'scenes' / 'box' / 'scene_box.yaml'
    world.place('box_panda')
    obstacles = load_obstacles(path)
    planner = RobotDistances(world.urdf, package_paths=world.package_paths,
                             obstacles=obstacles, base_pose=world.base, self_collision=False)
    expected = planner.distances(world.q)
    with Publisher(world, [path], 'agree'):
        records = measured(world, [o.name for o in obstacles])

        def agree(records):
            for (link, obstacle), distance in zip(expected.pairs, expected.distance):
                record = find_record(records, link, obstacle)
                if record is None or record.status != PairStatus.VALID or \
                        abs(record.distance - distance) > TOLERANCE:
                    return False
            return True
        records = world.scene.wait_for_records(agree, TIMEOUT, 'the planner API distances',
                                               node_process=world.node)
    assert len(records) >= len(expected.pairs) == len(planner.links) * len(obstacles)
    world.clear()


def cupboard_scene(world):
    """Write a scene file naming the kitchen's open cupboard mesh by package URI."""
    path = world.work / 'cupboard.yaml'
    path.write_text(yaml.safe_dump({'world': {'collision_objects': [{
        'id': 'cupboard', 'header': {'frame_id': 'base_link'},
        'meshes': [{'resource': 'package://motion_bench_maker/configs/scenes/kitchen/meshes/'
                                'cupboard.stl'}],
        'mesh_poses': [{'position': CUPBOARD_POSITION, 'orientation': [0, 0, 0, 1]}]}]}}))
    return path


def hand_distance(world, path, mode):
    from gjk_ros.planning import load_obstacles, MeshWarning, RobotDistances
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MeshWarning)  # the node's saying it is the test
        resolver = _resolver(world)
        planner = RobotDistances(world.urdf, resolver=resolver,
                                 obstacles=load_obstacles(path, resolver=resolver),
                                 base_pose=world.base, self_collision=False,
                                 links=['panda_hand'], mesh_mode_overrides=['cupboard:' + mode])
    return float(planner.distances(world.q).distance[0])


def _resolver(world):
    from gjk_ros.models import ResourceResolver
    root = world.work / 'planner_packages'
    if not root.exists():
        (root / 'configs').mkdir(parents=True)
        os.symlink(world.folder / 'scenes', root / 'configs' / 'scenes')
    return ResourceResolver(dict(world.package_paths, motion_bench_maker=str(root)))


def wait_hand(world, expected, what):
    def matches(records):
        record = find_record(records, 'panda_hand', 'cupboard')
        return record is not None and record.status == PairStatus.VALID and \
            abs(record.distance - expected) <= TOLERANCE
    world.scene.wait_for_records(matches, STARTUP_TIMEOUT, what, node_process=world.node)


def meshes_entry(world):
    statuses = world.scene.diagnostic_statuses()
    found = [status for name, status in statuses.items() if name.endswith('meshes')]
    return {value.key: value.value for value in found[0].values} if found else {}


def test_an_open_mesh_is_said_once_by_name_and_its_mode_change_applies_to_the_held_object(
        world):
    path = cupboard_scene(world)
    world.place('kitchen_panda')
    exact, hull = hand_distance(world, path, 'exact'), hand_distance(world, path, 'hull')
    assert exact > 0.02 and hull < -0.1  # the hand is in the cupboard, inside its hull
    before = len(world.node.lines_with('cupboard: mesh of', 'is not watertight'))
    with Publisher(world, [path], 'cupboard'):
        wait_hand(world, exact, 'the exact cupboard distance %r' % exact)
    # The publisher is gone: from now on the node has only what it holds.
    wait_until(lambda: 'not watertight' in meshes_entry(world).get('cupboard', ''), TIMEOUT,
               'the meshes entry saying the cupboard is not watertight',
               node_process=world.node)
    world.scene.wait_for_more('distances', 10)
    said = world.node.lines_with('cupboard: mesh of', 'is not watertight')
    assert len(said) == before + 1, said
    (answer,) = world.scene.set_node_parameters(
        [Parameter('mesh_mode_overrides', Parameter.Type.STRING_ARRAY, ['cupboard:hull'])])
    assert answer.successful, answer.reason
    wait_hand(world, hull, 'the hull distance %r, without the scene sent again' % hull)
    wait_until(lambda: meshes_entry(world).get('cupboard', '').startswith('mesh of')
               and 'exact' not in meshes_entry(world)['cupboard'], TIMEOUT,
               'the meshes entry saying hull', node_process=world.node)
    (answer,) = world.scene.set_node_parameters(
        [Parameter('mesh_mode_overrides', Parameter.Type.STRING_ARRAY, [])])
    assert answer.successful, answer.reason
    wait_hand(world, exact, 'the exact distance again')
    world.clear()


def test_a_node_started_after_the_publisher_gets_the_scene_when_asked(world, tmp_path):
    """
    The publisher sends the files once; a node that joins later asks for them (``~/publish``).

    A later subscriber makes it send nothing on its own (test_scene_publisher_process.py):
    that would add back objects other nodes removed.
    """
    from std_srvs.srv import Trigger
    path = world.folder / 'scenes' / 'cage' / 'scene_cage.yaml'
    world.place('cage_panda')
    with Publisher(world, [path], 'before') as publisher:
        publisher.wait_published()
        env = dict(world.env, ROS_DOMAIN_ID=str(session_domain_id()))
        parameters = dict(START, robot_description_timeout=3600.0,
                          require_robot_description=False)
        with NodeProcess(env, tmp_path / 'late', parameters, namespace='/late') as late:
            with Scene(session_domain_id(), node_namespace='/late') as scene:
                from gjk_ros.models.scene_files import read_scene_file
                ids = sorted(o['id'] for o in read_scene_file(path).objects)
                client = scene.node.create_client(Trigger, '/scene_publisher/publish')
                asked = []

                def holds_the_cage():
                    # Asked again until the late node's subscription has matched and heard it.
                    if sorted(scene.name_list('obstacles') or []) == ids:
                        return True
                    if client.service_is_ready() and (not asked or asked[-1].done()):
                        asked.append(client.call_async(Trigger.Request()))
                    return False
                wait_until(holds_the_cage, STARTUP_TIMEOUT, 'the late node holding the cage',
                           node_process=late)
                assert asked[-1].result() is None or asked[-1].result().success
    world.clear()
