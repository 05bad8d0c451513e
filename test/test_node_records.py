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
The ~/distances layout: packing, reading, names, min_distance and markers.

The layout is also checked against what the two standard readers accept: RViz2's PointCloud2
display (FLOAT32 x, y, z) and ``sensor_msgs_py.point_cloud2.read_points``. sensor_msgs_py is not
on the package index, so ``_upstream_read_points`` below is a faithful copy of its layout rules.
"""

import json
import math
import subprocess
import sys

from gjk_ros.ros import PairStatus, read_distances
from gjk_ros.ros.records import (fail_safe_minimum, names_from_json, new_records,
                                 RECORD_DTYPE, RECORD_FIELDS, records_from_cloud)
from hypothesis import given, settings, strategies
import numpy
import pytest

sensor_msgs = pytest.importorskip('sensor_msgs.msg')

from gjk_ros.ros.outputs.publishers import make_cloud  # noqa: E402, I100
from gjk_ros.ros.outputs.safety import (min_distance, safety_cause,  # noqa: E402
                                        safety_minimum)
from std_msgs.msg import Header, String  # noqa: E402

PointCloud2, PointField = sensor_msgs.PointCloud2, sensor_msgs.PointField

NAMES = String(data=json.dumps({'links': {'0': 'arm', '1': 'hand'},
                                'obstacles': {'0': 'box/0', '1': 'box/1'}}))
FLOAT64_FIELDS = ['link_x', 'link_y', 'link_z', 'obstacle_x', 'obstacle_y', 'obstacle_z',
                  'normal_x', 'normal_y', 'normal_z', 'distance', 'error_bound']


def sample_records():
    records = new_records(4)
    records['link_id'] = [0, 0, 1, 1]
    records['obstacle_id'] = [0, 1, 0, 1]
    records['status'] = [PairStatus.VALID, PairStatus.STALE, PairStatus.APPROXIMATE,
                         PairStatus.BEYOND]
    for name in ['x', 'y', 'z'] + FLOAT64_FIELDS:
        records[name] = numpy.nan
    values = {
        0: {'link_x': 0.1, 'link_y': 0.0, 'link_z': 0.0, 'obstacle_x': 0.4, 'obstacle_y': 0.0,
            'obstacle_z': 0.0, 'normal_x': 1.0, 'normal_y': 0.0, 'normal_z': 0.0,
            'distance': 0.3, 'error_bound': 0.0},
        2: {'link_x': 0.0, 'link_y': 0.0, 'link_z': 1.0, 'obstacle_x': 0.0, 'obstacle_y': 0.0,
            'obstacle_z': 1.2, 'normal_x': 0.0, 'normal_y': 0.0, 'normal_z': 1.0,
            'distance': 0.2, 'error_bound': 0.01},
    }
    for row, fields in values.items():
        for name, value in fields.items():
            records[name][row] = value
        for axis in 'xyz':
            records[axis][row] = fields['link_' + axis]
    return records


def test_layout_matches_the_design():
    names = [name for name, _ in RECORD_FIELDS]
    tail = ['link_id', 'obstacle_id', 'status', 'ready', 'age', 'swept_distance',
            'swept_fraction', 'closing_speed', 'time_to_contact']
    assert names == ['x', 'y', 'z'] + FLOAT64_FIELDS + tail
    cloud = make_cloud(sample_records(), Header(frame_id='world'))
    types = {field.name: field.datatype for field in cloud.fields}
    offsets = {field.name: field.offset for field in cloud.fields}
    assert all(types[name] == PointField.FLOAT64 for name in FLOAT64_FIELDS)
    assert all(offsets[name] % 8 == 0 for name in FLOAT64_FIELDS)
    assert types['link_id'] == types['obstacle_id'] == PointField.UINT32
    assert types['status'] == types['ready'] == PointField.UINT8
    assert all(types[name] == PointField.FLOAT64 and offsets[name] % 8 == 0
               for name in ('age', 'swept_distance', 'swept_fraction', 'closing_speed',
                            'time_to_contact'))
    assert all(field.count == 1 for field in cloud.fields)
    assert cloud.height == 1 and cloud.width == 4
    assert cloud.point_step == 160 and cloud.row_step == 4 * cloud.point_step
    assert len(cloud.data) == cloud.row_step
    assert not cloud.is_dense  # some records are not VALID


def test_rviz_reads_positions_and_the_distance_channel():
    # rviz_default_plugins (Jazzy): XYZPCTransformer::supports() accepts a cloud only when its
    # "x" field is FLOAT32 and reads x, y, z as floats at their offsets;
    # IntensityPCTransformer reads any field through valueFromCloud<float>(), whose switch
    # covers FLOAT64, so "distance" can be the colour channel as it is.
    cloud = make_cloud(sample_records(), Header(frame_id='world'))
    fields = {field.name: field for field in cloud.fields}
    assert [(fields[axis].offset, fields[axis].datatype) for axis in 'xyz'] == [
        (0, PointField.FLOAT32), (4, PointField.FLOAT32), (8, PointField.FLOAT32)]
    data = bytes(cloud.data)
    for index, expected in ((0, (0.1, 0.0, 0.0)), (2, (0.0, 0.0, 1.0))):
        start = index * cloud.point_step
        xyz = numpy.frombuffer(data[start:start + 12], dtype=numpy.float32)
        numpy.testing.assert_allclose(xyz, expected, rtol=1e-7)
    distance = fields['distance']
    start = 2 * cloud.point_step + distance.offset
    assert numpy.frombuffer(data[start:start + 8], dtype=numpy.float64)[0] == 0.2


# sensor_msgs_py.point_cloud2 (ros2/common_interfaces, branch jazzy, release 5.3.5):
# read_points() views the data through dtype_from_fields(cloud.fields, point_step=...),
# a dtype of every field at its offset, count > 1 split into suffixed sub-fields, and
# itemsize = point_step; it byte-swaps when the cloud's endianness is not the machine's.
_UPSTREAM_DATATYPES = {
    PointField.INT8: numpy.dtype(numpy.int8), PointField.UINT8: numpy.dtype(numpy.uint8),
    PointField.INT16: numpy.dtype(numpy.int16), PointField.UINT16: numpy.dtype(numpy.uint16),
    PointField.INT32: numpy.dtype(numpy.int32), PointField.UINT32: numpy.dtype(numpy.uint32),
    PointField.FLOAT32: numpy.dtype(numpy.float32),
    PointField.FLOAT64: numpy.dtype(numpy.float64),
}


def _upstream_dtype_from_fields(fields, point_step=None):
    names, offsets, formats = [], [], []
    for index, field in enumerate(fields):
        datatype = _UPSTREAM_DATATYPES[field.datatype]
        name = field.name or f'unnamed_field_{index}'
        assert field.count > 0
        for sub in range(field.count):
            sub_name = f'{name}_{sub}' if field.count > 1 else name
            assert sub_name not in names
            names.append(sub_name)
            offsets.append(field.offset + sub * datatype.itemsize)
            formats.append(datatype.str)
    layout = {'names': names, 'formats': formats, 'offsets': offsets}
    if point_step is not None:
        layout['itemsize'] = point_step
    return numpy.dtype(layout)


def _upstream_read_points(cloud, field_names=None, skip_nans=False):
    points = numpy.ndarray(shape=(cloud.width * cloud.height,),
                           dtype=_upstream_dtype_from_fields(cloud.fields, cloud.point_step),
                           buffer=cloud.data)
    if field_names is not None:
        points = points[list(field_names)]
    if bool(sys.byteorder != 'little') != bool(cloud.is_bigendian):
        points = points.byteswap(inplace=True)
    if skip_nans and not cloud.is_dense:
        keep = numpy.ones(len(points), dtype=bool)
        for name in points.dtype.names:
            keep &= ~numpy.isnan(points[name])
        points = points[keep]
    return points


def test_sensor_msgs_py_read_points_reads_every_field():
    records = sample_records()
    cloud = make_cloud(records, Header(frame_id='world'))
    points = _upstream_read_points(cloud)
    assert points.dtype.names == RECORD_DTYPE.names
    for name in RECORD_DTYPE.names:
        numpy.testing.assert_array_equal(points[name], records[name])
    xyz = _upstream_read_points(cloud, field_names=['x', 'y', 'z'], skip_nans=True)
    assert len(xyz) == 2  # the measured records; the others carry NaN positions
    numpy.testing.assert_allclose(xyz['z'], [0.0, 1.0])


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
    # 'hand' is newer than this names message: its records have no name, the others do.
    older = json.dumps({'links': {'0': 'arm'}, 'obstacles': {'0': 'box/0', '1': 'box/1'}})
    records = read_distances(cloud, older)
    assert [r.link for r in records] == ['arm', 'arm', None, None]


def test_names_list_only_the_bodies_that_exist_and_ids_are_not_positions():
    text = json.dumps({'links': {'7': 'hand'}, 'obstacles': {'12': 'box/3', '40': 'cup/0'}})
    assert names_from_json(text) == ({7: 'hand'}, {12: 'box/3', 40: 'cup/0'})
    records = sample_records()[:1]
    records['link_id'], records['obstacle_id'] = 7, 40
    (record,) = read_distances(make_cloud(records, Header()), text)
    assert (record.link, record.obstacle) == ('hand', 'cup/0')


def test_old_list_names_are_read_by_position():
    old = json.dumps({'links': ['arm', 'hand'], 'obstacles': ['box/0', 'box/1']})
    assert names_from_json(old) == ({0: 'arm', 1: 'hand'}, {0: 'box/0', 1: 'box/1'})
    records = read_distances(make_cloud(sample_records(), Header()), old)
    assert [(r.link, r.obstacle) for r in records][-1] == ('hand', 'box/1')


@pytest.mark.parametrize('text', ['[]', '{"links": 3}', '{"links": {"a": "arm"}}'])
def test_malformed_names_are_rejected(text):
    with pytest.raises(ValueError):
        names_from_json(text)


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
    empty = new_records(0)
    assert min_distance(empty) == -math.inf  # nothing in scope is not "clear" by default
    assert min_distance(empty, allow_no_obstacles=True) == math.inf
    assert min_distance(empty, ready=False, allow_no_obstacles=True) == -math.inf


def test_importing_the_reader_starts_nothing():
    code = ('import sys; import gjk_ros.ros; '
            "print(sorted(m for m in ('rclpy', 'gjk_ros.ros.node', 'gjk_ros.core') "
            'if m in sys.modules))')
    output = subprocess.run([sys.executable, '-c', code], check=True, capture_output=True,
                            text=True).stdout
    assert output.strip() == '[]'


# Records of random statuses, distances, error bounds and swept bounds. A distance is NaN one
# time in three (a malformed measurement), a swept bound one time in two (none).
DISTANCES = strategies.one_of(strategies.floats(-1.0, 1.0), strategies.floats(-1.0, 1.0),
                              strategies.just(math.nan))
SWEPT = strategies.one_of(strategies.floats(-1.0, 3.0), strategies.just(math.nan))
RANDOM_ROWS = strategies.lists(strategies.tuples(
    strategies.sampled_from(list(PairStatus)), DISTANCES, strategies.floats(0.0, 0.1), SWEPT),
    max_size=6)


def records_of(rows):
    """Return records of (status, distance, error bound, swept distance) rows, obstacle i."""
    records = new_records(len(rows))
    for index, (status, distance, bound, swept) in enumerate(rows):
        measured = status in (PairStatus.VALID, PairStatus.APPROXIMATE)
        records[index]['status'] = status
        records[index]['distance'] = distance if measured else numpy.nan
        records[index]['error_bound'] = bound if measured else numpy.nan
        records[index]['swept_distance'] = swept
        records[index]['link_id'], records[index]['obstacle_id'] = 0, index
    return records


@settings(max_examples=300)
@given(rows=RANDOM_ROWS, ready=strategies.booleans(), allow_empty=strategies.booleans())
def test_the_cloud_rebuilds_the_fail_safe_minimum(rows, ready, allow_empty):
    """fail_safe_minimum of a cloud's records is ~/min_distance of the same cycle."""
    records = records_of(rows)
    records['ready'] = ready
    cloud = make_cloud(records, Header(frame_id='world'))
    rebuilt = fail_safe_minimum(read_distances(cloud), max_distance=2.0,
                                allow_no_obstacles=allow_empty)
    published = min_distance(records, ready, max_distance=2.0, allow_no_obstacles=allow_empty)
    if not rows and not ready:
        return  # an empty cloud carries no ready flag (README: the summary is authoritative)
    assert rebuilt == published


@settings(max_examples=300)
@given(rows=RANDOM_ROWS)
def test_the_safety_cause_names_the_first_record_the_minimum_rests_on(rows):
    """The closest pair is the first record whose bound is the minimum; else the first unknown."""
    records = records_of(rows)
    found = safety_minimum(records, max_distance=2.0)
    minimum = found.value
    assert minimum == min_distance(records, max_distance=2.0)
    names = ({0: 'arm'}, {index: 'box/%d' % index for index in range(len(rows))})
    link, obstacle, cause = safety_cause(records, numpy.zeros(len(rows), dtype=bool), found,
                                         [], names)
    samples = [2.0 if status == PairStatus.BEYOND else distance - bound
               if status == PairStatus.APPROXIMATE else distance
               for status, distance, bound, _ in rows]
    unknown = [index for index, (row, sample) in enumerate(zip(rows, samples))
               if row[0] in (PairStatus.STALE, PairStatus.INVALID, PairStatus.PENDING) or
               math.isnan(sample)]
    if math.isfinite(minimum):
        bounds = [min(sample, swept) if not math.isnan(swept) else sample
                  for sample, (_, _, _, swept) in zip(samples, rows)]
        assert (link, obstacle) == ('arm', 'box/%d' % bounds.index(minimum))
        assert cause.startswith('closest: arm to %s (' % obstacle)
    elif unknown:
        first = unknown[0]
        name = PairStatus(rows[first][0]).name
        if not math.isnan(samples[first]) or rows[first][0] in (
                PairStatus.STALE, PairStatus.INVALID, PairStatus.PENDING):
            expected = 'arm to box/%d is %s' % (first, name)
        else:
            expected = 'arm to box/%d is %s without a distance' % (first, name)
        assert (link, obstacle, cause) == ('arm', 'box/%d' % first, expected)
    else:
        assert (link, obstacle, cause) == ('', '', 'no pair in scope')


def test_a_swept_bound_below_the_sample_is_the_minimum_and_a_cloud_without_one_reads():
    records = sample_records()
    records['status'][1] = PairStatus.BEYOND
    records['ready'] = 1
    records['swept_distance'][0] = -0.004  # the VALID pair passed through something
    records['swept_fraction'][0] = 0.5
    assert min_distance(records, max_distance=1.0) == -0.004
    cloud = make_cloud(records, Header(frame_id='world'))
    assert fail_safe_minimum(read_distances(cloud, NAMES), max_distance=1.0) == -0.004
    records['swept_distance'][0] = 0.9  # above its sample: the sample stands
    assert min_distance(records, max_distance=1.0) == pytest.approx(0.19)
    # A cloud recorded before the swept fields existed reads with them NaN.
    old = make_cloud(records, Header(frame_id='world'))
    old.fields = [field for field in old.fields if not field.name.startswith('swept_')]
    assert numpy.isnan(records_from_cloud(old)['swept_distance']).all()
    assert fail_safe_minimum(read_distances(old, NAMES), max_distance=1.0) == pytest.approx(0.19)
