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
The ingestion path, node side: messages and parameters to the geometry worker and back.

Why a process: one hostile input must never stall the outputs. A thread would
share the GIL with the compute cycle, and rclpy's conversion of a big message (a MarkerArray
of 100 MB) runs in C holding the GIL for seconds; nor can a thread stuck in qhull or in a mesh
parser be stopped. So the node subscribes to markers and ``robot_description`` *raw* (bytes
only, no conversion in the node), and this module's ``Ingestor`` hands the bytes to a worker
process that decodes them, checks them against ``IngestLimits``, builds the pieces and sends
back small results (``geometry_worker``; the protocol is ``jobs``). Per body, the worker has
``job_timeout_s`` (the parent kills and restarts it past that, and rejects that body) and
``worker_memory_mb`` of address space.

Each job is submitted with the ``Mailbox`` of the source that asked: its result goes there and
nowhere else, and the source takes it on its next ``collect``.

Latest wins: raw marker messages that queue up while the worker is busy go to it together,
and it keeps the latest state of each (ns, id) (with DELETEALL ordered as the messages were),
so a flood costs one build per marker. A marker whose geometry did not change since the worker
last sent it comes back without its piece (the node reuses the one it holds): perception
stacks republish every obstacle each frame.

This module imports no rclpy node machinery; the worker uses only rclpy's serialization.
"""

import collections
from dataclasses import dataclass, field
import multiprocessing
import threading
import time

from gjk_ros.ros.inputs.geometry_worker import worker_main
from gjk_ros.ros.inputs.jobs import JobResult, MarkerBatchJob, Progress, Ready, rejection, send_job
from gjk_ros.ros.inputs.limits import IngestLimits
from gjk_ros.ros.inputs.model_imports import load_models

__all__ = ['Ingestor', 'Mailbox', 'start_worker_server', 'worker_context', 'WorkerStartError']

# Raw marker bytes queued for the worker, at most: past this the newest message is dropped
# (its sources are then not refreshed, so they go STALE: never a made-up "clear").
MAX_BACKLOG_BYTES = 256 * 2**20
# How long close() waits for the worker to leave before killing it.
CLOSE_TIMEOUT = 1.0
# How long a new worker may take to import its libraries (and, on a fresh install, compile
# the core's kernels) before its first job; the per-body time limit starts after that.
START_TIMEOUT = 300.0
# Workers fork from a server process that imported these once (multiprocessing's forkserver):
# a worker then starts in milliseconds instead of the 1.1 s a fresh interpreter takes to import
# trimesh, scipy and the core, and so does a worker restarted after a timeout. The node's entry
# point starts the server first thing, so that these imports overlap the node's own.
WORKER_PRELOAD = ('gjk_ros.ros.inputs.geometry_worker', 'gjk_ros.models', 'rclpy.serialization',
                  'std_msgs.msg', 'visualization_msgs.msg')
# Markers the worker may be stopped on before the whole batch is rejected.
MAX_SKIPPED_MARKERS = 3


def worker_context():
    """
    Return the multiprocessing context of the workers: forkserver where it exists, else spawn.

    Never plain fork: the node has DDS and executor threads, which a forked child would
    inherit half-stopped. The forkserver is a fresh single-threaded interpreter.
    """
    if 'forkserver' in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context('forkserver')
    return multiprocessing.get_context('spawn')


def start_worker_server():
    """Start the server the workers fork from, importing ``WORKER_PRELOAD`` (in the background)."""
    context = worker_context()
    if context.get_start_method() != 'forkserver':
        return
    from multiprocessing import forkserver
    context.set_forkserver_preload(list(WORKER_PRELOAD))
    forkserver.ensure_running()


class Mailbox:
    """Where the dispatcher leaves the results of one source's jobs, oldest first."""

    def __init__(self):
        self._results = collections.deque()
        self._lock = threading.Lock()

    def put(self, result):
        """Leave a finished job's ``JobResult`` (dispatcher thread)."""
        with self._lock:
            self._results.append(result)

    def take(self, most):
        """Return up to ``most`` results, oldest first (never blocks)."""
        with self._lock:
            return [self._results.popleft() for _ in range(min(most, len(self._results)))]

    def __len__(self):
        """Return how many results wait to be taken."""
        return len(self._results)


@dataclass
class _Queued:
    """A job on its way: its token, whose mailbox gets the result, the markers to skip."""

    job: object
    token: int
    mailbox: Mailbox
    skip: set = field(default_factory=set)


class Ingestor:
    """
    The parent side: a queue, a dispatcher thread and the worker process.

    ``submit(job, mailbox)`` queues a job of ``jobs`` (a newer one replaces a queued one of the
    same ``latest_wins``); ``submit_markers`` queues raw MarkerArray bytes, which go to the
    worker together as one ``MarkerBatchJob`` per topic. The result of each job goes to the
    mailbox it was submitted with. The node runs decompositions in an Ingestor of their own,
    whose ``job_timeout_s`` is ``decomposition_timeout``, so that minutes of CoACD never delay
    a marker.
    """

    def __init__(self, limits=IngestLimits(), package_paths=None,
                 timeout_parameter='ingest_timeout', start_worker=False):
        self._limits = limits
        self._start_worker = start_worker
        self._timeout_parameter = timeout_parameter
        self._package_paths = package_paths
        self._condition = threading.Condition()
        self._queued = collections.OrderedDict()
        self._batches = {}
        self._backlog_bytes = 0
        self._forget = collections.defaultdict(set)
        self._mailboxes = set()
        self._tokens = iter(range(1, 2**62))
        self._running = None
        self._closed = False
        self._limits_changed = False
        self._worker = None
        self._connection = None
        self.restarts = 0
        self._thread = threading.Thread(target=self._run, name='gjk_ingest', daemon=True)
        self._thread.start()

    # -- the node's side -----------------------------------------------------------------

    def submit(self, job, mailbox):
        """Queue a job whose result goes to ``mailbox``; returns its token."""
        with self._condition:
            token = next(self._tokens)
            identity = job.latest_wins if job.latest_wins is not None else ('job', token)
            self._queued.pop(identity, None)
            self._queued[identity] = _Queued(job, token, mailbox)
            self._mailboxes.add(mailbox)
            self._condition.notify()
            return token

    def submit_markers(self, kind, data, received, mailbox):
        """
        Queue a raw MarkerArray received at ``received`` (ns); False if the backlog is full.

        Messages of one kind queued together go to the worker as one batch.
        """
        with self._condition:
            if self._backlog_bytes + len(data) > MAX_BACKLOG_BYTES:
                return False
            self._backlog_bytes += len(data)
            # A raw subscription hands over bytes already: no copy (30 MB take 10 ms).
            data = data if isinstance(data, bytes) else bytes(data)
            _, messages = self._batches.setdefault(kind, (mailbox, []))
            messages.append((data, received))
            self._mailboxes.add(mailbox)
            self._condition.notify()
            return True

    def forget(self, kind, ns, marker_id):
        """Ask the worker to send this marker's piece again with its next message."""
        with self._condition:
            self._forget[kind].add((ns, marker_id))

    def pending(self):
        """Whether a job is queued or running, or a result waits in a mailbox."""
        with self._condition:
            return bool(self._queued or self._batches or self._running or
                        any(len(mailbox) for mailbox in self._mailboxes))

    @property
    def limits(self):
        """Return the limits of the next job."""
        with self._condition:
            return self._limits

    def set_limits(self, limits):
        """Use new limits from the next job on (the worker restarts with them)."""
        with self._condition:
            self._limits = limits
            self._limits_changed = True

    def close(self):
        """Stop the dispatcher and the worker; prompt, never raises."""
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join(CLOSE_TIMEOUT + 1.0)
        self._stop_worker()

    # -- the dispatcher thread -----------------------------------------------------------

    def _next_job(self):
        with self._condition:
            while not self._closed and not self._queued and not self._batches:
                self._condition.wait()
            if self._closed:
                return None
            if self._batches:
                kind, (mailbox, messages) = next(iter(self._batches.items()))
                del self._batches[kind]
                self._backlog_bytes -= sum(len(data) for data, _ in messages)
                forget, self._forget[kind] = frozenset(self._forget[kind]), set()
                queued = _Queued(MarkerBatchJob(kind, tuple(messages), forget),
                                 next(self._tokens), mailbox)
            else:
                _, queued = self._queued.popitem(last=False)
            self._running = queued
            return queued

    def _run(self):
        # Results are unpickled on this thread, which imports gjk_ros.models: first, whole.
        load_models()
        if self._start_worker:
            # Start the worker now, not at the first job: its interpreter and imports (about
            # 1.5 s) then overlap the node's own start instead of delaying the first geometry.
            try:
                self._ensure_worker()
            except WorkerStartError:
                pass  # the first job tries again, and reports it if it fails too
        while True:
            queued = self._next_job()
            if queued is None:
                return
            try:
                result = self._execute(queued)
            except WorkerStartError as error:
                result = JobResult(queued.job, queued.token,
                                   error=rejection(queued.job, str(error)))
            except Exception as error:  # noqa: B902 -- the dispatcher must never die
                reason = 'ingestion failed (%s)' % type(error).__name__
                result = JobResult(queued.job, queued.token,
                                   error=rejection(queued.job, reason))
            with self._condition:
                self._running = None
                if not self._closed:
                    queued.mailbox.put(result)

    def _execute(self, queued):
        """Run a job in the worker; a marker past the time limit is skipped and the job re-run."""
        job = queued.job
        while True:
            connection = self._ensure_worker()
            send_job(connection, job, queued.skip)
            finished, culprit = self._await(connection)
            if finished is not None:
                return JobResult(job, queued.token, finished.value, finished.error)
            # The worker was stopped on a marker: reject that marker, run the rest again.
            self._stop_worker()
            self.restarts += 1
            if not isinstance(job, MarkerBatchJob) or culprit is None or \
                    culprit in queued.skip or len(queued.skip) >= MAX_SKIPPED_MARKERS or \
                    self._closed:
                return JobResult(job, queued.token,
                                 error=rejection(job, self._failure_reason()))
            queued.skip.add(culprit)

    def _await(self, connection):
        """Wait for the result; returns (Finished, None) or (None, culprit)."""
        limits = self._limits
        deadline, culprit = time.monotonic() + limits.job_timeout_s, None
        while not self._closed:
            try:
                ready = connection.poll(0.05)
                message = connection.recv() if ready else None
            except (EOFError, OSError):
                return None, culprit  # the worker died (out of memory, a crash)
            if message is None:
                if time.monotonic() > deadline or not self._worker.is_alive():
                    return None, culprit
                continue
            if isinstance(message, Progress):
                culprit, deadline = message.body, time.monotonic() + limits.job_timeout_s
                continue
            return message, None
        return None, culprit

    def _failure_reason(self):
        limits = self._limits
        return ('took longer than %s (%g s) or exceeded ingest_memory_mb (%d MiB); '
                'the geometry worker was restarted'
                % (self._timeout_parameter, limits.job_timeout_s, limits.worker_memory_mb))

    def _ensure_worker(self):
        if self._limits_changed:
            self._limits_changed = False
            self._stop_worker()
        if self._worker is not None and self._worker.is_alive():
            return self._connection
        self._stop_worker()
        context = worker_context()
        parent, child = context.Pipe()
        self._worker = context.Process(target=worker_main,
                                       args=(child, self._limits, self._package_paths),
                                       name='gjk_ingest_worker', daemon=True)
        self._worker.start()
        child.close()
        self._connection = parent
        if not self._await_ready(parent):
            self._stop_worker()
            raise WorkerStartError(
                'the geometry worker did not start (it exits at once when ingest_memory_mb, '
                '%d MiB, cannot hold its libraries)' % self._limits.worker_memory_mb)
        return parent

    def _await_ready(self, connection):
        deadline = time.monotonic() + START_TIMEOUT
        while not self._closed and time.monotonic() < deadline:
            try:
                if connection.poll(0.05):
                    return isinstance(connection.recv(), Ready)
            except (EOFError, OSError):
                return False
            if not self._worker.is_alive():
                return False
        return False

    def _stop_worker(self):
        worker, connection = self._worker, self._connection
        self._worker = self._connection = None
        if worker is None:
            return
        try:
            connection.send(None)
        except (OSError, ValueError):
            pass
        worker.join(CLOSE_TIMEOUT if not self._closed else 0.2)
        if worker.is_alive():
            worker.kill()
            worker.join(CLOSE_TIMEOUT)
        connection.close()


class WorkerStartError(RuntimeError):
    """The geometry worker process could not be started."""
