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

"""Self-collision in the node: link-link pairs on ~/self_distances, SRDF-filtered."""

import math

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus, read_distances
from node_harness import (find_record, LATCHED_QOS, Marker, marker, matrix, NodeProcess,
                          Parameter, Scene, STARTUP_TIMEOUT, wait_until)
import pytest
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import String

pytestmark = pytest.mark.ros

# A chain base -> upper -> hand: base-upper and upper-hand are joined (never measured),
# base-hand is the one self pair; hand sits 0.5 m above base, each a 0.2 m cube.
BOX = '<collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>'
JOINT = ('<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
         '<origin xyz="0 0 0.25"/><axis xyz="0 0 1"/>'
         '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
URDF = ''.join(['<robot name="chain">'] + ['<link name="%s">%s</link>' % (name, BOX)
                                           for name in ('base', 'upper', 'hand')] +
               [JOINT.format(name='j1', parent='base', child='upper'),
                JOINT.format(name='j2', parent='upper', child='hand'), '</robot>'])
SRDF = ('<robot name="chain"><disable_collisions link1="hand" link2="base" reason="Never"/>'
        '</robot>')
PADDING = 0.01


def self_records(scene):
    cloud = scene.message('self_distances')
    if cloud is None:
        return None
    return read_distances(cloud, scene.message('names'), self_pairs=True)


def test_self_pairs_exclude_joined_links_and_follow_the_srdf(ros_env, tmp_path):
    parameters = {'rate_hz': 20.0, 'self_collision': True, 'allow_no_obstacles': True,
                  'padding': PADDING}
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        scene.subscribe('self_distances', PointCloud2, '/gjk_distance/self_distances')
        scene.send_static_tf('world', 'base')
        scene.send_static_tf('world', 'upper', (0.0, 0.0, 0.25))
        scene.send_static_tf('world', 'hand', (0.0, 0.0, 0.5))
        scene.send_urdf(URDF)
        box = ConvexPolytope.box([0.1, 0.1, 0.1])
        exact = signed_distance(box, matrix(), box, matrix((0.0, 0.0, 0.5))).distance
        wait_until(lambda: self_records(scene), STARTUP_TIMEOUT, '~/self_distances',
                   node_process=node)
        wait_until(lambda: [(r.link, r.obstacle, r.status) for r in self_records(scene)] ==
                   [('base', 'hand', PairStatus.VALID)], what='the one self pair measured',
                   node_process=node)
        (record,) = self_records(scene)
        # Both links are padded: the distance loses the padding twice.
        assert record.distance == pytest.approx(exact - 2 * PADDING, abs=1e-9)
        assert record.point_on_obstacle - record.point_on_link == \
            pytest.approx(record.distance * record.normal, abs=1e-9)
        wait_until(lambda: scene.message('min_distance') is not None and
                   scene.message('min_distance').data == pytest.approx(record.distance),
                   what='min_distance to count the self pair')
        assert all(r.obstacle not in ('base', 'upper', 'hand') for r in scene.records())
        check_per_body_padding(scene, node, exact)
        semantic = scene.node.create_publisher(String, '/robot_description_semantic',
                                               LATCHED_QOS)
        semantic.publish(String(data=SRDF))
        wait_until(lambda: self_records(scene) == [], what='the SRDF to disable the pair',
                   node_process=node)
        wait_until(lambda: scene.message('min_distance').data == math.inf,
                   what='nothing left in scope (allow_no_obstacles)')


def check_per_body_padding(scene, node, exact):
    """link_padding inflates one link of the self pair, obstacle_padding one obstacle."""
    (result,) = scene.set_node_parameters([Parameter('link_padding', value=['hand:0.02'])])
    assert result.successful, result.reason
    wait_until(lambda: self_records(scene)[0].distance == pytest.approx(
        exact - 2 * PADDING - 0.02, abs=1e-9), what='link_padding on the hand',
        node_process=node)
    # A 0.1 m cube centred 0.5 m beside the 0.2 m base: 0.35 m apart before padding.
    scene.send_markers([marker('crate', 0, xyz=(0.5, 0.0, 0.0))])
    (result,) = scene.set_node_parameters([Parameter('obstacle_padding', value=['crate/*:0.05'])])
    assert result.successful, result.reason

    def crate_distance():
        record = find_record(scene.records(), 'base', 'crate/0')
        return None if record is None else record.distance
    wait_until(lambda: crate_distance() == pytest.approx(0.35 - PADDING - 0.05, abs=1e-9),
               what='obstacle_padding on the crate', node_process=node)
    scene.send_markers([marker('crate', 0, action=Marker.DELETE)])
