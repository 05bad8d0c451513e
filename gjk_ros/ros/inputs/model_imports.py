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
``gjk_ros.models`` in the node process: imported once, whole, by whichever thread asks first.

The node imports ``gjk_ros.models`` lazily (trimesh makes it about 1 s) from several threads:
the executor (layout, sources), the ingestion dispatchers (unpickling what the worker built)
and the background threads of observation sources. Two threads that start importing a package
and its submodules at once can deadlock on Python's per-module import locks; Python breaks the
deadlock by handing one of them a partially initialized module (an ImportError). Every
node-side import of ``gjk_ros.models`` therefore goes through ``load_models`` first: one lock,
one complete import, after which every ``from gjk_ros.models... import`` only reads
``sys.modules``.
"""

import importlib
import threading

__all__ = ['load_models']

# Every submodule the node process uses (the worker process imports on its own single thread).
_MODULES = ('gjk_ros.models', 'gjk_ros.models.bounded_text', 'gjk_ros.models.collision_objects',
            'gjk_ros.models.kinematics', 'gjk_ros.models.pieces', 'gjk_ros.models.scene_files',
            'gjk_ros.models.srdf', 'gjk_ros.models.urdf')
_LOCK = threading.Lock()
_loaded = []


def load_models():
    """Import ``gjk_ros.models`` and the submodules the node uses, once; thread-safe."""
    if _loaded:
        return
    with _LOCK:
        if not _loaded:
            for name in _MODULES:
                importlib.import_module(name)
            _loaded.append(True)
