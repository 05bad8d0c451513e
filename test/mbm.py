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

"""Where MotionBenchMaker's scenes are: ../shared/mbm beside the repository, or $GJK_ROS_MBM."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def mbm_directory() -> pathlib.Path:
    """Return the folder of MotionBenchMaker's scenes and the Panda, or skip the test."""
    folder = pathlib.Path(os.environ.get('GJK_ROS_MBM', ROOT.parent / 'shared' / 'mbm'))
    if not (folder / 'scenes').is_dir():
        pytest.skip(f'no MotionBenchMaker scenes at {folder} (set GJK_ROS_MBM)')
    return folder


def kitchen_mesh(name: str):
    """Return the (m, 3, 3) triangles of one kitchen STL mesh (skips without the scenes)."""
    import trimesh
    mesh = trimesh.load(mbm_directory() / 'scenes' / 'kitchen' / 'meshes' / f'{name}.stl',
                        process=False)
    return mesh.triangles.copy()
