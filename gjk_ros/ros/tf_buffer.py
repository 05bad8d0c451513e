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
A TF buffer with tf2's semantics, without tf2_ros (numpy only, no rclpy).

What it keeps: for every child frame, the transforms to its parent sorted by ``header.stamp``
over the last ``cache_time`` seconds (tf2's TimeCache, default 10 s); a static transform
(``/tf_static``) is one value valid at every time (tf2's StaticCache).

How it answers, as tf2's ``BufferCore::lookupTransform``:

- ``time_ns == 0`` asks for the *latest common time* of the chain between the two frames:
  the oldest of the newest stamps of its dynamic edges (static edges do not constrain it).
  Every edge is then evaluated at that time, so the result is one consistent instant.
- Any other time interpolates every dynamic edge at that time (translation linearly, rotation
  by slerp, as tf2 does) and fails with EXTRAPOLATION when it lies outside an edge's data.

Where it departs from tf2, on purpose (a distance monitor must fail safe):

- A transform tf2 would *ignore* (non-finite values, a quaternion whose squared norm is off
  by more than tf2's ``QUATERNION_NORMALIZATION_TOLERANCE`` of 1e-2) is stored as an INVALID
  sample, so that lookups through it say INVALID instead of silently using older data.
  Quaternions within the tolerance are normalised, as tf2's math does. A translation beyond
  ``MAX_COORDINATE`` is INVALID too: such numbers are finite but not sane, and the geometry
  core's exactness (and float64's 1e-16 relative precision) means nothing there.
- The norm test is overflow-safe: components around 1e154 make the squared norm overflow to
  inf in a naive test, which tf2 would catch but a normalising reader would turn into the
  identity rotation.
- The composed result is checked again: finite inputs can overflow while composing.

Freshness (``now_ns`` and ``timeout_ns`` given): a chain with dynamic edges whose latest
common time is older than ``now - timeout`` is STALE. Age is measured from the data's stamp on
the node's clock, as Nav2's collision monitor measures ``source_timeout``.

Out-of-order data is inserted in its place and never overwrites newer data; data older than
the newest stamp of its edge minus ``cache_time`` is dropped (tf2's TF_OLD_DATA). After a jump
back in time the owner calls ``clear_dynamic`` (tf2_ros's buffer does the same).
"""

import bisect
from dataclasses import dataclass
import enum
import math
import struct

from gjk_ros.core.rigid import (marker_quaternion, MAX_COORDINATE, pose_matrix, tf2_quaternion,
                                TF2_QUATERNION_TOLERANCE)
import numpy

__all__ = ['decode_tf_message', 'marker_pose_matrix', 'MAX_COORDINATE', 'TfBuffer', 'TfLookup',
           'TfStatus']

# tf2's QUATERNION_NORMALIZATION_TOLERANCE: |q.q - 1| above it is rejected (gjk_ros.core.rigid).
QUATERNION_TOLERANCE = TF2_QUATERNION_TOLERANCE
# A chain deeper than this is taken for a cycle (tf2's MAX_GRAPH_DEPTH is 1000).
MAX_DEPTH = 1000
_NS = 1_000_000_000
_NO_DATA = 'no data at that time'
_IDENTITY = numpy.eye(4)
_IDENTITY.flags.writeable = False


class TfStatus(enum.IntEnum):
    """Outcome of a lookup; larger is worse."""

    OK = 0
    STALE = 1
    EXTRAPOLATION = 2
    MISSING = 3
    INVALID = 4


@dataclass(frozen=True)
class TfLookup:
    """
    Result of ``TfBuffer.lookup``.

    Attributes
    ----------
    status : TfStatus
    matrix : (4, 4) float or None
        T(target <- source); set when OK or STALE.
    stamp_ns : int
        The time the chain was evaluated at (its latest common time for ``time_ns == 0``).
    dynamic : bool
        Whether the chain has a dynamic edge (a static-only chain is valid at every time).
    reason : str
        Why it is not OK, naming the frame responsible ('' when OK).
    past : bool
        For EXTRAPOLATION: the time was before the data (it will never become available).

    """

    status: TfStatus
    matrix: object = None
    stamp_ns: int = 0
    dynamic: bool = False
    reason: str = ''
    past: bool = False


def marker_pose_matrix(pose):
    """(4, 4) matrix of a marker pose (x, y, z, qx, qy, qz, qw) that ``check_pose`` passed."""
    quaternion, _ = marker_quaternion(pose[3:])
    return pose_matrix(pose[:3], quaternion)


def check_values(values):
    """
    Validate (x, y, z, qx, qy, qz, qw) as tf2 would, failing safe.

    The tests are written so that NaN fails them (every comparison with NaN is false) and so
    that an overflowing squared norm (components near 1e154 give inf) fails the tolerance
    test instead of being normalised into an identity rotation.

    Returns
    -------
    tuple of (tuple or None, str)
        The values with a unit quaternion, or None and the reason.

    """
    x, y, z = values[:3]
    if not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE and
            abs(z) <= MAX_COORDINATE):
        if all(math.isfinite(v) for v in values[:3]):
            return None, 'translation beyond %g m' % MAX_COORDINATE
        return None, 'non-finite translation'
    quaternion, reason = tf2_quaternion(values[3:])
    if quaternion is None:
        return None, reason
    return (x, y, z) + quaternion, ''


def _slerp(q0, q1, ratio):
    """Spherical interpolation of unit quaternions, shortest arc (tf2's Quaternion::slerp)."""
    dot = sum(a * b for a, b in zip(q0, q1))
    if dot < 0.0:
        q1, dot = [-v for v in q1], -dot
    if dot > 0.9995:
        blended = [a + ratio * (b - a) for a, b in zip(q0, q1)]
    else:
        theta = math.acos(min(dot, 1.0))
        sin_theta = math.sin(theta)
        w0 = math.sin((1.0 - ratio) * theta) / sin_theta
        w1 = math.sin(ratio * theta) / sin_theta
        blended = [w0 * a + w1 * b for a, b in zip(q0, q1)]
    norm = math.sqrt(sum(v * v for v in blended))
    return [v / norm for v in blended]


class _Edge:
    """The history of one child frame's transform to its parent."""

    __slots__ = ('parent', 'static', 'stamps', 'samples', 'reasons', '_matrices')

    def __init__(self, parent, static):
        self.parent = parent
        self.static = static
        self.stamps = []        # sorted, ns
        self.samples = []       # values with a unit quaternion, or None if invalid
        self.reasons = []       # why a sample is invalid ('' when valid)
        self._matrices = {}     # index of a sample -> its matrix (cache of the newest)

    @property
    def newest(self):
        return self.stamps[-1]

    def insert(self, stamp, sample, reason, cache_ns):
        """Insert in stamp order; returns 'stored', 'replaced' or 'old'."""
        if self.static:
            self.stamps, self.samples, self.reasons = [stamp], [sample], [reason]
            self._matrices = {}
            return 'stored'
        self._matrices = {}
        if not self.stamps or stamp > self.stamps[-1]:
            # The usual case: newer data, appended; trimmed from the front when due.
            self.stamps.append(stamp)
            self.samples.append(sample)
            self.reasons.append(reason)
            if self.stamps[0] < stamp - cache_ns:
                self._trim(cache_ns)
            return 'stored'
        if stamp < self.stamps[-1] - cache_ns:
            return 'old'
        index = bisect.bisect_left(self.stamps, stamp)
        if index < len(self.stamps) and self.stamps[index] == stamp:
            self.samples[index], self.reasons[index] = sample, reason
            return 'replaced'
        self.stamps.insert(index, stamp)
        self.samples.insert(index, sample)
        self.reasons.insert(index, reason)
        self._trim(cache_ns)
        return 'stored'

    def _trim(self, cache_ns):
        cut = bisect.bisect_left(self.stamps, self.stamps[-1] - cache_ns)
        if cut > 0:
            del self.stamps[:cut], self.samples[:cut], self.reasons[:cut]

    def at(self, stamp):
        """
        Evaluate at ``stamp`` (ignored for static edges).

        Returns
        -------
        tuple of (matrix or None, str, bool)
            The matrix, or None with the reason and whether the time is before the data.

        """
        if self.static or stamp == self.stamps[-1]:
            return self._matrix(len(self.stamps) - 1)
        index = bisect.bisect_left(self.stamps, stamp)
        if index < len(self.stamps) and self.stamps[index] == stamp:
            return self._matrix(index)
        if index == 0 or index == len(self.stamps):
            return None, _NO_DATA, index == 0
        before, after = self.samples[index - 1], self.samples[index]
        if before is None or after is None:
            reason = self.reasons[index - 1] or self.reasons[index]
            return None, 'invalid transform (%s)' % reason, False
        ratio = (stamp - self.stamps[index - 1]) / (self.stamps[index] - self.stamps[index - 1])
        translation = [a + ratio * (b - a) for a, b in zip(before[:3], after[:3])]
        return pose_matrix(translation, _slerp(before[3:], after[3:], ratio)), '', False

    def _matrix(self, index):
        if index not in self._matrices:
            sample = self.samples[index]
            self._matrices[index] = None if sample is None else pose_matrix(sample[:3], sample[3:])
        matrix = self._matrices[index]
        if matrix is None:
            return None, 'invalid transform (%s)' % self.reasons[index], False
        return matrix, '', False


class TfBuffer:
    """
    Time-sorted transforms of a TF tree (see the module docstring).

    Parameters
    ----------
    cache_time_s : float
        Seconds of history kept per dynamic edge (tf2's default is 10 s).

    """

    def __init__(self, cache_time_s=10.0):
        self._cache_ns = int(cache_time_s * _NS)
        self._edges = {}

    def frame_count(self):
        """Return the number of frames named as a child or a parent."""
        names = set(self._edges)
        names.update(edge.parent for edge in self._edges.values())
        return len(names)

    def set_cache_time(self, cache_time_s):
        """Change how much history is kept (applies from the next insert)."""
        self._cache_ns = int(cache_time_s * _NS)

    def insert(self, parent, child, stamp_ns, values, static):
        """
        Store one transform T(parent <- child).

        Returns
        -------
        str
            'stored', 'replaced', 'old' (dropped: older than the edge's history), 'invalid'
            (stored as an invalid sample) or 'rejected' (empty frame ids or parent == child).

        """
        if parent[:1] == '/' or child[:1] == '/':
            parent, child = parent.lstrip('/'), child.lstrip('/')
        if not parent or not child or parent == child:
            return 'rejected'
        sample, reason = check_values(values)
        edge = self._edges.get(child)
        if edge is None or edge.parent != parent or edge.static != static:
            # A frame that changes parent (or static-ness) starts a new history, as tf2's
            # cache does when a frame is re-parented.
            edge = self._edges[child] = _Edge(parent, static)
        outcome = edge.insert(stamp_ns, sample, reason, self._cache_ns)
        return 'invalid' if sample is None and outcome != 'old' else outcome

    def insert_message(self, entries, static):
        """Insert decoded transforms (see ``decode_tf_message``); returns the outcomes."""
        insert = self.insert
        return [insert(parent, child, stamp, values, static)
                for parent, child, stamp, values in entries]

    def clear_dynamic(self):
        """Forget every dynamic transform (after a jump back in time)."""
        self._edges = {child: edge for child, edge in self._edges.items() if edge.static}

    def _chain(self, frame):
        """(frame, edge) from ``frame`` up to its root, or None on a cycle."""
        chain, seen = [], {frame}
        while frame in self._edges:
            edge = self._edges[frame]
            chain.append((frame, edge))
            frame = edge.parent
            if frame in seen or len(chain) > MAX_DEPTH:
                return None
            seen.add(frame)
        return chain

    def lookup(self, target, source, time_ns=0, now_ns=None, timeout_ns=None):
        """
        Compose T(target <- source) as tf2's lookupTransform does (module docstring).

        Parameters
        ----------
        target, source : str
            Frame ids (a leading '/' is ignored); a frame is connected to itself.
        time_ns : int
            0 for the latest common time of the chain, else the time to evaluate at.
        now_ns, timeout_ns : int, optional
            With both, a chain with dynamic edges older than ``now - timeout`` is STALE.

        Returns
        -------
        TfLookup

        """
        return self._lookup(target, source, time_ns, now_ns, timeout_ns, {})

    def lookup_many(self, target, sources, now_ns=None, timeout_ns=None):
        """
        ``lookup(target, source, 0, now_ns, timeout_ns)`` for every source, sharing work.

        The frames of one robot hang off common chains: the products of shared chain parts at
        the same time are computed once (a memo for this call only).

        Returns
        -------
        dict of str to TfLookup

        """
        memo = {}
        return {source: self._lookup(target, source, 0, now_ns, timeout_ns, memo)
                for source in sources}

    def _lookup(self, target, source, time_ns, now_ns, timeout_ns, memo):
        target, source = target.lstrip('/'), source.lstrip('/')
        if target == source:
            return TfLookup(TfStatus.OK, numpy.eye(4), int(time_ns))
        path_source, path_target, reason = self._paths(target, source)
        if reason:
            return TfLookup(TfStatus.MISSING, reason=reason)
        dynamic = [edge for _, edge in path_source + path_target if not edge.static]
        stamp = int(time_ns) if time_ns else min((edge.newest for edge in dynamic), default=0)
        products = []
        for path in (path_source, path_target):
            product, status, why, past = self._chain_product(path, stamp, memo)
            if product is None:
                return TfLookup(status, stamp_ns=stamp, dynamic=bool(dynamic), reason=why,
                                past=past)
            products.append(product)
        if not path_target:  # the usual case: the target (fixed_frame) is an ancestor
            return self._grade(products[0], stamp, dynamic, now_ns, timeout_ns)
        up_target = products[1]
        inverse = numpy.eye(4)
        inverse[:3, :3] = up_target[:3, :3].T
        inverse[:3, 3] = -up_target[:3, :3].T @ up_target[:3, 3]
        return self._grade(inverse @ products[0], stamp, dynamic, now_ns, timeout_ns)

    def _chain_product(self, path, stamp, memo):
        """
        T(top of ``path`` <- its first frame) at ``stamp``.

        Returns (matrix or None, status, reason, past), memoised per (frame, length, stamp).
        """
        if not path:
            return _IDENTITY, TfStatus.OK, '', False
        key = (path[0][0], len(path), stamp)
        if key not in memo:
            matrix, why, past = path[0][1].at(stamp)
            if matrix is None:
                status = TfStatus.EXTRAPOLATION if why == _NO_DATA else TfStatus.INVALID
                memo[key] = (None, status, "%s of '%s'" % (why, path[0][0]), past)
            else:
                above = self._chain_product(path[1:], stamp, memo)
                memo[key] = above if above[0] is None else \
                    (above[0] @ matrix, TfStatus.OK, '', False)
        return memo[key]

    def _grade(self, matrix, stamp, dynamic, now_ns, timeout_ns):
        # Rotations composed from unit quaternions stay finite; an overflow shows in the
        # translation (NaN fails the comparison too).
        x, y, z = matrix[0, 3], matrix[1, 3], matrix[2, 3]
        if not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE and
                abs(z) <= MAX_COORDINATE):
            return TfLookup(TfStatus.INVALID, stamp_ns=stamp, dynamic=bool(dynamic),
                            reason='the composed transform overflows (beyond %g m)'
                            % MAX_COORDINATE)
        if dynamic and now_ns is not None and timeout_ns is not None and \
                now_ns - stamp > timeout_ns:
            culprit = min(dynamic, key=lambda edge: edge.newest)
            child = next(child for child, edge in self._edges.items() if edge is culprit)
            return TfLookup(TfStatus.STALE, matrix, stamp, True,
                            "transform of '%s' older than tf_timeout (%.3f s old)"
                            % (child, (now_ns - stamp) / _NS))
        return TfLookup(TfStatus.OK, matrix, stamp, bool(dynamic))

    def _paths(self, target, source):
        """Chains from each frame up to their lowest common ancestor, or a reason."""
        up_source, up_target = self._chain(source), self._chain(target)
        if up_source is None or up_target is None:
            return None, None, "a cycle in the TF tree above '%s'" % (
                source if up_source is None else target)
        depth = {source: 0}
        for index, (_, edge) in enumerate(up_source, start=1):
            depth[edge.parent] = index
        if target in depth:
            return up_source[:depth[target]], [], ''
        for index, (_, edge) in enumerate(up_target, start=1):
            if edge.parent in depth:
                return up_source[:depth[edge.parent]], up_target[:index], ''
        known = set(self._edges) | {edge.parent for edge in self._edges.values()}
        unknown = [frame for frame in (source, target) if frame not in known]
        if unknown:
            return None, None, "unknown frame '%s'" % unknown[0]
        return None, None, "'%s' and '%s' are not in one TF tree" % (source, target)


# -- raw /tf messages ------------------------------------------------------------------------

_HEADER = struct.Struct('<iI')
_DOUBLES = struct.Struct('<7d')
_BIG_HEADER = struct.Struct('>iI')
_BIG_DOUBLES = struct.Struct('>7d')


def decode_tf_message(data):
    """
    Decode a serialized tf2_msgs/msg/TFMessage (CDR, as a raw subscription receives it).

    rclpy's own conversion of a 50-transform message costs more than a millisecond, which
    made 1 kHz /tf fall behind; this reads only what the buffer needs.

    Returns
    -------
    list of (str, str, int, tuple of 7 float)
        (parent, child, stamp in ns, (x, y, z, qx, qy, qz, qw)) per transform.

    Raises
    ------
    ValueError
        Truncated or malformed data (never more work than the data's size).

    """
    data = bytes(data)
    if len(data) < 8:
        raise ValueError('shorter than a CDR header and a sequence length')
    reader = _CdrReader(data)
    count = reader.uint()
    # Each transform takes at least 80 bytes: a count beyond that is a lie.
    if count * 80 > len(reader.body):
        raise ValueError('sequence of %d transforms in %d bytes' % (count, len(reader.body)))
    entries = []
    for _ in range(count):
        sec, nanosec = reader.fixed(reader.header, 4)
        parent, child = reader.string(), reader.string()
        values = reader.fixed(reader.doubles, 8)
        entries.append((parent, child, sec * _NS + nanosec, values))
    return entries


class _CdrReader:
    """Aligned reads from a CDR body (after its 4-byte encapsulation header), bounds-checked."""

    def __init__(self, data):
        big = data[1] == 0x00
        self.header, self.doubles = (_BIG_HEADER, _BIG_DOUBLES) if big else (_HEADER, _DOUBLES)
        self._uint = '>I' if big else '<I'
        self.body = memoryview(data)[4:]
        self.offset = 0

    def fixed(self, layout, alignment):
        """Read the fields of a ``struct.Struct`` at the next multiple of ``alignment``."""
        self.offset = (self.offset + alignment - 1) & ~(alignment - 1)
        if self.offset + layout.size > len(self.body):
            raise ValueError('truncated')
        values = layout.unpack_from(self.body, self.offset)
        self.offset += layout.size
        return values

    def uint(self):
        """Read a uint32."""
        self.offset = (self.offset + 3) & ~3
        if self.offset + 4 > len(self.body):
            raise ValueError('truncated')
        value = struct.unpack_from(self._uint, self.body, self.offset)[0]
        self.offset += 4
        return value

    def string(self):
        """Read a CDR string: its length (with the terminating NUL), then its bytes."""
        length = self.uint()
        if length == 0 or self.offset + length > len(self.body):
            raise ValueError('bad string length')
        text = bytes(self.body[self.offset:self.offset + length - 1]).decode('utf-8', 'replace')
        self.offset += length
        return text
