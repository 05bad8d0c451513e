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

"""The bounds on every input of the node (each is a node parameter), and how meshes are built."""

from dataclasses import dataclass, field
import fnmatch

__all__ = ['DEFAULT_MESH_MODES', 'IngestLimits', 'MESH_MODES', 'MeshSettings']

MESH_MODES = ('hull', 'exact', 'parts')
"""The modes of ``gjk_ros.models.mesh_bodies`` (named here: the node validates parameters
without importing the models)."""

# docs/nonconvex.md, "Defaults, and why": a world mesh's cavities are where the robot works
# (exact), a robot's collision meshes are near-convex and every link piece multiplies the pairs
# of every obstacle (hull).
DEFAULT_MESH_MODES = {'obstacle': 'exact', 'link': 'hull'}


@dataclass(frozen=True)
class MeshSettings:
    """
    How the geometry worker builds a non-convex mesh (``mesh_mode`` and its companions).

    ``mode`` is '' for the defaults (``DEFAULT_MESH_MODES``) or one of ``MESH_MODES`` for every
    body; ``overrides`` are parsed ``mesh_mode_overrides`` (pattern, mode), first match winning;
    ``max_pieces`` bounds the exact pieces of one mesh; ``decompose`` are the
    ``decompose_meshes`` URI patterns (such a mesh becomes CoACD parts unless its mode was
    chosen explicitly).
    """

    mode: str = ''
    overrides: tuple = ()
    max_pieces: int = 4096
    decompose: tuple = ()

    def mode_of(self, body, kind, uri=''):
        """
        Return (mode, explicit) of a mesh of ``body`` (kind 'link' or 'obstacle').

        An override matching the body wins, then ``mode``; otherwise a URI that
        ``decompose_meshes`` names is 'parts' and any other mesh takes its kind's default.
        """
        for pattern, mode in self.overrides:
            if fnmatch.fnmatchcase(body, pattern):
                return mode, True
        if self.mode:
            return self.mode, True
        if uri and any(fnmatch.fnmatchcase(uri, pattern) for pattern in self.decompose):
            return 'parts', False
        return DEFAULT_MESH_MODES[kind], False


@dataclass(frozen=True)
class IngestLimits:
    """
    Bounds on every input (each is a node parameter; see config/gjk_distance.yaml).

    Anything over a bound is rejected with a reason naming the body; nothing over it is ever
    parsed or built. ``mesh`` says how the worker builds meshes (it travels with the limits, so
    a change restarts the worker with it).
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
    mesh: MeshSettings = field(default_factory=MeshSettings)
