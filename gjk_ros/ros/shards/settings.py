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
The aggregator's parameters: ``shards`` and ``deadline``, declared with descriptors, read once.

Both are read-only: the subscriptions and the QoS deadline they request are made at start-up
(QoS cannot change after creation), so a change at run time is refused by rclpy, never
accepted and ignored. A bad value stops the aggregator at start-up with the reason, naming the
parameter: an aggregator that guessed its shards would vouch for parts of the robot no one
measures.
"""

from dataclasses import dataclass
import re

from gjk_ros.ros.parameter_spec import ParameterSpec
from gjk_ros.ros.qos import MIN_SAFETY_PERIOD
from gjk_ros.ros.shards.plan import MAX_SHARDS

__all__ = ['AggregatorSettings', 'PARAMETERS', 'resolved', 'settings_from']

# A ROS 2 name: tokens of letters, digits and underscores, not starting with a digit, joined by
# single slashes; fully qualified with a leading slash, else relative to the aggregator's
# namespace. No '~' or substitutions: a shard is another node, never a private name.
_NAME = re.compile(r'/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')

PARAMETERS = (
    ParameterSpec(
        'shards', 'string_array', [],
        'Node names of the gjk_distance shards to aggregate (required), e.g. '
        "['/robot/arm/gjk_distance', '/robot/hand/gjk_distance']; a relative name is "
        "resolved in the aggregator's namespace. Read at start-up."),
    ParameterSpec(
        'deadline', 'double', MIN_SAFETY_PERIOD,
        'Seconds without a summary after which a shard is silent and the whole minimum -inf. '
        'Requested as the QoS deadline and liveliness lease of the subscriptions, so it must '
        "be at least the shards' offered period (max(0.25, 3 / rate_hz)); the aggregator's "
        'own outputs offer it too. Read at start-up.',
        low=0.01, high=10.0),
)


@dataclass(frozen=True)
class AggregatorSettings:
    """The validated parameters: shard names as given, and the deadline in seconds."""

    shards: tuple
    deadline: float


def _shards_problem(shards):
    if not shards:
        return 'is empty: name at least one gjk_distance node'
    if len(shards) > MAX_SHARDS:
        return 'names %d shards, at most %d' % (len(shards), MAX_SHARDS)
    for entry in shards:
        if not isinstance(entry, str) or not _NAME.fullmatch(entry):
            return "entry %r is not a ROS node name ('/ns/gjk_distance' or 'ns/gjk_distance')" \
                % (entry if isinstance(entry, str) and len(entry) <= 100 else type(entry).__name__)
    if len(set(shards)) < len(shards):
        return 'names a shard twice'
    return None


def settings_from(values):
    """
    Validate ``{name: value}`` into ``AggregatorSettings``.

    Raises
    ------
    ValueError
        Naming the parameter and why its value is refused.

    """
    shards = values.get('shards')
    shards = list(shards) if isinstance(shards, (list, tuple)) else shards
    problem = _shards_problem(shards) if isinstance(shards, list) else 'is not a string array'
    if problem is not None:
        raise ValueError('parameter shards %s' % problem)
    deadline = values.get('deadline')
    (spec,) = [spec for spec in PARAMETERS if spec.name == 'deadline']
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or \
            not spec.low <= deadline <= spec.high:
        raise ValueError('parameter deadline must be a number of seconds in [%g, %g], got %r'
                         % (spec.low, spec.high, deadline))
    return AggregatorSettings(tuple(shards), float(deadline))


def resolved(shards, namespace):
    """
    Return the shards' fully qualified names: a relative name joins ``namespace``.

    Raises
    ------
    ValueError
        When two entries name the same node once resolved.

    """
    names = [name if name.startswith('/') else '%s/%s' % (namespace.rstrip('/'), name)
             for name in shards]
    if len(set(names)) < len(names):
        raise ValueError('parameter shards names a shard twice once resolved: %s'
                         % ', '.join(names))
    return names
