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

"""The one list of the node's sources: adding an input kind is one line in ``make_sources``."""

from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.inputs.sources.marker_arrays import MarkerSource
from gjk_ros.ros.inputs.sources.observations import make_observation_sources
from gjk_ros.ros.inputs.sources.parameter_bodies import ParameterBodySource
from gjk_ros.ros.inputs.sources.planning_scene import PlanningSceneSource
from gjk_ros.ros.inputs.sources.robot_model import RobotModelSource

__all__ = ['make_sources']


def make_sources(config, context):
    """
    Return every source of the node, in the order the cycle collects them.

    The observation sources come last: their self-filter reads the link pieces the others
    put in the world this cycle.

    Parameters
    ----------
    config : gjk_ros.ros.params.Config
        The parameters at start-up (the sources that ``observation_sources`` names).
    context : gjk_ros.ros.inputs.sources.base.SourceContext
        What every source may use.

    """
    sources = [RobotModelSource(context), ParameterBodySource(context),
               MarkerSource(OBSTACLE, context), MarkerSource(LINK, context),
               PlanningSceneSource(context)]
    return sources + make_observation_sources(config, context)
