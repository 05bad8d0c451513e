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
The node's inputs, one ``Source`` subclass each (``base.py``; docs/architecture.md).

``make_sources`` is the one place that lists them: a new input is a new module here and one
line below, never a change to the node's cycle.
"""

from gjk_ros.ros.bodies import LINK, OBSTACLE
from gjk_ros.ros.sources.markers import MarkerSource
from gjk_ros.ros.sources.observations import make_observation_sources
from gjk_ros.ros.sources.parameter_bodies import ParameterBodySource
from gjk_ros.ros.sources.planning_scene import PlanningSceneSource
from gjk_ros.ros.sources.robot_model import RobotModelSource

__all__ = ['make_sources']


def make_sources(config, ingestor, problems, clocks, frames, decomposer):
    """
    Return every source of the node, in the order the cycle calls them.

    Parameters
    ----------
    config : gjk_ros.ros.params.Config
        The parameters at start-up (the sources that ``observation_sources`` names).
    ingestor : gjk_ros.ros.ingestion.Ingestor
        The geometry worker, for sources whose messages are decoded off the node's thread.
    problems : gjk_ros.ros.problems.ProblemLog
        Where sources report bad input, by name.
    clocks : gjk_ros.ros.timekeeping.NodeClocks
        ROS time, for receive times and ages.
    frames : gjk_ros.ros.frames.Frames
        TF, for sources placed at a message stamp.
    decomposer : gjk_ros.ros.decomposer.MeshDecomposer
        Convex parts of the link meshes (the self-filter measures what the layout measures).

    """
    sources = [RobotModelSource(ingestor, problems, clocks), ParameterBodySource(problems)]
    sources += [MarkerSource(kind, ingestor, problems, clocks, frames)
                for kind in (OBSTACLE, LINK)]
    sources.append(PlanningSceneSource(ingestor, problems, frames))
    sources += make_observation_sources(config, problems, clocks, frames, decomposer)
    return sources
