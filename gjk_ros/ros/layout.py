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
pairs over. Between rebuilds the layout gives each cycle the pieces' frames and origins (cached
until a piece or placement changes) and measures them (``PairTracker``).
"""

from dataclasses import dataclass, replace
import zlib

from gjk_ros.ros.bodies import LINK, OBSTACLE, TrackedPiece
from gjk_ros.ros.model_imports import load_models
from gjk_ros.ros.pairs import build_layout, PairTracker
from gjk_ros.ros.records import PairStatus
import numpy

__all__ = ['Layout', 'PieceLocation']


@dataclass(frozen=True)
class PieceLocation:
    """Where a layout piece comes from: its body and the key its source owns it under."""

    kind: str
    name: str
    key: tuple

    @property
    def source(self):
        """Name of the source that owns the piece (the key's first element)."""
        return self.key[0]


class Layout:
    """
    The bodies in scope as one PairTracker, and the pieces' placement.

    Parameters
    ----------
    decomposer : gjk_ros.ros.decomposer.MeshDecomposer
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
        self._origins_key = None
        self._origins = None
        self.rebuilds = 0
        self.locations = []
        self.shapes = []
        self.marker_ids = []
        self.self_mask = numpy.zeros(0, dtype=bool)
        self.link_ids = []
        # source name -> (piece indices, [(kind, name, key)]): what Source.silent and
        # Source.data_times are asked about every cycle, made once per rebuild.
        self.by_source = {}
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
        locations, shapes = {}, {}
        links = self._bodies_in_scope(world, LINK, config.link_in_scope, locations, shapes)
        obstacles = self._bodies_in_scope(world, OBSTACLE, config.obstacle_in_scope,
                                          locations, shapes)
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
        self.shapes = [shapes[uid] for uid in layout.piece_uids]
        # A decomposed piece's parts share its key: their marker ids add the part index.
        self.marker_ids = [_stable_id(loc.key if not isinstance(uid, tuple)
                                      else loc.key + ('part', uid[1]))
                           for uid, loc in zip(layout.piece_uids, self.locations)]
        self.by_source = _pieces_by_source(self.locations)
        self.tracker.rebuild(layout, self.shapes)
        self.link_ids = [body_id for _, body_id, _, _ in links]
        # Judged when asked (diagnostics, once a second), not on every rebuild.
        self._unmatched = None
        self._present = (config, world)
        self._origins_key = None
        self.rebuilds += 1
        names = world.names.as_dict()
        if names != self._names_published:
            self._names_published = names
            self._publish_names(names)

    @property
    def unmatched(self):
        """(parameter, entry) of the pattern entries that match no body (judged per rebuild)."""
        if self._unmatched is None and self._present is not None:
            config, world = self._present
            self._unmatched = config.unmatched_patterns(
                world.bodies.names(LINK), world.bodies.names(OBSTACLE),
                _marker_namespaces(world))
        return self._unmatched or []

    def _bodies_in_scope(self, world, kind, in_scope, locations, shapes):
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
                    shapes[part.uid] = part.piece.shape
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

    def frames_and_origins(self, world, sources, fixed_frame):
        """
        Frames and origins of the layout pieces; cached until a piece or placement changes.

        A piece placed at a stamp by its source (a marker with ``frame_locked`` false) sits in
        ``fixed_frame``; until it can be placed its frame is None (the piece is STALE).

        Returns
        -------
        tuple of (list of str, (n, 4, 4) float, (n,) int)
            The distinct frames, each piece's origin, and each piece's index into the frames
            (``len(frames)`` for a piece without a frame): many pieces share a frame, so the
            cycle looks each frame up once.

        """
        key = (world.bodies.revision, world.placement_revision, fixed_frame, self._key)
        if key != self._origins_key:
            self._origins_key, self._origins = key, self._place(world, sources, fixed_frame)
        return self._origins

    def _place(self, world, sources, fixed_frame):
        frames, origins = [], numpy.empty((len(self.locations), 4, 4))
        for index, location in enumerate(self.locations):
            piece = world.bodies.piece_by_key(location.kind, location.name, location.key).piece
            frame, origin = piece.frame_id.lstrip('/') or fixed_frame, piece.origin
            placed = sources[location.source].placement(location.kind, location.key)
            if placed is not None:
                frame, origin = placed
            frames.append(frame)
            origins[index] = numpy.eye(4) if origin is None else origin
        distinct = sorted({frame for frame in frames if frame is not None})
        position = {frame: index for index, frame in enumerate(distinct)}
        frame_index = numpy.array([position.get(frame, len(distinct)) for frame in frames],
                                  dtype=numpy.int64)
        return distinct, origins, frame_index

    def link_frames(self):
        """Return the frame of every link piece (None: none yet), from the last placement."""
        if self._origins is None or self._origins_key is None:
            return []
        distinct, _, frame_index = self._origins
        return [distinct[frame_index[index]] if frame_index[index] < len(distinct) else None
                for index, location in enumerate(self.locations) if location.kind == LINK]


def _marker_namespaces(world):
    """Namespaces of the marker pieces in the world (the marker sources' names: MarkerSource)."""
    return {key[1] for kind in (LINK, OBSTACLE) for source in ('obstacles', 'links')
            for _, key in world.bodies.keys(kind, source)}


def _body_state(bodies, kind, name):
    if bodies.errors(kind, name):
        return PairStatus.INVALID
    if bodies.is_pending(kind, name):
        return PairStatus.PENDING
    return PairStatus.VALID


def _stable_id(key):
    """Return a stable integer for a piece key (the same every cycle and every run)."""
    return zlib.crc32(repr(key).encode())


def _pieces_by_source(locations):
    """Group the layout's pieces by their source: (indices, [(kind, name, key)]) each."""
    grouped = {}
    for index, location in enumerate(locations):
        grouped.setdefault(location.source, []).append(index)
    return {source: (numpy.array(indices, dtype=numpy.int64),
                     [(locations[i].kind, locations[i].name, locations[i].key) for i in indices])
            for source, indices in grouped.items()}
