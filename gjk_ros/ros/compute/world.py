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
The world model: every source's slot, the bodies they make, and the robot's pair semantics.

Each cycle the node hands every source's ``SourceData`` to ``World.replace``, which puts it in
the source's slot wholesale; the layout, the frames and the outputs read the world. It holds no
ROS object and calls no source.

- ``slots``: ``{source name: SourceData}``, the latest of each source.
- ``bodies``: links and obstacles, each a set of convex pieces keyed by ``PieceKey``
  (``BodyRegistry``: pending and rejected pieces), rebuilt from a slot when its pieces change.
- ``arrangement``: increases whenever some slot's pieces changed (which piece is where).
- ``names``: the ids of the bodies that exist now, as ``~/names`` publishes them.
- ``adjacent_links`` / ``disabled_links``: link pairs joined by a joint (URDF) and pairs the
  SRDF disables, as frozensets; self-collision pairs skip both.
- ``link_groups``: the SRDF's groups and their links as MoveIt reads them (``{name:
  frozenset of links}``), for what is computed per group.
- ``collision_rules``: the planning scene's allowed collision matrix, touch links, link
  padding and scale (``CollisionRules``); pairs it allows are skipped, link-link and
  link-obstacle.
"""

import collections
from dataclasses import dataclass

from gjk_ros.ros.compute.bodies import BodyRegistry, LINK, NameRegistry, OBSTACLE
from gjk_ros.ros.inputs.sources.base import CollisionRules, RobotLinks, SourceData

__all__ = ['LinkPiece', 'World']


@dataclass(frozen=True)
class LinkPiece:
    """A link piece where its source placed it: ``frame`` (None: not yet), ``origin``."""

    name: str
    key: object
    frame: str
    origin: object
    piece: object


class World:
    """What the node knows of the robot and its surroundings (compute-thread state)."""

    def __init__(self):
        self.slots = {}
        self.bodies = BodyRegistry()
        self.names = NameRegistry()
        self.arrangement = 0
        self.collision_rules = CollisionRules()
        self.adjacent_links = frozenset()
        self.disabled_links = frozenset()
        self.link_groups = {}
        self.model_warnings = ()
        self._positions = {}
        self._reported_version = None
        self._link_cache = None  # (arrangement, link slots' placement arrays, link pieces)

    def replace(self, name, data):
        """Put ``data`` (a ``SourceData``) in the slot of source ``name``, wholesale."""
        old = self.slots.get(name, _EMPTY)
        self.slots[name] = data
        if data.pieces is not old.pieces:
            self._set_pieces(name, data.pieces)
            self.arrangement += 1
        if data.rules is not old.rules:
            self.collision_rules = next((slot.rules for slot in self.slots.values()
                                         if slot.rules is not None), CollisionRules())
        if data.links is not old.links:
            links = next((slot.links for slot in self.slots.values()
                          if slot.links is not None), RobotLinks())
            self.adjacent_links, self.disabled_links = links.adjacent, links.disabled
            self.link_groups, self.model_warnings = links.groups, links.warnings

    def position(self, key):
        """Return the index of the piece ``key`` (a ``PieceKey``) in its source's slot."""
        return self._positions[key]

    def _set_pieces(self, name, pieces):
        """
        Make the bodies of source ``name`` those of ``pieces``.

        Only what disappeared is dropped, so unchanged pieces keep their tracked caches.
        """
        wanted = {entry.key: entry for entry in pieces}
        for kind in (LINK, OBSTACLE):
            for body, key in self.bodies.keys(kind, name):
                entry = wanted.get(key)
                if entry is None or (entry.kind, entry.body) != (kind, body):
                    self.bodies.remove(kind, body, key)
                    self._positions.pop(key, None)
        for index, entry in enumerate(pieces):
            self._positions[entry.key] = index
            if entry.piece is not None:
                self.bodies.set_piece(entry.kind, entry.body, entry.key, entry.piece)
            elif entry.error is not None:
                self.bodies.set_error(entry.kind, entry.body, entry.key, entry.error)
            else:
                self.bodies.set_pending(entry.kind, entry.body, entry.key)

    def link_pieces(self):
        """
        Every link piece where its source placed it (``LinkPiece``), in body order.

        The same list while nothing it reads changed (the arrangement, and the placement
        arrays of the slots that hold link pieces): each observation source asks every cycle.
        """
        cached = self._link_cache
        if cached is not None and cached[0] == self.arrangement and all(
                slot is not None and slot.frames is frames and slot.origins is origins
                for slot, frames, origins in ((self.slots.get(name), frames, origins)
                                              for name, frames, origins in cached[1])):
            return cached[2]
        found = self._find_link_pieces()
        placements = tuple((name, self.slots[name].frames, self.slots[name].origins)
                           for name in sorted({link.key.source for link in found}))
        self._link_cache = (self.arrangement, placements, found)
        return found

    def _find_link_pieces(self):
        found = []
        for name in self.bodies.names(LINK):
            for key, tracked in self.bodies.keyed_pieces(LINK, name):
                slot = self.slots[key.source]
                index = self._positions[key]
                found.append(LinkPiece(name, key, slot.frames[index], slot.origins[index],
                                       tracked.piece))
        return found

    def report_problems(self, problems):
        """One log line per rejection or warning when it appears, one when it goes away."""
        if self._reported_version == self.bodies.version:
            return  # nothing was added, removed or rejected since the last report
        self._reported_version = self.bodies.version
        current = set()
        for kind, name, reason in self.bodies.all_errors():
            key = _Rejected('body', kind, name, reason)
            current.add(key)
            problems.report(key, "%s '%s' rejected: %s" % (kind, name, reason))
        problems.keep_only(('body',), current, _cleared)
        warnings = set(self.model_warnings)
        for kind in (LINK, OBSTACLE):
            for name in self.bodies.names(kind):
                for tracked in self.bodies.pieces(kind, name):
                    warnings.update(tracked.piece.warnings)
        for warning in warnings:
            problems.report(('warning', warning), warning, level='warning')
        problems.keep_only(('warning',), {('warning', warning) for warning in warnings})


_EMPTY = SourceData()
# A rejected body as the problem log keys it.
_Rejected = collections.namedtuple('_Rejected', 'topic kind name reason')


def _cleared(key):
    return "%s '%s': rejected geometry cleared" % (key.kind, key.name)
