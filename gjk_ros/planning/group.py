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
Planning groups: the checks a planner calls, over a subset of the robot's variables.

A :class:`PlanningGroup` moves some variables (an SRDF group, or a list of joints) and holds
the others at fixed values; the body pairs it checks are a selection of the robot's, without
the pairs its variables cannot move (their distance is constant along any plan). Every check
is one compiled call (core.collision): :meth:`PlanningGroup.in_collision` and its batch form
stop at the first pair within the margin, :meth:`PlanningGroup.edge_free` certifies a segment,
:meth:`PlanningGroup.gradients` differentiates every pair's distance.

Gradients. The signed distance of two bodies is ``n . (p_b - p_a)`` at the witness points;
moving the configuration moves each witness with its link, and to first order only that motion
changes the distance (the witnesses slide along the surfaces, perpendicular to ``n``), so
``d(distance)/dq_v = n . (J_b(p_b) - J_a(p_a))[:, v]`` with ``J`` the point Jacobians of the
chain (``KinematicModel.twists``); a joint above both links moves both and cancels. Where the
closest features are not unique (parallel faces) this is one of the one-sided derivatives.
"""

import math

from gjk_ros.core.collision import configurations_hit, segment_hit
from gjk_ros.models.srdf import group_joints
from gjk_ros.planning.results import EdgeCheck
import numpy as np

__all__ = ['PlanningGroup', 'group_variables']


def group_variables(robot, joints) -> np.ndarray:
    """Variable indices of an SRDF group name or of joint / variable names, in vector order."""
    kinematics = robot.kinematics
    if isinstance(joints, str):
        if robot.srdf is None or joints not in robot.srdf.groups:
            raise KeyError(f'no SRDF group {joints!r}')
        joints = group_joints(robot.srdf.groups, [(joint.name, joint.parent, joint.child)
                                                  for joint in kinematics.joints], joints)
    names = set(joints)
    chosen = []
    for index, variable in enumerate(kinematics.variable_names):
        if variable in names or variable.split('/')[0] in names:
            chosen.append(index)
    known = set(kinematics.variable_names) | {j.name for j in kinematics.joints}
    unknown = sorted(names - known)
    if unknown:
        raise KeyError(f'unknown joints {unknown[:5]}')
    return np.array(chosen, np.int64)


class PlanningGroup:
    """
    Checks over a subset of a robot's variables, the others fixed.

    Made by :meth:`RobotDistances.group`; a robot's own check methods use the group of every
    variable and every pair. Configurations passed to the methods have :attr:`dof` entries in
    :attr:`variable_names` order. Every method holds the robot's lock.

    Attributes
    ----------
    variables : numpy.ndarray
        Indices of the group's variables in the robot's configuration vector.
    variable_names : tuple of str
    fixed : numpy.ndarray
        The full configuration the group's variables are written into.
    pair_columns : numpy.ndarray
        Indices (into ``robot.pairs``) of the body pairs checked.
    constant_pairs : tuple of (str, str)
        Selected pairs left out because the group cannot move them.

    """

    def __init__(self, robot, variables, fixed, pairs=None, include_constant=False):
        """Select the variables and the piece pairs; allocate the check arrays."""
        self.robot = robot
        self.variables = np.asarray(list(variables), np.int64)
        self.variable_names = tuple(robot.kinematics.variable_names[v] for v in self.variables)
        self.fixed = np.array(fixed, np.float64)
        engine = robot.engine
        selected = _selected_pairs(robot.pairs, pairs)
        moving = np.zeros(len(robot.pairs), bool)
        bounds = robot.pair_bounds[:, self.variables]
        np.logical_or.at(moving, engine.owner, (bounds > 0.0).any(axis=1))
        keep = selected & (moving | include_constant)
        self.pair_columns = np.flatnonzero(keep)
        self.constant_pairs = tuple(robot.pairs[k] for k in np.flatnonzero(selected & ~keep))
        order = np.flatnonzero(keep[engine.owner])
        self._checks = robot.checks(order)
        # A segment moves only the group's variables: the others' bounds never count.
        full_bounds = np.zeros_like(robot.pair_bounds)
        full_bounds[:, self.variables] = bounds
        self._bounds = np.ascontiguousarray(full_bounds)
        self._everything = np.array_equal(self.variables, np.arange(self.fixed.shape[0]))
        self._row = self.fixed[None].copy()
        self._one_hit = np.empty(1, np.int64)
        self._floating = bool(robot.kinematics._floating)
        steps = np.diff(self.variables)
        self._columns = slice(int(self.variables[0]), int(self.variables[-1]) + 1) if \
            self.dof and (steps == 1).all() else self.variables
        self._single_call = (self._row,) + robot.kernel_arguments() + \
            self._checks.pair_arguments()

    @property
    def dof(self) -> int:
        return self.variables.shape[0]

    @property
    def pairs(self) -> tuple:
        """Return the body pairs checked, in :attr:`pair_columns` order."""
        return tuple(self.robot.pairs[k] for k in self.pair_columns)

    @property
    def stats(self) -> np.ndarray:
        """
        Return the work of the checks so far.

        Piece pairs tested, piece pairs culled, GJK iterations, support calls, and cull groups
        (body pairs, or clusters of a large obstacle's pieces) culled whole by the broad phase
        (machine-independent counts).
        """
        return self._checks.stats.copy()

    def full(self, qs) -> np.ndarray:
        """Return the robot configurations of group configurations ``qs`` ((dof,) or (N, dof))."""
        qs = np.asarray(qs, dtype=np.float64)
        if qs.shape[-1:] != (self.dof,) or qs.ndim > 2:
            raise ValueError(f'expected (..., {self.dof}) group configurations, got {qs.shape}')
        if self._everything:
            return qs.copy()
        out = np.empty(qs.shape[:-1] + self.fixed.shape)
        out[...] = self.fixed
        out[..., self.variables] = qs
        return out

    def in_collision(self, q, margin: float = 0.0) -> bool:
        """Return True when a checked pair's padded distance is at most ``margin`` at ``q``."""
        margin = _margin(margin)
        q = np.asarray(q, dtype=np.float64)
        # q.q is finite exactly when every entry is (short of 1e154): one call, not two.
        if q.shape != (self.dof,) or not math.isfinite(q.dot(q)):
            raise ValueError(f'q: expected finite ({self.dof},), got {q!r}')
        with self.robot.lock:
            # One reused row and argument tuple: the single call is what a sampling planner
            # makes most often, and its Python work is most of its cost.
            self._row[0, self._columns] = q
            if self._floating:
                self.robot.kinematics._check_quaternions(self._row)
            configurations_hit(*self._single_call, margin, self._one_hit, self._checks.stats)
            return bool(self._one_hit[0] >= 0)

    def in_collision_batch(self, qs, margin: float = 0.0) -> np.ndarray:
        """(N,) bool: :meth:`in_collision` of each of N unrelated configurations."""
        return self._hits(qs, margin) >= 0

    def colliding_pair(self, q, margin: float = 0.0):
        """Return the first body pair found within ``margin`` at ``q``, or None."""
        hit = self._hits(np.asarray(q, np.float64)[None], margin)[0]
        return None if hit < 0 else self.robot.pairs[self.robot.engine.owner[hit]]

    def _hits(self, qs, margin) -> np.ndarray:
        margin = _margin(margin)
        full = self.robot.check_configurations(self.full(qs))
        checks = self._checks
        with self.robot.lock:
            hits = checks.hit_buffer(full.shape[0])
            configurations_hit(full, *self.robot.kernel_arguments(), *checks.pair_arguments(),
                               margin, hits, checks.stats)
            return hits.copy()

    def edge_free(self, q0, q1, margin: float = 0.0, tolerance: float = 1e-4) -> EdgeCheck:
        """
        Certify the segment ``q0 -> q1``: no checked pair comes within ``margin`` on it.

        Conservative (core.collision): a free answer is a proof for every configuration of
        the segment, not only for samples; a segment whose clearance dips below ``margin +
        tolerance`` metres may be reported as a contact. Returns an :class:`EdgeCheck`
        (truthy when free) with the contact's fraction and pair otherwise.
        """
        margin, tolerance = _margin(margin), float(tolerance)
        if not tolerance > 0.0:
            raise ValueError('tolerance must be > 0')
        ends = self.robot.check_configurations(self.full(np.stack([q0, q1])))
        checks = self._checks
        with self.robot.lock:
            segment_hit(ends[0], ends[1], *self.robot.kernel_arguments(),
                        *checks.segment_arguments(self._bounds), margin, tolerance,
                        checks.stats)
            free, fraction, certified = (float(x) for x in checks.result)
            pair = None
            if not free:
                hit = int(checks.order[0])
                pair = self.robot.pairs[self.robot.engine.owner[hit]]
        return EdgeCheck(free == 1.0, fraction, certified, pair)

    def distances(self, q):
        """Distances of the checked pairs at ``q`` (a DistanceResults over :attr:`pairs`)."""
        return self.robot.distances(self.full(q)).select(self.pair_columns)

    def min_distance(self, q) -> float:
        """Smallest padded distance of the checked pairs at ``q`` (fail-safe lower bound)."""
        return self.distances(q).min_distance()

    def gradients(self, qs):
        """
        Distances and their gradients with respect to the group's variables.

        Parameters
        ----------
        qs : array-like
            (dof,) or (N, dof) group configurations.

        Returns
        -------
        (DistanceResults, numpy.ndarray)
            The checked pairs' distances and ``d(distance)/dq`` of shape (..., K, dof); NaN
            for pairs not measured and for quaternion entries of a floating joint.

        """
        qs = np.asarray(qs, dtype=np.float64)
        single = qs.ndim == 1
        full = self.robot.check_configurations(self.full(np.atleast_2d(qs)))
        results = self.robot.trajectory(full).select(self.pair_columns)
        gradient = pair_gradients(self.robot, full, results, self.pair_columns)
        gradient = gradient[..., self.variables]
        if single:
            return results.take(0), gradient[0]
        return results, gradient


def pair_gradients(robot, qs, results, columns) -> np.ndarray:
    """(N, K, dof) d(distance)/dq of body pairs ``columns`` (module docstring)."""
    kinematics = robot.kinematics
    poses = robot.link_poses(qs)
    angular, linear = kinematics.twists(qs, poses)
    links = robot._pair_links[columns]
    below = kinematics.ancestors()[kinematics.twist_link]  # (T, L)
    moves_a = below[:, links[:, 0]].T  # (K, T)
    moves_b = np.where(links[:, 1:2] >= 0, below[:, np.maximum(links[:, 1], 0)].T, False)
    normal = results.normal
    along = np.einsum('nkc,ntc->nkt', normal, linear)
    turn_a = np.einsum('nkc,ntc->nkt', np.cross(results.witness_a, normal), angular)
    turn_b = np.einsum('nkc,ntc->nkt', np.cross(results.witness_b, normal), angular)
    per_twist = np.where(moves_b & ~moves_a, along + turn_b, 0.0) - \
        np.where(moves_a & ~moves_b, along + turn_a, 0.0)
    per_twist *= kinematics.twist_scale
    gradient = np.zeros(per_twist.shape[:2] + (kinematics.dof,))
    for t in range(per_twist.shape[2]):
        gradient[..., kinematics.twist_variable[t]] += per_twist[..., t]
    gradient[~np.isfinite(results.distance)] = np.nan
    for _, start in kinematics._floating:
        gradient[..., start + 3:start + 7] = np.nan
    return gradient


def _selected_pairs(pairs, selection) -> np.ndarray:
    if selection is None:
        return np.ones(len(pairs), bool)
    if callable(selection):
        return np.array([bool(selection(a, b)) for a, b in pairs], bool)
    wanted = {frozenset(pair) for pair in selection}
    known = {frozenset(pair) for pair in pairs}
    missing = [tuple(pair) for pair in wanted - known]
    if missing:
        raise KeyError(f'unknown body pairs {missing[:5]}')
    return np.array([frozenset(pair) in wanted for pair in pairs], bool)


def _margin(margin) -> float:
    margin = float(margin)
    if not (margin >= 0.0 and math.isfinite(margin)):
        raise ValueError(f'margin must be finite and >= 0, got {margin}')
    return margin
