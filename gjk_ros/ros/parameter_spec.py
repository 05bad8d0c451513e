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

"""The description of one node parameter (``ParameterSpec``): name, type, default, bounds."""

from dataclasses import dataclass
import math

__all__ = ['ParameterSpec']


@dataclass(frozen=True)
class ParameterSpec:
    """
    One parameter: name, default, description and limits.

    ``kind`` is one of 'string', 'double', 'integer', 'bool', 'string_array', 'double_array'.
    ``low``/``high`` are inclusive bounds of a number (also declared as a range unless
    infinite); ``positive`` makes the lower bound exclusive. ``reconfigures`` names the node
    components that take a new value at run time (``DistanceNode.components``).
    ``dynamic_typing`` declares it without a type or range, so that validation alone decides:
    a rated term's ``.nan`` (unset), an integer for a double, any empty array (unset).
    """

    name: str
    kind: str
    default: object
    description: str
    low: float = -math.inf
    high: float = math.inf
    positive: bool = False
    reconfigures: tuple = ()
    dynamic_typing: bool = False
