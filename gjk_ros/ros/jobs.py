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
The jobs between the node and its geometry worker process: what travels, and how.

A job is keyed by a tuple whose first element says what it is (``Ingestor`` lists them); the
node side (``ingestion.Ingestor``) and the worker side (``geometry_worker``) share this
protocol, the marker actions, and the checks both sides make of a marker.
"""

from dataclasses import dataclass, field
import hashlib
import math
import struct

from gjk_ros.ros.model_imports import load_models

__all__ = ['ADD', 'body_of', 'check_pose', 'DELETE', 'DELETEALL', 'geometry_key', 'IngestResult',
           'Job', 'lifetime_expiry', 'marker_count', 'marker_name', 'MarkerOp', 'model_error',
           'receive_job', 'send_job']

# Marker actions (visualization_msgs/Marker), kept here so the parent needs no message import.
ADD, DELETE, DELETEALL = 0, 2, 3


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
    received: int  # ROS time, ns
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
class Job:
    key: tuple
    token: int
    payload: object
    skip: set = field(default_factory=set)


def model_error(key, reason):
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models import ModelError
    return ModelError(body_of(key), reason)


def body_of(key):
    if key[0] == 'urdf':
        return 'robot_description'
    if key[0] == 'param':
        return 'static_obstacles' if key[1] == 'obstacle' else 'link_geometry'
    if key[0] == 'decompose':
        return key[1]
    if key[0] == 'planning_scene':
        return 'planning scene (%s)' % key[1]
    return '~/obstacles' if key[1] == 'obstacle' else '~/links'


def send_job(connection, job):
    """
    Send a job; raw marker and planning scene bytes go as raw buffers after a small header.

    Pickling a 30 MB message would copy it while holding the GIL, which the node's executor
    thread shares with this dispatcher; ``send_bytes`` writes the buffer as it is, and the
    pipe write releases the GIL.
    """
    if job.key[0] == 'planning_scene':
        topic, data = job.payload
        connection.send((job.key, topic, job.skip))
        connection.send_bytes(data)
        return
    if job.key[0] != 'markers':
        connection.send((job.key, job.payload, job.skip))
        return
    messages, forget = job.payload
    connection.send((job.key, ([received for _, received in messages], forget), job.skip))
    for data, _ in messages:
        connection.send_bytes(data)


def receive_job(connection, message):
    """Receive what ``_send_job`` sent: (key, payload, skip)."""
    key, payload, skip = message
    if key[0] == 'planning_scene':
        payload = (payload, connection.recv_bytes())
    if key[0] == 'markers':
        times, forget = payload
        payload = ([(connection.recv_bytes(), received) for received in times], forget)
    return key, payload, skip


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


def lifetime_expiry(received, lifetime):
    """Node-clock expiry of a marker received at ``received``, or None (forever)."""
    return received + lifetime if lifetime > 0.0 and math.isfinite(lifetime) else None
