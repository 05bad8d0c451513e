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
Stand-ins for the node around a component, for the tests that run without a ROS graph.

As Nav2's ``sources_test.cpp`` drives each source with a TF buffer it fills itself, these
drive the node's components with frames, clocks and a geometry worker the test controls:

- ``InlineWorker``: the geometry worker's own handlers (``geometry_worker``), run in the test's
  thread when asked (``finish``), results into the asking source's mailbox;
- ``FakeFrames``: transforms the test sets, as ``Frames.lookup`` / ``lookup_latest`` answer;
- ``FakeClocks``: ROS time and steady time the test sets;
- ``context``: a ``SourceContext`` of these, a real ``ProblemLog`` and a real ``World``.
"""

import itertools

from gjk_ros.ros.compute.world import World
from gjk_ros.ros.inputs.geometry_worker import _WorkerState
from gjk_ros.ros.inputs.jobs import JobResult, MarkerBatchJob
from gjk_ros.ros.inputs.limits import IngestLimits
from gjk_ros.ros.inputs.sources.base import SourceContext
from gjk_ros.ros.inputs.tf_buffer import TfLookup, TfStatus
from gjk_ros.ros.problems import ProblemLog
import numpy

NS = 1_000_000_000


class Recorder:
    """Stands in for a publisher: keeps what the node published; ``listeners`` subscribe."""

    def __init__(self, listeners=1):
        self.messages = []
        self.listeners = listeners

    def publish(self, message):
        self.messages.append(message)

    def get_subscription_count(self):
        return self.listeners


class RecordingLogger:
    """A logger that keeps (level, message) lines."""

    def __init__(self):
        self.lines = []

    def error(self, message):
        self.lines.append(('error', message))

    def warning(self, message):
        self.lines.append(('warning', message))

    def info(self, message):
        self.lines.append(('info', message))

    def text(self):
        return '\n'.join(message for _, message in self.lines)


class InlineWorker:
    """The ingestor's interface, with jobs run by the worker's handlers when ``finish`` says."""

    def __init__(self, limits=IngestLimits()):
        self.state = _WorkerState(limits, None)
        self.queued = []
        self.forgotten = []
        self._tokens = itertools.count(1)
        self._batches = {}

    def submit(self, job, mailbox):
        token = next(self._tokens)
        if job.latest_wins is not None:
            self.queued = [entry for entry in self.queued if entry[0].latest_wins !=
                           job.latest_wins]
        self.queued.append((job, token, mailbox))
        return token

    def submit_markers(self, kind, data, received, mailbox):
        batch = self._batches.get(kind)
        if batch is None:
            batch = self._batches[kind] = [[], mailbox, next(self._tokens)]
            self.queued.append((kind, batch))
        batch[0].append((bytes(data), received))
        return True

    def forget(self, kind, ns, marker_id):
        self.forgotten.append((kind, ns, marker_id))

    def finish(self):
        """Run every queued job, in order, and deliver each result."""
        queued, self.queued, self._batches = self.queued, [], {}
        for entry in queued:
            if isinstance(entry[0], str):
                kind, (messages, mailbox, token) = entry
                forget = frozenset((ns, marker_id) for found, ns, marker_id in self.forgotten
                                   if found == kind)
                self.forgotten = [item for item in self.forgotten if item[0] != kind]
                job = MarkerBatchJob(kind, tuple(messages), forget)
            else:
                job, token, mailbox = entry
            finished = self.state.run(job, set(), lambda body: None)
            mailbox.put(JobResult(job, token, finished.value, finished.error))


class FakeClocks:
    """ROS time (``now_ns``) and steady time the test sets."""

    def __init__(self, now_ns=100 * NS):
        self.now = now_ns
        self.steady_time = 0.0
        self.listeners = []

    def now_ns(self):
        return self.now

    def steady(self):
        return self.steady_time

    def on_jump_back(self, listener):
        self.listeners.append(listener)

    def jump_back(self, to_ns):
        self.now = to_ns
        for listener in self.listeners:
            listener()


class FakeFrames:
    """
    Transforms into ``fixed_frame`` the test sets: one matrix per frame, valid at every time.

    A frame in ``waiting`` answers EXTRAPOLATION into the future (the transform has not come
    yet); an unknown frame answers MISSING.
    """

    def __init__(self, fixed_frame='world'):
        self.fixed_frame = fixed_frame
        self.matrices = {fixed_frame: numpy.eye(4)}
        self.waiting = set()
        self.asked = []

    def place(self, frame, xyz=(0.0, 0.0, 0.0)):
        matrix = numpy.eye(4)
        matrix[:3, 3] = xyz
        self.matrices[frame] = matrix

    def lookup(self, target, source, stamp_ns):
        assert target == self.fixed_frame, target
        self.asked.append((source, stamp_ns))
        if source in self.waiting:
            return TfLookup(TfStatus.EXTRAPOLATION, reason='not yet', past=False)
        if source not in self.matrices:
            return TfLookup(TfStatus.MISSING, reason="unknown frame '%s'" % source)
        return TfLookup(TfStatus.OK, self.matrices[source], stamp_ns)

    def lookup_at(self, frames, stamp_ns):
        return {frame: self.lookup(self.fixed_frame, frame, stamp_ns) for frame in frames}

    def lookup_latest(self, frames, now_ns):
        return {frame: self.lookup(self.fixed_frame, frame, 0) for frame in frames}


class NoDecomposition:
    """A decomposer that decomposes nothing (every piece keeps its shape)."""

    version = 0

    def parts_for(self, piece):
        return None


def context(worker=None, clocks=None, world=None):
    """Return (SourceContext, RecordingLogger) of fakes, a real ProblemLog and a real World."""
    logger = RecordingLogger()
    return SourceContext(worker or InlineWorker(), ProblemLog(logger), clocks or FakeClocks(),
                         NoDecomposition(), world or World()), logger
