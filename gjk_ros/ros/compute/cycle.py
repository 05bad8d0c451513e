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
The node's cycle, and the components its *configure* makes (docs/architecture.md).

``Cycle`` owns every component that lives from configure to cleanup (the geometry workers,
the sources with their subscriptions, the TF input, the world, the layout, the outputs with
their publishers, the watchdog), routes parameter changes to them (``components``), and runs
one cycle (``run``) in eight numbered steps. ``close`` releases all of it; each component
destroys what it made.
"""

from dataclasses import replace
import time

from builtin_interfaces.msg import Time
from gjk_ros.ros.compute.closing_speeds import ClosingSpeeds
from gjk_ros.ros.compute.layout import Layout
from gjk_ros.ros.compute.pacing import CyclePacer
from gjk_ros.ros.compute.pairs import InputState
from gjk_ros.ros.compute.readiness import Readiness
from gjk_ros.ros.compute.sweeping import SweptRecords
from gjk_ros.ros.compute.world import World
from gjk_ros.ros.inputs.decomposer import MeshDecomposer
from gjk_ros.ros.inputs.frames import Frames
from gjk_ros.ros.inputs.ingestion import Ingestor
from gjk_ros.ros.inputs.sources.base import SourceContext
from gjk_ros.ros.inputs.sources.registry import make_sources
from gjk_ros.ros.inputs.timekeeping import NodeClocks, stamp_fields
from gjk_ros.ros.managed import PAUSED_REASON
from gjk_ros.ros.outputs.diagnostics import CycleStats
from gjk_ros.ros.outputs.hull_markers import PieceView
from gjk_ros.ros.outputs.publishers import Outputs
from gjk_ros.ros.outputs.safety import data_stamp, record_ages, record_stamps
from gjk_ros.ros.records import PairStatus, status_table
import numpy
from std_msgs.msg import Header

__all__ = ['Cycle']

# Records whose bound the minimum takes (the others are unknown, hence contact, anyway).
_ANSWERED = status_table([PairStatus.VALID, PairStatus.APPROXIMATE, PairStatus.BEYOND])

_STATUS_OF_INPUT = {
    InputState.OK: PairStatus.VALID,
    InputState.STALE: PairStatus.STALE,
    InputState.INVALID: PairStatus.INVALID,
}


class Cycle:
    """
    What configure made, and the cycle through it.

    Parameters
    ----------
    node : rclpy.node.Node
        Makes the subscriptions, publishers and the watchdog.
    config : gjk_ros.ros.params.Config
        The parameters at configure.
    problems : gjk_ros.ros.problems.ProblemLog
        Where every component reports.
    on_transform, on_watchdog : callable()
        Called on each ``/tf`` message and each watchdog tick (the node decides whether a cycle
        runs: ``pacing.CyclePacer``).
    steady_clock : rclpy.clock.Clock
        The watchdog's clock.

    """

    def __init__(self, node, config, problems, on_transform, on_watchdog, steady_clock):
        self._node, self._problems = node, problems
        self._on_watchdog, self._steady_clock = on_watchdog, steady_clock
        self.config = config
        self.ingestor = self.decomposer = self.frames = self.outputs = self.watchdog = None
        self.sources = {}
        try:
            self._make(node, config, problems, on_transform)
        except Exception:
            self.close()  # what was made before the failure
            raise

    def _make(self, node, config, problems, on_transform):
        self.clocks = NodeClocks(node.get_clock(), node.get_logger())
        self.pacer = CyclePacer(config.rate_hz)
        self.ingestor = Ingestor(config.ingest_limits(), start_worker=True)
        self.decomposer = MeshDecomposer(
            lambda limits: Ingestor(limits, timeout_parameter='decomposition_timeout'))
        self.world = World()
        self.frames = Frames(problems, self.clocks, on_transform)
        self.clocks.on_jump_back(self.frames.clear_dynamic)
        context = SourceContext(self.ingestor, problems, self.clocks, self.decomposer,
                                self.world)
        self.sources = {source.name: source for source in make_sources(config, context)}
        self.outputs = Outputs(node, config.rate_hz)
        self.layout = Layout(self.decomposer, self.outputs.publish_names)
        self.readiness = Readiness(problems)
        self.sweeping = SweptRecords()
        self.closing = ClosingSpeeds()
        self.stats = CycleStats()
        self.last_records = None
        self.swept_witnesses = None  # (r, 6) at each record's swept minimum (sweeping.py)
        self.components = {
            'clock': self._configure_clock,
            'pacing': self._configure_pacing,
            'frames': self.frames.configure,
            'sources': self._configure_sources,
            'ingestion': self._configure_ingestion,
            'decomposition': self._configure_decomposition,
            'layout': self.layout.configure,
            'outputs': self.outputs.configure,
            'sweeping': lambda config: self.sweeping.reset(),  # the next cycle starts afresh
            'lifecycle': lambda config: None,  # autostart: read once, at construction
        }

    def start(self):
        """Configure every component, subscribe, and start the watchdog."""
        self.reconfigure(self.config, set(self.components))
        for source in self.sources.values():
            source.subscribe(self._node)
        self.frames.subscribe(self._node)
        self._start_watchdog()

    def reconfigure(self, config, components):
        """Hand a new config to the named components (``ParameterSpec.reconfigures``)."""
        self.config = config
        for name in sorted(components):
            self.components[name](config)

    def close(self):
        """Stop the workers and destroy every subscription, publisher and timer made here."""
        for component in [self.ingestor, self.decomposer, self.frames, self.outputs,
                          *self.sources.values()]:
            if component is not None:
                component.close()
        if self.watchdog is not None:
            self._node.destroy_timer(self.watchdog)
            self.watchdog = None

    # -- reconfiguration -----------------------------------------------------------------------

    def _configure_sources(self, config):
        for source in self.sources.values():
            source.configure(config)

    def _configure_clock(self, config):
        self.clocks.configure(config.clock_timeout,
                              self._node.get_parameter('use_sim_time').value)

    def _configure_pacing(self, config):
        if config.rate_hz != self.pacer.rate_hz:
            self.pacer.set_rate(config.rate_hz)
            self._node.destroy_timer(self.watchdog)
            self._start_watchdog()

    def _start_watchdog(self):
        # Steady clock: the watchdog must run whatever ROS time does (timekeeping.py).
        self.watchdog = self._node.create_timer(self.pacer.period, self._on_watchdog,
                                                clock=self._steady_clock)

    def _configure_ingestion(self, config):
        if config.ingest_limits() != self.ingestor.limits:
            self.ingestor.set_limits(config.ingest_limits())  # the worker restarts with them

    def _configure_decomposition(self, config):
        limits = replace(config.ingest_limits(), job_timeout_s=config.decomposition_timeout)
        self.decomposer.configure(config.decompose_meshes, config.decomposition_threshold,
                                  config.decomposition_cache, limits)
        self._report_decomposition_failures()

    def _report_decomposition_failures(self):
        failures = self.decomposer.failures()
        for uri, reason in failures.items():
            self._problems.report(('decomposition', uri), "mesh '%s' keeps its hull: %s"
                                  % (uri, reason), level='warning')
        self._problems.keep_only(('decomposition',),
                                 {('decomposition', uri) for uri in failures})

    # -- the cycle -----------------------------------------------------------------------------

    def run(self, measuring):
        """
        One cycle; ``measuring`` is False while ``~/toggle`` paused the node.

        Returns the records published (``RECORD_DTYPE``).
        """
        config, layout, world, frames = self.config, self.layout, self.world, self.frames
        # 1. Time: a jump back clears the TF history; is ROS time advancing at all? Stamps are
        # integer ns (timekeeping.py); seconds only measure durations.
        now_ns = self.clocks.now_ns()
        self.clocks.observe(now_ns)
        # 2. Inputs: what each source holds now replaces its slot in the world.
        for name, source in self.sources.items():
            world.replace(name, source.collect(now_ns, frames))
        if self.decomposer.poll():
            self._report_decomposition_failures()
        world.report_problems(self._problems)
        # 3. Scope: rebuild the piece pairs when bodies or scope parameters changed.
        if layout.refresh(world):
            self.stats.rebuilds += 1
        # 4. Poses: every piece placed in fixed_frame with the latest transforms.
        frame_names, origins, frame_index = layout.placement(world)
        poses, inputs, piece_times = frames.pose_pieces(frame_names, origins, frame_index,
                                                        now_ns, self._describe_piece)
        # 5. Freshness: stale sources and an untrusted clock are STALE; each piece's data is as
        # old as its transform or its source's data, whichever is older.
        transform_times = piece_times.copy()  # the velocities' samples (closing_speeds.py)
        layout.judge(world, inputs, piece_times)
        if self.clocks.problem() is not None or not measuring:
            # No age can be judged, or paused by ~/toggle: nothing is measured.
            inputs[inputs == InputState.OK] = InputState.STALE
        poses[inputs != InputState.OK] = numpy.eye(4)
        # 6. Measure every piece pair whose inputs are good.
        started = time.perf_counter()
        tracker = layout.tracker
        records = tracker.compute(poses, inputs, config.max_distance)
        self._sweep(records, poses)
        self.closing.update(tracker, layout.shapes, poses, origins, inputs, transform_times,
                            records, robot_speeds=bool(config.separation_groups))
        self.stats.add(time.perf_counter() - started, tracker.computed_pairs,
                       tracker.warm_pairs, tracker.iterations, tracker.reused_pairs)
        # 7. Readiness: can the minimum vouch for the whole scope?
        self.readiness.check(
            self.clocks.problem(),
            [reason for slot in world.slots.values() for reason in slot.not_ready],
            layout.link_ids, frames.without_transform(layout.link_frames()),
            None if measuring else PAUSED_REASON)
        # 8. Publish, every output with one header stamped with the oldest datum used.
        stamps, empty = record_stamps(tracker, piece_times)
        records['age'] = record_ages(stamps, empty, now_ns)
        records['ready'] = self.readiness.ready
        self.last_records = records
        sec, nanosec = stamp_fields(data_stamp(stamps, empty, now_ns))
        header = Header(frame_id=config.fixed_frame, stamp=Time(sec=sec, nanosec=nanosec))
        self.outputs.publish(records, layout.self_mask, self.readiness.reasons, header,
                             world.names, world.link_groups, self.closing.robot_speeds)
        self.outputs.publish_markers(records, layout.self_mask, header,
                                     lambda: self._piece_views(poses, inputs),
                                     self.swept_witnesses)
        return records

    def _sweep(self, records, poses):
        """Each record's swept bound over the motion since the last cycle (sweeping.py)."""
        config, engine = self.config, self.layout.tracker.engine
        self.swept_witnesses = None
        if not config.swept_distances or engine is None:
            self.sweeping.reset()
            return
        lower, fraction = self.sweeping.update(engine, poses, config.max_distance,
                                               config.swept_tolerance,
                                               config.swept_relative_tolerance)
        answered = _ANSWERED[records['status']]
        records['swept_distance'] = numpy.where(answered, lower, numpy.nan)
        records['swept_fraction'] = numpy.where(answered, fraction, numpy.nan)
        self.swept_witnesses = numpy.where(answered[:, None], self.sweeping.witnesses,
                                           numpy.nan)

    def _describe_piece(self, index):
        location = self.layout.locations[index]
        return location.kind, location.name

    def _piece_views(self, poses, inputs):
        layout, names = self.layout, self.world.names
        return [PieceView(loc.kind, loc.name, layout.marker_ids[index], layout.shapes[index],
                          poses[index], _STATUS_OF_INPUT[int(inputs[index])],
                          names.id_of(loc.kind, loc.name)[0])
                for index, loc in enumerate(layout.locations)]
