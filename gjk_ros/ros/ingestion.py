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
Geometry building off the compute path, in a worker process bounded in time and memory.

Why a process: a hostile input (a quadratic mesh check, a decompression bomb, a parser that
loops) cannot be interrupted inside a thread, and its memory cannot be limited. The worker is
forked from a ``forkserver`` (never from the node, which has rclpy initialised) with
``gjk_ros.models`` preloaded, so a restart after a kill costs milliseconds.

Flow
    The ROS callback thread turns a message into a plain-data job with :func:`marker_job`,
    :func:`urdf_job` or :func:`descriptions_job` (cheap, bounded: limits are checked before
    anything is converted), then :meth:`Ingestor.submit` queues it under a key, latest wins.
    A manager thread feeds the worker one job at a time; the node collects finished results
    with :meth:`Ingestor.poll`, never blocking.

Bounds
    A job running longer than ``job_timeout_s`` is rejected and its worker killed and replaced.
    The worker's address space is limited to its size after start-up plus
    ``worker_memory_mb`` (RLIMIT_AS), so a memory hog gets a MemoryError, or dies, and the job
    is rejected either way. At most ``max_pending`` keys wait; more are rejected at once.

No rclpy here: messages are read duck-typed, so this module is testable without ROS. As with
any multiprocessing start method but fork, the main module must be safe to import (its work
under ``if __name__ == '__main__':``), which console scripts and pytest are.
"""

from collections import OrderedDict
from dataclasses import dataclass, fields
import hashlib
import itertools
import math
import multiprocessing
import os
import signal
import threading
import time
from types import SimpleNamespace

from gjk_ros.models import (marker_body, marker_to_piece, ModelError, parse_urdf_collisions,
                            piece_from_description, ResourceResolver)
from gjk_ros.ros.params import parse_body_descriptions
import numpy as np

__all__ = ['descriptions_job', 'IngestLimits', 'IngestResult', 'Ingestor', 'marker_job',
           'urdf_job']

# Marker types whose geometry is their points (visualization_msgs/Marker constants).
_POINT_TYPES = (6, 7, 8, 11)
_MESH_RESOURCE = 10
# How long close() waits for the worker to leave on its own before killing it.
_CLOSE_GRACE_S = 0.5
# Granularity of the manager thread's waits: how soon it notices close() or a timeout.
_TICK_S = 0.05


@dataclass(frozen=True)
class IngestLimits:
    """
    Bounds on every input that becomes geometry; each is a node parameter.

    Attributes
    ----------
    max_points : int
        Points of one marker or one point-set description. 200,000 is a dense scanned object;
        a hull of more says nothing finer about the distance.
    max_markers_per_message : int
        Markers in one MarkerArray; the rest are rejected before being looked at.
    max_mesh_bytes : int
        Size of a mesh file (checked with stat before reading) or of ``mesh_file.data``.
        32 MiB: loading peaks at about 27 times the file size (a 16 MB STL of 327k triangles:
        438 MB resident, 3.4 s), so the largest accepted file stays within the default
        ``worker_memory_mb`` and, on a fast core, ``job_timeout_s``; it is a 670k-triangle
        binary STL, far beyond any collision mesh (Panda's are under 2 MB).
    max_mesh_triangles : int
        Triangles of a mesh, checked from the header where the format has one (binary STL,
        PLY, OFF), else after parsing: 1M, for formats more compact than binary STL.
    max_description_bytes : int
        Size of a URDF (``robot_description``); 16 MB is several times any real robot.
    max_parameter_bytes : int
        Size of the ``static_obstacles`` / ``link_geometry`` text.
    max_nesting : int
        Depth of brackets/indentation in that text (the schema needs 5).
    max_yaml_nodes : int
        Scalars, lists and mappings in that text, aliases counted at every use.
    job_timeout_s : float
        Longest one job may run in the worker before it is killed and the job rejected.
    worker_memory_mb : int
        Address space the worker may grow by beyond its size after start-up.
    max_pending : int
        Keys that may wait for the worker; a submit beyond this is rejected at once.
    hull_warning_threshold : float
        Metres: a non-convex mesh is reported only when its hull reaches farther than this
        beyond its surface (not a bound, but the worker's resolver needs it).

    """

    max_points: int = 200_000
    max_markers_per_message: int = 10_000
    max_mesh_bytes: int = 32 * 1024 * 1024
    max_mesh_triangles: int = 1_000_000
    max_description_bytes: int = 16 * 1024 * 1024
    max_parameter_bytes: int = 1024 * 1024
    max_nesting: int = 32
    max_yaml_nodes: int = 100_000
    job_timeout_s: float = 10.0
    worker_memory_mb: int = 2048
    max_pending: int = 10_000
    hull_warning_threshold: float = 0.005

    def validate(self):
        """
        Check every field.

        Raises
        ------
        ValueError
            Naming the first field that is not a positive (finite) number.

        """
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f'{field.name} must be a number, got {value!r}')
            if field.type is int and not isinstance(value, int):
                raise ValueError(f'{field.name} must be an integer, got {value!r}')
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f'{field.name} must be > 0 and finite, got {value!r}')
        return self


@dataclass(frozen=True)
class IngestResult:
    """
    A finished job.

    Attributes
    ----------
    key : hashable
        The key it was submitted under.
    token : int
        The token :meth:`Ingestor.submit` returned for it.
    value : object
        What the models layer built (see the job builders), or None on error.
    error : ModelError or None
        Why the job was rejected, naming the body; never file content.

    """

    key: object
    token: int
    value: object
    error: ModelError | None


# -- jobs (built in the callback thread, run in the worker) -----------------------------------

@dataclass(frozen=True)
class MarkerJob:
    """A visualization_msgs/Marker as plain data; the worker returns its CollisionPiece."""

    kind: str
    marker_type: int
    ns: str
    marker_id: int
    frame_id: str
    pose: tuple            # x, y, z, qx, qy, qz, qw
    scale: tuple           # x, y, z
    points: np.ndarray     # (n, 3) float64
    mesh_resource: str
    mesh_filename: str
    mesh_data: bytes
    frame_locked: bool
    stamp_ns: int
    lifetime_ns: int

    @property
    def body(self) -> str:
        """Name the obstacle, ``ns/id``."""
        return f'{self.ns}/{self.marker_id}'

    def run(self, resolver: ResourceResolver):
        """Build the piece (in the worker)."""
        x, y, z, qx, qy, qz, qw = self.pose
        marker = SimpleNamespace(
            ns=self.ns, id=self.marker_id, type=self.marker_type,
            header=SimpleNamespace(frame_id=self.frame_id),
            pose=SimpleNamespace(position=SimpleNamespace(x=x, y=y, z=z),
                                 orientation=SimpleNamespace(x=qx, y=qy, z=qz, w=qw)),
            scale=SimpleNamespace(x=self.scale[0], y=self.scale[1], z=self.scale[2]),
            points=self.points, mesh_resource=self.mesh_resource,
            mesh_file=SimpleNamespace(filename=self.mesh_filename, data=self.mesh_data))
        return marker_to_piece(marker, resolver=resolver)


@dataclass(frozen=True)
class UrdfJob:
    """A robot description; the worker returns its UrdfCollisionModel."""

    text: str
    body: str = 'robot_description'

    def run(self, resolver: ResourceResolver):
        """Parse the URDF and build every link's pieces (in the worker)."""
        return parse_urdf_collisions(self.text, resolver=resolver)


@dataclass(frozen=True)
class DescriptionsJob:
    """
    A ``static_obstacles`` / ``link_geometry`` text.

    The worker returns a list of (name, index, CollisionPiece or ModelError). Obstacles
    without a frame_id get ``fixed_frame``; links default to their own frame.
    """

    kind: str
    text: str
    fixed_frame: str
    limits: IngestLimits

    @property
    def body(self) -> str:
        """Name the parameter kind (``obstacle`` or ``link``) in errors."""
        return self.kind

    def run(self, resolver: ResourceResolver):
        """Parse the text and build every piece (in the worker)."""
        try:
            bodies = parse_body_descriptions(self.text, self.limits)
        except ValueError as error:
            raise ModelError(self.kind, str(error)) from None
        entries = []
        for name, frame_id, descriptions in bodies:
            frame_id = frame_id or (self.fixed_frame if self.kind == 'obstacle' else name)
            for index, description in enumerate(descriptions):
                try:
                    piece = piece_from_description(name, frame_id, description,
                                                   resolver=resolver)
                except ModelError as error:
                    piece = error
                entries.append((name, index, piece))
        return entries


def marker_job(marker, kind: str, limits: IngestLimits):
    """
    Turn a visualization_msgs/Marker into a job and the key of its geometry.

    Cheap and bounded: the point count and mesh data length are checked before anything
    is copied.

    Parameters
    ----------
    marker : visualization_msgs.msg.Marker or alike
        Read duck-typed.
    kind : str
        What the marker is for (e.g. ``'obstacle'`` or ``'link'``), carried along.
    limits : IngestLimits
        Bounds to check.

    Returns
    -------
    tuple of (MarkerJob, str)
        The job and ``geometry_key``: a hash of everything that shapes the piece (type,
        scale, points, mesh), not the pose or frame, so a marker that only moved need not be
        rebuilt.

    Raises
    ------
    ModelError
        Naming ``ns/id``: too many points, mesh data too large.

    """
    body = marker_body(marker)
    count = len(marker.points)
    if count > limits.max_points:
        raise ModelError(body, f'{count} points, more than the limit of {limits.max_points}')
    mesh_file = getattr(marker, 'mesh_file', None)
    filename, data = '', b''
    if mesh_file is not None and marker.type == _MESH_RESOURCE:
        if len(mesh_file.data) > limits.max_mesh_bytes:
            raise ModelError(body, f'mesh_file.data of {len(mesh_file.data)} bytes, more than '
                                   f'the limit of {limits.max_mesh_bytes}')
        filename, data = str(mesh_file.filename), bytes(mesh_file.data)
    points = _point_array(marker.points, count) if marker.type in _POINT_TYPES else \
        np.zeros((0, 3))
    position, orientation = marker.pose.position, marker.pose.orientation
    job = MarkerJob(
        kind=kind, marker_type=int(marker.type), ns=str(marker.ns), marker_id=int(marker.id),
        frame_id=str(marker.header.frame_id),
        pose=(position.x, position.y, position.z,
              orientation.x, orientation.y, orientation.z, orientation.w),
        scale=(marker.scale.x, marker.scale.y, marker.scale.z), points=points,
        mesh_resource=str(marker.mesh_resource), mesh_filename=filename, mesh_data=data,
        frame_locked=bool(getattr(marker, 'frame_locked', False)),
        stamp_ns=_nanoseconds(getattr(marker.header, 'stamp', None)),
        lifetime_ns=_nanoseconds(getattr(marker, 'lifetime', None)))
    return job, _geometry_key(job)


def urdf_job(text: str, limits: IngestLimits) -> UrdfJob:
    """
    Turn a robot description into a job.

    Raises
    ------
    ModelError
        With body ``'robot_description'``: not text, or larger than
        ``max_description_bytes``.

    """
    _check_text('robot_description', text, limits.max_description_bytes)
    return UrdfJob(text)


def descriptions_job(kind: str, text: str, fixed_frame: str,
                     limits: IngestLimits) -> DescriptionsJob:
    """
    Turn a ``static_obstacles`` / ``link_geometry`` text into a job.

    Parameters
    ----------
    kind : str
        ``'obstacle'`` (missing frame_id means ``fixed_frame``) or ``'link'`` (the link).
    text : str
        The parameter value.
    fixed_frame : str
        The node's fixed frame.
    limits : IngestLimits
        Bounds; the parsing in the worker honours them too.

    Raises
    ------
    ModelError
        With ``kind`` as body: not text, or larger than ``max_parameter_bytes``.

    """
    _check_text(kind, text, limits.max_parameter_bytes)
    return DescriptionsJob(kind, text, fixed_frame, limits)


def _check_text(body: str, text, limit: int):
    if not isinstance(text, str):
        raise ModelError(body, f'expected text, got {type(text).__name__}')
    # A character is at most 4 UTF-8 bytes: skip encoding when the text is clearly small.
    size = len(text) if len(text) * 4 <= limit else len(text.encode('utf-8', 'replace'))
    if size > limit:
        raise ModelError(body, f'{size} bytes, more than the limit of {limit}')


def _point_array(points, count: int) -> np.ndarray:
    if isinstance(points, np.ndarray):
        return np.array(points, dtype=np.float64).reshape(-1, 3)
    coordinates = itertools.chain.from_iterable((p.x, p.y, p.z) for p in points)
    return np.fromiter(coordinates, dtype=np.float64, count=3 * count).reshape(count, 3)


def _nanoseconds(stamp) -> int:
    if stamp is None:
        return 0
    return int(getattr(stamp, 'sec', 0)) * 1_000_000_000 + int(getattr(stamp, 'nanosec', 0))


def _geometry_key(job: MarkerJob) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr((job.marker_type, job.scale, job.mesh_resource, job.mesh_filename,
                        job.points.shape)).encode())
    digest.update(np.ascontiguousarray(job.points).tobytes())
    digest.update(job.mesh_data)
    return digest.hexdigest()


# -- the worker process -----------------------------------------------------------------------

def _worker_main(connection, limits: IngestLimits, package_paths):
    """Run jobs from ``connection`` until it closes or sends None (in the worker process)."""
    # Ctrl-C reaches the whole process group; the parent decides when the worker ends, and a
    # KeyboardInterrupt traceback from here would only clutter the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    memory_mb = limits.worker_memory_mb
    _limit_memory(memory_mb)
    resolver = ResourceResolver(package_paths, max_mesh_bytes=limits.max_mesh_bytes,
                                max_mesh_triangles=limits.max_mesh_triangles,
                                hull_warning_threshold=limits.hull_warning_threshold)
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        _send(connection, _run_job(job, resolver, memory_mb))


def _run_job(job, resolver: ResourceResolver, memory_mb: int):
    body = getattr(job, 'body', 'job')
    try:
        return job.run(resolver), None
    except ModelError as error:
        return None, error
    except MemoryError:
        return None, ModelError(body, f'needs more memory than the worker limit of '
                                      f'{memory_mb} MB')
    except RecursionError:
        return None, ModelError(body, 'nested too deeply to read')
    except Exception as error:  # noqa: B902 - any failure of a third-party parser rejects
        # Only the type: library messages may echo file content.
        return None, ModelError(body, f'could not be built ({type(error).__name__})')


def _send(connection, outcome):
    try:
        connection.send(outcome)
    except MemoryError:
        error = outcome[1] or ModelError('job', 'result too large to return')
        connection.send((None, ModelError(error.body, 'result too large to return')))


def _limit_memory(memory_mb: int):
    try:
        import resource
        with open('/proc/self/statm') as statm:
            baseline = int(statm.read().split()[0]) * os.sysconf('SC_PAGE_SIZE')
    except (ImportError, OSError, ValueError):
        return
    limit = baseline + int(memory_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


_CONTEXT_LOCK = threading.Lock()
_CONTEXT = None


def _context():
    """Return the forkserver context, with the models layer preloaded in its server."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            context = multiprocessing.get_context('forkserver')
            # Replaces the default ['__main__']: the node's main module must not be imported
            # again, and every worker then starts with numpy, scipy and trimesh loaded.
            context.set_forkserver_preload(['gjk_ros.ros.ingestion'])
            _CONTEXT = context
        return _CONTEXT


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, limits: IngestLimits, package_paths):
        context = _context()
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=_worker_main, args=(child, limits, package_paths),
            name='gjk_ros-ingest', daemon=True)
        self.process.start()
        child.close()

    def stop(self, grace: float):
        """End the process: ask, wait up to ``grace`` seconds, then kill."""
        try:
            self.connection.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(grace)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(1.0)
        self.connection.close()


# -- the parent side --------------------------------------------------------------------------

class Ingestor:
    """
    Build geometry in a bounded worker process; latest job per key wins.

    Parameters
    ----------
    limits : IngestLimits
        Timeouts and memory of the worker, and ``max_pending``.
    package_paths : mapping of str to str, optional
        Package name -> share directory for ``package://`` URIs (see ResourceResolver).

    """

    def __init__(self, limits: IngestLimits, package_paths=None):
        self._limits = limits.validate()
        self._package_paths = dict(package_paths or {})
        self._tokens = itertools.count(1)
        self._condition = threading.Condition()
        self._queue = OrderedDict()      # key -> (token, job), at most one per key
        self._latest = {}                # key -> newest token submitted and not yet finished
        self._results = OrderedDict()    # key -> IngestResult, newest only
        self._running = None             # (key, token) in the worker
        self._closed = False
        self._worker = None
        self._thread = threading.Thread(target=self._serve, name='gjk_ros-ingest',
                                        daemon=True)
        self._thread.start()

    def submit(self, key, job) -> int:
        """
        Queue ``job`` under ``key``, replacing a queued job of the same key.

        A result of an older job of this key still running is discarded. Beyond
        ``max_pending`` waiting keys, the job is rejected at once (its result says so).

        Returns
        -------
        int
            The token that the job's :class:`IngestResult` carries.

        """
        token = next(self._tokens)
        with self._condition:
            if self._closed:
                raise RuntimeError('the Ingestor is closed')
            self._latest[key] = token
            if key not in self._queue and len(self._queue) >= self._limits.max_pending:
                reason = f'{len(self._queue)} jobs already waiting (limit max_pending)'
                self._finish(key, token, None, ModelError(job.body, reason))
                return token
            self._queue[key] = (token, job)
            self._condition.notify_all()
        return token

    def poll(self, max_results: int = 100) -> list:
        """Return up to ``max_results`` finished results, oldest first; never blocks."""
        with self._condition:
            results = []
            while self._results and len(results) < max_results:
                results.append(self._results.popitem(last=False)[1])
            return results

    def pending(self) -> set:
        """Keys with a job queued or running."""
        with self._condition:
            keys = set(self._queue)
            if self._running is not None:
                keys.add(self._running[0])
            return keys

    def close(self):
        """Stop the worker and the manager thread; pending jobs are dropped."""
        with self._condition:
            if self._closed:
                return
            self._closed = True
            self._queue.clear()
            self._condition.notify_all()
        self._thread.join(_CLOSE_GRACE_S + 2.0)

    def __enter__(self):
        """Use as a context manager that closes on exit."""
        return self

    def __exit__(self, *exc_info):
        """Close."""
        self.close()

    # Manager thread ----------------------------------------------------------------------------

    def _serve(self):
        try:
            # Started at once, so the first job finds it ready (the forkserver's first start
            # imports numpy, scipy and trimesh: about a second). A failure is retried and
            # reported with the first job.
            try:
                self._start_worker()
            except Exception:  # noqa: B902 - whatever it was, the first job reports it
                self._worker = None
            while True:
                with self._condition:
                    while not self._queue and not self._closed:
                        self._condition.wait()
                    if self._closed:
                        return
                    key, (token, job) = self._queue.popitem(last=False)
                    self._running = (key, token)
                value, error = self._execute(job)
                with self._condition:
                    self._running = None
                    if not self._closed:
                        self._finish(key, token, value, error)
        finally:
            if self._worker is not None:
                self._worker.stop(_CLOSE_GRACE_S)
                self._worker = None

    def _execute(self, job):
        """Run one job in the worker (started if needed); return (value, error)."""
        body = getattr(job, 'body', 'job')
        try:
            self._start_worker()
            self._worker.connection.send(job)
        except Exception as error:  # noqa: B902 - any failure to start or feed rejects the job
            self._discard_worker()
            return None, ModelError(body, f'the geometry worker failed ({type(error).__name__})')
        deadline = time.monotonic() + self._limits.job_timeout_s
        while not self._closed:
            try:
                if self._worker.connection.poll(_TICK_S):
                    return self._worker.connection.recv()
            except (EOFError, OSError):
                return None, self._died(body)
            if time.monotonic() > deadline:
                self._discard_worker()
                return None, ModelError(body, f'took longer than '
                                              f'{self._limits.job_timeout_s:g} s to build')
        return None, ModelError(body, 'the ingestor was closed')

    def _start_worker(self):
        if self._worker is None:
            self._worker = _Worker(self._limits, self._package_paths)

    def _died(self, body: str) -> ModelError:
        process = self._worker.process
        process.join(1.0)
        code = process.exitcode
        self._discard_worker()
        how = f'killed by signal {-code}' if code is not None and code < 0 else \
            f'exit code {code}'
        return ModelError(body, f'the geometry worker died building it ({how}; the memory '
                                f'limit is {self._limits.worker_memory_mb} MB)')

    def _discard_worker(self):
        if self._worker is not None:
            self._worker.stop(0.0)
            self._worker = None

    def _finish(self, key, token, value, error):
        """Store a result unless a newer job of the same key was submitted (with the lock)."""
        if self._latest.get(key) != token:
            return
        del self._latest[key]
        self._results.pop(key, None)
        self._results[key] = IngestResult(key, token, value, error)
