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
The bodies the node knows: links and obstacles, their convex pieces and their errors.

A body is assembled from the pieces of several sources, each under a ``PieceKey`` whose
``source`` names the source (``sources.base``): a link has its URDF collision pieces, its
``link_geometry``, its ``~/links`` markers and the planning scene's objects attached to it. The
world writes each source's slot in here (``World.replace``).

A source can also leave an error on a body (geometry that was rejected). A body with an error
is *invalid*: its pairs are published with status INVALID instead of a distance computed from
part of its geometry, since a missing piece could be the closest one. A key can also be
*pending*: its geometry is being built by the ingestion worker; the body's pairs are PENDING
until the result arrives (a missing piece could be the closest one here too).

Every accepted piece carries a ``uid`` that changes only when its shape changes, so that the
pair tracker can keep the simplex caches of pieces that merely moved.
"""

from dataclasses import dataclass, field, replace
import itertools
from types import MappingProxyType

import numpy

__all__ = ['BodyRegistry', 'LINK', 'NameRegistry', 'OBSTACLE', 'TrackedPiece']

LINK = 'link'
OBSTACLE = 'obstacle'


@dataclass(frozen=True)
class TrackedPiece:
    """
    A convex piece as the node tracks it.

    Attributes
    ----------
    uid : int
        Unique per shape: a new uid means the simplex cache of the piece is meaningless.
    piece : gjk_ros.models.CollisionPiece
        ``piece.shape`` is the polytope (where it sits is its source's: ``SourceData``).

    """

    uid: int
    piece: object


@dataclass
class _Body:
    pieces: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    pending: set = field(default_factory=set)

    def is_empty(self):
        return not self.pieces and not self.errors and not self.pending


def same_shape(first, second):
    """Whether two ConvexPolytopes are the same geometry (vertices, radius, kind)."""
    if first is second:
        return True
    return (first.kind == second.kind and first.radius == second.radius
            and first.vertices.shape == second.vertices.shape
            and numpy.array_equal(first.vertices, second.vertices))


class BodyRegistry:
    """
    Links and obstacles, keyed by (kind, name).

    ``version`` increases whenever a piece is added or removed or changes shape (not when it
    only moves), i.e. whenever the pair tracker must rebuild.
    """

    def __init__(self):
        self._bodies = {LINK: {}, OBSTACLE: {}}
        self._uids = itertools.count()
        self.version = 0

    def names(self, kind):
        """Names of the current bodies of one kind, sorted."""
        return sorted(self._bodies[kind])

    def pieces(self, kind, name):
        """Return the TrackedPieces of a body, in key order."""
        return [tracked for _, tracked in self.keyed_pieces(kind, name)]

    def keyed_pieces(self, kind, name):
        """(key, TrackedPiece) of each piece of a body, in key order."""
        body = self._bodies[kind].get(name)
        if body is None:
            return []
        return [(key, body.pieces[key]) for key in sorted(body.pieces, key=repr)]

    def keys(self, kind, source):
        """(name, key) of every piece, error or pending key of the source named ``source``."""
        return [(name, key) for name, body in self._bodies[kind].items()
                for key in _keys_of(body) if key.source == source]

    def is_pending(self, kind, name):
        """Whether some geometry of this body is still being built."""
        body = self._bodies[kind].get(name)
        return body is not None and bool(body.pending)

    def pending_count(self):
        """Return the number of keys waiting for geometry, over every body."""
        return sum(len(body.pending) for kind in (LINK, OBSTACLE)
                   for body in self._bodies[kind].values())

    def set_pending(self, kind, name, key):
        """
        Mark the geometry a source owns under ``key`` as being built.

        The old piece (or error) under the key is dropped: it no longer describes the body.
        """
        body = self._bodies[kind].setdefault(name, _Body())
        if key in body.pending and key not in body.pieces and key not in body.errors:
            return
        body.pieces.pop(key, None)
        body.errors.pop(key, None)
        body.pending.add(key)
        self.version += 1

    def errors(self, kind, name):
        """Return the reasons this body was rejected (empty if it is valid)."""
        body = self._bodies[kind].get(name)
        return [] if body is None else [body.errors[key] for key in sorted(body.errors, key=repr)]

    def all_errors(self):
        """Every (kind, name, reason) currently recorded."""
        return [(kind, name, reason) for kind in (LINK, OBSTACLE)
                for name in self.names(kind) for reason in self.errors(kind, name)]

    def set_piece(self, kind, name, key, piece):
        """
        Add or replace the piece a source owns under ``key``; clears an error under it.

        A replacement with the same shape keeps its uid (and the old shape object), so the
        tracker does not rebuild for a piece that only moved. The layout also reads a piece's
        decomposable mesh (``CollisionPiece.mesh``) and its warnings: a change in those alone
        is a new version too (a hull made decomposable, a hull kept past max_mesh_pieces).
        """
        body = self._bodies[kind].setdefault(name, _Body())
        old = body.pieces.get(key)
        if old is not None and old.piece is piece:
            return
        if old is not None and same_shape(old.piece.shape, piece.shape):
            body.pieces[key] = TrackedPiece(old.uid, replace(piece, shape=old.piece.shape))
            if (old.piece.mesh, old.piece.warnings) != (piece.mesh, piece.warnings):
                self.version += 1
        else:
            body.pieces[key] = TrackedPiece(next(self._uids), piece)
            self.version += 1
        if body.errors.pop(key, None) is not None:
            self.version += 1
        if key in body.pending:
            body.pending.discard(key)
            self.version += 1

    def set_error(self, kind, name, key, reason):
        """Record that the geometry a source owns under ``key`` was rejected."""
        body = self._bodies[kind].setdefault(name, _Body())
        if body.pieces.pop(key, None) is not None or body.errors.get(key) != reason:
            self.version += 1
        if key in body.pending:
            body.pending.discard(key)
            self.version += 1
        body.errors[key] = reason

    def remove(self, kind, name, key):
        """Drop whatever a source owns under ``key``; returns True if something was there."""
        body = self._bodies[kind].get(name)
        if body is None:
            return False
        found = body.pieces.pop(key, None) is not None
        found = body.errors.pop(key, None) is not None or found
        found = key in body.pending or found
        body.pending.discard(key)
        if body.is_empty():
            del self._bodies[kind][name]
        if found:
            self.version += 1
        return found

    def piece_by_key(self, kind, name, key):
        """Return the TrackedPiece under ``key`` of a body, or None."""
        body = self._bodies[kind].get(name)
        return None if body is None else body.pieces.get(key)


class NameRegistry:
    """
    Ids of the bodies that exist now; an id is never reused.

    Each kind counts ids up from 0 (uint32, as the ``~/distances`` fields). A body keeps its id
    while it exists; a body that disappears loses its name entry, and if it comes back it gets
    a new id. So the registry (and ``~/names``) is bounded by the live bodies, however many come
    and go, and an id in an old message never names another body.
    """

    _ID_LIMIT = 2 ** 32

    def __init__(self):
        self._ids = {LINK: {}, OBSTACLE: {}}
        self._next = {LINK: 0, OBSTACLE: 0}
        self._by_id = {LINK: None, OBSTACLE: None}  # names_by_id, until a name comes or goes

    def id_of(self, kind, name):
        """
        Return the id of ``name``, assigning the next one if it is new.

        Returns
        -------
        tuple of (int, bool)
            The id and whether it was just assigned.

        """
        ids = self._ids[kind]
        if name in ids:
            return ids[name], False
        ids[name] = self._take_id(kind)
        self._by_id[kind] = None
        return ids[name], True

    def _take_id(self, kind):
        # 2**32 ids outlast any deployment (136 years at one new body per second); wrap
        # around anyway rather than overflow the uint32 field, skipping ids still in use.
        in_use = set(self._ids[kind].values())
        while True:
            candidate = self._next[kind]
            self._next[kind] = (candidate + 1) % self._ID_LIMIT
            if candidate not in in_use:
                return candidate

    def keep_only(self, kind, names):
        """
        Forget every name of ``kind`` not in ``names``.

        Returns
        -------
        bool
            Whether a name was forgotten.

        """
        ids = self._ids[kind]
        gone = [name for name in ids if name not in names]
        for name in gone:
            del ids[name]
        if gone:
            self._by_id[kind] = None
        return bool(gone)

    def as_dict(self):
        """``{'links': {id: name}, 'obstacles': {id: name}}``, the ``~/names`` payload."""
        return {'links': {str(i): name for name, i in sorted(self._ids[LINK].items(),
                                                             key=lambda item: item[1])},
                'obstacles': {str(i): name for name, i in sorted(
                    self._ids[OBSTACLE].items(), key=lambda item: item[1])}}

    def names_by_id(self, kind):
        """
        Return ``{id: name}`` of one kind, read-only.

        Made once per change of names, not per cycle: with a thousand obstacles the mapping
        cost more than measuring the pairs beyond ``max_distance``.
        """
        if self._by_id[kind] is None:
            self._by_id[kind] = MappingProxyType({i: name for name, i in self._ids[kind].items()})
        return self._by_id[kind]


def _keys_of(body):
    extra = [key for key in body.pending if key not in body.pieces and key not in body.errors]
    return list(body.pieces) + list(body.errors) + extra
