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
The ``gjk_distance`` node: tracked distances between robot links and obstacles.

Inputs are stored by the subscription callbacks (latest only) and consumed by one timer at
``rate_hz``, which rebuilds the pair layout when bodies change, composes the piece poses from
its own TF tree, runs one core ``PairSet.update`` and publishes. A message flood therefore
never queues work: at most one conversion per marker and one URDF parse happen per cycle.

Choices a user may need to know (also in the README):

- A pair whose frame is unknown (no chain of transforms to ``fixed_frame``) or whose newest
  dynamic transform is older than ``tf_timeout`` is STALE; a non-finite transform makes it
  INVALID. Both recover by themselves when good transforms arrive.
- Marker lifetimes count from the receive time (as RViz does): publishers often leave
  ``header.stamp`` zero, and a clock offset between machines would expire markers early.
- ``~/links`` markers add pieces to the link named by the marker's ``header.frame_id`` (a
  tool held by ``tool0`` becomes part of ``tool0``); ``ns``/``id`` only identify the marker.
- A marker republished with only a new pose (or frame) reuses its convex piece and keeps its
  tracked simplex: perception stacks republish every obstacle each frame.
- A body with rejected geometry (one log line, one diagnostics ERROR) keeps its name, and its
  pairs are INVALID: a missing piece could be the closest one, so no distance is made up.
"""

from dataclasses import replace
import json
import math
import sys
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.core import ConvexPolytope, PairSet
from gjk_ros.models import (marker_to_piece, ModelError, parse_urdf_collisions,
                            piece_from_description, pose_to_matrix, ResourceResolver)
from gjk_ros.ros import diagnostics
from gjk_ros.ros.bodies import BodyRegistry, LINK, NameRegistry, OBSTACLE
from gjk_ros.ros.frame_tree import FrameStatus, FrameTree, transform_values
from gjk_ros.ros.inbox import MarkerInbox, ProblemLog
from gjk_ros.ros.outputs import make_cloud, make_markers, min_distance
from gjk_ros.ros.pairs import build_layout, InputState, PairTracker
from gjk_ros.ros.params import (Config, PARAMETERS, parse_body_descriptions,
                                validate_parameter)
import numpy
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
import rclpy
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterException)
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Float64, Header, String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['DistanceNode', 'main']

NODE_NAME = 'gjk_distance'

# tf2_ros's own settings: /tf reliable volatile depth 100, /tf_static transient_local.
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
TF_STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL,
                           history=HistoryPolicy.KEEP_LAST)
# robot_state_publisher's robot_description, and our ~/names: latched, latest only.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         history=HistoryPolicy.KEEP_LAST)
# Volatile so that both volatile and transient_local marker publishers match.
MARKER_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
OUTPUT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)

DIAGNOSTICS_PERIOD = 1.0  # seconds, diagnostic_updater's default

_INPUT_OF_FRAME = {
    FrameStatus.OK: InputState.OK,
    FrameStatus.STALE: InputState.STALE,
    FrameStatus.MISSING: InputState.STALE,
    FrameStatus.INVALID: InputState.INVALID,
}

_PARAMETER_TYPES = {
    'string': Parameter.Type.STRING,
    'double': Parameter.Type.DOUBLE,
    'bool': Parameter.Type.BOOL,
    'string_array': Parameter.Type.STRING_ARRAY,
}


def _stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def _time_msg(nanoseconds):
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def _descriptor(spec):
    descriptor = ParameterDescriptor(description=spec.description,
                                     type=_PARAMETER_TYPES[spec.kind].value)
    if spec.kind == 'double' and math.isfinite(spec.low) and math.isfinite(spec.high):
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)]
    if spec.positive:
        descriptor.additional_constraints = 'must be > %g' % spec.low
    return descriptor


class DistanceNode(Node):
    """
    Publish tracked link-obstacle distances; see the module docstring and the README.

    Parameters
    ----------
    **kwargs
        Passed to ``rclpy.node.Node`` (e.g. ``parameter_overrides`` in tests).

    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._problems = ProblemLog(self.get_logger())
        self._declare_parameters()
        self._config = self._read_config()
        self._frames = FrameTree()
        self._bodies = BodyRegistry()
        self._names = NameRegistry()
        self._resolver = ResourceResolver()
        self._tracker = PairTracker(self._config.hill_climbing, self._config.tracking)
        self._inboxes = {OBSTACLE: MarkerInbox(), LINK: MarkerInbox()}
        self._link_marker_bodies = {}
        self._marker_shapes = {}
        self._pending_description = None
        self._description_error = None
        self._parameter_bodies_dirty = True
        self._layout_key = None
        self._piece_locations = []
        self._locations = {}
        self._pose_cache = (None, None, None)
        self._tracked_link_ids = []
        self._last_records = None
        self._frame_states = {}
        self._received = {'tf': math.inf, 'tf_static': math.inf, 'robot_description': math.inf}
        self._stats = diagnostics.CycleStats()
        self._make_publishers()
        self._make_subscriptions()
        self._warm_up()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self._timer = self.create_timer(1.0 / self._config.rate_hz, self._on_timer)
        self._diagnostics_timer = self.create_timer(DIAGNOSTICS_PERIOD, self._on_diagnostics)
        self.get_logger().info(
            "computing distances in '%s' at %g Hz" % (self._config.fixed_frame,
                                                      self._config.rate_hz))

    # -- set-up ------------------------------------------------------------------------------

    def _declare_parameters(self):
        """Declare every parameter; a bad value from the parameter file falls back to default."""
        for spec in PARAMETERS:
            descriptor = _descriptor(spec)
            try:
                self._declare(spec, descriptor, ignore_override=False)
                reason = validate_parameter(spec.name, self.get_parameter(spec.name).value)
            except (InvalidParameterTypeException, InvalidParameterValueException) as error:
                reason = str(error)
                self._declare(spec, descriptor, ignore_override=True)
            if reason is not None:
                self.get_logger().error('parameter %s rejected: %s; using the default %r'
                                        % (spec.name, reason, spec.default))
                self.set_parameters([Parameter(spec.name, _PARAMETER_TYPES[spec.kind],
                                               spec.default)])

    def _declare(self, spec, descriptor, ignore_override):
        if spec.kind != 'string_array':
            self.declare_parameter(spec.name, spec.default, descriptor, ignore_override)
            return
        # Clients cannot type an empty list (rclpy makes [] a byte array, `ros2 param set`
        # a bool array, YAML's [] is dropped): pattern lists are dynamically typed, any empty
        # array is accepted as "no patterns", and the callback rejects anything but strings.
        descriptor.dynamic_typing = True
        descriptor.type = Parameter.Type.NOT_SET.value
        self.declare_parameter(spec.name, spec.default or None, descriptor, ignore_override)
        if self.get_parameter(spec.name).type_ == Parameter.Type.NOT_SET:
            self.set_parameters([Parameter(spec.name, Parameter.Type.STRING_ARRAY,
                                           list(spec.default))])

    def _read_config(self):
        return Config.from_values({spec.name: self.get_parameter(spec.name).value
                                   for spec in PARAMETERS})

    def _make_publishers(self):
        self._distances_pub = self.create_publisher(PointCloud2, '~/distances', OUTPUT_QOS)
        self._names_pub = self.create_publisher(String, '~/names', LATCHED_QOS)
        self._min_distance_pub = self.create_publisher(Float64, '~/min_distance', OUTPUT_QOS)
        self._markers_pub = self.create_publisher(MarkerArray, '~/markers', OUTPUT_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics',
                                                      OUTPUT_QOS)

    def _make_subscriptions(self):
        self.create_subscription(TFMessage, '/tf', self._on_tf, TF_QOS)
        self.create_subscription(TFMessage, '/tf_static', self._on_tf_static, TF_STATIC_QOS)
        self.create_subscription(String, 'robot_description', self._on_description,
                                 LATCHED_QOS)
        self.create_subscription(MarkerArray, '~/obstacles', self._on_obstacles, MARKER_QOS)
        self.create_subscription(MarkerArray, '~/links', self._on_links, MARKER_QOS)

    def _warm_up(self):
        """Compile (or load from numba's cache) the core kernels before the first cycle."""
        started = time.perf_counter()
        box = ConvexPolytope.box([0.1, 0.1, 0.1])
        poses = numpy.stack([numpy.eye(4), numpy.eye(4)])
        poses[1, 0, 3] = 0.15
        PairSet([box, box], numpy.array([[0, 1]]), hill_climb=True, tracking=True).update(poses)
        self.get_logger().debug('core ready in %.2f s' % (time.perf_counter() - started))

    def _now(self):
        """Node-clock time in seconds (the clock of every receive time and expiry)."""
        return self.get_clock().now().nanoseconds * 1e-9

    # -- callbacks: store only ---------------------------------------------------------------

    def _store_transforms(self, msg, static):
        received = self._now()
        self._received['tf_static' if static else 'tf'] = received
        for transform in msg.transforms:
            self._frames.set_transform(
                transform.header.frame_id, transform.child_frame_id,
                transform_values(transform.transform.translation, transform.transform.rotation),
                _stamp_ns(transform.header.stamp), received, static)

    def _on_tf(self, msg):
        self._store_transforms(msg, static=False)

    def _on_tf_static(self, msg):
        self._store_transforms(msg, static=True)

    def _on_description(self, msg):
        self._received['robot_description'] = self._now()
        self._pending_description = msg.data

    def _on_obstacles(self, msg):
        received = self._now()
        for marker in msg.markers:
            self._inboxes[OBSTACLE].put(marker, received)

    def _on_links(self, msg):
        received = self._now()
        for marker in msg.markers:
            self._inboxes[LINK].put(marker, received)

    # -- parameters --------------------------------------------------------------------------

    def _on_set_parameters(self, parameters):
        for parameter in parameters:
            reason = validate_parameter(parameter.name, parameter.value)
            if reason is None and parameter.name in ('static_obstacles', 'link_geometry'):
                reason = self._check_descriptions(parameter.name, parameter.value)
            if reason is not None:
                return SetParametersResult(successful=False,
                                           reason='%s: %s' % (parameter.name, reason))
        return SetParametersResult(successful=True)

    def _check_descriptions(self, name, text):
        """Build the pieces of a body-description parameter; the first error, or None."""
        kind = OBSTACLE if name == 'static_obstacles' else LINK
        try:
            for _, _, result in self._description_pieces(kind, text):
                if isinstance(result, ModelError):
                    return str(result)
        except ValueError as error:
            return str(error)
        return None

    def _on_parameters_set(self, parameters):
        old = self._config
        self._config = self._read_config()
        changed = {parameter.name for parameter in parameters}
        if self._config.rate_hz != old.rate_hz:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / self._config.rate_hz, self._on_timer)
        if changed & {'static_obstacles', 'link_geometry', 'fixed_frame'}:
            self._parameter_bodies_dirty = True
        if (old.hill_climbing, old.tracking) != (self._config.hill_climbing,
                                                 self._config.tracking):
            self._tracker = PairTracker(self._config.hill_climbing, self._config.tracking)
            self._layout_key = None

    # -- the cycle ---------------------------------------------------------------------------

    def _on_timer(self):
        started = time.perf_counter()
        try:
            self._cycle()
        except Exception as error:  # noqa: B902 -- the node must outlive any bad cycle
            self._problems.report(('cycle', type(error).__name__, str(error)),
                                  'cycle failed: %s: %s' % (type(error).__name__, error))
        # Whole cycle (inputs, poses, core, publishing), next to the core's compute time.
        self._stats.cycle_time += time.perf_counter() - started

    def _cycle(self):
        now = self._now()
        self._apply_inputs(now)
        self._refresh_layout()
        poses, inputs, stamp = self._piece_poses(now)
        started = time.perf_counter()
        records = self._tracker.compute(poses, inputs, self._config.max_distance,
                                        self._config.padding)
        elapsed = time.perf_counter() - started
        self._stats.add(elapsed, self._tracker.computed_pairs, self._tracker.warm_pairs,
                        self._tracker.iterations)
        self._last_records = records
        self._publish(records, stamp or self.get_clock().now().nanoseconds)

    def _publish(self, records, stamp):
        header = Header(frame_id=self._config.fixed_frame, stamp=_time_msg(stamp))
        self._distances_pub.publish(make_cloud(records, header))
        self._min_distance_pub.publish(Float64(data=min_distance(records)))
        if self._config.publish_markers and self._markers_pub.get_subscription_count():
            self._markers_pub.publish(make_markers(records, header, self._config.max_distance))

    # -- inputs ------------------------------------------------------------------------------

    def _apply_inputs(self, now):
        if self._pending_description is not None:
            text, self._pending_description = self._pending_description, None
            self._apply_description(text)
        if self._parameter_bodies_dirty:
            self._parameter_bodies_dirty = False
            self._apply_parameter_bodies(OBSTACLE, self._config.static_obstacles)
            self._apply_parameter_bodies(LINK, self._config.link_geometry)
        for kind, inbox in self._inboxes.items():
            clears, markers = inbox.take()
            for namespace in clears:
                self._clear_markers(kind, namespace)
            for marker, received in markers:
                self._apply_marker(kind, marker, received)
        for kind, name, key in self._bodies.expire(now):
            self._link_marker_bodies.pop(key, None)
            self._marker_shapes.pop((kind, key), None)
        self._report_body_errors()

    def _apply_description(self, text):
        try:
            model = parse_urdf_collisions(text, resolver=self._resolver)
        except Exception as error:  # noqa: B902 -- a bad URDF must never stop the node
            error = _as_model_error('robot_description', error)
            self._description_error = error.reason
            self._problems.report(('robot_description', error.reason),
                                  'robot_description rejected (keeping the previous model): %s'
                                  % error.reason)
            return
        self._description_error = None
        self._problems.keep_only(('robot_description',), set())
        pieces = {(link, ('urdf', index)): piece for link, link_pieces in model.pieces.items()
                  for index, piece in enumerate(link_pieces)}
        errors = {}
        for error in model.errors:
            count = sum(1 for name, _ in errors if name == error.body)
            errors[(error.body, ('urdf', 'error', count))] = error.reason
        for name, key in self._bodies.keys(LINK, 'urdf'):
            if (name, key) not in pieces and (name, key) not in errors:
                self._bodies.remove(LINK, name, key)
        for (name, key), piece in pieces.items():
            self._bodies.set_piece(LINK, name, key, piece)
            self._warn_once(piece.warnings)
        for (name, key), reason in errors.items():
            self._bodies.set_error(LINK, name, key, reason)
        self._warn_once(model.warnings)

    def _warn_once(self, warnings):
        for warning in warnings:
            self._problems.report(('warning', warning), warning, level='warning')

    def _description_pieces(self, kind, text):
        """
        Yield (name, key, piece or ModelError) for a body-description parameter.

        Raises ValueError if the text itself is malformed.
        """
        for name, frame_id, descriptions in parse_body_descriptions(text):
            frame_id = frame_id or (self._config.fixed_frame if kind == OBSTACLE else name)
            for index, description in enumerate(descriptions):
                key = ('param', index)
                try:
                    piece = piece_from_description(name, frame_id, description,
                                                   resolver=self._resolver)
                except Exception as error:  # noqa: B902 -- reported as a rejected body
                    piece = _as_model_error(name, error)
                yield name, key, piece

    def _apply_parameter_bodies(self, kind, text):
        try:
            entries = list(self._description_pieces(kind, text))
        except ValueError as error:
            self._problems.report(('parameter', kind, str(error)),
                                  'parameter bodies rejected: %s' % error)
            entries = []
        # Drop only what disappeared, so unchanged pieces keep their tracked caches.
        wanted = {(name, key) for name, key, _ in entries}
        for name, key in self._bodies.keys(kind, 'param'):
            if (name, key) not in wanted:
                self._bodies.remove(kind, name, key)
        for name, key, result in entries:
            if isinstance(result, ModelError):
                self._bodies.set_error(kind, name, key, result.reason)
            else:
                self._bodies.set_piece(kind, name, key, result)
                self._warn_once(result.warnings)

    def _clear_markers(self, kind, namespace):
        def doomed(name, key):
            return key[0] == 'marker' and (not namespace or key[1] == namespace)
        for _, key in self._bodies.remove_where(kind, doomed):
            self._link_marker_bodies.pop(key, None)
            self._marker_shapes.pop((kind, key), None)

    def _marker_body(self, kind, marker, key):
        """Obstacles are named ns/id; link markers belong to the link of their frame."""
        if kind == OBSTACLE:
            return '%s/%d' % (marker.ns, marker.id)
        name = marker.header.frame_id.lstrip('/') or '%s/%d' % (marker.ns, marker.id)
        previous = self._link_marker_bodies.get(key)
        if previous is not None and previous != name:
            self._bodies.remove(LINK, previous, key)
        self._link_marker_bodies[key] = name
        return name

    def _apply_marker(self, kind, marker, received):
        key = ('marker', marker.ns, marker.id)
        name = self._marker_body(kind, marker, key)
        if marker.action == Marker.DELETE:
            self._bodies.remove(kind, name, key)
            self._link_marker_bodies.pop(key, None)
            self._marker_shapes.pop((kind, key), None)
            return
        lifetime = marker.lifetime.sec + marker.lifetime.nanosec * 1e-9
        expires = received + lifetime if lifetime > 0.0 else None
        if marker.action != Marker.ADD:
            self._bodies.set_error(kind, name, key, 'unknown marker action %d' % marker.action,
                                   expires)
            return
        if kind == LINK and not marker.header.frame_id.strip('/'):
            self._bodies.set_error(kind, name, key, 'a ~/links marker needs header.frame_id',
                                   expires)
            return
        try:
            piece = self._marker_piece(kind, key, marker)
        except Exception as error:  # noqa: B902 -- one bad marker must not drop the others
            self._marker_shapes.pop((kind, key), None)
            self._bodies.set_error(kind, name, key, _as_model_error(name, error).reason,
                                   expires)
            return
        if piece.body != name:
            piece = replace(piece, body=name)
        self._bodies.set_piece(kind, name, key, piece, expires)
        self._warn_once(piece.warnings)

    def _marker_piece(self, kind, key, marker):
        """
        Convert a marker, reusing the last piece of the same marker if only its pose changed.

        Building a hull costs milliseconds, and perception stacks republish every obstacle
        each frame; the piece's origin is the marker pose (``marker_to_piece``'s contract).
        """
        signature = _geometry_signature(marker)
        cached = self._marker_shapes.get((kind, key))
        if cached is not None and cached[0] == signature and marker.header.frame_id:
            name = cached[1].body
            origin = pose_to_matrix(marker.pose.position, marker.pose.orientation, body=name)
            return replace(cached[1], frame_id=marker.header.frame_id, origin=origin)
        piece = marker_to_piece(marker, resolver=self._resolver)
        self._marker_shapes[(kind, key)] = (signature, piece)
        return piece

    def _report_body_errors(self):
        """One log line per (body, reason) when it appears; one when it goes away."""
        current = set()
        for kind, name, reason in self._bodies.all_errors():
            key = ('body', kind, name, reason)
            current.add(key)
            self._problems.report(key, "%s '%s' rejected: %s" % (kind, name, reason))
        self._problems.keep_only(('body',), current,
                                 lambda key: "%s '%s': rejected geometry cleared" % key[1:3])

    # -- layout and poses --------------------------------------------------------------------

    def _scope_key(self):
        config = self._config
        return (self._bodies.version, config.link_include, config.link_exclude,
                config.obstacle_include, config.obstacle_exclude, config.allowed_pairs)

    def _bodies_in_scope(self, kind, in_scope):
        bodies, added = [], False
        for name in self._bodies.names(kind):
            if not in_scope(name):
                continue
            body_id, new = self._names.id_of(kind, name)
            added |= new
            keyed = self._bodies.keyed_pieces(kind, name)
            valid = not self._bodies.errors(kind, name)
            bodies.append((name, body_id, [tracked for _, tracked in keyed], valid))
            self._locations.update({tracked.uid: (kind, name, key) for key, tracked in keyed})
        return bodies, added

    def _refresh_layout(self):
        key = self._scope_key()
        if key == self._layout_key:
            return
        self._layout_key = key
        self._locations = {}
        links, new_links = self._bodies_in_scope(LINK, self._config.link_in_scope)
        obstacles, new_obstacles = self._bodies_in_scope(OBSTACLE,
                                                         self._config.obstacle_in_scope)
        layout = build_layout(links, obstacles, self._config.pair_allowed)
        self._piece_locations = [self._locations[uid] for uid in layout.piece_uids]
        shapes = [self._bodies.piece_by_key(*location).piece.shape
                  for location in self._piece_locations]
        self._tracker.rebuild(layout, shapes)
        self._tracked_link_ids = [body_id for _, body_id, _, _ in links]
        self._pose_cache = (None, None, None)
        self._stats.rebuilds += 1
        if new_links or new_obstacles:
            self._names_pub.publish(String(data=json.dumps(self._names.as_dict())))

    def _piece_frames_and_origins(self):
        """Frame id and origin of each layout piece; cached until a piece changes."""
        key, frames, origins = self._pose_cache
        if key == (self._bodies.revision, self._config.fixed_frame) and frames is not None:
            return frames, origins
        frames, origins = [], numpy.empty((len(self._piece_locations), 4, 4))
        for index, location in enumerate(self._piece_locations):
            piece = self._bodies.piece_by_key(*location).piece
            frames.append(piece.frame_id.lstrip('/') or self._config.fixed_frame)
            origins[index] = piece.origin
        self._pose_cache = ((self._bodies.revision, self._config.fixed_frame), frames, origins)
        return frames, origins

    def _piece_poses(self, now):
        """
        World pose and input state of every layout piece, and the newest stamp used.

        Returns
        -------
        tuple of ((n, 4, 4) float, (n,) int, int)

        """
        frames, origins = self._piece_frames_and_origins()
        config = self._config
        lookups = {frame: self._frames.lookup(config.fixed_frame, frame, now, config.tf_timeout)
                   for frame in set(frames)}
        self._report_frames(lookups)
        poses = numpy.empty_like(origins)
        inputs = numpy.zeros(len(frames), dtype=numpy.int64)
        stamp = 0
        for index, frame in enumerate(frames):
            lookup = lookups[frame]
            inputs[index] = _INPUT_OF_FRAME[lookup.status]
            if lookup.status == FrameStatus.OK:
                poses[index] = lookup.matrix @ origins[index]
                stamp = max(stamp, lookup.stamp)
            else:
                poses[index] = origins[index]
        return poses, inputs, stamp

    def _report_frames(self, lookups):
        """Log a frame once when it stops being usable and once when it recovers."""
        config = self._config
        for frame, lookup in lookups.items():
            key = ('frame', frame)
            if lookup.status == FrameStatus.OK:
                self._problems.resolve(key, "frame '%s' recovered" % frame)
                continue
            if lookup.status == FrameStatus.MISSING:
                reason = "no transform from '%s' to '%s' (unknown frame '%s'); its pairs are " \
                         'STALE' % (frame, config.fixed_frame, lookup.culprit)
            elif lookup.status == FrameStatus.STALE:
                reason = "transform of '%s' older than tf_timeout (%g s); pairs on frame " \
                         "'%s' are STALE" % (lookup.culprit, config.tf_timeout, frame)
            else:
                reason = "non-finite transform of '%s'; pairs on frame '%s' are INVALID" \
                         % (lookup.culprit, frame)
            level = 'error' if lookup.status == FrameStatus.INVALID else 'warning'
            self._problems.report(key, reason, level=level)
        self._problems.keep_only(('frame',), {('frame', frame) for frame in lookups})
        self._frame_states = {frame: lookup.status for frame, lookup in lookups.items()}

    # -- diagnostics -------------------------------------------------------------------------

    def _on_diagnostics(self):
        try:
            self._publish_diagnostics()
        except Exception as error:  # noqa: B902 -- diagnostics must never stop the node
            self._problems.report(('diagnostics', str(error)),
                                  'diagnostics failed: %s: %s' % (type(error).__name__, error))

    def _input_ages(self, now):
        def age(received):
            return now - received if received is not None and math.isfinite(received) \
                else math.inf
        frames = self._frame_states
        return diagnostics.InputAges(
            tf=age(self._received['tf']),
            tf_static=age(self._received['tf_static']),
            robot_description=age(self._received['robot_description']),
            obstacles=age(self._inboxes[OBSTACLE].last_received),
            links=age(self._inboxes[LINK].last_received),
            frames_known=len(self._frames.frames),
            stale_frames=sorted(f for f, s in frames.items() if s == FrameStatus.STALE),
            missing_frames=sorted(f for f, s in frames.items() if s == FrameStatus.MISSING),
            invalid_frames=sorted(f for f, s in frames.items() if s == FrameStatus.INVALID),
        )

    def _publish_diagnostics(self):
        name = self.get_fully_qualified_name()
        config = self._config
        records = self._last_records
        statuses = [
            diagnostics.compute_status(name, self._stats, 0 if records is None else len(records),
                                       self._tracker.num_piece_pairs, config.rate_hz),
            diagnostics.inputs_status(name, self._input_ages(self._now()), config.tf_timeout),
        ]
        if records is not None:
            names = self._names.as_dict()
            statuses += diagnostics.link_statuses(name, records, names['links'],
                                                  names['obstacles'], self._tracked_link_ids)
        for kind, body, reason in self._bodies.all_errors():
            statuses.append(diagnostics.error_status(name, 'rejected %s %s' % (kind, body),
                                                     reason))
        if self._description_error is not None:
            statuses.append(diagnostics.error_status(name, 'robot_description',
                                                     self._description_error))
        message = DiagnosticArray(status=statuses)
        message.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(message)
        self._stats = diagnostics.CycleStats()


def _geometry_signature(marker):
    """Everything of a marker that shapes its piece, except the pose and the frame."""
    mesh_file = getattr(marker, 'mesh_file', None)
    return (marker.type, marker.scale.x, marker.scale.y, marker.scale.z, marker.mesh_resource,
            tuple((point.x, point.y, point.z) for point in marker.points),
            None if mesh_file is None else (mesh_file.filename, bytes(mesh_file.data)))


def _as_model_error(body, error):
    """Keep a ModelError; wrap anything else (a bug or a library failure) as one."""
    if isinstance(error, ModelError):
        return error
    return ModelError(body, 'unexpected %s: %s' % (type(error).__name__, error))


def main(args=None):
    """Run the node until Ctrl-C or shutdown; returns the process exit code."""
    rclpy.init(args=args)
    node = None
    try:
        node = DistanceNode()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterException as error:
        rclpy.logging.get_logger(NODE_NAME).fatal('bad parameter: %s' % error)
        return 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
