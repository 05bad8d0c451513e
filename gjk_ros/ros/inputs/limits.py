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

"""The bounds on every input of the node (each is a node parameter)."""

from dataclasses import dataclass

__all__ = ['IngestLimits']


@dataclass(frozen=True)
class IngestLimits:
    """
    Bounds on every input (each is a node parameter; see config/gjk_distance.yaml).

    Anything over a bound is rejected with a reason naming the body; nothing over it is ever
    parsed or built.
    """

    max_points: int = 200_000
    max_markers_per_message: int = 10_000
    max_message_bytes: int = 128 * 2**20
    # Loading a mesh peaks at about 27x its file size (a 16 MB STL took 438 MB): 32 MiB keeps
    # the worst case inside the worker's default 2 GiB.
    max_mesh_bytes: int = 32 * 2**20
    max_mesh_triangles: int = 1_000_000
    max_description_bytes: int = 16 * 2**20
    max_parameter_bytes: int = 2**20
    max_nesting: int = 32
    max_yaml_nodes: int = 100_000
    job_timeout_s: float = 10.0
    worker_memory_mb: int = 2048
    hull_warning_threshold: float = 0.005
