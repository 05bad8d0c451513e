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
The ``~/distances`` record layout and a reader for it.

One ``sensor_msgs/PointCloud2`` point is one (link, obstacle) pair. The layout is fixed by
``RECORD_DTYPE``; the reader builds its dtype from the message's own ``fields`` so it keeps
working if fields are appended later. This module needs only numpy: importing it (or
``gjk_ros.ros``) never imports rclpy or starts anything.

The first three fields are ``x, y, z`` as FLOAT32 at offsets 0, 4 and 8, the layout of every
PCL-style cloud: RViz2's PointCloud2 display only accepts FLOAT32 positions
(rviz_default_plugins ``XYZPCTransformer::supports``). They hold the link witness point rounded
to float32, for display. The exact values follow as 8-byte aligned FLOAT64 fields.
"""

from dataclasses import dataclass
import enum
import json
import math
import sys

import numpy

__all__ = ['DistanceRecord', 'fail_safe_minimum', 'field_column', 'names_from_json',
           'new_records', 'packed_views', 'PairStatus', 'read_distances', 'RECORD_DTYPE',
           'RECORD_FIELDS', 'records_from_cloud', 'status_table']


class PairStatus(enum.IntEnum):
    """
    Status of one ``~/distances`` record (the ``status`` field, uint8).

    Only VALID and APPROXIMATE records carry numbers; the others carry NaN coordinates and
    distance so that they cannot be mistaken for a measurement.
    """

    VALID = 0
    """Distance computed from fresh poses."""
    STALE = 1
    """An input is not fresh: a pose missing or older than ``tf_timeout``, a silent source."""
    INVALID = 2
    """A pose is non-finite, or a body's geometry was rejected (see /diagnostics)."""
    APPROXIMATE = 3
    """The iteration cap was hit: ``distance`` is within ``error_bound`` of the truth."""
    BEYOND = 4
    """Skipped: the bounding spheres are farther apart than ``max_distance``."""
    PENDING = 5
    """A body's geometry is still being built; no distance yet."""


# PointField datatype codes (sensor_msgs/PointField constants), kept here so that reading
# needs no message import.
_POINT_FIELD_UINT8 = 2
_POINT_FIELD_UINT32 = 6
_POINT_FIELD_FLOAT32 = 7
_POINT_FIELD_FLOAT64 = 8
_POINT_FIELD_TYPES = {
    1: 'i1', 2: 'u1', 3: 'i2', 4: 'u2', 5: 'i4', 6: 'u4', 7: 'f4', 8: 'f8',
}

RECORD_FIELDS = (
    ('x', _POINT_FIELD_FLOAT32),
    ('y', _POINT_FIELD_FLOAT32),
    ('z', _POINT_FIELD_FLOAT32),
    ('link_x', _POINT_FIELD_FLOAT64),
    ('link_y', _POINT_FIELD_FLOAT64),
    ('link_z', _POINT_FIELD_FLOAT64),
    ('obstacle_x', _POINT_FIELD_FLOAT64),
    ('obstacle_y', _POINT_FIELD_FLOAT64),
    ('obstacle_z', _POINT_FIELD_FLOAT64),
    ('normal_x', _POINT_FIELD_FLOAT64),
    ('normal_y', _POINT_FIELD_FLOAT64),
    ('normal_z', _POINT_FIELD_FLOAT64),
    ('distance', _POINT_FIELD_FLOAT64),
    ('error_bound', _POINT_FIELD_FLOAT64),
    ('link_id', _POINT_FIELD_UINT32),
    ('obstacle_id', _POINT_FIELD_UINT32),
    ('status', _POINT_FIELD_UINT8),
    ('ready', _POINT_FIELD_UINT8),
    ('age', _POINT_FIELD_FLOAT64),
    ('swept_distance', _POINT_FIELD_FLOAT64),
    ('swept_fraction', _POINT_FIELD_FLOAT64),
    ('closing_speed', _POINT_FIELD_FLOAT64),
    ('time_to_contact', _POINT_FIELD_FLOAT64),
)
"""Field names and PointField datatypes of one record, in memory order."""

# Fields a reader fills with NaN when a cloud lacks them (one recorded before they existed).
OPTIONAL_FIELDS = ('swept_distance', 'swept_fraction', 'closing_speed', 'time_to_contact')


def status_table(statuses):
    """
    Return a boolean table over status codes (0-255): ``table[status_array]`` tests membership.

    The node's per-cycle tests of "is this status one of ..." index it; numpy.isin cost about
    0.1 ms per call there.
    """
    table = numpy.zeros(256, dtype=bool)
    table[[int(status) for status in statuses]] = True
    return table


def _record_dtype():
    """
    Build the record dtype: every field aligned to its own size, padded to a multiple of 8.

    x, y, z take bytes 0-11; 4 bytes of padding put ``link_x`` at 16, so every float64 of every
    record is 8-byte aligned. ``status`` and ``ready`` take bytes 112-113, ``age`` 120-127 and
    the swept fields 128-143, ``closing_speed`` and ``time_to_contact`` 144-159: a point_step
    of 160.
    """
    names, formats, offsets = [], [], []
    offset = 0
    for name, datatype in RECORD_FIELDS:
        code = _POINT_FIELD_TYPES[datatype]
        size = numpy.dtype(code).itemsize
        offset = (offset + size - 1) // size * size
        names.append(name)
        formats.append(code)
        offsets.append(offset)
        offset += size
    itemsize = (offset + 7) // 8 * 8
    return numpy.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                        'itemsize': itemsize})


RECORD_DTYPE = _record_dtype()
"""Native-endian numpy dtype of one ``~/distances`` point (point_step 160)."""


def packed_views(records):
    """
    Return the memory of packed records as (r, 20) float64, (r, 40) float32 and (r, 160) bytes.

    Compiled passes over a cycle's records (``gjk_ros.core.record_passes``, ``core.closing``)
    read and write fields there, at ``field_column(name)`` of the view of the field's size:
    every field is aligned to its size (``_record_dtype``).
    """
    if not records.flags.c_contiguous or records.dtype != RECORD_DTYPE:
        raise ValueError('packed_views: expected a packed RECORD_DTYPE array')
    count = len(records)
    return (records.view(numpy.float64).reshape(count, RECORD_DTYPE.itemsize // 8),
            records.view(numpy.float32).reshape(count, RECORD_DTYPE.itemsize // 4),
            records.view(numpy.uint8).reshape(count, RECORD_DTYPE.itemsize))


def field_column(name):
    """Return a field's column in the ``packed_views`` view of its size (offset // size)."""
    kind, offset = RECORD_DTYPE.fields[name][:2]
    return offset // kind.itemsize


def new_records(count):
    """
    Return ``count`` zeroed records without a swept bound or a rate (those fields NaN).

    A zero ``swept_distance`` would be a bound at contact, a zero ``closing_speed`` a pair at
    rest: records made by hand start here.
    """
    records = numpy.zeros(count, dtype=RECORD_DTYPE)
    for name in OPTIONAL_FIELDS:
        records[name] = numpy.nan
    return records


@dataclass(frozen=True)
class DistanceRecord:
    """
    One (link, obstacle) pair read from ``~/distances``.

    Attributes
    ----------
    link, obstacle : str or None
        Body names from ``~/names``; None when the names message is unknown or does not list
        the id (the body is newer than that message, or already gone).
    link_id, obstacle_id : int
        Keys of the ``~/names`` maps; an id is never reused, so it never changes meaning.
    distance : float
        Signed distance (MTD), metres: > 0 apart, < 0 overlapping. NaN unless ``status`` is
        VALID or APPROXIMATE.
    status : PairStatus
        Always check it before using ``distance``.
    point_on_link, point_on_obstacle : (3,) float
        Witness points in the cloud's frame (``fixed_frame``), float64 (the ``link_*`` and
        ``obstacle_*`` fields; ``x, y, z`` is the same link point rounded to float32).
    normal : (3,) float
        Unit vector from the link towards the obstacle;
        ``point_on_obstacle - point_on_link == distance * normal``.
    error_bound : float
        Bound on the distance error, metres.
    age : float
        Seconds from the oldest datum the record rests on (a transform's stamp, an obstacle
        source's last message) to the cycle that published it; 0 for timeless data (static
        transforms and geometry), inf when some datum is missing, NaN without piece pairs.
    ready : bool
        Whether the node could vouch for its whole scope in that cycle (the fail-safe minimum
        is -inf when not; see ``fail_safe_minimum``).
    swept_distance, swept_fraction : float
        With ``swept_distances``: a certified lower bound of the signed distance over the
        motion since the last cycle, and its instant (0 at the last cycle, 1 at this one);
        NaN when the pair has no interval (docs/motion.md).
    closing_speed, time_to_contact : float
        How fast the pair approaches (m/s, ``-d(distance)/dt`` from the witnesses and the
        bodies' velocities, positive approaching) and the seconds left to contact at that
        rate (0 at contact, inf when not approaching); NaN unless VALID or APPROXIMATE with
        every velocity known (docs/motion.md).

    """

    link: object
    obstacle: object
    link_id: int
    obstacle_id: int
    distance: float
    status: PairStatus
    point_on_link: numpy.ndarray
    point_on_obstacle: numpy.ndarray
    normal: numpy.ndarray
    error_bound: float
    age: float = float('nan')
    ready: bool = True
    swept_distance: float = float('nan')
    swept_fraction: float = float('nan')
    closing_speed: float = float('nan')
    time_to_contact: float = float('nan')

    @property
    def is_measured(self):
        """Whether ``distance`` is a number (VALID or APPROXIMATE)."""
        return self.status in (PairStatus.VALID, PairStatus.APPROXIMATE)


def fail_safe_minimum(records, max_distance=math.inf, allow_no_obstacles=False):
    """
    Rebuild the node's fail-safe minimum from the records of one cloud.

    The same rule as ``~/min_distance``: -inf when the node was not ready or a record is
    STALE, INVALID or PENDING; else the smallest VALID distance, APPROXIMATE lower bound
    (``distance - error_bound``), BEYOND bound (``max_distance``, the node's parameter) and
    swept lower bound (``swept_distance``, where there is one); -inf too for a VALID or
    APPROXIMATE record without a distance (a malformed cloud). A cloud with no record is -inf
    unless ``allow_no_obstacles``.
    """
    if not records:
        return math.inf if allow_no_obstacles else -math.inf
    values = []
    for record in records:
        if not record.ready or record.status in (PairStatus.STALE, PairStatus.INVALID,
                                                 PairStatus.PENDING):
            return -math.inf
        if record.status == PairStatus.APPROXIMATE:
            value = record.distance - record.error_bound
        elif record.status == PairStatus.BEYOND:
            value = max_distance
        else:
            value = record.distance
        if math.isnan(value):
            return -math.inf  # a measurement without a distance: unknown
        values.append(value)
        if not math.isnan(record.swept_distance):
            values.append(record.swept_distance)
    return min(values)


def names_from_json(text):
    """
    Parse the ``~/names`` JSON into (links, obstacles) maps from id to name.

    Parameters
    ----------
    text : str
        ``{"links": {"<id>": "<name>", ...}, "obstacles": {"<id>": "<name>", ...}}``, listing
        the bodies that exist now. The older append-only form, where each value is a list and
        the position in it is the id, is read too.

    Returns
    -------
    tuple of (dict of int to str, dict of int to str)

    Raises
    ------
    ValueError
        If the text is not JSON of that shape.

    """
    names = json.loads(text)
    if not isinstance(names, dict):
        raise ValueError('~/names: expected a JSON object, got %s' % type(names).__name__)
    return _id_map(names.get('links', {})), _id_map(names.get('obstacles', {}))


def _id_map(entries):
    """``{"<id>": name}`` or ``[name, ...]`` (position = id) as a dict of int to str."""
    if isinstance(entries, list):
        return dict(enumerate(entries))
    if isinstance(entries, dict):
        return {int(key): name for key, name in entries.items()}
    raise ValueError('~/names: expected an object or a list, got %s' % type(entries).__name__)


def records_from_cloud(cloud_msg):
    """
    View the points of a ``~/distances`` cloud as a structured array.

    Parameters
    ----------
    cloud_msg : sensor_msgs.msg.PointCloud2
        Any cloud whose fields include those of ``RECORD_FIELDS``.

    Returns
    -------
    (width,) numpy structured array
        Native byte order, one entry per record.

    Raises
    ------
    ValueError
        If a field is missing or the data size does not match the layout.

    """
    byte_order = '>' if cloud_msg.is_bigendian else '<'
    fields = {field.name: field for field in cloud_msg.fields}
    missing = [name for name, _ in RECORD_FIELDS
               if name not in fields and name not in OPTIONAL_FIELDS]
    if missing:
        raise ValueError('not a gjk_ros distances cloud: missing fields %s' % missing)
    present = [name for name, _ in RECORD_FIELDS if name in fields]
    count = cloud_msg.width * cloud_msg.height
    dtype = numpy.dtype({
        'names': present,
        'formats': [byte_order + _POINT_FIELD_TYPES[fields[name].datatype] for name in present],
        'offsets': [fields[name].offset for name in present],
        'itemsize': cloud_msg.point_step,
    })
    data = numpy.frombuffer(memoryview(cloud_msg.data), dtype=numpy.uint8)
    if cloud_msg.point_step * count > data.size:
        raise ValueError('distances cloud holds %d bytes, expected %d points of %d bytes'
                         % (data.size, count, cloud_msg.point_step))
    points = data[:cloud_msg.point_step * count].view(dtype)
    native = '>' if sys.byteorder == 'big' else '<'
    if byte_order != native:
        points = points.astype(points.dtype.newbyteorder())
    if len(present) < len(RECORD_FIELDS):
        full = new_records(count)
        for name in present:
            full[name] = points[name]
        return full
    return points


def _name_of(names, body_id):
    """Return the name of ``body_id``, or None when the names are unknown or lack the id."""
    return None if names is None else names.get(body_id)


def _name_maps(names):
    """Accept a std_msgs/String, a JSON str, parsed (links, obstacles) maps, or None."""
    if names is None or isinstance(names, tuple):
        return names if names is not None else (None, None)
    return names_from_json(names if isinstance(names, str) else names.data)


def read_distances(cloud_msg, names_msg=None, self_pairs=False):
    """
    Turn a ``~/distances`` message (and the latest ``~/names``) into records.

    Parameters
    ----------
    cloud_msg : sensor_msgs.msg.PointCloud2
        A message from ``~/distances`` (or ``~/self_distances`` with ``self_pairs``).
    names_msg : std_msgs.msg.String or str or tuple or None
        The latest ``~/names`` message, its JSON text, or ``names_from_json`` of it (parse it
        once when reading many clouds). None means the names are not known
        yet: every record then has ``link`` and ``obstacle`` None, while ids, distances and
        statuses are still filled. A name is also None when the names message does not list
        its id (a body newer than that message, or one removed since).
    self_pairs : bool
        The cloud is ``~/self_distances``: ``obstacle_id`` is a link id, and ``obstacle``
        names the second link.

    Returns
    -------
    list of DistanceRecord
        In the cloud's order (link id, then obstacle id).

    Raises
    ------
    ValueError
        If the cloud does not have the distances layout.

    """
    points = records_from_cloud(cloud_msg)
    links, obstacles = _name_maps(names_msg)
    if self_pairs:
        obstacles = links
    records = []
    for point in points:
        link_id = int(point['link_id'])
        obstacle_id = int(point['obstacle_id'])
        records.append(DistanceRecord(
            link=_name_of(links, link_id),
            obstacle=_name_of(obstacles, obstacle_id),
            link_id=link_id,
            obstacle_id=obstacle_id,
            distance=float(point['distance']),
            status=PairStatus(int(point['status'])),
            point_on_link=numpy.array([point['link_x'], point['link_y'], point['link_z']]),
            point_on_obstacle=numpy.array(
                [point['obstacle_x'], point['obstacle_y'], point['obstacle_z']]),
            normal=numpy.array([point['normal_x'], point['normal_y'], point['normal_z']]),
            error_bound=float(point['error_bound']),
            age=float(point['age']),
            ready=bool(point['ready']),
            swept_distance=float(point['swept_distance']),
            swept_fraction=float(point['swept_fraction']),
            closing_speed=float(point['closing_speed']),
            time_to_contact=float(point['time_to_contact']),
        ))
    return records
