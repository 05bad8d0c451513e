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
Sensor messages read straight from their CDR bytes: ``PointCloud2`` and ``LaserScan``.

rclpy's conversion of a 640x480 cloud copies its 10 MB into Python objects; here the header is
read field by field and the points are a numpy view of the data, so a cloud costs one pass over
its x, y, z. Every length is checked against the bytes that are there (a malformed message
raises ``ValueError`` and never reads out of bounds).
"""

import struct

import numpy

__all__ = ['CloudHeader', 'decode_laserscan', 'decode_pointcloud2', 'read_cloud_header']

_NS = 1_000_000_000
# PointField datatypes (sensor_msgs/PointField) that x, y and z may have.
_FLOAT_TYPES = {7: 'f4', 8: 'f8'}
_STAMP = struct.Struct('<iI')
_STAMP_BIG = struct.Struct('>iI')
_SCAN = struct.Struct('<7f')
_SCAN_BIG = struct.Struct('>7f')


class _CdrReader:
    """Aligned reads from a CDR body (after its 4-byte encapsulation header), bounds-checked."""

    def __init__(self, data):
        big = data[1] == 0x00
        self._uint = '>I' if big else '<I'
        self.body = memoryview(data)[4:]
        self.offset = 0

    def fixed(self, layout, alignment):
        """Read the fields of a ``struct.Struct`` at the next multiple of ``alignment``."""
        self.offset = (self.offset + alignment - 1) & ~(alignment - 1)
        if self.offset + layout.size > len(self.body):
            raise ValueError('truncated')
        values = layout.unpack_from(self.body, self.offset)
        self.offset += layout.size
        return values

    def uint(self):
        """Read a uint32."""
        self.offset = (self.offset + 3) & ~3
        if self.offset + 4 > len(self.body):
            raise ValueError('truncated')
        value = struct.unpack_from(self._uint, self.body, self.offset)[0]
        self.offset += 4
        return value

    def string(self):
        """Read a CDR string: its length (with the terminating NUL), then its bytes."""
        length = self.uint()
        if length == 0 or self.offset + length > len(self.body):
            raise ValueError('bad string length')
        text = bytes(self.body[self.offset:self.offset + length - 1]).decode('utf-8', 'replace')
        self.offset += length
        return text


class CloudHeader:
    """The std_msgs/Header of a sensor message: ``stamp_ns`` and ``frame_id``."""

    def __init__(self, stamp_ns, frame_id):
        self.stamp_ns = stamp_ns
        self.frame_id = frame_id.lstrip('/')


def read_cloud_header(data):
    """Return the ``CloudHeader`` of a serialized sensor message (cheap: no point is read)."""
    header, _ = _read_header(data)
    return header


def _read_header(data):
    if len(data) < 8 or data[1] not in (0x00, 0x01):
        raise ValueError('not a CDR message')
    reader = _CdrReader(data)
    sec, nanosec = reader.fixed(_STAMP_BIG if data[1] == 0x00 else _STAMP, 4)
    return CloudHeader(sec * _NS + nanosec, reader.string()), reader


def decode_pointcloud2(data):
    """
    Coordinates of a serialized ``sensor_msgs/PointCloud2``: organized or not, any field layout.

    Returns
    -------
    tuple of (CloudHeader, tuple of three (n,) arrays, int)
        The header, the x, y and z columns as float32 or float64 views of the message's bytes
        (strided by ``point_step``; every point, NaN and inf included) and the point count.

    Raises
    ------
    ValueError
        Malformed, truncated, no float32/float64 x, y, z, or a big-endian cloud.

    """
    header, reader = _read_header(data)
    height, width = reader.uint(), reader.uint()
    fields = {}
    for _ in range(reader.uint()):
        name = reader.string()
        offset = reader.uint()
        datatype, = reader.fixed(struct.Struct('B'), 1)
        reader.uint()  # count
        fields[name] = (offset, datatype)
    big_endian, = reader.fixed(struct.Struct('?'), 1)
    point_step, _ = reader.uint(), reader.uint()
    size = reader.uint()
    start = reader.offset
    if start + size > len(reader.body):
        raise ValueError('data of %d bytes in a %d-byte message' % (size, len(reader.body)))
    count = height * width
    if count == 0:
        empty = numpy.zeros(0)
        return header, (empty, empty, empty), 0
    if big_endian:
        raise ValueError('big-endian point data is not supported')
    if point_step <= 0 or count * point_step > size:
        raise ValueError('%d points of %d bytes in %d bytes' % (count, point_step, size))
    return header, tuple(_column(reader.body, start, count, point_step, fields, axis)
                         for axis in 'xyz'), count


def _column(body, start, count, point_step, fields, axis):
    """One coordinate of every point: a strided view of the bytes (copied if misaligned)."""
    offset, datatype = fields.get(axis, (None, None))
    if datatype not in _FLOAT_TYPES:
        raise ValueError("field '%s' missing or not float32/float64" % axis)
    dtype = numpy.dtype('<' + _FLOAT_TYPES[datatype])
    if offset + dtype.itemsize > point_step:
        raise ValueError("field '%s' beyond point_step" % axis)
    column = numpy.ndarray((count,), dtype=dtype, buffer=body, offset=start + offset,
                           strides=(point_step,))
    # The compiled gatherer is specialised for aligned views (every usual layout is).
    return column if column.flags.aligned else column.copy()


def decode_laserscan(data):
    """
    Coordinates of a serialized ``sensor_msgs/LaserScan`` in its frame (z = 0).

    A range outside [range_min, range_max], or not finite, is no return and gives no point
    (REP 117: inf is "nothing within range", which here is nothing to measure).

    Returns
    -------
    tuple of (CloudHeader, tuple of three (n,) float64 arrays, int)
        The header, the x, y, z columns of the returns and the number of ranges.

    """
    header, reader = _read_header(data)
    big = data[1] == 0x00
    angle_min, _, increment, _, _, range_min, range_max = reader.fixed(
        _SCAN_BIG if big else _SCAN, 4)
    count = reader.uint()
    start = reader.offset
    if start + 4 * count > len(reader.body):
        raise ValueError('%d ranges in %d bytes' % (count, len(reader.body) - start))
    ranges = numpy.frombuffer(reader.body, dtype='>f4' if big else '<f4', count=count,
                              offset=start).astype(numpy.float64)
    angles = angle_min + increment * numpy.arange(count, dtype=numpy.float64)
    with numpy.errstate(invalid='ignore'):
        keep = numpy.isfinite(ranges) & (ranges >= range_min) & (ranges <= range_max)
    ranges, angles = ranges[keep], angles[keep]
    return header, (ranges * numpy.cos(angles), ranges * numpy.sin(angles),
                    numpy.zeros_like(ranges)), count
