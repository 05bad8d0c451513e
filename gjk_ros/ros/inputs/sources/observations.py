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

As in Nav2's collision monitor, each name in ``observation_sources`` is a source configured
by its own ``<name>.*`` parameters (``observation_settings``): a
``sensor_msgs/PointCloud2`` or ``sensor_msgs/LaserScan`` topic, its QoS, timeout, range and
height limits and voxel size.

**A cloud** is processed on a background thread (the compiled kernels release the GIL, so the
cycle never waits for a cloud), in one pass over the message's bytes and two over its points
(``gjk_ros.core.point_grid``): non-finite points skipped, range limits, placement in
``fixed_frame`` with TF at its stamp, height limits, voxel downsampling, binning into a grid;
then the self-filter drops the points within ``self_filter_padding`` of a link piece (the
robot's own pieces posed at the stamp: robot_body_filter's job), visiting only the grid cells
near each piece. The filtered cloud can be republished (``<name>.publish_filtered``).

**The obstacle** is one body named after the source, whose pieces are single cloud points
(a point is a convex set): one per link piece, the cloud point nearest to that piece, found
each cycle with the link poses the cycle uses. The search answers in full (distance, witness
on the link piece, the point, normal: ``gjk_ros.core.point_grid.PointGrid.nearest``, exact for
the piece's shape and sweep radius), and those answers are the pair's measurement: the slot
(``NearestPoints``) carries them, and the pair tracker takes them instead of measuring the
point again (``gjk_ros.ros.compute.pairs``). A link piece's answer is used only for the very
shape and pose it was searched with; for another (a link the planning scene scales), the
same cloud is searched again with them (``CloudAnswers.measure``). The minimum of a (link,
source) pair is attained at the point nearest to the link, and every other point in the set
is a real cloud point, never nearer. The search is pruned by exact lower bounds; the same
cloud and pose give the same answer without a search, and a moved piece starts from its last
nearest point (in a new cloud, from the point nearest to it in its grid cell).

**Latest wins**: a cloud that arrives while another waits for its transforms or its
processing replaces the newer waiting one; each source counts the clouds received, used,
superseded (dropped unprocessed), refused and lost on the way (sequence gaps), in its
``status`` (``/diagnostics``).

**Freshness** (fail-safe): a source is silent when its last used cloud's stamp is older than
``<name>.source_timeout``, or its latest cloud cannot be placed (no TF at its stamp, a link
without a pose at its stamp for the self-filter, a stamp no header can carry, refused by a
limit); then its pairs are STALE and, once it was heard (or when it is required),
``~/min_distance`` is -inf. A fresh cloud with no point left is "nothing in range": the source
has no piece and no pair.
"""

import array
import collections
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
import time

from gjk_ros.core.point_distance import PointDistanceShape
from gjk_ros.core.point_grid import CloudGatherer, PointGrid
from gjk_ros.core.point_tracking import NearestTracker, PackedShapes
from gjk_ros.ros.compute.bodies import OBSTACLE
from gjk_ros.ros.compute.pairs import ENGINE_THREADS
from gjk_ros.ros.inputs.draining import take_waiting
from gjk_ros.ros.inputs.model_imports import load_models
from gjk_ros.ros.inputs.sources.base import (PieceKey, Source, source_valid, SourcePiece,
                                             SourceStatus)
from gjk_ros.ros.inputs.sources.clouds import (decode_laserscan, decode_pointcloud2,
                                               read_cloud_header)
from gjk_ros.ros.inputs.sources.nearest_points import (Cloud, CloudAnswers, LinkPart,
                                                       NearestPoints, PreparedShapes,
                                                       TRACKING_CAPACITY, TRACKING_MARGIN)
from gjk_ros.ros.inputs.sources.observation_settings import source_parameter_specs
from gjk_ros.ros.inputs.tf_buffer import TfStatus
from gjk_ros.ros.inputs.timekeeping import stamp_problem, UNKNOWN
import numpy

__all__ = ['CloudCounts', 'CloudLimits', 'filtered_cloud_message', 'make_observation_sources',
           'ObservationSource', 'process_cloud', 'SequenceGaps', 'subscription_qos']

DECODERS = {'pointcloud': decode_pointcloud2, 'scan': decode_laserscan}


def subscription_qos(name):
    """Return the rclpy QoS profile of a ``<name>.qos`` value."""
    from rclpy.qos import (qos_profile_sensor_data, qos_profile_system_default, QoSProfile,
                           ReliabilityPolicy)
    if name == 'reliable':
        return QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
    if name == 'system_default':
        return qos_profile_system_default
    return qos_profile_sensor_data


def _drain_limit(subscription):
    """Most messages one callback takes: its reader queue's depth (a keep-all queue, 10)."""
    depth = subscription.qos_profile.depth
    return depth if depth > 0 else 10


def make_observation_sources(config, context):
    """Make the sources of ``observation_sources``; log each unusable one with its reason."""
    sources = []
    for settings in config.observations:
        if not settings.topic.strip('/'):
            reason = "observation source '%s': %s.topic is not set; the source is not " \
                'subscribed' % (settings.name, settings.name)
            context.problems.report(('observation_sources', settings.name), reason)
            continue
        sources.append(ObservationSource(settings, context))
    return sources


@dataclass(frozen=True)
class CloudCounts:
    """
    Clouds of one source since it started: received, used, superseded, refused, lost.

    Latest wins: a cloud replaced by a newer one before it was processed is superseded. The
    rest are on their way (waiting for transforms, or being processed). Lost clouds were sent
    and never received (``SequenceGaps``).
    """

    received: int = 0
    used: int = 0
    superseded: int = 0
    refused: int = 0
    lost: int = 0


class SequenceGaps:
    """
    Messages a publisher sent that never arrived, from its ``publication_sequence_number``.

    rmw numbers each publisher's messages 1, 2, 3, ... (the subscription's message info); a
    jump from n to n + k means k - 1 messages were lost on the way (dropped by the transport,
    or overwritten in the reader's queue) (docs/transport.md). rclpy's message info does not
    say which publisher sent a message, so gaps are counted only while the topic has one
    publisher (a camera driver); with several, or when the number goes back (a publisher
    restarted), counting starts again at the next message. 0 means the RMW does not number.
    """

    def __init__(self):
        self._last = None

    def lost(self, sequence, publishers):
        """Return how many messages were lost just before the one numbered ``sequence``."""
        last, self._last = self._last, sequence if sequence and publishers == 1 else None
        if self._last is None or last is None or sequence <= last:
            return 0
        return sequence - last - 1


class ObservationSource(Source):
    """
    One entry of ``observation_sources``; see the module docstring.

    Parameters
    ----------
    settings : ObservationSettings
        Its ``<name>.*`` parameters at start-up.
    context : SourceContext
        The problem log (refusals by name), the clocks (receive times; a jump back forgets
        the cloud), the meshes' convex parts and the world's link pieces (the self-filter
        and the nearest points measure what the layout measures).

    """

    def __init__(self, settings, context):
        super().__init__(settings.name, context)
        self.settings = settings
        self.kind, self.topic = settings.kind, settings.topic
        self._config = None
        self._filtered = None       # publisher of the self-filtered cloud
        # Raw messages not used yet, oldest first: at most one waiting for its transforms and
        # the newest (latest wins), so clouds faster than TF never starve each other.
        self._pending = []
        self._job = None            # the background processing of one cloud
        self._job_geometry = None   # the link pieces that cloud is self-filtered against
        self._subscription = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix='gjk_%s' % self.name)
        # Load the compiled kernels now, off the cycle, so the first cloud is not slowed.
        self._pool.submit(_load_kernels)
        self._gatherer = CloudGatherer()  # used by the one background thread only
        self.cloud = None           # the last cloud used (Cloud)
        self._heard = None          # receive time of the latest message
        self.failure = None         # why the latest message could not be used
        self._shapes = PreparedShapes()
        self._pieces = _Pieces(())  # the link pieces as the last cycle saw them
        self._pieces_made_from = None  # (the world's link pieces, decomposer version) of those
        self._frames = None         # the node's Frames (the cycle hands them over)
        self._answers = None        # CloudAnswers of this cycle
        self.counts = CloudCounts()
        self._gaps = SequenceGaps()
        self._mismatched = None     # the cloud refused for its link geometry
        self._placed = None         # _Placed: what the point pieces were placed for
        self._data = NearestPoints()
        self.process_times = []
        context.clocks.on_jump_back(self._forget_heard)

    @classmethod
    def parameter_specs(cls, name):
        return source_parameter_specs(name)

    # -- input ---------------------------------------------------------------------------------

    def subscribe(self, node):
        from sensor_msgs.msg import LaserScan, PointCloud2
        message = PointCloud2 if self.kind == 'pointcloud' else LaserScan
        self._subscription = self._subscribe(node, message, self.topic,
                                             self._on_message_with_info,
                                             subscription_qos(self.settings.qos), raw=True)

    def _on_message_with_info(self, data, info):
        """
        Take this cloud and those waiting behind it; use the newest (the subscription's callback).

        Latest wins (``draining.py``): the executor hands a callback one message per wait, so
        while the cycle is slower than the camera the reader queue would hold clouds ever older;
        the older ones are superseded here, unprocessed. Every one counts towards the sequence
        gaps, so only clouds that never arrived count as lost.
        """
        waiting = [(data, info)]
        if self._subscription is not None:
            waiting += take_waiting(self._subscription, _drain_limit(self._subscription),
                                    with_info=True)
        publishers = self._node.count_publishers(self.topic)
        for _, each in waiting:
            lost = self._gaps.lost(each.get('publication_sequence_number', 0), publishers)
            if lost:
                self._count(lost=lost)
        self._count(received=len(waiting) - 1, superseded=len(waiting) - 1)
        self.on_message(waiting[-1][0])

    def configure(self, config):
        # type, topic and qos cannot change at run time (node_parameters refuses them).
        self._config = config
        self.settings = next(settings for settings in config.observations
                             if settings.name == self.name)

    def on_message(self, data):
        """Keep the latest raw message (latest wins); refuse an oversize one by name."""
        self._heard = self._context.clocks.now_ns()
        self._count(received=1)
        limit = self._config.observation_max_bytes
        if len(data) > limit:
            self._count(refused=1)
            self._refuse('a %d-byte message exceeds observation_max_bytes (%d)'
                         % (len(data), limit))
            return
        # Latest wins: the oldest waits for its transforms, a newer one replaces the newest.
        self._count(superseded=len(self._pending[1:]))
        self._pending = self._pending[:1] + [data]
        if self._job is None and self._frames is not None:
            # Idle: start now rather than at the next cycle (the callback and the cycle share
            # the executor thread, so the frames and link pieces are the cycle's own).
            self._start_job(self._frames, self._pieces)

    def _count(self, **added):
        totals = {name: getattr(self.counts, name) + value for name, value in added.items()}
        self.counts = replace(self.counts, **totals)

    def _refuse(self, reason):
        self.failure = reason
        self._context.problems.report(
            ('input', self.name), "observation source '%s' (%s): %s; its pairs are STALE"
            % (self.name, self.topic, reason), level='warning')

    def _accept(self):
        self.failure = None
        self._context.problems.resolve(('input', self.name),
                                       "observation source '%s' usable again" % self.name)

    # -- each cycle ----------------------------------------------------------------------------

    def collect(self, now_ns, frames):
        """Take a finished cloud, start the next one, and place the nearest points."""
        self._finish_job()
        self._frames = frames
        self._pieces = pieces = self._current_pieces()
        if self._job is None:
            self._start_job(frames, pieces)
        self._place_nearest(frames, pieces, now_ns)
        cloud = self.cloud
        count = len(self._data.pieces)
        return replace(
            self._data,
            times=numpy.full(count, UNKNOWN if cloud is None else cloud.stamp_ns, numpy.int64),
            stale=numpy.full(count, self._silent_reason(now_ns) is not None),
            not_ready=self._not_ready(now_ns),
            nearest=None if not count else self._answers)

    def status(self, now_ns):
        heard = {} if self.cloud is None else {'observation:%s' % self.name: self.cloud.stamp_ns}
        return SourceStatus(heard=heard, counts=self.counts)

    def close(self):
        super().close()
        self._subscription = None
        if self._filtered is not None:
            self._node.destroy_publisher(self._filtered)
            self._filtered = None
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _finish_job(self):
        if self._job is None or not self._job.done():
            return
        job, self._job = self._job, None
        try:
            cloud, seconds = job.result()
        except Exception as error:  # noqa: B902 -- any failure refuses the cloud (fail-safe)
            self._count(refused=1)
            self._refuse(str(error) if isinstance(error, ValueError)
                         else '%s: %s' % (type(error).__name__, error))
            return
        self.process_times = (self.process_times + [seconds])[-100:]
        limit = self._config.observation_max_time
        if seconds > limit:
            self._count(refused=1)
            self._refuse('a cloud took %.3f s, more than observation_max_time (%g s)'
                         % (seconds, limit))
            return
        cloud.geometry = self._job_geometry
        self.cloud = cloud
        self._count(used=1)
        self._accept()
        self._publish_filtered(cloud)

    def _publish_filtered(self, cloud):
        """Republish the self-filtered cloud when asked and someone listens."""
        if not self.settings.publish_filtered or self._node is None:
            return
        if self._filtered is None:
            from sensor_msgs.msg import PointCloud2
            from gjk_ros.ros.qos import OUTPUT_QOS
            self._filtered = self._node.create_publisher(
                PointCloud2, '~/%s/filtered' % self.name, OUTPUT_QOS)
        if self._filtered.get_subscription_count():
            self._filtered.publish(filtered_cloud_message(cloud, self._config.fixed_frame))

    def _start_job(self, frames, pieces):
        """Process the newest message that can be placed at its stamp, dropping older ones."""
        for index in reversed(range(len(self._pending))):
            placed = self._placed_at_stamp(self._pending[index], frames, pieces)
            if placed == 'wait':
                continue
            del self._pending[:index + 1]
            self._count(superseded=index, refused=int(placed is None))  # older: superseded
            if placed is not None:
                data, header, transform, poses = placed
                self._job = self._pool.submit(process_cloud, DECODERS[self.kind], data, header,
                                              transform, None,
                                              CloudLimits(self._config, self.settings),
                                              self._gatherer, pieces.packed(self._shapes), poses,
                                              self._last_nearest(pieces))
                self._job_geometry = pieces.geometry
            return

    def _last_nearest(self, pieces):
        """Each piece's nearest point in the cloud placed last, (k, 3); None if another robot."""
        placed = self._placed
        if placed is None or placed.cloud.geometry != pieces.geometry:
            return None
        return placed.cloud.points[placed.nearest]

    def _placed_at_stamp(self, data, frames, pieces):
        """
        Return (data, header, transform, poses) of a message, 'wait' or None.

        'wait': for TF; None: refused. ``poses`` (k, 4, 4) are the link pieces' at the stamp,
        as the self-filter takes them.
        """
        try:
            header = read_cloud_header(data)
        except ValueError as error:
            self._refuse('malformed message: %s' % error)
            return None
        if stamp_problem(header.stamp_ns) is not None:
            self._refuse('its %s' % stamp_problem(header.stamp_ns))
            return None
        cloud_frame = header.frame_id or self._config.fixed_frame
        transform = self._at_stamp(cloud_frame, frames.lookup_at([cloud_frame],
                                                                 header.stamp_ns)[cloud_frame])
        if not isinstance(transform, numpy.ndarray):
            return transform
        # The links' chains share their edges: one lookup for all, at the stamp.
        lookups = frames.lookup_at(pieces.frames, header.stamp_ns)
        frame_poses = numpy.empty((len(pieces.frames), 4, 4))
        for index, frame in enumerate(pieces.frames):
            pose = self._at_stamp(frame, lookups[frame])
            if not isinstance(pose, numpy.ndarray):
                return pose
            frame_poses[index] = pose
        return data, header, transform, numpy.matmul(frame_poses[pieces.frame_index],
                                                     pieces.origins)

    def _at_stamp(self, frame, lookup):
        """T(fixed_frame <- frame) of a lookup at a message stamp, 'wait' for it, or None."""
        if lookup.status == TfStatus.OK:
            return lookup.matrix
        if lookup.status == TfStatus.EXTRAPOLATION and not lookup.past:
            return 'wait'  # the transform has not arrived yet: try again next cycle
        # The self-filter needs every link at the stamp too: without it, no cloud is used.
        self._refuse("frame '%s' has no transform at the stamp: %s" % (frame, lookup.reason))
        return None

    def _current_pieces(self):
        """
        Return the link pieces as ``_Pieces``, made anew only when they may have changed.

        The world hands out the same list of link pieces while nothing in it changed, and the
        decomposer's version says when parts arrived.
        """
        links, version = self._context.world.link_pieces(), self._context.decomposer.version
        made = self._pieces_made_from
        if made is None or made[0] is not links or made[1] != version:
            self._pieces = self._pieces.again(self._link_pieces(links))
            self._pieces_made_from = (links, version)
        return self._pieces

    def _link_pieces(self, links):
        """Every link piece as the layout measures it (its convex parts, each a ``_Part``)."""
        fixed = self._config.fixed_frame
        parts = []
        for link in links:
            piece = link.piece
            frame, origin = link.frame, link.origin
            if frame is None:  # not placed by its source yet: where it was built
                frame, origin = piece.frame_id.lstrip('/') or fixed, piece.origin
            shapes = self._context.decomposer.parts_for(piece) or [piece.shape]
            parts += [_Part(LinkPart(link.name, link.key, index), frame, origin, shape)
                      for index, shape in enumerate(shapes)]
        return parts

    def _place_nearest(self, frames, pieces, now_ns):
        """
        Each link piece's nearest cloud point becomes (or moves) one point piece.

        One compiled call for every piece (``NearestTracker.nearest``); Python's work here is
        a constant number of array operations and one lookup per distinct frame.
        """
        cloud = self.cloud
        if cloud is None or not len(cloud):
            self._placed, self._answers = None, None
            if self._data.pieces:
                self._data = NearestPoints()
            return
        if cloud.geometry != pieces.geometry:
            # Filtered against other link pieces (the robot arrived or changed meanwhile):
            # its own points may still be in it, so it is not searched; the points placed
            # before stay, STALE, until a cloud filtered against these pieces arrives.
            if self._mismatched is not cloud:
                self._mismatched = cloud
                self._count(refused=1)
            self._answers = None
            self._refuse('its cloud was self-filtered against other link geometry (the robot '
                         'changed); waiting for the next cloud')
            return
        lookups = frames.lookup_latest(pieces.frames, now_ns)
        # The poses as the layout composes them (Frames.pose_pieces), so that the pair
        # tracker finds the very pose each answer was searched with.
        frame_poses = numpy.tile(numpy.eye(4), (len(pieces.frames), 1, 1))
        frame_ok = numpy.zeros(len(pieces.frames), dtype=bool)
        for index, frame in enumerate(pieces.frames):
            if lookups[frame].status == TfStatus.OK:
                frame_poses[index], frame_ok[index] = lookups[frame].matrix, True
        poses = numpy.matmul(frame_poses[pieces.frame_index], pieces.origins)
        ok = frame_ok[pieces.frame_index]
        tracker = cloud.tracker
        # A piece without a pose takes its cloud point at the stamp (any kept point is
        # harmless: the link's pairs are STALE meanwhile).
        poses[~ok] = tracker.anchors[~ok]
        placed = self._placed
        hints = placed.nearest if placed is not None and placed.cloud is cloud else \
            numpy.full(len(pieces.keys), -1, dtype=numpy.int64)
        rows, nearest = tracker.nearest(poses, hints, _search_submit())
        self._answers = CloudAnswers(cloud, pieces.slots, pieces.shapes, poses, rows, nearest,
                                     ok, self._shapes)
        if placed is None or placed.cloud is not cloud or \
                not numpy.array_equal(placed.nearest, nearest):
            self._placed = _Placed(cloud, nearest)
            self._data = self._points(pieces, nearest)

    def _points(self, pieces, nearest):
        """Return the slot: one point piece per link piece, at its nearest cloud point."""
        fixed = self._config.fixed_frame
        slot = self._data.pieces
        keys = pieces.sorted_keys
        if [entry.key.item for entry in slot] != keys:
            load_models()  # one whole import, whatever thread (model_imports.py)
            from gjk_ros.models.pieces import CollisionPiece
            point = CollisionPiece(self.name, fixed, numpy.eye(4), _point_shape(),
                                   'nearest point of %s' % self.name)
            slot = tuple(SourcePiece(OBSTACLE, self.name, PieceKey(self.name, key), point)
                         for key in keys)
        origins = numpy.tile(numpy.eye(4), (len(keys), 1, 1))
        origins[:, :3, 3] = self.cloud.points[nearest[pieces.order]]
        return NearestPoints(slot, (fixed,) * len(keys), origins)

    # -- freshness -----------------------------------------------------------------------------

    def _silent_reason(self, now_ns):
        if self.failure is not None:
            return self.failure
        if self.cloud is None:
            return 'has not published' if self._heard is None else 'no cloud usable yet'
        timeout = self.settings.source_timeout
        if not source_valid(self.cloud.stamp_ns, now_ns, timeout):
            # No live age in the text: the reason stays one problem while it lasts.
            return 'silent: last cloud older than %s.source_timeout (%g s)' % (self.name, timeout)
        return None

    def _not_ready(self, now_ns):
        """Silent after being heard, or required and silent: the minimum cannot be vouched."""
        reason = self._silent_reason(now_ns)
        required = self.name in self._config.required_observation_sources
        if reason is None or (self._heard is None and self.cloud is None and not required):
            return ()
        return ("observation source '%s' %s" % (self.name, reason),)

    def _forget_heard(self):
        """
        ROS time jumped back: the source counts as unheard, its cloud as never had.

        The clouds received before the jump go too, waiting or being processed (superseded):
        stamped in the old time, one would count as fresh until the new time passed its stamp.
        """
        self._heard = None
        self.cloud = None
        self._count(superseded=len(self._pending) + int(self._job is not None))
        self._pending = []
        if self._job is not None:
            self._job.cancel()
            self._job = None


_Part = collections.namedtuple('_Part', 'key frame origin shape')
# The nearest points placed: the cloud and each link piece's point index.
_Placed = collections.namedtuple('_Placed', 'cloud nearest')


class _Pieces:
    """
    The link pieces of one arrangement, as arrays: made once while the pieces stay.

    ``geometry`` identifies them (a cloud is self-filtered against one arrangement);
    ``frames`` are the distinct frames, ``frame_index`` and ``origins`` place each piece as
    ``Frames.pose_pieces`` does; ``slots`` maps a ``LinkPart`` to its row; ``sorted_keys``
    and ``order`` are the slot's order of the point pieces.
    """

    def __init__(self, parts):
        self.parts = tuple(parts)
        self.geometry = tuple((part.key, id(part.shape)) for part in self.parts)
        self.keys = [part.key for part in self.parts]
        self.shapes = tuple(part.shape for part in self.parts)
        self.frames = sorted({part.frame for part in self.parts})
        where = {frame: index for index, frame in enumerate(self.frames)}
        self.frame_index = numpy.array([where[part.frame] for part in self.parts],
                                       dtype=numpy.int64)
        self.origins = numpy.array([part.origin for part in self.parts],
                                   dtype=numpy.float64).reshape(-1, 4, 4)
        self.slots = {key: index for index, key in enumerate(self.keys)}
        self.order = numpy.array(sorted(range(len(self.keys)), key=lambda k: repr(self.keys[k])),
                                 dtype=numpy.int64)
        self.sorted_keys = [self.keys[k] for k in self.order]
        self._packed = None

    def again(self, parts):
        """Return self when ``parts`` are the same pieces at the same places, else new ones."""
        if len(parts) == len(self.parts) and all(
                new.key == old.key and new.shape is old.shape and new.frame == old.frame and
                numpy.array_equal(new.origin, old.origin)
                for new, old in zip(parts, self.parts)):
            return self
        return _Pieces(parts)

    def packed(self, prepared):
        """Return the shapes prepared for point distances, in flat arrays; made once."""
        if self._packed is None:
            self._packed = PackedShapes([prepared.prepared(shape) for shape in self.shapes])
        return self._packed


_HELPER = []


def _search_submit():
    """
    Return the helper thread's ``submit`` for a search, or None: the cycle's thread alone.

    A helper searches beside the cycle's thread where the pair engine's worker does (this
    process may run on two cores): pinned to one, it could only take turns with it.
    """
    return _search_helper().submit if ENGINE_THREADS > 1 else None


def _search_helper():
    """
    Return the one thread that searches half of a cloud's pieces beside the cycle's thread.

    Shared by every source: the cycle collects them one after the other.
    """
    if not _HELPER:
        _HELPER.append(ThreadPoolExecutor(1, thread_name_prefix='gjk_cloud_search'))
    return _HELPER[0]


def _load_kernels():
    """Run the cloud kernels once on a few points (loads them from numba's cache)."""
    from gjk_ros.core import ConvexPolytope
    box = PointDistanceShape(ConvexPolytope.box([0.1, 0.1, 0.1]))
    record = numpy.zeros(8, dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('i', '<f4')])
    gatherer = CloudGatherer()
    for columns in ((record['x'], record['y'], record['z']), (numpy.zeros(8),) * 3):
        points, bounds = gatherer.gather(*columns, numpy.eye(4), (0.0, numpy.inf),
                                         (-numpy.inf, numpy.inf))
        tracker = NearestTracker(PointGrid(points, bounds=bounds, sort=False),
                                 PackedShapes([box]))
        tracker.filter_and_anchor(numpy.eye(4)[None], 0.01)
        tracker.nearest(numpy.eye(4)[None], numpy.zeros(1, dtype=numpy.int64))
        tracker.grid.nearest(box, numpy.eye(4), hint=0)
        tracker.grid.kept()


class CloudLimits:
    """What the background processing needs from the Config (read once per cloud)."""

    def __init__(self, config, settings):
        self.max_points = config.observation_max_points
        self.ranges = (settings.min_range, settings.max_range)
        self.heights = (settings.min_height, settings.max_height)
        self.voxel = settings.voxel_size
        self.padding = config.self_filter_padding


def process_cloud(decode, data, header, transform, links, limits, gatherer, packed=None,
                  poses=None, near=None):
    """
    Decode, limit, place, downsample, self-filter and anchor one cloud (background thread).

    Two compiled calls, which release the GIL: the pass over the message's points
    (``CloudGatherer.gather``), then sorting, self-filter and the tracker's candidates of
    every piece (``NearestTracker.filter_and_anchor``); Python's work between them does not
    depend on the number of points or pieces.

    Parameters
    ----------
    decode : callable
        ``decode_pointcloud2`` or ``decode_laserscan``.
    data : bytes
        The serialized message.
    header : CloudHeader
        Its header (read before: the transforms are looked up at its stamp).
    transform : (4, 4) float
        fixed_frame <- the message's frame, at its stamp.
    links : list of (PointDistanceShape, (4, 4) float), or None
        The link pieces and their poses at the stamp; None with ``packed`` and ``poses``
        (the same, as arrays: what a source passes).
    limits : CloudLimits
        The source's limits.
    gatherer : CloudGatherer
        The source's (one cloud at a time).
    packed : PackedShapes, optional
        The link pieces' shapes.
    poses : (k, 4, 4) float, optional
        Their poses at the stamp.
    near : (k, 3) float, optional
        Each piece's nearest point in the last cloud (NaN: none): a first bound for its
        search in this one.

    Returns
    -------
    tuple of (Cloud, float)
        The cloud and the seconds it took.

    """
    if packed is None:
        packed = PackedShapes([shape for shape, _ in links])
        poses = numpy.array([pose for _, pose in links]).reshape(-1, 4, 4)
    packed.fields(limits.padding)  # once per shapes and padding: not the cloud's time
    started = time.perf_counter()
    _, columns, count = decode(data)
    if count > limits.max_points:
        raise ValueError('a cloud of %d points exceeds observation_max_points (%d)'
                         % (count, limits.max_points))
    points, bounds = gatherer.gather(*columns, transform, limits.ranges, limits.heights,
                                     limits.voxel)
    tracker = NearestTracker(PointGrid(points, bounds=bounds, sort=False), packed,
                             TRACKING_MARGIN, TRACKING_CAPACITY)
    removed = tracker.filter_and_anchor(poses, limits.padding, near)
    return Cloud(tracker, header.stamp_ns, removed, count), time.perf_counter() - started


def filtered_cloud_message(cloud, frame_id):
    """Return a PointCloud2 of the kept points (float32 x, y, z in ``frame_id``, its stamp)."""
    from sensor_msgs.msg import PointCloud2, PointField
    message = PointCloud2()
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(cloud.stamp_ns, 10 ** 9)
    kept = cloud.grid.kept().astype(numpy.float32)
    message.height, message.width = 1, len(kept)
    message.fields = [PointField(name=axis, offset=4 * index, datatype=PointField.FLOAT32,
                                 count=1) for index, axis in enumerate('xyz')]
    message.is_bigendian = numpy.little_endian is False
    message.point_step, message.row_step = 12, 12 * len(kept)
    message.is_dense = True
    message.data = array.array('B', kept.tobytes())
    return message


_POINT = []


def _point_shape():
    """Return the one shape of every point piece: a single point at the piece origin."""
    if not _POINT:
        from gjk_ros.core import ConvexPolytope
        _POINT.append(ConvexPolytope.from_points(numpy.zeros((1, 3))))
    return _POINT[0]
