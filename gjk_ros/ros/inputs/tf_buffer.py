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

The rules are read from tf2's ``BufferCore`` and caches (ros2/geometry2: tf2/src/buffer_core.cpp,
cache.cpp, static_cache.cpp); docs/semantics.md lists them beside tf2's own behaviour, and
test/test_tf2_semantics.py checks them case by case.

What it keeps, one history per child frame (tf2 keeps one cache per frame):

- ``/tf``: samples sorted by ``header.stamp`` over the last ``cache_time`` seconds (tf2's
  ``TimeCache``, default 10 s), *each with its own parent* (``TransformStorage::frame_id_``): a
  re-parented frame keeps its history, and a late message that still names the old parent
  lands in its place instead of replacing what came after it.
- ``/tf_static``: one sample valid at every time (``StaticCache``). A frame that moves between
  ``/tf`` and ``/tf_static`` starts a new history (``BufferCore::setTransformImpl``).

Insertion (``TimeCache::insertData``): the history is pruned to ``cache_time`` behind its newest
stamp first; a sample older than that is refused (tf2's TF_OLD_DATA); an exact duplicate of a
sample stored at its stamp is ignored; a distinct sample at a stored stamp takes effect (tf2
keeps both and uses the one inserted last).

Values (``BufferCore::setTransform``): tf2 turns the quaternion into a rotation matrix scaled by
``2 / |q|^2`` and reads a unit quaternion back, so every finite quaternion is normalised; its
``QUATERNION_NORMALIZATION_TOLERANCE`` test then runs on that unit quaternion and only ever
fails on NaN. This buffer normalises exactly where that scale is a finite normal number.

Lookups (``BufferCore::lookupTransform``):

- ``time_ns == 0`` asks for the *latest common time* (``getLatestCommonTime``): walking up from
  both frames by each frame's newest parent, the oldest of the newest non-zero stamps up to
  their common parent (static frames, stamped 0, do not constrain it). Every edge is then
  evaluated at that time; when nothing constrains it, at each edge's newest sample.
- At a time (``TimeCache::getData``): the sample at that stamp, or translation lerp and
  shortest-arc slerp between the two around it when they name the same parent; across a change
  of parent the older sample holds (tf2 does not interpolate there). Outside an edge's data the
  lookup fails with EXTRAPOLATION, never clamps.
- The walk (``walkToTopParent``) is iterative: from the source up to the target or its top, then
  from the target up to the source's walk. Each walk may take ``MAX_GRAPH_DEPTH`` edges, the
  target's counted up to the top of the source's walk as tf2 counts it; beyond that tf2 calls
  the tree invalid ("contains a loop"), and so does this buffer (INVALID).
- A frame looked up to itself is the identity, stamped at time 0 with that frame's newest stamp.

Where it departs from tf2, on purpose (a distance monitor must fail safe):

- A transform tf2 would *ignore* (NaN), or accept although it is no rigid motion (an infinite or
  beyond ``MAX_COORDINATE`` translation, a quaternion whose squared norm is zero, subnormal or
  overflows, which tf2 drops as NaN or reads as the identity), is stored as an INVALID sample,
  so that lookups through it say INVALID instead of silently using older data. At a stamp that
  already has samples it takes effect when it comes, until the next valid sample there, after
  which the sample tf2 would hold is in effect again.
- A leading '/' is stripped from frame ids in lookups too (tf2 refuses it there).
- The composed result is checked again: finite inputs can overflow while composing.
- Stamps outside what a ``builtin_interfaces/Time`` can carry (``timekeeping.stamp_problem``)
  are refused: every stamp that enters the node follows that one rule.

Freshness (``now_ns`` and ``timeout_ns`` given): a chain with dynamic edges whose latest
common time is older than ``now - timeout`` is STALE. Age is measured from the data's stamp on
the node's clock, as Nav2's collision monitor measures ``source_timeout``. After a jump back in
time the owner calls ``clear_dynamic`` (tf2_ros's buffer does the same).
"""

import bisect
from dataclasses import dataclass
import enum
import math
import sys

from gjk_ros.core.rigid import marker_quaternion, MAX_COORDINATE, pose_matrix
from gjk_ros.ros.inputs.timekeeping import MAX_STAMP_NS, stamp_problem
import numpy

__all__ = ['check_batch', 'marker_pose_matrix', 'MAX_COORDINATE', 'MAX_GRAPH_DEPTH', 'TfBuffer',
           'TfLookup', 'TfStatus']

# tf2's BufferCore::MAX_GRAPH_DEPTH: the most edges one walk of a lookup may take.
MAX_GRAPH_DEPTH = 1000
# tf2 keeps every distinct sample sent for one stamp; this buffer keeps the one in effect and
# remembers the last this many accepted there, so that their duplicates are still ignored.
MAX_EARLIER_AT_STAMP = 16
# The most (target, time, now, timeout) queries whose lookup_many answers are kept at once.
_KEPT_QUERIES = 16
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
    Validate (x, y, z, qx, qy, qz, qw) as a rigid motion, normalising as tf2 does.

    tf2 makes the rotation matrix with the scale ``2 / |q|^2`` (``Matrix3x3::setRotation``): the
    quaternion is normalised wherever that scale is a finite normal number, which is where this
    accepts it. A zero or subnormal squared norm (tf2: NaN, ignored) and an overflowing one
    (tf2: the identity rotation) are refused. Every test is written so that NaN fails it.

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
    quaternion = values[3:]
    squared = sum(v * v for v in quaternion)
    if not sys.float_info.min <= squared <= sys.float_info.max:
        if not all(math.isfinite(v) for v in quaternion):
            return None, 'non-finite quaternion'
        return None, ('quaternion squared norm %.3g cannot be normalised (tf2 would %s it)'
                      % (squared, 'ignore' if squared < 1.0 else 'read the identity from'))
    norm = math.sqrt(squared)
    return (x, y, z) + tuple(v / norm for v in quaternion), ''


def check_batch(values):
    """
    ``check_values`` of every row of an (n, 7) array, computed for all rows at once.

    The same floating-point operations in the same order (the squared norm summed from qx to
    qw, then one square root and four divisions), so each sample is bitwise what
    ``check_values`` gives; a refused row gets its reason from ``check_values`` itself.

    Returns
    -------
    tuple of (list, list)
        Per row, the values with a unit quaternion as a tuple (None when refused), and the
        reason ('' when accepted).

    """
    values = numpy.asarray(values, dtype=numpy.float64).reshape(-1, 7)
    quaternions = values[:, 3:]
    with numpy.errstate(all='ignore'):
        squared = quaternions[:, 0] * quaternions[:, 0]
        for column in range(1, 4):
            squared = squared + quaternions[:, column] * quaternions[:, column]
        good = ((numpy.abs(values[:, :3]) <= MAX_COORDINATE).all(axis=1) &
                (squared >= sys.float_info.min) & (squared <= sys.float_info.max))
        clean = values.copy()
        clean[:, 3:] /= numpy.sqrt(squared)[:, None]
    samples = [tuple(row) for row in clean.tolist()]
    reasons = [''] * len(samples)
    for index in numpy.flatnonzero(~good).tolist():
        samples[index], reasons[index] = check_values(tuple(values[index].tolist()))
    return samples, reasons


def _frame_pair(parent, child):
    """(parent, child) without a leading '/', or None when tf2 would reject the pair."""
    if parent[:1] == '/' or child[:1] == '/':
        parent, child = parent.lstrip('/'), child.lstrip('/')
    if not parent or not child or parent == child:
        return None
    return parent, child


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


def _identity(parent, sample, reason):
    """Return what makes two samples at one stamp the same (TransformStorage::operator==)."""
    return (parent, sample) if sample is not None else (parent, None, reason)


class _Edge:
    """The history of one child frame: its samples, each with its parent (tf2's caches)."""

    __slots__ = ('static', 'stamps', 'parents', 'samples', 'reasons', 'first', 'earlier',
                 '_matrices')

    def __init__(self, static):
        self.static = static
        self.stamps = []        # sorted, ns
        self.parents = []       # the parent each sample names
        self.samples = []       # values with a unit quaternion, or None if invalid
        self.reasons = []       # why a sample is invalid ('' when valid)
        self.first = 0          # samples before this index are pruned (deleted in bulk later)
        self.earlier = {}       # stamp -> identities of the valid samples accepted there
        self._matrices = {}     # index of a sample -> its matrix

    def latest(self):
        """(stamp, parent) of the newest sample; stamp 0 when static (getLatestTimeAndParent)."""
        return (0 if self.static else self.stamps[-1]), self.parents[-1]

    def insert(self, stamp, parent, sample, reason, cache_ns):
        """Insert as tf2's caches do; returns 'stored', 'replaced', 'duplicate' or 'old'."""
        self._matrices = {}
        stamps = self.stamps
        if self.static:
            self.stamps, self.parents, self.samples, self.reasons = \
                [stamp], [parent], [sample], [reason]
            self.first = 0
            return 'stored'
        if stamps:
            limit = stamps[-1] - cache_ns
            if stamps[self.first] < limit:
                self._prune(limit)  # before inserting, as TimeCache::insertData
            if stamp < limit:
                return 'old'
        if not stamps or stamp > stamps[-1]:
            # The usual case: newer data, appended.
            stamps.append(stamp)
            self.parents.append(parent)
            self.samples.append(sample)
            self.reasons.append(reason)
            return 'stored'
        index = bisect.bisect_left(stamps, stamp, self.first)
        if stamps[index] == stamp:
            return self._replace(index, parent, sample, reason)
        stamps.insert(index, stamp)
        self.parents.insert(index, parent)
        self.samples.insert(index, sample)
        self.reasons.insert(index, reason)
        return 'stored'

    def append_newer(self, stamp, parent, sample, cache_ns):
        """``insert`` of a valid sample newer than every stored one, on a dynamic edge."""
        if self._matrices:
            self._matrices = {}
        stamps = self.stamps
        limit = stamps[-1] - cache_ns
        if stamps[self.first] < limit:
            self._prune(limit)  # before inserting, as TimeCache::insertData
        stamps.append(stamp)
        self.parents.append(parent)
        self.samples.append(sample)
        self.reasons.append('')

    def _replace(self, index, parent, sample, reason):
        """
        Take another sample at a stored stamp.

        Valid samples follow tf2: one equal to a sample accepted at that stamp is ignored, and
        the last one accepted is in effect. An invalid sample, which tf2 would not store, takes
        effect when it comes (the node's fail-safe rule) until the next valid one, after which
        what tf2 holds is in effect again.
        """
        stamp = self.stamps[index]
        new = _identity(parent, sample, reason)
        current = _identity(self.parents[index], self.samples[index], self.reasons[index])
        accepted = self.earlier.get(stamp)
        if accepted is None:  # the valid samples accepted at this stamp, tf2's last
            accepted = [current] if self.samples[index] is not None else []
        if sample is not None and new not in accepted:
            accepted = (accepted + [new])[-MAX_EARLIER_AT_STAMP:]
        self.earlier[stamp] = accepted
        effective = new if sample is None else accepted[-1]
        if effective == current:
            return 'duplicate'
        if sample is None:
            self.parents[index], self.samples[index], self.reasons[index] = parent, None, reason
        else:
            self.parents[index], self.samples[index] = effective
            self.reasons[index] = ''
        return 'replaced'

    def _prune(self, limit):
        # Samples before ``first`` are gone for every lookup; deleting them from the lists
        # costs the whole history, so it is done once half the lists are pruned (amortised
        # O(1) per sample: at 1 kHz a 10 s history is 10,000 samples per frame).
        cut = self.first = bisect.bisect_left(self.stamps, limit, self.first)
        if cut > len(self.stamps) // 2:
            del self.stamps[:cut], self.parents[:cut], self.samples[:cut], self.reasons[:cut]
            self.first = 0
            self._matrices = {}
        if self.earlier:
            self.earlier = {stamp: seen for stamp, seen in self.earlier.items()
                            if stamp >= limit}

    def at(self, stamp):
        """
        Return the transform in effect at ``stamp`` and its parent (getData, getParent).

        ``stamp`` 0 (a latest common time nothing constrained) and static edges give the newest
        sample, as tf2's ``findClosest`` and ``StaticCache`` do.

        Returns
        -------
        tuple of (matrix or None, str or None, str, bool)
            The matrix and the parent; or None, the parent (None when there is no data at that
            time), the reason and whether the time is before the data.

        """
        stamps = self.stamps
        if self.static or stamp == 0 or stamp == stamps[-1]:
            return self._sample(len(stamps) - 1)
        index = bisect.bisect_left(stamps, stamp, self.first)
        if index < len(stamps) and stamps[index] == stamp:
            return self._sample(index)
        if index == self.first or index == len(stamps):
            return None, None, _NO_DATA, index == self.first
        older = index - 1
        parent = self.parents[older]
        if self.parents[index] != parent:
            return self._sample(older)  # across a re-parent the older sample holds
        before, after = self.samples[older], self.samples[index]
        if before is None or after is None:
            reason = self.reasons[older] or self.reasons[index]
            return None, parent, 'invalid transform (%s)' % reason, False
        ratio = (stamp - stamps[older]) / (stamps[index] - stamps[older])
        translation = [a + ratio * (b - a) for a, b in zip(before[:3], after[:3])]
        return (pose_matrix(translation, _slerp(before[3:], after[3:], ratio)), parent, '',
                False)

    def _sample(self, index):
        if index not in self._matrices:
            sample = self.samples[index]
            self._matrices[index] = None if sample is None else pose_matrix(sample[:3], sample[3:])
        matrix = self._matrices[index]
        if matrix is None:
            return None, self.parents[index], 'invalid transform (%s)' % self.reasons[index], \
                False
        return matrix, self.parents[index], '', False


# Why a walk stopped early: (status, reason, past).
_LOOP = (TfStatus.INVALID, 'the TF tree is invalid: a loop, or more than %d edges in one walk '
         '(tf2 MAX_GRAPH_DEPTH)' % MAX_GRAPH_DEPTH, False)


class TfBuffer:
    """
    Time-sorted transforms of a TF tree (see the module docstring).

    Parameters
    ----------
    cache_time_s : float
        Seconds of history kept per dynamic edge (tf2's default is 10 s).

    """

    def __init__(self, cache_time_s=10.0):
        self._cache_ns = int(cache_time_s * 1e9)
        self._edges = {}
        # lookup_many's answers and shared work per (target, time, now, timeout) while nothing
        # is stored: a cycle asks for the same frames' latest transforms several times (the
        # poses, each cloud source's link pieces), each cloud for its links' at its stamp, in
        # turn; at most _KEPT_QUERIES of them.
        self._version = 0
        self._kept, self._kept_version = {}, self._version

    def frame_count(self):
        """Return the number of frames named as a child or a parent."""
        names = set(self._edges)
        names.update(edge.parents[-1] for edge in self._edges.values())
        return len(names)

    def set_cache_time(self, cache_time_s):
        """Change how much history is kept (applies from the next insert)."""
        self._cache_ns = int(cache_time_s * 1e9)

    def insert(self, parent, child, stamp_ns, values, static):
        """
        Store one transform T(parent <- child).

        Returns
        -------
        str
            'stored', 'replaced' (a distinct sample at a stored stamp), 'duplicate' (ignored),
            'old' (older than the edge's history: dropped), 'invalid' (stored as an invalid
            sample), 'rejected' (empty frame ids or parent == child) or 'bad stamp' (outside
            what a header can carry: dropped).

        """
        if stamp_problem(stamp_ns) is not None:
            return 'bad stamp' if _frame_pair(parent, child) else 'rejected'
        sample, reason = check_values(values)
        return self._insert(parent, child, stamp_ns, sample, reason, static)

    def _insert(self, parent, child, stamp_ns, sample, reason, static):
        """``insert`` after the values were checked (and the stamp, by the caller)."""
        names = _frame_pair(parent, child)
        if names is None:
            return 'rejected'
        parent, child = names
        self._version += 1
        edge = self._edges.get(child)
        if edge is None or edge.static != static:
            edge = self._edges[child] = _Edge(static)
        outcome = edge.insert(stamp_ns, parent, sample, reason, self._cache_ns)
        return 'invalid' if sample is None and outcome in ('stored', 'replaced') else outcome

    def insert_message(self, batch, static):
        """
        Insert the transforms of one message (a ``tf_messages.TfBatch``), in its order.

        The values and stamps are checked for the whole batch at once (``check_batch``, the
        same rules as ``check_values``); only the histories are updated one by one.

        Returns
        -------
        list of (str, str, str)
            (parent, child, why) of each transform refused as a whole ('rejected' or 'bad
            stamp'); empty in the usual case.

        """
        samples, reasons = check_batch(batch.values)
        self._version += 1
        stamps = batch.stamps
        stamp_ok = ((stamps >= 0) & (stamps <= MAX_STAMP_NS)).tolist()
        insert, refused, edges, cache_ns = self._insert, [], self._edges, self._cache_ns
        for parent, child, stamp, good, sample, reason in zip(
                batch.parents, batch.children, stamps.tolist(), stamp_ok, samples, reasons):
            edge = edges.get(child)
            # The usual case, inlined (Edge.insert's append): a valid sample newer than its
            # known dynamic edge's history, under a parent name that needs no cleaning.
            if good and edge is not None and not static and not edge.static and \
                    sample is not None and parent and parent[0] != '/' and parent != child \
                    and stamp > edge.stamps[-1]:
                edge.append_newer(stamp, parent, sample, cache_ns)
                continue
            if good:
                outcome = insert(parent, child, stamp, sample, reason, static)
            else:
                outcome = 'bad stamp' if _frame_pair(parent, child) else 'rejected'
            if outcome == 'rejected':
                refused.append((parent, child, 'empty frame id, or frame_id equal to '
                                'child_frame_id'))
            elif outcome == 'bad stamp':
                refused.append((parent, child, stamp_problem(stamp)))
        return refused

    def clear_dynamic(self):
        """Forget every dynamic transform (after a jump back in time)."""
        self._edges = {child: edge for child, edge in self._edges.items() if edge.static}
        self._version += 1

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

    def lookup_many(self, target, sources, now_ns=None, timeout_ns=None, time_ns=0):
        """
        ``lookup(target, source, time_ns, now_ns, timeout_ns)`` for every source, sharing work.

        The frames of one robot hang off common chains: each edge is evaluated once per time,
        and the walks and products of shared chain parts are made once (a memo kept, with the
        answers, per target, time, now and timeout until a transform is stored).

        Returns
        -------
        dict of str to TfLookup

        """
        if self._kept_version != self._version or len(self._kept) >= _KEPT_QUERIES:
            self._kept, self._kept_version = {}, self._version
        key = (target, time_ns, now_ns, timeout_ns)
        if key not in self._kept:
            self._kept[key] = ({}, {})
        memo, answers = self._kept[key]
        for source in sources:
            if source not in answers:
                answers[source] = self._lookup(target, source, time_ns, now_ns, timeout_ns,
                                               memo)
        return {source: answers[source] for source in sources}

    def _lookup(self, target, source, time_ns, now_ns, timeout_ns, memo):
        target, source = target.lstrip('/'), source.lstrip('/')
        if target == source:
            return self._self_lookup(target, time_ns)
        stamp = int(time_ns)
        if not stamp:
            stamp, failure = self._latest_common_time(target, source, memo)
            if failure is not None:
                return self._failed(failure, 0, False)

        def evaluate(frame, edge):
            key = (frame, stamp)
            if key not in memo:
                memo[key] = edge.at(stamp)
            matrix, parent, reason, past = memo[key]
            if matrix is None:
                status = TfStatus.EXTRAPOLATION if reason == _NO_DATA else TfStatus.INVALID
                return None, None, (status, "%s of '%s'" % (reason, frame), past)
            return parent, matrix, None

        walks = memo.setdefault(('walks', target, stamp), {})
        path_source, path_target, top, failure = self._paths(target, source, evaluate, walks)
        if failure is not None:
            dynamic = any(not edge.static for _, edge, _ in path_source + path_target)
            return self._failed(failure, stamp, dynamic)
        product = self._product(path_source, (stamp, top), memo)
        if path_target:
            # T(target <- source) = T(top <- target)^-1 T(top <- source), top the common parent.
            up_target = self._product(path_target, (stamp, top), memo)
            inverse = numpy.eye(4)
            inverse[:3, :3] = up_target[:3, :3].T
            inverse[:3, 3] = -up_target[:3, :3].T @ up_target[:3, 3]
            product = inverse @ product
        return self._grade(product, stamp, path_source + path_target, now_ns, timeout_ns)

    def _self_lookup(self, frame, time_ns):
        """tf2's lookupTransformImpl for target == source: the identity, at the frame's time."""
        stamp = int(time_ns)
        if not stamp and frame in self._edges:
            stamp = self._edges[frame].latest()[0]
        return TfLookup(TfStatus.OK, numpy.eye(4), stamp)

    def _walk(self, frame, stops, evaluate, walks=None):
        """
        Follow parents from ``frame`` until a frame in ``stops``, a root, or a failing edge.

        The loop of tf2's ``walkToTopParent`` and ``getLatestCommonTime``, iterative, so that a
        chain as deep as tf2 allows costs no recursion. ``evaluate(frame, edge)`` gives
        (parent, value, failure), parent None on a failure. ``walks``, when given, holds the
        walks already taken towards the same ``stops`` with the same ``evaluate``: a walk that
        meets one of their frames takes the rest from there.

        Returns
        -------
        tuple of (list of (str, _Edge, object), str, tuple or None)
            The steps (child frame, edge, value), the frame the walk ended at, and why it ended
            early (None when it reached a stop or a root; ``_LOOP`` past MAX_GRAPH_DEPTH).

        """
        steps, edges, end, failure = [], self._edges, frame, None
        while end not in stops:
            if walks is not None and end in walks:
                taken, index, end, failure = walks[end]
                steps += taken[index:]
                break
            edge = edges.get(end)
            if edge is None:
                break
            parent, value, failure = evaluate(end, edge)
            if parent is None:
                break
            steps.append((end, edge, value))
            end = parent
            if len(steps) > MAX_GRAPH_DEPTH:  # a loop gets here too, as in tf2
                break
        if len(steps) > MAX_GRAPH_DEPTH:
            return steps, end, _LOOP  # not kept: a shorter walk from its frames may not be
        if walks is not None:
            for index, (child, _, _) in enumerate(steps):
                walks.setdefault(child, (steps, index, end, failure))
        return steps, end, failure

    def _paths(self, target, source, evaluate, walks=None):
        """
        Return the steps from each frame up to their common parent, as tf2's walks find them.

        Returns
        -------
        tuple of (list, list, str, tuple or None)
            The source's steps and the target's steps up to their common parent (the target's
            are empty when it is an ancestor of the source), that parent, and the failure, if
            any (status, reason, past).

        """
        up_source, top, failure = self._walk(source, {target}, evaluate, walks)
        if failure is _LOOP or (top == target and failure is None):
            return up_source, [], target, failure
        frames = {frame: index for index, (frame, _, _) in enumerate(up_source)}
        frames.setdefault(top, len(up_source))
        up_target, meet, target_failure = self._walk(target, frames, evaluate)
        if meet in frames and target_failure is None:
            # tf2 walks the target up to the top of the source's walk and counts those edges.
            if len(up_target) + len(up_source) - frames[meet] > MAX_GRAPH_DEPTH:
                return up_source, up_target, meet, _LOOP
            return up_source[:frames[meet]], up_target, meet, None
        if target_failure is None:
            target_failure = failure or (TfStatus.MISSING, self._disconnected(target, source),
                                         False)
        return up_source, up_target, None, target_failure

    def _latest_common_time(self, target, source, memo):
        """tf2's getLatestCommonTime: (stamp, None), or (0, failure)."""
        def newest(frame, edge):
            stamp, parent = edge.latest()
            return parent, stamp, None

        walks = memo.setdefault(('walks', target), {})
        up_source, up_target, _, failure = self._paths(target, source, newest, walks)
        if failure is not None:
            return 0, failure
        stamps = [stamp for _, _, stamp in up_source + up_target if stamp]
        return min(stamps, default=0), None

    def _disconnected(self, target, source):
        for frame in (source, target):
            if frame not in self._edges and \
                    all(edge.parents[-1] != frame for edge in self._edges.values()):
                return "unknown frame '%s'" % frame
        return "'%s' and '%s' are not in one TF tree" % (source, target)

    @staticmethod
    def _product(steps, key, memo):
        """
        T(top <- first frame) of a walk's steps, composed from the top down, without recursion.

        Memoised per (frame,) + ``key`` (time, top): frames of one robot share their chains.
        """
        known, product = len(steps), _IDENTITY
        for index, (frame, _, _) in enumerate(steps):
            hit = memo.get((frame,) + key)
            if hit is not None:
                known, product = index, hit
                break
        for index in range(known - 1, -1, -1):
            frame, _, matrix = steps[index]
            product = product @ matrix
            memo[(frame,) + key] = product
        return product

    @staticmethod
    def _failed(failure, stamp, dynamic):
        status, reason, past = failure
        return TfLookup(status, stamp_ns=stamp, dynamic=dynamic, reason=reason, past=past)

    def _grade(self, matrix, stamp, steps, now_ns, timeout_ns):
        # Rotations composed from unit quaternions stay finite; an overflow shows in the
        # translation (NaN fails the comparison too).
        dynamic = [(frame, edge) for frame, edge, _ in steps if not edge.static]
        x, y, z = matrix[0, 3], matrix[1, 3], matrix[2, 3]
        if not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE and
                abs(z) <= MAX_COORDINATE):
            return TfLookup(TfStatus.INVALID, stamp_ns=stamp, dynamic=bool(dynamic),
                            reason='the composed transform overflows (beyond %g m)'
                            % MAX_COORDINATE)
        if dynamic and now_ns is not None and timeout_ns is not None and \
                now_ns - stamp > timeout_ns:
            culprit = min(dynamic, key=lambda step: step[1].stamps[-1])[0]
            return TfLookup(TfStatus.STALE, matrix, stamp, True,
                            "transform of '%s' older than tf_timeout (%.3f s old)"
                            % (culprit, (now_ns - stamp) * 1e-9))
        return TfLookup(TfStatus.OK, matrix, stamp, bool(dynamic))
