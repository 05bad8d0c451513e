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
Forward kinematics against an independent reference, and Pinocchio when it is installed.

The reference below reads the URDF with its own ElementTree walk and composes each link's pose
per configuration, recursively from the root, with scipy's Rotation (URDF rpy = extrinsic
x-y-z Euler angles; a revolute joint = a rotation vector axis * angle). It shares no code with
gjk_ros.models.kinematics.
"""

import os
import sysconfig
import xml.etree.ElementTree as ElementTree

from gjk_ros.models import ModelError
from gjk_ros.models.kinematics import parse_kinematics
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

# Every joint type, mimic (also of a mimic), non-trivial origins and axes, a branching tree.
ALL_JOINTS_URDF = """<robot name="all">
  <link name="world"/> <link name="base"/> <link name="slide"/> <link name="arm"/>
  <link name="wheel"/> <link name="finger_a"/> <link name="finger_b"/> <link name="finger_c"/>
  <link name="tool"/> <link name="cart"/> <link name="tip"/>
  <joint name="free" type="floating"><parent link="world"/><child link="base"/>
    <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.2 0.1"/></joint>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="slide"/>
    <origin xyz="0 0.5 0" rpy="0 0 0.7"/><axis xyz="1 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="shoulder" type="revolute"><parent link="slide"/><child link="arm"/>
    <origin xyz="0.2 0 0.1" rpy="1.0 0.5 -0.3"/><axis xyz="0.2 -0.4 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="wheel"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/></joint>
  <joint name="grip" type="prismatic"><parent link="arm"/><child link="finger_a"/>
    <origin xyz="0.05 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="1" velocity="1"/></joint>
  <joint name="grip_mirror" type="prismatic"><parent link="arm"/><child link="finger_b"/>
    <origin xyz="0.05 0 0.3" rpy="0 0 3.14159"/><axis xyz="0 1 0"/>
    <mimic joint="grip" multiplier="-2" offset="0.01"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="grip_chain" type="revolute"><parent link="finger_b"/><child link="finger_c"/>
    <origin xyz="0 0.1 0"/><axis xyz="1 0 0"/><mimic joint="grip_mirror" multiplier="3"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="mount" type="fixed"><parent link="wheel"/><child link="tool"/>
    <origin xyz="0.01 0.02 0.03" rpy="0.4 0.5 0.6"/></joint>
  <joint name="base_plane" type="planar"><parent link="base"/><child link="cart"/>
    <origin xyz="0 0 -0.1" rpy="0 0.2 0"/><axis xyz="0 0 1"/></joint>
  <joint name="cart_tip" type="revolute"><parent link="cart"/><child link="tip"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 -1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>"""


def _matrix(rotation=None, translation=(0.0, 0.0, 0.0)):
    out = np.eye(4)
    if rotation is not None:
        out[:3, :3] = rotation.as_matrix()
    out[:3, 3] = translation
    return out


def _numbers(text, default):
    return np.array([float(v) for v in (text or default).split()])


def reference_fk(urdf, values):
    """Link poses {name: (4, 4)} from joint values {joint: value or tuple}."""
    root = ElementTree.fromstring(urdf)
    joints = {}
    for joint in root.findall('joint'):
        origin = joint.find('origin')
        xyz = _numbers(origin.get('xyz') if origin is not None else None, '0 0 0')
        rpy = _numbers(origin.get('rpy') if origin is not None else None, '0 0 0')
        axis_element = joint.find('axis')
        axis = _numbers(axis_element.get('xyz') if axis_element is not None else None, '1 0 0')
        mimic = joint.find('mimic')
        joints[joint.find('child').get('link')] = {
            'name': joint.get('name'), 'type': joint.get('type'),
            'parent': joint.find('parent').get('link'),
            'origin': _matrix(Rotation.from_euler('xyz', rpy), xyz),
            'axis': axis / np.linalg.norm(axis),
            'mimic': None if mimic is None else (
                mimic.get('joint'), float(mimic.get('multiplier', 1)),
                float(mimic.get('offset', 0)))}
    by_name = {j['name']: j for j in joints.values()}

    def value(joint):
        if joint['mimic'] is None:
            return values[joint['name']]
        master, multiplier, offset = joint['mimic']
        return multiplier * value(by_name[master]) + offset

    def pose(link):
        if link not in joints:
            return np.eye(4)
        joint = joints[link]
        kind = joint['type']
        if kind == 'fixed':
            motion = np.eye(4)
        elif kind in ('revolute', 'continuous'):
            motion = _matrix(Rotation.from_rotvec(joint['axis'] * value(joint)))
        elif kind == 'prismatic':
            motion = _matrix(None, joint['axis'] * value(joint))
        elif kind == 'planar':
            x, y, theta = values[joint['name']]
            motion = _matrix(Rotation.from_euler('z', theta), (x, y, 0.0))
        else:
            v = np.asarray(values[joint['name']])
            motion = _matrix(Rotation.from_quat(v[3:] / np.linalg.norm(v[3:])), v[:3])
        return pose(joint['parent']) @ joint['origin'] @ motion

    return {link.get('name'): pose(link.get('name')) for link in root.findall('link')}


def _random_configurations(model, count, seed):
    rng = np.random.default_rng(seed)
    lower = np.where(np.isfinite(model.lower), model.lower, -4.0)
    upper = np.where(np.isfinite(model.upper), model.upper, 4.0)
    return rng.uniform(lower, upper, (count, model.dof))


def _joint_values(model, q):
    """Return the reference's joint values for a configuration vector."""
    values, names = {}, list(model.variable_names)
    for joint in model.joints:
        if joint.mimic is not None or joint.type == 'fixed':
            continue
        if joint.type in ('planar', 'floating'):
            values[joint.name] = tuple(q[i] for i, n in enumerate(names)
                                       if n.startswith(joint.name + '/'))
        else:
            values[joint.name] = q[names.index(joint.name)]
    return values


def test_variables_follow_moveit_layout():
    model = parse_kinematics(ALL_JOINTS_URDF)
    assert model.variable_names == (
        'free/trans_x', 'free/trans_y', 'free/trans_z', 'free/rot_x', 'free/rot_y',
        'free/rot_z', 'free/rot_w', 'rail', 'base_plane/x', 'base_plane/y', 'base_plane/theta',
        'shoulder', 'cart_tip', 'spin', 'grip')
    assert model.links[0] == 'world'
    assert model.parent('finger_c') == 'finger_b'
    assert frozenset(('arm', 'wheel')) in model.adjacent_pairs()
    assert model.neutral()[6] == 1.0


def test_forward_matches_independent_reference():
    model = parse_kinematics(ALL_JOINTS_URDF)
    qs = _random_configurations(model, 40, seed=1)
    poses = model.forward(qs)
    worst = 0.0
    for n, q in enumerate(qs):
        expected = reference_fk(ALL_JOINTS_URDF, _joint_values(model, q))
        for i, link in enumerate(model.links):
            worst = max(worst, float(np.abs(poses[n, i] - expected[link]).max()))
    assert worst < 1e-12


def test_forward_single_equals_batch_and_base_pose_applies():
    model = parse_kinematics(ALL_JOINTS_URDF)
    qs = _random_configurations(model, 5, seed=2)
    base = _matrix(Rotation.from_euler('xyz', [0.1, 0.2, 0.3]), (1.0, 2.0, 3.0))
    batch = model.forward(qs, base)
    for n, q in enumerate(qs):
        np.testing.assert_allclose(model.forward(q, base), batch[n], rtol=0, atol=1e-15)
    np.testing.assert_allclose(batch, base @ model.forward(qs), rtol=0, atol=1e-14)


def test_mimic_values():
    model = parse_kinematics(ALL_JOINTS_URDF)
    q = model.configuration({'grip': 0.02})
    values = model.joint_values(q)[0]
    index = {joint.name: i for i, joint in enumerate(model.joints)}
    assert values[index['grip_mirror']] == pytest.approx(-2 * 0.02 + 0.01)
    assert values[index['grip_chain']] == pytest.approx(3 * (-2 * 0.02 + 0.01))


@pytest.mark.parametrize('change, message', [
    (('type="continuous"', 'type="ball"'), 'unsupported joint type'),
    (('<child link="tool"/>', '<child link="nowhere"/>'), 'unknown link'),
    (('<axis xyz="0 1 0"/></joint>', '<axis xyz="0 0 0"/></joint>'), 'zero length'),
    (('<mimic joint="grip" ', '<mimic joint="mount" '), 'mimics'),
    (('<child link="cart"/>', '<child link="tool"/>'), 'more than one parent'),
    (('<parent link="world"/><child link="base"/>', '<parent link="tip"/><child link="base"/>'),
     'cycle'),
])
def test_rejects_bad_trees(change, message):
    with pytest.raises(ModelError, match=message):
        parse_kinematics(ALL_JOINTS_URDF.replace(*change, 1))


@pytest.mark.parametrize('joint', ['mount', 'free'])
def test_fixed_and_floating_joints_ignore_their_axis(joint):
    """As urdfdom does: an axis, even a zero one, means nothing on these joints."""
    start = ALL_JOINTS_URDF.index(f'<joint name="{joint}"')
    end = ALL_JOINTS_URDF.index('</joint>', start)
    urdf = ALL_JOINTS_URDF[:end] + '<axis xyz="0 0 0"/>' + ALL_JOINTS_URDF[end:]
    model, reference = parse_kinematics(urdf), parse_kinematics(ALL_JOINTS_URDF)
    q = _random_configurations(reference, 1, seed=5)[0]
    np.testing.assert_array_equal(model.forward(q), reference.forward(q))


def test_rejects_bad_configurations():
    model = parse_kinematics(ALL_JOINTS_URDF)
    with pytest.raises(ValueError, match='expected'):
        model.forward(np.zeros(model.dof + 1))
    with pytest.raises(ValueError, match='finite'):
        model.forward(np.full(model.dof, np.nan))
    with pytest.raises(ValueError, match='quaternion'):
        model.forward(np.zeros(model.dof))


# Pinocchio (test extra `pin`): the same poses on the synthetic tree and on example robots.

def _pinocchio_q(model, pin_model, q):
    values = model.joint_values(q)[0]
    column = {joint.name: i for i, joint in enumerate(model.joints)}
    names = list(model.variable_names)
    out = np.zeros(pin_model.nq)
    for j in range(1, pin_model.njoints):
        name, start, size = pin_model.names[j], pin_model.idx_qs[j], pin_model.nqs[j]
        if size == 1:
            out[start] = values[column[name]]
        elif size == 2:
            out[start:start + 2] = np.cos(values[column[name]]), np.sin(values[column[name]])
        elif size == 4:
            x, y, theta = (q[names.index(f'{name}/{s}')] for s in ('x', 'y', 'theta'))
            out[start:start + 4] = x, y, np.cos(theta), np.sin(theta)
        else:
            v = np.array([q[names.index(f'{name}/{s}')] for s in (
                'trans_x', 'trans_y', 'trans_z', 'rot_x', 'rot_y', 'rot_z', 'rot_w')])
            v[3:] /= np.linalg.norm(v[3:])
            out[start:start + 7] = v
    return out


def _example_robots():
    share = os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share',
                         'example-robot-data', 'robots')
    # Kinova's URDF has a fixed joint with <axis xyz="0 0 0"/>, which urdfdom ignores.
    files = ('ur_description/urdf/ur5_robot.urdf', 'panda_description/urdf/panda.urdf',
             'kinova_description/robots/kinova.urdf')
    return [os.path.join(share, f) for f in files if os.path.exists(os.path.join(share, f))]


@pytest.mark.parametrize('source', ['synthetic'] + _example_robots())
def test_forward_matches_pinocchio(source):
    pinocchio = pytest.importorskip('pinocchio')
    urdf = ALL_JOINTS_URDF if source == 'synthetic' else open(source).read()
    if source == 'synthetic':
        # Pinocchio's URDF reader makes the root's floating joint its free flyer only through
        # a root joint argument; keep the synthetic tree's floating joint inside the tree.
        urdf = urdf.replace('<link name="world"/>', '<link name="world"/><link name="ground"/>'
                            '<joint name="g" type="fixed"><parent link="ground"/>'
                            '<child link="world"/></joint>')
    model = parse_kinematics(urdf)
    pin_model = pinocchio.buildModelFromXML(urdf)
    data = pin_model.createData()
    worst = 0.0
    for q in _random_configurations(model, 20, seed=3):
        if model.dof >= 7 and source == 'synthetic':
            q[3:7] /= np.linalg.norm(q[3:7])
        pinocchio.framesForwardKinematics(pin_model, data, _pinocchio_q(model, pin_model, q))
        poses = model.forward(q)
        for i, link in enumerate(model.links):
            frame = pin_model.getFrameId(link)
            worst = max(worst, float(np.abs(data.oMf[frame].homogeneous - poses[i]).max()))
    assert worst < 1e-12
