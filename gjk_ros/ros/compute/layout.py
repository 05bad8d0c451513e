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
The layout: which bodies are in scope, which piece pairs are tracked, where each piece sits.

Rebuilt only when the scope changes (a body added, removed or reshaped, a scope parameter, a
decomposition finished); the pair tracker then carries the simplex caches of surviving piece
pairs over. Between rebuilds the layout gathers, each cycle, where every piece's source placed
it and how fresh its data is from the sources' slots in the world (``SourceData``): index
arrays made once per arrangement, and a placement recomputed only when a source handed over
new frames or origins.

A sensor cloud's slot (``NearestPoints``) holds the answers of its nearest-point searches: the
layout marks its pairs so that the tracker takes those answers instead of measuring again
(``pairs.TrackerLayout.points`` and ``measured``), and hands it ``measure``, which finds the
answer for a link shape and pose in the cloud's current slot.
"""

from dataclasses import dataclass, replace
import zlib

from gjk_ros.ros.compute.bodies import LINK, OBSTACLE, TrackedPiece
from gjk_ros.ros.compute.pairs import build_layout, InputState, PairTracker
from gjk_ros.ros.inputs.model_imports import load_models
from gjk_ros.ros.inputs.sources.nearest_points import NearestPoints
from gjk_ros.ros.records import PairStatus
import numpy

__all__ = ['Layout', 'PieceLocation']


@dataclass(frozen=True)
class PieceLocation:
    """Where a layout piece comes from: its body and the ``PieceKey`` its source owns it by."""

    kind: str
    name: str
    key: object


class Layout:
    """
    The bodies in scope as one PairTracker, and the pieces' placement.

    Parameters
    ----------
    decomposer : gjk_ros.ros.inputs.decomposer.MeshDecomposer
        Convex parts that stand for a mesh piece once ready.
    publish_names : callable(dict)
        Called with the ``~/names`` payload whenever it changes.

    """

    def __init__(self, decomposer, publish_names):
        self._decomposer = decomposer
        self._publish_names = publish_names
        self._names_published = None
        self.tracker = PairTracker()
        self._key = None
        self._origins = None
        self.rebuilds = 0
        self.locations = []
        self._link_rows = numpy.zeros(0, dtype=numpy.int64)  # the link pieces' rows
        self.shapes = []
        self.marker_ids = []
        self.self_mask = numpy.zeros(0, dtype=bool)
        self.link_ids = []
        # source name -> (layout indices, slot indices): where each piece's placement and
        # freshness are in its source's slot, made once per rebuild and arrangement.
        self._gather = {}
        self._gather_key = None
        self._placed_from = None
        self._present = None
        self._unmatched = None

    def configure(self, config):
        """Scope parameters take effect at the next refresh; tracker options rebuild now."""
        options = (config.hill_climbing, config.tracking)
        if options != (self.tracker.hill_climb, self.tracker.tracking):
            self.tracker = PairTracker(*options)
            self._key = None
        self._config = config

    def refresh(self, world):
        """Rebuild when the scope changed; returns whether it did."""
        config = self._config
        key = (world.bodies.version, config.link_include, config.link_exclude,
               config.obstacle_include, config.obstacle_exclude, config.allowed_pairs,
               config.excluded_pairs, config.static_obstacle_namespaces, config.padding,
               config.link_padding, config.obstacle_padding,
               config.self_collision, world.adjacent_links, world.disabled_links,
               world.collision_rules,
               self._decomposer.version, id(self.tracker))
        if key == self._key:
            return False
        self._key = key
        self._rebuild(world, config)
        return True

    def _rebuild(self, world, config):
        locations, by_uid = {}, {}
        links = self._bodies_in_scope(world, LINK, config.link_in_scope, locations, by_uid)
        obstacles = self._bodies_in_scope(world, OBSTACLE, config.obstacle_in_scope,
                                          locations, by_uid)
        world.names.keep_only(LINK, {name for name, *_ in links})
        world.names.keep_only(OBSTACLE, {name for name, *_ in obstacles})
        self_pairs = self._self_pairs(world, config, links)
        rules = world.collision_rules

        def pair_allowed(link, obstacle):
            return config.pair_allowed(link, obstacle) and not rules.allows(link, obstacle)

        def link_padding_of(link):
            return config.link_padding_of(link) + rules.padding_of(link)
        layout = build_layout(links, obstacles, pair_allowed, self_pairs, link_padding_of,
                              config.obstacle_padding_of)
        self.self_mask = numpy.array([spec.self_pair for spec in layout.records], dtype=bool)
        self.locations = [locations[uid] for uid in layout.piece_uids]
        self._link_rows = numpy.array([index for index, location in enumerate(self.locations)
                                       if location.kind == LINK], dtype=numpy.int64)
        self.shapes = [by_uid[uid].shape for uid in layout.piece_uids]
        # A decomposed piece's parts share its key: their marker ids add the part index.
        self.marker_ids = [_stable_id(loc.key, _part_of(uid))
                           for uid, loc in zip(layout.piece_uids, self.locations)]
        layout = self._point_pairs(world, layout)
        self.tracker.rebuild(layout, self.shapes, self._measure_function(world),
                             unsigned=[by_uid[uid].unsigned for uid in layout.piece_uids])
        self.link_ids = [body_id for _, body_id, _, _ in links]
        # Judged when asked (diagnostics, once a second), not on every rebuild.
        self._unmatched = None
        self._present = (config, world)
        self._gather_key = None
        self.rebuilds += 1
        names = world.names.as_dict()
        if names != self._names_published:
            self._names_published = names
            self._publish_names(names)

    def _point_pairs(self, world, layout):
        """
        Mark the pairs whose obstacle piece is a cloud's nearest point, and each link's own.

        A point piece's key item is the ``LinkPart`` (link, key, part) it is nearest to; its
        own pair is the one with that link piece (part 0 for a piece not decomposed). A link
        piece with points but none of its own (its convex parts changed after the cloud's
        source collected) cannot be measured: one of its pairs is listed in ``orphans``, which
        the tracker makes STALE.
        """
        sources = {name for name, slot in world.slots.items()
                   if isinstance(slot, NearestPoints)}
        if not sources or not len(layout.pairs):
            return layout
        pairs = layout.pairs.tolist()
        points = numpy.array([self.locations[point].key.source in sources
                              for _, point in pairs], dtype=bool)
        owner = numpy.repeat(numpy.arange(len(layout.records)),
                             [spec.stop - spec.start for spec in layout.records])
        measured, first_pair = [], {}
        for pair in numpy.flatnonzero(points).tolist():
            link, point = pairs[pair]
            first_pair.setdefault((owner[pair], link), pair)
            item, location = self.locations[point].key.item, self.locations[link]
            part = _part_of(layout.piece_uids[link]) or 0
            if (item.link, item.key, item.part) == (location.name, location.key, part):
                measured.append((owner[pair], link, point, pair))
        own = {(record, link) for record, link, _, _ in measured}
        orphans = [pair for key, pair in first_pair.items() if key not in own]
        return replace(layout, points=points,
                       measured=numpy.array(measured, dtype=numpy.int64).reshape(-1, 4),
                       orphans=numpy.array(orphans, dtype=numpy.int64))

    def _measure_function(self, world):
        """Return ``measure(point piece, shape, pose)``: its cloud's answer in the current slot."""
        locations = self.locations

        def measure(point, shape, pose):
            key = locations[point].key
            answers = getattr(world.slots.get(key.source), 'nearest', None)
            return None if answers is None else answers.measure(key.item, shape, pose)
        return measure

    @property
    def unmatched(self):
        """(parameter, entry) of the pattern entries that match no body (judged per rebuild)."""
        if self._unmatched is None and self._present is not None:
            config, world = self._present
            self._unmatched = config.unmatched_patterns(
                world.bodies.names(LINK), world.bodies.names(OBSTACLE),
                _marker_namespaces(world))
        return self._unmatched or []

    def _bodies_in_scope(self, world, kind, in_scope, locations, by_uid):
        bodies = []
        for name in world.bodies.names(kind):
            if not in_scope(name):
                continue
            body_id, _ = world.names.id_of(kind, name)
            pieces = []
            scale = world.collision_rules.scale_of(name) if kind == LINK else 1.0
            for key, tracked in world.bodies.keyed_pieces(kind, name):
                for part in self._layout_pieces(tracked, scale):
                    locations[part.uid] = PieceLocation(kind, name, key)
                    by_uid[part.uid] = part.piece
                    pieces.append(part)
            bodies.append((name, body_id, pieces, _body_state(world.bodies, kind, name)))
        return bodies

    def _layout_pieces(self, tracked, scale=1.0):
        """
        Return the tracked pieces that stand for one body piece: itself, or its convex parts.

        A part shares the piece's frame and origin (so its pose, expiry and source are the
        piece's); its uid ``(piece uid, part index)`` keeps its simplex caches across rebuilds.
        A link the planning scene scales (``link_scale``) has its shapes scaled.
        """
        parts = self._decomposer.parts_for(tracked.piece)
        if scale != 1.0:
            # Imported here, as in _self_pairs: only a scaled link needs gjk_ros.models.
            load_models()  # one whole import, whatever thread (model_imports.py)
            from gjk_ros.models.collision_objects import scaled_shape, shape_centre
            whole = tracked.piece.shape
            if not parts:
                shape = scaled_shape(whole, scale)
                return [replace(tracked, piece=replace(tracked.piece, shape=shape))]
            # Convex parts scale about the centre of the mesh they are parts of.
            parts = [scaled_shape(part, scale, shape_centre(whole)) for part in parts]
        if not parts:
            return [tracked]
        return [TrackedPiece((tracked.uid, index), replace(tracked.piece, shape=shape))
                for index, shape in enumerate(parts)]

    @staticmethod
    def _self_pairs(world, config, links):
        if not config.self_collision:
            return ()
        # Imported here: gjk_ros.models brings trimesh (0.45 s), which only the worker
        # needs otherwise; the node's start waits for its imports.
        load_models()  # one whole import, whatever thread (model_imports.py)
        from gjk_ros.models.kinematics import self_collision_pairs
        disabled, rules = world.disabled_links, world.collision_rules

        def is_disabled(first, second):
            return frozenset((first, second)) in disabled or \
                not config.self_pair_allowed(first, second) or rules.allows(first, second)
        return self_collision_pairs([name for name, *_ in links], world.adjacent_links,
                                    is_disabled)

    def placement(self, world):
        """
        Frames and origins of the layout pieces, as their sources placed them.

        Recomputed only when the layout, the arrangement or some source's placement changed.

        Returns
        -------
        tuple of (list of str, (n, 4, 4) float, (n,) int)
            The distinct frames, each piece's origin, and each piece's index into the frames
            (``len(frames)`` for a piece that cannot be placed now): many pieces share a
            frame, so the cycle looks each frame up once.

        """
        gather = self._gathered(world)
        placed_from = [(world.slots[source].frames, world.slots[source].origins)
                       for source in gather]
        if self._placed_from is None or not _same_objects(placed_from, self._placed_from):
            self._placed_from, self._origins = placed_from, self._place(world, gather)
        return self._origins

    def judge(self, world, inputs, piece_times):
        """
        Apply each source's freshness to its pieces (in place).

        A stale piece's input becomes STALE (unless worse already); each piece's data time
        becomes the older of its transform's and its source's (``SourceData.times``).
        """
        for source, (indices, positions) in self._gathered(world).items():
            slot = world.slots[source]
            chosen = indices[slot.stale[positions]]
            inputs[chosen[inputs[chosen] == InputState.OK]] = InputState.STALE
            piece_times[indices] = numpy.minimum(piece_times[indices], slot.times[positions])

    def _gathered(self, world):
        key = (self._key, world.arrangement)
        if key != self._gather_key:
            grouped = {}
            for index, location in enumerate(self.locations):
                indices, positions = grouped.setdefault(location.key.source, ([], []))
                indices.append(index)
                positions.append(world.position(location.key))
            self._gather = {source: (numpy.array(indices, dtype=numpy.int64),
                                     numpy.array(positions, dtype=numpy.int64))
                            for source, (indices, positions) in grouped.items()}
            self._gather_key, self._placed_from = key, None
        return self._gather

    def _place(self, world, gather):
        frames = [None] * len(self.locations)
        origins = numpy.empty((len(self.locations), 4, 4))
        for source, (indices, positions) in gather.items():
            slot = world.slots[source]
            origins[indices] = slot.origins[positions]
            for index, position in zip(indices.tolist(), positions.tolist()):
                frames[index] = slot.frames[position]
        distinct = sorted({frame for frame in frames if frame is not None})
        position = {frame: index for index, frame in enumerate(distinct)}
        frame_index = numpy.array([position.get(frame, len(distinct)) for frame in frames],
                                  dtype=numpy.int64)
        return distinct, origins, frame_index

    def link_frames(self):
        """Return the frame of every link piece (None: none yet), from the last placement."""
        if self._origins is None or self._placed_from is None:
            return []
        distinct, _, frame_index = self._origins
        return [distinct[row] if row < len(distinct) else None
                for row in frame_index[self._link_rows].tolist()]


def _same_objects(first, second):
    """Whether two lists of (frames, origins) hold the very same objects."""
    return len(first) == len(second) and all(
        a is c and b is d for (a, b), (c, d) in zip(first, second))


def _marker_namespaces(world):
    """Namespaces of the marker pieces in the world (the marker sources' names: MarkerSource)."""
    return {key.item.ns for kind in (LINK, OBSTACLE) for source in ('obstacles', 'links')
            for _, key in world.bodies.keys(kind, source)}


def _body_state(bodies, kind, name):
    if bodies.errors(kind, name):
        return PairStatus.INVALID
    if bodies.is_pending(kind, name):
        return PairStatus.PENDING
    return PairStatus.VALID


def _stable_id(key, part):
    """Return a stable integer for a piece key and part (the same every cycle and every run)."""
    return zlib.crc32(repr(key if part is None else (key, 'part', part)).encode())


def _part_of(uid):
    """Return the part index of a decomposed piece's uid ``(piece uid, part)``, else None."""
    if not isinstance(uid, tuple):
        return None
    _, part = uid
    return part
