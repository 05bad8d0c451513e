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
OMPL adapters: a planning group as OMPL's state validity checker and motion validator.

OMPL (``pip install ompl``, 2.0's Python bindings) is an optional extra, imported only when an
adapter is made. The state space is a ``RealVectorStateSpace`` of the group's variables, in
:attr:`PlanningGroup.variable_names` order (:func:`state_space` builds it with the joint
limits). The validity checker calls :meth:`PlanningGroup.in_collision`; the motion validator
calls :meth:`PlanningGroup.edge_free`, so a path made of validated motions is proven free
everywhere, not only at OMPL's discrete samples.
"""

import numpy as np

__all__ = ['motion_validator', 'state_space', 'state_validity_checker', 'use_group']


def _base():
    import ompl.base
    return ompl.base


def state_space(group, default_limit: float = np.pi):
    """Return a RealVectorStateSpace of the group's variables, bounded by their limits."""
    base = _base()
    kinematics = group.robot.kinematics
    space = base.RealVectorStateSpace(group.dof)
    bounds = base.RealVectorBounds(group.dof)
    for i, v in enumerate(group.variables):
        lower, upper = kinematics.lower[v], kinematics.upper[v]
        bounds.setLow(i, float(lower) if np.isfinite(lower) else -default_limit)
        bounds.setHigh(i, float(upper) if np.isfinite(upper) else default_limit)
    space.setBounds(bounds)
    return space


def _vector(state, dof) -> np.ndarray:
    return np.fromiter((state[i] for i in range(dof)), np.float64, dof)


def state_validity_checker(space_information, group, margin: float = 0.0):
    """Return an ``ompl.base.StateValidityChecker``: valid when no pair is within ``margin``."""
    base = _base()

    class Checker(base.StateValidityChecker):
        """OMPL validity checker over :meth:`PlanningGroup.in_collision`."""

        def isValid(self, state):  # noqa: N802 - OMPL's name
            return not group.in_collision(_vector(state, group.dof), margin)

    return Checker(space_information)


def motion_validator(space_information, group, margin: float = 0.0, tolerance: float = 1e-4):
    """Return an ``ompl.base.MotionValidator`` certifying each motion with ``edge_free``."""
    base = _base()

    class Validator(base.MotionValidator):
        """OMPL motion validator over :meth:`PlanningGroup.edge_free`."""

        def checkMotion(self, first, second, *last_valid):  # noqa: N802 - OMPL's name
            return group.edge_free(_vector(first, group.dof), _vector(second, group.dof),
                                   margin, tolerance).free

    return Validator(space_information)


def use_group(simple_setup, group, margin: float = 0.0, certified: bool = True):
    """
    Install the group's checker (and, when ``certified``, its motion validator) in a setup.

    Returns ``(checker, validator)``; keep them alive as long as the setup (OMPL holds them
    through Python objects).
    """
    information = simple_setup.getSpaceInformation()
    checker = state_validity_checker(information, group, margin)
    simple_setup.setStateValidityChecker(checker)
    validator = None
    if certified:
        validator = motion_validator(information, group, margin)
        information.setMotionValidator(validator)
    return checker, validator
