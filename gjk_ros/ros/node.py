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

The node is a composition (docs/architecture.md): inputs arrive through **sources** (robot
model, parameter bodies, marker topics) and **frames** (TF) into the **world**; each cycle the
**layout** measures every piece pair in scope, **readiness** decides whether the minimum can
be vouched for, and the **outputs** and **diagnostics** publish. Three paths never wait on each
other: TF (decoded raw into the node's buffer, may start a cycle), ingestion (the geometry
worker process builds pieces from raw bytes) and compute (the cycle below, also started by a
steady-clock watchdog when TF stops).

It is a managed node (docs/managed_node.md): cycles run, and outputs are published, only while
it is active; ``~/toggle`` pauses measuring while outputs keep coming and say so.
"""

from dataclasses import replace
import sys
import threading
import time

from builtin_interfaces.msg import Time
from gjk_ros.core.warmup import warm_up_group
from gjk_ros.ros.decomposer import MeshDecomposer
from gjk_ros.ros.diagnostics import DiagnosticsReporter
from gjk_ros.ros.frames import Frames
from gjk_ros.ros.ingestion import Ingestor
from gjk_ros.ros.layout import Layout
from gjk_ros.ros.managed import (check_combination, OwnedEntities, PAUSED_REASON,
                                 run_transition, Toggle)
from gjk_ros.ros.markers import PieceView
from gjk_ros.ros.node_parameters import NodeParameters
from gjk_ros.ros.outputs import data_stamp, Outputs, record_ages, record_stamps
from gjk_ros.ros.pacing import CyclePacer
from gjk_ros.ros.pairs import InputState
from gjk_ros.ros.problems import ProblemLog
from gjk_ros.ros.readiness import Readiness
from gjk_ros.ros.records import PairStatus
from gjk_ros.ros.sources import make_sources
from gjk_ros.ros.timekeeping import NodeClocks, stamp_fields
from gjk_ros.ros.world import World
import numpy
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from std_msgs.msg import Header

__all__ = ['DistanceNode', 'main']

NODE_NAME = 'gjk_distance'

DIAGNOSTICS_PERIOD = 1.0  # seconds, diagnostic_updater's default
# Finished ingestion results applied per cycle: each is a cheap world update, but a burst of
# thousands (a huge MarkerArray) must be spread over cycles rather than delay one.
RESULTS_PER_CYCLE = 200

_STATUS_OF_INPUT = {
    InputState.OK: PairStatus.VALID,
    InputState.STALE: PairStatus.STALE,
    InputState.INVALID: PairStatus.INVALID,
}


class DistanceNode(LifecycleNode):
    """
    Publish tracked link-obstacle distances; see the module docstring and docs/architecture.md.

    A managed node (docs/managed_node.md): construction declares the parameters and makes
    ``/diagnostics``, its timer and ``~/toggle``; *configure* makes everything else (the
    components, the geometry workers, subscriptions, publishers and the watchdog), *activate*
    lets cycles run and publish, *deactivate* stops them, *cleanup* and *shutdown* release what
    configure made. With ``autostart`` (the default) the node configures and activates itself
    at the end of construction.

    Parameters
    ----------
    **kwargs
        Passed to ``rclpy.lifecycle.LifecycleNode`` (e.g. ``parameter_overrides`` in tests).

    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.problems = ProblemLog(self.get_logger())
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self._watchdog = None
        self._warmed_up = False
        self.state = 'unconfigured'
        self.components = {}
        self.parameters = NodeParameters(self, self._reconfigure)
        self.add_on_set_parameters_callback(check_combination(lambda: self.config))
        self.diagnostics = DiagnosticsReporter(self)
        self.toggle = Toggle(self)
        self._owned = OwnedEntities(self)
        # Steady clock: diagnostics must run whatever ROS time does (timekeeping.py), and in
        # every lifecycle state, to say which one the node is in.
        self.create_timer(DIAGNOSTICS_PERIOD, self._on_diagnostics, clock=self._steady_clock)
        if self.config.autostart:
            self._autostart()

    @property
    def config(self):
        """Return the current parameters (a ``Config``)."""
        return self.parameters.config

    @property
    def configured(self):
        """Whether the components exist (inactive or active)."""
        return self.state in ('inactive', 'active')

    # -- lifecycle -----------------------------------------------------------------------------

    def _autostart(self):
        """Configure, then activate, as a lifecycle manager with autostart would."""
        if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
            self.trigger_activate()

    def on_configure(self, state):
        """Read the parameters, make the components, subscribe, start the watchdog."""
        result = run_transition(self.get_logger(), 'configure',
                                lambda: self._owned.record(self._configure))
        if result != TransitionCallbackReturn.SUCCESS:
            self._release()
            return result
        self.state = 'inactive'
        self.get_logger().info("configured: computing distances in '%s' at up to %g Hz once "
                               'active' % (self.config.fixed_frame, self.config.rate_hz))
        return result

    def _configure(self):
        self._make_components()
        self._reconfigure(self.config, set(self.components))
        for source in self.sources.values():
            source.subscribe(self)
        self.frames.subscribe(self)
        if not self._warmed_up:
            self._warm_up()
            self._warmed_up = True
        # Steady clock: the watchdog must run whatever ROS time does (timekeeping.py).
        self._watchdog = self.create_timer(self.pacer.period, self._on_watchdog,
                                           clock=self._steady_clock)

    def on_activate(self, state):
        """Start cycles; the speed scaling starts at 0 (nothing measured yet)."""
        self.outputs.scaling.reset()
        self.state = 'active'
        self.get_logger().info('active: publishing')
        return super().on_activate(state)

    def on_deactivate(self, state):
        """Stop cycles: no output until activated again (the safety deadline shows it)."""
        self.state = 'inactive'
        self.get_logger().info('inactive: not publishing')
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        """Release what configure made."""
        self._release()
        self.get_logger().info('cleaned up: unconfigured')
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        """Release what configure made (from any primary state); the node is finalized."""
        self._release()
        self.state = 'finalized'
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state):
        """Release what configure made; the node goes back to unconfigured."""
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _release(self):
        """Stop the workers and destroy what configure made; safe in any state."""
        self.state = 'unconfigured'
        self.close()
        self._owned.release()
        self._watchdog = None
        self.components = {}

    def _make_components(self):
        self.clocks = NodeClocks(self.get_clock(), self.get_logger())
        self.pacer = CyclePacer(self.config.rate_hz)
        self.ingestor = Ingestor(self.config.ingest_limits(), start_worker=True)
        self.decomposer = MeshDecomposer(
            lambda limits: Ingestor(limits, timeout_parameter='decomposition_timeout'))
        self.world = World()
        self.frames = Frames(self.problems, self.clocks, self._on_transform)
        sources = make_sources(self.config, self.ingestor, self.problems, self.clocks,
                               self.frames, self.decomposer)
        self.sources = {source.name: source for source in sources}
        self.clocks.on_jump_back(self.frames.buffer.clear_dynamic)
        for source in sources:
            self.clocks.on_jump_back(source.forget_heard)
        self.outputs = Outputs(self, self.config.rate_hz)
        self.layout = Layout(self.decomposer, self.outputs.publish_names)
        self.readiness = Readiness(self.problems)
        self.last_records = None
        self.components = {
            'clock': self._configure_clock,
            'pacing': self._configure_pacing,
            'frames': self.frames.configure,
            'sources': self._configure_sources,
            'ingestion': self._configure_ingestion,
            'decomposition': self._configure_decomposition,
            'layout': self.layout.configure,
            'outputs': self.outputs.configure,
            'lifecycle': lambda config: None,  # autostart: read once, at construction
        }

    def _reconfigure(self, config, components):
        """
        Hand a new config to the named components (``ParameterSpec.reconfigures``).

        Unconfigured, no component exists: configure hands each one the config then.
        """
        if not self.components:
            return
        for name in sorted(components):
            self.components[name](config)

    def _configure_sources(self, config):
        # A source may subscribe again when its topic changes at run time: what it makes is
        # owned like what configure made, so that cleanup releases it too.
        self._owned.record(lambda: [source.configure(config)
                                    for source in self.sources.values()])

    def _configure_clock(self, config):
        self.clocks.configure(config.clock_timeout, self.get_parameter('use_sim_time').value)

    def _configure_pacing(self, config):
        if config.rate_hz != self.pacer.rate_hz:
            self.pacer.set_rate(config.rate_hz)
            self._owned.forget(self._watchdog)
            self.destroy_timer(self._watchdog)
            self._watchdog = self.create_timer(self.pacer.period, self._on_watchdog,
                                               clock=self._steady_clock)
            self._owned.add('destroy_timer', self._watchdog)

    def _configure_ingestion(self, config):
        if config.ingest_limits() != self.ingestor.limits:
            self.ingestor.set_limits(config.ingest_limits())  # the worker restarts with them

    def _configure_decomposition(self, config):
        limits = replace(config.ingest_limits(), job_timeout_s=config.decomposition_timeout)
        self.decomposer.configure(config.decompose_meshes, config.decomposition_threshold,
                                  config.decomposition_cache, limits)
        self._report_decomposition_failures()

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
        """Stop the ingestion workers (cleanup, shutdown, or the node is being destroyed)."""
        for component in ('ingestor', 'decomposer'):
            if hasattr(self, component):
                getattr(self, component).close()
        for source in getattr(self, 'sources', {}).values():
            source.close()

    # -- when a cycle runs ---------------------------------------------------------------------

    def _on_transform(self):
        was_waiting = self.pacer.waiting
        if self.pacer.try_start(time.monotonic()):
            self._run_cycle()
        elif not was_waiting and self._watchdog is not None:
            # It waits for a token: the watchdog's next tick, a period from now, has one and
            # runs its cycle (pacing.py).
            self._watchdog.reset()

    def _on_watchdog(self):
        """Keep outputs coming when no TF arrives (they say STALE then); steady clock."""
        if self.pacer.try_start_from_watchdog(time.monotonic()):
            self._run_cycle()

    def _run_cycle(self):
        if self.state != 'active':
            return  # inactive: nothing is published (docs/managed_node.md)
        started = time.perf_counter()
        try:
            self._cycle()
        except Exception as error:  # noqa: B902 -- the node must outlive any bad cycle
            if not self.context.ok():
                return  # shutting down: publishers are gone, nothing to report
            self.problems.report(('cycle', type(error).__name__),
                                 'cycle failed: %s: %s' % (type(error).__name__, error))
        else:
            self.problems.keep_only(('cycle',), set(), lambda key: 'cycles run again')
        self.diagnostics.stats.cycle_time += time.perf_counter() - started

    # -- the cycle -----------------------------------------------------------------------------

    def _cycle(self):
        config, layout = self.config, self.layout
        # 1. Time: a jump back clears the TF history; is ROS time advancing at all? Stamps are
        # integer ns (timekeeping.py); seconds only measure durations.
        now_ns = self.clocks.now_ns()
        now = now_ns * 1e-9
        self.clocks.observe(now_ns)
        # 2. Inputs: the sources apply what the geometry worker finished to the world.
        self._take_inputs(now, now_ns)
        # 3. Scope: rebuild the piece pairs when bodies or scope parameters changed.
        if layout.refresh(self.world):
            self.diagnostics.stats.rebuilds += 1
        # 4. Poses: every piece placed in fixed_frame with the latest transforms.
        frames, origins, frame_index = layout.frames_and_origins(self.world, self.sources,
                                                                 config.fixed_frame)
        poses, inputs, piece_times = self.frames.pose_pieces(frames, origins, frame_index,
                                                             now_ns, self._describe_piece)
        # 5. Freshness: silent sources, expired markers and an untrusted clock are STALE;
        # each piece's data is as old as its transform or its source's last message.
        self._judge_sources(inputs, piece_times, now)
        poses[inputs != InputState.OK] = numpy.eye(4)
        # 6. Measure every piece pair whose inputs are good.
        started = time.perf_counter()
        records = layout.tracker.compute(poses, inputs, config.max_distance)
        tracker = layout.tracker
        self.diagnostics.stats.add(time.perf_counter() - started, tracker.computed_pairs,
                                   tracker.warm_pairs, tracker.iterations)
        # 7. Readiness: can the minimum vouch for the whole scope?
        self.readiness.check(
            self.clocks.problem(),
            [reason for source in self.sources.values() for reason in source.not_ready(now)],
            layout.link_ids, self.frames.without_transform(layout.link_frames()),
            None if self.toggle.enabled else PAUSED_REASON)
        # 8. Publish, every output with one header stamped with the oldest datum used.
        stamps, empty = record_stamps(tracker, piece_times)
        records['age'] = record_ages(stamps, empty, now_ns)
        records['ready'] = self.readiness.ready
        self.last_records = records
        sec, nanosec = stamp_fields(data_stamp(stamps, empty, now_ns))
        header = Header(frame_id=config.fixed_frame, stamp=Time(sec=sec, nanosec=nanosec))
        self.outputs.publish(records, layout.self_mask, self.readiness.reasons, header,
                             self.world.names, self.world.link_groups)
        self.outputs.publish_markers(records, layout.self_mask, header,
                                     lambda: self._piece_views(poses, inputs))

    def _take_inputs(self, now, now_ns):
        for source in self.sources.values():
            source.submit(self.ingestor)
        for result in self.ingestor.poll(RESULTS_PER_CYCLE):
            for source in self.sources.values():
                if source.owns(result.key):
                    source.on_result(result, self.world)
        if self.decomposer.poll():
            self._report_decomposition_failures()
        for kind, _, key in self.world.bodies.expire(now, keep=self._keep_expired):
            self.sources[key[0]].expired(kind, key)
        for source in self.sources.values():
            source.poll(self.world, now_ns)
        self.world.report_problems(self.problems)

    def _keep_expired(self, kind, name, key, expires):
        return self.sources[key[0]].keep_expired(kind, key, expires)

    def _judge_sources(self, inputs, piece_times, now):
        """
        Apply each source's freshness to its pieces; all STALE when ROS time is untrusted.

        A silent source's pieces become STALE; each piece's data time becomes the older of
        its transform's and its source's (``Source.data_times``).
        """
        for name, (indices, pieces) in self.layout.by_source.items():
            source = self.sources[name]
            silent = numpy.array(source.silent(pieces, now), dtype=bool)
            chosen = indices[silent]
            inputs[chosen[inputs[chosen] == InputState.OK]] = InputState.STALE
            piece_times[indices] = numpy.minimum(
                piece_times[indices], numpy.array(source.data_times(pieces), dtype=numpy.int64))
        if self.clocks.problem() is not None or not self.toggle.enabled:
            # No age can be judged, or paused by ~/toggle: nothing is measured.
            inputs[inputs == InputState.OK] = InputState.STALE

    def _describe_piece(self, index):
        location = self.layout.locations[index]
        return location.kind, location.name

    def _piece_views(self, poses, inputs):
        layout, names = self.layout, self.world.names
        return [PieceView(loc.kind, loc.name, layout.marker_ids[index], layout.shapes[index],
                          poses[index], _STATUS_OF_INPUT[int(inputs[index])],
                          names.id_of(loc.kind, loc.name)[0])
                for index, loc in enumerate(layout.locations)]

    def _report_decomposition_failures(self):
        failures = self.decomposer.failures()
        for uri, reason in failures.items():
            self.problems.report(('decomposition', uri), "mesh '%s' keeps its hull: %s"
                                 % (uri, reason), level='warning')
        self.problems.keep_only(('decomposition',), {('decomposition', uri) for uri in failures})

    def _on_diagnostics(self):
        try:
            self.diagnostics.check_duplicate_name()
            self.diagnostics.publish()
        except Exception as error:  # noqa: B902 -- diagnostics must never stop the node
            if self.context.ok():
                self.problems.report(('diagnostics', type(error).__name__),
                                     'diagnostics failed: %s: %s'
                                     % (type(error).__name__, error))


def main(args=None):
    """Run the node until Ctrl-C, SIGTERM or shutdown; returns the process exit code."""
    rclpy.init(args=args)
    node, executor = None, None
    try:
        node = DistanceNode()
        # One thread: every callback is cheap (bytes in, bytes out), and rclpy's
        # MultiThreadedExecutor could not keep up with 1 kHz /tf (docs/architecture.md).
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
