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
Marker sources: ``~/obstacles`` and ``~/links`` (``visualization_msgs/MarkerArray``).

Each marker is a body piece keyed ``(source name, ns, id)``; a ``~/links`` marker adds a piece
to the link named by its ``header.frame_id``. Semantics (docs/semantics.md):

- Marker lifetimes count from the receive time (as RViz does); a silent namespace's markers do
  not expire (they go STALE instead), so a dead publisher never makes an obstacle vanish.
- A namespace is an obstacle source with Nav2's ``source_timeout`` (``obstacle_timeout``);
  ``required_obstacle_sources`` must have published before the node is ready.
- ``frame_locked`` false places a marker in ``fixed_frame`` at its ``header.stamp``, once
  (``placement.py``); a ``~/links`` marker always moves with its link. A stamp used that way
  must be one a header can carry (``timekeeping.stamp_problem``), else the marker is rejected.
- Receive times are ROS time in integer nanoseconds: a namespace's last message is the datum
  an output may be stamped with.
- A message over the size or marker-count limits is refused whole, by topic: its namespaces
  are not refreshed and go STALE, never "clear".
- The subscriptions are reliable and volatile (``MARKER_SUBSCRIPTION_QOS``, RViz's default
  for markers): volatile and transient-local publishers match, and a large or one-shot
  MarkerArray is not lost (a best-effort subscription drops a megabyte message on loopback).
  A best-effort publisher cannot match a reliable subscription: it is reported, with the policy,
  in the log and in ``/diagnostics``. rclpy's ``qos_overrides`` parameters set the reliability,
  history and depth at start-up (best effort then matches both kinds of publisher).
"""

import collections
from dataclasses import dataclass, replace
import math

from gjk_ros.ros.compute.bodies import LINK
from gjk_ros.ros.inputs.ingestion import Mailbox
from gjk_ros.ros.inputs.jobs import lifetime_expiry, marker_count, MarkerId, MarkerRebuildJob
from gjk_ros.ros.inputs.placement import MarkerPlacement
from gjk_ros.ros.inputs.sources.base import PieceKey, Source, SourceData, SourcePiece, SourceStatus
from gjk_ros.ros.inputs.sources.freshness import SourceMonitor
from gjk_ros.ros.inputs.tf_buffer import marker_pose_matrix, TfStatus
from gjk_ros.ros.inputs.timekeeping import stamp_problem, TIMELESS, UNKNOWN
import numpy
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_policy_name_from_kind, QoSProfile,
                       ReliabilityPolicy)
from rclpy.qos_overriding_options import QoSOverridingOptions
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['MARKER_SUBSCRIPTION_QOS', 'MarkerSource']

# Reliable, as RViz subscribes to markers; volatile, so transient-local publishers match too.
MARKER_SUBSCRIPTION_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                                     durability=DurabilityPolicy.VOLATILE,
                                     history=HistoryPolicy.KEEP_LAST)
# Finished batches applied per cycle: each is a cheap update, but a burst of them must be
# spread over cycles rather than delay one.
_RESULTS_PER_CYCLE = 200


@dataclass
class _Marker:
    """
    One marker as the source holds it: its body, its geometry or why it has none, where it sits.

    ``expires``: ROS time (int ns) after which it is past its lifetime (None: never).
    ``source`` builds a mesh marker again when the mesh modes change (``jobs.MarkerSource``);
    ``mesh`` are the ``MeshSettings`` its pieces were built with.
    """

    name: str
    geometry_key: str
    placement: MarkerPlacement = None
    expires: object = None
    pieces: tuple = None
    error: str = None
    mesh_use: object = None
    source: object = None
    mesh: object = None

    @property
    def pending(self):
        return self.pieces is None and self.error is None


# A slot piece of a marker: one per piece (an exact mesh marker has many), ``ns`` first.
_MarkerPart = collections.namedtuple('_MarkerPart', 'ns id part')


def _qos_text(qos):
    return '%s, %s, %s depth %d' % (qos.reliability.name.lower(), qos.durability.name.lower(),
                                    qos.history.name.lower(), qos.depth)


class MarkerSource(Source):
    """
    One MarkerArray topic as a source of body pieces.

    Parameters
    ----------
    kind : str
        ``OBSTACLE`` for ``~/obstacles``, ``LINK`` for ``~/links``.
    context : SourceContext
        The geometry worker (decodes and builds the markers), the problem log (refusals,
        silent namespaces and placement failures are logged once) and the clocks (receive
        times; a jump back forgets them).

    """

    def __init__(self, kind, context):
        super().__init__('links' if kind == LINK else 'obstacles', context)
        self.kind = kind
        self.topic = '~/' + self.name
        self._mailbox = Mailbox()
        self._markers = {}           # MarkerId -> _Marker
        self._monitor = SourceMonitor()
        self._last_message = None    # ROS time, ns
        self._limits = (0, 0)
        self._fixed_frame = ''
        self._earliest_expiry = math.inf
        self._changed = True         # which markers there are, or their geometry
        # The markers still to place at their stamps (None: look at every marker once).
        self._unplaced = None
        self._moved = True           # where they sit
        self._data = SourceData()
        self._namespaces = ()        # per piece of the slot, its namespace's index
        self._expiries = numpy.zeros(0, dtype=numpy.int64)
        self.stale_namespaces = ()
        self.incompatible_qos = ''
        self._subscription_qos = MARKER_SUBSCRIPTION_QOS
        self._resolved_topic = self.topic
        self._mesh = None            # the MeshSettings of the node's parameters
        self._rebuild = False        # a held mesh marker was built in other settings
        self._rebuilding = False
        context.clocks.on_jump_back(self._monitor.forget_heard)

    # -- input ---------------------------------------------------------------------------------

    def subscribe(self, node):
        events = SubscriptionEventCallbacks(incompatible_qos=self.on_incompatible_qos)
        subscription = self._subscribe(
            node, MarkerArray, self.topic, self.on_message, MARKER_SUBSCRIPTION_QOS, raw=True,
            event_callbacks=events,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self._subscription_qos = subscription.qos_profile
        self._resolved_topic = subscription.topic_name

    def on_incompatible_qos(self, info):
        """Report a publisher that cannot match the subscription: none of its markers come."""
        policy = qos_policy_name_from_kind(info.last_policy_kind)
        self.incompatible_qos = '%d publisher(s) since start, last policy %s' % (
            info.total_count, policy)
        self._context.problems.report(
            ('qos', self.topic, info.total_count),
            '%s: a publisher with incompatible QoS (%s) was discovered; none of its markers are '
            'received. Subscription: %s (publish reliable, or set qos_overrides.%s.subscription'
            '.reliability)' % (self._resolved_topic, policy, _qos_text(self._subscription_qos),
                               self._resolved_topic))

    def configure(self, config):
        required = config.required_obstacle_sources if self.kind != LINK else ()
        self._monitor.configure(config.obstacle_timeout, config.static_obstacle_namespaces,
                                required)
        self._limits = (config.max_message_bytes, config.max_markers_per_message)
        if config.fixed_frame != self._fixed_frame:
            self._fixed_frame, self._moved = config.fixed_frame, True
            self._unplaced = None
        mesh = config.ingest_limits().mesh
        if mesh != self._mesh:
            self._mesh, self._rebuild = mesh, bool(self._markers)

    def on_message(self, data):
        """Raw MarkerArray bytes: checked against the limits, then to the worker."""
        received = self._context.clocks.now_ns()
        self._last_message = received
        reason = self._refusal(data)
        if reason is None and not self._context.ingestor.submit_markers(
                self.kind, data, received, self._mailbox):
            reason = 'the geometry worker is behind; a message was dropped'
        problem = ('input', self.topic)
        if reason is None:
            self._context.problems.resolve(problem, '%s: messages accepted again' % self.topic)
            return
        # Dropped whole: its namespaces are not refreshed, so their obstacles go STALE.
        self._context.problems.report(problem, '%s: %s (its sources are not refreshed)'
                                      % (self.topic, reason))

    def _refusal(self, data):
        max_bytes, max_markers = self._limits
        count = marker_count(data)
        if len(data) > max_bytes:
            return 'a %d-byte message exceeds max_message_bytes (%d)' % (len(data), max_bytes)
        if count is None:
            return 'not a serialized MarkerArray'
        if count > max_markers:
            return 'a MarkerArray of %d markers exceeds max_markers_per_message (%d)' % (
                count, max_markers)
        return None

    # -- each cycle ----------------------------------------------------------------------------

    def collect(self, now_ns, frames):
        for result in self._mailbox.take(_RESULTS_PER_CYCLE):
            if isinstance(result.job, MarkerRebuildJob):
                self._take_rebuilt(result)
            else:
                self._apply_batch(result)
        if self._rebuild and not self._rebuilding:
            self._submit_rebuild()
        self._expire(now_ns)
        self._place_at_stamps(frames)
        if self._changed:
            self._changed, self._moved = False, True
            self._monitor.forget_unused({(self.kind, marker_id.ns)
                                         for marker_id in self._markers})
            self._data = self._pieces()
        if self._moved:
            self._moved = False
            self._data = replace(self._data, **self._placements())
        return replace(self._data, **self._freshness(now_ns))

    def status(self, now_ns):
        return SourceStatus(
            heard={'%s:%s' % key: heard for key, heard in self._monitor.heard_times().items()},
            silent=tuple(self.stale_namespaces),
            topic_heard={self.name: self._last_message},
            incompatible_qos={self.topic: self.incompatible_qos} if self.incompatible_qos
            else {})

    # -- what the worker built -------------------------------------------------------------

    def _apply_batch(self, result):
        problem = ('input', self.kind, 'batch')
        if result.error is not None:
            self._context.problems.report(problem, '%s markers: %s'
                                          % (self.kind, result.error.reason))
            return
        self._context.problems.resolve(problem, '%s markers: built again' % self.kind)
        batch = result.value
        for namespace, received in batch.heard.items():
            self._monitor.heard(self.kind, namespace, received)
        for namespace in batch.clears:
            for marker_id in [marker_id for marker_id in self._markers
                              if not namespace or marker_id.ns == namespace]:
                del self._markers[marker_id]
            self._changed = True
        for op in batch.ops:
            self._apply(op, batch.mesh)

    # -- mesh modes (mesh_mode, mesh_mode_overrides, max_mesh_pieces, decompose_meshes) -------

    def _submit_rebuild(self):
        """
        Have the worker build again every held mesh marker built in other mesh settings.

        A parameter change applies to what the node holds, not only to what comes next: a
        one-shot marker is never sent again. Until rebuilt, its old pieces are measured.
        """
        self._rebuild = False
        markers = tuple((marker_id, marker.name, marker.geometry_key, marker.source)
                        for marker_id, marker in sorted(self._markers.items())
                        if marker.source is not None and marker.mesh != self._mesh)
        if markers:
            self._rebuilding = True
            self._context.ingestor.submit(MarkerRebuildJob(self.kind, markers), self._mailbox)

    def _take_rebuilt(self, result):
        self._rebuilding = False
        problem = ('input', self.kind, 'mesh_mode')
        if result.error is not None:
            self._context.problems.report(
                problem, '%s markers not built in the new mesh modes (%s); they keep their '
                'pieces until received again' % (self.kind, result.error.reason))
            return
        self._context.problems.resolve(problem)
        rebuilt = result.value
        for marker_id, key, pieces, mesh_use, error in rebuilt.markers:
            marker = self._markers.get(marker_id)
            if marker is None or marker.geometry_key != key or marker.mesh == rebuilt.mesh:
                continue  # gone, changed, or built in these settings since
            if error is not None:
                marker.pieces, marker.error, marker.mesh_use = None, error, None
            else:
                marker.pieces, marker.mesh_use = _named(pieces, mesh_use, marker.name)
                marker.error = None
            marker.mesh = rebuilt.mesh
            self._changed = True
        if rebuilt.mesh != self._mesh:
            self._rebuild = True  # the settings changed again meanwhile

    def _apply(self, op, mesh):
        """Apply one marker: delete, reject, place, or (re)build its piece (in ``mesh``)."""
        marker_id = MarkerId(op.ns, op.id)
        state = self._markers.get(marker_id)
        expires = lifetime_expiry(op.received, op.lifetime_ns)
        if op.action == Marker.DELETE:
            self._changed |= self._markers.pop(marker_id, None) is not None
            return
        self._moved, self._unplaced = True, None
        if expires is not None:
            self._earliest_expiry = min(self._earliest_expiry, expires)
        # A ~/links marker is part of its link: it always moves with it.
        frame_locked = op.frame_locked or self.kind == LINK
        error = op.error
        if error is None and not frame_locked and stamp_problem(op.stamp_ns) is not None:
            error = 'placed at its header.stamp, but the %s' % stamp_problem(op.stamp_ns)
        if error is not None:
            self._markers[marker_id] = _Marker(op.name, '', expires=expires, error=error)
            self._changed = True
            return
        placement = MarkerPlacement(op.frame_id, marker_pose_matrix(op.pose), frame_locked,
                                    op.stamp_ns)
        if state is not None and placement.same_place(state.placement):
            placement = state.placement  # keep what was resolved for it
        if op.pieces is not None:
            pieces, mesh_use = _named(op.pieces, op.mesh_use, op.name)
            self._markers[marker_id] = _Marker(op.name, op.geometry_key, placement, expires,
                                               pieces, mesh_use=mesh_use, source=op.source,
                                               mesh=mesh)
            self._rebuild |= op.source is not None and mesh != self._mesh
            self._changed = True
        elif state is not None and state.pieces is not None and state.name == op.name and \
                state.geometry_key == op.geometry_key:
            state.placement, state.expires = placement, expires
        else:
            # The worker thinks we hold this geometry and we do not (it expired meanwhile,
            # or the worker restarted): ask for it again; until then the body is PENDING.
            self._context.ingestor.forget(self.kind, op.ns, op.id)
            self._markers[marker_id] = _Marker(op.name, op.geometry_key, placement, expires)
            self._changed = True

    # -- lifetime, placement, freshness --------------------------------------------------------

    def _expire(self, now_ns):
        """
        Drop markers past their lifetime, unless their namespace was not heard since.

        RViz drops a marker when its lifetime ends. Here a marker goes only once its source has
        been heard after the lifetime ended (the source is alive and chose not to renew it);
        if the source has been silent since, the publisher may have died, and a dead publisher
        must never make an obstacle vanish: the marker stays, STALE.
        """
        if not self._earliest_expiry < now_ns:
            return  # the common case, without a scan of every marker
        for marker_id, marker in list(self._markers.items()):
            if marker.expires is None or not marker.expires < now_ns:
                continue
            heard = self._monitor.last_heard(self.kind, marker_id.ns)
            if heard is not None and heard > marker.expires:
                del self._markers[marker_id]
                self._changed = True
        self._earliest_expiry = min((marker.expires for marker in self._markers.values()
                                     if marker.expires is not None), default=math.inf)

    def _place_at_stamps(self, frames):
        """
        Try to place every unplaced, not frame-locked marker at its stamp.

        Only the markers not placed yet are visited: a thousand static obstacles cost a
        look at each once, when they arrive, not every cycle.
        """
        fixed_frame = self._fixed_frame
        if self._unplaced is None:
            self._unplaced = [marker_id for marker_id, marker in self._markers.items()
                              if _to_place(marker.placement, fixed_frame)]
        waiting = []
        for marker_id in self._unplaced:
            marker = self._markers.get(marker_id)
            if marker is None or not _to_place(marker.placement, fixed_frame):
                continue
            placement = marker.placement
            lookup = frames.lookup(fixed_frame, placement.frame_id, placement.stamp_ns)
            problem = ('placement', self.kind, marker_id)
            if lookup.status == TfStatus.OK:
                placement.placed[fixed_frame] = lookup.matrix @ placement.origin
                placement.failure = ''
                self._context.problems.resolve(problem)
                self._moved = True
                continue
            waiting.append(marker_id)
            if lookup.status != TfStatus.EXTRAPOLATION or lookup.past:
                placement.failure = lookup.reason
                self._context.problems.report(
                    problem, "%s '%s' (frame_locked false) cannot be placed at its stamp: %s; "
                    'its pairs are STALE' % (self.kind, marker.name, lookup.reason),
                    level='warning')
        self._unplaced = waiting

    def _pieces(self):
        """
        Return the slot's pieces in marker order: one per piece of each marker.

        An exact mesh marker has many pieces; a rejected or pending one, one without a piece.
        """
        ordered = sorted(self._markers.items())
        pieces = tuple(
            SourcePiece(self.kind, marker.name,
                        PieceKey(self.name, _MarkerPart(marker_id.ns, marker_id.id, part)),
                        piece, marker.error, marker.pending)
            for marker_id, marker in ordered
            for part, piece in enumerate(marker.pieces or (None,)))
        namespaces = sorted({marker_id.ns for marker_id, _ in ordered})
        index = {namespace: position for position, namespace in enumerate(namespaces)}
        self._namespaces = (tuple(namespaces), numpy.array(
            [index[entry.key.item.ns] for entry in pieces], dtype=numpy.int64))
        return SourceData(pieces)

    def mesh_uses(self):
        """Return the ``MeshUse`` of every marker that is a non-convex mesh."""
        return [marker.mesh_use for _, marker in sorted(self._markers.items())
                if marker.mesh_use is not None]

    def _placements(self):
        """Return the slot's frames and origins (frame None: not placed at its stamp yet)."""
        fixed_frame = self._fixed_frame
        pieces = self._data.pieces
        frames, origins = [], numpy.tile(numpy.eye(4), (len(pieces), 1, 1))
        expiries = numpy.full(len(pieces), TIMELESS, dtype=numpy.int64)
        for index, entry in enumerate(pieces):
            marker = self._markers[MarkerId(entry.key.item.ns, entry.key.item.id)]
            if marker.expires is not None:
                expiries[index] = marker.expires
            placement = marker.placement
            if placement is None:
                frames.append(None)
            elif placement.frame_locked or placement.frame_id == fixed_frame:
                frames.append(placement.frame_id or fixed_frame)
                origins[index] = placement.origin
            elif fixed_frame in placement.placed:
                frames.append(fixed_frame)
                origins[index] = placement.placed[fixed_frame]
            else:
                frames.append(None)
        self._expiries = expiries
        return {'frames': tuple(frames), 'origins': origins}

    def _freshness(self, now_ns):
        """
        Return the times and staleness of the slot's pieces, judged per namespace.

        A silent namespace's markers are STALE (Nav2's source_timeout, ``obstacle_timeout``),
        and so is a marker kept past its lifetime; a static namespace does not age. A
        required namespace that never published, or went silent, makes the node not ready.
        """
        monitor = self._monitor
        namespaces, of_piece = self._namespaces
        stale = numpy.array([monitor.is_stale(self.kind, namespace, now_ns)
                             for namespace in namespaces], dtype=bool)
        times = numpy.array([_namespace_time(monitor, self.kind, namespace)
                             for namespace in namespaces], dtype=numpy.int64)
        self._report_silent([namespace for namespace, silent in zip(namespaces, stale)
                             if silent])
        return {'times': times[of_piece],
                'stale': stale[of_piece] | (self._expiries < now_ns),
                'not_ready': tuple(monitor.required_problems(now_ns))}

    def _report_silent(self, stale):
        problems = self._context.problems
        current = {_Silent('source', self.kind, namespace) for namespace in stale}
        for key in current:
            problems.report(key, "%s source '%s' silent for more than obstacle_timeout (%g s); "
                            'its pairs are STALE' % (self.kind, key.namespace,
                                                     self._monitor.timeout), level='warning')
        problems.keep_only(('source', self.kind), current,
                           lambda key: "%s source '%s' publishes again" % (key.kind,
                                                                           key.namespace))
        self.stale_namespaces = sorted('%s:%s' % (self.kind, ns) for ns in stale)


def _to_place(placement, fixed_frame):
    """Whether a marker waits to be placed at its stamp in ``fixed_frame``."""
    return placement is not None and not placement.frame_locked and \
        placement.frame_id != fixed_frame and fixed_frame not in placement.placed


def _named(pieces, mesh_use, name):
    """Return the pieces and MeshUse with the body name the node gives the marker."""
    pieces = tuple(piece if piece.body == name else replace(piece, body=name)
                   for piece in pieces)
    return pieces, (mesh_use if mesh_use is None or mesh_use.body == name
                    else replace(mesh_use, body=name))


def _namespace_time(monitor, kind, namespace):
    """When a namespace was last heard (int ns); a static namespace does not age."""
    if monitor.is_static(namespace):
        return TIMELESS
    heard = monitor.last_heard(kind, namespace)
    return UNKNOWN if heard is None else heard


# A silent namespace as the problem log keys it.
_Silent = collections.namedtuple('_Silent', 'topic kind namespace')
