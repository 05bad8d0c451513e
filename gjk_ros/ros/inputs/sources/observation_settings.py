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
The ``<name>.*`` parameters of an observation source, and their typed snapshot.

As in Nav2's collision monitor, each name in ``observation_sources`` is configured by its own
parameters, declared under its name when the node starts (``ObservationSource.parameter_specs``).
No ROS here: the parameter layer validates with it, and the docs are generated from it.
"""

import collections
from dataclasses import dataclass, replace
import math

from gjk_ros.ros.parameter_spec import ParameterSpec

__all__ = ['OBSERVATION_QOS', 'OBSERVATION_SOURCE_PARAMETERS', 'OBSERVATION_TYPES',
           'ObservationSettings', 'source_parameter_of', 'source_parameter_problem',
           'source_parameter_specs', 'START_UP_SOURCE_PARAMETERS', 'validate_source_names']

OBSERVATION_TYPES = ('pointcloud', 'scan')
"""Values of ``<name>.type``: sensor_msgs/PointCloud2 and sensor_msgs/LaserScan."""

OBSERVATION_QOS = ('sensor_data', 'reliable', 'system_default')
"""Values of ``<name>.qos``: rclpy's qos_profile_sensor_data, reliable depth 5, the default."""

OBSERVATION_SOURCE_PARAMETERS = (
    ParameterSpec('type', 'string', 'pointcloud',
                  'pointcloud (sensor_msgs/PointCloud2: organized or not, float32/float64 x, y, '
                  'z, NaN/inf points skipped) or scan (sensor_msgs/LaserScan, projected with its '
                  'angles, returns outside [range_min, range_max] skipped). Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('topic', 'string', '',
                  'Topic of the source (required). Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('qos', 'string', 'sensor_data',
                  'Subscription QoS: sensor_data (SensorDataQoS: best effort, depth 5; matches '
                  'best-effort and reliable publishers), reliable (reliable, depth 5) or '
                  'system_default. Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('source_timeout', 'double', 0.5,
                  'Seconds after the stamp of its last usable cloud at which the source is '
                  'silent: its pairs are STALE and ~/min_distance is -inf (Nav2 '
                  'source_timeout).',
                  low=0.0, high=3600.0, positive=True, reconfigures=('sources',)),
    ParameterSpec('min_range', 'double', 0.0,
                  'Metres from the sensor under which points are ignored.',
                  low=0.0, reconfigures=('sources',)),
    ParameterSpec('max_range', 'double', math.inf,
                  'Metres from the sensor beyond which points are ignored (.inf: none).',
                  low=0.0, positive=True, reconfigures=('sources',)),
    ParameterSpec('min_height', 'double', -math.inf,
                  'Points lower than this z in fixed_frame (metres) are ignored.',
                  reconfigures=('sources',)),
    ParameterSpec('max_height', 'double', math.inf,
                  'Points higher than this z in fixed_frame (metres) are ignored.',
                  reconfigures=('sources',)),
    ParameterSpec('voxel_size', 'double', 0.0,
                  'Edge of the downsampling voxels in fixed_frame, metres (0: off). The first '
                  'point of each occupied voxel is kept: a real point, so a distance can only be '
                  'longer than with the full cloud, by at most the voxel diagonal.',
                  low=0.0, high=10.0, reconfigures=('sources',)),
    ParameterSpec('publish_filtered', 'bool', False,
                  'Republish the self-filtered cloud (fixed_frame, float32 x, y, z) on '
                  '~/<name>/filtered (sensor_msgs/PointCloud2), for RViz and other consumers.',
                  reconfigures=('sources',)),
)
"""The parameters of one observation source, declared as ``<name>.<parameter>``."""

_SOURCE_SPECS = {spec.name: spec for spec in OBSERVATION_SOURCE_PARAMETERS}
START_UP_SOURCE_PARAMETERS = ('type', 'topic', 'qos')
"""Source parameters that shape its subscription: refused at run time."""


def source_parameter_specs(source):
    """Return the ``OBSERVATION_SOURCE_PARAMETERS`` of one source, named ``<source>.<name>``."""
    return tuple(replace(spec, name='%s.%s' % (source, spec.name))
                 for spec in OBSERVATION_SOURCE_PARAMETERS)


SourceParameter = collections.namedtuple('SourceParameter', 'source parameter')
SourceParameter.__doc__ = 'A ``<source>.<parameter>`` name, split.'


def source_parameter_of(name):
    """Return the ``SourceParameter`` of a ``<source>.<parameter>`` name, or None."""
    source, dot, parameter = name.rpartition('.')
    if dot and source and parameter in _SOURCE_SPECS:
        return SourceParameter(source, parameter)
    return None


# Names of the node's other sources (a source's name is in every key of its pieces).
_TAKEN_SOURCE_NAMES = ('robot_description', 'parameters', 'obstacles', 'links',
                       'planning_scene')


def validate_source_names(names):
    """Why a list of ``observation_sources`` names is refused, or None."""
    seen = set()
    for name in names:
        if not isinstance(name, str) or not name or not all(
                part.replace('_', 'a').isalnum() for part in name.split('/')):
            return 'names must be letters, digits, _ and /, got %r' % (name,)
        if name in seen or name in _TAKEN_SOURCE_NAMES:
            return 'the name %r is taken' % name
        seen.add(name)
    return None


def source_parameter_problem(parameter, value):
    """Why a value of a source's ``<name>.<parameter>`` is refused, or None (types aside)."""
    if parameter == 'type' and value not in OBSERVATION_TYPES:
        return 'must be one of %s, got %r' % (', '.join(OBSERVATION_TYPES), value)
    if parameter == 'qos' and value not in OBSERVATION_QOS:
        return 'must be one of %s, got %r' % (', '.join(OBSERVATION_QOS), value)
    return None


@dataclass(frozen=True)
class ObservationSettings:
    """One observation source's parameters (``OBSERVATION_SOURCE_PARAMETERS``; kind is type)."""

    name: str
    kind: str = 'pointcloud'
    topic: str = ''
    qos: str = 'sensor_data'
    source_timeout: float = 0.5
    min_range: float = 0.0
    max_range: float = math.inf
    min_height: float = -math.inf
    max_height: float = math.inf
    voxel_size: float = 0.0
    publish_filtered: bool = False

    @classmethod
    def from_values(cls, name, values):
        """Build from ``{'<name>.<parameter>': value}``; missing ones keep their defaults."""
        kwargs = {}
        for spec in OBSERVATION_SOURCE_PARAMETERS:
            value = values.get('%s.%s' % (name, spec.name))
            if value is not None:
                field = 'kind' if spec.name == 'type' else spec.name
                kwargs[field] = float(value) if spec.kind == 'double' else value
        return cls(name, **kwargs)
