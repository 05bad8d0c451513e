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
Parameters of the ``gjk_distance`` node, one idea per module.

- ``catalogue``: ``PARAMETERS``, the one list the node declares from (and the docs are
  generated from);
- ``validation``: why a value is refused;
- ``body_texts``: the ``static_obstacles`` / ``link_geometry`` text, parsed once;
- ``config``: ``Config``, the typed snapshot the components take;
- ``separation``: the ``<group>.*`` parameters of ``separation_groups`` and their snapshot.

A parameter is described by a ``gjk_ros.ros.parameter_spec.ParameterSpec``. An observation
source's ``<name>.*`` parameters are its own
(``gjk_ros.ros.inputs.sources.observation_settings``), a separation group's ``<group>.*`` are
``separation``'s. Nothing here imports ROS; the node declares, validates and routes all of them
alike (``gjk_ros.ros.node_parameters``).
"""

from gjk_ros.ros.inputs.sources.observation_settings import (OBSERVATION_SOURCE_PARAMETERS,
                                                             ObservationSettings,
                                                             source_parameter_of,
                                                             source_parameter_specs,
                                                             START_UP_SOURCE_PARAMETERS)
from gjk_ros.ros.parameter_spec import ParameterSpec
from gjk_ros.ros.params.body_texts import parse_body_descriptions, parsed_bodies
from gjk_ros.ros.params.catalogue import (documented_parameter_names, PARAMETERS,
                                          TEMPLATED_PARAMETERS)
from gjk_ros.ros.params.config import Config
from gjk_ros.ros.params.validation import validate_parameter

__all__ = ['Config', 'documented_parameter_names', 'OBSERVATION_SOURCE_PARAMETERS',
           'ObservationSettings', 'PARAMETERS', 'ParameterSpec', 'parse_body_descriptions',
           'parsed_bodies', 'source_parameter_of', 'source_parameter_specs',
           'START_UP_SOURCE_PARAMETERS', 'TEMPLATED_PARAMETERS', 'validate_parameter']
