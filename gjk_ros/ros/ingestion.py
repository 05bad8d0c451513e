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

Latest wins: raw marker messages that queue up while the worker is busy go to it together,
and it keeps the latest state of each (ns, id) (with DELETEALL ordered as the messages were),
so a flood costs one build per marker. A marker whose geometry did not change since the worker
last sent it comes back without its piece (the node reuses the one it holds): perception
stacks republish every obstacle each frame.

This module imports no rclpy node machinery; the worker uses only rclpy's serialization.
"""

import collections
import multiprocessing
import threading
import time

from gjk_ros.ros.geometry_worker import worker_main
from gjk_ros.ros.jobs import IngestResult, Job, model_error, send_job
from gjk_ros.ros.limits import IngestLimits
from gjk_ros.ros.model_imports import load_models

__all__ = ['Ingestor', 'start_worker_server', 'worker_context', 'WorkerStartError']

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
WORKER_PRELOAD = ('gjk_ros.ros.geometry_worker', 'gjk_ros.models', 'rclpy.serialization',
                  'std_msgs.msg', 'visualization_msgs.msg')


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


class Ingestor:
    """
    The parent side: a queue, a dispatcher thread and the worker process.

    Jobs and their results:

    - ``submit_markers(kind, data, received)``: raw MarkerArray bytes; result key
      ``('markers', kind)``, value ``(clears, ops, heard)``: the namespaces cleared by
      DELETEALL ('' for all), a list of MarkerOp (applied after the clears), and
      ``{ns: receive time}`` of every namespace the messages named.
    - ``submit(('urdf',), data)``: raw std_msgs/String bytes; value (UrdfCollisionModel, set of
      adjacent link pairs as frozensets: the links joined by a joint).
    - ``submit(('srdf',), data)``: raw std_msgs/String bytes; value the set of SRDF
      ``disable_collisions`` pairs, as frozensets.
    - ``submit(('param', kind), (text, fixed_frame))``: a body-description parameter; value a
      list of (name, index, CollisionPiece or ModelError).
    - ``submit(('decompose', uri, scale), (settings, cache_dir))``: CoACD parts of a mesh file
      (from the disk cache when there); value a tuple of ConvexPolytope. The node runs these in
      an Ingestor of their own, whose ``job_timeout_s`` is ``decomposition_timeout``, so that
      minutes of CoACD never delay a marker.

    - ``submit(('planning_scene', kind, n), (topic, data))``: one raw moveit_msgs message
      (kind 'object', 'attached' or 'scene'); value what ``SceneState`` applies
      (``sources.planning_scene.decode_scene_message``). Each message has a key of its own:
      a diff is meaningful only after every message before it.

    ``submit`` is latest-wins per key; ``poll`` returns finished results (never blocks).
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
        self._results = collections.deque()
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

    def submit(self, key, payload):
        """Queue a job, replacing a queued one of the same key; returns its token."""
        with self._condition:
            token = next(self._tokens)
            self._queued.pop(key, None)
            self._queued[key] = Job(key, token, payload)
            self._condition.notify()
            return token

    def submit_markers(self, kind, data, received):
        """
        Queue a raw MarkerArray; False if the backlog is full (the message is dropped).

        Messages of one kind queued together go to the worker as one batch.
        """
        with self._condition:
            if self._backlog_bytes + len(data) > MAX_BACKLOG_BYTES:
                return False
            self._backlog_bytes += len(data)
            # A raw subscription hands over bytes already: no copy (30 MB take 10 ms).
            data = data if isinstance(data, bytes) else bytes(data)
            self._batches.setdefault(kind, []).append((data, received))
            self._condition.notify()
            return True

    def forget(self, kind, ns, marker_id):
        """Ask the worker to send this marker's piece again with its next message."""
        with self._condition:
            self._forget[kind].add((ns, marker_id))

    def poll(self, max_results):
        """Return up to ``max_results`` finished results, oldest first."""
        results = []
        with self._condition:
            while self._results and len(results) < max_results:
                results.append(self._results.popleft())
        return results

    def pending(self):
        """Whether a job is queued or running, or a result is waiting."""
        with self._condition:
            return bool(self._queued or self._batches or self._running or self._results)

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
                kind, messages = next(iter(self._batches.items()))
                del self._batches[kind]
                self._backlog_bytes -= sum(len(data) for data, _ in messages)
                forget, self._forget[kind] = self._forget[kind], set()
                job = Job(('markers', kind), next(self._tokens), (messages, forget))
            else:
                _, job = self._queued.popitem(last=False)
            self._running = job
            return job

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
            job = self._next_job()
            if job is None:
                return
            try:
                result = self._execute(job)
            except WorkerStartError as error:
                result = IngestResult(job.key, job.token,
                                      error=model_error(job.key, str(error)))
            except Exception as error:  # noqa: B902 -- the dispatcher must never die
                reason = 'ingestion failed (%s)' % type(error).__name__
                result = IngestResult(job.key, job.token, error=model_error(job.key, reason))
            with self._condition:
                self._running = None
                if not self._closed:
                    self._results.append(result)

    def _execute(self, job):
        """Run a job in the worker; a body past the time limit is skipped and the job re-run."""
        while True:
            connection = self._ensure_worker()
            send_job(connection, job)
            outcome, culprit = self._await(connection)
            if outcome is not None:
                return IngestResult(job.key, job.token, *outcome)
            # The worker was stopped on a body: reject that body, run the rest again.
            self._stop_worker()
            self.restarts += 1
            if job.key[0] != 'markers' or culprit is None or culprit in job.skip or \
                    len(job.skip) >= 3 or self._closed:
                return IngestResult(job.key, job.token, error=model_error(
                    job.key, self._failure_reason()))
            job.skip.add(culprit)

    def _await(self, connection):
        """Wait for the result; returns ((value, error), None) or (None, culprit)."""
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
            if message[0] == 'progress':
                culprit, deadline = message[1], time.monotonic() + limits.job_timeout_s
                continue
            return message[1:], None
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
                    return connection.recv() == ('ready',)
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
