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
The node's outputs, except ``/diagnostics`` (``diagnostics.py``).

``~/distances``, ``~/self_distances``, ``~/min_distance``, ``~/names`` and ``~/markers``.

``make_cloud`` and ``min_distance`` are pure functions of a record array; ``Outputs`` owns the
publishers. ``~/markers`` is built by ``gjk_ros.ros.markers.MarkerBuilder``.
"""

import json
import math
import sys
import time

from gjk_ros.ros.markers import MarkerBuilder
from gjk_ros.ros.qos import LATCHED_QOS, OUTPUT_QOS
from gjk_ros.ros.records import PairStatus, RECORD_DTYPE, RECORD_FIELDS, status_table
import numpy
from sensor_msgs.msg import PointCloud2, PointField
from std_msgs.msg import Float64, String
from visualization_msgs.msg import MarkerArray

__all__ = ['make_cloud', 'min_distance', 'Outputs']

# ~/markers is for eyes: at most this rate, whatever rate_hz is.
MARKERS_PERIOD = 0.1


# Built once: 17 PointField constructions per cycle were a tenth of the node's Python time.
_FIELDS = [PointField(name=name, offset=RECORD_DTYPE.fields[name][1], datatype=datatype,
                      count=1) for name, datatype in RECORD_FIELDS]


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
    cloud.fields = _FIELDS
    cloud.is_bigendian = sys.byteorder == 'big'
    cloud.point_step = RECORD_DTYPE.itemsize
    cloud.row_step = cloud.point_step * cloud.width
    cloud.data = records.tobytes()
    cloud.is_dense = bool((records['status'] == PairStatus.VALID).all())
    return cloud


def min_distance(records, ready=True, max_distance=math.inf, allow_no_obstacles=False):
    """
    Smallest signed distance over the records, fail-safe: anything unknown is contact.

    Parameters
    ----------
    records : (r,) RECORD_DTYPE array
        This cycle's records.
    ready : bool
        False while the node cannot vouch for its scope (no robot model, a link without a
        transform, a silent required source, parameter bodies not built): the result is -inf.
    max_distance : float
        A BEYOND record is at least this far (its bounding spheres are farther apart), so it
        counts as this lower bound, never as +inf.
    allow_no_obstacles : bool
        Whether an empty scope (no record) may read +inf; otherwise it is -inf.

    Returns
    -------
    float
        -inf if not ready or if any record is STALE, INVALID or PENDING; else the minimum of
        VALID distances, APPROXIMATE ``distance - error_bound`` and BEYOND ``max_distance``;
        with no record, +inf if ``allow_no_obstacles`` else -inf.

    """
    status = records['status']
    if not ready or _UNKNOWN[status].any():
        return -math.inf
    if not len(records):
        return math.inf if allow_no_obstacles else -math.inf
    approximate = status == PairStatus.APPROXIMATE
    values = numpy.concatenate([
        records['distance'][status == PairStatus.VALID],
        records['distance'][approximate] - records['error_bound'][approximate],
        numpy.full(int((status == PairStatus.BEYOND).sum()), max_distance),
    ])
    return float(values.min())


# Statuses that carry no measurement and no bound: unknown is treated as contact.
_UNKNOWN = status_table([PairStatus.STALE, PairStatus.INVALID, PairStatus.PENDING])


class Outputs:
    """
    The publishers of one node, and what each cycle publishes.

    Parameters
    ----------
    node : rclpy.node.Node
        Creates the publishers (names relative to the node: ``~/...``).

    """

    def __init__(self, node):
        self.distances = node.create_publisher(PointCloud2, '~/distances', OUTPUT_QOS)
        self.self_distances = node.create_publisher(PointCloud2, '~/self_distances',
                                                    OUTPUT_QOS)
        self.names = node.create_publisher(String, '~/names', LATCHED_QOS)
        self.min_distance = node.create_publisher(Float64, '~/min_distance', OUTPUT_QOS)
        self.markers = node.create_publisher(MarkerArray, '~/markers', OUTPUT_QOS)
        self._builder = MarkerBuilder()
        self._last_markers = -math.inf
        self._config = None

    def configure(self, config):
        self._config = config

    def publish_names(self, names):
        """``~/names``: the id -> name tables (latched)."""
        self.names.publish(String(data=json.dumps(names)))

    def publish(self, records, self_mask, ready, header):
        """One cycle's clouds and fail-safe minimum, all with the same header."""
        config = self._config
        self.distances.publish(make_cloud(records[~self_mask], header))
        if config.self_collision:
            self.self_distances.publish(make_cloud(records[self_mask], header))
        counted = records if config.self_collision_in_min_distance else records[~self_mask]
        self.min_distance.publish(Float64(data=min_distance(
            counted, ready, config.max_distance, config.allow_no_obstacles)))

    def publish_markers(self, records, self_mask, header, views):
        """
        ``~/markers``, for eyes: at most every MARKERS_PERIOD, and only when someone listens.

        ``views()`` gives the PieceViews of the pieces in use; it is called only when the
        markers are published.
        """
        monotonic = time.monotonic()
        if not self._config.publish_markers or \
                monotonic - self._last_markers < MARKERS_PERIOD or \
                not self.markers.get_subscription_count():
            return
        self._last_markers = monotonic
        self.markers.publish(self._builder.build(records[~self_mask], header, views(),
                                                 self._config.max_distance))
