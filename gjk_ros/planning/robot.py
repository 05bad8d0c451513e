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
import threading

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.bodypairs import BodyPairs
from gjk_ros.core.chain import place_sequence
from gjk_ros.core.collision import check_arrays
from gjk_ros.models import CollisionPiece, ModelError, piece_from_description, ResourceResolver
from gjk_ros.models.decomposition import decompose_mesh_file
from gjk_ros.models.kinematics import parse_kinematics, self_collision_pairs
from gjk_ros.models.srdf import parse_srdf
from gjk_ros.models.urdf import parse_urdf_collisions
from gjk_ros.models.values import parse_numbers
from gjk_ros.planning.results import DistanceResults, Obstacle
import numpy as np

__all__ = ['RobotDistances']


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
        (URDF collisions and obstacle ``mesh`` descriptions) become their convex parts.
    decomposition_cache : str, optional
        Directory of the decomposition cache (default under ``$XDG_CACHE_HOME``).
    base_pose : array-like, optional
        (4, 4) pose of the root link in the world.
    max_distance : float
        Pairs whose bounding spheres are farther apart than this (plus their padding) are not
        computed (Status.BEYOND, NaN).
    hill_climb, tracking : bool
        Passed to the PairSet (for comparisons).

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
                 tracking: bool = True):
        """Parse the robot, build every piece and every piece pair once."""
        self._lock = threading.RLock()
        self._resolver = resolver or ResourceResolver(package_paths)
        self._decompose = dict(decompose or {})
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
        self._layout(link_pieces, obstacle_pieces, self_collision, hill_climb, tracking)
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
            self._placement[4][...] = poses  # in place: the checks hold the array

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
            for piece in model.pieces[link]:
                pieces[link].extend(self._maybe_decompose(piece, piece.mesh or None))
        return pieces

    def _maybe_decompose(self, piece: CollisionPiece, mesh):
        settings = self._settings_for(mesh[0]) if mesh else None
        if settings is None:
            return [piece]
        parts = decompose_mesh_file(self._resolver.resolve(mesh[0]), np.asarray(mesh[1]),
                                    settings, self._cache_dir)
        return [CollisionPiece(piece.body, piece.frame_id, piece.origin,
                               ConvexPolytope.from_points(part),
                               f'{piece.description}: CoACD part {i + 1} of {len(parts)}')
                for i, part in enumerate(parts)]

    def _settings_for(self, uri: str):
        for pattern, settings in self._decompose.items():
            if fnmatch.fnmatchcase(uri, pattern):
                return dict(settings or {})
        return None

    def _obstacle_pieces(self, obstacle: Obstacle) -> list:
        items = obstacle.geometry
        if not isinstance(items, (list, tuple)):
            items = [items]
        pieces = []
        for item in items:
            if isinstance(item, ConvexPolytope):
                pieces.append(CollisionPiece(obstacle.name, obstacle.name, np.eye(4), item,
                                             'polytope'))
            elif isinstance(item, CollisionPiece):
                pieces.append(item)
            elif isinstance(item, Mapping):
                pieces.extend(self._described(obstacle.name, item))
            else:
                raise ModelError(obstacle.name, f'unsupported geometry {type(item).__name__}')
        if not pieces:
            raise ModelError(obstacle.name, 'no geometry')
        return pieces

    def _described(self, name: str, description: Mapping) -> list:
        piece = piece_from_description(name, name, description, resolver=self._resolver)
        if description.get('type') != 'mesh':
            return [piece]
        scale = parse_numbers(description.get('scale', 1.0), 'scale')
        scale = np.repeat(scale, 3) if scale.size == 1 else scale
        return self._maybe_decompose(piece, (description['uri'], scale))

    def _layout(self, link_pieces, obstacle_pieces, self_collision, hill_climb, tracking):
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
        body_pairs = [(link, o, False) for link in self.links for o in self.obstacles]
        if self_collision:
            body_pairs += [(a, b, True) for a, b in self._self_pairs()]
        self._build_pairs([piece.shape for piece in pieces], owners, body_pairs, hill_climb,
                          tracking)
        self._kernel_arrays(pieces)

    def _self_pairs(self):
        return self_collision_pairs(self.links, self.kinematics.adjacent_pairs(),
                                    self.srdf.is_disabled if self.srdf else None)

    def _build_pairs(self, shapes, owners, body_pairs, hill_climb, tracking):
        index = {}
        for body, owner in enumerate(owners):
            index.setdefault(owner, []).append(body)
        groups = []
        for first, second, is_self in body_pairs:
            seconds = index[('link', second)] if is_self else index[('obstacle', second)]
            groups.append([(a, b) for a in index[('link', first)] for b in seconds])
        self._pairs = tuple((a, b) for a, b, _ in body_pairs)
        self._is_self = np.array([s for _, _, s in body_pairs], dtype=bool)
        own = [self.padding + self.link_padding.get(a, 0.0) for a, _, _ in body_pairs]
        other = [self.padding + self.link_padding.get(b, 0.0) if is_self
                 else self._obstacle_padding[self.obstacles.index(b)]
                 for _, b, is_self in body_pairs]
        self._engine = BodyPairs(shapes, groups, own, other, hill_climb=hill_climb,
                                 tracking=tracking)
        self._pair_links = np.array(
            [(self.kinematics.link_index(a), self.kinematics.link_index(b) if s else -1)
             for a, b, s in body_pairs], np.int64).reshape(-1, 2)

    def _kernel_arrays(self, pieces):
        """Build the compiled checks' arrays: the chain, piece placement, motion bounds, work."""
        links = len(self._piece_link)
        count = len(pieces)
        piece_link = np.concatenate([self._piece_link, np.full(count - links, -1, np.int64)])
        piece_obstacle = np.concatenate([np.zeros(links, np.int64), self._piece_obstacle])
        self._chain = self.kinematics.chain_arrays
        self._placement = (piece_link, piece_obstacle, np.ascontiguousarray(self._body_origins),
                           np.ascontiguousarray(self._base),
                           np.ascontiguousarray(self._obstacle_poses))
        self._work = (np.empty((len(self.kinematics.links), 4, 4)), np.empty((count, 4, 4)),
                      np.empty((2, 4, 4)))
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
        return check_arrays(self._engine, self.kinematics.dof, order)

    def kernel_arguments(self):
        """Return ``(chain, placement, work)`` of the compiled checks (hold :attr:`lock`)."""
        return self._chain, self._placement, self._work

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
        piece_link, piece_obstacle, origins = self._placement[:3]
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


# Configurations per compiled call in trajectory() (see core.bodypairs.CHUNK).
CHUNK = 64


def _pose(pose, name: str) -> np.ndarray:
    if pose is None:
        return np.eye(4)
    return _poses(pose, (4, 4), name)


def _poses(poses, shape, name: str) -> np.ndarray:
    array = np.array(poses, dtype=np.float64)
    if array.shape != shape or not np.isfinite(array).all():
        raise ValueError(f'{name}: expected finite {shape}, got shape {array.shape}')
    return array
