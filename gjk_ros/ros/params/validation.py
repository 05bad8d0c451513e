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
Validation of one parameter value: plain Python, testable without a ROS graph.

The node calls ``validate_parameter`` from its set-parameters callback, so a bad value is
refused with the reason (``ros2 param set`` prints it).
"""

import array
import math
import re

from gjk_ros.ros.inputs.limits import MESH_MODES
from gjk_ros.ros.inputs.sources.observation_settings import (OBSERVATION_SOURCE_PARAMETERS,
                                                             source_parameter_of,
                                                             source_parameter_problem,
                                                             validate_source_names)
from gjk_ros.ros.params.body_texts import parsed_bodies
from gjk_ros.ros.params.catalogue import PARAMETERS
from gjk_ros.ros.params.separation import (group_parameter_of, group_parameter_problem,
                                           validate_group_names)

__all__ = ['MAX_PADDING', 'PAIR_PARAMETERS', 'parse_mesh_mode_entry', 'parse_padding_entry',
           'SCALING_GROUP_ENTRY', 'validate_parameter']

_SPECS = {spec.name: spec for spec in PARAMETERS}
_SOURCE_SPECS = {spec.name: spec for spec in OBSERVATION_SOURCE_PARAMETERS}
# A ROS 2 topic name (absolute, relative or private) without substitutions.
_TOPIC_NAME = re.compile(r'(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')

# A scaling_groups entry: the name becomes a topic name token (~/speed_scaling/<name>).
SCALING_GROUP_ENTRY = re.compile(r'([A-Za-z][A-Za-z0-9_]*)(:.+)?')

PAIR_PARAMETERS = ('allowed_pairs', 'excluded_pairs')
"""The parameters of 'link_pattern:obstacle_pattern' entries."""

_PYTHON_TYPES = {
    'string': (str,),
    'double': (float, int),
    'bool': (bool,),
    'integer': (int,),
    # Any array type: an empty array of whatever type means "no patterns" (see the node).
    'string_array': (list, tuple, array.array),
}


def _validate_double(spec, value):
    if math.isnan(value):
        return 'must be a number, got NaN'
    if spec.positive and value <= spec.low:
        return 'must be > %g, got %g' % (spec.low, value)
    if value < spec.low or value > spec.high:
        return 'must be in [%g, %g], got %g' % (spec.low, spec.high, value)
    return None


# Padding entries per parameter, and the largest padding (the bound of ``padding`` too).
MAX_PADDING_ENTRIES = 1000
MAX_PADDING = 1000.0


def parse_padding_entry(entry):
    """
    Split a ``'pattern:metres'`` padding entry into (pattern, metres).

    The last colon separates, so a pattern may contain colons. Raises ValueError with the
    reason (the entry is quoted: a parameter value, not file content).
    """
    pattern, colon, number = entry.rpartition(':')
    try:
        metres = float(number)
    except ValueError:
        metres = math.nan
    if not colon or not pattern or not 0.0 <= metres <= MAX_PADDING:
        raise ValueError("entries must look like 'pattern:metres' with metres in [0, %g], got %r"
                         % (MAX_PADDING, entry))
    return pattern, metres


def parse_mesh_mode_entry(entry):
    """
    Split a ``'name_pattern:mode'`` entry of ``mesh_mode_overrides`` into (pattern, mode).

    The last colon separates (as ``gjk_ros.models.mesh_bodies.parse_mode_overrides``, which the
    planner API uses). Raises ValueError with the reason, quoting the entry.
    """
    pattern, colon, mode = entry.rpartition(':')
    mode = mode.strip()
    if not colon or not pattern or mode not in MESH_MODES:
        raise ValueError("entries must look like 'name_pattern:mode' with mode one of %s, got %r"
                         % (', '.join(MESH_MODES), entry))
    return pattern, mode


def _validate_patterns(spec, value):
    if len(value) > MAX_PADDING_ENTRIES and (spec.name.endswith('_padding')
                                             or spec.name == 'mesh_mode_overrides'):
        return 'at most %d entries, got %d' % (MAX_PADDING_ENTRIES, len(value))
    for pattern in value:
        if not isinstance(pattern, str) or not pattern:
            return 'patterns must be non-empty strings, got %r' % (pattern,)
        if spec.name.endswith('_padding'):
            try:
                parse_padding_entry(pattern)
            except ValueError as error:
                return str(error)
        if spec.name == 'mesh_mode_overrides':
            try:
                parse_mesh_mode_entry(pattern)
            except ValueError as error:
                return str(error)
        if spec.name == 'scaling_groups' and not SCALING_GROUP_ENTRY.fullmatch(pattern):
            return "entries must be an SRDF group's name or 'name:link_pattern', with a " \
                "name of letters, digits and '_' (a topic name token), got %r" % pattern
        if spec.name in PAIR_PARAMETERS:
            link_pattern, colon, obstacle_pattern = pattern.partition(':')
            if not colon or not link_pattern or not obstacle_pattern:
                return "entries must look like 'link_pattern:obstacle_pattern', got %r" % pattern
    return None


def validate_parameter(name, value, limits=None):
    """
    Check one parameter value.

    Parameters
    ----------
    name : str
        Parameter name; unknown names are accepted.
    value : object
        The Python value (float, str, bool, list of str).
    limits : IngestLimits, optional
        The bounds of a body-description text (default: IngestLimits').

    Returns
    -------
    str or None
        Why the value is rejected, or None if it is acceptable.

    """
    spec = _SPECS.get(name)
    group = group_parameter_of(name) if spec is None else None
    if group is not None:
        return group_parameter_problem(group[1], value)
    templated = source_parameter_of(name) if spec is None else None
    if templated is not None:
        spec = _SOURCE_SPECS[templated.parameter]
    if spec is None:
        return None
    if isinstance(value, bool) and spec.kind in ('double', 'integer') or \
            not isinstance(value, _PYTHON_TYPES[spec.kind]):
        return 'expected a %s, got %r' % (spec.kind.replace('_', ' '), value)
    if spec.kind in ('double', 'integer'):
        return _validate_double(spec, float(value))
    if spec.kind == 'string_array':
        reason = _validate_patterns(spec, value)
        if reason is None and name == 'observation_sources':
            reason = validate_source_names(value)
        if reason is None and name == 'separation_groups':
            reason = validate_group_names(value)
        return reason
    if templated is not None:
        return source_parameter_problem(templated.parameter, value)
    if name == 'mesh_mode' and value not in ('',) + MESH_MODES:
        return "must be '' (obstacles exact, links hull) or one of %s, got %r" % (
            ', '.join(MESH_MODES), value)
    if name == 'fixed_frame' and not value.strip('/'):
        return 'must name a frame'
    if name.endswith('_topic') and value and not _TOPIC_NAME.fullmatch(value):
        return 'not a valid topic name'
    if name in ('static_obstacles', 'link_geometry'):
        try:
            parsed_bodies(value, limits)
        except ValueError as error:
            return str(error)
    return None
