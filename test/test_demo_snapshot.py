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

"""The demo's picture of ``~/markers``: RViz's marker bookkeeping and the renderer."""

import math

from gjk_ros.core import ConvexPolytope
from gjk_ros.ros.records import DistanceRecord, new_records, PairStatus
import numpy
import pytest

pytest.importorskip('visualization_msgs.msg')

from builtin_interfaces.msg import Duration  # noqa: E402, I100
from geometry_msgs.msg import Point  # noqa: E402
from gjk_ros.demo.monitor import hold_free_domain, SceneSnapshot  # noqa: E402
from gjk_ros.demo.snapshot import marker_geometry, MarkerState, render_markers  # noqa: E402
from gjk_ros.ros.outputs.hull_markers import LINK, MarkerBuilder, OBSTACLE, PieceView  # noqa: E402
from std_msgs.msg import ColorRGBA, Header  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

PNG_SIGNATURE = b'\x89PNG\r\n\x1a\n'


def add(ns, marker_id, lifetime=0.0, marker_type=Marker.LINE_LIST):
    marker = Marker(ns=ns, id=marker_id, type=marker_type, action=Marker.ADD,
                    lifetime=Duration(sec=int(lifetime),
                                      nanosec=int(round(lifetime % 1 * 1e9))))
    marker.pose.orientation.w = 1.0
    return marker


def test_marker_state_follows_rviz_actions_and_lifetimes():
    state = MarkerState()
    state.apply(MarkerArray(markers=[add('a', 0), add('a', 1, lifetime=0.5), add('b', 0)]), 10.0)
    assert [(m.ns, m.id) for m in state.live(10.2)] == [('a', 0), ('a', 1), ('b', 0)]
    assert [(m.ns, m.id) for m in state.live(10.6)] == [('a', 0), ('b', 0)]  # a/1 expired
    replacement = add('a', 0, marker_type=Marker.LINE_STRIP)
    state.apply(MarkerArray(markers=[replacement,
                                     Marker(ns='b', id=0, action=Marker.DELETE)]), 11.0)
    assert state.live(11.0) == [replacement]
    state.apply(MarkerArray(markers=[Marker(action=Marker.DELETEALL), add('c', 3)]), 12.0)
    assert [(m.ns, m.id) for m in state.live(12.0)] == [('c', 3)]


def test_geometry_is_scaled_and_posed_as_rviz_does():
    triangle = add('t', 0, marker_type=Marker.TRIANGLE_LIST)
    triangle.points = [Point(x=0.0), Point(x=1.0), Point(y=1.0)]
    triangle.scale.x = triangle.scale.y = triangle.scale.z = 2.0
    triangle.pose.position.z = 1.0
    # A quarter turn about z: x -> y.
    triangle.pose.orientation.z = triangle.pose.orientation.w = math.sqrt(0.5)
    triangle.color = ColorRGBA(r=1.0, a=0.5)
    geometry = marker_geometry(triangle)
    numpy.testing.assert_allclose(geometry.triangles, [[[0, 0, 1], [0, 2, 1], [-2, 0, 1]]],
                                  atol=1e-12)
    numpy.testing.assert_allclose(geometry.colours, [[1.0, 0.0, 0.0, 0.5]])
    strip = add('s', 0, marker_type=Marker.LINE_STRIP)
    strip.points = [Point(x=0.0), Point(x=1.0), Point(x=1.0, y=1.0)]
    strip.colors = [ColorRGBA(r=1.0, a=1.0), ColorRGBA(g=1.0, a=1.0), ColorRGBA(b=1.0, a=1.0)]
    geometry = marker_geometry(strip)
    assert geometry.segments.shape == (2, 2, 3)
    numpy.testing.assert_allclose(geometry.colours[:, :3], [[1, 0, 0], [0, 1, 0]])
    text = add('l', 0, marker_type=Marker.TEXT_VIEW_FACING)
    text.text = 'arm / box: +0.010 m'
    text.pose.position.x = 0.5
    assert marker_geometry(text).text == text.text
    assert marker_geometry(text).position[0] == 0.5


def synthetic_markers():
    """Build what the node publishes: hulls, witness segments and labels (MarkerBuilder)."""
    records = new_records(2)
    records['link_id'], records['obstacle_id'] = [0, 0], [1, 2]
    records['status'] = PairStatus.VALID
    records['distance'] = [0.05, -0.01]
    for index, (on_link, on_obstacle) in enumerate([((0.1, 0, 0.5), (0.15, 0, 0.5)),
                                                    ((0, 0.1, 0.5), (0, 0.09, 0.5))]):
        for axis, a, b in zip('xyz', on_link, on_obstacle):
            records[index]['link_' + axis], records[index]['obstacle_' + axis] = a, b
    pose = numpy.eye(4)
    pose[2, 3] = 0.5
    beside, above = numpy.eye(4), numpy.eye(4)
    beside[:3, 3], above[:3, 3] = (0.3, 0.0, 0.5), (0.0, 0.2, 0.5)
    pieces = [PieceView(LINK, 'arm', 0, ConvexPolytope.box([0.1] * 3), pose, PairStatus.VALID, 0),
              PieceView(OBSTACLE, 'box/0', 0, ConvexPolytope.box([0.15] * 3), beside,
                        PairStatus.VALID, 1),
              PieceView(OBSTACLE, 'ball/0', 0, ConvexPolytope.sphere(0.11), above,
                        PairStatus.VALID, 2)]
    return MarkerBuilder().build(records, Header(frame_id='world'), pieces).markers


def test_render_synthetic_markers(tmp_path):
    matplotlib = pytest.importorskip('matplotlib')
    from matplotlib import pyplot

    markers = synthetic_markers()
    assert {m.type for m in markers} >= {Marker.TRIANGLE_LIST, Marker.LINE_LIST,
                                         Marker.TEXT_VIEW_FACING}
    path = tmp_path / 'scene.png'
    render_markers(markers, str(path), 'synthetic')
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = pyplot.imread(str(path))
    assert image.shape[0] >= 600 and image.shape[1] >= 700
    # Red of the penetrating hulls and green-ish of the clear ones are both drawn.
    red = (image[..., 0] > 0.6) & (image[..., 1] < 0.45) & (image[..., 2] < 0.45)
    assert red.sum() > 500
    assert matplotlib.get_backend().lower() == 'agg'
    empty = tmp_path / 'empty.png'
    render_markers([], str(empty), 'nothing received')
    assert empty.read_bytes()[:8] == PNG_SIGNATURE


def record(distance, status=PairStatus.VALID):
    nan3 = numpy.full(3, numpy.nan)
    return DistanceRecord('arm', 'box/0', 0, 0, distance, status, nan3, nan3, nan3, 0.0)


def test_snapshot_keeps_the_markers_after_the_smallest_distance():
    snapshot = SceneSnapshot()
    first, closest, later = (MarkerArray(markers=[add('m', k)]) for k in range(3))
    snapshot.on_records([record(0.3)], 1.0)
    snapshot.on_markers(first, 1.0)
    assert [m.id for m in snapshot.markers] == [0] and snapshot.elapsed == 1.0
    snapshot.on_records([record(-0.02), record(math.nan, PairStatus.STALE)], 2.0)
    snapshot.on_markers(closest, 2.0)
    snapshot.on_records([record(0.1)], 3.0)
    snapshot.on_markers(later, 3.0)
    assert [m.id for m in snapshot.markers] == [0, 1]  # the state at t = 2 s
    assert (snapshot.elapsed, snapshot.closest) == (2.0, -0.02)


def test_free_domain_is_not_one_held_by_a_test(ros_domain_id):
    domain_id, lock = hold_free_domain()
    try:
        assert 1 <= domain_id <= 100 and domain_id != ros_domain_id
        again, second = hold_free_domain()
        second.close()
        assert again != domain_id
    finally:
        lock.close()
