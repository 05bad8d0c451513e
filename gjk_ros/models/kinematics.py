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
URDF joint tree and forward kinematics, vectorised over N configurations (numpy only).

Joints (URDF spec, ``<joint type>``): ``fixed``, ``revolute``, ``continuous``, ``prismatic``,
``floating`` and ``planar``; ``<origin xyz rpy>`` (the child frame at zero motion, in the
parent link frame), ``<axis xyz>`` (default 1 0 0, normalised), ``<limit lower upper>`` and
``<mimic joint multiplier offset>`` (``value = multiplier * master + offset``; defaults 1, 0).

The configuration vector follows MoveIt's variable layout, in joint document order:

* revolute, continuous (radians), prismatic (metres): one variable named as the joint;
* planar: ``<joint>/x``, ``<joint>/y``, ``<joint>/theta``: motion in the xy plane of the joint
  frame, as MoveIt and Pinocchio do (the ``<axis>`` of a planar joint is ignored, with a warning
  when it is not +-z);
* floating: ``<joint>/trans_x``, ``trans_y``, ``trans_z``, ``rot_x``, ``rot_y``, ``rot_z``,
  ``rot_w`` (a quaternion x, y, z, w; normalised here, so any non-zero quaternion is valid);
* fixed and mimic joints have no variable.

A link's pose is ``T_link = T_parent @ origin @ motion(q)``, with ``motion`` a rotation about
``axis`` (revolute, continuous), a translation along it (prismatic), ``[Rz(theta) | x, y, 0]``
(planar) or ``[R(quaternion) | t]`` (floating). :meth:`KinematicModel.forward` evaluates this
for N configurations at once, one vectorised step per joint.
"""

from dataclasses import dataclass
import math

from gjk_ros.core.chain import chain_forward, MOTION_FIXED, MOTION_FLOATING, MOTION_PLANAR, \
    MOTION_PRISMATIC, MOTION_REVOLUTE
from gjk_ros.core.rigid import MIN_QUATERNION_NORM
from gjk_ros.models.errors import ModelError
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.urdf import child_elements, DOCUMENT_BODY, robot_element
from gjk_ros.models.values import parse_numbers
import numpy as np

JOINT_TYPES = ('fixed', 'revolute', 'continuous', 'prismatic', 'floating', 'planar')
_SUFFIXES = {
    'fixed': (),
    'revolute': ('',),
    'continuous': ('',),
    'prismatic': ('',),
    'planar': ('/x', '/y', '/theta'),
    'floating': ('/trans_x', '/trans_y', '/trans_z', '/rot_x', '/rot_y', '/rot_z', '/rot_w'),
}
# Motion codes of the compiled FK (continuous moves as revolute).
_KIND_CODES = {'fixed': MOTION_FIXED, 'revolute': MOTION_REVOLUTE, 'continuous': MOTION_REVOLUTE,
               'prismatic': MOTION_PRISMATIC, 'planar': MOTION_PLANAR,
               'floating': MOTION_FLOATING}
_IDENTITY = np.eye(4)
# Joints and links a description may hold; keeps a hostile document from costing unbounded time.
MAX_JOINTS = 10_000


@dataclass(frozen=True)
class Joint:
    """
    One URDF joint.

    Attributes
    ----------
    name, type, parent, child : str
        As in the URDF; ``type`` is one of ``JOINT_TYPES``.
    origin : numpy.ndarray
        (4, 4) child frame in the parent link frame at zero motion.
    axis : numpy.ndarray
        (3,) unit axis in the joint frame.
    lower, upper : float
        Limits of a one-variable joint (radians or metres); -inf, inf when unbounded.
    mimic : tuple of (str, float, float) or None
        (master joint, multiplier, offset).

    """

    name: str
    type: str  # noqa: A003 - the URDF attribute's name
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float = -math.inf
    upper: float = math.inf
    mimic: tuple | None = None


class KinematicModel:
    """
    The kinematic tree of a URDF and its forward kinematics.

    Attributes
    ----------
    name : str
        The ``<robot name>``.
    links : tuple of str
        Every link, root first, each after its parent; :meth:`forward` returns poses in this
        order.
    joints : tuple of Joint
        ``joints[i - 1]`` moves ``links[i]`` (its parent joint).
    variable_names : tuple of str
        The configuration vector's entries (module docstring).
    lower, upper : numpy.ndarray
        (dof,) variable limits; -inf, inf where unbounded (quaternions: -1, 1).
    warnings : list of str
        Things that were accepted but the user should hear about.

    """

    def __init__(self, name: str, root: str, joints, warnings=()):
        """Order the tree from ``root`` and lay out the variables (see parse_kinematics)."""
        self.name = name
        self.warnings = list(warnings)
        by_child = {joint.child: joint for joint in joints}
        self.links, self.joints = _topological(root, joints, by_child)
        self._index = {link: i for i, link in enumerate(self.links)}
        self._parent = np.array([-1] + [self._index[j.parent] for j in self.joints], np.int64)
        self.variable_names, self.lower, self.upper, self._first = _variables(self.joints)
        self._sources = _mimic_sources(self.joints, self._first)
        self._origins = np.array([joint.origin for joint in self.joints]).reshape(-1, 4, 4)
        self._kernel_arrays()
        self._twist_arrays()

    @property
    def dof(self) -> int:
        """Length of the configuration vector."""
        return len(self.variable_names)

    def link_index(self, link: str) -> int:
        """Position of ``link`` in :attr:`links` (KeyError naming it otherwise)."""
        try:
            return self._index[link]
        except KeyError:
            raise KeyError(f'unknown link {link!r}') from None

    def parent(self, link: str) -> str | None:
        """Parent link of ``link`` (None for the root)."""
        index = self._parent[self.link_index(link)]
        return None if index < 0 else self.links[index]

    def adjacent_pairs(self) -> set:
        """Every (parent, child) pair joined by a joint, as frozensets of two link names."""
        return {frozenset((joint.parent, joint.child)) for joint in self.joints}

    def neutral(self) -> np.ndarray:
        """Zero configuration (identity quaternions for floating joints), clipped to limits."""
        q = np.clip(np.zeros(self.dof), self.lower, self.upper)
        for name_index, name in enumerate(self.variable_names):
            if name.endswith('/rot_w'):
                q[name_index] = 1.0
        return q

    def configuration(self, values: dict, base=None) -> np.ndarray:
        """Build a configuration vector from ``{variable name: value}`` over ``base``."""
        q = self.neutral() if base is None else np.array(base, dtype=np.float64)
        names = {name: i for i, name in enumerate(self.variable_names)}
        for name, value in values.items():
            if name not in names:
                raise KeyError(f'unknown joint variable {name!r}')
            q[names[name]] = float(value)
        return q

    def forward(self, q, base_pose=None, out=None) -> np.ndarray:
        """
        Pose of every link for one or N configurations.

        Parameters
        ----------
        q : array-like
            (dof,) or (N, dof) finite configuration(s).
        base_pose : array-like, optional
            (4, 4) pose of the root link in the world; default identity.
        out : numpy.ndarray, optional
            (N, L, 4, 4) C-contiguous float64 array to write into (for reuse).

        Returns
        -------
        numpy.ndarray
            (L, 4, 4) or (N, L, 4, 4) link-to-world transforms, in :attr:`links` order.

        """
        q = np.asarray(q, dtype=np.float64)
        single = q.ndim == 1
        q = np.atleast_2d(q)
        if q.ndim != 2 or q.shape[1] != self.dof:
            raise ValueError(f'q: expected ({self.dof},) or (N, {self.dof}), got {q.shape}')
        if not np.isfinite(q).all():
            raise ValueError('q: configurations must be finite')
        base = _IDENTITY if base_pose is None else np.asarray(base_pose, dtype=np.float64)
        if base_pose is not None and (base.shape != (4, 4) or not np.isfinite(base).all()):
            raise ValueError('base_pose: expected a finite (4, 4) matrix')
        shape = (q.shape[0], len(self.links), 4, 4)
        poses = np.empty(shape) if out is None else out
        if poses.shape != shape or poses.dtype != np.float64 or not poses.flags.c_contiguous:
            raise ValueError(f'out: expected a C-contiguous float64 array of shape {shape}')
        self.forward_into(q, base, poses)
        return poses[0] if single else poses

    def forward_into(self, q, base, poses):
        """
        :meth:`forward` without its argument checks, for callers that made them.

        ``q`` (N, dof) finite, ``base`` (4, 4) and ``poses`` (N, L, 4, 4) C-contiguous float64.
        """
        if self._floating:
            self._check_quaternions(q)
        chain_forward(q, base, self._kernel, self._origins, self._axes, self._scalars, poses,
                      np.empty((2, 4, 4)))

    def joint_values(self, q) -> np.ndarray:
        """(N, J) value of every one-variable joint (mimic applied); NaN for the others."""
        q = np.asarray(q, dtype=np.float64).reshape(-1, self.dof)
        values = np.full((q.shape[0], len(self.joints)), np.nan)
        for i, (source, multiplier, offset) in enumerate(self._sources):
            if source >= 0:
                values[:, i] = multiplier * q[:, source] + offset
        return values

    @property
    def chain_arrays(self) -> tuple:
        """Return the compiled FK's arrays ``(kernel, origins, axes, scalars)`` (core.chain)."""
        return self._kernel, self._origins, self._axes, self._scalars

    def ancestors(self) -> np.ndarray:
        """(L, L) bool: ``[a, l]`` is True when link ``a`` is ``l`` or one of its ancestors."""
        table = np.eye(len(self.links), dtype=bool)
        for child in range(1, len(self.links)):
            table[:, child] |= table[:, self._parent[child]]
        return table

    def twists(self, q, link_poses):
        """
        World twists of every joint motion, for the Jacobian of a point on a link.

        A point ``p`` fixed to a link below twist ``t``'s joint moves at ``V[t] + W[t] x p`` per
        unit of the twist's variable, times :attr:`twist_scale` (the mimic multiplier). Twists
        follow the joints: revolute (rotation about the axis through the child origin),
        prismatic (translation along the axis), planar (x, y along the joint frame, theta
        about its z), floating (its three translations; its quaternion entries have no twist
        and are not listed).

        Parameters
        ----------
        q : numpy.ndarray
            (N, dof) configurations.
        link_poses : numpy.ndarray
            (N, L, 4, 4) from :meth:`forward`.

        Returns
        -------
        tuple of numpy.ndarray
            ``W``, ``V`` (N, T, 3) in the world frame.

        """
        count = link_poses.shape[0]
        angular, linear = np.zeros((count, self._twist_count, 3)), \
            np.zeros((count, self._twist_count, 3))
        child = link_poses[:, self.twist_link]
        parent = link_poses[:, self._parent[self.twist_link]]
        frame = parent[:, :, :3, :3] @ self._origins[self.twist_link - 1][:, :3, :3]
        origin = child[:, :, :3, 3]
        rotations = self.twist_kind == 0
        axis_world = np.einsum('ntij,tj->nti', child[:, :, :3, :3], self._twist_axis)
        frame_axis = np.einsum('ntij,tj->nti', frame, self._twist_axis)
        angular[:, rotations] = axis_world[:, rotations]
        linear[:, rotations] = np.cross(origin[:, rotations], axis_world[:, rotations])
        linear[:, ~rotations] = frame_axis[:, ~rotations]
        return angular, linear

    def motion_bounds(self, link_radii) -> np.ndarray:
        """
        Per-link motion bounds: no point of link ``l`` moves farther than ``sum_v M[l, v] |dq_v|``.

        ``link_radii[l]`` bounds the distance of link ``l``'s geometry from its frame origin.
        See :meth:`pair_motion_bounds`; this is each link against a fixed body.
        """
        count = len(self.links)
        return self.pair_motion_bounds(link_radii, np.arange(count), np.full(count, -1))

    def pair_motion_bounds(self, link_radii, first, second) -> np.ndarray:
        """
        Bounds on how fast the distance of two bodies changes with each variable.

        Along any joint-space path the distance of link ``first[k]`` to link ``second[k]`` (or
        to a fixed body when ``second[k]`` is -1) changes by at most ``sum_v B[k, v] |dq_v|``.
        A rotation about an axis through a joint's child origin moves a point at most by the
        angle times its distance from that origin, which is at most the joint offsets down the
        chain (plus every prismatic joint's largest extension within its limits) plus the
        link's radius (Schwarzer, Saha and Latombe's bound for exact collision checking of
        paths); a translation moves it by the translation. A joint above both links moves them
        together and does not count. Unbounded extensions and quaternion entries give inf.

        Parameters
        ----------
        link_radii : array-like
            (L,) bound on the distance of each link's geometry from its frame origin.
        first, second : array-like
            (K,) link indices; ``second`` -1 for a fixed body.

        Returns
        -------
        numpy.ndarray
            (K, dof) non-negative, possibly inf.

        """
        radii = np.asarray(link_radii, dtype=np.float64)
        first, second = np.asarray(first, np.int64), np.asarray(second, np.int64)
        fixed = second < 0
        second = np.where(fixed, 0, second)
        below = self.ancestors()
        reach = self._reach()
        bounds = np.zeros((first.shape[0], self.dof))
        for t in range(self._twist_count):
            link = self.twist_link[t]
            moves_a, moves_b = below[link, first], below[link, second] & ~fixed
            if self.twist_kind[t] == 0:
                size_a = reach[link, first] + radii[first]
                size_b = reach[link, second] + radii[second]
            else:
                size_a = size_b = np.ones(first.shape[0])
            total = np.where(moves_a & ~moves_b, size_a, 0.0) + \
                np.where(moves_b & ~moves_a, size_b, 0.0)
            bounds[:, self.twist_variable[t]] += abs(self.twist_scale[t]) * total
        for _, start in self._floating:
            link = self._child_of_variable(start)
            alone = below[link, first] ^ (below[link, second] & ~fixed)
            bounds[:, start + 3:start + 7] = np.where(alone, np.inf, 0.0)[:, None]
        return bounds

    def _child_of_variable(self, first):
        return 1 + next(j for j in range(len(self.joints)) if self._first[j] == first)

    def _reach(self) -> np.ndarray:
        """(L, L): bound on the distance from link ``a``'s origin to link ``l``'s (a above l)."""
        count = len(self.links)
        reach = np.zeros((count, count))
        step = np.zeros(count)
        for j, joint in enumerate(self.joints):
            step[j + 1] = np.linalg.norm(joint.origin[:3, 3]) + self._extension(j)
        below = self.ancestors()
        for link in range(1, count):
            parent = self._parent[link]
            reach[:, link] = np.where(below[:, parent], reach[:, parent] + step[link], 0.0)
        return reach

    def _extension(self, j) -> float:
        """Largest translation joint ``j``'s own motion can add (0 for rotations)."""
        joint = self.joints[j]
        if joint.type == 'prismatic':
            _, multiplier, offset = self._sources[j]
            lower, upper = joint.lower, joint.upper
            if joint.mimic is not None:
                master = self.joints[[k.name for k in self.joints].index(joint.mimic[0])]
                lower, upper = master.lower, master.upper
            return max(abs(multiplier * lower + offset), abs(multiplier * upper + offset))
        return math.inf if joint.type in ('planar', 'floating') else 0.0

    def _check_quaternions(self, q):
        for name, first in self._floating:
            norm = np.linalg.norm(q[:, first + 3:first + 7], axis=1)
            if np.any(norm < MIN_QUATERNION_NORM):
                raise ValueError(f'{name}: floating joint quaternion has zero length')

    def _kernel_arrays(self):
        """Per-joint arrays of the compiled FK: codes and indices, then reals."""
        self._kernel = np.array([(self._parent[i + 1], _KIND_CODES[joint.type],
                                  self._sources[i][0], self._first[i])
                                 for i, joint in enumerate(self.joints)],
                                np.int64).reshape(-1, 4)
        self._scalars = np.array([self._sources[i][1:] for i in range(len(self.joints))],
                                 np.float64).reshape(-1, 2)
        self._axes = np.array([joint.axis for joint in self.joints]).reshape(-1, 3)
        self._floating = [(joint.name, self._first[i]) for i, joint in enumerate(self.joints)
                          if joint.type == 'floating']

    def _twist_arrays(self):
        """Describe every twist (see :meth:`twists`): link, variable, scale, kind, axis."""
        rows = []
        for j, joint in enumerate(self.joints):
            source, multiplier, _ = self._sources[j]
            if joint.type in ('revolute', 'continuous'):
                rows.append((j + 1, source, multiplier, 0, joint.axis))
            elif joint.type == 'prismatic':
                rows.append((j + 1, source, multiplier, 1, joint.axis))
            elif joint.type == 'planar':
                first = self._first[j]
                rows += [(j + 1, first, 1.0, 1, np.array([1.0, 0.0, 0.0])),
                         (j + 1, first + 1, 1.0, 1, np.array([0.0, 1.0, 0.0])),
                         (j + 1, first + 2, 1.0, 0, np.array([0.0, 0.0, 1.0]))]
            elif joint.type == 'floating':
                rows += [(j + 1, self._first[j] + c, 1.0, 1, np.eye(3)[c]) for c in range(3)]
        self._twist_count = len(rows)
        self.twist_link = np.array([r[0] for r in rows], np.int64)
        self.twist_variable = np.array([r[1] for r in rows], np.int64)
        self.twist_scale = np.array([r[2] for r in rows], np.float64)
        self.twist_kind = np.array([r[3] for r in rows], np.int64)
        self._twist_axis = np.array([r[4] for r in rows], np.float64).reshape(-1, 3)


def parse_kinematics(urdf_xml: str) -> KinematicModel:
    """
    Read the joint tree of a URDF document.

    Raises
    ------
    ModelError
        With body ``'robot_description'`` for the document (malformed, no single root, a
        cycle, a link with two parent joints, too many joints) or the joint's name (unknown
        type or link, bad numbers, zero axis, bad mimic).

    """
    root_element = robot_element(urdf_xml)
    links = [link.get('name', '') for link in child_elements(root_element, 'link')]
    elements = child_elements(root_element, 'joint')
    if len(elements) > MAX_JOINTS or len(links) > MAX_JOINTS + 1:
        raise ModelError(DOCUMENT_BODY, f'more than {MAX_JOINTS} joints or links')
    warnings = []
    joints = [_joint(element, index, set(links), warnings)
              for index, element in enumerate(elements, start=1)]
    _check_tree(links, joints)
    children = {joint.child for joint in joints}
    roots = [link for link in dict.fromkeys(links) if link not in children]
    if len(roots) != 1:
        raise ModelError(DOCUMENT_BODY, f'expected one root link, found {len(roots)}: '
                                        f'{", ".join(roots[:5])}')
    return KinematicModel(root_element.get('name', ''), roots[0], joints, warnings)


def _joint(element, index: int, links: set, warnings: list) -> Joint:
    name = element.get('name', '') or f'joint #{index}'
    kind = element.get('type', '')
    try:
        if kind not in JOINT_TYPES:
            raise ValueError(f'unsupported joint type {kind!r} (expected '
                             f'{", ".join(JOINT_TYPES)})')
        parent, child = (_link_of(element, tag, links) for tag in ('parent', 'child'))
        origin = _origin(element)
        axis = _axis(element, kind)
        if kind == 'planar' and abs(abs(axis[2]) - 1.0) > 1e-12 and _has(element, 'axis'):
            warnings.append(f'{name}: planar joint axis {axis.tolist()} ignored; motion is in '
                            'the xy plane of the joint frame (as MoveIt and Pinocchio)')
        lower, upper = _limits(element, kind)
        mimic = _mimic(element, kind)
    except ValueError as error:
        raise ModelError(name, str(error)) from None
    return Joint(name, kind, parent, child, origin, axis, lower, upper, mimic)


def _has(element, tag: str) -> bool:
    return bool(child_elements(element, tag))


def _link_of(element, tag: str, links: set) -> str:
    found = child_elements(element, tag)
    link = found[0].get('link', '') if found else ''
    if not link:
        raise ValueError(f'no <{tag} link=...>')
    if link not in links:
        raise ValueError(f'<{tag}> names unknown link {link!r}')
    return link


def _origin(element) -> np.ndarray:
    found = child_elements(element, 'origin')
    if not found:
        return np.eye(4)
    return xyz_rpy_to_matrix(found[0].get('xyz', '0 0 0'), found[0].get('rpy', '0 0 0'))


def _axis(element, kind: str) -> np.ndarray:
    if kind in ('fixed', 'floating'):
        # urdfdom reads no axis for these: example-robot-data's Kinova arm has a fixed joint
        # with <axis xyz="0 0 0"/>, which robot_state_publisher and MoveIt accept.
        return np.array([1.0, 0.0, 0.0])
    found = child_elements(element, 'axis')
    axis = parse_numbers(found[0].get('xyz', '1 0 0') if found else '1 0 0', 'axis', 3)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-12:
        raise ValueError('axis has zero length')
    return axis / norm


def _limits(element, kind: str):
    found = child_elements(element, 'limit')
    if kind not in ('revolute', 'prismatic') or not found:
        return -math.inf, math.inf
    lower = float(parse_numbers(found[0].get('lower', '0'), 'limit lower', 1)[0])
    upper = float(parse_numbers(found[0].get('upper', '0'), 'limit upper', 1)[0])
    if lower > upper:
        raise ValueError(f'limit lower {lower:g} > upper {upper:g}')
    return lower, upper


def _mimic(element, kind: str):
    found = child_elements(element, 'mimic')
    if not found:
        return None
    if kind not in ('revolute', 'continuous', 'prismatic'):
        raise ValueError(f'a {kind} joint cannot mimic another joint')
    master = found[0].get('joint', '')
    if not master:
        raise ValueError('<mimic> without a joint attribute')
    multiplier = float(parse_numbers(found[0].get('multiplier', '1'), 'mimic multiplier', 1)[0])
    offset = float(parse_numbers(found[0].get('offset', '0'), 'mimic offset', 1)[0])
    return master, multiplier, offset


def _check_tree(links, joints):
    seen = set()
    for joint in joints:
        if joint.child in seen:
            raise ModelError(joint.name, f'link {joint.child!r} has more than one parent joint')
        seen.add(joint.child)
    names = [joint.name for joint in joints]
    if len(set(names)) != len(names):
        raise ModelError(DOCUMENT_BODY, 'duplicate joint names')
    if len(set(links)) != len(links) or '' in links:
        raise ModelError(DOCUMENT_BODY, 'link names must be present and unique')


def _topological(root: str, joints, by_child):
    children = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint)
    links, ordered, frontier = [root], [], [root]
    while frontier:
        link = frontier.pop(0)
        for joint in children.get(link, ()):
            links.append(joint.child)
            ordered.append(joint)
            frontier.append(joint.child)
    if len(ordered) != len(joints):
        unreached = sorted(set(by_child) - set(links))
        raise ModelError(DOCUMENT_BODY, f'joints form a cycle or a second tree: links '
                                        f'{", ".join(unreached[:5])} are not below the root')
    return tuple(links), tuple(ordered)


def _variables(joints):
    names, lower, upper, first = [], [], [], []
    for joint in joints:
        first.append(len(names))
        if joint.mimic is not None:
            continue
        for suffix in _SUFFIXES[joint.type]:
            names.append(joint.name + suffix)
            lower.append(joint.lower if suffix == '' else _variable_limit(suffix, -1.0))
            upper.append(joint.upper if suffix == '' else _variable_limit(suffix, 1.0))
    return tuple(names), np.array(lower), np.array(upper), first


def _variable_limit(suffix: str, sign: float) -> float:
    return sign if suffix.startswith('/rot_') else sign * math.inf


def _mimic_sources(joints, first):
    """(variable index, multiplier, offset) of every one-variable joint, -1 for the others."""
    by_name = {joint.name: i for i, joint in enumerate(joints)}
    sources = []
    for i, joint in enumerate(joints):
        if _SUFFIXES[joint.type] != ('',):
            sources.append((-1, 0.0, 0.0))
            continue
        multiplier, offset, seen = 1.0, 0.0, {joint.name}
        while joints[i].mimic is not None:
            master, factor, shift = joints[i].mimic
            if master not in by_name or _SUFFIXES[joints[by_name[master]].type] != ('',):
                raise ModelError(joint.name, f'mimics {master!r}, which is not a revolute, '
                                             'continuous or prismatic joint')
            if master in seen:
                raise ModelError(joint.name, 'mimic joints form a cycle')
            seen.add(master)
            multiplier, offset = multiplier * factor, multiplier * shift + offset
            i = by_name[master]
        sources.append((first[i], multiplier, offset))
    return sources


def self_collision_pairs(links, adjacent, is_disabled=None):
    """
    Return the (first, second) link pairs to measure for self-collision, in ``links`` order.

    Every pair of distinct links except those joined by a joint (``adjacent``: frozensets of
    two names, as ``KinematicModel.adjacent_pairs`` gives; MoveIt's default) and those
    ``is_disabled(first, second)`` rejects (an SRDF's ``disable_collisions``).
    """
    pairs = []
    for index, first in enumerate(links):
        for second in links[index + 1:]:
            if frozenset((first, second)) in adjacent or \
                    (is_disabled is not None and is_disabled(first, second)):
                continue
            pairs.append((first, second))
    return pairs
