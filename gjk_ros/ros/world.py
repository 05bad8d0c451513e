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
The world model: every body the sources brought in, with the robot's collision semantics.

Sources write to it on the compute thread (``Source.on_result``); the layout, the frames and
the outputs read it. It holds no ROS object.

- ``bodies``: links and obstacles, each a set of convex pieces keyed by ``(source name, ...)``
  (``BodyRegistry``: pending, rejected, expiring pieces).
- ``names``: the ids of the bodies that exist now, as ``~/names`` publishes them.
- ``adjacent_links`` / ``disabled_links``: link pairs joined by a joint (URDF) and pairs the
  SRDF disables, as frozensets; self-collision pairs skip both.
- ``link_groups``: the SRDF's groups and their links as MoveIt reads them (``{name:
  frozenset of links}``), for what is computed per group.
- ``collision_rules``: the planning scene's allowed collision matrix, touch links, link
  padding and scale (``CollisionRules``); pairs it allows are skipped, link-link and
  link-obstacle.
- ``placement_revision``: increases whenever a piece's placement may have changed (a marker
  moved or was placed at its stamp), so that cached piece origins are rebuilt.
"""

from dataclasses import dataclass

from gjk_ros.ros.bodies import BodyRegistry, LINK, NameRegistry, OBSTACLE

__all__ = ['CollisionRules', 'World']


@dataclass(frozen=True)
class CollisionRules:
    """
    What the planning scene says about pairs and links.

    MoveIt's allowed collision matrix, the touch links of attached objects (with the link
    holding each), its ``link_padding`` and ``link_scale``.

    Hashable and compared by value, so the layout rebuilds only when the rules change.
    """

    matrix: object = None
    touch: frozenset = frozenset()
    padding: tuple = ()
    scale: tuple = ()

    def allows(self, first, second):
        """Whether the pair is never checked (allowed to touch, as MoveIt says)."""
        if frozenset((first, second)) in self.touch:
            return True
        return self.matrix is not None and self.matrix.allows(first, second)

    def padding_of(self, link):
        """Metres the scene pads ``link`` with (added to the node's own padding)."""
        return dict(self.padding).get(link, 0.0)

    def scale_of(self, link):
        """Return the factor the scene scales ``link``'s pieces by (MoveIt's ``link_scale``)."""
        return dict(self.scale).get(link, 1.0)


class World:
    """What the node knows of the robot and its surroundings (compute-thread state)."""

    def __init__(self):
        self.bodies = BodyRegistry()
        self.names = NameRegistry()
        self.adjacent_links = frozenset()
        self.disabled_links = frozenset()
        self.collision_rules = CollisionRules()
        self.link_groups = {}
        self.model_warnings = ()
        self.placement_revision = 0
        self._reported_version = None

    def moved(self):
        """Note that some placement changed (cached origins are stale)."""
        self.placement_revision += 1

    def set_pieces(self, kind, source, entries):
        """
        Replace what ``source`` owns of ``kind`` by ``entries`` of (name, key, piece or error).

        Only what disappeared is dropped, so unchanged pieces keep their tracked caches. An
        entry whose value is a str is a rejection reason (the body is INVALID).
        """
        wanted = {(name, key) for name, key, _ in entries}
        for name, key in self.bodies.keys(kind, source):
            if (name, key) not in wanted:
                self.bodies.remove(kind, name, key)
        for name, key, value in entries:
            if isinstance(value, str):
                self.bodies.set_error(kind, name, key, value)
            else:
                self.bodies.set_piece(kind, name, key, value)

    def report_problems(self, problems):
        """One log line per rejection or warning when it appears, one when it goes away."""
        if self._reported_version == self.bodies.version:
            return  # nothing was added, removed or rejected since the last report
        self._reported_version = self.bodies.version
        current = set()
        for kind, name, reason in self.bodies.all_errors():
            key = ('body', kind, name, reason)
            current.add(key)
            problems.report(key, "%s '%s' rejected: %s" % (kind, name, reason))
        problems.keep_only(('body',), current,
                           lambda key: "%s '%s': rejected geometry cleared" % key[1:3])
        warnings = {('warning', warning) for warning in self.model_warnings}
        for kind in (LINK, OBSTACLE):
            for name in self.bodies.names(kind):
                for tracked in self.bodies.pieces(kind, name):
                    warnings.update(('warning', warning) for warning in tracked.piece.warnings)
        for key in warnings:
            problems.report(key, key[1], level='warning')
        problems.keep_only(('warning',), warnings)
