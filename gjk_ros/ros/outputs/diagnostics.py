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
``/diagnostics`` entries of the node (diagnostic_updater is not available everywhere).

Entry names are ``<node>: <task>`` as diagnostic_updater writes them, where ``<node>`` is the
node's fully qualified name without the leading '/' (diagnostic_updater uses the bare node
name; the namespace is kept so that several instances on one graph stay apart), and
``hardware_id`` is 'none', diagnostic_updater's convention for software with no device:

- ``<node>: lifecycle``: the managed node's state and ``~/toggle`` (WARN unless active and
  measuring: the outputs are silent, or say paused); the only entry while unconfigured;
- ``<node>: compute``: compute time per cycle, pair counts, cache hit rate;
- ``<node>: inputs``: readiness, input ages, stale sources and frames, pattern entries that
  match nothing, incompatible QoS on the marker topics, other nodes of the same name
  (WARN / ERROR), and ``instance`` (host:pid) to tell such twins apart;
- ``<node>: link <name>``: closest obstacle of each tracked link, and its record statuses;
- ``<node>: rejected <kind> <name>``: one ERROR per body whose geometry was rejected;
- ``<node>: robot_description``: ERROR while the last URDF could not be parsed.
"""

import collections
from dataclasses import dataclass, field
import math
import os
import socket

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.inputs.tf_buffer import TfStatus
from gjk_ros.ros.qos import OUTPUT_QOS
from gjk_ros.ros.records import PairStatus
import numpy

__all__ = ['CycleStats', 'compute_status', 'DiagnosticsReporter', 'error_status',
           'inputs_status', 'lifecycle_status', 'link_statuses', 'mesh_status']

# diagnostic_updater asks software nodes without a device to say 'none'.
HARDWARE_ID = 'none'
# At most this many 'rejected ...' entries per message: hostile input must not make
# /diagnostics grow without bound (the count of the rest is in the inputs entry).
MAX_ERROR_ENTRIES = 50

# Which process published an entry: tells apart two nodes that share a name.
INSTANCE = '%s:%d' % (socket.gethostname(), os.getpid())

OK = DiagnosticStatus.OK
WARN = DiagnosticStatus.WARN
ERROR = DiagnosticStatus.ERROR


@dataclass
class CycleStats:
    """Running compute statistics between two diagnostics messages."""

    cycles: int = 0
    total_time: float = 0.0
    max_time: float = 0.0
    last_time: float = 0.0
    computed_pairs: int = 0
    warm_pairs: int = 0
    kept_pairs: int = 0  # piece pairs that kept their answer, neither piece having moved
    iterations: int = 0
    rebuilds: int = 0
    cycle_time: float = 0.0

    def add(self, seconds, computed, warm, iterations, kept=0):
        """Account for one cycle."""
        self.cycles += 1
        self.total_time += seconds
        self.max_time = max(self.max_time, seconds)
        self.last_time = seconds
        self.computed_pairs += computed
        self.warm_pairs += warm
        self.kept_pairs += kept
        self.iterations += iterations


@dataclass
class InputAges:
    """Ages (seconds, inf if never) and problem frames, for the inputs entry."""

    tf: float = math.inf
    tf_static: float = math.inf
    robot_description: float = math.inf
    obstacles: float = math.inf
    links: float = math.inf
    frames_known: int = 0
    stale_frames: list = field(default_factory=list)
    missing_frames: list = field(default_factory=list)
    invalid_frames: list = field(default_factory=list)
    not_ready: list = field(default_factory=list)
    stale_sources: list = field(default_factory=list)
    source_ages: dict = field(default_factory=dict)
    pending_bodies: int = 0
    suppressed_problems: int = 0
    duplicates: int = 0
    unmatched_patterns: list = field(default_factory=list)
    incompatible_qos: dict = field(default_factory=dict)
    source_counts: dict = field(default_factory=dict)  # {source: its counts} (SourceStatus)
    tf_messages: int = 0  # /tf messages decoded since the last report
    tf_dropped: int = 0   # /tf messages dropped undecoded since the last report (overload)


def _values(**items):
    return [KeyValue(key=key, value=str(value)) for key, value in items.items()]


def _status(node_name, name, level, message, values=()):
    return DiagnosticStatus(level=level, name='%s: %s' % (node_name, name), message=message,
                            hardware_id=HARDWARE_ID, values=list(values))


def _age_text(age):
    return 'never' if not math.isfinite(age) else '%.3f' % age


def compute_status(node_name, stats, num_records, num_piece_pairs, rate_hz):
    """Build the compute entry: whole cycle time (headline), core time, pairs, hit rate."""
    cycles = max(stats.cycles, 1)
    # A pair that kept its answer is the warmest start there is: it counts as a hit.
    answered = stats.computed_pairs + stats.kept_pairs
    hit_rate = (stats.warm_pairs + stats.kept_pairs) / answered if answered else 0.0
    mean_iterations = stats.iterations / stats.computed_pairs if stats.computed_pairs else 0.0
    mean_ms = 1e3 * stats.total_time / cycles
    cycle_ms = 1e3 * stats.cycle_time / cycles
    level = WARN if stats.cycle_time / cycles > 1.0 / rate_hz else OK
    message = '%d pairs, %.3f ms per cycle (%.3f ms in the core), %d cycles' % (
        num_records, cycle_ms, mean_ms, stats.cycles)
    if level == WARN:
        message += ', slower than rate_hz'
    return _status(node_name, 'compute', level, message, _values(
        cycles=stats.cycles,
        compute_time_mean_ms='%.3f' % mean_ms,
        compute_time_max_ms='%.3f' % (1e3 * stats.max_time),
        compute_time_last_ms='%.3f' % (1e3 * stats.last_time),
        cycle_time_mean_ms='%.3f' % (1e3 * stats.cycle_time / cycles),
        pairs=num_records,
        piece_pairs=num_piece_pairs,
        computed_piece_pairs=stats.computed_pairs,
        kept_piece_pairs=stats.kept_pairs,
        cache_hit_rate='%.3f' % hit_rate,
        mean_gjk_iterations='%.2f' % mean_iterations,
        rebuilds=stats.rebuilds,
        rate_hz=rate_hz,
    ))


def _listed(names, most=5):
    shown = ', '.join(names[:most])
    return shown + (' and %d more' % (len(names) - most) if len(names) > most else '')


def inputs_status(node_name, ages, tf_timeout):
    """Build the inputs entry: readiness, ages, sources and frames that make pairs unknown."""
    level, problems = OK, []
    if ages.not_ready:
        level = ERROR
        problems.append('not ready (~/min_distance -inf): %s' % '; '.join(ages.not_ready))
    if ages.invalid_frames:
        level = ERROR
        problems.append('invalid transform: %s' % _listed(ages.invalid_frames))
    if ages.stale_frames or ages.missing_frames or ages.stale_sources or ages.duplicates or \
            ages.unmatched_patterns or ages.incompatible_qos or ages.tf_dropped:
        level = max(level, WARN)
    if ages.tf_dropped:
        problems.append('overloaded: %d of %d /tf messages dropped undecoded (the newest kept)'
                        % (ages.tf_dropped, ages.tf_dropped + ages.tf_messages))
    if ages.stale_sources:
        problems.append('silent obstacle sources: %s' % _listed(ages.stale_sources))
    if ages.stale_frames:
        problems.append('stale (> %g s): %s' % (tf_timeout, _listed(ages.stale_frames)))
    if ages.missing_frames:
        problems.append('no transform: %s' % _listed(ages.missing_frames))
    if ages.duplicates:
        problems.append('%d other node(s) with this name' % ages.duplicates)
    if ages.unmatched_patterns:
        problems.append('patterns matching nothing: %s' % _listed(ages.unmatched_patterns))
    if ages.incompatible_qos:
        problems.append('incompatible QoS: %s' % _listed(
            ['%s (%s)' % item for item in sorted(ages.incompatible_qos.items())]))
    return _status(node_name, 'inputs', level, '; '.join(problems) or 'ok', _values(
        tf_age_s=_age_text(ages.tf),
        tf_static_age_s=_age_text(ages.tf_static),
        robot_description_age_s=_age_text(ages.robot_description),
        obstacles_age_s=_age_text(ages.obstacles),
        links_age_s=_age_text(ages.links),
        frames_known=ages.frames_known,
        stale_frames=' '.join(ages.stale_frames),
        missing_frames=' '.join(ages.missing_frames),
        invalid_frames=' '.join(ages.invalid_frames),
        not_ready=' | '.join(ages.not_ready),
        stale_sources=' '.join(ages.stale_sources),
        pending_bodies=ages.pending_bodies,
        suppressed_problems=ages.suppressed_problems,
        unmatched_patterns=' | '.join(ages.unmatched_patterns),
        incompatible_qos=' | '.join('%s: %s' % item
                                    for item in sorted(ages.incompatible_qos.items())),
        duplicates=ages.duplicates,
        tf_messages=ages.tf_messages,
        tf_dropped=ages.tf_dropped,
        **{'%s_%s' % (source, name): value for source, counts in ages.source_counts.items()
           for name, value in vars(counts).items()},
        instance=INSTANCE,
        **{'source_age_s %s' % source: '%.3f' % age
           for source, age in sorted(ages.source_ages.items())[:20]},
    ))


def _link_summary(node_name, link, rows, obstacle_names):
    """One link's entry from its records (a structured array slice)."""
    status = rows['status']
    counts = {member.name.lower(): int((status == member).sum()) for member in PairStatus}
    measured = numpy.isin(status, (PairStatus.VALID, PairStatus.APPROXIMATE))
    level = OK
    if (status == PairStatus.INVALID).any():
        level = ERROR
    elif (status == PairStatus.STALE).any():
        level = WARN
    closest, distance = '', math.nan
    if measured.any():
        index = int(numpy.argmin(numpy.where(measured, rows['distance'], numpy.inf)))
        closest = obstacle_names.get(int(rows['obstacle_id'][index]), '')
        distance = float(rows['distance'][index])
        message = 'closest: %s at %.4f m' % (closest, distance)
    elif len(rows) and (status == PairStatus.BEYOND).all():
        message = 'no obstacle within max_distance'
    elif len(rows):
        message = 'no valid pair'
    else:
        message = 'no obstacle'
    if level != OK:
        message += ' (%d stale, %d invalid)' % (counts['stale'], counts['invalid'])
    return _status(node_name, 'link %s' % link, level, message, _values(
        closest_obstacle=closest, distance='%.6f' % distance, **counts))


def link_statuses(node_name, records, link_names, obstacle_names, tracked_links):
    """
    One entry per tracked link: closest obstacle, distance and record statuses.

    Parameters
    ----------
    node_name : str
        Prefix of the entry names.
    records : (r,) RECORD_DTYPE array
        The last published records.
    link_names, obstacle_names : dict of int to str
        Id -> name.
    tracked_links : iterable of int
        Ids of the links in scope (a link with no obstacle still gets an entry).

    """
    entries = []
    for link_id in sorted(tracked_links):
        rows = records[records['link_id'] == link_id]
        entries.append(_link_summary(node_name, link_names.get(link_id, str(link_id)), rows,
                                     obstacle_names))
    return entries


def lifecycle_status(node_name, state, enabled):
    """
    Build the lifecycle entry: the managed node's state and whether ``~/toggle`` paused it.

    OK only when active and measuring; WARN otherwise, since then the safety outputs are
    silent (not active) or read -inf (paused): deliberate, but a consumer must know.
    """
    if state != 'active':
        message = '%s: no output until activated (lifecycle change_state)' % state
    elif not enabled:
        message = 'active, paused by ~/toggle: ~/min_distance reads -inf'
    else:
        message = 'active, measuring'
    level = OK if state == 'active' and enabled else WARN
    return _status(node_name, 'lifecycle', level, message,
                   _values(state=state, enabled=str(enabled).lower()))


def error_status(node_name, name, reason):
    """Build an ERROR entry for one rejected body or input."""
    return _status(node_name, name, ERROR, reason)


def decomposition_status(node_name, waiting, failures):
    """
    Build the decomposition entry (only when ``decompose_meshes`` is set).

    Waiting meshes are OK (their hull is conservative: distances can only be shorter); a failed
    one is a WARN, since that body stays on its hull for good.
    """
    level, problems = OK, []
    if waiting:
        problems.append('%d mesh(es) use their hull until decomposed: %s'
                        % (len(waiting), _listed(waiting)))
    if failures:
        level = WARN
        problems.append('%d decomposition(s) failed, hull kept: %s'
                        % (len(failures), _listed(['%s (%s)' % item
                                                   for item in sorted(failures.items())])))
    return _status(node_name, 'decomposition', level, '; '.join(problems) or 'all parts ready',
                   _values(waiting=len(waiting), failed=len(failures)))


def _mesh_text(use):
    """One mesh as the meshes entry says it: mode, pieces, watertight or hull reach."""
    if use.mode == 'exact':
        text = 'exact, %d piece(s), %s' % (use.pieces, 'watertight' if use.watertight else
                                           'not watertight (open parts unsigned)')
    elif use.mode == 'parts':
        text = 'parts (CoACD, hull until decomposed)'
    elif math.isnan(use.hull_deviation):
        text = 'hull'
    else:
        text = 'hull, reaches %.3g m beyond the mesh' % use.hull_deviation
    return '%s: %s%s' % (use.label, text, ('; ' + use.note) if use.note else '')


def mesh_status(node_name, uses):
    """
    Build the meshes entry: what each non-convex mesh became (``mesh_mode``), one value a body.

    WARN while a mesh is not what was asked for (an exact mesh kept its hull, parts without
    decompose_meshes) or an exact mesh is not watertight (its open parts have no inside).
    """
    bodies, counts = {}, collections.Counter()
    for use in uses:
        bodies.setdefault(use.body, []).append(_mesh_text(use))
        counts[use.mode] += 1
    problems = sorted({use.body for use in uses if use.note or use.watertight is False})
    reaches = [use.hull_deviation for use in uses
               if use.mode == 'hull' and not math.isnan(use.hull_deviation)]
    message = ', '.join('%d %s' % (counts[mode], mode) for mode in sorted(counts)) or 'none'
    message = '%s mesh(es): %s' % (len(uses), message)
    if reaches:
        message += '; hulls reach up to %.3g m beyond their meshes' % max(reaches)
    if problems:
        message += '; see %s' % _listed(problems)
    values = [KeyValue(key=body, value='; '.join(texts)) for body, texts in sorted(bodies.items())]
    return _status(node_name, 'meshes', WARN if problems else OK, message, values)


class DiagnosticsReporter:
    """
    ``/diagnostics`` of one node, from what its ``Cycle`` holds (none while unconfigured).

    Also watches the graph for another node of the same name (consumers would receive
    interleaved answers).

    Parameters
    ----------
    node : rclpy.node.Node
        Publishes ``/diagnostics`` and names the entries; its graph is watched for twins.
    problems : gjk_ros.ros.problems.ProblemLog
        Where twins and unmatched patterns are reported, and how many problems were dropped.

    """

    def __init__(self, node, problems):
        self._node = node
        self._problems = problems
        self._publisher = node.create_publisher(DiagnosticArray, '/diagnostics', OUTPUT_QOS)
        self.duplicates = 0
        self._tf_counts = (0, 0)  # the TF input's (decoded, dropped) at the last report

    def check_duplicate_name(self):
        """Warn when another node of the same name and namespace is on the graph."""
        node = self._node
        twins = sum(1 for name, namespace in node.get_node_names_and_namespaces()
                    if name == node.get_name() and namespace == node.get_namespace())
        self.duplicates = twins - 1
        if twins > 1:
            self._problems.report(('duplicate',), "another node named '%s' is on this ROS "
                                  'graph: consumers will receive interleaved answers; give '
                                  'each instance its own name or namespace'
                                  % node.get_fully_qualified_name(), level='warning')
        else:
            self._problems.resolve(('duplicate',))

    def check_patterns(self, layout):
        """
        Warn once per pattern parameter entry that matches no current body; log when it does.

        Judged against the bodies in the world now (``Layout.unmatched``): obstacles arrive
        over time, so an entry may match later, and its warning then resolves.
        """
        unmatched = layout.unmatched
        keys = {_Unmatched('pattern', parameter, entry) for parameter, entry in unmatched}
        for key in sorted(keys):
            self._problems.report(key, "%s entry '%s' matches nothing in the world: it has no "
                                  'effect (a safety margin or a scope rule may be missing)'
                                  % (key.parameter, key.entry), level='warning')
        self._problems.keep_only(('pattern',), keys,
                                 lambda key: "%s entry '%s' matches something now"
                                 % (key.parameter, key.entry))
        return ['%s %s' % item for item in unmatched]

    def input_ages(self, cycle):
        """Gather what the inputs entry reports from the cycle's components."""
        frames, clocks = cycle.frames, cycle.clocks
        now_ns = clocks.now_ns()
        now = now_ns * 1e-9
        named = {name: source.status(now_ns) for name, source in cycle.sources.items()}
        statuses = list(named.values())

        def age(received):
            return now - received if received is not None else math.inf

        def age_ns(received):
            return (now_ns - received) * 1e-9 if received is not None else math.inf
        topics = {label: heard for status in statuses
                  for label, heard in status.topic_heard.items()}
        ages = InputAges(
            tf=age(frames.received['tf']),
            tf_static=age(frames.received['tf_static']),
            robot_description=age_ns(topics.get('robot_description')),
            obstacles=age_ns(topics.get('obstacles')),
            links=age_ns(topics.get('links')),
            frames_known=frames.buffer.frame_count(),
            stale_frames=frames.frames_in(TfStatus.STALE, TfStatus.EXTRAPOLATION),
            missing_frames=frames.frames_in(TfStatus.MISSING),
            invalid_frames=frames.frames_in(TfStatus.INVALID),
            not_ready=list(cycle.readiness.reasons),
            stale_sources=[label for status in statuses for label in status.silent],
            source_ages={label: age_ns(heard) for status in statuses
                         for label, heard in status.heard.items()},
            pending_bodies=cycle.world.bodies.pending_count(),
            suppressed_problems=self._problems.suppressed,
            duplicates=self.duplicates,
            unmatched_patterns=self.check_patterns(cycle.layout),
            incompatible_qos={topic: text for status in statuses
                              for topic, text in status.incompatible_qos.items()},
            source_counts={name: status.counts for name, status in named.items()
                           if status.counts is not None},
            tf_messages=frames.tf_messages - self._tf_counts[0],
            tf_dropped=frames.tf_dropped - self._tf_counts[1],
        )
        self._tf_counts = (frames.tf_messages, frames.tf_dropped)
        return ages

    def publish(self, state, enabled, cycle):
        """Publish every entry (the lifecycle one only while unconfigured: ``cycle`` None)."""
        node = self._node
        name = node.get_fully_qualified_name().lstrip('/')
        statuses = [lifecycle_status(name, state, enabled)]
        if cycle is not None:
            statuses += self._component_statuses(name, cycle)
            cycle.stats = CycleStats()
        message = DiagnosticArray(status=statuses)
        message.header.stamp = node.get_clock().now().to_msg()
        self._publisher.publish(message)

    def _component_statuses(self, name, cycle):
        config, layout, records, world = cycle.config, cycle.layout, cycle.last_records, \
            cycle.world
        statuses = [
            compute_status(name, cycle.stats, 0 if records is None else len(records),
                           layout.tracker.num_piece_pairs, config.rate_hz),
            inputs_status(name, self.input_ages(cycle), config.tf_timeout),
        ]
        if records is not None:
            statuses += link_statuses(name, records[~layout.self_mask],
                                      world.names.names_by_id(LINK),
                                      world.names.names_by_id(OBSTACLE), layout.link_ids)
        for kind, body, reason in world.bodies.all_errors()[:MAX_ERROR_ENTRIES]:
            statuses.append(error_status(name, 'rejected %s %s' % (kind, body), reason))
        for source in cycle.sources.values():
            error = source.status(cycle.clocks.now_ns()).error
            if error is not None:
                statuses.append(error_status(name, source.name, error))
        uses = [use for source in cycle.sources.values()
                for use in getattr(source, 'mesh_uses', list)()]
        if uses:
            statuses.append(mesh_status(name, uses))
        if config.decompose_meshes:
            statuses.append(decomposition_status(name, cycle.decomposer.waiting(),
                                                 cycle.decomposer.failures()))
        return statuses


# A pattern entry that matches nothing, as the problem log keys it.
_Unmatched = collections.namedtuple('_Unmatched', 'topic parameter entry')
