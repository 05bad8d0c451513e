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
Distances for motion planners: any configuration, a whole trajectory, self-collision (no ROS).

:class:`RobotDistances` is built once from a URDF (plus an optional SRDF and obstacles). For a
configuration, or each of N configurations in turn, it poses every link by forward kinematics
(models/kinematics.py) and updates every piece pair, link-obstacle and link-link, in one
compiled :class:`~gjk_ros.core.PairSet` call. Each piece pair keeps its tracked simplex and
penetration polytope from one configuration to the next, so a trajectory is the tracking case
of Cameron 1997 (section 4): consecutive configurations usually cost one GJK iteration per pair.

Body pairs and pieces. Every URDF ``<collision>`` is one convex piece (a mesh its hull, or its
CoACD parts when the mesh URI matches a ``decompose`` pattern); obstacles are one or more
pieces. The distance of two bodies is that of their closest piece pair (exact when the bodies
are apart; when pieces overlap it is the deepest piece overlap, the usual measure for unions of
convex pieces). Self-collision pairs are all pairs of links with geometry except those joined
by a joint (adjacent, as MoveIt's default) and the SRDF's ``disable_collisions``.

Padding (as the node's ``padding`` and MoveIt's ``link_padding``): every link is inflated by
the global ``padding`` plus its ``link_padding``, an obstacle by its own padding. A pair's
padding is the sum of its two bodies' (a self pair gets the global padding twice, once per
link). It is subtracted from the signed distance, the witness on the first body is moved along
the normal by that body's padding and the witness on the second against it by its own, so
``witness_b - witness_a == distance * normal`` still holds.

Conventions are the core's: normals from the first body (the link, or the earlier link in
:attr:`RobotDistances.links` order) towards the second, world frame, signed distances.
"""

from collections.abc import Mapping
from dataclasses import dataclass
import fnmatch
import math

from gjk_ros.core import ConvexPolytope, PairSet, Status
from gjk_ros.models import CollisionPiece, ModelError, piece_from_description, ResourceResolver
from gjk_ros.models.decomposition import decompose_mesh_file
from gjk_ros.models.kinematics import parse_kinematics, rigid_product, self_collision_pairs
from gjk_ros.models.srdf import parse_srdf
from gjk_ros.models.urdf import child_elements, parse_urdf_collisions, robot_element
from gjk_ros.models.values import parse_numbers
import numba
import numpy as np

__all__ = ['DistanceResults', 'Obstacle', 'RobotDistances']

# Configurations per compiled PairSet call in trajectory(): the piece-level work arrays of a chunk
# stay in cache and are reused, so a long trajectory allocates only its results.
CHUNK = 64

_MEASURED = np.array([s in (Status.SEPARATED, Status.TOUCHING, Status.PENETRATING,
                            Status.MAX_ITERATIONS, Status.DEGENERATE) for s in range(8)])
_BEYOND, _INACTIVE = int(Status.BEYOND), int(Status.INACTIVE)


@dataclass
class Obstacle:
    """
    An obstacle: geometry in its own frame, a world pose and a padding.

    Attributes
    ----------
    name : str
        Unique among obstacles.
    geometry : dict, ConvexPolytope, or a list of them
        Dicts follow :func:`gjk_ros.models.piece_from_description` (box, sphere, cylinder,
        capsule, mesh, points, each with optional ``xyz``/``rpy`` in the obstacle frame).
    pose : array-like, optional
        (4, 4) obstacle-to-world transform; default identity.
    padding : float
        Metres subtracted from this obstacle's distances (inflates it).

    """

    name: str
    geometry: object
    pose: object = None
    padding: float = 0.0


@dataclass
class DistanceResults:
    """
    Signed distances of every body pair, for one configuration or N.

    Arrays have a leading (N,) axis for a trajectory and none for one configuration; the pair
    axis follows :attr:`pairs`. Values are those of the closest piece pair, padded (module
    docstring); pairs that were not measured (BEYOND) hold NaN.

    Attributes
    ----------
    pairs : tuple of (str, str)
        (link, obstacle) pairs first, link by link, then (link, link) self-collision pairs.
    is_self : numpy.ndarray
        (K,) bool, True for link-link pairs.
    distance, error_bound : numpy.ndarray
        (..., K) signed distance (MTD) minus padding; the true value lies within
        ``error_bound`` below it.
    witness_a, witness_b, normal : numpy.ndarray
        (..., K, 3) world frame; normal from the first body to the second.
    status : numpy.ndarray
        (..., K) int8, :class:`gjk_ros.core.Status` values.
    iterations, support_calls : numpy.ndarray
        (..., K) GJK iterations and support calls summed over the pair's piece pairs.
    piece_pair : numpy.ndarray
        (..., K) index of the closest piece pair in :attr:`RobotDistances.pair_set`.

    """

    pairs: tuple
    is_self: np.ndarray
    distance: np.ndarray
    witness_a: np.ndarray
    witness_b: np.ndarray
    normal: np.ndarray
    status: np.ndarray
    error_bound: np.ndarray
    iterations: np.ndarray
    support_calls: np.ndarray
    piece_pair: np.ndarray

    def index(self, first: str, second: str) -> int:
        """Position of the pair (first, second) (either order) in :attr:`pairs`."""
        for k, pair in enumerate(self.pairs):
            if pair in ((first, second), (second, first)):
                return k
        raise KeyError(f'no pair ({first!r}, {second!r})')

    def min_distance(self):
        """
        Smallest distance over all pairs, fail-safe: the lower bound ``distance - error_bound``.

        BEYOND pairs are ignored; +inf when nothing was measured. Shape (N,) or scalar.
        """
        lower = np.where(_MEASURED[self.status.astype(np.int64)],
                         self.distance - self.error_bound, np.inf)
        return lower.min(axis=-1, initial=np.inf)


class RobotDistances:
    """
    Tracked signed distances of a robot's links to obstacles and to each other.

    Parameters
    ----------
    urdf_xml : str
        The robot description.
    srdf_xml : str, optional
        MoveIt's semantic description: ``disable_collisions`` pairs are not checked;
        ``link_padding`` elements add to ``link_padding``.
    obstacles : sequence of Obstacle
        The obstacles (fixed set; poses can change per call).
    package_paths : mapping of str to str, optional
        ``package://`` name -> directory, before the ament index (see ResourceResolver).
    resolver : ResourceResolver, optional
        Instead of ``package_paths``.
    padding : float
        Subtracted from every pair's distance (inflates every link once per pair).
    link_padding : mapping of str to float, optional
        Per-link padding (MoveIt's ``link_padding``); added for each link of a pair.
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
        self.obstacles = tuple(obstacle.name for obstacle in obstacles)
        self._obstacle_padding = np.array([float(o.padding) for o in obstacles])
        self._obstacle_poses = np.array([_pose(o.pose, o.name) for o in obstacles]).reshape(
            -1, 4, 4)
        obstacle_pieces = {o.name: self._obstacle_pieces(o) for o in obstacles}
        if len(obstacle_pieces) != len(obstacles):
            raise ModelError('obstacles', 'obstacle names must be unique')
        self._layout(link_pieces, obstacle_pieces, self_collision, hill_climb, tracking)
        self._scratch_arrays = {}

    # Public ------------------------------------------------------------------------------------

    @property
    def pair_set(self) -> PairSet:
        """Return the piece-level PairSet (its arrays hold the last configuration's answers)."""
        return self._pair_set

    @property
    def pairs(self) -> tuple:
        """Body pairs, in the order of every result's pair axis."""
        return self._pairs

    def self_collision_pairs(self) -> tuple:
        """Return the (link, link) pairs that are measured."""
        return tuple(pair for pair, is_self in zip(self._pairs, self._is_self) if is_self)

    def set_obstacle_poses(self, poses):
        """Set the (O, 4, 4) obstacle-to-world transforms used when a call passes none."""
        self._obstacle_poses = _poses(poses, (len(self.obstacles), 4, 4), 'obstacle poses')

    def reset(self):
        """Forget every tracked state: the next call starts cold."""
        self._pair_set.reset_cache()

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
        result = self.trajectory(q[None], obstacle_poses)
        return _take(result, 0)

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
        qs = self._check_configurations(qs)
        obstacles = self._check_obstacle_poses(obstacle_poses, qs.shape[0])
        results = self._result_arrays(qs.shape[0])
        for start in range(0, qs.shape[0], CHUNK):
            stop = min(start + CHUNK, qs.shape[0])
            poses = self._scratch('poses', (stop - start, len(self._body_origins), 4, 4))
            self._fill_body_poses(qs[start:stop], obstacles[start:stop]
                                  if obstacles.shape[0] > 1 else obstacles, poses)
            self._run_chunk(poses, [array[start:stop] for array in results])
        return self._results(results)

    def body_poses(self, qs, obstacle_poses=None) -> np.ndarray:
        """Return the (N, bodies, 4, 4) world poses of every PairSet body (links', obstacles')."""
        qs = self._check_configurations(qs)
        obstacles = self._check_obstacle_poses(obstacle_poses, qs.shape[0])
        poses = np.empty((qs.shape[0], len(self._body_origins), 4, 4))
        self._fill_body_poses(qs, obstacles, poses)
        return poses

    # Building ----------------------------------------------------------------------------------

    def _link_pieces(self, urdf_xml: str, patterns) -> dict:
        model = parse_urdf_collisions(urdf_xml, resolver=self._resolver)
        if model.errors:
            raise model.errors[0]
        meshes = _collision_meshes(urdf_xml)
        pieces = {}
        for link in self.kinematics.links:
            if link not in model.pieces:
                continue
            if patterns is not None and not any(fnmatch.fnmatchcase(link, p) for p in patterns):
                continue
            pieces[link] = []
            for index, piece in enumerate(model.pieces[link]):
                mesh = meshes.get((link, index))
                pieces[link].extend(self._maybe_decompose(piece, mesh))
        return pieces

    def _maybe_decompose(self, piece: CollisionPiece, mesh):
        settings = self._settings_for(mesh[0]) if mesh else None
        if settings is None:
            return [piece]
        parts = decompose_mesh_file(self._resolver.resolve(mesh[0]), mesh[1], settings,
                                    self._cache_dir)
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
        bodies = [piece for _, piece in link_bodies + obstacle_bodies]
        shapes = [piece.shape for piece in bodies]
        self._body_origins = np.array([piece.origin for piece in bodies]).reshape(-1, 4, 4)
        self._piece_link = np.array([self.kinematics.link_index(link) for link, _ in link_bodies],
                                    np.int64)
        self._piece_obstacle = np.array([self.obstacles.index(o) for o, _ in obstacle_bodies],
                                        np.int64)
        owners = [('link', link) for link, _ in link_bodies] + [
            ('obstacle', o) for o, _ in obstacle_bodies]
        body_pairs = [(link, o, False) for link in self.links for o in self.obstacles]
        if self_collision:
            body_pairs += [(a, b, True) for a, b in self._self_pairs()]
        self._build_pairs(shapes, owners, body_pairs, hill_climb, tracking)

    def _self_pairs(self):
        return self_collision_pairs(self.links, self.kinematics.adjacent_pairs(),
                                    self.srdf.is_disabled if self.srdf else None)

    def _build_pairs(self, bodies, owners, body_pairs, hill_climb, tracking):
        index = {}
        for body, owner in enumerate(owners):
            index.setdefault(owner, []).append(body)
        piece_pairs, groups = [], []
        for first, second, is_self in body_pairs:
            seconds = index[('link', second)] if is_self else index[('obstacle', second)]
            group = []
            for a in index[('link', first)]:
                for b in seconds:
                    group.append(len(piece_pairs))
                    piece_pairs.append((a, b))
            groups.append(group)
        self._pairs = tuple((a, b) for a, b, _ in body_pairs)
        self._is_self = np.array([s for _, _, s in body_pairs], dtype=bool)
        self._pair_set = PairSet(bodies, np.array(piece_pairs, np.int64).reshape(-1, 2),
                                 hill_climb=hill_climb, tracking=tracking)
        width = max((len(g) for g in groups), default=1)
        self._groups = np.zeros((len(groups), width), np.int64)
        self._group_sizes = np.array([len(g) for g in groups], np.int64)
        for k, group in enumerate(groups):
            self._groups[k, :len(group)] = group
        self._padding_arrays(body_pairs)

    def _padding_arrays(self, body_pairs):
        own = np.array([self.padding + self.link_padding.get(a, 0.0) for a, _, _ in body_pairs])
        other = np.array([self.padding + self.link_padding.get(b, 0.0) if is_self
                          else self._obstacle_padding[self.obstacles.index(b)]
                          for _, b, is_self in body_pairs])
        self._pad_first, self._pad_second = own, other
        self._pad_max = float((own + other).max(initial=0.0))

    # Running -----------------------------------------------------------------------------------

    def _check_configurations(self, qs) -> np.ndarray:
        qs = np.ascontiguousarray(qs, dtype=np.float64)
        if qs.ndim != 2 or qs.shape[1] != self.kinematics.dof:
            raise ValueError(f'qs: expected (N, {self.kinematics.dof}), got {qs.shape}')
        if not np.isfinite(qs).all():
            raise ValueError('qs: configurations must be finite')
        return qs

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
        _compose(links, self._piece_link, obstacles, self._piece_obstacle, self._body_origins,
                 poses)

    def _scratch(self, name, shape) -> np.ndarray:
        """Return a reused work array of ``shape`` (so long trajectories touch no new memory)."""
        array = self._scratch_arrays.get(name)
        if array is None or array.shape[1:] != shape[1:] or array.shape[0] < shape[0]:
            array = np.empty((max(shape[0], CHUNK),) + shape[1:])
            self._scratch_arrays[name] = array
        return array[:shape[0]]

    def _piece_buffers(self, count):
        buffers = self._scratch_arrays.get('pieces')
        if buffers is None or buffers[0].shape[0] < count:
            m, size = self._pair_set.num_pairs, max(count, CHUNK)
            buffers = (np.empty((size, m, 11)), np.empty((size, m), np.int8),
                       np.empty((size, m, 4), np.int64))
            self._scratch_arrays['pieces'] = buffers
        return tuple(array[:count] for array in buffers)

    def _run_chunk(self, poses, results):
        values, status, counts = self._piece_buffers(poses.shape[0])
        self._pair_set.update_sequence(poses, max_distance=self.max_distance + self._pad_max,
                                       out=(values, status, counts))
        rows, pair_status, totals, best = results
        _reduce_pairs(values, status, counts, self._groups, self._group_sizes, self._pad_first,
                      self._pad_second, _MEASURED, rows, pair_status, totals, best)

    def _result_arrays(self, count):
        pairs = len(self._pairs)
        return (np.empty((count, pairs, 11)), np.empty((count, pairs), np.int8),
                np.empty((count, pairs, 2), np.int64), np.empty((count, pairs), np.int64))

    def _results(self, arrays) -> DistanceResults:
        rows, pair_status, totals, best = arrays
        return DistanceResults(self._pairs, self._is_self.copy(), rows[..., 0],
                               rows[..., 1:4], rows[..., 4:7], rows[..., 7:10], pair_status,
                               rows[..., 10], totals[..., 0], totals[..., 1], best)


@numba.njit(cache=True, nogil=True)
def _reduce_pairs(values, status, counts, groups, sizes, pad_first, pad_second, measured, rows,
                  pair_status, totals, best):
    """
    Closest piece pair of every body pair, padded; one compiled pass over N configurations.

    The closest measured piece pair gives the row; with none measured the row is NaN and the
    status BEYOND if any piece pair was, else INACTIVE. Counters are summed over the group.
    """
    for n in range(values.shape[0]):
        for k in range(groups.shape[0]):
            chosen, beyond, iterations, supports = -1, False, 0, 0
            for g in range(sizes[k]):
                p = groups[k, g]
                iterations += counts[n, p, 0]
                supports += counts[n, p, 1]
                if measured[status[n, p]]:
                    if chosen < 0 or values[n, p, 0] < values[n, chosen, 0]:
                        chosen = p
                elif status[n, p] == _BEYOND:
                    beyond = True
            totals[n, k, 0], totals[n, k, 1] = iterations, supports
            best[n, k] = chosen
            if chosen < 0:
                rows[n, k, :] = np.nan
                pair_status[n, k] = _BEYOND if beyond else _INACTIVE
                continue
            pair_status[n, k] = status[n, chosen]
            _padded_row(values[n, chosen], pad_first[k], pad_second[k], rows[n, k])


@numba.njit(cache=True, nogil=True)
def _compose(link_poses, piece_link, obstacle_poses, piece_obstacle, origins, poses):
    """Piece world poses: frame pose @ piece origin, links' pieces first (one compiled pass)."""
    links = piece_link.shape[0]
    for n in range(poses.shape[0]):
        frames = obstacle_poses[min(n, obstacle_poses.shape[0] - 1)]
        for p in range(poses.shape[1]):
            if p < links:
                rigid_product(link_poses[n, piece_link[p]], origins[p], poses[n, p])
            else:
                rigid_product(frames[piece_obstacle[p - links]], origins[p], poses[n, p])


@numba.njit(cache=True, nogil=True)
def _padded_row(source, pad_first, pad_second, row):
    """Copy a value row, applying the padding (module docstring)."""
    row[0] = source[0] - pad_first - pad_second
    for c in range(3):
        normal = source[7 + c]
        row[1 + c] = source[1 + c] + pad_first * normal
        row[4 + c] = source[4 + c] - pad_second * normal
        row[7 + c] = normal
    row[10] = source[10]


def _take(result: DistanceResults, i: int) -> DistanceResults:
    fields = ('distance', 'witness_a', 'witness_b', 'normal', 'status', 'error_bound',
              'iterations', 'support_calls', 'piece_pair')
    return DistanceResults(result.pairs, result.is_self,
                           *(getattr(result, name)[i] for name in fields))


def _collision_meshes(urdf_xml: str) -> dict:
    """{(link, collision index): (uri, scale)} of every ``<mesh>`` collision."""
    meshes = {}
    for link in child_elements(robot_element(urdf_xml), 'link'):
        for index, collision in enumerate(child_elements(link, 'collision')):
            for geometry in child_elements(collision, 'geometry'):
                for mesh in child_elements(geometry, 'mesh'):
                    scale = parse_numbers(mesh.get('scale', '1 1 1'), 'mesh scale', 3)
                    meshes[(link.get('name', ''), index)] = (mesh.get('filename', ''), scale)
    return meshes


def _pose(pose, name: str) -> np.ndarray:
    if pose is None:
        return np.eye(4)
    return _poses(pose, (4, 4), name)


def _poses(poses, shape, name: str) -> np.ndarray:
    array = np.array(poses, dtype=np.float64)
    if array.shape != shape or not np.isfinite(array).all():
        raise ValueError(f'{name}: expected finite {shape}, got shape {array.shape}')
    return array
