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
The robot model behind the planner API: pieces, body pairs, poses, and the compiled calls.

:class:`RobotDistances` is built once from a URDF (plus an optional SRDF and obstacles). Every
URDF ``<collision>`` is one convex piece (a mesh its hull, or its CoACD parts when the mesh URI
matches a ``decompose`` pattern); obstacles are one or more pieces. Body pairs are every link
against every obstacle, then the self-collision pairs: all pairs of links with geometry except
those joined by a joint (adjacent, as MoveIt's default) and the SRDF's ``disable_collisions``.
Their piece pairs live in one core :class:`~gjk_ros.core.bodypairs.BodyPairs` engine (closest
piece pair, padding as inflation: every link by the global ``padding`` plus its
``link_padding``, an obstacle by its own).

Meshes (``mesh_mode``, ``gjk_ros.models.mesh_bodies``): a link's non-convex mesh is its hull
unless its mode says otherwise; an obstacle's is measured exactly (closed parts signed, open
parts as unsigned surface pieces) unless its mode says otherwise; 'parts' is CoACD's
decomposition. A mesh that is not watertight, or too complex to be exact, is said so once by a
``MeshWarning`` naming the body; :attr:`RobotDistances.mesh_uses` says what every mesh became.

Every query poses the links by forward kinematics and updates the pairs in compiled code; each
piece pair keeps its tracked simplex (and penetration polytope) from one call to the next, so a
trajectory is the tracking case of Cameron 1997 (section 4). A lock makes concurrent use from
threads give exactly the answers of the same calls made one after the other.

Conventions are the core's: normals from the first body (the link, or the earlier link in
:attr:`RobotDistances.links` order) towards the second, world frame, signed distances.
"""

from collections.abc import Mapping
import fnmatch
import math
import re
import threading
import warnings

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.chain import place_sequence
from gjk_ros.core.collision import check_arrays
from gjk_ros.models import CollisionPiece, ModelError, piece_from_description, ResourceResolver
from gjk_ros.models.decomposition import decompose_mesh, decompose_mesh_file
from gjk_ros.models.kinematics import parse_kinematics, self_collision_pairs
from gjk_ros.models.mesh_bodies import (check_mode, DEFAULT_MAX_PIECES, exact_pieces, MeshUse,
                                        parse_mode_overrides, SurfacePiece)
from gjk_ros.models.srdf import parse_srdf
from gjk_ros.models.urdf import parse_urdf_collisions
from gjk_ros.planning.results import (DEFAULT_LINK_MESH_MODE, DEFAULT_OBSTACLE_MESH_MODE,
                                      DistanceResults, Obstacle)
import numpy as np

__all__ = ['MeshWarning', 'RobotDistances']


class MeshWarning(UserWarning):
    """A mesh is not measured as the user may think: not watertight, or kept as its hull."""


class RobotDistances:
    """
    Tracked signed distances of a robot's links to obstacles and to each other.

    Parameters
    ----------
    urdf_xml : str
        The robot description.
    srdf_xml : str, optional
        MoveIt's semantic description: ``disable_collisions`` pairs are not checked;
        ``link_padding`` elements add to ``link_padding``; ``group`` elements are planning
        groups (:meth:`group`).
    obstacles : sequence of Obstacle, or of moveit_msgs/CollisionObject (message or dict)
        The obstacles (fixed set; poses can change per call). A collision object becomes
        ``Obstacle.from_collision_object`` (its id, its shapes, its pose).
    package_paths : mapping of str to str, optional
        ``package://`` name -> directory, before the ament index (see ResourceResolver).
    resolver : ResourceResolver, optional
        Instead of ``package_paths``.
    padding : float
        Inflates every link (a self pair gets it twice, once per link).
    link_padding : mapping of str to float, optional
        Per-link inflation (MoveIt's ``link_padding``), added to ``padding``.
    self_collision : bool
        Measure link-link pairs.
    links : sequence of str, optional
        fnmatch patterns of the links to measure; default every link with geometry.
    decompose : mapping of str to dict, optional
        Mesh URI fnmatch pattern -> CoACD settings (``{}`` for the defaults): matching meshes
        (URDF collisions and obstacle ``mesh`` descriptions) in 'hull' or 'parts' mode become
        their convex parts.
    mesh_mode : str, optional
        'hull', 'exact' or 'parts' for every body's non-convex meshes; default None: links
        'hull', obstacles 'exact' (``results.DEFAULT_*_MESH_MODE``, which says why). An
        obstacle's own ``mesh_mode`` wins over this and the overrides.
    mesh_mode_overrides : sequence of str
        ``'name_pattern:mode'`` entries (fnmatch on link and obstacle names), the first match
        winning over ``mesh_mode``.
    max_mesh_pieces : int
        Convex pieces one exact mesh may become; beyond, it keeps its hull (a MeshWarning).
    decomposition_cache : str, optional
        Directory of the decomposition cache (default under ``$XDG_CACHE_HOME``).
    base_pose : array-like, optional
        (4, 4) pose of the root link in the world.
    max_distance : float
        Pairs whose bounding spheres are farther apart than this (plus their padding) are not
        computed (Status.BEYOND, NaN).
    hill_climb, tracking : bool
        Passed to the PairSet (for comparisons).
    broad_phase : bool
        Cull a body pair's piece pairs at once when the bodies' bounding spheres are far enough
        apart (``core.pairset``); the answers are the same either way (for comparisons).

    Attributes
    ----------
    pieces : tuple of CollisionPiece
        Every PairSet body, links' first (``body_poses`` poses them).
    piece_owners : tuple of str
        The link or obstacle of each piece.
    mesh_uses : list of MeshUse
        What every non-convex mesh file or triangle mesh became (mode, pieces, whether
        watertight, how far a hull reaches beyond its mesh).

    Raises
    ------
    ModelError
        A malformed URDF or SRDF, a link whose collision geometry is rejected, a bad obstacle.

    """

    def __init__(self, urdf_xml: str, *, srdf_xml: str | None = None, obstacles=(),
                 package_paths=None, resolver=None, padding: float = 0.0,
                 link_padding=None, self_collision: bool = True, links=None,
                 decompose=None, decomposition_cache=None, base_pose=None,
                 max_distance: float = math.inf, hill_climb: bool = True,
                 tracking: bool = True, mesh_mode=None, mesh_mode_overrides=(),
                 max_mesh_pieces: int = DEFAULT_MAX_PIECES, broad_phase: bool = True):
        """Parse the robot, build every piece and every piece pair once."""
        self._lock = threading.RLock()
        self._resolver = resolver or ResourceResolver(package_paths)
        self._decompose = dict(decompose or {})
        self._mesh_defaults = {
            'link': check_mode(mesh_mode or DEFAULT_LINK_MESH_MODE),
            'obstacle': check_mode(mesh_mode or DEFAULT_OBSTACLE_MESH_MODE)}
        self._mesh_overrides = parse_mode_overrides(mesh_mode_overrides)
        self._mesh_mode_given = mesh_mode is not None
        self._max_mesh_pieces = int(max_mesh_pieces)
        self._said = set()
        self.mesh_uses = []
        self._cache_dir = decomposition_cache
        self.kinematics = parse_kinematics(urdf_xml)
        self.srdf = parse_srdf(srdf_xml) if srdf_xml else None
        self.padding = float(padding)
        self.link_padding = dict(self.srdf.link_padding if self.srdf else {})
        self.link_padding.update(link_padding or {})
        self.base_pose = None if base_pose is None else _pose(base_pose, 'base_pose')
        self._base = np.eye(4) if base_pose is None else self.base_pose
        self.max_distance = float(max_distance)
        link_pieces = self._link_pieces(urdf_xml, links)
        self.links = tuple(link_pieces)
        obstacles = [obstacle if isinstance(obstacle, Obstacle) else
                     Obstacle.from_collision_object(obstacle) for obstacle in obstacles]
        self.obstacles = tuple(obstacle.name for obstacle in obstacles)
        self._obstacle_padding = np.array([float(o.padding) for o in obstacles])
        self._obstacle_poses = np.array([_pose(o.pose, o.name) for o in obstacles]).reshape(
            -1, 4, 4)
        obstacle_pieces = {o.name: self._obstacle_pieces(o) for o in obstacles}
        if len(obstacle_pieces) != len(obstacles):
            raise ModelError('obstacles', 'obstacle names must be unique')
        self._layout(link_pieces, obstacle_pieces, self_collision, hill_climb, tracking,
                     bool(broad_phase))
        self._scratch_arrays = {}
        self._groups_made = {}
        from gjk_ros.planning.group import PlanningGroup
        self._whole = PlanningGroup(self, range(self.kinematics.dof), self.kinematics.neutral(),
                                    None, include_constant=True)

    # Public ------------------------------------------------------------------------------------

    @property
    def engine(self) -> BodyPairs:
        """Return the core body-pair engine, whose arrays hold the last configuration's answers."""
        return self._engine

    @property
    def pair_set(self):
        """Return the piece-level PairSet (its arrays hold the last configuration's answers)."""
        return self._engine.pair_set

    @property
    def unsigned(self) -> tuple:
        """Per piece: True for a flat piece of an open mesh surface (distance never < 0)."""
        return tuple(isinstance(piece, SurfacePiece) for piece in self.pieces)

    @property
    def pairs(self) -> tuple:
        """Body pairs, in the order of every result's pair axis."""
        return self._pairs

    @property
    def lock(self) -> threading.RLock:
        """Return the lock every query holds (the tracked state is shared)."""
        return self._lock

    def self_collision_pairs(self) -> tuple:
        """Return the (link, link) pairs that are measured."""
        return tuple(pair for pair, is_self in zip(self._pairs, self._is_self) if is_self)

    def set_obstacle_poses(self, poses):
        """Set the (O, 4, 4) obstacle-to-world transforms used when a call passes none."""
        poses = _poses(poses, (len(self.obstacles), 4, 4), 'obstacle poses')
        with self._lock:
            self._obstacle_poses = poses
            self._check_placement[4][...] = poses  # in place: the checks hold the array
            self._place_obstacles()
            self._poses_version[0] += 1  # the checks' kept bounds of obstacle pieces are stale

    def reset(self):
        """Forget every tracked state: the next call starts cold."""
        with self._lock:
            self._engine.reset()

    def distances(self, q, obstacle_poses=None) -> DistanceResults:
        """
        Signed distances of every body pair at one configuration (tracked from the last call).

        Parameters
        ----------
        q : array-like
            (dof,) configuration, in ``kinematics.variable_names`` order.
        obstacle_poses : array-like, optional
            (O, 4, 4); default the constructor's or :meth:`set_obstacle_poses`'s.

        """
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (self.kinematics.dof,):
            raise ValueError(f'q: expected ({self.kinematics.dof},), got {q.shape}')
        return self.trajectory(q[None], obstacle_poses).take(0)

    def trajectory(self, qs, obstacle_poses=None) -> DistanceResults:
        """
        Signed distances along N configurations, each tracked from the one before.

        Parameters
        ----------
        qs : array-like
            (N, dof) configurations.
        obstacle_poses : array-like, optional
            (O, 4, 4) for all configurations or (N, O, 4, 4) one set per configuration.

        """
        qs = self.check_configurations(qs)
        obstacles = self._check_obstacle_poses(obstacle_poses, qs.shape[0])
        answers = self._engine.answer_arrays(qs.shape[0])
        with self._lock:
            for start in range(0, qs.shape[0], CHUNK):
                stop = min(start + CHUNK, qs.shape[0])
                poses = self._scratch('poses', (stop - start, len(self._body_origins), 4, 4))
                self._fill_body_poses(qs[start:stop], obstacles[start:stop]
                                      if obstacles.shape[0] > 1 else obstacles, poses)
                self._engine.update_sequence(poses, [a[start:stop] for a in answers],
                                             max_distance=self.max_distance)
        return self._results(answers)

    def body_poses(self, qs, obstacle_poses=None) -> np.ndarray:
        """Return the (N, bodies, 4, 4) world poses of every PairSet body (links', obstacles')."""
        qs = self.check_configurations(qs)
        obstacles = self._check_obstacle_poses(obstacle_poses, qs.shape[0])
        poses = np.empty((qs.shape[0], len(self._body_origins), 4, 4))
        with self._lock:
            self._fill_body_poses(qs, obstacles, poses)
        return poses

    def min_distance(self, q) -> float:
        """Smallest padded distance at ``q`` (fail-safe lower bound, see DistanceResults)."""
        return self.distances(q).min_distance()

    def in_collision(self, q, margin: float = 0.0) -> bool:
        """Return True when some body pair is within ``margin`` at ``q`` (see PlanningGroup)."""
        return self._whole.in_collision(q, margin)

    def in_collision_batch(self, qs, margin: float = 0.0) -> np.ndarray:
        """(N,) bool: :meth:`in_collision` of each of N unrelated configurations."""
        return self._whole.in_collision_batch(qs, margin)

    def colliding_pair(self, q, margin: float = 0.0):
        """Return the first body pair found within ``margin`` at ``q``, or None."""
        return self._whole.colliding_pair(q, margin)

    def edge_free(self, q0, q1, margin: float = 0.0, tolerance: float = 1e-4):
        """Certify the joint-space segment ``q0 -> q1`` (see PlanningGroup.edge_free)."""
        return self._whole.edge_free(q0, q1, margin, tolerance)

    def gradients(self, qs):
        """Distances and d(distance)/dq of every pair (see PlanningGroup.gradients)."""
        return self._whole.gradients(qs)

    def group(self, joints, fixed=None, pairs=None, include_constant: bool = False):
        """
        Return a :class:`~gjk_ros.planning.group.PlanningGroup`: a subset of the variables.

        Parameters
        ----------
        joints : str or sequence of str
            An SRDF group name, or joint / variable names.
        fixed : array-like, optional
            (dof,) values of the other variables; default ``kinematics.neutral()``.
        pairs : sequence of (str, str) or callable, optional
            The body pairs to check (either order), or a predicate ``pairs(first, second)``;
            default all.
        include_constant : bool
            Also check the pairs the group's variables cannot move (default: left out, like a
            MoveIt allowed-collision entry, and listed in ``constant_pairs``).

        """
        from gjk_ros.planning.group import PlanningGroup, group_variables
        variables = group_variables(self, joints)
        base = self.kinematics.neutral() if fixed is None else np.array(fixed, np.float64)
        if base.shape != (self.kinematics.dof,) or not np.isfinite(base).all():
            raise ValueError(f'fixed: expected finite ({self.kinematics.dof},)')
        return PlanningGroup(self, variables, base, pairs, include_constant)

    def check_configurations(self, qs) -> np.ndarray:
        """Return ``qs`` as a C-contiguous (N, dof) float64 array; ValueError when it is not."""
        qs = np.ascontiguousarray(qs, dtype=np.float64)
        if qs.ndim != 2 or qs.shape[1] != self.kinematics.dof:
            raise ValueError(f'qs: expected (N, {self.kinematics.dof}), got {qs.shape}')
        if not np.isfinite(qs).all():
            raise ValueError('qs: configurations must be finite')
        if self.kinematics._floating:
            self.kinematics._check_quaternions(qs)
        return qs

    # Building ----------------------------------------------------------------------------------

    def _link_pieces(self, urdf_xml: str, patterns) -> dict:
        model = parse_urdf_collisions(urdf_xml, resolver=self._resolver)
        if model.errors:
            raise model.errors[0]
        pieces = {}
        for link in self.kinematics.links:
            if link not in model.pieces:
                continue
            if patterns is not None and not any(fnmatch.fnmatchcase(link, p) for p in patterns):
                continue
            pieces[link] = []
            mode, explicit = self._mode_for(link, 'link')
            for piece in model.pieces[link]:
                pieces[link].extend(self._expand(piece, mode, explicit))
        return pieces

    def _mode_for(self, body: str, kind: str, own=None):
        """Return (mode, explicit) of a body: its own, an override, mesh_mode, the default."""
        if own is not None:
            return check_mode(own, f'{body}: mesh_mode'), True
        for pattern, mode in self._mesh_overrides:
            if fnmatch.fnmatchcase(body, pattern):
                return mode, True
        return self._mesh_defaults[kind], self._mesh_mode_given

    def _expand(self, piece: CollisionPiece, mode: str, explicit: bool):
        """
        Return the pieces of a (hull) piece of a non-convex mesh file in ``mode``.

        A URI matching ``decompose`` is decomposed with its settings in 'parts' mode, and in
        any mode that no one chose explicitly (the defaults).
        """
        if not piece.mesh:
            return [piece]  # not a mesh, or a convex one: its hull is exact
        uri, scale = piece.mesh[0], np.asarray(piece.mesh[1], dtype=np.float64)
        settings = self._settings_for(uri)
        if settings is not None and not explicit:
            mode = 'parts'
        resolver = self._resolver
        return self._mesh_in_mode(
            piece.body, piece.frame_id, piece.origin, f'mesh {uri}', mode,
            triangles=lambda: resolver.load_mesh_triangles(uri, scale),
            key=(uri, tuple(scale.tolist())),
            parts=lambda: decompose_mesh_file(resolver.resolve(uri), scale, settings or {},
                                              self._cache_dir),
            parts_label=piece.description,
            hull=lambda: (piece, resolver.load_mesh_info(uri, scale).hull_deviation))

    def _mesh_in_mode(self, body, frame_id, origin, label, mode, *, triangles, key, parts,
                      parts_label, hull):
        """
        Return the pieces of one non-convex mesh in ``mode``, and record its :class:`MeshUse`.

        ``triangles()`` loads the mesh (exact mode; ``key`` names it in the resolver's cache,
        None for none), ``parts()`` its CoACD parts, ``hull()`` its hull piece and how far the
        hull reaches beyond it. An exact mesh with too many pieces keeps its hull (said once).
        """
        if mode == 'exact':
            pieces, use = exact_pieces(body, frame_id, origin, triangles(), label,
                                       resolver=self._resolver if key else None, key=key,
                                       max_pieces=self._max_mesh_pieces)
            if pieces is not None:
                self._record(use, pieces)
                return pieces
            self._say(use.note)
        if mode == 'parts':
            found = parts()
            self.mesh_uses.append(MeshUse(body, label, 'parts', len(found)))
            return [CollisionPiece(body, frame_id, origin, ConvexPolytope.from_points(part),
                                   f'{parts_label}: CoACD part {i + 1} of {len(found)}')
                    for i, part in enumerate(found)]
        piece, deviation = hull()
        self.mesh_uses.append(MeshUse(body, label, 'hull', 1, None, deviation))
        return [piece]

    def _record(self, use, pieces):
        """Keep a mesh's use for the report; say its pieces' warnings (once each)."""
        self.mesh_uses.append(use)
        for piece in pieces:
            for text in piece.warnings:
                self._say(text)

    def _say(self, text):
        if text not in self._said:
            self._said.add(text)
            warnings.warn(text, MeshWarning, stacklevel=4)

    def _settings_for(self, uri: str):
        for pattern, settings in self._decompose.items():
            if fnmatch.fnmatchcase(uri, pattern):
                return dict(settings or {})
        return None

    def _obstacle_pieces(self, obstacle: Obstacle) -> list:
        mode, explicit = self._mode_for(obstacle.name, 'obstacle', obstacle.mesh_mode)
        items = obstacle.geometry
        if obstacle.source is not None and obstacle.source[1].mode != mode:
            items = self._collision_object_pieces(obstacle, mode)
        if not isinstance(items, (list, tuple)):
            items = [items]
        pieces = []
        for item in items:
            if isinstance(item, ConvexPolytope):
                pieces.append(CollisionPiece(obstacle.name, obstacle.name, np.eye(4), item,
                                             'polytope'))
            elif isinstance(item, CollisionPiece):
                pieces.extend(self._expand(item, mode, explicit))
                self._say_mesh_warnings(item)
            elif isinstance(item, Mapping):
                pieces.extend(self._described(obstacle.name, item, mode, explicit))
            elif isinstance(item, np.ndarray):
                pieces.extend(self._triangles(obstacle.name, item, mode))
            else:
                raise ModelError(obstacle.name, f'unsupported geometry {type(item).__name__}')
        if not pieces:
            raise ModelError(obstacle.name, 'no geometry')
        return pieces

    def _collision_object_pieces(self, obstacle, mode):
        """Build a collision object's pieces again in ``mode`` (its source message)."""
        from dataclasses import replace
        from gjk_ros.models.collision_objects import scene_object
        message, options = obstacle.source
        options = replace(options, mode=mode, resolver=options.resolver or self._resolver,
                          max_pieces=self._max_mesh_pieces)
        _, found = scene_object(message, mesh_options=options)
        if found.error is not None:
            raise ModelError(obstacle.name, found.error)
        return list(found.pieces)

    def _say_mesh_warnings(self, piece):
        """Say what a collision object's exact mesh warned about (not the hull notes)."""
        for text in piece.warnings:
            if EXACT_MESH_WARNINGS.search(text):
                self._say(text)

    def _described(self, name: str, description: Mapping, mode: str, explicit: bool) -> list:
        piece = piece_from_description(name, name, description, resolver=self._resolver)
        return self._expand(piece, mode, explicit)

    def _triangles(self, name: str, triangles: np.ndarray, mode: str) -> list:
        """Pieces of an (m, 3, 3) triangle mesh in the obstacle frame, in ``mode``."""
        triangles = np.asarray(triangles, dtype=np.float64)
        if triangles.ndim != 3 or triangles.shape[1:] != (3, 3) or not len(triangles):
            raise ModelError(name, f'a triangle mesh must be (m, 3, 3), got {triangles.shape}')
        label = f'mesh of {len(triangles)} triangles'

        def parts():
            points, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
            return decompose_mesh(points, inverse.reshape(-1, 3), {}, self._cache_dir)

        def hull():
            from gjk_ros.models.meshes import triangles_hull
            info = triangles_hull(name, triangles)
            piece = CollisionPiece(name, name, np.eye(4), info.hull, f'{label} (hull)')
            return piece, info.hull_deviation

        return self._mesh_in_mode(name, name, np.eye(4), label, mode, triangles=lambda: triangles,
                                  key=None, parts=parts, parts_label=label, hull=hull)

    def _layout(self, link_pieces, obstacle_pieces, self_collision, hill_climb, tracking,
                broad_phase):
        link_bodies = [(link, piece) for link in link_pieces for piece in link_pieces[link]]
        obstacle_bodies = [(o, piece) for o in obstacle_pieces for piece in obstacle_pieces[o]]
        pieces = [piece for _, piece in link_bodies + obstacle_bodies]
        self._body_origins = np.array([piece.origin for piece in pieces]).reshape(-1, 4, 4)
        self._piece_link = np.array([self.kinematics.link_index(link) for link, _ in link_bodies],
                                    np.int64)
        self._piece_obstacle = np.array([self.obstacles.index(o) for o, _ in obstacle_bodies],
                                        np.int64)
        owners = [('link', link) for link, _ in link_bodies] + [
            ('obstacle', o) for o, _ in obstacle_bodies]
        self.pieces = tuple(pieces)
        self.piece_owners = tuple(name for _, name in owners)
        body_pairs = [(link, o, False) for link in self.links for o in self.obstacles]
        if self_collision:
            body_pairs += [(a, b, True) for a, b in self._self_pairs()]
        self._build_pairs([piece.shape for piece in pieces], owners, body_pairs, hill_climb,
                          tracking, [isinstance(piece, SurfacePiece) for piece in pieces],
                          broad_phase)
        self._kernel_arrays(pieces)

    def _self_pairs(self):
        return self_collision_pairs(self.links, self.kinematics.adjacent_pairs(),
                                    self.srdf.is_disabled if self.srdf else None)

    def _build_pairs(self, shapes, owners, body_pairs, hill_climb, tracking, unsigned,
                     broad_phase):
        index = {}
        for body, owner in enumerate(owners):
            index.setdefault(owner, []).append(body)
        centres = np.array([origin[:3, :3] @ shape.bounding_center + origin[:3, 3]
                            for origin, shape in zip(self._body_origins, shapes)]).reshape(-1, 3)
        groups, runs = [], []
        for first, second, is_self in body_pairs:
            seconds = index[('link', second)] if is_self else index[('obstacle', second)]
            firsts = index[('link', first)]
            clusters = [seconds] if is_self else _clusters(seconds, centres)
            groups.append([(a, b) for cluster in clusters for a in firsts for b in cluster])
            runs.append([len(firsts) * len(cluster) for cluster in clusters])
        self._pairs = tuple((a, b) for a, b, _ in body_pairs)
        self._is_self = np.array([s for _, _, s in body_pairs], dtype=bool)
        own = [self.padding + self.link_padding.get(a, 0.0) for a, _, _ in body_pairs]
        other = [self.padding + self.link_padding.get(b, 0.0) if is_self
                 else self._obstacle_padding[self.obstacles.index(b)]
                 for _, b, is_self in body_pairs]
        self._engine = BodyPairs(shapes, groups, own, other, unsigned=unsigned,
                                 hill_climb=hill_climb, tracking=tracking,
                                 broad_phase=broad_phase, broad_groups=runs)
        self._pair_links = np.array(
            [(self.kinematics.link_index(a), self.kinematics.link_index(b) if s else -1)
             for a, b, s in body_pairs], np.int64).reshape(-1, 2)

    def _kernel_arrays(self, pieces):
        """Build the compiled checks' arrays: the chain, piece placement, motion bounds, work."""
        links = len(self._piece_link)
        count = len(pieces)
        piece_link = np.concatenate([self._piece_link, np.full(count - links, -1, np.int64)])
        piece_obstacle = np.concatenate([np.zeros(links, np.int64), self._piece_obstacle])
        origins = np.ascontiguousarray(self._body_origins)
        self._chain = self.kinematics.chain_arrays
        self._placement = (piece_link, piece_obstacle, origins)
        # The checks place only the links' pieces (the first ones) at each configuration: an
        # obstacle's pieces do not move with q, so they are placed once per obstacle pose
        # (_place_obstacles) instead of once per configuration checked (an exact mesh is
        # hundreds of pieces).
        self._check_placement = (piece_link[:links], piece_obstacle[:links], origins[:links],
                                 np.ascontiguousarray(self._base), self._obstacle_poses)
        self._work = (np.empty((len(self.kinematics.links), 4, 4)), np.empty((count, 4, 4)),
                      np.empty((2, 4, 4)))
        self._poses_version = np.zeros(1, np.int64)
        self._place_obstacles()
        radii = np.zeros(len(self.kinematics.links))
        for p in range(links):
            shape, origin = pieces[p].shape, self._body_origins[p]
            reach = np.linalg.norm(origin[:3, :3] @ shape.bounding_center + origin[:3, 3])
            radii[piece_link[p]] = max(radii[piece_link[p]], reach + shape.bounding_radius)
        owner_links = self._pair_links[self._engine.owner]
        self.pair_bounds = np.ascontiguousarray(self.kinematics.pair_motion_bounds(
            radii, owner_links[:, 0], owner_links[:, 1]))

    # Running -----------------------------------------------------------------------------------

    def checks(self, order=None):
        """Return new work arrays of the compiled checks over ``order`` (piece pairs)."""
        # Only the links' pieces move with q: the checks keep the obstacles' bounds until
        # set_obstacle_poses bumps the version.
        links = len(self._piece_link)
        moving = np.arange(len(self.pieces)) < links
        return check_arrays(self._engine, self.kinematics.dof, order, moving, self._poses_version)

    def kernel_arguments(self):
        """Return ``(chain, placement, work)`` of the compiled checks (hold :attr:`lock`)."""
        return self._chain, self._check_placement, self._work

    def _place_obstacles(self):
        """Write the obstacles' pieces' world poses into the checks' piece poses."""
        links = len(self._piece_link)
        piece_link, piece_obstacle, origins = self._placement
        place_sequence(self._work[0][None], self._obstacle_poses[None], piece_link[links:],
                       piece_obstacle[links:], origins[links:], self._work[1][None, links:])

    def _check_obstacle_poses(self, obstacle_poses, count) -> np.ndarray:
        """Return (1, O, 4, 4) or (N, O, 4, 4) obstacle poses."""
        obstacles = self._obstacle_poses if obstacle_poses is None else np.asarray(
            obstacle_poses, dtype=np.float64)
        if obstacles.shape not in ((len(self.obstacles), 4, 4),
                                   (count, len(self.obstacles), 4, 4)):
            raise ValueError(f'obstacle_poses: expected ({len(self.obstacles)}, 4, 4) or '
                             f'({count}, {len(self.obstacles)}, 4, 4), got {obstacles.shape}')
        return np.ascontiguousarray(obstacles.reshape(-1, len(self.obstacles), 4, 4))

    def _fill_body_poses(self, qs, obstacles, poses):
        links = self._scratch('links', (qs.shape[0], len(self.kinematics.links), 4, 4))
        self.kinematics.forward_into(qs, self._base, links)
        piece_link, piece_obstacle, origins = self._placement
        place_sequence(links, obstacles, piece_link, piece_obstacle, origins, poses)

    def link_poses(self, qs) -> np.ndarray:
        """Return the (N, L, 4, 4) link poses of ``qs`` (checked)."""
        qs = self.check_configurations(qs)
        return self.kinematics.forward(qs, self._base)

    def _scratch(self, name, shape) -> np.ndarray:
        """Return a reused work array of ``shape`` (so long trajectories touch no new memory)."""
        array = self._scratch_arrays.get(name)
        if array is None or array.shape[1:] != shape[1:] or array.shape[0] < shape[0]:
            array = np.empty((max(shape[0], CHUNK),) + shape[1:])
            self._scratch_arrays[name] = array
        return array[:shape[0]]

    def _results(self, answers) -> DistanceResults:
        rows, pair_status, totals, best = answers
        return DistanceResults(self._pairs, self._is_self.copy(), rows[..., 0],
                               rows[..., 1:4], rows[..., 4:7], rows[..., 7:10], pair_status,
                               rows[..., 10], totals[..., 0], totals[..., 1], best)


# What an exact mesh's pieces warn about (mesh_bodies.exact_pieces): said once per text.
EXACT_MESH_WARNINGS = re.compile(r'is not watertight|convex pieces to be exact')
# Configurations per compiled call in trajectory() (see core.bodypairs.CHUNK).
CHUNK = 64
# Most pieces of an obstacle culled together by the checks (_clusters): small enough that one
# cluster's bounds hug a corner of a large mesh, large enough that the bounds stay few.
CLUSTER_PIECES = 8


def _pose(pose, name: str) -> np.ndarray:
    if pose is None:
        return np.eye(4)
    return _poses(pose, (4, 4), name)


def _poses(poses, shape, name: str) -> np.ndarray:
    array = np.array(poses, dtype=np.float64)
    if array.shape != shape or not np.isfinite(array).all():
        raise ValueError(f'{name}: expected finite {shape}, got shape {array.shape}')
    return array


def _clusters(bodies, centres):
    """
    Split an obstacle's pieces into clusters of at most ``CLUSTER_PIECES`` near pieces.

    Halves at the median of the centres along their widest axis (in the obstacle's frame, so
    the clusters hold for any obstacle pose). The checks cull each cluster by its own bounds:
    a link near one end of a large mesh skips the pieces at the other end together.
    """
    bodies = list(bodies)
    if len(bodies) <= CLUSTER_PIECES:
        return [bodies]
    points = centres[bodies]
    axis = int(np.argmax(np.ptp(points, axis=0)))
    ranked = [bodies[i] for i in np.argsort(points[:, axis], kind='stable')]
    half = len(bodies) // 2
    return _clusters(ranked[:half], centres) + _clusters(ranked[half:], centres)
