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
A tree of the latest transform of every frame, without tf2_ros.

Each frame stores only its latest transform to its parent (what ``/tf`` and ``/tf_static``
last said), with the time it was received. A lookup composes the transforms through the
common ancestor of the two frames and says whether the result can be trusted:

- MISSING: no chain of transforms connects the frames (unknown frame, or a cycle);
- INVALID: a transform on the chain was non-finite or had a zero quaternion;
- STALE: a dynamic transform on the chain was received more than ``timeout`` ago;
- OK otherwise. Static transforms never go stale.

Age is measured from the receive time on the node's clock, not from ``header.stamp``: a
publisher whose clock is offset from ours would otherwise look stale (or fresh) forever.
The newest ``header.stamp`` on the chain is reported too, to stamp the output.
"""

from dataclasses import dataclass
import enum
import math

import numpy

__all__ = ['FrameLookup', 'FrameStatus', 'FrameTree', 'transform_to_matrix', 'transform_values']

# Longest chain followed before giving up: a TF tree deeper than this is taken for a cycle.
_MAX_DEPTH = 1000


class FrameStatus(enum.IntEnum):
    """Outcome of a frame lookup; larger values are worse."""

    OK = 0
    STALE = 1
    MISSING = 2
    INVALID = 3


@dataclass(frozen=True)
class FrameLookup:
    """
    Result of ``FrameTree.lookup``.

    Attributes
    ----------
    status : FrameStatus
    matrix : (4, 4) float or None
        T(target <- source); None unless ``status`` is OK or STALE.
    age : float
        Seconds since the oldest dynamic transform on the chain was received (0 if none).
    stamp : int
        Newest ``header.stamp`` on the chain, nanoseconds (0 if the chain is empty).
    culprit : str
        The frame whose transform made the lookup fail ('' when OK).

    """

    status: FrameStatus
    matrix: object
    age: float
    stamp: float
    culprit: str = ''


class _Edge:
    """
    Latest transform T(parent <- child) of one child frame.

    The message values are kept as received and turned into a matrix on first use, so that
    storing a transform (in a subscription callback) costs next to nothing.
    """

    __slots__ = ('parent', 'values', 'stamp', 'received', 'static', '_matrix')

    def __init__(self, parent, values, stamp, received, static):
        self.parent = parent
        self.values = values
        self.stamp = stamp
        self.received = received
        self.static = static
        self._matrix = False

    @property
    def matrix(self):
        """(4, 4) float, or None if the values are not a valid rigid transform."""
        if self._matrix is False:
            self._matrix = _values_to_matrix(self.values)
        return self._matrix


def transform_to_matrix(translation, rotation):
    """
    Convert a geometry_msgs Transform's parts to a homogeneous matrix.

    Parameters
    ----------
    translation : object with x, y, z
        The translation, metres.
    rotation : object with x, y, z, w
        The quaternion; normalised here, need not be exactly unit.

    Returns
    -------
    (4, 4) float or None
        None if a value is non-finite or the quaternion is zero.

    """
    return _values_to_matrix(transform_values(translation, rotation))


def transform_values(translation, rotation):
    """Return the 7 numbers (x, y, z, qx, qy, qz, qw) of a geometry_msgs Transform."""
    return (translation.x, translation.y, translation.z,
            rotation.x, rotation.y, rotation.z, rotation.w)


def _values_to_matrix(values):
    if not all(math.isfinite(v) for v in values):
        return None
    x, y, z, w = values[3:]
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if norm < 1e-12:
        return None
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    matrix = numpy.eye(4)
    matrix[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    matrix[:3, 3] = values[:3]
    return matrix


def _invert_rigid(matrix):
    """Invert a rigid transform exactly (transpose of the rotation)."""
    inverse = numpy.eye(4)
    rotation_t = matrix[:3, :3].T
    inverse[:3, :3] = rotation_t
    inverse[:3, 3] = -rotation_t @ matrix[:3, 3]
    return inverse


class FrameTree:
    """
    Latest transforms of a TF tree, composed on demand.

    Frame names are stored without a leading '/', as tf2 does.
    """

    def __init__(self):
        self._edges = {}

    def __len__(self):
        """Return the number of frames that have a parent."""
        return len(self._edges)

    @property
    def frames(self):
        """Every frame named as a child or a parent."""
        names = set(self._edges)
        names.update(edge.parent for edge in self._edges.values())
        return names

    def set_transform(self, parent, child, values, stamp, received, static):
        """
        Store the latest transform T(parent <- child).

        Parameters
        ----------
        parent, child : str
            Frame ids (a leading '/' is ignored).
        values : tuple of 7 float
            x, y, z, qx, qy, qz, qw (see ``transform_values``). Non-finite values or a zero
            quaternion make the transform invalid until a valid one arrives.
        stamp : int
            ``header.stamp`` in nanoseconds.
        received : float
            Receive time on the node's clock, seconds.
        static : bool
            From ``/tf_static``: never goes stale.

        Returns
        -------
        bool
            False if the transform was ignored (empty frame id, or child == parent).

        """
        parent, child = parent.lstrip('/'), child.lstrip('/')
        if not parent or not child or parent == child:
            return False
        self._edges[child] = _Edge(parent, tuple(values), stamp, received, static)
        return True

    def clear_dynamic(self):
        """Forget every dynamic transform (e.g. after the clock jumped back)."""
        self._edges = {child: edge for child, edge in self._edges.items() if edge.static}

    def _chain(self, frame):
        """
        Walk from ``frame`` to its root.

        Returns the list of (frame, edge) pairs from ``frame`` upwards, or None on a cycle.
        """
        chain = []
        seen = {frame}
        while frame in self._edges:
            edge = self._edges[frame]
            chain.append((frame, edge))
            frame = edge.parent
            if frame in seen or len(chain) > _MAX_DEPTH:
                return None
            seen.add(frame)
        return chain

    def lookup(self, target, source, now, timeout):
        """
        Compose T(target <- source) from the latest transforms.

        Parameters
        ----------
        target, source : str
            Frame ids; a frame is always connected to itself, even if never seen.
        now : float
            Current time on the node's clock, seconds.
        timeout : float
            Dynamic transforms received longer ago than this make the result STALE.

        Returns
        -------
        FrameLookup

        """
        target, source = target.lstrip('/'), source.lstrip('/')
        if target == source:
            return FrameLookup(FrameStatus.OK, numpy.eye(4), 0.0, 0)
        up_source, up_target = self._chain(source), self._chain(target)
        if up_source is None or up_target is None:
            culprit = source if up_source is None else target
            return FrameLookup(FrameStatus.MISSING, None, math.inf, 0, culprit)
        path_source, path_target = _split_at_common_ancestor(source, up_source,
                                                             target, up_target)
        if path_source is None:
            known = self.frames
            culprit = target if source in known and target not in known else source
            return FrameLookup(FrameStatus.MISSING, None, math.inf, 0, culprit)
        return self._compose(path_source, path_target, now, timeout)

    def _compose(self, path_source, path_target, now, timeout):
        """Multiply the chains below the common ancestor and grade the result."""
        age, stamp = 0.0, 0
        stale_frame = ''
        for frame, edge in path_source + path_target:
            if edge.matrix is None:
                return FrameLookup(FrameStatus.INVALID, None, 0.0, edge.stamp, frame)
            stamp = max(stamp, edge.stamp)
            if not edge.static and now - edge.received > age:
                age = now - edge.received
                stale_frame = frame
        to_ancestor_from_source = _product(path_source)
        to_ancestor_from_target = _product(path_target)
        matrix = _invert_rigid(to_ancestor_from_target) @ to_ancestor_from_source
        if age > timeout:
            return FrameLookup(FrameStatus.STALE, matrix, age, stamp, stale_frame)
        return FrameLookup(FrameStatus.OK, matrix, age, stamp)


def _split_at_common_ancestor(source, up_source, target, up_target):
    """
    Cut both upward chains at their lowest common ancestor.

    Returns the (frame, edge) chains from each frame up to (not including) the ancestor, or
    (None, None) if the frames are in different trees.
    """
    source_depth = {source: 0}
    for depth, (_, edge) in enumerate(up_source, start=1):
        source_depth[edge.parent] = depth
    if target in source_depth:
        return up_source[:source_depth[target]], []
    for depth, (_, edge) in enumerate(up_target, start=1):
        if edge.parent in source_depth:
            return up_source[:source_depth[edge.parent]], up_target[:depth]
    return None, None


def _product(path):
    """T(ancestor <- frame) for a chain listed from the frame upwards."""
    matrix = numpy.eye(4)
    for _, edge in reversed(path):
        matrix = matrix @ edge.matrix
    return matrix
