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
The protocol between the node and its geometry worker process: one dataclass per job kind.

A job says what it is by its type; what the worker makes of it comes back as the typed value
named in the job's docstring (``JobResult.value``), or as a ``ModelError`` naming the input
(``JobResult.error``). The worker-side handler of each kind is in ``geometry_worker`` (the one
module only the worker runs); the node side (``ingestion.Ingestor``) queues the jobs, hands
each result to the mailbox of the source that asked, and never looks inside a value.

Raw message bytes travel as raw buffers (``Job.buffers``): pickling a 30 MB message would copy
it while holding the GIL, which the node's executor thread shares with the dispatcher thread;
``send_bytes`` writes a buffer as it is and the pipe write releases the GIL. Each message is
decoded once, in the worker.
"""

import collections
from dataclasses import dataclass, field, replace
import hashlib
import struct

from gjk_ros.ros.inputs.model_imports import load_models

__all__ = ['ADD', 'BodyEntry', 'BodyTextJob', 'check_pose', 'DecomposeJob', 'DELETE',
           'DELETEALL', 'Finished', 'geometry_key', 'Job', 'JobResult', 'lifetime_expiry',
           'marker_count', 'marker_name', 'MarkerBatch', 'MarkerBatchJob', 'MarkerId', 'MarkerOp',
           'MarkerRebuild', 'MarkerRebuildJob', 'MarkerSource', 'Progress', 'Ready',
           'receive_job', 'rejection', 'RobotDescriptionJob', 'RobotModel', 'RobotSemantics',
           'SceneChange', 'SceneMessageJob', 'SceneRebuild', 'SceneRebuildJob',
           'SemanticDescriptionJob', 'send_job']

# Marker actions (visualization_msgs/Marker), kept here so the parent needs no message import.
ADD, DELETE, DELETEALL = 0, 2, 3

MarkerId = collections.namedtuple('MarkerId', 'ns id')
MarkerId.__doc__ = 'A marker in its topic: ``ns`` and ``id`` (visualization_msgs/Marker).'


class Job:
    """
    What every job kind provides to the queue and the transport.

    ``latest_wins`` is the identity under which a newer job replaces a queued one (None: every
    job runs); ``subject`` names the input in a rejection. ``buffers`` and ``with_buffers``
    split the raw bytes off for the transport and put them back.
    """

    @property
    def latest_wins(self):
        return None

    @property
    def subject(self):
        raise NotImplementedError

    def buffers(self):
        """Return the raw byte payloads of the job (sent as raw buffers, never pickled)."""
        return ()

    def with_buffers(self, buffers):
        """Return the job with its raw payloads (as ``buffers`` gave them) put back."""
        return self


@dataclass(frozen=True)
class RobotDescriptionJob(Job):
    """Raw ``robot_description`` bytes (std_msgs/String); value a ``RobotModel``."""

    data: bytes = b''

    latest_wins = 'robot_description'
    subject = 'robot_description'

    def buffers(self):
        return (self.data,)

    def with_buffers(self, buffers):
        return replace(self, data=buffers[0])


@dataclass(frozen=True)
class SemanticDescriptionJob(Job):
    """Raw ``robot_description_semantic`` bytes (the SRDF); value a ``RobotSemantics``."""

    data: bytes = b''

    latest_wins = 'robot_description_semantic'
    subject = 'robot_description_semantic'

    def buffers(self):
        return (self.data,)

    def with_buffers(self, buffers):
        return replace(self, data=buffers[0])


@dataclass(frozen=True)
class BodyTextJob(Job):
    """
    The bodies of ``static_obstacles`` or ``link_geometry``, parsed once by the node.

    ``bodies`` is what ``params.parse_body_descriptions`` returned for the text; value a tuple
    of ``BodyEntry``.
    """

    kind: str
    bodies: tuple
    fixed_frame: str

    @property
    def latest_wins(self):
        return ('body text', self.kind)

    @property
    def subject(self):
        return 'static_obstacles' if self.kind == 'obstacle' else 'link_geometry'


@dataclass(frozen=True)
class MarkerBatchJob(Job):
    """
    Raw MarkerArray messages of one topic queued together; value a ``MarkerBatch``.

    ``messages`` are (bytes, receive time in ns); ``forget`` the (ns, id) the worker must send
    with their piece again (the node no longer holds it).
    """

    kind: str
    messages: tuple = ()
    forget: frozenset = frozenset()

    @property
    def subject(self):
        return '~/obstacles' if self.kind == 'obstacle' else '~/links'

    def buffers(self):
        return tuple(data for data, _ in self.messages)

    def with_buffers(self, buffers):
        return replace(self, messages=tuple(
            (data, received) for data, (_, received) in zip(buffers, self.messages)))

    def without_buffers(self):
        """Return the job with empty payloads (what is pickled ahead of the buffers)."""
        return replace(self, messages=tuple((b'', received) for _, received in self.messages))


@dataclass(frozen=True)
class DecomposeJob(Job):
    """CoACD parts of a mesh file (from the disk cache when there); value a tuple of hulls."""

    uri: str
    scale: tuple
    threshold: float
    cache_dir: str = ''

    @property
    def latest_wins(self):
        return ('decompose', self.uri, self.scale)

    @property
    def subject(self):
        return self.uri


@dataclass(frozen=True)
class SceneMessageJob(Job):
    """
    One raw moveit_msgs message of the planning scene; value a ``SceneChange``.

    ``kind`` is 'object' (CollisionObject), 'attached' (AttachedCollisionObject) or 'scene'
    (PlanningScene). Every message runs: a diff means something only after the ones before it.
    """

    kind: str
    topic: str
    data: bytes = b''

    @property
    def subject(self):
        return 'planning scene (%s)' % self.kind

    def buffers(self):
        return (self.data,)

    def with_buffers(self, buffers):
        return replace(self, data=buffers[0])


@dataclass(frozen=True)
class SceneRebuildJob(Job):
    """
    Planning-scene objects to build again in the worker's mesh modes; value a ``SceneRebuild``.

    ``objects`` are (key, kind, SceneObject without its pieces): kind 'obstacle' for a world
    object, 'link' for an attached one (its link's mode).
    """

    objects: tuple = ()

    subject = 'planning scene (mesh_mode)'


@dataclass(frozen=True)
class MarkerRebuildJob(Job):
    """
    Markers the node holds, to build again in the worker's mesh modes; value a ``MarkerRebuild``.

    ``markers`` are (MarkerId, body name, geometry key, ``MarkerSource``).
    """

    kind: str
    markers: tuple = ()

    @property
    def latest_wins(self):
        return ('marker rebuild', self.kind)

    @property
    def subject(self):
        return '~/obstacles' if self.kind == 'obstacle' else '~/links'


def _without_buffers(job):
    if isinstance(job, MarkerBatchJob):
        return job.without_buffers()
    return job.with_buffers((b'',)) if job.buffers() else job


# -- values ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RobotModel:
    """A built URDF: its collision pieces, the links joined by a joint, its joints."""

    collisions: object            # gjk_ros.models.UrdfCollisionModel
    adjacent: frozenset = frozenset()   # frozensets of two link names
    joints: tuple = ()            # (name, parent, child)
    mesh_uses: tuple = ()         # MeshUse of each non-convex mesh (mesh_mode)


@dataclass(frozen=True)
class RobotSemantics:
    """The SRDF: its ``disable_collisions`` pairs (frozensets) and its groups as written."""

    disabled: frozenset = frozenset()
    groups: object = None


@dataclass(frozen=True)
class BodyEntry:
    """
    One piece of a parameter body: built (``piece``) or rejected (``error``, a reason).

    ``index`` is (description, piece of it): an exact mesh is many pieces. The first piece of
    a non-convex mesh carries its ``mesh_use`` (``gjk_ros.models.mesh_bodies.MeshUse``).
    """

    body: str
    index: tuple
    piece: object = None
    error: str = None
    mesh_use: object = None


@dataclass(frozen=True)
class MarkerBatch:
    """
    What a batch of MarkerArrays says, latest marker per (ns, id).

    ``clears``: namespaces cleared by DELETEALL ('' for all), applied before ``ops`` (one
    ``MarkerOp`` per marker); ``heard``: ``{ns: receive time in ns}`` of every namespace named.
    """

    clears: tuple = ()
    ops: tuple = ()
    heard: dict = field(default_factory=dict)
    mesh: object = None   # the MeshSettings its pieces were built with


@dataclass(frozen=True)
class MarkerSource:
    """
    What builds a mesh marker's pieces again in another mode (a worker restart loses the rest).

    ``piece``: the marker's hull piece (with its mesh file, if any); ``triangles``: a
    TRIANGLE_LIST's (m, 3, 3) scaled triangles (bounded by ``max_points``), else None.
    """

    piece: object
    triangles: object = None
    uri: str = ''          # the marker's mesh_resource (its mesh mode may depend on it)


@dataclass(frozen=True)
class SceneRebuild:
    """Objects built again: ``mesh`` (the settings used) and (key, SceneObject) pairs."""

    mesh: object
    objects: tuple = ()


@dataclass(frozen=True)
class MarkerRebuild:
    """
    Markers built again, with ``mesh``, the settings used.

    Per marker: (MarkerId, geometry key, pieces, MeshUse or None, error or None).
    """

    mesh: object
    markers: tuple = ()


@dataclass(frozen=True)
class SceneChange:
    """
    One planning-scene message as ``SceneState`` applies it.

    ``kind`` 'object': ``operation`` and ``entry`` (a SceneObject); 'attached': ``operation``
    and ``entry`` (an AttachedObject); 'scene': ``entry`` (a SceneUpdate).
    """

    kind: str
    entry: object
    operation: object = None
    mesh: object = None   # the MeshSettings it was built with


@dataclass
class MarkerOp:
    """
    One marker as the worker hands it back (plain data and, when new, its pieces).

    ``pose`` is (x, y, z, qx, qy, qz, qw) in ``frame_id``; ``pieces`` (one, or an exact mesh's
    many, with its ``mesh_use``) is None when the geometry is the one the worker sent last for
    this marker (``geometry_key`` says which), or when ``error`` says why the marker was
    rejected.
    """

    kind: str
    ns: str
    id: int  # noqa: A003 -- the Marker field's name
    action: int
    name: str
    received: int  # ROS time, ns
    lifetime_ns: int = 0
    frame_id: str = ''
    pose: tuple = ()
    frame_locked: bool = False
    stamp_ns: int = 0
    geometry_key: str = ''
    pieces: tuple = None
    mesh_use: object = None
    error: str = None
    source: object = None  # a MarkerSource with the pieces of a mesh marker


@dataclass(frozen=True)
class JobResult:
    """A finished job: ``value`` (the type its job names) or ``error`` (a ModelError)."""

    job: Job
    token: int
    value: object = None
    error: object = None


def rejection(job, reason):
    """Return the ModelError that rejects ``job`` with ``reason``."""
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models import ModelError
    return ModelError(job.subject, reason)


# -- transport ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """The worker has imported its libraries and takes jobs."""


@dataclass(frozen=True)
class Progress:
    """The worker starts on ``body`` ((ns, id) of a marker, a mesh URI; None: decoding)."""

    body: object = None


@dataclass(frozen=True)
class Finished:
    """The worker's answer to a job: ``value`` or ``error`` (a ModelError)."""

    value: object = None
    error: object = None


def send_job(connection, job, skip):
    """Send a job and the (ns, id) of markers to skip; raw bytes go as raw buffers."""
    buffers = job.buffers()
    connection.send((_without_buffers(job), skip, len(buffers)))
    for data in buffers:
        connection.send_bytes(data)


def receive_job(connection, message):
    """Receive what ``send_job`` sent: (job, skip)."""
    job, skip, count = message
    if count:
        job = job.with_buffers([connection.recv_bytes() for _ in range(count)])
    return job, skip


# -- the checks both sides make of a marker -------------------------------------------------


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


def marker_name(kind, marker):
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


def lifetime_expiry(received_ns, lifetime_ns):
    """ROS time (int ns) a marker received at ``received_ns`` expires, or None (forever)."""
    return received_ns + lifetime_ns if lifetime_ns > 0 else None
