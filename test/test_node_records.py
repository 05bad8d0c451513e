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

"""The ~/distances layout: packing, reading, names, min_distance and markers."""

import json
import math
import subprocess
import sys

from gjk_ros.ros import PairStatus, read_distances
from gjk_ros.ros.records import RECORD_DTYPE, RECORD_FIELDS
import numpy
import pytest

sensor_msgs = pytest.importorskip('sensor_msgs.msg')

from gjk_ros.ros.outputs import make_cloud, make_markers, min_distance  # noqa: E402, I100
from std_msgs.msg import Header, String  # noqa: E402

PointCloud2, PointField = sensor_msgs.PointCloud2, sensor_msgs.PointField

NAMES = String(data=json.dumps({'links': ['arm', 'hand'], 'obstacles': ['box/0', 'box/1']}))


def sample_records():
    records = numpy.zeros(4, dtype=RECORD_DTYPE)
    records['link_id'] = [0, 0, 1, 1]
    records['obstacle_id'] = [0, 1, 0, 1]
    records['status'] = [PairStatus.VALID, PairStatus.STALE, PairStatus.APPROXIMATE,
                         PairStatus.BEYOND]
    for name in ('x', 'y', 'z', 'obstacle_x', 'obstacle_y', 'obstacle_z', 'normal_x',
                 'normal_y', 'normal_z', 'distance', 'error_bound'):
        records[name] = numpy.nan
    values = {
        0: {'x': 0.1, 'y': 0.0, 'z': 0.0, 'obstacle_x': 0.4, 'obstacle_y': 0.0,
            'obstacle_z': 0.0, 'normal_x': 1.0, 'normal_y': 0.0, 'normal_z': 0.0,
            'distance': 0.3, 'error_bound': 0.0},
        2: {'x': 0.0, 'y': 0.0, 'z': 1.0, 'obstacle_x': 0.0, 'obstacle_y': 0.0,
            'obstacle_z': 1.2, 'normal_x': 0.0, 'normal_y': 0.0, 'normal_z': 1.0,
            'distance': 0.2, 'error_bound': 0.01},
    }
    for row, fields in values.items():
        for name, value in fields.items():
            records[name][row] = value
    return records


def test_layout_matches_the_design():
    names = [name for name, _ in RECORD_FIELDS]
    assert names == ['x', 'y', 'z', 'obstacle_x', 'obstacle_y', 'obstacle_z', 'normal_x',
                     'normal_y', 'normal_z', 'distance', 'error_bound', 'link_id',
                     'obstacle_id', 'status']
    cloud = make_cloud(sample_records(), Header(frame_id='world'))
    types = {field.name: field.datatype for field in cloud.fields}
    assert all(types[name] == PointField.FLOAT64 for name in names[:11])
    assert types['link_id'] == types['obstacle_id'] == PointField.UINT32
    assert types['status'] == PointField.UINT8
    assert cloud.height == 1 and cloud.width == 4
    assert cloud.point_step % 8 == 0 and cloud.row_step == 4 * cloud.point_step
    assert len(cloud.data) == cloud.row_step
    assert not cloud.is_dense  # some records are not VALID


def test_round_trip_with_names():
    records = read_distances(make_cloud(sample_records(), Header()), NAMES)
    assert [(r.link, r.obstacle) for r in records] == [
        ('arm', 'box/0'), ('arm', 'box/1'), ('hand', 'box/0'), ('hand', 'box/1')]
    valid, stale, approximate, beyond = records
    assert valid.status is PairStatus.VALID and valid.distance == 0.3
    numpy.testing.assert_array_equal(valid.point_on_link, [0.1, 0.0, 0.0])
    numpy.testing.assert_array_equal(valid.point_on_obstacle, [0.4, 0.0, 0.0])
    numpy.testing.assert_array_equal(valid.normal, [1.0, 0.0, 0.0])
    assert approximate.status is PairStatus.APPROXIMATE and approximate.error_bound == 0.01
    for record in (stale, beyond):
        assert not record.is_measured and math.isnan(record.distance)
        assert numpy.isnan(record.normal).all()


def test_names_unknown_or_older_than_the_cloud():
    cloud = make_cloud(sample_records(), Header())
    records = read_distances(cloud)
    assert all(r.link is None and r.obstacle is None for r in records)
    assert [r.link_id for r in records] == [0, 0, 1, 1]
    short = json.dumps({'links': ['arm'], 'obstacles': ['box/0', 'box/1']})
    records = read_distances(cloud, short)
    assert [r.link for r in records] == ['arm', 'arm', None, None]


def test_foreign_byte_order_is_read():
    native = sample_records()
    cloud = make_cloud(native, Header())
    swapped = PointCloud2(header=cloud.header, height=1, width=cloud.width,
                          fields=cloud.fields, point_step=cloud.point_step,
                          row_step=cloud.row_step, is_dense=False,
                          is_bigendian=not cloud.is_bigendian,
                          data=native.astype(native.dtype.newbyteorder()).tobytes())
    for ours, theirs in zip(read_distances(cloud), read_distances(swapped)):
        assert ours.link_id == theirs.link_id and ours.status == theirs.status
        assert ours.distance == theirs.distance or math.isnan(ours.distance)


def test_not_a_distances_cloud():
    cloud = PointCloud2(height=1, width=1, point_step=12,
                        fields=[PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32,
                                           count=1) for i, n in enumerate('xyz')],
                        data=bytes(12))
    with pytest.raises(ValueError, match='missing fields'):
        read_distances(cloud)
    good = make_cloud(sample_records(), Header())
    good.width = 5
    with pytest.raises(ValueError, match='expected 5 points'):
        read_distances(good)


def test_min_distance_fails_safe():
    records = sample_records()
    assert min_distance(records) == -math.inf  # one STALE record
    records['status'][1] = PairStatus.BEYOND
    assert min_distance(records) == pytest.approx(0.19)  # approximate: distance - bound
    assert min_distance(records, max_distance=0.1) == 0.1  # BEYOND: at least max_distance
    assert min_distance(records, ready=False) == -math.inf
    records['status'][:] = PairStatus.BEYOND
    assert min_distance(records) == math.inf  # no max_distance: every pair beyond infinity
    assert min_distance(records, max_distance=2.0) == 2.0
    for unknown in (PairStatus.INVALID, PairStatus.STALE, PairStatus.PENDING):
        records['status'][3] = unknown
        assert min_distance(records) == -math.inf
    empty = numpy.zeros(0, dtype=RECORD_DTYPE)
    assert min_distance(empty) == -math.inf  # nothing in scope is not "clear" by default
    assert min_distance(empty, allow_no_obstacles=True) == math.inf
    assert min_distance(empty, ready=False, allow_no_obstacles=True) == -math.inf


def test_markers_show_measured_pairs_only():
    markers = make_markers(sample_records(), Header(frame_id='world'), 1.0)
    (line_list,) = markers.markers
    assert line_list.header.frame_id == 'world'
    assert len(line_list.points) == 4 and len(line_list.colors) == 4
    assert (line_list.points[1].x, line_list.points[3].z) == (0.4, 1.2)
    none = sample_records()
    none['status'][:] = PairStatus.STALE
    (empty,) = make_markers(none, Header(), 1.0).markers
    assert empty.action == empty.DELETE


def test_importing_the_reader_starts_nothing():
    code = ('import sys; import gjk_ros.ros; '
            "print(sorted(m for m in ('rclpy', 'gjk_ros.ros.node', 'gjk_ros.core') "
            'if m in sys.modules))')
    output = subprocess.run([sys.executable, '-c', code], check=True, capture_output=True,
                            text=True).stdout
    assert output.strip() == '[]'
