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
The ingestion path: messages and parameters to convex pieces, in a worker process.

Why a process: one hostile input must never stall the outputs. A thread would
share the GIL with the compute cycle, and rclpy's conversion of a big message (a MarkerArray
of 100 MB) runs in C holding the GIL for seconds; nor can a thread stuck in qhull or in a mesh
parser be stopped. So the node subscribes to markers and ``robot_description`` *raw* (bytes
only, no conversion in the node), and this module's ``Ingestor`` hands the bytes to a worker
process that decodes them, checks them against ``IngestLimits``, builds the pieces and sends
back small results. Per body, the worker has ``job_timeout_s`` (the parent kills and restarts
it past that, and rejects that body) and ``worker_memory_mb`` of address space.

Latest wins: raw marker messages that queue up while the worker is busy go to it together,
and it keeps the latest state of each (ns, id) (with DELETEALL ordered as the messages were),
so a flood costs one build per marker. A marker whose geometry did not change since the worker
last sent it comes back without its piece (the node reuses the one it holds): perception
stacks republish every obstacle each frame.

This module imports no rclpy node machinery; the worker uses only rclpy's serialization.
"""

import collections
from dataclasses import dataclass, field
import hashlib
import math
import multiprocessing
import struct
import threading
import time

from gjk_ros.ros.limits import IngestLimits

__all__ = ['IngestLimits', 'Ingestor', 'IngestResult', 'MarkerOp', 'start_worker_server']

# Marker actions (visualization_msgs/Marker), kept here so the parent needs no message import.
ADD, DELETE, DELETEALL = 0, 2, 3
# Raw marker bytes queued for the worker, at most: past this the newest message is dropped
# (its sources are then not refreshed, so they go STALE: never a made-up "clear").
MAX_BACKLOG_BYTES = 256 * 2**20
# Finished geometry kept by the worker for re-use (a marker toggled between two shapes).
WORKER_CACHE = 1024
# How long close() waits for the worker to leave before killing it.
CLOSE_TIMEOUT = 1.0
# How long a new worker may take to import its libraries (and, on a fresh install, compile
# the core's kernels) before its first job; the per-body time limit starts after that.
START_TIMEOUT = 300.0
# Workers fork from a server process that imported these once (multiprocessing's forkserver):
# a worker then starts in milliseconds instead of the 1.1 s a fresh interpreter takes to import
# trimesh, scipy and the core, and so does a worker restarted after a timeout. The node's entry
# point starts the server first thing, so that these imports overlap the node's own.
WORKER_PRELOAD = ('gjk_ros.ros.ingestion', 'gjk_ros.models', 'rclpy.serialization',
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


@dataclass
class MarkerOp:
    """
    One marker as the worker hands it back (plain data and, when new, its piece).

    ``pose`` is (x, y, z, qx, qy, qz, qw) in ``frame_id``; ``piece`` is None when the geometry
    is the one the worker sent last for this marker (``geometry_key`` says which), or when
    ``error`` says why the marker was rejected.
    """

    kind: str
    ns: str
    id: int  # noqa: A003 -- the Marker field's name
    action: int
    name: str
    received: float
    lifetime: float = 0.0
    frame_id: str = ''
    pose: tuple = ()
    frame_locked: bool = False
    stamp_ns: int = 0
    geometry_key: str = ''
    piece: object = None
    error: str = None


@dataclass(frozen=True)
class IngestResult:
    """A finished job: ``value`` (see ``Ingestor``) or ``error`` (a ModelError)."""

    key: tuple
    token: int
    value: object = None
    error: object = None


@dataclass
class _Job:
    key: tuple
    token: int
    payload: object
    skip: set = field(default_factory=set)


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
            self._queued[key] = _Job(key, token, payload)
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
                job = _Job(('markers', kind), next(self._tokens), (messages, forget))
            else:
                _, job = self._queued.popitem(last=False)
            self._running = job
            return job

    def _run(self):
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
                result = IngestResult(job.key, job.token, error=_model_error(job.key,
                                                                             str(error)))
            except Exception as error:  # noqa: B902 -- the dispatcher must never die
                result = IngestResult(job.key, job.token,
                                      error=_model_error(job.key, 'ingestion failed (%s)'
                                                         % type(error).__name__))
            with self._condition:
                self._running = None
                if not self._closed:
                    self._results.append(result)

    def _execute(self, job):
        """Run a job in the worker; a body past the time limit is skipped and the job re-run."""
        while True:
            connection = self._ensure_worker()
            _send_job(connection, job)
            outcome, culprit = self._await(connection)
            if outcome is not None:
                return IngestResult(job.key, job.token, *outcome)
            # The worker was stopped on a body: reject that body, run the rest again.
            self._stop_worker()
            self.restarts += 1
            if job.key[0] != 'markers' or culprit is None or culprit in job.skip or \
                    len(job.skip) >= 3 or self._closed:
                return IngestResult(job.key, job.token, error=_model_error(
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


def _model_error(key, reason):
    from gjk_ros.models import ModelError
    return ModelError(_body_of(key), reason)


def _body_of(key):
    if key[0] == 'urdf':
        return 'robot_description'
    if key[0] == 'param':
        return 'static_obstacles' if key[1] == 'obstacle' else 'link_geometry'
    if key[0] == 'decompose':
        return key[1]
    return '~/obstacles' if key[1] == 'obstacle' else '~/links'


# -- the worker process ----------------------------------------------------------------------

def worker_main(connection, limits, package_paths):
    """Serve jobs until told to stop (None) or the parent goes away."""
    import signal
    import warnings
    # Ctrl-C reaches the whole process group: the node shuts the worker down itself, and a
    # KeyboardInterrupt traceback from here would look like a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    warnings.simplefilter('ignore')
    _limit_memory(limits.worker_memory_mb)
    state = _WorkerState(limits, package_paths)
    state.warm_up()
    try:
        connection.send(('ready',))
    except (OSError, ValueError):
        return
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        key, payload, skip = _receive_job(connection, message)
        value, error = state.run(key, payload, skip,
                                 lambda body: connection.send(('progress', body)))
        try:
            connection.send(('result', value, error))
        except (OSError, ValueError):
            return


def _send_job(connection, job):
    """
    Send a job; raw marker bytes go as raw buffers after a small pickled header.

    Pickling a 30 MB message would copy it while holding the GIL, which the node's executor
    thread shares with this dispatcher; ``send_bytes`` writes the buffer as it is, and the
    pipe write releases the GIL.
    """
    if job.key[0] != 'markers':
        connection.send((job.key, job.payload, job.skip))
        return
    messages, forget = job.payload
    connection.send((job.key, ([received for _, received in messages], forget), job.skip))
    for data, _ in messages:
        connection.send_bytes(data)


def _receive_job(connection, message):
    """Receive what ``_send_job`` sent: (key, payload, skip)."""
    key, payload, skip = message
    if key[0] == 'markers':
        times, forget = payload
        payload = ([(connection.recv_bytes(), received) for received in times], forget)
    return key, payload, skip


def _limit_memory(megabytes):
    try:
        import resource
        limit = int(megabytes) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the time limit still holds


class _WorkerState:
    """What the worker keeps between jobs: the resolver, built pieces, what it sent."""

    def __init__(self, limits, package_paths):
        from gjk_ros.models import ResourceResolver
        self.limits = limits
        self.resolver = ResourceResolver(
            package_paths, max_mesh_bytes=limits.max_mesh_bytes,
            max_mesh_triangles=limits.max_mesh_triangles,
            hull_warning_threshold=limits.hull_warning_threshold)
        self.pieces = collections.OrderedDict()   # geometry key -> piece (LRU)
        self.sent = {}                            # (kind, ns, id) -> geometry key last sent

    def warm_up(self):
        """Import every library a job needs and build one piece (compiling what must be)."""
        from gjk_ros.models import piece_from_description
        import rclpy.serialization  # noqa: F401 -- imported for its cost, before any job
        from std_msgs.msg import String  # noqa: F401
        from visualization_msgs.msg import MarkerArray  # noqa: F401
        piece_from_description('warm_up', 'world', {'type': 'box', 'size': [0.1, 0.1, 0.1]},
                               resolver=self.resolver)

    def run(self, key, payload, skip, progress):
        from gjk_ros.models import ModelError
        try:
            if key[0] == 'markers':
                return self.markers(key[1], payload, skip, progress), None
            if key[0] == 'urdf':
                return self.urdf(payload), None
            if key[0] == 'srdf':
                return self.srdf(payload), None
            if key[0] == 'decompose':
                return self.decompose(key[1], key[2], *payload, progress), None
            return self.parameter(key[1], *payload), None
        except ModelError as error:
            return None, error
        except MemoryError:
            return None, _model_error(key, 'out of memory (ingest_memory_mb %d MiB)'
                                      % self.limits.worker_memory_mb)
        except RecursionError:
            return None, _model_error(key, 'nested too deeply')

    # robot_description ------------------------------------------------------------------

    def urdf(self, data):
        from gjk_ros.models import parse_urdf_collisions
        from gjk_ros.models.kinematics import parse_kinematics
        text = self._text('robot_description', data)
        model = parse_urdf_collisions(text, resolver=self.resolver)
        try:
            adjacent = parse_kinematics(text).adjacent_pairs()
        except ValueError:
            adjacent = set()  # not a kinematic tree: no pair is excluded as adjacent
        return model, adjacent

    def srdf(self, data):
        from gjk_ros.models.srdf import parse_srdf
        text = self._text('robot_description_semantic', data)
        try:
            return set(parse_srdf(text).disabled_collisions)
        except ValueError as error:
            from gjk_ros.models import ModelError
            raise ModelError('robot_description_semantic', str(error)[:200]) from None

    def _text(self, body, data):
        from gjk_ros.models import ModelError
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        if len(data) > self.limits.max_description_bytes + 8:
            raise ModelError(body, '%d bytes exceed max_description_bytes (%d)'
                             % (len(data), self.limits.max_description_bytes))
        try:
            return deserialize_message(bytes(data), String).data
        except Exception as error:  # noqa: B902 -- any decoding failure is a rejection
            raise ModelError(body, 'not a std_msgs/String (%s)' % type(error).__name__) \
                from None

    # convex decomposition -------------------------------------------------------------------

    def decompose(self, uri, scale, settings, cache_dir, progress):
        """Return the CoACD parts of a mesh file as ConvexPolytopes (models.decomposition)."""
        from gjk_ros.core import ConvexPolytope
        from gjk_ros.models import ModelError
        from gjk_ros.models.decomposition import decompose_mesh_file
        progress(uri)
        self.resolver.load_mesh_info(uri, scale)  # the mesh size limits, before CoACD reads it
        try:
            parts = decompose_mesh_file(self.resolver.resolve(uri), scale, settings,
                                        cache_dir or None)
            return tuple(ConvexPolytope.from_points(part) for part in parts)
        except ImportError:
            raise ModelError(uri, 'cannot decompose: the coacd package is not installed '
                                  '(pip install coacd)') from None
        except (ValueError, RuntimeError) as error:
            raise ModelError(uri, 'decomposition failed (%s)' % type(error).__name__) from None

    # static_obstacles / link_geometry -------------------------------------------------------

    def parameter(self, kind, text, fixed_frame):
        from gjk_ros.models import ModelError, piece_from_description
        from gjk_ros.ros.params import parse_body_descriptions
        name = 'static_obstacles' if kind == 'obstacle' else 'link_geometry'
        try:
            bodies = parse_body_descriptions(text, self.limits)
        except ValueError as error:
            raise ModelError(name, str(error)) from None
        entries = []
        for body, frame_id, descriptions in bodies:
            frame_id = frame_id or (fixed_frame if kind == 'obstacle' else body)
            for index, description in enumerate(descriptions):
                try:
                    entries.append((body, index, piece_from_description(
                        body, frame_id, description, resolver=self.resolver)))
                except ModelError as error:
                    entries.append((body, index, error))
                except (ValueError, TypeError, MemoryError) as error:
                    entries.append((body, index, ModelError(body, 'rejected (%s)'
                                                            % type(error).__name__)))
        return entries

    # markers --------------------------------------------------------------------------------

    def markers(self, kind, payload, skip, progress):
        messages, forget = payload
        if len(messages) > 1:
            progress = _throttled(progress)
        for ns, marker_id in forget:
            self.sent.pop((kind, ns, marker_id), None)
        clears, latest, heard = self._coalesce(kind, messages, progress)
        ops = [self._op(kind, marker, received, skip, progress)
               for marker, received in latest.values()]
        return clears, ops, heard

    def _coalesce(self, kind, messages, progress):
        """Latest marker per (ns, id) over the messages, DELETEALL applied in order."""
        from rclpy.serialization import deserialize_message
        from visualization_msgs.msg import MarkerArray
        clears, latest, heard = [], {}, {}
        for data, received in messages:
            progress(None)  # decoding: a time limit hit here rejects the whole batch
            try:
                array = deserialize_message(data, MarkerArray)
            except Exception:  # noqa: B902 -- undecodable bytes refresh nothing
                continue
            if len(array.markers) > self.limits.max_markers_per_message:
                continue  # the node rejected the size already; its sources stay unheard
            for marker in array.markers:
                heard[marker.ns] = received
                if marker.action == DELETEALL:
                    self._clear(kind, marker.ns, clears, latest)
                else:
                    latest[(marker.ns, marker.id)] = (marker, received)
        return clears, latest, heard

    def _clear(self, kind, namespace, clears, latest):
        for key in [key for key in latest if not namespace or key[0] == namespace]:
            del latest[key]
        for key in [key for key in self.sent if key[0] == kind and
                    (not namespace or key[1] == namespace)]:
            del self.sent[key]
        if not namespace:
            clears[:] = ['']
        elif namespace not in clears:
            clears.append(namespace)

    def _op(self, kind, marker, received, skip, progress):
        lifetime = marker.lifetime.sec + marker.lifetime.nanosec * 1e-9
        op = MarkerOp(kind, marker.ns, marker.id, marker.action, _marker_name(kind, marker),
                      received, lifetime)
        key = (kind, marker.ns, marker.id)
        previous = self.sent.pop(key, None)  # restored below if the geometry is unchanged
        if marker.action == DELETE:
            return op
        op.error = self._check_marker(kind, marker)
        if op.error is not None:
            return op
        op.frame_id = marker.header.frame_id.lstrip('/')
        position, orientation = marker.pose.position, marker.pose.orientation
        op.pose = (position.x, position.y, position.z,
                   orientation.x, orientation.y, orientation.z, orientation.w)
        op.error = check_pose(op.pose)
        if op.error is not None:
            return op
        op.frame_locked = bool(marker.frame_locked)
        op.stamp_ns = marker.header.stamp.sec * 1_000_000_000 + marker.header.stamp.nanosec
        op.geometry_key = geometry_key(marker)
        if (marker.ns, marker.id) in skip:
            op.error = ('took longer than ingest_timeout (%g s) or exceeded ingest_memory_mb; '
                        'rejected' % self.limits.job_timeout_s)
            return op
        if previous == op.geometry_key:
            self.sent[key] = previous  # the node holds this piece: send the pose only
            return op
        self._attach_piece(op, key, marker, progress)
        return op

    def _check_marker(self, kind, marker):
        if marker.action != ADD:
            return 'unknown marker action %d' % marker.action
        if not marker.header.frame_id.strip('/'):
            # tf2 refuses an empty frame id, so the marker could never be placed: it would wait
            # as STALE for ever. RViz refuses it too.
            return 'header.frame_id is empty (a marker must name its frame)'
        if len(marker.points) > self.limits.max_points:
            return '%d points exceed max_points (%d)' % (len(marker.points),
                                                         self.limits.max_points)
        mesh_bytes = len(getattr(getattr(marker, 'mesh_file', None), 'data', b'') or b'')
        if mesh_bytes > self.limits.max_mesh_bytes:
            return 'mesh_file of %d bytes exceeds max_mesh_bytes (%d)' % (
                mesh_bytes, self.limits.max_mesh_bytes)
        return None  # a mesh_resource file is checked by the resolver, before it is read

    def _attach_piece(self, op, key, marker, progress):
        from gjk_ros.models import marker_to_piece, ModelError
        piece = self.pieces.get(op.geometry_key)
        if piece is None:
            progress((marker.ns, marker.id))
            try:
                piece = marker_to_piece(marker, resolver=self.resolver)
            except ModelError as error:
                op.error = error.reason
                return
            except MemoryError:
                op.error = ('out of memory building it (ingest_memory_mb %d MiB)'
                            % self.limits.worker_memory_mb)
                return
            except Exception as error:  # noqa: B902 -- a library failure rejects one body
                op.error = 'rejected (%s)' % type(error).__name__
                return
            self.pieces[op.geometry_key] = piece
            while len(self.pieces) > WORKER_CACHE:
                self.pieces.popitem(last=False)
        self.pieces.move_to_end(op.geometry_key)
        op.piece = piece
        self.sent[key] = op.geometry_key


def marker_count(data):
    """
    Markers in a serialized MarkerArray, read from its CDR header; None if it has none.

    The node checks ``max_markers_per_message`` with this before queueing a message, so an
    oversized array is rejected by name at once, without decoding (or copying) its bytes.
    """
    if len(data) < 8 or data[1] not in (0x00, 0x01):  # encapsulation: CDR big/little endian
        return None
    return struct.unpack_from('>I' if data[1] == 0x00 else '<I', data, 4)[0]


def check_pose(pose):
    """
    Why a marker pose (x, y, z, qx, qy, qz, qw) is not sane, or None.

    As RViz, a quaternion that is not unit is normalised (RViz warns and draws it); but one
    that is non-finite, zero, or whose norm is absurd (components near 1e154 overflow a naive
    norm and used to become the identity rotation) is rejected, and so is a position beyond
    MAX_COORDINATE.
    """
    from gjk_ros.core.rigid import marker_quaternion, MAX_COORDINATE
    if not all(abs(v) <= MAX_COORDINATE for v in pose[:3]):
        return 'position is not finite or beyond %g m' % MAX_COORDINATE
    quaternion, reason = marker_quaternion(pose[3:])
    return reason if quaternion is None else None


def _throttled(progress):
    """Send decode progress once per 0.1 s at most (a batch may hold thousands of messages)."""
    last = [0.0]

    def send(body):
        now = time.monotonic()
        if body is not None or now - last[0] > 0.1:
            last[0] = now
            progress(body)
    return send


def _marker_name(kind, marker):
    """Obstacles are named ns/id; link markers belong to the link of their frame."""
    if kind == 'obstacle':
        return '%s/%d' % (marker.ns, marker.id)
    return marker.header.frame_id.lstrip('/') or '%s/%d' % (marker.ns, marker.id)


def geometry_key(marker):
    """Digest everything that shapes a marker's piece (not its pose or its frame)."""
    digest = hashlib.blake2b(digest_size=16)
    scale = marker.scale
    digest.update(repr((marker.type, scale.x, scale.y, scale.z, marker.mesh_resource,
                        len(marker.points))).encode())
    for point in marker.points:
        digest.update(repr((point.x, point.y, point.z)).encode())
    mesh_file = getattr(marker, 'mesh_file', None)
    if mesh_file is not None:
        digest.update(mesh_file.filename.encode('utf-8', 'replace'))
        digest.update(bytes(mesh_file.data))
    return digest.hexdigest()


def lifetime_expiry(received, lifetime):
    """Node-clock expiry of a marker received at ``received``, or None (forever)."""
    return received + lifetime if lifetime > 0.0 and math.isfinite(lifetime) else None
