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
The ``<group>.*`` parameters of a speed-and-separation group, and its typed snapshot.

As ``observation_sources`` (Nav2's layout), each name in ``separation_groups`` is configured by
its own parameters, ``<group>.<parameter>``: the obstacles it watches and the terms of ISO/TS
15066's protective separation distance (``gjk_ros.core.separation``, docs/motion.md). The node
declares them as it declares a source's (``gjk_ros.ros.node_parameters``), when a name joins
``separation_groups``. The rated terms have no default: a term left unset (or set to ``.nan``)
makes the group unknown (margin -inf, scaling 0) and ``~/safety_detail`` names it; so does a
value the parameter file gave and the node refused. No ROS here.
"""

from dataclasses import dataclass, replace
import fnmatch
import math
import re

from gjk_ros.core.separation import HUMAN_WALKING_SPEED, SeparationSettings, StoppingTable
from gjk_ros.ros.parameter_spec import ParameterSpec

__all__ = ['group_parameter_of', 'group_parameter_problem', 'group_parameter_specs',
           'SEPARATION_GROUP_PARAMETERS', 'SeparationGroup', 'validate_group_names']

# The longest stopping table, the largest speed (m/s), time (s) and length (m) a term may take:
# bounds on what a parameter file can make the node evaluate. Each group declares its
# parameters and two publishers: MAX_GROUPS bounds them.
MAX_GROUPS = 100
MAX_TABLE_ROWS = 100
MAX_SPEED, MAX_TIME, MAX_LENGTH = 100.0, 60.0, 100.0
_TABLE = ('stopping_table_speeds', 'stopping_table_distances', 'stopping_table_times')
_UNSET = ' Rated: no default; unset (or .nan) leaves the group unknown (scaling 0).'

SEPARATION_GROUP_PARAMETERS = (
    ParameterSpec('obstacles', 'string_array', [],
                  'fnmatch patterns over obstacle names: the obstacles this group watches. An '
                  "observation source's cloud is the obstacle named after the source, so a "
                  'source name selects its cloud (e.g. [camera, person_*]). Matching nothing '
                  'leaves the group empty: clear (margin inf, scaling 1) only with '
                  'allow_no_obstacles, unknown otherwise.',
                  reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('human_speed', 'double', HUMAN_WALKING_SPEED,
                  'v_h, m/s: how fast a person approaches (ISO 13855 walking speed 1.6 m/s; '
                  'set by the risk assessment).',
                  low=0.0, high=MAX_SPEED, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('reaction_time', 'double', math.nan,
                  'T_r, s: sensing, processing and controller response time.' + _UNSET,
                  low=0.0, high=MAX_TIME, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('stopping_time', 'double', math.nan,
                  'T_s, s: the robot stopping time (ISO 10218-1 Annex B), unless a stopping '
                  'table is given.' + _UNSET,
                  low=0.0, high=MAX_TIME, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('stopping_distance', 'double', math.nan,
                  'S_s, m: the robot stopping distance, unless a stopping table is given.'
                  + _UNSET,
                  low=0.0, high=MAX_LENGTH, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('stopping_table_speeds', 'double_array', [],
                  'Optional stopping table: robot speeds (m/s) from 0, strictly increasing; '
                  'S_s and T_s are read at the closing speed, linearly between rows, and a '
                  'speed beyond the last row is unknown (scaling 0).',
                  reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('stopping_table_distances', 'double_array', [],
                  'S_s (m) at each stopping_table_speeds row, non-decreasing.',
                  reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('stopping_table_times', 'double_array', [],
                  'T_s (s) at each stopping_table_speeds row, non-decreasing.',
                  reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('intrusion_distance', 'double', math.nan,
                  'C, m: how far a body part reaches past the sensing before detection (ISO '
                  '13855).' + _UNSET,
                  low=0.0, high=MAX_LENGTH, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('human_uncertainty', 'double', math.nan,
                  "Z_d, m: the person's position uncertainty (the sensor's tolerance)."
                  + _UNSET,
                  low=0.0, high=MAX_LENGTH, reconfigures=('outputs',), dynamic_typing=True),
    ParameterSpec('robot_uncertainty', 'double', math.nan,
                  "Z_r, m: the robot's position uncertainty." + _UNSET,
                  low=0.0, high=MAX_LENGTH, reconfigures=('outputs',), dynamic_typing=True),
)
"""The parameters of one separation group, declared as ``<group>.<parameter>``."""

_SPECS = {spec.name: spec for spec in SEPARATION_GROUP_PARAMETERS}
# A group name becomes a topic name token (~/separation_margin/<group>).
_GROUP_NAME = re.compile(r'[A-Za-z][A-Za-z0-9_]*')


def group_parameter_specs(group):
    """Return the ``SEPARATION_GROUP_PARAMETERS`` of one group, named ``<group>.<name>``."""
    return tuple(replace(spec, name='%s.%s' % (group, spec.name))
                 for spec in SEPARATION_GROUP_PARAMETERS)


def group_parameter_of(name):
    """Return ``(group, parameter)`` of a ``<group>.<parameter>`` name, or None."""
    group, dot, parameter = name.rpartition('.')
    if dot and _GROUP_NAME.fullmatch(group) and parameter in _SPECS:
        return group, parameter
    return None


def validate_group_names(names, taken=()):
    """Why a ``separation_groups`` list is refused (``taken``: the source names), or None."""
    if len(names) > MAX_GROUPS:
        return 'at most %d groups, got %d' % (MAX_GROUPS, len(names))
    seen = set()
    for name in names:
        if not isinstance(name, str) or not _GROUP_NAME.fullmatch(name):
            return 'names must be a letter then letters, digits and _ (a topic name token), ' \
                'got %r' % (name,)
        if name in seen:
            return 'the name %r is given twice' % name
        if name in taken:
            return 'the name %r is an observation source: name the group differently' % name
        seen.add(name)
    return None


def group_parameter_problem(parameter, value):
    """Why a value of ``<group>.<parameter>`` is refused, or None (NaN: unset, accepted)."""
    spec = _SPECS[parameter]
    if value is None or (spec.kind.endswith('array') and hasattr(value, '__len__')
                         and not isinstance(value, str) and len(value) == 0):
        return None  # not set (clients cannot type an empty array: any empty one is unset)
    if spec.kind == 'string_array':
        if not isinstance(value, (list, tuple)) or not all(
                isinstance(item, str) and item for item in value):
            return 'expected a list of non-empty fnmatch patterns, got %r' % (value,)
        return None if len(value) <= MAX_TABLE_ROWS * 10 else 'at most %d patterns' % (
            MAX_TABLE_ROWS * 10)
    values = list(value) if spec.kind == 'double_array' and not isinstance(
        value, (str, bytes)) and hasattr(value, '__len__') else [value]
    if spec.kind == 'double_array' and len(values) > MAX_TABLE_ROWS:
        return 'at most %d rows, got %d' % (MAX_TABLE_ROWS, len(values))
    for item in values:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            return 'expected a number (or numbers), got %r' % (item,)
        item = float(item)
        if math.isnan(item) and spec.kind == 'double':
            continue
        high = spec.high if spec.kind == 'double' else MAX_LENGTH
        if not 0.0 <= item <= high:
            return 'must be in [0, %g], got %r' % (high, item)
    return None


@dataclass(frozen=True)
class SeparationGroup:
    """
    One separation group: the obstacles it watches and its ISO/TS 15066 terms.

    ``problem`` is why its parameters cannot be used (naming the parameter), '' if they can.
    """

    name: str
    obstacles: tuple = ()
    settings: SeparationSettings = SeparationSettings()
    problem: str = ''

    @classmethod
    def from_values(cls, name, values, refused=None):
        """
        Build from ``{'<group>.<parameter>': value}``; missing ones are unset (defaults).

        ``refused``: ``{'<group>.<parameter>': why}`` of the values a parameter file gave and
        the node refused. Such a group is unknown, naming the parameter: its value is now the
        default, which is not what the file asked for (a rated term must never fall back).
        """
        def value(parameter):
            found = values.get('%s.%s' % (name, parameter))
            return _SPECS[parameter].default if found is None else found

        refused = refused or {}
        for parameter in _SPECS:
            key = '%s.%s' % (name, parameter)
            reason = refused.get(key) or group_parameter_problem(parameter, values.get(key))
            if reason is not None:
                return cls(name, problem='%s: %s' % (key, reason))
        table = None
        speeds, distances, times = (tuple(float(v) for v in value(column)) for column in _TABLE)
        if speeds or distances or times:
            table = StoppingTable(speeds, distances, times)
        settings = SeparationSettings(**{
            parameter: float(value(parameter)) for parameter in
            ('human_speed', 'reaction_time', 'stopping_time', 'stopping_distance',
             'intrusion_distance', 'human_uncertainty', 'robot_uncertainty')},
            stopping_table=table)
        problem = settings.problem()
        return cls(name, tuple(value('obstacles')), settings,
                   '' if problem is None else '%s.%s' % (name, problem))

    def watches(self, obstacle):
        """Whether the obstacle named ``obstacle`` is one of this group's."""
        return any(fnmatch.fnmatchcase(obstacle, pattern) for pattern in self.obstacles)
