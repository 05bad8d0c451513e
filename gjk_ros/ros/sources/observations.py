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
Observation sources: point clouds and laser scans as obstacles, self-filtered, exact.

As in Nav2's collision monitor, each entry of ``observation_sources`` is a source with its own
topic (``sensor_msgs/PointCloud2`` or ``sensor_msgs/LaserScan``, SensorDataQoS) and timeout.

**A cloud** is placed in ``fixed_frame`` with TF at its stamp, limited in range and height, and
self-filtered (points within ``self_filter_padding`` of a link piece, the robot's own
pieces posed at the stamp, are removed: robot_body_filter's job) on a background thread:
numpy and the compiled kernels release the GIL, so the cycle never waits for a cloud.

**The obstacle** is one body named after the source, whose pieces are single cloud points
(a point is a convex set): one per link piece, the cloud point nearest to that piece, found
each cycle with the link poses the cycle uses. The pair (link, source) is then measured by the
core like any other and is exact: its minimum over these points is attained at the point
nearest to the link, and every other point in the set is a real cloud point, never nearer.
The nearest point to a piece is searched in a grid of the cloud, pruned by exact lower bounds
(``gjk_ros.core.points.PointGrid``).

**Freshness** (fail-safe): a source is silent when its last used cloud's stamp is older than
``observation_timeout``, or its latest cloud cannot be placed (no TF at its stamp, a link
without a pose at its stamp for the self-filter, refused by a limit); then its pairs are STALE
and, once it was heard (or when it is required), ``~/min_distance`` is -inf. A fresh cloud
with no point left is "nothing in range": the source has no piece and no pair.
"""

from concurrent.futures import ThreadPoolExecutor
import time

from gjk_ros.core.points import PointDistanceShape, PointGrid, points_in_ball
from gjk_ros.ros.bodies import LINK, OBSTACLE
from gjk_ros.ros.sources.base import Source
from gjk_ros.ros.sources.clouds import decode_laserscan, decode_pointcloud2, read_cloud_header
from gjk_ros.ros.tf_buffer import TfStatus
import numpy
from rclpy.qos import qos_profile_sensor_data

__all__ = ['Cloud', 'CloudLimits', 'make_observation_sources', 'nearest_point',
           'ObservationSource', 'parse_observation_sources', 'process_cloud']

DECODERS = {'pointcloud': decode_pointcloud2, 'scan': decode_laserscan}
# The names of the node's other sources (piece keys start with a source's name).
_TAKEN_NAMES = ('robot_description', 'parameters', 'obstacles', 'links')


def parse_observation_sources(entries):
    """
    Parse ``observation_sources`` entries ``'name:type:topic'``.

    Returns
    -------
    tuple of (list of (name, type, topic), list of str)
        The valid sources and one reason per rejected entry.

    """
    sources, problems, names = [], [], set()
    for entry in entries:
        parts = entry.split(':', 2)
        if len(parts) != 3 or not parts[0] or not parts[2]:
            problems.append("observation source %r: expected 'name:type:topic'" % entry)
        elif parts[1] not in DECODERS:
            problems.append("observation source '%s': type must be pointcloud or scan, got %r"
                            % (parts[0], parts[1]))
        elif parts[0] in names or parts[0] in _TAKEN_NAMES:
            problems.append("observation source '%s': the name is taken" % parts[0])
        else:
            names.add(parts[0])
            sources.append(tuple(parts))
    return sources, problems


def make_observation_sources(config, problems, clocks, frames, decomposer):
    """Make the sources of ``observation_sources``; log each rejected entry with its reason."""
    specs, reasons = parse_observation_sources(config.observation_sources)
    for reason in reasons:
        problems.report(('observation_sources', reason), reason)
    return [ObservationSource(name, kind, topic, problems, clocks, frames, decomposer)
            for name, kind, topic in specs]


class Cloud:
    """Filtered points in fixed_frame in a search grid, with their stamp and counts."""

    def __init__(self, points, stamp_ns, removed, count):
        self.points = points
        self.grid = PointGrid(points) if len(points) else None
        self.stamp_ns = stamp_ns
        self.removed = removed
        self.count = count


class ObservationSource(Source):
    """One entry of ``observation_sources``; see the module docstring."""

    def __init__(self, name, kind, topic, problems, clocks, frames, decomposer):
        super().__init__(name)
        self.kind, self.topic = kind, topic
        self._problems, self._clocks, self._frames = problems, clocks, frames
        self._decomposer = decomposer
        self._config = None
        # Raw messages not used yet, oldest first: at most one waiting for its transforms and
        # the newest (latest wins), so clouds faster than TF never starve each other.
        self._pending = []
        self._job = None            # the background processing of one cloud
        self._pool = ThreadPoolExecutor(1, thread_name_prefix='gjk_%s' % name)
        self.cloud = None           # the last cloud used (Cloud)
        self._heard = None          # receive time of the latest message
        self.failure = None         # why the latest message could not be used
        self._shapes = {}           # id(shape) -> (shape, PointDistanceShape)
        self._nearest = {}          # piece key -> index into cloud.points
        self._placed = None         # (cloud, nearest) the point pieces were placed for
        self._poses = {}            # piece key -> (cloud, pose, index) of its last search
        self.process_times = []

    # -- input ---------------------------------------------------------------------------------

    def subscribe(self, node):
        from sensor_msgs.msg import LaserScan, PointCloud2
        message = PointCloud2 if self.kind == 'pointcloud' else LaserScan
        # SensorDataQoS (best effort) matches best-effort and reliable publishers alike.
        node.create_subscription(message, self.topic, self.on_message, qos_profile_sensor_data,
                                 raw=True)

    def configure(self, config):
        # observation_sources itself cannot change at run time (node_parameters refuses it).
        self._config = config

    def on_message(self, data):
        """Keep the latest raw message (latest wins); refuse an oversize one by name."""
        received = self._clocks.now()
        self._heard = received
        limit = self._config.observation_max_bytes
        if len(data) > limit:
            self._refuse('a %d-byte message exceeds observation_max_bytes (%d)'
                         % (len(data), limit))
            return
        self._pending = self._pending[:1] + [data]

    def _refuse(self, reason):
        self.failure = reason
        self._problems.report(('input', self.name), "observation source '%s' (%s): %s; its "
                              'pairs are STALE' % (self.name, self.topic, reason),
                              level='warning')

    def _accept(self):
        self.failure = None
        self._problems.resolve(('input', self.name),
                               "observation source '%s' usable again" % self.name)

    # -- each cycle ----------------------------------------------------------------------------

    def poll(self, world, now):
        """Take a finished cloud, start the next one, and place the nearest points."""
        self._finish_job()
        if self._job is None:
            self._start_job(world)
        self._place_nearest(world, now)

    def _finish_job(self):
        if self._job is None or not self._job.done():
            return
        job, self._job = self._job, None
        try:
            cloud, seconds = job.result()
        except Exception as error:  # noqa: B902 -- any failure refuses the cloud (fail-safe)
            self._refuse(str(error) if isinstance(error, ValueError)
                         else '%s: %s' % (type(error).__name__, error))
            return
        self.process_times = (self.process_times + [seconds])[-100:]
        limit = self._config.observation_max_time
        if seconds > limit:
            self._refuse('a cloud took %.3f s, more than observation_max_time (%g s)'
                         % (seconds, limit))
            return
        self.cloud = cloud
        self._accept()

    def _start_job(self, world):
        """Process the newest message that can be placed at its stamp, dropping older ones."""
        for index in reversed(range(len(self._pending))):
            placed = self._placed_at_stamp(self._pending[index], world)
            if placed == 'wait':
                continue
            del self._pending[:index + 1]  # older ones are superseded
            if placed is not None:
                self._job = self._pool.submit(process_cloud, DECODERS[self.kind], *placed,
                                              CloudLimits(self._config))
            return

    def _placed_at_stamp(self, data, world):
        """Return (data, header, transform, links) of a message, 'wait' for TF, or None."""
        try:
            header = read_cloud_header(data)
        except ValueError as error:
            self._refuse('malformed message: %s' % error)
            return None
        transform = self._at_stamp(header.frame_id or self._config.fixed_frame, header)
        if not isinstance(transform, numpy.ndarray):
            return transform
        links = []
        for _, frame, origin, shape in self._link_pieces(world):
            pose = self._at_stamp(frame, header)
            if not isinstance(pose, numpy.ndarray):
                return pose
            links.append((pose @ origin, self._prepared(shape)))
        return data, header, transform, links

    def _at_stamp(self, frame, header):
        """T(fixed_frame <- frame) at a message stamp, 'wait' for it, or None: refused."""
        lookup = self._frames.lookup(self._config.fixed_frame, frame, header.stamp_ns)
        if lookup.status == TfStatus.OK:
            return lookup.matrix
        if lookup.status == TfStatus.EXTRAPOLATION and not lookup.past:
            return 'wait'  # the transform has not arrived yet: try again next cycle
        # The self-filter needs every link at the stamp too: without it, no cloud is used.
        self._refuse("frame '%s' has no transform at the stamp: %s" % (frame, lookup.reason))
        return None

    def _link_pieces(self, world):
        """(key, frame, origin, shape) of every link piece as the layout measures it."""
        fixed = self._config.fixed_frame
        pieces = []
        for name in world.bodies.names(LINK):
            for key, tracked in world.bodies.keyed_pieces(LINK, name):
                piece = tracked.piece
                shapes = self._decomposer.parts_for(piece) or [piece.shape]
                for index, shape in enumerate(shapes):
                    pieces.append(((name, key, index), piece.frame_id.lstrip('/') or fixed,
                                   piece.origin, shape))
        return pieces

    def _place_nearest(self, world, now):
        """Each link piece's nearest cloud point becomes (or moves) one point piece."""
        cloud = self.cloud
        if cloud is None or cloud.grid is None:
            self._nearest, self._placed, self._poses = {}, None, {}
            world.set_pieces(OBSTACLE, self.name, [])
            return
        pieces = self._link_pieces(world)
        frames = sorted({frame for _, frame, _, _ in pieces})
        lookups = self._frames.buffer.lookup_many(
            self._config.fixed_frame, frames, now_ns=int(now * 1e9),
            timeout_ns=int(self._config.tf_timeout * 1e9))
        nearest = {}
        for key, frame, origin, shape in pieces:
            lookup = lookups[frame]
            if lookup.status == TfStatus.OK:
                nearest[key] = self._nearest_point(lookup.matrix @ origin, shape, key)
            else:  # any cloud point is harmless: the link's pairs are STALE meanwhile
                nearest[key] = self._nearest.get(key, 0)
        self._poses = {key: value for key, value in self._poses.items() if key in nearest}
        if (cloud, nearest) != self._placed or set(nearest) != self._piece_keys(world):
            self._nearest, self._placed = nearest, (cloud, nearest)
            self._set_points(world)

    def _nearest_point(self, pose, shape, key):
        """Index of the cloud point nearest to one link piece at ``pose`` (exact)."""
        cloud = self.cloud
        last = self._poses.get(key)
        if last is not None and last[0] is cloud and numpy.array_equal(last[1], pose):
            return last[2]  # same cloud, same pose: the same answer
        hint = None
        if self._placed is not None and self._placed[0] is cloud:
            hint = self._nearest.get(key)  # tracking: usually still the nearest
        index = nearest_point(cloud, self._prepared(shape), pose, hint)
        self._poses[key] = (cloud, pose, index)
        return index

    def _prepared(self, shape):
        entry = self._shapes.get(id(shape))
        if entry is None or entry[0] is not shape:
            entry = (shape, PointDistanceShape(shape))
            self._shapes[id(shape)] = entry
        return entry[1]

    def _piece_keys(self, world):
        return {key[1:] for _, key in world.bodies.keys(OBSTACLE, self.name)}

    def _set_points(self, world):
        from gjk_ros.models.pieces import CollisionPiece
        fixed = self._config.fixed_frame
        entries = [(self.name, (self.name,) + key,
                    CollisionPiece(self.name, fixed, numpy.eye(4), _point_shape(),
                                   'nearest point of %s' % self.name))
                   for key in self._nearest]
        world.set_pieces(OBSTACLE, self.name, entries)
        world.moved()

    def placement(self, kind, key):
        """Place a point piece at its cloud point, in fixed_frame."""
        origin = numpy.eye(4)
        index = self._nearest.get(key[1:])
        if index is not None and self.cloud is not None and index < len(self.cloud.points):
            origin[:3, 3] = self.cloud.points[index]
        return self._config.fixed_frame, origin

    # -- freshness -----------------------------------------------------------------------------

    def _silent_reason(self, now):
        if self.failure is not None:
            return self.failure
        if self.cloud is None:
            return 'has not published' if self._heard is None else 'no cloud usable yet'
        age = now - self.cloud.stamp_ns * 1e-9
        if age > self._config.observation_timeout:
            return 'silent for %.1f s (observation_timeout %g s)' % (
                age, self._config.observation_timeout)
        return None

    def silent(self, pieces, now):
        stale = self._silent_reason(now) is not None
        return [stale] * len(pieces)

    def data_times(self, pieces):
        stamp = -numpy.inf if self.cloud is None else float(self.cloud.stamp_ns)
        return [stamp] * len(pieces)

    def not_ready(self, now):
        """Silent after being heard, or required and silent: the minimum cannot be vouched."""
        reason = self._silent_reason(now)
        required = self.name in self._config.required_observation_sources
        if reason is None or (self._heard is None and self.cloud is None and not required):
            return []
        return ["observation source '%s' %s" % (self.name, reason)]

    def ages(self, now):
        if self.cloud is None:
            return {}
        return {'observation:%s' % self.name: now - self.cloud.stamp_ns * 1e-9}

    def forget_heard(self):
        self._heard = None
        self.cloud = None

    def close(self):
        self._pool.shutdown(wait=False, cancel_futures=True)


def nearest_point(cloud, prepared, pose, hint=None):
    """
    Return the index of the cloud point nearest to a piece at ``pose`` (exact).

    Parameters
    ----------
    cloud : Cloud
        Points in fixed_frame and their search grid (not empty).
    prepared : gjk_ros.core.points.PointDistanceShape
        The piece.
    pose : (4, 4) float
        Piece-to-fixed_frame transform.
    hint : int, optional
        A point likely to be near (the last answer): it tightens the first bound.

    """
    return cloud.grid.nearest(prepared, pose, hint)[1]


class CloudLimits:
    """What the background processing needs from the Config (read once per cloud)."""

    def __init__(self, config):
        self.max_points = config.observation_max_points
        self.min_range, self.max_range = config.observation_min_range, \
            config.observation_max_range
        self.min_height, self.max_height = config.observation_min_height, \
            config.observation_max_height
        self.padding = config.self_filter_padding


def process_cloud(decode, data, header, transform, links, limits):
    """Decode, limit, place and self-filter one cloud (background thread); (cloud, seconds)."""
    started = time.perf_counter()
    _, points, count = decode(data)
    if count > limits.max_points:
        raise ValueError('a cloud of %d points exceeds observation_max_points (%d)'
                         % (count, limits.max_points))
    reach = numpy.sqrt((points * points).sum(axis=1))
    points = points[(reach >= limits.min_range) & (reach <= limits.max_range)]
    points = points @ transform[:3, :3].T + transform[:3, 3]
    points = points[(points[:, 2] >= limits.min_height) & (points[:, 2] <= limits.max_height)]
    keep = _self_filter(numpy.ascontiguousarray(points), links, limits.padding)
    cloud = Cloud(points[keep], header.stamp_ns, int((~keep).sum()), count)
    return cloud, time.perf_counter() - started


def _self_filter(points, links, padding):
    """Mask of the points farther than ``padding`` from every link piece (posed at the stamp)."""
    keep = numpy.ones(len(points), dtype=bool)
    scratch = numpy.empty(len(points), dtype=numpy.int64)
    for pose, prepared in links:
        centre = pose[:3, :3] @ prepared.center + pose[:3, 3]
        count = points_in_ball(points, centre[0], centre[1], centre[2],
                               prepared.bound + padding, scratch)
        near = scratch[:count]
        keep[near[prepared.within(points, pose, near, padding)]] = False
    return keep


_POINT = []


def _point_shape():
    """Return the one shape of every point piece: a single point at the piece origin."""
    if not _POINT:
        from gjk_ros.core import ConvexPolytope
        _POINT.append(ConvexPolytope.from_points(numpy.zeros((1, 3))))
    return _POINT[0]
