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
Opt-in convex decomposition of non-convex meshes with CoACD, cached on disk.

A non-convex mesh is otherwise replaced by its convex hull (meshes.py), which over-estimates the
body: a robot reaching into a shelf bin "touches" the hull long before the shelf. CoACD (Wei et
al., "Approximate convex decomposition for 3D meshes with collision-aware concavity and tree
search", SIGGRAPH 2022; PyPI ``coacd``, an optional dependency) splits the mesh into convex parts
whose concavity is below ``threshold`` (relative to the mesh size); each part becomes one
tracked piece, and a body's distance is the minimum over its pieces.

Decomposition takes seconds to minutes, so parts are cached on disk as ``.npz`` files keyed by
the SHA-256 of the mesh's vertices and faces (after scaling), the settings and the CoACD
version: a second load reads the file and never runs CoACD. The cache directory defaults to
``$XDG_CACHE_HOME/gjk_ros/decomposition`` (``~/.cache/gjk_ros/decomposition``). Callers that
must stay responsive (the node) call this off their compute path.
"""

import hashlib
import json
import os
import tempfile

import numpy as np
import trimesh

# CoACD settings and their defaults (coacd.run_coacd's names); others are rejected.
DEFAULT_SETTINGS = {
    'threshold': 0.05,
    'max_convex_hull': -1,
    'preprocess_mode': 'auto',
    'preprocess_resolution': 50,
    'resolution': 2000,
    'mcts_nodes': 20,
    'mcts_iterations': 150,
    'mcts_max_depth': 3,
    'merge': True,
    'max_ch_vertex': 256,
    'seed': 0,
}
# Bumped when the cache file layout changes.
CACHE_FORMAT = 1


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/gjk_ros/decomposition``, else ``~/.cache/gjk_ros/decomposition``."""
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'gjk_ros', 'decomposition')


def coacd_available() -> bool:
    """Whether the optional ``coacd`` package can be imported."""
    try:
        import coacd  # noqa: F401
    except ImportError:
        return False
    return True


def decompose_mesh(vertices, faces, settings=None, cache_dir=None) -> list[np.ndarray]:
    """
    Convex parts of a triangle mesh, from the disk cache or computed by CoACD.

    Parameters
    ----------
    vertices : (n, 3) float
        Mesh vertices, already scaled.
    faces : (m, 3) int
        Triangles.
    settings : dict, optional
        CoACD settings overriding ``DEFAULT_SETTINGS``.
    cache_dir : str, optional
        Directory of the part cache; default :func:`default_cache_dir`. ``False`` disables
        the cache.

    Returns
    -------
    list of numpy.ndarray
        The vertices (k, 3) of each convex part, in the mesh frame.

    Raises
    ------
    ValueError
        Empty or non-finite mesh, unknown setting.
    ImportError
        The parts are not cached and ``coacd`` is not installed.

    """
    vertices = np.ascontiguousarray(vertices, dtype=np.float64)
    faces = np.ascontiguousarray(faces, dtype=np.int64)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) == 0:
        raise ValueError(f'vertices: expected (n, 3), got {vertices.shape}')
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0:
        raise ValueError(f'faces: expected (m, 3), got {faces.shape}')
    if not np.isfinite(vertices).all():
        raise ValueError('vertices must be finite')
    settings = _settings(settings)
    path = None
    if cache_dir is not False:
        path = os.path.join(cache_dir or default_cache_dir(),
                            _cache_key(vertices, faces, settings) + '.npz')
        parts = _read_parts(path)
        if parts is not None:
            return parts
    parts = [np.asarray(part, dtype=np.float64) for part in _run_coacd(vertices, faces, settings)]
    if path is not None:
        _write_parts(path, parts)
    return parts


def decompose_mesh_file(path: str, scale=(1.0, 1.0, 1.0), settings=None,
                        cache_dir=None) -> list[np.ndarray]:
    """
    Convex parts of a mesh file (any format trimesh reads), scaled per axis.

    Scene files (DAE, multi-object OBJ) are flattened with their node transforms applied.
    See :func:`decompose_mesh` for the rest.
    """
    mesh = trimesh.load(path, force='mesh', process=False)
    vertices = np.asarray(mesh.vertices, dtype=np.float64) * np.asarray(scale, np.float64)
    return decompose_mesh(vertices, np.asarray(mesh.faces), settings, cache_dir)


def _settings(settings) -> dict:
    merged = dict(DEFAULT_SETTINGS)
    for key, value in (settings or {}).items():
        if key not in DEFAULT_SETTINGS:
            raise ValueError(f'unknown decomposition setting {key!r} (known: '
                             f'{", ".join(DEFAULT_SETTINGS)})')
        merged[key] = value
    return merged


def _coacd_version() -> str:
    try:
        from importlib.metadata import version
        return version('coacd')
    except Exception:  # noqa: B902 - not installed or no metadata: key without it
        return 'unknown'


def _cache_key(vertices, faces, settings) -> str:
    digest = hashlib.sha256()
    for array in (vertices, faces):
        digest.update(str(array.shape).encode())
        digest.update(array.tobytes())
    digest.update(json.dumps([CACHE_FORMAT, _coacd_version(), settings],
                             sort_keys=True).encode())
    return digest.hexdigest()


def _run_coacd(vertices, faces, settings) -> list:
    """Run CoACD (the slow step; tests count calls to this function)."""
    import coacd
    coacd.set_log_level('error')
    parts = coacd.run_coacd(coacd.Mesh(vertices, faces), **settings)
    return [part[0] for part in parts]


def _read_parts(path: str):
    try:
        with np.load(path) as data:
            points, offsets = data['points'], data['offsets']
    except (OSError, KeyError, ValueError):
        return None
    return [points[offsets[i]:offsets[i + 1]].copy() for i in range(len(offsets) - 1)]


def _write_parts(path: str, parts):
    """Write atomically (temporary file then rename), so a reader never sees half a file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    offsets = np.cumsum([0] + [len(part) for part in parts])
    points = np.concatenate(parts) if parts else np.zeros((0, 3))
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix='.npz.tmp')
    try:
        with os.fdopen(handle, 'wb') as stream:
            np.savez(stream, points=points, offsets=offsets)
        os.replace(temporary, path)
    except OSError:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
