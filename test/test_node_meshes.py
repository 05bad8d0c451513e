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
A non-convex obstacle through the node process: ``mesh_mode`` exact against hull.

The obstacle is a closed picture frame (a square ring) published as a TRIANGLE_LIST marker;
the link, a 0.2 m cube, sits in its hole: 0.2 m from the mesh (brute force over the
triangles), inside its hull.
"""

import os

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.ros import PairStatus
from node_harness import (box_urdf, find_record, Marker, marker, matrix, NodeProcess,
                          Parameter, Scene, session_domain_id, STARTUP_TIMEOUT, wait_until)
import numpy
import pytest
from test_core_mesh import frame_triangles, triangle_distance

pytestmark = pytest.mark.ros

ARM_HALF = 0.1
TOLERANCE = 1e-9
URDF = box_urdf('meshbot', {'arm': [('box', (2 * ARM_HALF,) * 3, (0.0, 0.0, 0.0))]})
ARM_POINTS = numpy.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                         float) * ARM_HALF


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('node'),
                     {'rate_hz': 20.0, 'tf_timeout': 2.0, 'max_distance': 5.0}) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        scene.send_tf('world', 'arm')
        scene.send_urdf(URDF)
        scene.wait_for_subscribers('obstacles', node_process=node)
        wait_until(lambda: 'arm' in set(scene.name_list('links')), STARTUP_TIMEOUT,
                   'the link on ~/names', node_process=node)
        yield scene


def wait_for_distance(scene, node, expected, what):
    def matches(records):
        record = find_record(records, 'arm', 'frame/0')
        return (record is not None and record.status == PairStatus.VALID
                and abs(record.distance - expected) <= TOLERANCE)
    return scene.wait_for_records(matches, what=what, node_process=node)


def set_mesh_mode(scene, mode):
    (result,) = scene.set_node_parameters([Parameter('mesh_mode', Parameter.Type.STRING, mode)])
    assert result.successful, result.reason


def test_a_link_in_a_cavity_is_apart_when_exact_and_in_contact_as_a_hull(scene, node):
    triangles = frame_triangles()
    scene.send_markers([marker('frame', 0, Marker.TRIANGLE_LIST, scale=(1.0, 1.0, 1.0),
                               points=triangles.reshape(-1, 3), frame_locked=True)])
    exact = triangle_distance(ARM_POINTS, numpy.eye(4), triangles)
    assert exact == pytest.approx(0.2, abs=1e-15)
    wait_for_distance(scene, node, exact, 'the exact distance %r (default: obstacles exact)'
                      % exact)
    set_mesh_mode(scene, 'hull')
    hull = signed_distance(ConvexPolytope.box([ARM_HALF] * 3), matrix(),
                           ConvexPolytope.from_points(triangles.reshape(-1, 3)),
                           matrix()).distance
    assert hull < 0.0
    wait_for_distance(scene, node, hull, 'the hull distance %r (mesh_mode hull)' % hull)
    set_mesh_mode(scene, '')
    wait_for_distance(scene, node, exact, 'the exact distance again')
