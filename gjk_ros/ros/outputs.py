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

"""Messages the node publishes, built from a record array (no node state here)."""

import math
import sys

from geometry_msgs.msg import Point
from gjk_ros.ros.records import PairStatus, RECORD_DTYPE, RECORD_FIELDS
import numpy
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['make_cloud', 'make_markers', 'min_distance', 'MARKER_NAMESPACE']

MARKER_NAMESPACE = 'witness_segments'

# Width of the witness segments in RViz, metres.
_LINE_WIDTH = 0.005


def make_cloud(records, header):
    """
    Pack records into a ``~/distances`` PointCloud2.

    Parameters
    ----------
    records : (r,) numpy array of RECORD_DTYPE
        One record per pair.
    header : std_msgs.msg.Header
        Frame ``fixed_frame``, stamp of the newest input used.

    Returns
    -------
    sensor_msgs.msg.PointCloud2
        height 1, width r, dense only if every record is VALID.

    """
    records = numpy.ascontiguousarray(records, dtype=RECORD_DTYPE)
    cloud = PointCloud2()
    cloud.header = header
    cloud.height = 1
    cloud.width = len(records)
    cloud.fields = [PointField(name=name, offset=RECORD_DTYPE.fields[name][1],
                               datatype=datatype, count=1)
                    for name, datatype in RECORD_FIELDS]
    cloud.is_bigendian = sys.byteorder == 'big'
    cloud.point_step = RECORD_DTYPE.itemsize
    cloud.row_step = cloud.point_step * cloud.width
    cloud.data = records.tobytes()
    cloud.is_dense = bool((records['status'] == PairStatus.VALID).all())
    return cloud


def min_distance(records):
    """
    Smallest signed distance over the records, fail-safe.

    STALE and INVALID records count as -inf (unknown is treated as contact); APPROXIMATE ones
    count as ``distance - error_bound`` (the lower end of what the truth may be); BEYOND ones
    are ignored. With no measured record the result is +inf.
    """
    status = records['status']
    if numpy.isin(status, (PairStatus.STALE, PairStatus.INVALID)).any():
        return -math.inf
    values = numpy.concatenate([
        records['distance'][status == PairStatus.VALID],
        records['distance'][status == PairStatus.APPROXIMATE]
        - records['error_bound'][status == PairStatus.APPROXIMATE],
    ])
    return float(values.min()) if values.size else math.inf


def distance_colour(distance, scale):
    """
    Colour a witness segment: red at contact, yellow at half ``scale``, green beyond.

    Parameters
    ----------
    distance : float
        Signed distance, metres.
    scale : float
        Distance shown in full green (``max_distance``, or 1 m if that is infinite).

    """
    fraction = min(max(distance / scale, 0.0), 1.0)
    red = min(1.0, 2.0 * (1.0 - fraction))
    green = min(1.0, 2.0 * fraction)
    return ColorRGBA(r=red, g=green, b=0.0, a=1.0)


def make_markers(records, header, max_distance):
    """
    Witness segments of the measured records as one LINE_LIST marker.

    One marker with per-vertex colours, always the same id: each message replaces the last,
    so no DELETE bookkeeping is needed. With nothing to show the marker is deleted.
    """
    marker = Marker(header=header, ns=MARKER_NAMESPACE, id=0, type=Marker.LINE_LIST)
    marker.pose.orientation.w = 1.0
    marker.scale.x = _LINE_WIDTH
    measured = numpy.isin(records['status'], (PairStatus.VALID, PairStatus.APPROXIMATE))
    scale = max_distance if math.isfinite(max_distance) else 1.0
    for record in records[measured]:
        colour = distance_colour(float(record['distance']), scale)
        marker.points.append(Point(x=float(record['link_x']), y=float(record['link_y']),
                                   z=float(record['link_z'])))
        marker.points.append(Point(x=float(record['obstacle_x']),
                                   y=float(record['obstacle_y']),
                                   z=float(record['obstacle_z'])))
        marker.colors += [colour, colour]
    marker.action = Marker.ADD if marker.points else Marker.DELETE
    return MarkerArray(markers=[marker])
