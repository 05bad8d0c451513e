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

from gjk_ros.core.rigid import MIN_QUATERNION_NORM
from gjk_ros.models.errors import ModelError
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.urdf import child_elements, DOCUMENT_BODY, robot_element
from gjk_ros.models.values import parse_numbers
import numba
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
_KIND_CODES = {'fixed': 0, 'revolute': 1, 'continuous': 1, 'prismatic': 2, 'planar': 3,
               'floating': 4}
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
        _forward(q, base, self._kernel, self._origins, self._axes, self._scalars, poses,
                 self._work)

    def joint_values(self, q) -> np.ndarray:
        """(N, J) value of every one-variable joint (mimic applied); NaN for the others."""
        q = np.asarray(q, dtype=np.float64).reshape(-1, self.dof)
        values = np.full((q.shape[0], len(self.joints)), np.nan)
        for i, (source, multiplier, offset) in enumerate(self._sources):
            if source >= 0:
                values[:, i] = multiplier * q[:, source] + offset
        return values

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
        self._work = np.empty((2, 4, 4))
        self._floating = [(joint.name, self._first[i]) for i, joint in enumerate(self.joints)
                          if joint.type == 'floating']


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


@numba.njit(cache=True, nogil=True)
def _forward(q, base, kernel, origins, axes, scalars, poses, scratch):
    """
    Compiled FK: ``T_child = T_parent @ origin @ motion(q)`` joint by joint (module docstring).

    ``kernel[j]`` = (parent link index, motion code, variable index with mimic resolved, first
    variable); ``scalars[j]`` = (multiplier, offset). ``scratch`` (2, 4, 4) holds the frame and
    the motion; nothing is allocated.
    """
    frame, motion = scratch[0], scratch[1]
    for n in range(q.shape[0]):
        poses[n, 0] = base
        for j in range(kernel.shape[0]):
            rigid_product(poses[n, kernel[j, 0]], origins[j], frame)
            _motion(q[n], kernel[j], axes[j], scalars[j], motion)
            rigid_product(frame, motion, poses[n, j + 1])


@numba.njit(cache=True, nogil=True)
def rigid_product(a, b, out):
    """``out = a @ b`` for rigid (4, 4) transforms (last row 0 0 0 1)."""
    for i in range(3):
        for j in range(4):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]
        out[i, 3] += a[i, 3]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@numba.njit(cache=True, nogil=True)
def _motion(q, codes, axis, scalars, motion):
    """Set ``motion`` to the joint's transform at configuration ``q`` (module docstring)."""
    for i in range(4):
        for j in range(4):
            motion[i, j] = 1.0 if i == j else 0.0
    kind = codes[1]
    if kind == 1 or kind == 2:
        value = scalars[0] * q[codes[2]] + scalars[1]
        if kind == 2:
            for c in range(3):
                motion[c, 3] = axis[c] * value
        else:
            _axis_angle(axis[0], axis[1], axis[2], value, motion)
    elif kind == 3:
        first = codes[3]
        _axis_angle(0.0, 0.0, 1.0, q[first + 2], motion)
        motion[0, 3], motion[1, 3] = q[first], q[first + 1]
    elif kind == 4:
        first = codes[3]
        _quaternion(q[first + 3], q[first + 4], q[first + 5], q[first + 6], motion)
        for c in range(3):
            motion[c, 3] = q[first + c]


@numba.njit(cache=True, nogil=True)
def _axis_angle(x, y, z, angle, out):
    """Rotation by ``angle`` about the unit axis (x, y, z) (Rodrigues) into out[:3, :3]."""
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    out[0, 0], out[0, 1], out[0, 2] = c + t * x * x, t * x * y - s * z, t * x * z + s * y
    out[1, 0], out[1, 1], out[1, 2] = t * x * y + s * z, c + t * y * y, t * y * z - s * x
    out[2, 0], out[2, 1], out[2, 2] = t * x * z - s * y, t * y * z + s * x, c + t * z * z


@numba.njit(cache=True, nogil=True)
def _quaternion(x, y, z, w, out):
    """Rotation of the quaternion (x, y, z, w), normalised here, into out[:3, :3]."""
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    out[0, 0], out[0, 1], out[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), \
        2 * (x * z + y * w)
    out[1, 0], out[1, 1], out[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), \
        2 * (y * z - x * w)
    out[2, 0], out[2, 1], out[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), \
        1 - 2 * (x * x + y * y)


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
