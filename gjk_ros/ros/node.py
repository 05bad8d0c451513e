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

Three paths that never wait on each other (README, "Architecture"):

- **TF** (compute callback group): ``/tf`` and ``/tf_static`` are read raw and decoded into
  the node's own ``TfBuffer`` (time-sorted per edge, tf2's semantics: tf2_ros is not
  installable everywhere). A new transform may start a compute cycle (rate-capped).
- **Ingestion** (ingestion callback group and a worker process): markers and
  ``robot_description`` are checked against the input limits and turned into plain-data jobs;
  the worker process builds hulls, meshes and URDF pieces with a time and memory limit.
- **Compute** (compute callback group): applies what ingestion finished, composes every
  piece's pose, runs one ``PairSet.update`` and publishes. A watchdog timer keeps the outputs
  coming at ``rate_hz`` when TF stops.

Choices a user may need to know (also in the README):

- A pair is STALE when a transform chain it needs is older than ``tf_timeout`` (from the
  stamp), unknown, or its obstacle source went silent; INVALID when a transform or composed
  pose is non-finite or absurd, or the body's geometry was rejected; PENDING while the body's
  geometry is being built. All recover by themselves when good data arrives.
- ``~/min_distance`` is -inf until the node is ready (robot model built, every link in scope
  has a transform, required obstacle sources heard, parameter bodies built) and whenever a
  pair in scope is not measured; see ``outputs.min_distance``.
- Marker lifetimes count from the receive time (as RViz does); a silent source's markers do
  not expire (they go STALE instead), so a dead publisher never makes an obstacle vanish.
- ``~/links`` markers add pieces to the link named by the marker's ``header.frame_id``.
- A body with rejected geometry keeps its name and its pairs are INVALID: a missing piece
  could be the closest one, so no distance is made up.
"""

from dataclasses import dataclass, replace
import json
import math
import sys
import threading
import time
import zlib

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from gjk_ros.core.warmup import warm_up_group
from gjk_ros.ros import diagnostics
from gjk_ros.ros.bodies import BodyRegistry, LINK, NameRegistry, OBSTACLE, TrackedPiece
from gjk_ros.ros.decomposer import MeshDecomposer
from gjk_ros.ros.ingestion import Ingestor, lifetime_expiry, marker_count
from gjk_ros.ros.markers import MarkerBuilder, PieceView
from gjk_ros.ros.outputs import make_cloud, min_distance
from gjk_ros.ros.pacing import CyclePacer
from gjk_ros.ros.pairs import build_layout, InputState, PairTracker
from gjk_ros.ros.params import (Config, DECOMPOSITION_PARAMETERS, LIMIT_PARAMETERS, PARAMETERS,
                                parse_body_descriptions, validate_parameter)
from gjk_ros.ros.placement import MarkerPlacement
from gjk_ros.ros.problems import ProblemLog
from gjk_ros.ros.qos import LATCHED_QOS, MARKER_QOS, OUTPUT_QOS, TF_QOS, TF_STATIC_QOS
from gjk_ros.ros.records import PairStatus
from gjk_ros.ros.sources import SourceMonitor
from gjk_ros.ros.tf_buffer import (decode_tf_message, MAX_COORDINATE, rotation_matrix,
                                   TfBuffer, TfStatus)
from gjk_ros.ros.timekeeping import RosTimeMonitor
import numpy
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterException)
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Float64, Header, String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['DistanceNode', 'main']

NODE_NAME = 'gjk_distance'

DIAGNOSTICS_PERIOD = 1.0  # seconds, diagnostic_updater's default
# Finished ingestion results applied per cycle: each is a cheap registry update, but a burst of
# thousands (a huge MarkerArray) must be spread over cycles rather than delay one.
RESULTS_PER_CYCLE = 200
# ~/markers is for eyes: at most this rate, whatever rate_hz is.
MARKERS_PERIOD = 0.1
# A composed rotation further than this from orthonormal is not a rigid transform.
ROTATION_TOLERANCE = 1e-6

_INPUT_OF_FRAME = {
    TfStatus.OK: InputState.OK,
    TfStatus.STALE: InputState.STALE,
    TfStatus.MISSING: InputState.STALE,
    TfStatus.EXTRAPOLATION: InputState.STALE,
    TfStatus.INVALID: InputState.INVALID,
}

_STATUS_OF_INPUT = {
    InputState.OK: PairStatus.VALID,
    InputState.STALE: PairStatus.STALE,
    InputState.INVALID: PairStatus.INVALID,
}

_PARAMETER_TYPES = {
    'string': Parameter.Type.STRING,
    'double': Parameter.Type.DOUBLE,
    'integer': Parameter.Type.INTEGER,
    'bool': Parameter.Type.BOOL,
    'string_array': Parameter.Type.STRING_ARRAY,
}


def _stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def _time_msg(nanoseconds):
    nanoseconds = max(int(nanoseconds), 0)
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def _descriptor(spec):
    descriptor = ParameterDescriptor(description=spec.description,
                                     type=_PARAMETER_TYPES[spec.kind].value)
    finite = math.isfinite(spec.low) and math.isfinite(spec.high)
    if spec.kind == 'double' and finite:
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)]
    if spec.kind == 'integer' and finite:
        descriptor.integer_range = [
            IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    if spec.positive:
        descriptor.additional_constraints = 'must be > %g' % spec.low
    return descriptor


@dataclass
class _MarkerState:
    """What the compute thread knows of one marker: its geometry and its placement."""

    name: str
    geometry_key: str
    placement: MarkerPlacement
    expires: object
    built: bool = False


@dataclass
class _ModelState:
    """The robot description: received, being built, built, or rejected."""

    received: float = None
    token: object = None
    built: bool = False
    error: str = None


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
        self._started = self._steady()
        self._last_now = self._now()
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self._ros_time = RosTimeMonitor(self._config.clock_timeout, self._uses_sim_time())
        self._frames = TfBuffer(self._config.tf_buffer_duration)
        self._bodies = BodyRegistry()
        self._names = NameRegistry()
        self._sources = SourceMonitor()
        self._configure_sources()
        self._ingestor = Ingestor(self._limits(), start_worker=True)
        self._decomposer = MeshDecomposer(
            lambda limits: Ingestor(limits, timeout_parameter='decomposition_timeout'))
        self._configure_decomposition()
        self._tracker = PairTracker(self._config.hill_climbing, self._config.tracking)
        self._last_marker_message = {OBSTACLE: None, LINK: None}
        self._model = _ModelState()
        self._adjacent_links = set()
        self._disabled_links = set()
        self._self_pairs = ()
        self._markers = {}
        self._model_warnings = ()
        self._reported_version = None
        self._parameter_tokens = {}
        self._parameter_bodies_dirty = True
        self._placement_revision = 0
        self._layout_key = None
        self._piece_locations = []
        self._piece_sources = []
        self._piece_shapes, self._piece_marker_ids = [], []
        self._locations, self._layout_shapes = {}, {}
        self._pose_cache = (None, None)
        self._tracked_link_ids = []
        self._last_records = None
        self._last_ready = ([], False)
        self._frame_states = {}
        self._received = {'tf': math.inf, 'tf_static': math.inf}
        self._last_markers_publish = -math.inf
        self._marker_builder = MarkerBuilder()
        self._duplicate_warned = False
        self._stats = diagnostics.CycleStats()
        self._pacer = CyclePacer(self._config.rate_hz)
        self._make_publishers()
        self._make_subscriptions()
        self._warm_up()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._on_parameters_set)
        self._watchdog = self._steady_timer(self._pacer.period, self._on_watchdog)
        self._diagnostics_timer = self._steady_timer(DIAGNOSTICS_PERIOD, self._on_diagnostics)
        self.get_logger().info(
            "computing distances in '%s' at up to %g Hz" % (self._config.fixed_frame,
                                                            self._config.rate_hz))

    # -- set-up ------------------------------------------------------------------------------

    def _declare_parameters(self):
        """Declare every parameter; a bad value from the parameter file falls back to default."""
        for spec in PARAMETERS:
            descriptor = _descriptor(spec)
            try:
                self._declare(spec, descriptor, ignore_override=False)
                reason = _parameter_problem(spec.name, self.get_parameter(spec.name).value)
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

    def _limits(self):
        return self._config.ingest_limits()

    def _configure_decomposition(self):
        config = self._config
        limits = replace(self._limits(), job_timeout_s=config.decomposition_timeout)
        self._decomposer.configure(config.decompose_meshes, config.decomposition_threshold,
                                   config.decomposition_cache, limits)
        self._report_decomposition_failures()

    def _configure_sources(self):
        config = self._config
        self._sources.configure(config.obstacle_timeout, config.static_obstacle_namespaces,
                                config.required_obstacle_sources)

    def _make_publishers(self):
        self._distances_pub = self.create_publisher(PointCloud2, '~/distances', OUTPUT_QOS)
        self._self_distances_pub = self.create_publisher(PointCloud2, '~/self_distances',
                                                         OUTPUT_QOS)
        self._names_pub = self.create_publisher(String, '~/names', LATCHED_QOS)
        self._min_distance_pub = self.create_publisher(Float64, '~/min_distance', OUTPUT_QOS)
        self._markers_pub = self.create_publisher(MarkerArray, '~/markers', OUTPUT_QOS)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics',
                                                      OUTPUT_QOS)

    def _make_subscriptions(self):
        # /tf is read raw and decoded by TfBuffer's decoder: rclpy's message conversion made
        # 1 kHz of 50-frame messages fall behind (issue 7).
        # Everything is read raw: the node never converts a message itself (a 100 MB
        # MarkerArray would hold the GIL for seconds); the geometry worker decodes markers.
        self.create_subscription(TFMessage, '/tf', self._on_tf, TF_QOS, raw=True)
        self.create_subscription(TFMessage, '/tf_static', self._on_tf_static, TF_STATIC_QOS,
                                 raw=True)
        self.create_subscription(String, 'robot_description', self._on_description,
                                 LATCHED_QOS, raw=True)
        # MoveIt publishes the SRDF latched, as robot_state_publisher the URDF.
        self.create_subscription(String, 'robot_description_semantic', self._on_semantic,
                                 LATCHED_QOS, raw=True)
        self.create_subscription(MarkerArray, '~/obstacles',
                                 lambda data: self._on_markers(OBSTACLE, '~/obstacles', data),
                                 MARKER_QOS, raw=True)
        self.create_subscription(MarkerArray, '~/links',
                                 lambda data: self._on_markers(LINK, '~/links', data),
                                 MARKER_QOS, raw=True)

    def _warm_up(self):
        """
        Load the PairSet kernels from numba's cache (or compile them) in a background thread.

        The node has nothing to measure until its geometry worker has built the first bodies,
        so the 0.3-0.4 s of loading overlaps waiting for robot_description and the worker's
        first job instead of delaying the node's start. A cycle that needs the kernels before
        the thread is done waits on numba's compiler lock: never a made-up number.
        """
        def load():
            try:
                self.get_logger().debug('core ready in %.2f s' % warm_up_group('pairset'))
            except Exception as error:  # noqa: B902 -- the first cycle compiles and reports
                self.get_logger().error('loading the core kernels failed: %s' % error)

        threading.Thread(target=load, name='gjk_core_warm_up', daemon=True).start()

    def close(self):
        """Stop the ingestion workers (the node is being destroyed)."""
        self._ingestor.close()
        self._decomposer.close()

    def _now(self):
        """Node-clock time in seconds (the clock of every receive time and expiry)."""
        return self.get_clock().now().nanoseconds * 1e-9

    @staticmethod
    def _steady():
        """Steady-clock seconds: what must run whatever ROS time does (timekeeping.py)."""
        return time.monotonic()

    def _steady_timer(self, period, callback):
        return self.create_timer(period, callback, clock=self._steady_clock)

    def _uses_sim_time(self):
        return bool(self.get_parameter('use_sim_time').value)

    # -- TF path (compute group) -------------------------------------------------------------

    def _on_tf(self, data):
        self._store_transforms(data, static=False)
        if self._pacer.try_start(time.monotonic()):
            self._run_cycle()

    def _on_tf_static(self, data):
        self._store_transforms(data, static=True)

    def _store_transforms(self, data, static):
        topic = '/tf_static' if static else '/tf'
        try:
            entries = decode_tf_message(data)
        except ValueError as error:
            self._problems.report(('input', topic, 'decode'),
                                  'malformed %s message ignored: %s' % (topic, error))
            return
        self._problems.resolve(('input', topic, 'decode'))
        now = self._now()
        self._check_clock(now)
        self._received['tf_static' if static else 'tf'] = now
        self._frames.insert_message(entries, static)

    def _check_clock(self, now):
        """Clear the dynamic TF history when time jumps back, as tf2_ros's buffer does."""
        if now < self._last_now:
            self._frames.clear_dynamic()
            # Receive times of the old time line would keep a dead source fresh until ROS
            # time caught up with them: its sources count as unheard until they publish.
            self._sources.forget_heard()
            self.get_logger().warning(
                'time jumped back by %.3f s: cleared the /tf history (as tf2_ros does) and '
                "the obstacle sources' receive times" % (self._last_now - now))
        self._last_now = now

    # -- ingestion path: bytes to the worker -------------------------------------------------

    def _on_description(self, data):
        self._model.received = self._now()
        limit = self._config.max_description_bytes
        if len(data) > limit + 8:  # the CDR header and string length
            self._reject_description('%d bytes exceed max_description_bytes (%d)'
                                     % (len(data), limit))
            return
        self._model.token = self._ingestor.submit(('urdf',), data)

    def _on_semantic(self, data):
        self._srdf_token = self._ingestor.submit(('srdf',), data)

    _srdf_token = None

    def _on_markers(self, kind, topic, data):
        received = self._now()
        self._last_marker_message[kind] = received
        limit = self._config.max_message_bytes
        count = marker_count(data)
        problem = ('input', topic)
        if len(data) > limit:
            reason = 'a %d-byte message exceeds max_message_bytes (%d)' % (len(data), limit)
        elif count is None:
            reason = 'not a serialized MarkerArray'
        elif count > self._config.max_markers_per_message:
            reason = 'a MarkerArray of %d markers exceeds max_markers_per_message (%d)' % (
                count, self._config.max_markers_per_message)
        elif not self._ingestor.submit_markers(kind, data, received):
            reason = 'the geometry worker is behind; a message was dropped'
        else:
            self._problems.resolve(problem, '%s: messages accepted again' % topic)
            return
        # Dropped whole: its sources are not refreshed, so their obstacles go STALE.
        self._problems.report(problem, '%s: %s (its sources are not refreshed)'
                              % (topic, reason))

    # -- parameters --------------------------------------------------------------------------

    def _on_set_parameters(self, parameters):
        for parameter in parameters:
            reason = _parameter_problem(parameter.name, parameter.value, self._limits())
            if reason is not None:
                return SetParametersResult(successful=False,
                                           reason='%s: %s' % (parameter.name, reason))
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, parameters):
        old = self._config
        self._config = self._read_config()
        changed = {parameter.name for parameter in parameters}
        if self._config.rate_hz != old.rate_hz:
            self._pacer.set_rate(self._config.rate_hz)
            self.destroy_timer(self._watchdog)
            self._watchdog = self._steady_timer(self._pacer.period, self._on_watchdog)
        if changed & {'clock_timeout', 'use_sim_time'}:
            self._ros_time = RosTimeMonitor(self._config.clock_timeout, self._uses_sim_time())
        if changed & {'static_obstacles', 'link_geometry', 'fixed_frame'}:
            self._parameter_bodies_dirty = True
        if changed & {'obstacle_timeout', 'static_obstacle_namespaces',
                      'required_obstacle_sources'}:
            self._configure_sources()
        if changed & LIMIT_PARAMETERS:
            self._ingestor.set_limits(self._limits())
        if changed & LIMIT_PARAMETERS or changed & DECOMPOSITION_PARAMETERS:
            self._configure_decomposition()
        if (old.hill_climbing, old.tracking) != (self._config.hill_climbing,
                                                 self._config.tracking):
            self._tracker = PairTracker(self._config.hill_climbing, self._config.tracking)
            self._layout_key = None

    # -- the cycle (compute group) -----------------------------------------------------------

    def _on_watchdog(self):
        """Keep outputs coming when no TF arrives (they say STALE then)."""
        now = time.monotonic()
        if self._pacer.try_start_from_watchdog(now):
            self._run_cycle()

    def _run_cycle(self):
        started = time.perf_counter()
        try:
            self._cycle()
        except Exception as error:  # noqa: B902 -- the node must outlive any bad cycle
            if not self.context.ok():
                return  # shutting down: publishers are gone, nothing to report
            self._problems.report(('cycle', type(error).__name__),
                                  'cycle failed: %s: %s' % (type(error).__name__, error))
        else:
            self._problems.keep_only(('cycle',), set(), lambda key: 'cycles run again')
        self._stats.cycle_time += time.perf_counter() - started

    def _cycle(self):
        now = self._now()
        self._check_clock(now)
        self._ros_time.observe(now, self._steady())
        self._take_inputs(now)
        self._refresh_layout()
        poses, inputs, stamp = self._piece_poses(now)
        started = time.perf_counter()
        records = self._tracker.compute(poses, inputs, self._config.max_distance)
        self._stats.add(time.perf_counter() - started, self._tracker.computed_pairs,
                        self._tracker.warm_pairs, self._tracker.iterations)
        reasons = self._readiness(now)
        self._last_records, self._last_ready = records, (reasons, not reasons)
        header = Header(frame_id=self._config.fixed_frame,
                        stamp=_time_msg(stamp or self.get_clock().now().nanoseconds))
        self._publish(records, not reasons, header)
        self._publish_markers(records, header, poses, inputs)

    def _publish(self, records, ready, header):
        config = self._config
        self_pairs = self._self_mask
        self._distances_pub.publish(make_cloud(records[~self_pairs], header))
        if config.self_collision:
            self._self_distances_pub.publish(make_cloud(records[self_pairs], header))
        counted = records if config.self_collision_in_min_distance else records[~self_pairs]
        self._min_distance_pub.publish(Float64(data=min_distance(
            counted, ready, config.max_distance, config.allow_no_obstacles)))

    def _publish_markers(self, records, header, poses, inputs):
        """~/markers, for eyes: at most every MARKERS_PERIOD, and only when someone listens."""
        monotonic = time.monotonic()
        if not self._config.publish_markers or \
                monotonic - self._last_markers_publish < MARKERS_PERIOD or \
                not self._markers_pub.get_subscription_count():
            return
        self._last_markers_publish = monotonic
        views = [PieceView(kind, name, self._piece_marker_ids[index], self._piece_shapes[index],
                           poses[index], _STATUS_OF_INPUT[int(inputs[index])],
                           self._names.id_of(kind, name)[0])
                 for index, (kind, name, key) in enumerate(self._piece_locations)]
        self._markers_pub.publish(self._marker_builder.build(
            records[~self._self_mask], header, views, self._config.max_distance))

    # -- inputs, applied by the compute thread -----------------------------------------------

    def _take_inputs(self, now):
        self._submit_parameter_bodies()
        for result in self._ingestor.poll(RESULTS_PER_CYCLE):
            self._apply_result(result)
        if self._decomposer.poll():
            self._report_decomposition_failures()
        for kind, _, key in self._bodies.expire(now, keep=self._keep_expired):
            self._markers.pop((kind, key), None)
        self._report_body_problems()

    def _report_decomposition_failures(self):
        failures = self._decomposer.failures()
        for uri, reason in failures.items():
            self._problems.report(('decomposition', uri), "mesh '%s' keeps its hull: %s"
                                  % (uri, reason), level='warning')
        self._problems.keep_only(('decomposition',), {('decomposition', uri) for uri in failures})

    def _keep_expired(self, kind, name, key, expires):
        """
        Whether a marker past its lifetime must stay (as STALE) rather than vanish.

        RViz drops a marker when its lifetime ends. Here a marker goes only once its source has
        been heard after the lifetime ended (the source is alive and chose not to renew it);
        if the source has been silent since, the publisher may have died, and a dead publisher
        must never make an obstacle vanish (issue 7): the marker stays, STALE.
        """
        heard = self._sources.last_heard(kind, key[1]) if key[0] == 'marker' else None
        return key[0] == 'marker' and (heard is None or heard <= expires)

    def _reject_description(self, reason):
        self._model.error = reason
        self._problems.report(('robot_description', reason),
                              'robot_description rejected (keeping the previous model): %s'
                              % reason)

    def _submit_parameter_bodies(self):
        if not self._parameter_bodies_dirty:
            return
        self._parameter_bodies_dirty = False
        config = self._config
        for kind, text in ((OBSTACLE, config.static_obstacles), (LINK, config.link_geometry)):
            self._parameter_tokens[kind] = self._ingestor.submit(
                ('param', kind), (text, config.fixed_frame))

    def _apply_result(self, result):
        key = result.key
        if key == ('urdf',):
            if result.token == self._model.token:
                self._model.token = None
                self._apply_model(result)
        elif key == ('srdf',):
            self._apply_srdf(result)
        elif key[0] == 'param':
            if result.token == self._parameter_tokens.get(key[1]):
                del self._parameter_tokens[key[1]]
                self._apply_parameter_bodies(key[1], result)
        elif result.error is not None:
            self._problems.report(('input', key[1], 'batch'), '%s markers: %s'
                                  % (key[1], result.error.reason))
        else:
            self._apply_markers(key[1], *result.value)

    def _apply_srdf(self, result):
        if result.token != self._srdf_token:
            return
        if result.error is not None:
            self._problems.report(('srdf',), 'robot_description_semantic rejected: %s'
                                  % result.error.reason)
            return
        self._problems.resolve(('srdf',))
        self._disabled_links = result.value

    def _apply_model(self, result):
        if result.error is not None:
            self._reject_description(result.error.reason)
            return
        model, self._adjacent_links = result.value
        self._model.built, self._model.error = True, None
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
        for (name, key), reason in errors.items():
            self._bodies.set_error(LINK, name, key, reason)
        self._model_warnings = tuple(model.warnings)
        self._reported_version = None

    def _apply_parameter_bodies(self, kind, result):
        entries = []
        if result.error is not None:
            self._problems.report(('parameter', kind), 'parameter bodies rejected: %s'
                                  % result.error.reason)
        else:
            self._problems.resolve(('parameter', kind))
            entries = result.value
        # Drop only what disappeared, so unchanged pieces keep their tracked caches.
        wanted = {(name, ('param', index)) for name, index, _ in entries}
        for name, key in self._bodies.keys(kind, 'param'):
            if (name, key) not in wanted:
                self._bodies.remove(kind, name, key)
        for name, index, value in entries:
            if isinstance(value, Exception):  # a ModelError from the worker
                self._bodies.set_error(kind, name, ('param', index), value.reason)
            else:
                self._bodies.set_piece(kind, name, ('param', index), value)

    def _clear_markers(self, kind, namespace):
        def doomed(name, key):
            return key[0] == 'marker' and (not namespace or key[1] == namespace)
        for _, key in self._bodies.remove_where(kind, doomed):
            self._markers.pop((kind, key), None)
        self._placement_revision += 1

    def _apply_markers(self, kind, clears, ops, heard):
        """Apply what the worker made of a batch of marker messages (clears first)."""
        for namespace, received in heard.items():
            self._sources.heard(kind, namespace, received)
        for namespace in clears:
            self._clear_markers(kind, namespace)
        for op in ops:
            self._apply_marker_op(kind, op)
        self._placement_revision += 1

    def _apply_marker_op(self, kind, op):
        key = ('marker', op.ns, op.id)
        state = self._markers.get((kind, key))
        expires = lifetime_expiry(op.received, op.lifetime)
        if state is not None and state.name != op.name:
            self._bodies.remove(kind, state.name, key)  # a ~/links marker changed link
            self._markers.pop((kind, key))
            state = None
        if op.action == Marker.DELETE:
            self._bodies.remove(kind, op.name, key)
            self._markers.pop((kind, key), None)
            return
        if op.error is not None:
            self._markers.pop((kind, key), None)
            self._bodies.set_error(kind, op.name, key, op.error, expires)
            return
        # A ~/links marker is part of its link: it always moves with it.
        placement = MarkerPlacement(op.frame_id, _pose_matrix(op.pose),
                                    op.frame_locked or kind == LINK, op.stamp_ns)
        if state is not None and placement.same_place(state.placement):
            placement = state.placement  # keep what was resolved for it
        if op.piece is not None:
            piece = op.piece if op.piece.body == op.name else replace(op.piece, body=op.name)
            self._bodies.set_piece(kind, op.name, key, piece, expires)
            self._markers[(kind, key)] = _MarkerState(op.name, op.geometry_key, placement,
                                                      expires, built=True)
        elif state is not None and state.built and state.geometry_key == op.geometry_key:
            state.placement, state.expires = placement, expires
            self._bodies.touch(kind, op.name, key, expires)
        else:
            # The worker thinks we hold this geometry and we do not (it expired meanwhile,
            # or the worker restarted): ask for it again; until then the body is PENDING.
            self._ingestor.forget(kind, op.ns, op.id)
            self._markers[(kind, key)] = _MarkerState(op.name, op.geometry_key, placement,
                                                      expires)
            self._bodies.set_pending(kind, op.name, key, expires)

    def _report_body_problems(self):
        """One log line per rejection or warning when it appears, one when it goes away."""
        if self._reported_version == self._bodies.version:
            return  # nothing was added, removed or rejected since the last report
        self._reported_version = self._bodies.version
        current = set()
        for kind, name, reason in self._bodies.all_errors():
            key = ('body', kind, name, reason)
            current.add(key)
            self._problems.report(key, "%s '%s' rejected: %s" % (kind, name, reason))
        self._problems.keep_only(('body',), current,
                                 lambda key: "%s '%s': rejected geometry cleared" % key[1:3])
        warnings = set()
        for kind in (LINK, OBSTACLE):
            for name in self._bodies.names(kind):
                for tracked in self._bodies.pieces(kind, name):
                    warnings.update(('warning', warning) for warning in tracked.piece.warnings)
        warnings.update(('warning', warning) for warning in self._model_warnings)
        for key in warnings:
            self._problems.report(key, key[1], level='warning')
        self._problems.keep_only(('warning',), warnings)

    # -- layout and poses --------------------------------------------------------------------

    def _scope_key(self):
        config = self._config
        return (self._bodies.version, config.link_include, config.link_exclude,
                config.obstacle_include, config.obstacle_exclude, config.allowed_pairs,
                config.padding, config.link_padding, config.obstacle_padding,
                config.self_collision, id(self._adjacent_links), id(self._disabled_links),
                self._decomposer.version)

    def _body_state(self, kind, name):
        if self._bodies.errors(kind, name):
            return PairStatus.INVALID
        if self._bodies.is_pending(kind, name):
            return PairStatus.PENDING
        return PairStatus.VALID

    def _bodies_in_scope(self, kind, in_scope):
        bodies = []
        for name in self._bodies.names(kind):
            if not in_scope(name):
                continue
            body_id, _ = self._names.id_of(kind, name)
            pieces = []
            for key, tracked in self._bodies.keyed_pieces(kind, name):
                for part in self._layout_pieces(tracked):
                    self._locations[part.uid] = (kind, name, key)
                    self._layout_shapes[part.uid] = part.piece.shape
                    pieces.append(part)
            bodies.append((name, body_id, pieces, self._body_state(kind, name)))
        return bodies

    def _layout_pieces(self, tracked):
        """
        Return the tracked pieces that stand for one body piece: itself, or its convex parts.

        A part shares the piece's frame and origin (so its pose, expiry and source are the
        piece's); its uid ``(piece uid, part index)`` keeps its simplex caches across rebuilds.
        """
        parts = self._decomposer.parts_for(tracked.piece)
        if not parts:
            return [tracked]
        return [TrackedPiece((tracked.uid, index), replace(tracked.piece, shape=shape))
                for index, shape in enumerate(parts)]

    def _refresh_layout(self):
        key = self._scope_key()
        if key == self._layout_key:
            return
        self._layout_key = key
        self._locations, self._layout_shapes = {}, {}
        before = self._names.as_dict()
        links = self._bodies_in_scope(LINK, self._config.link_in_scope)
        obstacles = self._bodies_in_scope(OBSTACLE, self._config.obstacle_in_scope)
        self._names.keep_only(LINK, {name for name, *_ in links})
        self._names.keep_only(OBSTACLE, {name for name, *_ in obstacles})
        self._self_pairs = ()
        if self._config.self_collision:
            disabled = self._disabled_links
            # Imported here: gjk_ros.models brings trimesh (0.45 s), which only the worker
            # needs otherwise; the node's start waits for its imports.
            from gjk_ros.models.kinematics import self_collision_pairs
            self._self_pairs = self_collision_pairs(
                [name for name, *_ in links], self._adjacent_links,
                lambda first, second: frozenset((first, second)) in disabled)
        layout = build_layout(links, obstacles, self._config.pair_allowed, self._self_pairs,
                              self._config.link_padding_of, self._config.obstacle_padding_of)
        self._self_mask = numpy.array([spec.self_pair for spec in layout.records], dtype=bool)
        self._piece_locations = [self._locations[uid] for uid in layout.piece_uids]
        self._piece_sources = [(kind, key[1]) if key[0] == 'marker' else None
                               for kind, _, key in self._piece_locations]
        self._piece_shapes = [self._layout_shapes[uid] for uid in layout.piece_uids]
        # A decomposed piece's parts share its key: their marker ids add the part index.
        self._piece_marker_ids = [
            _piece_index(key if not isinstance(uid, tuple) else key + ('part', uid[1]))
            for uid, (_, _, key) in zip(layout.piece_uids, self._piece_locations)]
        self._tracker.rebuild(layout, self._piece_shapes)
        self._tracked_link_ids = [body_id for _, body_id, _, _ in links]
        self._pose_cache = (None, None)
        self._stats.rebuilds += 1
        self._sources.forget_unused({source for source in self._piece_sources if source}
                                    | self._marker_sources())
        names = self._names.as_dict()
        if names != before or self._names_published is None:
            self._names_published = names
            self._names_pub.publish(String(data=json.dumps(names)))

    _names_published = None
    _self_mask = numpy.zeros(0, dtype=bool)

    def _marker_sources(self):
        return {(kind, key[1]) for kind, key in self._markers}

    def _piece_frames_and_origins(self):
        """
        Frames and origins of the layout pieces; cached until a piece or placement changes.

        A marker piece that is not frame-locked is placed in ``fixed_frame`` at its stamp;
        until that is possible its frame is None (the piece is STALE).

        Returns
        -------
        tuple of (list of str, (n, 4, 4) float, (n,) int)
            The distinct frames, each piece's origin, and each piece's index into the frames
            (``len(frames)`` for a piece without a frame): many pieces share a frame, so the
            cycle looks each frame up once.

        """
        cache_key = (self._bodies.revision, self._placement_revision, self._config.fixed_frame)
        key, cached = self._pose_cache
        if key == cache_key and cached is not None:
            return cached
        fixed_frame = self._config.fixed_frame
        frames, origins = [], numpy.empty((len(self._piece_locations), 4, 4))
        for index, (kind, name, key) in enumerate(self._piece_locations):
            piece = self._bodies.piece_by_key(kind, name, key).piece
            state = self._markers.get((kind, key))
            frame, origin = piece.frame_id.lstrip('/') or fixed_frame, piece.origin
            if state is not None:
                frame, origin = self._placed(state.placement, fixed_frame)
            frames.append(frame)
            origins[index] = numpy.eye(4) if origin is None else origin
        distinct = sorted({frame for frame in frames if frame is not None})
        position = {frame: index for index, frame in enumerate(distinct)}
        frame_index = numpy.array([position.get(frame, len(distinct)) for frame in frames],
                                  dtype=numpy.int64)
        self._pose_cache = (cache_key, (distinct, origins, frame_index))
        return self._pose_cache[1]

    def _placed(self, placement, fixed_frame):
        """(frame, origin) of a marker piece, or (None, None) while it cannot be placed."""
        if placement.frame_locked or placement.frame_id == fixed_frame:
            return placement.frame_id or fixed_frame, placement.origin
        origin = placement.placed.get(fixed_frame)
        return (fixed_frame, origin) if origin is not None else (None, None)

    def _place_markers(self, fixed_frame):
        """Try to place every unplaced, not frame-locked marker at its stamp."""
        changed = False
        for (kind, key), state in self._markers.items():
            placement = state.placement
            if placement.frame_locked or placement.frame_id == fixed_frame or \
                    fixed_frame in placement.placed:
                continue
            lookup = self._frames.lookup(fixed_frame, placement.frame_id,
                                         time_ns=placement.stamp_ns)
            problem = ('placement', kind, key)
            if lookup.status == TfStatus.OK:
                placement.placed[fixed_frame] = lookup.matrix @ placement.origin
                placement.failure = ''
                self._problems.resolve(problem)
                changed = True
            elif lookup.status != TfStatus.EXTRAPOLATION or lookup.past:
                placement.failure = lookup.reason
                self._problems.report(problem, "%s '%s' (frame_locked false) cannot be placed "
                                      'at its stamp: %s; its pairs are STALE'
                                      % (kind, state.name, lookup.reason), level='warning')
        if changed:
            self._placement_revision += 1

    def _piece_poses(self, now):
        """
        World pose and input state of every layout piece, and the output stamp.

        Returns
        -------
        tuple of ((n, 4, 4) float, (n,) int, int)
            The stamp is the oldest latest-common-time of the chains used (0 if none).

        """
        config = self._config
        self._place_markers(config.fixed_frame)
        frames, origins, frame_index = self._piece_frames_and_origins()
        now_ns, timeout_ns = int(now * 1e9), int(config.tf_timeout * 1e9)
        lookups = self._frames.lookup_many(config.fixed_frame, frames, now_ns=now_ns,
                                           timeout_ns=timeout_ns)
        self._report_frames(lookups)
        # One row per distinct frame, and a last one (identity, STALE) for "no frame".
        frame_poses = numpy.tile(numpy.eye(4), (len(frames) + 1, 1, 1))
        frame_inputs = numpy.full(len(frames) + 1, InputState.STALE, dtype=numpy.int64)
        for index, frame in enumerate(frames):
            lookup = lookups[frame]
            frame_inputs[index] = _INPUT_OF_FRAME[lookup.status]
            if lookup.status == TfStatus.OK:
                frame_poses[index] = lookup.matrix
        inputs = frame_inputs[frame_index]
        with numpy.errstate(all='ignore'):  # overflow is caught by _check_poses
            poses = numpy.matmul(frame_poses[frame_index], origins)
        stamps = [lookup.stamp_ns for lookup in lookups.values()
                  if lookup.status == TfStatus.OK and lookup.dynamic]
        self._check_poses(poses, inputs)
        self._mark_silent_sources(inputs, now)
        if self._ros_time.problem(self._steady()) is not None:
            inputs[inputs == InputState.OK] = InputState.STALE  # no age can be judged
        poses[inputs != InputState.OK] = numpy.eye(4)
        return poses, inputs, min(stamps) if stamps else 0

    def _check_poses(self, poses, inputs):
        """Make INVALID every piece whose composed pose is not a sane rigid transform."""
        with numpy.errstate(all='ignore'):
            finite = numpy.isfinite(poses).all(axis=(1, 2))
            in_range = (numpy.abs(poses[:, :3, 3]) <= MAX_COORDINATE).all(axis=1)
            rotations = poses[:, :3, :3]
            gram = numpy.einsum('nji,njk->nik', rotations, rotations)
            rigid = (numpy.abs(gram - numpy.eye(3)) <= ROTATION_TOLERANCE).all(axis=(1, 2))
        bad = (inputs == InputState.OK) & ~(finite & in_range & rigid)
        inputs[bad] = InputState.INVALID
        current = set()
        for index in numpy.flatnonzero(bad):
            kind, name, _ = self._piece_locations[index]
            key = ('pose', kind, name)
            current.add(key)
            self._problems.report(key, "%s '%s': composed pose is not finite, beyond %g m or "
                                  'not rigid; its pairs are INVALID' % (kind, name,
                                                                        MAX_COORDINATE))
        self._problems.keep_only(('pose',), current,
                                 lambda key: "%s '%s': pose sane again" % key[1:3])

    def _mark_silent_sources(self, inputs, now):
        """
        Make STALE the pieces of silent sources and of markers kept past their lifetime.

        A source is silent after ``obstacle_timeout`` (Nav2's source_timeout); a marker is
        kept past its lifetime while its source was not heard since (``_keep_expired``).
        """
        stale = {source for source in set(self._piece_sources)
                 if source is not None and self._sources.is_stale(source[0], source[1], now)}
        silent = [source in stale for source in self._piece_sources]
        expired = self._piece_expiry() < now
        inputs[(numpy.array(silent, dtype=bool) | expired) & (inputs == InputState.OK)] = \
            InputState.STALE
        current = {('source',) + source for source in stale}
        for key in current:
            self._problems.report(key, "%s source '%s' silent for more than obstacle_timeout "
                                  '(%g s); its pairs are STALE'
                                  % (key[1], key[2], self._config.obstacle_timeout),
                                  level='warning')
        self._problems.keep_only(('source',), current,
                                 lambda key: "%s source '%s' publishes again" % key[1:])
        self._stale_sources = sorted('%s:%s' % source for source in stale)

    _stale_sources = ()

    def _piece_expiry(self):
        """Expiry time of every layout piece (inf: never); rebuilt when a piece changes."""
        key = (self._bodies.revision, self._bodies.expiry_version, id(self._piece_locations))
        if self._expiry_cache[0] != key:
            expiry = [self._bodies.expires(kind, name, piece_key)
                      for kind, name, piece_key in self._piece_locations]
            self._expiry_cache = (key, numpy.array(
                [math.inf if value is None else value for value in expiry], dtype=float))
        return self._expiry_cache[1]

    _expiry_cache = (None, None)

    def _report_frames(self, lookups):
        """Log a frame once when it stops being usable and once when it recovers."""
        config = self._config
        previous = self._frame_states
        for frame, lookup in lookups.items():
            if previous.get(frame) == lookup.status == TfStatus.OK:
                continue  # nothing to log; the common case, skipped for the cycle's sake
            key = ('frame', frame)
            if lookup.status == TfStatus.OK:
                self._problems.resolve(key, "frame '%s' recovered" % frame)
                continue
            level = 'error' if lookup.status == TfStatus.INVALID else 'warning'
            self._problems.report(key, "frame '%s' to '%s': %s; its pairs are %s"
                                  % (frame, config.fixed_frame, lookup.reason,
                                     'INVALID' if level == 'error' else 'STALE'), level=level)
        if previous.keys() != lookups.keys():
            self._problems.keep_only(('frame',), {('frame', frame) for frame in lookups})
        self._frame_states = {frame: lookup.status for frame, lookup in lookups.items()}

    # -- readiness ---------------------------------------------------------------------------

    def _readiness(self, now):
        """
        Why ``~/min_distance`` cannot vouch for its scope now (empty when ready).

        Ready means: the robot model is built (unless not required), parameter bodies are
        built, every link in scope has a usable transform, and every required obstacle source
        has published and is fresh.
        """
        reasons = []
        config = self._config
        clock_problem = self._ros_time.problem(self._steady())
        if clock_problem is not None:
            reasons.append(clock_problem)
        if config.require_robot_description and not self._model.built:
            reasons.append(self._model_reason())
        if self._parameter_tokens:
            reasons.append('static_obstacles / link_geometry being built')
        if not self._tracked_link_ids:
            reasons.append('no link in scope')
        frames = self._link_frames_without_transform()
        if frames:
            reasons.append('no usable transform for link frame(s) %s' % ', '.join(frames[:5]))
        reasons += self._sources.required_problems(now)
        self._report_readiness(reasons)
        return reasons

    def _model_reason(self):
        if self._model.error is not None:
            return 'robot_description rejected: %s' % self._model.error
        if self._model.token is not None:
            return 'robot_description being built'
        waited = self._steady() - self._started
        if waited >= self._config.robot_description_timeout:
            return ('no robot_description after %.0f s: remap it? (this node subscribes to '
                    "'%s')" % (waited, self.resolve_topic_name('robot_description')))
        return 'waiting for robot_description'

    def _link_frames_without_transform(self):
        cached = self._pose_cache[1]
        if cached is None:
            return []
        distinct, _, frame_index = cached
        frames = set()
        for index, (kind, _, _) in enumerate(self._piece_locations):
            if kind == LINK:
                frame = distinct[frame_index[index]] if frame_index[index] < len(distinct) \
                    else None
                if frame is None or self._frame_states.get(frame) != TfStatus.OK:
                    frames.add(str(frame))
        return sorted(frames)

    def _report_readiness(self, reasons):
        # Keyed by the reason's first words so that a changing count does not log again.
        current = {('not ready', reason.split(':')[0].split(' after ')[0]): reason
                   for reason in reasons}
        for key, reason in current.items():
            self._problems.report(key, 'not ready, ~/min_distance is -inf: %s' % reason)
        self._problems.keep_only(('not ready',), set(current),
                                 lambda key: 'ready: %s resolved' % key[1])

    # -- diagnostics -------------------------------------------------------------------------

    def _on_diagnostics(self):
        try:
            self._check_duplicate_name()
            self._publish_diagnostics()
        except Exception as error:  # noqa: B902 -- diagnostics must never stop the node
            if self.context.ok():
                self._problems.report(('diagnostics', type(error).__name__),
                                      'diagnostics failed: %s: %s'
                                      % (type(error).__name__, error))

    def _check_duplicate_name(self):
        """Warn when another node of the same name and namespace is on the graph."""
        twins = sum(1 for name, namespace in self.get_node_names_and_namespaces()
                    if name == self.get_name() and namespace == self.get_namespace())
        self._duplicates = twins - 1
        if twins > 1:
            self._problems.report(('duplicate',), "another node named '%s' is on this ROS "
                                  'graph: consumers will receive interleaved answers; give '
                                  'each instance its own name or namespace'
                                  % self.get_fully_qualified_name(), level='warning')
        else:
            self._problems.resolve(('duplicate',))

    _duplicates = 0

    def _input_ages(self, now):
        def age(received):
            return now - received if received is not None and math.isfinite(received) \
                else math.inf
        frames = self._frame_states
        sources = {'%s:%s' % key: value for key, value in self._sources.ages(now).items()}
        return diagnostics.InputAges(
            tf=age(self._received['tf']),
            tf_static=age(self._received['tf_static']),
            robot_description=age(self._model.received),
            obstacles=age(self._last_marker_message[OBSTACLE]),
            links=age(self._last_marker_message[LINK]),
            frames_known=self._frames.frame_count(),
            stale_frames=sorted(f for f, s in frames.items()
                                if s in (TfStatus.STALE, TfStatus.EXTRAPOLATION)),
            missing_frames=sorted(f for f, s in frames.items() if s == TfStatus.MISSING),
            invalid_frames=sorted(f for f, s in frames.items() if s == TfStatus.INVALID),
            not_ready=list(self._last_ready[0]),
            stale_sources=list(self._stale_sources),
            source_ages=sources,
            pending_bodies=self._bodies.pending_count(),
            suppressed_problems=self._problems.suppressed,
            duplicates=self._duplicates,
        )

    def _publish_diagnostics(self):
        name = self.get_fully_qualified_name().lstrip('/')
        config = self._config
        records = self._last_records
        statuses = [
            diagnostics.compute_status(name, self._stats, 0 if records is None else len(records),
                                       self._tracker.num_piece_pairs, config.rate_hz),
            diagnostics.inputs_status(name, self._input_ages(self._now()), config.tf_timeout),
        ]
        if records is not None:
            statuses += diagnostics.link_statuses(name, records[~self._self_mask],
                                                  self._names.names_by_id(LINK),
                                                  self._names.names_by_id(OBSTACLE),
                                                  self._tracked_link_ids)
        for kind, body, reason in self._bodies.all_errors()[:diagnostics.MAX_ERROR_ENTRIES]:
            statuses.append(diagnostics.error_status(name, 'rejected %s %s' % (kind, body),
                                                     reason))
        if self._model.error is not None:
            statuses.append(diagnostics.error_status(name, 'robot_description',
                                                     self._model.error))
        if config.decompose_meshes:
            statuses.append(diagnostics.decomposition_status(
                name, self._decomposer.waiting(), self._decomposer.failures()))
        message = DiagnosticArray(status=statuses)
        message.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(message)
        self._stats = diagnostics.CycleStats()


# Piece types cheap enough to build in the parameter callback, so that a typo in a size is
# refused at `ros2 param set` time; meshes and point sets are built (and, if bad, rejected with
# a log line and a diagnostics error) by the geometry worker.
_CHEAP_TYPES = ('box', 'sphere', 'cylinder', 'capsule')


def _piece_index(key):
    """Return a stable integer for a piece key (the same every cycle and every run)."""
    return zlib.crc32(repr(key).encode())


def _parameter_problem(name, value, limits=None):
    """
    Why a parameter value is refused, or None; never raises.

    Validation is bounded (parse_body_descriptions limits size, nesting and node counts, with
    the node's current limits), and whatever escapes it anyway (RecursionError, MemoryError)
    is a refusal, not a dead node.
    """
    try:
        reason = validate_parameter(name, value)
        if reason is None and name in ('static_obstacles', 'link_geometry'):
            reason = _check_primitive_pieces(value, limits)
        return reason
    except RecursionError:
        return 'nested too deeply'
    except Exception as error:  # noqa: B902 -- any failure to validate is a refusal
        return 'cannot be validated (%s)' % type(error).__name__


def _check_primitive_pieces(text, limits=None):
    """Build the primitive pieces of a body-description parameter; the first error, or None."""
    try:
        bodies = parse_body_descriptions(text, limits)
    except ValueError as error:
        return str(error)
    if not bodies:
        return None  # the usual empty default: no need to import the models (see below)
    from gjk_ros.models import ModelError, piece_from_description  # see _refresh_layout
    for name, _, descriptions in bodies:
        for description in descriptions:
            if description.get('type') not in _CHEAP_TYPES:
                continue
            try:
                piece_from_description(name, 'frame', description)
            except ModelError as error:
                return str(error)
            except (ValueError, TypeError) as error:
                return '%s: %s' % (name, error)
    return None


def _pose_matrix(pose):
    """(4, 4) matrix of a marker pose the worker checked (``ingestion.check_pose``)."""
    x, y, z, qx, qy, qz, qw = pose
    largest = max(abs(qx), abs(qy), abs(qz), abs(qw))
    qx, qy, qz, qw = qx / largest, qy / largest, qz / largest, qw / largest
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    matrix = numpy.eye(4)
    matrix[:3, :3] = rotation_matrix(qx / norm, qy / norm, qz / norm, qw / norm)
    matrix[:3, 3] = (x, y, z)
    return matrix


def main(args=None):
    """Run the node until Ctrl-C, SIGTERM or shutdown; returns the process exit code."""
    rclpy.init(args=args)
    node, executor = None, None
    try:
        node = DistanceNode()
        # One thread: every callback is cheap (bytes in, bytes out), and rclpy's
        # MultiThreadedExecutor could not keep up with 1 kHz /tf (README, Architecture).
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterException as error:
        rclpy.logging.get_logger(NODE_NAME).fatal('bad parameter: %s' % error)
        return 1
    except Exception:  # noqa: B902 -- an error racing shutdown is not a failure
        if rclpy.ok():
            raise
    finally:
        _shut_down(node, executor)
    return 0


def _shut_down(node, executor):
    """Stop everything whatever state shutdown left it in; never raise."""
    for step in (lambda: node.close(), lambda: executor.shutdown(timeout_sec=1.0),
                 lambda: node.destroy_node(), rclpy.try_shutdown):
        try:
            step()
        except Exception:  # noqa: B902 -- a half-built node or a shut-down context
            pass


if __name__ == '__main__':
    sys.exit(main())
