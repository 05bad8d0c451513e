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

from dataclasses import dataclass, replace

from gjk_ros.ros.bodies import LINK
from gjk_ros.ros.jobs import lifetime_expiry, marker_count
from gjk_ros.ros.placement import MarkerPlacement
from gjk_ros.ros.sources.base import Source
from gjk_ros.ros.sources.freshness import SourceMonitor
from gjk_ros.ros.tf_buffer import marker_pose_matrix, TfStatus
from gjk_ros.ros.timekeeping import stamp_problem, TIMELESS, UNKNOWN
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


@dataclass
class _MarkerState:
    """What the compute thread knows of one marker: its geometry and its placement."""

    name: str
    geometry_key: str
    placement: MarkerPlacement
    expires: object
    built: bool = False


def _past(state, now):
    """Whether a marker is past its lifetime (kept, STALE, while its namespace is silent)."""
    return state is not None and state.expires is not None and state.expires < now


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
    ingestor : gjk_ros.ros.ingestion.Ingestor
        Decodes and builds the markers in the geometry worker.
    problems : gjk_ros.ros.problems.ProblemLog
        Where refusals, silent namespaces and placement failures are logged once.
    clocks : gjk_ros.ros.timekeeping.NodeClocks
        Receive times (ROS time).
    frames : gjk_ros.ros.frames.Frames
        TF lookups that place ``frame_locked`` false markers at their stamp.

    """

    def __init__(self, kind, ingestor, problems, clocks, frames):
        super().__init__('links' if kind == LINK else 'obstacles')
        self.kind = kind
        self.topic = '~/' + self.name
        self._ingestor = ingestor
        self._problems = problems
        self._clocks = clocks
        self._frames = frames
        self._markers = {}
        self._monitor = SourceMonitor()
        self._last_message = None
        self._limits = (0, 0)
        self._fixed_frame = ''
        self._used_version = None
        self.stale_namespaces = ()
        self.incompatible_qos = ''
        self._subscription_qos = MARKER_SUBSCRIPTION_QOS
        self._resolved_topic = self.topic

    # -- input ---------------------------------------------------------------------------------

    def subscribe(self, node):
        events = SubscriptionEventCallbacks(incompatible_qos=self.on_incompatible_qos)
        subscription = node.create_subscription(
            MarkerArray, self.topic, self.on_message, MARKER_SUBSCRIPTION_QOS, raw=True,
            event_callbacks=events,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self._subscription_qos = subscription.qos_profile
        self._resolved_topic = subscription.topic_name

    def on_incompatible_qos(self, info):
        """Report a publisher that cannot match the subscription: none of its markers come."""
        policy = qos_policy_name_from_kind(info.last_policy_kind)
        self.incompatible_qos = '%d publisher(s) since start, last policy %s' % (
            info.total_count, policy)
        self._problems.report(('qos', self.topic, info.total_count),
                              '%s: a publisher with incompatible QoS (%s) was discovered; none '
                              'of its markers are received. Subscription: %s (publish '
                              'reliable, or set qos_overrides.%s.subscription.reliability)'
                              % (self._resolved_topic, policy,
                                 _qos_text(self._subscription_qos), self._resolved_topic))

    def configure(self, config):
        required = config.required_obstacle_sources if self.kind != LINK else ()
        self._monitor.configure(config.obstacle_timeout, config.static_obstacle_namespaces,
                                required)
        self._limits = (config.max_message_bytes, config.max_markers_per_message)
        self._fixed_frame = config.fixed_frame

    def on_message(self, data):
        """Raw MarkerArray bytes: checked against the limits, then to the worker."""
        received = self._clocks.now_ns()
        self._last_message = received * 1e-9
        reason = self._refusal(data)
        if reason is None and not self._ingestor.submit_markers(self.kind, data, received):
            reason = 'the geometry worker is behind; a message was dropped'
        problem = ('input', self.topic)
        if reason is None:
            self._problems.resolve(problem, '%s: messages accepted again' % self.topic)
            return
        # Dropped whole: its namespaces are not refreshed, so their obstacles go STALE.
        self._problems.report(problem, '%s: %s (its sources are not refreshed)'
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

    # -- what the worker built -------------------------------------------------------------

    def owns(self, job_key):
        return job_key == ('markers', self.kind)

    def on_result(self, result, world):
        if result.error is not None:
            self._problems.report(('input', self.kind, 'batch'), '%s markers: %s'
                                  % (self.kind, result.error.reason))
            return
        self._problems.resolve(('input', self.kind, 'batch'),
                               '%s markers: built again' % self.kind)
        clears, ops, heard = result.value
        for namespace, received in heard.items():
            self._monitor.heard(self.kind, namespace, received)
        for namespace in clears:
            self._clear(world, namespace)
        for op in ops:
            self._apply(world, op)
        world.moved()

    def _clear(self, world, namespace):
        def doomed(name, key):
            return key[0] == self.name and (not namespace or key[1] == namespace)
        for _, key in world.bodies.remove_where(self.kind, doomed):
            self._markers.pop(key, None)

    def _apply(self, world, op):
        """Apply one marker: delete, reject, place, or (re)build its piece."""
        key = (self.name, op.ns, op.id)
        bodies = world.bodies
        state = self._markers.get(key)
        expires = lifetime_expiry(op.received * 1e-9, op.lifetime)  # seconds
        if state is not None and state.name != op.name:
            bodies.remove(self.kind, state.name, key)  # a ~/links marker changed link
            self._markers.pop(key)
            state = None
        if op.action == Marker.DELETE:
            bodies.remove(self.kind, op.name, key)
            self._markers.pop(key, None)
            return
        # A ~/links marker is part of its link: it always moves with it.
        frame_locked = op.frame_locked or self.kind == LINK
        error = op.error
        if error is None and not frame_locked and stamp_problem(op.stamp_ns) is not None:
            error = 'placed at its header.stamp, but the %s' % stamp_problem(op.stamp_ns)
        if error is not None:
            self._markers.pop(key, None)
            bodies.set_error(self.kind, op.name, key, error, expires)
            return
        placement = MarkerPlacement(op.frame_id, marker_pose_matrix(op.pose), frame_locked,
                                    op.stamp_ns)
        if state is not None and placement.same_place(state.placement):
            placement = state.placement  # keep what was resolved for it
        if op.piece is not None:
            piece = op.piece if op.piece.body == op.name else replace(op.piece, body=op.name)
            bodies.set_piece(self.kind, op.name, key, piece, expires)
            self._markers[key] = _MarkerState(op.name, op.geometry_key, placement, expires,
                                              built=True)
        elif state is not None and state.built and state.geometry_key == op.geometry_key:
            state.placement, state.expires = placement, expires
            bodies.touch(self.kind, op.name, key, expires)
        else:
            # The worker thinks we hold this geometry and we do not (it expired meanwhile,
            # or the worker restarted): ask for it again; until then the body is PENDING.
            self._ingestor.forget(self.kind, op.ns, op.id)
            self._markers[key] = _MarkerState(op.name, op.geometry_key, placement, expires)
            bodies.set_pending(self.kind, op.name, key, expires)

    # -- lifetime, placement, freshness --------------------------------------------------------

    def keep_expired(self, kind, key, expires):
        """
        Keep a marker past its lifetime (as STALE) unless its namespace was heard since.

        RViz drops a marker when its lifetime ends. Here a marker goes only once its source has
        been heard after the lifetime ended (the source is alive and chose not to renew it);
        if the source has been silent since, the publisher may have died, and a dead publisher
        must never make an obstacle vanish: the marker stays, STALE.
        """
        heard = self._monitor.last_heard(self.kind, key[1])
        return heard is None or heard * 1e-9 <= expires

    def expired(self, kind, key):
        self._markers.pop(key, None)

    def poll(self, world, now_ns):
        """Place what can be placed at its stamp; forget namespaces that hold nothing."""
        if self._place_at_stamps():
            world.moved()
        if self._used_version != world.bodies.version:
            self._used_version = world.bodies.version
            used = {(self.kind, key[1]) for _, key in world.bodies.keys(self.kind, self.name)}
            self._monitor.forget_unused(used | {(self.kind, key[1]) for key in self._markers})

    def placement(self, kind, key):
        """(frame, origin) of a marker piece; (None, None) while it cannot be placed."""
        placement = self._markers[key].placement
        fixed_frame = self._fixed_frame
        if placement.frame_locked or placement.frame_id == fixed_frame:
            return placement.frame_id or fixed_frame, placement.origin
        origin = placement.placed.get(fixed_frame)
        return (fixed_frame, origin) if origin is not None else (None, None)

    def _place_at_stamps(self):
        """Try to place every unplaced, not frame-locked marker at its stamp."""
        changed = False
        fixed_frame = self._fixed_frame
        for key, state in self._markers.items():
            placement = state.placement
            if placement.frame_locked or placement.frame_id == fixed_frame or \
                    fixed_frame in placement.placed:
                continue
            lookup = self._frames.lookup(fixed_frame, placement.frame_id, placement.stamp_ns)
            problem = ('placement', self.kind, key)
            if lookup.status == TfStatus.OK:
                placement.placed[fixed_frame] = lookup.matrix @ placement.origin
                placement.failure = ''
                self._problems.resolve(problem)
                changed = True
            elif lookup.status != TfStatus.EXTRAPOLATION or lookup.past:
                placement.failure = lookup.reason
                self._problems.report(problem, "%s '%s' (frame_locked false) cannot be placed "
                                      'at its stamp: %s; its pairs are STALE'
                                      % (self.kind, state.name, lookup.reason),
                                      level='warning')
        return changed

    def silent(self, pieces, now):
        """Pieces of silent namespaces, and markers kept past their lifetime, are STALE."""
        monitor = self._monitor
        stale = {key[1] for _, _, key in pieces if monitor.is_stale(self.kind, key[1], now)}
        self._report_silent(stale)
        return [key[1] in stale or _past(self._markers.get(key), now) for _, _, key in pieces]

    def _report_silent(self, stale):
        current = {('source', self.kind, namespace) for namespace in stale}
        for key in current:
            self._problems.report(key, "%s source '%s' silent for more than obstacle_timeout "
                                  '(%g s); its pairs are STALE'
                                  % (self.kind, key[2], self._monitor.timeout),
                                  level='warning')
        self._problems.keep_only(('source', self.kind), current,
                                 lambda key: "%s source '%s' publishes again" % key[1:])
        self.stale_namespaces = sorted('%s:%s' % (self.kind, ns) for ns in stale)

    def data_times(self, pieces):
        """Each piece's namespace was last heard then (int ns); a static namespace does not age."""
        monitor, times = self._monitor, []
        for _, _, key in pieces:
            heard = monitor.last_heard(self.kind, key[1])
            if monitor.is_static(key[1]):
                times.append(TIMELESS)
            else:
                times.append(UNKNOWN if heard is None else heard)
        return times

    def not_ready(self, now):
        return self._monitor.required_problems(now)

    def ages(self, now):
        return {'%s:%s' % key: age for key, age in self._monitor.ages(now).items()}

    def last_message_age(self, now):
        """Seconds since the topic's last message (inf: never)."""
        return now - self._last_message if self._last_message is not None else float('inf')

    def forget_heard(self):
        self._monitor.forget_heard()
