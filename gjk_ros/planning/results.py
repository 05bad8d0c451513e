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

"""What the planner API takes and returns: obstacles, distance results, segment verdicts."""

from dataclasses import dataclass

from gjk_ros.core.bodypairs import MEASURED
import numpy as np

__all__ = ['DEFAULT_LINK_MESH_MODE', 'DEFAULT_OBSTACLE_MESH_MODE', 'DistanceResults',
           'EdgeCheck', 'load_obstacles', 'Obstacle']


@dataclass
class Obstacle:
    """
    An obstacle: geometry in its own frame, a world pose and a padding.

    Attributes
    ----------
    name : str
        Unique among obstacles.
    geometry : dict, ConvexPolytope, CollisionPiece, (m, 3, 3) array, or a list of them
        Dicts follow :func:`gjk_ros.models.piece_from_description` (box, sphere, cylinder,
        capsule, mesh, points, each with optional ``xyz``/``rpy`` in the obstacle frame); an
        (m, 3, 3) array is a triangle mesh in the obstacle frame.
    pose : array-like, optional
        (4, 4) obstacle-to-world transform; default identity.
    padding : float
        Metres subtracted from this obstacle's distances (inflates it).
    mesh_mode : str, optional
        How its non-convex meshes are measured: 'hull', 'exact' or 'parts'
        (``gjk_ros.models.mesh_bodies``); None: the robot's rule (``RobotDistances``).
    source : tuple, optional
        ``(collision object, mesh options)`` it was made from (``from_collision_object``), so
        that the robot can build it again in another mesh mode.

    """

    name: str
    geometry: object
    pose: object = None
    padding: float = 0.0
    mesh_mode: str = None
    source: tuple = None

    @classmethod
    def from_collision_object(cls, message, padding=0.0, mesh_mode=None, *, resolver=None):
        """
        Return the obstacle of a moveit_msgs/CollisionObject (message or dict of its fields).

        Named by its ``id``; its shapes (every SolidPrimitive type, meshes by ``mesh_mode``,
        planes as half-spaces) sit at their poses in the object frame, and the object's
        ``pose`` is the obstacle pose (``header.frame_id`` is taken to be the planner's
        world frame). Subframes are ignored. Dicts may use robowflex's YAML shorthand
        (MotionBenchMaker's scenes); a mesh given by ``resource`` is read with ``resolver``.

        Raises
        ------
        ModelError
            Naming the object's id and the field at fault, as the node rejects it.

        """
        from gjk_ros.models import ModelError
        from gjk_ros.models.collision_objects import MeshOptions, scene_object
        from gjk_ros.models.mesh_bodies import check_mode
        options = MeshOptions(check_mode(mesh_mode or DEFAULT_OBSTACLE_MESH_MODE), resolver)
        _, found = scene_object(message, mesh_options=options)
        name = found.id or '<no id>'
        if found.error is not None:
            raise ModelError(name, found.error)
        if not found.pieces:
            raise ModelError(name, 'the collision object has no shapes')
        return cls(name, list(found.pieces), found.pose, padding, mesh_mode, (message, options))


def load_obstacles(path, *, package_paths=None, resolver=None, mesh_mode=None,
                   padding: float = 0.0, joints=None) -> list:
    """
    Return the obstacles of a world file: PlanningScene YAML, MoveIt ``.scene`` or a URDF.

    YAML and ``.scene`` files are read by ``gjk_ros.models.scene_files``, each collision
    object becoming :meth:`Obstacle.from_collision_object`. A URDF world (MotionBenchMaker's
    kitchen) becomes one obstacle per link with collision geometry, named by the link, at its
    pose with its joints at ``joints`` (others at zero, clipped to their limits); its meshes
    follow ``mesh_mode``.
    Poses are in the file's root frame; place the robot with ``RobotDistances(base_pose=)``.

    Parameters
    ----------
    path : str or os.PathLike
        The file: ``.yaml``, ``.yml``, ``.scene`` or ``.urdf``.
    package_paths : mapping of str to str, optional
        ``package://`` name -> directory, for mesh URIs (see ResourceResolver).
    resolver : ResourceResolver, optional
        Instead of ``package_paths``.
    mesh_mode : str, optional
        Every obstacle's mesh mode; None leaves it to the robot's rule.
    padding : float
        Every obstacle's padding.
    joints : mapping of str to float, optional
        A URDF world's joint values (a door opened), by joint or variable name.

    Raises
    ------
    ModelError
        Naming the file, or the object (its id) and the field at fault.

    """
    import os
    from gjk_ros.models import ModelError, ResourceResolver
    resolver = resolver or ResourceResolver(package_paths)
    path = os.fspath(path)
    if path.lower().endswith('.urdf'):
        return _urdf_obstacles(path, resolver, mesh_mode, padding, dict(joints or {}))
    from gjk_ros.models.scene_files import read_scene_file
    scene = read_scene_file(path)
    obstacles = []
    for message in scene.objects:
        try:
            obstacles.append(Obstacle.from_collision_object(message, padding, mesh_mode,
                                                            resolver=resolver))
        except ModelError as error:
            raise ModelError(f'{path}: {error.body}', error.reason) from None
    return obstacles


def _urdf_obstacles(path, resolver, mesh_mode, padding, joints):
    from gjk_ros.models import ModelError
    from gjk_ros.models.kinematics import parse_kinematics
    from gjk_ros.models.urdf import parse_urdf_collisions
    try:
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ModelError(path, f'cannot read the URDF ({type(error).__name__})') from None
    kinematics = parse_kinematics(text)
    model = parse_urdf_collisions(text, resolver=resolver)
    if model.errors:
        raise model.errors[0]
    unknown = sorted(set(joints) - set(kinematics.variable_names))
    if unknown:
        raise ModelError(path, f'joints: no joint {unknown[0]!r} in the URDF')
    poses = kinematics.forward(kinematics.configuration(joints)[None])[0]
    return [Obstacle(link, list(model.pieces[link]), poses[kinematics.link_index(link)],
                     padding, mesh_mode)
            for link in kinematics.links if model.pieces.get(link)]


# A robot's and an obstacle's mesh mode when none is given: links keep their hulls (robot
# collision meshes are made near-convex, and exact links multiply every pair's pieces), the
# world's meshes are measured as they are (shelves, cupboards and bins have the cavities a
# robot works in: their hulls would put a hand inside them "in collision" with air).
DEFAULT_LINK_MESH_MODE = 'hull'
DEFAULT_OBSTACLE_MESH_MODE = 'exact'


@dataclass
class DistanceResults:
    """
    Signed distances of every body pair, for one configuration or N.

    Arrays have a leading (N,) axis for a trajectory and none for one configuration; the pair
    axis follows :attr:`pairs`. Values are those of the closest piece pair, padded (see
    :mod:`gjk_ros.core.bodypairs`); pairs that were not measured (BEYOND) hold NaN.

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

        BEYOND pairs are ignored; +inf when nothing was measured. A Python float for one
        configuration, an (N,) array for N.
        """
        lower = np.where(MEASURED[self.status.astype(np.int64)],
                         self.distance - self.error_bound, np.inf)
        smallest = lower.min(axis=-1, initial=np.inf)
        return float(smallest) if smallest.ndim == 0 else smallest

    def take(self, i: int) -> 'DistanceResults':
        """Return configuration ``i`` of an N-configuration result."""
        fields = ('distance', 'witness_a', 'witness_b', 'normal', 'status', 'error_bound',
                  'iterations', 'support_calls', 'piece_pair')
        return DistanceResults(self.pairs, self.is_self,
                               *(getattr(self, name)[i] for name in fields))

    def select(self, columns) -> 'DistanceResults':
        """Return the pairs at ``columns`` (indices into :attr:`pairs`), every other axis kept."""
        columns = np.asarray(columns, np.int64)
        fields = ('distance', 'witness_a', 'witness_b', 'normal', 'status', 'error_bound',
                  'iterations', 'support_calls', 'piece_pair')
        arrays = [np.take(getattr(self, name), columns, axis=self.distance.ndim - 1)
                  for name in fields]
        return DistanceResults(tuple(self.pairs[k] for k in columns), self.is_self[columns],
                               *arrays)


@dataclass(frozen=True)
class EdgeCheck:
    """
    Verdict of a certified segment check (truthy when the segment is free).

    Attributes
    ----------
    free : bool
        True when the whole segment is proven farther than the margin from every pair.
    fraction : float
        Where the first contact was found (1.0 when free): a configuration within the margin,
        or one whose clearance could not be certified to within the tolerance.
    certified : float
        The segment is proven free on ``[0, certified]`` (OMPL's last valid fraction).
    pair : tuple of (str, str) or None
        The body pair at the contact.

    """

    free: bool
    fraction: float
    certified: float
    pair: tuple | None = None

    def __bool__(self) -> bool:
        """Return :attr:`free`."""
        return self.free
