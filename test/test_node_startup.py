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
Start-up and graph behaviour: late joiners, namespaced instances, clean exit.

Each test starts its own node processes on the test's own ROS domain (``ros_env``).
"""

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, LATCHED_QOS, marker, matrix, NodeProcess,
                          Scene, STARTUP_TIMEOUT, TFMessage, wait_until)
import pytest

pytestmark = pytest.mark.ros

URDF = box_urdf('startbot', {'arm': [('box', (0.2, 0.2, 0.2), (0.0, 0.0, 0.0))],
                             'hand': [('sphere', (0.05,), (0.0, 0.0, 0.0))]})
ARM_XYZ, HAND_XYZ, CUBE_XYZ = (0.1, 0.0, 0.0), (0.0, 0.4, 0.0), (0.5, 0.3, 0.0)


def truth(link):
    if link == 'arm':
        shape, pose = ConvexPolytope.box([0.1] * 3), matrix(ARM_XYZ)
    else:
        shape, pose = ConvexPolytope.sphere(0.05), matrix(HAND_XYZ)
    return signed_distance(shape, pose, ConvexPolytope.box([0.05] * 3), matrix(CUBE_XYZ))


def measured(link, obstacle):
    def check(records):
        record = find_record(records, link, obstacle)
        return record is not None and record.status == PairStatus.VALID and \
            abs(record.distance - truth(link).distance) < 1e-9
    return check


def publish_robot(scene):
    scene.send_static_tf('world', 'arm', ARM_XYZ)
    scene.send_static_tf('world', 'hand', HAND_XYZ)
    scene.send_urdf(URDF)


def test_late_joiners(ros_env, tmp_path):
    """The node gets latched input sent before it started; late subscribers get ~/names."""
    domain = int(ros_env['ROS_DOMAIN_ID'])
    with Scene(domain) as scene:
        publish_robot(scene)  # before the node exists: only latching can deliver these
        with NodeProcess(ros_env, tmp_path) as node:
            scene.wait_for_subscribers('obstacles', node_process=node)
            scene.send_markers([marker('late', 0, xyz=CUBE_XYZ)])
            scene.wait_for_records(measured('arm', 'late/0'), STARTUP_TIMEOUT,
                                   'arm-late/0 from latched TF and URDF', node_process=node)
            names = scene.names()
            with Scene(domain) as late:
                late.subscribe('tf_static', TFMessage, '/tf_static', LATCHED_QOS)
                wait_until(lambda: late.names() is not None, what='~/names for a late joiner')
                assert late.names() == names
                assert late.name_list('links') == ['arm', 'hand']
                assert late.name_list('obstacles') == ['late/0']
                wait_until(lambda: late.message('tf_static'), what='/tf_static, latched')
                frames = {t.child_frame_id for t in late.message('tf_static').transforms}
                assert frames == {'arm', 'hand'}
            assert node.alive()
        # SIGINT: a clean exit, as under ros2 launch.
        assert node.process.returncode == 0, node.output()


def test_namespaced_instances_split_the_links(ros_env, tmp_path):
    """Two instances on one graph, each given some links (scale-out)."""
    domain = int(ros_env['ROS_DOMAIN_ID'])
    remaps = ['robot_description:=/robot_description']
    left = NodeProcess(ros_env, tmp_path / 'left', {'link_include': ['arm']}, namespace='/left',
                       remaps=remaps)
    right = NodeProcess(ros_env, tmp_path / 'right', {'link_include': ['hand']},
                        namespace='/right', remaps=remaps)
    with left, right, Scene(domain, '/left') as left_scene, \
            Scene(domain, '/right') as right_scene:
        publish_robot(left_scene)
        for scene, node in ((left_scene, left), (right_scene, right)):
            scene.wait_for_subscribers('obstacles', node_process=node)
            scene.send_markers([marker('shared', 0, xyz=CUBE_XYZ)])
        left_records = left_scene.wait_for_records(measured('arm', 'shared/0'),
                                                   STARTUP_TIMEOUT, node_process=left)
        right_records = right_scene.wait_for_records(measured('hand', 'shared/0'),
                                                     STARTUP_TIMEOUT, node_process=right)
        assert {r.link for r in left_records} == {'arm'}
        assert {r.link for r in right_records} == {'hand'}
        assert left_scene.name_list('links') == ['arm']
        assert right_scene.name_list('links') == ['hand']
