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
Frames: the TF input, and every layout piece's world pose and input state each cycle.

``/tf`` and ``/tf_static`` are read raw and decoded into the node's own ``TfBuffer``
(time-sorted per edge, tf2's semantics; tf2_ros is not installable everywhere). A piece's pose
is ``T(fixed_frame <- frame) @ origin`` with the latest transforms; a chain older than
``tf_timeout`` (from its latest common ``header.stamp``), unknown or extrapolated makes its
pieces STALE, a non-finite, absurd or non-rigid one INVALID. A transform the buffer refuses as a
whole (an empty frame id, a self transform, a stamp no header can carry) is logged once by its
frames, as tf2 logs TF_SELF_TRANSFORM and TF_NO_FRAME_ID, and once more when they are accepted.
"""

import collections
import math
import time

from gjk_ros.core.rigid import MAX_COORDINATE, valid_pose_mask
from gjk_ros.ros.compute.pairs import InputState
from gjk_ros.ros.inputs.draining import take_waiting
from gjk_ros.ros.inputs.tf_buffer import TfBuffer, TfStatus
from gjk_ros.ros.inputs.tf_messages import TfDecoder, warm_up
from gjk_ros.ros.inputs.timekeeping import TIMELESS, UNKNOWN
from gjk_ros.ros.qos import TF_QOS, TF_STATIC_QOS
import numpy
from tf2_msgs.msg import TFMessage

__all__ = ['Frames']

# The share of wall time, and of one cycle period at most at once, /tf may take (module text).
DRAIN_SHARE = 0.5
# What storing one transform is first assumed to cost (s), and how fast the measured cost
# replaces it (an exponential average: one message's timing noise moves it little).
STORE_COST = 2e-6
STORE_COST_GAIN = 0.1

# The problem-log keys of a transform the buffer refused, and of a piece with an absurd pose.
_Refused = collections.namedtuple('_Refused', 'topic_kind topic parent child')
_BadPose = collections.namedtuple('_BadPose', 'topic kind name')

_INPUT_OF_FRAME = {
    TfStatus.OK: InputState.OK,
    TfStatus.STALE: InputState.STALE,
    TfStatus.MISSING: InputState.STALE,
    TfStatus.EXTRAPOLATION: InputState.STALE,
    TfStatus.INVALID: InputState.INVALID,
}


def _data_time(lookup):
    """Return when a chain's data was true (int ns): TIMELESS if static, UNKNOWN if unknown."""
    if lookup.status not in (TfStatus.OK, TfStatus.STALE) or lookup.matrix is None:
        return UNKNOWN
    return lookup.stamp_ns if lookup.dynamic else TIMELESS


def _newest_of_other_edges(dropped, kept):
    """
    From messages an overloaded ``/tf`` drops (newest first), the transforms ``kept`` lacks.

    tf2 stores every message. When the node cannot, it still stores each dropped edge's newest
    sample unless a kept message carries that edge: the robot's joints at 1 kHz must not starve
    a localization transform published at 10 Hz on the same topic into STALE. Messages with the
    frames of one already looked at (the same publisher again) cost one comparison. Returns
    the batches to store beside ``kept``, newest first.
    """
    seen = {_frames_of(batch) for batch in kept}
    covered, extra = None, []
    for batch in dropped:
        frames = batch is not None and _frames_of(batch)
        if not frames or frames in seen:
            continue
        seen.add(frames)
        if covered is None:
            covered = {edge for kept_batch in kept
                       for edge in zip(kept_batch.parents, kept_batch.children)}
        rows = [row for row, edge in enumerate(zip(batch.parents, batch.children))
                if edge not in covered]
        if rows:
            covered.update(zip([batch.parents[row] for row in rows],
                               [batch.children[row] for row in rows]))
            extra.append(batch.subset(rows))
    return extra


def _frames_of(batch):
    return tuple(batch.parents), tuple(batch.children)


class Frames:
    """
    The TF buffer, its subscriptions, and piece poses.

    Parameters
    ----------
    problems : gjk_ros.ros.problems.ProblemLog
        Where unusable frames and poses are logged once.
    clocks : gjk_ros.ros.inputs.timekeeping.NodeClocks
        Receive times and jump detection.
    on_transform : callable()
        Called after each ``/tf`` callback has stored its message and every one waiting
        behind it (it may start a cycle: once, on the newest transforms).

    """

    def __init__(self, problems, clocks, on_transform):
        self._problems = problems
        self._clocks = clocks
        self._on_transform = on_transform
        self.buffer = TfBuffer()
        self.received = {'tf': None, 'tf_static': None}
        self.states = {}
        self._refused = set()  # problem keys of transforms refused and not stored since
        self.fixed_frame = 'world'
        self._timeout_ns = 0
        self._node = None
        self._subscriptions = ()
        self._tf = None  # the /tf subscription, drained by on_tf
        self.tf_messages = 0   # /tf messages stored
        self.tf_dropped = 0    # /tf messages left undecoded: the node was overloaded
        self.tf_callbacks = 0  # /tf callbacks: each may start one cycle
        self._drain_budget = math.inf  # until configure gives the rate
        self._credit = 0.0  # seconds /tf may still spend (on_tf)
        self._credit_time = time.perf_counter()
        self._store_cost = STORE_COST  # seconds per transform stored, measured
        self._held = None  # the newest /tf message, decoded, not yet stored (on_tf)
        self._decoders = {'/tf': TfDecoder(), '/tf_static': TfDecoder()}

    def subscribe(self, node):
        """Subscribe to ``/tf`` and ``/tf_static`` raw (``close`` destroys the subscriptions)."""
        self._node = node
        self._tf = node.create_subscription(TFMessage, '/tf', self.on_tf, TF_QOS, raw=True)
        self._subscriptions = (self._tf, node.create_subscription(
            TFMessage, '/tf_static', self.on_tf_static, TF_STATIC_QOS, raw=True))

    def close(self):
        """Destroy the TF subscriptions (cleanup, shutdown)."""
        subscriptions, self._subscriptions, self._tf = self._subscriptions, (), None
        for subscription in subscriptions:
            try:
                self._node.destroy_subscription(subscription)
            except Exception:  # noqa: B902 -- already gone, or the context shut down
                pass

    def configure(self, config):
        self.buffer.set_cache_time(config.tf_buffer_duration)
        self.fixed_frame = config.fixed_frame
        self._timeout_ns = int(config.tf_timeout * 1e9)
        self._drain_budget = DRAIN_SHARE / config.rate_hz
        warm_up()  # the decoder's kernel, compiled or loaded before the first message

    def on_tf(self, data):
        """
        Store a raw ``/tf`` message and those waiting behind it, then maybe run a cycle.

        Latest wins (``draining.py``): a cycle slower than the TF period never leaves a backlog
        of older transforms for the next one. What costs is storing (about 1 us of Python per
        transform; decoding is one compiled call), so ``/tf`` gets a time budget: credit
        accrues at ``DRAIN_SHARE`` of wall time, up to ``DRAIN_SHARE`` of a cycle period, and
        each callback spends what its work measured. Messages are taken newest first while
        their estimated cost fits the credit, and stored in the order they arrived, as tf2
        would have stored them; older ones are dropped and counted (``/diagnostics``). When
        not even the newest fits, it is held, not stored: the next callback replaces it with a
        newer one, or the next lookup (the cycle's, a source's) stores it first, so that the
        cycle always sees the newest transform received, and ``/tf`` costs at most its share
        plus one message per cycle.
        """
        started = time.perf_counter()
        self._credit = min(self._drain_budget,
                           self._credit + DRAIN_SHARE * (started - self._credit_time))
        waiting = [data]
        if self._tf is not None:
            waiting += take_waiting(self._tf, TF_QOS.depth)
        kept, extra, cost = [], [], 0.0  # newest first
        for index in reversed(range(len(waiting))):
            batch = self._decode(waiting[index], '/tf')
            if batch is None:
                continue
            estimate = len(batch) * self._store_cost
            if cost + estimate > self._credit:
                if not kept:
                    self._hold(batch)
                self.tf_dropped += index + (1 if kept else 0)
                older = [self._decode(raw, '/tf') for raw in reversed(waiting[:index])]
                extra = _newest_of_other_edges(older, kept or [batch])
                break
            kept.append(batch)
            cost += estimate
        if kept:
            self._drop_held()
        self._store_tf(kept[::-1], partial=extra[::-1])
        self.tf_callbacks += 1
        finished = time.perf_counter()
        self._credit -= finished - started
        self._credit_time = finished
        self._on_transform()

    def _hold(self, batch):
        """Keep the newest message for the next callback or lookup (one at most)."""
        if self._held is not None:
            self._store_tf([], partial=_newest_of_other_edges([self._held], [batch]))
        self._drop_held()
        self._held = batch

    def clear_dynamic(self):
        """
        Forget every dynamic transform received so far: ROS time jumped back.

        tf2_ros clears its buffer then; the message held for the next lookup goes too (stored
        later, it would bring back a transform from before the jump).
        """
        self._held = None
        self.buffer.clear_dynamic()

    def _drop_held(self):
        if self._held is not None:
            self._held = None
            self.tf_dropped += 1

    def _store_held(self):
        """Store the held message, if any: a lookup is about to use the transforms."""
        if self._held is not None:
            held, self._held = self._held, None
            self._store_tf([held])

    def _store_tf(self, batches, partial=()):
        """
        Store decoded /tf messages, learning what a transform costs.

        ``batches`` are whole messages, ``partial`` what was kept of dropped ones (counted as
        dropped); both oldest first, and the partial ones are older.
        """
        started = time.perf_counter()
        for batch in [*partial, *batches]:
            self._insert(batch, static=False)
        transforms = sum(len(batch) for batch in [*partial, *batches])
        if transforms:
            measured = (time.perf_counter() - started) / transforms
            self._store_cost += STORE_COST_GAIN * (measured - self._store_cost)
        self.tf_messages += len(batches)

    def on_tf_static(self, data):
        """Store a raw ``/tf_static`` message."""
        self.store(data, static=True)

    def store(self, data, static):
        """Decode and insert a raw TFMessage; a malformed one is logged, never raised."""
        entries = self._decode(data, '/tf_static' if static else '/tf')
        if entries is not None:
            self._insert(entries, static)

    def _decode(self, data, topic):
        """Return a raw TFMessage's transforms, or None (malformed: logged)."""
        try:
            entries = self._decoders[topic].decode(data)
        except ValueError as error:
            self._problems.report(('input', topic, 'decode'),
                                  'malformed %s message ignored: %s' % (topic, error))
            return None
        self._problems.resolve(('input', topic, 'decode'))
        return entries

    def _insert(self, entries, static):
        topic = '/tf_static' if static else '/tf'
        now_ns = self._clocks.now_ns()
        self._clocks.check(now_ns)
        self.received['tf_static' if static else 'tf'] = now_ns * 1e-9
        refused = self.buffer.insert_message(entries, static)
        if refused or self._refused:
            self._report_refused(topic, entries, refused)

    def _report_refused(self, topic, entries, refused):
        """Log a refused transform once per frame; resolve it once that frame is stored."""
        current = {_Refused('tf', topic, parent, child): why for parent, child, why in refused}
        for key, why in current.items():
            if self._problems.report(key, "%s: transform '%s' -> '%s' ignored: %s"
                                     % (topic, key.parent, key.child, why), level='warning'):
                self._refused.add(key)
        stored = {(parent.lstrip('/'), child.lstrip('/'))
                  for parent, child in zip(entries.parents, entries.children)}
        for key in [key for key in self._refused
                    if key.topic == topic and key not in current and
                    (key.parent.lstrip('/'), key.child.lstrip('/')) in stored]:
            self._refused.discard(key)
            self._problems.resolve(key, "%s: transform '%s' -> '%s' accepted again"
                                   % (topic, key.parent, key.child))

    def lookup(self, target, source, stamp_ns):
        """T(target <- source) at ``stamp_ns`` (0: the latest), tf2's lookupTransform."""
        self._store_held()
        return self.buffer.lookup(target, source, time_ns=stamp_ns)

    def lookup_at(self, frames, stamp_ns):
        """``{frame: TfLookup}`` of T(fixed_frame <- frame) at ``stamp_ns``, sharing work."""
        self._store_held()
        return self.buffer.lookup_many(self.fixed_frame, frames, time_ns=stamp_ns)

    def lookup_latest(self, frames, now_ns):
        """
        ``{frame: TfLookup}`` of T(fixed_frame <- frame) with the latest transforms.

        Graded as the cycle grades its poses: older than ``tf_timeout`` at ``now_ns`` is STALE.
        """
        self._store_held()
        return self.buffer.lookup_many(self.fixed_frame, frames, now_ns=now_ns,
                                       timeout_ns=self._timeout_ns)

    def pose_pieces(self, frames, origins, frame_index, now_ns, describe):
        """
        World pose and input state of every layout piece, and the output stamp.

        Parameters
        ----------
        frames, origins, frame_index
            From ``Layout.placement``.
        now_ns : int
            ROS time, nanoseconds.
        describe : callable(int) -> (str, str)
            (kind, name) of a piece, for the log.

        Returns
        -------
        tuple of ((n, 4, 4) float, (n,) int, (n,) int64)
            Poses, ``InputState`` and the time of each piece's transform data: its chain's
            latest common time (ns) when it has a dynamic edge, ``TIMELESS`` for a static
            chain, ``UNKNOWN`` when no transform is known.

        """
        lookups = self.lookup_latest(frames, now_ns)
        self._report(lookups)
        # One row per distinct frame, and a last one (identity, STALE) for "no frame".
        frame_poses = numpy.tile(numpy.eye(4), (len(frames) + 1, 1, 1))
        frame_inputs = numpy.full(len(frames) + 1, InputState.STALE, dtype=numpy.int64)
        frame_times = numpy.full(len(frames) + 1, UNKNOWN, dtype=numpy.int64)
        for index, frame in enumerate(frames):
            lookup = lookups[frame]
            frame_inputs[index] = _INPUT_OF_FRAME[lookup.status]
            if lookup.status == TfStatus.OK:
                frame_poses[index] = lookup.matrix
            frame_times[index] = _data_time(lookup)
        inputs = frame_inputs[frame_index]
        with numpy.errstate(all='ignore'):  # overflow is caught by _check_poses
            poses = numpy.matmul(frame_poses[frame_index], origins)
        self._check_poses(poses, inputs, describe)
        return poses, inputs, frame_times[frame_index]

    def _check_poses(self, poses, inputs, describe):
        """Make INVALID every piece whose composed pose is not a sane rigid transform."""
        bad = (inputs == InputState.OK) & ~valid_pose_mask(poses)
        inputs[bad] = InputState.INVALID
        current = set()
        for index in numpy.flatnonzero(bad):
            key = _BadPose('pose', *describe(index))
            current.add(key)
            self._problems.report(key, "%s '%s': composed pose is not finite, beyond %g m or "
                                  'not rigid; its pairs are INVALID' % (key.kind, key.name,
                                                                        MAX_COORDINATE))
        self._problems.keep_only(('pose',), current,
                                 lambda key: "%s '%s': pose sane again" % (key.kind, key.name))

    def _report(self, lookups):
        """Log a frame once when it stops being usable and once when it recovers."""
        previous = self.states
        for frame, lookup in lookups.items():
            if previous.get(frame) == lookup.status == TfStatus.OK:
                continue  # nothing to log; the common case, skipped for the cycle's sake
            key = ('frame', frame)
            if lookup.status == TfStatus.OK:
                self._problems.resolve(key, "frame '%s' recovered" % frame)
                continue
            level = 'error' if lookup.status == TfStatus.INVALID else 'warning'
            self._problems.report(key, "frame '%s' to '%s': %s; its pairs are %s"
                                  % (frame, self.fixed_frame, lookup.reason,
                                     'INVALID' if level == 'error' else 'STALE'), level=level)
        if previous.keys() != lookups.keys():
            self._problems.keep_only(('frame',), {('frame', frame) for frame in lookups})
        self.states = {frame: lookup.status for frame, lookup in lookups.items()}

    def without_transform(self, frames):
        """Return those of ``frames`` (None: no frame yet) without a usable transform, sorted."""
        return sorted({str(frame) for frame in frames
                       if frame is None or self.states.get(frame) != TfStatus.OK})

    def frames_in(self, *statuses):
        """Return the frames whose last lookup had one of ``statuses``, sorted."""
        return sorted(frame for frame, status in self.states.items() if status in statuses)
