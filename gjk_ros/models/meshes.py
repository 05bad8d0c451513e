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
Mesh files to convex hulls: URI resolution, loading, convexity check, caching.

URIs
    ``package://<pkg>/<path>`` is looked up with ``ament_index_python`` (imported only when
    needed) unless the resolver was given an override for ``<pkg>``; ``file:///abs/path`` (or
    ``file://localhost/abs/path``); plain absolute paths; plain relative paths, taken relative
    to the resolver's ``base_dir`` (default: the working directory). Other schemes (http://,
    model://, ...) are rejected.

Formats
    STL, OBJ and DAE (COLLADA, which needs the ``pycollada`` package), plus PLY and OFF, all
    read with trimesh. As in RViz, COLLADA node transforms and ``<unit meter="...">`` are
    applied and ``<up_axis>`` is ignored. Only triangles count: vertices no face uses are
    dropped.

Convexity
    A mesh is convex when every face lies on the boundary of its convex hull, i.e. no face
    centroid is deeper inside the hull than ``CONVEXITY_TOLERANCE`` times the diagonal of the
    mesh's bounding box. (A face whose centroid is on the hull boundary lies in a supporting
    plane, so the whole face is on the boundary; a vertex inside the hull puts the centroids
    of its faces inside too.) A mesh flat to within that tolerance is judged in its plane: it
    is convex when no midpoint of a boundary edge (faces on one side only) lies inside its
    2-D hull by more than the tolerance. A non-convex mesh is replaced by its hull; what
    that costs is measured as the distance from the hull surface to the mesh surface
    (:func:`hull_deviation`, sampled with a stated error bound), and :func:`mesh_shape` warns
    only when it exceeds ``hull_warning_threshold`` (default 5 mm). The convexity check is
    O(n log n) plus a fixed work budget, for any mesh.

Caching
    The loaded hull of a file is cached by (real path, modification time, size), the scaled
    ConvexPolytope additionally by the scale, so a republished robot description or a marker
    resent every cycle costs a dictionary look-up.
"""

from collections import OrderedDict
from dataclasses import dataclass
import hashlib
import importlib.util
import io
import os
import stat
import threading
import time
from urllib.parse import unquote, urlparse
import xml.etree.ElementTree as ElementTree

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.triangles import point_triangle_distances
from gjk_ros.models.errors import ModelError
from gjk_ros.models.primitives import Shape
from gjk_ros.models.values import MAX_MAGNITUDE, parse_numbers
import numpy as np
from scipy.spatial import cKDTree, ConvexHull, QhullError
import trimesh

CONVEXITY_TOLERANCE = 1e-5
MESH_FORMATS = ('stl', 'obj', 'dae', 'ply', 'off')
# Bound on the temporary (centroids x hull facets) block of the convexity check.
_DEPTH_BLOCK_ELEMENTS = 1 << 21
# Facets tried first for each probe point of the convexity check, and the multiply-adds it
# may spend on exact depths once a mesh is known not to be convex (see _deepest).
_NEAR_FACETS = 8
_DEPTH_BUDGET = 50_000_000
# Hull-to-mesh distance above which a non-convex mesh is worth a warning (see mesh_shape).
HULL_WARNING_THRESHOLD = 0.005
# Samples per surface, and mesh triangles measured per hull sample, of hull_deviation. The error
# bound holds for any count (the nearest sample's triangle alone is within it), but fewer loosen
# the estimate enough to warn about harmless dents: 4 read a 0.1 mm dent in a coarse box as
# 1.4 mm. The k-nearest search for 16 costs 0.1 s per non-convex mesh load.
_DEVIATION_SAMPLES = 20_000
_DEVIATION_NEIGHBOURS = 16
# Defaults of the mesh limits (gjk_ros.ros.inputs.limits.IngestLimits passes its own).
DEFAULT_MAX_MESH_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_MESH_TRIANGLES = 1_000_000
# Enough of a file to hold a PLY or OFF header with comments.
_HEADER_BYTES = 64 * 1024
# Largest |coordinate| accepted, metres after scaling (see values.MAX_MAGNITUDE).
MAX_COORDINATE = MAX_MAGNITUDE


@dataclass(frozen=True)
class MeshInfo:
    """
    A loaded, scaled mesh hull and what was found while loading it.

    Attributes
    ----------
    hull : ConvexPolytope
        Convex hull of the scaled mesh, in the mesh frame.
    is_convex : bool
        Whether the mesh itself was convex (see the module docstring).
    vertex_count : int
        Distinct vertices of the triangles the hull was built from.
    concavity : float
        How deep the mesh reaches inside its hull (see the module docstring), scaled by the
        largest scale factor; 0 for a convex mesh.
    path : str
        The resolved file path (or ``'<data>'`` for in-memory data).
    hull_deviation : float
        How far the hull surface gets from the mesh surface (see :func:`hull_deviation`),
        times the largest scale factor (an upper bound under unequal scales); 0 for a
        convex mesh. This, not ``concavity``, is what using the hull costs in distance.
    hull_deviation_error : float
        Bound on the sampling error of ``hull_deviation``, scaled the same way.

    """

    hull: ConvexPolytope
    is_convex: bool
    vertex_count: int
    concavity: float
    path: str
    hull_deviation: float = 0.0
    hull_deviation_error: float = 0.0


@dataclass(frozen=True)
class _MeshRecord:
    hull_points: np.ndarray   # unscaled: hull vertices are invariant under a diagonal scale
    is_convex: bool
    vertex_count: int
    concavity: float          # unscaled
    deviation: float = 0.0    # unscaled, see hull_deviation
    deviation_error: float = 0.0


class ResourceResolver:
    """
    Resolve mesh URIs to files and load their convex hulls, with caching.

    Parameters
    ----------
    package_paths : mapping of str to str, optional
        Package name -> share directory, consulted before the ament index (tests, or meshes
        of packages that are not installed).
    base_dir : str, optional
        Directory for relative paths; default the working directory at call time.
    cache_size : int
        Loaded files, and scaled hulls, kept each (least recently used dropped first), so
        meshes sent as changing marker data cannot grow the cache without bound.
    max_mesh_bytes : int
        Largest file (by stat, before reading) or in-memory mesh accepted.
    max_mesh_triangles : int
        Most triangles accepted, checked from the header where the format states the count
        (binary STL, PLY, OFF) and otherwise after parsing.
    hull_warning_threshold : float
        Passed to :func:`mesh_shape` by the URDF, marker and description readers that use
        this resolver.

    """

    def __init__(self, package_paths=None, base_dir=None, cache_size: int = 256, *,
                 max_mesh_bytes: int = DEFAULT_MAX_MESH_BYTES,
                 max_mesh_triangles: int = DEFAULT_MAX_MESH_TRIANGLES,
                 hull_warning_threshold: float = HULL_WARNING_THRESHOLD):
        self._package_paths = dict(package_paths or {})
        self.hull_warning_threshold = float(hull_warning_threshold)
        self._max_bytes = int(max_mesh_bytes)
        self._max_triangles = int(max_mesh_triangles)
        self._base_dir = base_dir
        self._cache_size = max(1, int(cache_size))
        self._records = OrderedDict()
        self._hulls = OrderedDict()
        self._exact = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, uri: str) -> str:
        """
        Return the file path a mesh URI names (the file may not exist).

        Raises
        ------
        ModelError
            With the URI as body: empty URI, unsupported scheme, unknown package, missing
            ament_index_python.

        """
        if not isinstance(uri, str) or not uri.strip():
            raise ModelError(repr(uri), 'empty mesh URI')
        parsed = urlparse(uri)
        if parsed.scheme == 'package':
            return self._resolve_package(uri, parsed.netloc, unquote(parsed.path))
        if parsed.scheme == 'file':
            if parsed.netloc not in ('', 'localhost'):
                raise ModelError(uri, f"file:// URI with host '{parsed.netloc}' is not "
                                      'supported; write file:///absolute/path')
            return unquote(parsed.path)
        if parsed.scheme and len(parsed.scheme) > 1:
            raise ModelError(uri, f"unsupported URI scheme '{parsed.scheme}://' (use "
                                  'package://, file:// or a file path)')
        return os.path.join(self._base_dir or os.getcwd(), uri)

    def load_mesh(self, uri: str, scale=(1.0, 1.0, 1.0)):
        """
        Load the convex hull of a mesh file, scaled per axis.

        Returns
        -------
        tuple of (ConvexPolytope, bool, int)
            The hull, whether the mesh was convex, its distinct vertex count.

        Raises
        ------
        ModelError
            With the URI as body; see :meth:`load_mesh_info`.

        """
        info = self.load_mesh_info(uri, scale)
        return info.hull, info.is_convex, info.vertex_count

    def load_mesh_info(self, uri: str, scale=(1.0, 1.0, 1.0)) -> MeshInfo:
        """
        Load the convex hull of a mesh file, scaled per axis, with the convexity details.

        Raises
        ------
        ModelError
            With the URI as body: unresolvable URI, missing or unreadable file, unsupported
            format, DAE without pycollada, no triangles, non-finite vertices, a mesh of no
            size, a zero or non-finite scale.

        """
        scale = _check_scale(uri, scale)
        path = self.resolve(uri)
        try:
            status = os.stat(path)
        except OSError as error:
            raise ModelError(uri, f'cannot open mesh file {path}: {error.strerror}') from None
        _check_regular(uri, path, status.st_mode)
        self._check_size(uri, status.st_size)
        key = (os.path.realpath(path), status.st_mtime_ns, status.st_size)
        record = self._cached_record(key, lambda: self._load(uri, path, _file_type(uri, path)))
        return self._scaled(key, record, scale, path)

    def load_mesh_triangles(self, uri: str, scale=(1.0, 1.0, 1.0)) -> np.ndarray:
        """
        Return the (m, 3, 3) triangles of a mesh file, scaled per axis (for exact meshes).

        Raises
        ------
        ModelError
            With the URI as body, as :meth:`load_mesh_info` (which it runs first, so a file
            that loads here also has its hull checked and cached).

        """
        scale = _check_scale(uri, scale)
        info = self.load_mesh_info(uri, scale)
        path = self.resolve(uri)
        triangles = _read_triangles(uri, self._read_regular_file(uri, path), _file_type(uri, path))
        triangles = triangles * scale
        if not np.isfinite(triangles).all() or info.vertex_count == 0:
            raise ModelError(uri, 'mesh coordinates are not finite')
        return triangles

    def exact_pieces(self, key, triangles: np.ndarray, max_pieces: int):
        """
        Return ``mesh_pieces(triangles)`` (the exact convex pieces), cached under ``key``.

        ``key`` names the triangles (e.g. the URI and scale, or a digest of message data).
        Raises what ``gjk_ros.core.mesh_pieces.mesh_pieces`` raises.
        """
        from gjk_ros.core.mesh_pieces import mesh_pieces
        key = (key, int(max_pieces))
        found = self._cache_get(self._exact, key)
        if found is None:
            found = self._cache_put(self._exact, key, mesh_pieces(triangles,
                                                                  max_pieces=max_pieces))
        return found

    def load_mesh_data(self, data: bytes, file_type: str, scale=(1.0, 1.0, 1.0),
                       name: str = '<data>') -> MeshInfo:
        """
        Load the convex hull of a mesh held in memory (e.g. visualization_msgs/MeshFile).

        Parameters
        ----------
        data : bytes
            The file contents.
        file_type : str
            Extension naming the format (``'stl'``, ``'.dae'``, ...).
        scale : array-like
            (3,) per-axis scale.
        name : str
            Names the mesh in errors.

        Raises
        ------
        ModelError
            With ``name`` as body, as :meth:`load_mesh_info`.

        """
        scale = _check_scale(name, scale)
        self._check_size(name, len(data))
        data = bytes(data)
        file_type = _supported_type(name, file_type.lower().lstrip('.'))
        key = ('<data>', hashlib.sha256(data).hexdigest(), file_type)
        record = self._cached_record(key, lambda: self._load(name, data, file_type))
        return self._scaled(key, record, scale, '<data>')

    def _check_size(self, name: str, size: int):
        if size > self._max_bytes:
            raise ModelError(name, f'mesh of {size} bytes, more than the limit of '
                                   f'{self._max_bytes}')

    def _load(self, name: str, source, file_type: str) -> _MeshRecord:
        if isinstance(source, str):
            source = self._read_regular_file(name, source)
        header, size = source[:_HEADER_BYTES], len(source)
        declared = _declared_triangles(file_type, header, size)
        if declared is not None and declared > self._max_triangles:
            raise ModelError(name, f'the mesh declares {declared} faces, more than the limit '
                                   f'of {self._max_triangles}')
        triangles = _read_triangles(name, source, file_type)
        if len(triangles) > self._max_triangles:
            raise ModelError(name, f'{len(triangles)} triangles, more than the limit of '
                                   f'{self._max_triangles}')
        return _record_from_triangles(name, triangles)

    def _read_regular_file(self, name: str, path: str) -> bytes:
        """
        Read a mesh file that is still a regular file within the size limit once opened.

        Opened non-blocking, so that a FIFO put in its place after the check in
        :meth:`load_mesh_info` cannot block the reader; then checked again on the open file.
        """
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
        except OSError as error:
            raise ModelError(name, f'cannot open mesh file {path}: {error.strerror}') from None
        with os.fdopen(descriptor, 'rb') as stream:
            status = os.fstat(stream.fileno())
            _check_regular(name, path, status.st_mode)
            self._check_size(name, status.st_size)
            return stream.read(self._max_bytes + 1)

    def _resolve_package(self, uri: str, package: str, relative: str) -> str:
        relative = relative.lstrip('/')
        if not package or not relative:
            raise ModelError(uri, 'a package URI must look like package://<package>/<path>')
        if package in self._package_paths:
            return os.path.join(self._package_paths[package], relative)
        return os.path.join(_share_directory(uri, package), relative)

    def _cached_record(self, key, load) -> _MeshRecord:
        record = self._cache_get(self._records, key)
        if record is None:
            # Loaded outside the lock: a slow mesh must not block lookups of cached ones.
            record = self._cache_put(self._records, key, load())
        return record

    def _scaled(self, key, record: _MeshRecord, scale: np.ndarray, path: str) -> MeshInfo:
        hull_key = (key, tuple(scale.tolist()))
        hull = self._cache_get(self._hulls, hull_key)
        if hull is None and np.abs(record.hull_points * scale).max() > MAX_COORDINATE:
            # Each factor is sane, the product is not (1e5 m of mesh scaled by 1e3).
            raise ModelError(path, f'scaled mesh coordinates beyond {MAX_COORDINATE:g} m')
        if hull is None:
            hull = self._cache_put(self._hulls, hull_key,
                                   ConvexPolytope.from_points(record.hull_points * scale))
        factor = float(np.abs(scale).max())
        return MeshInfo(hull, record.is_convex, record.vertex_count, record.concavity * factor,
                        path, record.deviation * factor, record.deviation_error * factor)

    def _cache_get(self, cache: OrderedDict, key):
        with self._lock:
            value = cache.get(key)
            if value is not None:
                cache.move_to_end(key)
            return value

    def _cache_put(self, cache: OrderedDict, key, value):
        with self._lock:
            cache[key] = value
            cache.move_to_end(key)
            while len(cache) > self._cache_size:
                cache.popitem(last=False)
        return value


def _check_regular(name: str, path: str, mode: int):
    """Refuse anything but a regular file: reading a FIFO or a device may never end."""
    if not stat.S_ISREG(mode):
        raise ModelError(name, f'mesh path {path} is not a regular file '
                               f'({_file_kind(mode)}); refused without reading it')


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
             (stat.S_ISSOCK, 'a socket'), (stat.S_ISCHR, 'a character device'),
             (stat.S_ISBLK, 'a block device'))
    return next((label for test, label in kinds if test(mode)), 'not a regular file')


def _share_directory(uri: str, package: str) -> str:
    try:
        packages = importlib.import_module('ament_index_python.packages')
    except ImportError:
        raise ModelError(uri, 'cannot resolve package:// URIs: the Python package '
                              'ament_index_python is not installed') from None
    try:
        return packages.get_package_share_directory(package, print_warning=False)
    except (LookupError, ValueError) as error:
        raise ModelError(uri, f"package '{package}' not found in the ament index "
                              f'(AMENT_PREFIX_PATH): {error}') from None
    except OSError as error:
        raise ModelError(uri, f"cannot look up package '{package}': {error}") from None


def _check_scale(name: str, scale) -> np.ndarray:
    try:
        scale = parse_numbers(scale, 'mesh scale', 3)
    except ValueError as error:
        raise ModelError(name, str(error)) from None
    if np.any(scale == 0.0):
        raise ModelError(name, f'mesh scale must not be zero, got {" ".join(map(str, scale))}')
    return scale


def _file_type(uri: str, path: str) -> str:
    extension = os.path.splitext(path)[1].lower().lstrip('.')
    return _supported_type(uri, extension)


def _supported_type(name: str, extension: str) -> str:
    if extension not in MESH_FORMATS:
        shown = f"'.{extension}'" if extension else 'without a file extension'
        raise ModelError(name, f'unsupported mesh format {shown} (readable: '
                               f'{", ".join(MESH_FORMATS)})')
    if extension == 'dae' and not _have_pycollada():
        raise ModelError(name, 'reading DAE (COLLADA) meshes needs the Python package '
                               'pycollada, which is not installed (pip install pycollada)')
    return extension


def mesh_shape(info: MeshInfo, label: str, scale, body: str,
               hull_warning_threshold: float = HULL_WARNING_THRESHOLD, uri: str = '') -> Shape:
    """
    Describe a loaded mesh hull as a Shape, with the non-convexity warning naming ``body``.

    Parameters
    ----------
    info : MeshInfo
        From :meth:`ResourceResolver.load_mesh_info` or :func:`triangles_hull`.
    label : str
        How to name the mesh, e.g. its URI.
    scale : array-like
        (3,) scale that was applied, for the description.
    body : str
        The link or obstacle, named in the warning.
    hull_warning_threshold : float
        Metres: a non-convex mesh is reported only when its hull surface gets farther than
        this from the mesh surface (a near-convex CAD mesh costs nothing worth a warning).
    uri : str
        The mesh file's URI, if it has one: a non-convex mesh's Shape then names it in
        ``mesh``, so that a convex decomposition can replace the hull.

    """
    scale = np.asarray(scale, dtype=np.float64)
    scaled = '' if np.all(scale == 1.0) else f' scaled {"x".join(f"{s:g}" for s in scale)}'
    description = f'{label}{scaled} (hull of {info.vertex_count} vertices)'
    if info.is_convex:
        return Shape(info.hull, description)
    description = f'{description}, not convex'
    mesh = (uri, tuple(float(s) for s in scale)) if uri else ()
    if info.hull_deviation <= hull_warning_threshold:
        return Shape(info.hull, description, (), mesh)
    warning = (f'{body}: {label} is not convex; using its convex hull, which reaches '
               f'{info.hull_deviation:.3g} m (+-{info.hull_deviation_error:.2g} m) beyond the '
               'mesh surface (distances are up to that much short)')
    return Shape(info.hull, description, (warning,), mesh)


def triangles_hull(name: str, triangles) -> MeshInfo:
    """
    Convex hull of an (m, 3, 3) triangle soup, with the same checks as a mesh file.

    Raises
    ------
    ModelError
        With ``name`` as body: no triangles, non-finite vertices, no size.

    """
    triangles = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    record = _record_from_triangles(name, triangles)
    return MeshInfo(ConvexPolytope.from_points(record.hull_points), record.is_convex,
                    record.vertex_count, record.concavity, '<triangles>', record.deviation,
                    record.deviation_error)


def default_resolver() -> ResourceResolver:
    """Return the process-wide resolver used when none is passed (so its cache is shared)."""
    global _DEFAULT_RESOLVER
    with _DEFAULT_LOCK:
        if _DEFAULT_RESOLVER is None:
            _DEFAULT_RESOLVER = ResourceResolver()
        return _DEFAULT_RESOLVER


_DEFAULT_RESOLVER = None
_DEFAULT_LOCK = threading.Lock()


def _have_pycollada() -> bool:
    return importlib.util.find_spec('collada') is not None


def _declared_triangles(file_type: str, header: bytes, size: int):
    """Return the face count a file's header states (binary STL, PLY, OFF), or None."""
    if file_type == 'stl' and len(header) >= 84:
        count = int.from_bytes(header[80:84], 'little')
        # Only a binary STL is 84 bytes plus 50 per triangle; other files are parsed as text.
        return count if size == 84 + 50 * count else None
    if file_type == 'ply':
        for line in header.split(b'\n'):
            words = line.split()
            if len(words) == 3 and words[:2] == [b'element', b'face'] and words[2].isdigit():
                return int(words[2])
            if words[:1] == [b'end_header']:
                break
        return None
    if file_type == 'off':
        lines = [line.split(b'#')[0].split() for line in header.split(b'\n')]
        words = [word for line in lines for word in line][:4]
        if words and words[0].endswith(b'OFF') and len(words) >= 3 and words[2].isdigit():
            return int(words[2])
    return None


def _record_from_triangles(name: str, triangles: np.ndarray) -> _MeshRecord:
    if len(triangles) == 0:
        raise ModelError(name, 'the mesh has no triangles')
    bad = ~np.isfinite(triangles).all(axis=(1, 2))
    if bad.any():
        raise ModelError(name, f'{int(bad.sum())} of {len(triangles)} mesh triangles have '
                               'non-finite vertex coordinates')
    if np.abs(triangles).max() > MAX_COORDINATE:
        raise ModelError(name, f'mesh coordinates beyond {MAX_COORDINATE:g} m')
    points, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    if len(points) == 1:
        raise ModelError(name, 'all mesh vertices coincide: the mesh has no size')
    tolerance = CONVEXITY_TOLERANCE * float(np.linalg.norm(np.ptp(points, axis=0)))
    hull_points, concavity = _hull_and_concavity(points, triangles, tolerance,
                                                 inverse.reshape(-1, 3))
    is_convex = concavity <= tolerance
    if is_convex:
        return _MeshRecord(hull_points, True, len(points), 0.0)
    deviation, error = hull_deviation(hull_points, triangles)
    return _MeshRecord(hull_points, False, len(points), concavity, deviation, error)


def hull_deviation(hull_points: np.ndarray, triangles: np.ndarray,
                   samples: int = _DEVIATION_SAMPLES):
    """
    Return how far the convex hull's surface gets from the mesh surface, and an error bound.

    Method: ``samples`` points spread over the hull surface (its vertices, plus points drawn
    uniformly by area with a fixed seed) and as many over the mesh surface. For each hull
    point, the mesh triangles owning its ``_DEVIATION_NEIGHBOURS`` nearest mesh samples are
    measured exactly; the result is the largest of these distances.

    Error: per hull point the measured distance d' satisfies d <= d' <= d + r_mesh, where
    r_mesh bounds the distance from any mesh point to its nearest mesh sample (the triangle
    of that sample is at most that far). Distance to the mesh is 1-Lipschitz, so the sampled
    maximum misses the true one by at most r_hull, the covering radius of the hull samples.
    Both radii are estimated as sqrt(area / samples) times 2 (a uniform sample's spacing),
    and the returned error is the larger. Work is O(samples log samples) whatever the mesh
    size.

    Returns
    -------
    tuple of (float, float)
        (deviation, error bound), metres in the mesh's units.

    """
    try:
        hull = ConvexHull(hull_points, qhull_options='QJ')
    except QhullError:
        # Flat: the planar depth measure already is a surface-to-surface distance.
        return 0.0, 0.0
    hull_triangles = hull.points[hull.simplices]
    rng = np.random.default_rng(0)
    probes = np.vstack([hull_points, _area_samples(hull_triangles, samples, rng)[0]])
    mesh_samples, owners = _area_samples(triangles, samples, rng)
    mesh_samples = np.vstack([mesh_samples, triangles.reshape(-1, 3)[::max(
        1, len(triangles) * 3 // samples)]])
    owners = np.concatenate([owners, np.arange(len(triangles)).repeat(3)[::max(
        1, len(triangles) * 3 // samples)]])
    count = min(_DEVIATION_NEIGHBOURS, len(mesh_samples))
    nearest = cKDTree(mesh_samples).query(probes, k=count)[1].reshape(len(probes), count)
    deviation = float(nearest_candidate_distances(
        np.ascontiguousarray(probes, dtype=np.float64),
        np.ascontiguousarray(triangles, dtype=np.float64),
        np.ascontiguousarray(owners[nearest], dtype=np.int64)).max())
    error = 2.0 * np.sqrt(max(_area(hull_triangles), _area(triangles)) / samples)
    return deviation, float(error)


def warm_up():
    """
    Compile (or load) the mesh checks' kernel; return the seconds it took.

    ``gjk-ros warmup`` runs it at install, so that the geometry worker never compiles while a
    robot_description waits (its first non-convex mesh would pay it inside ``ingest_timeout``).
    """
    started = time.perf_counter()
    nearest_candidate_distances(np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, 1), np.int64))
    return time.perf_counter() - started


def nearest_candidate_distances(points, triangles, candidates):
    """
    Return, for each point, its exact distance to the nearest of its candidate triangles.

    ``candidates[i]`` indexes ``triangles`` (t, 3, 3); the compiled kernel is the core's
    ``point_triangle_distances``. hull_deviation measures 20,000 points against 16 triangles
    each, which as trimesh's vectorised closest_point took 0.3 s per non-convex mesh.
    """
    out = np.empty(points.shape[0])
    point_triangle_distances(points, triangles, candidates, out)
    return out


def _area(triangles: np.ndarray) -> float:
    return float(_areas(triangles).sum())


def _areas(triangles: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.cross(triangles[:, 1] - triangles[:, 0],
                                   triangles[:, 2] - triangles[:, 0]), axis=1) / 2.0


def _area_samples(triangles: np.ndarray, count: int, rng):
    """Return ``count`` points uniform by area over the triangles, and their triangles."""
    areas = _areas(triangles)
    total = areas.sum()
    if not total > 0.0:
        return triangles[:, 0][:count], np.arange(min(count, len(triangles)))
    owners = rng.choice(len(triangles), size=count, p=areas / total)
    u, v = rng.random(count), rng.random(count)
    flip = u + v > 1.0
    u[flip], v[flip] = 1.0 - u[flip], 1.0 - v[flip]
    corners = triangles[owners]
    points = corners[:, 0] + u[:, None] * (corners[:, 1] - corners[:, 0]) + \
        v[:, None] * (corners[:, 2] - corners[:, 0])
    return points, owners


def _read_triangles(name: str, source, file_type: str) -> np.ndarray:
    """Return the (m, 3, 3) triangles of every mesh in the file, node transforms applied."""
    file_obj = io.BytesIO(source) if isinstance(source, bytes) else source
    try:
        # Non-finite vertices make trimesh's normals warn; they are reported below instead.
        with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
            scene = trimesh.load(file_obj, file_type=file_type, force='scene', process=False)
            meshes = [geometry for geometry in scene.dump()
                      if isinstance(geometry, trimesh.Trimesh) and len(geometry.faces)]
            triangles = [np.asarray(mesh.vertices, dtype=np.float64)[mesh.faces]
                         for mesh in meshes]
    except Exception as error:  # noqa: B902 - third-party parsers fail in any way on bad input
        # Only the exception type: parser messages quote the file's tokens, and a file may be
        # anything the URI points to.
        raise ModelError(name, f'not a readable {file_type.upper()} mesh '
                               f'({type(error).__name__})') from None
    if not triangles:
        return np.zeros((0, 3, 3))
    triangles = np.concatenate(triangles)
    if file_type == 'dae':
        triangles *= _collada_unit(name, source)
    return triangles


def _collada_unit(name: str, source) -> float:
    """Return the metres per unit of a COLLADA document (RViz applies it; trimesh does not)."""
    try:
        if isinstance(source, bytes):
            root = ElementTree.fromstring(source)
        else:
            root = ElementTree.parse(source).getroot()
    except (ElementTree.ParseError, OSError) as error:
        raise ModelError(name, f'not a readable DAE mesh ({type(error).__name__})') from None
    unit = root.find('{*}asset/{*}unit')
    if unit is None or unit.get('meter') is None:
        return 1.0
    try:
        meter = float(unit.get('meter'))
    except ValueError:
        meter = float('nan')
    if not np.isfinite(meter) or meter <= 0.0:
        raise ModelError(name, 'invalid COLLADA <unit meter="..."> (not a positive number)')
    return meter


def _hull_and_concavity(points: np.ndarray, triangles: np.ndarray, tolerance: float,
                        faces: np.ndarray = None):
    """
    Return the hull vertices of ``points`` and how deep the mesh reaches inside the hull.

    Solid meshes: the deepest face centroid. Meshes flat to within ``tolerance``: the deepest
    midpoint of a boundary edge, in the plane (their faces fill the hull when convex).
    Collinear meshes are convex by definition. ``faces`` (m, 3) indexes ``points`` with the
    corners of each triangle, which lets a solid mesh's centroids be settled by the hull facets
    at their own corners (see :func:`_deepest`).
    """
    centre = points.mean(axis=0)
    _, _, axes = np.linalg.svd(points - centre, full_matrices=False)
    spans = np.ptp((points - centre) @ axes.T, axis=0)
    for dimension in (3, 2):
        if spans[dimension - 1] <= tolerance:
            continue
        basis = axes[:dimension]
        try:
            # Joggled input: exact enough for the tolerance, and seconds faster than merging
            # facets on the many coplanar or cocircular points of CAD meshes.
            hull = ConvexHull((points - centre) @ basis.T, qhull_options='QJ')
        except QhullError:
            continue
        planar = (triangles - centre) @ basis.T
        if dimension == 3:
            probes, corners = planar.mean(axis=1), faces
        else:
            probes, corners = _boundary_midpoints(planar), None
        return points[hull.vertices], _deepest(probes, hull, tolerance, corners)
    along = (points - centre) @ axes[0]
    return points[[int(np.argmin(along)), int(np.argmax(along))]], 0.0


def _boundary_midpoints(triangles: np.ndarray) -> np.ndarray:
    """
    Midpoints of the boundary edges of a planar (m, 3, 2) triangle soup.

    A boundary edge has triangles on one side only. Counting sides instead of triangles keeps
    double-sided meshes (every triangle twice) right.
    """
    corners, inverse = np.unique(triangles.reshape(-1, 2), axis=0, return_inverse=True)
    faces = inverse.reshape(-1, 3)
    edges, sides = [], []
    for first, second, third in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        start, end = np.minimum(faces[:, first], faces[:, second]), np.maximum(
            faces[:, first], faces[:, second])
        along = corners[end] - corners[start]
        across = corners[faces[:, third]] - corners[start]
        edges.append(np.column_stack([start, end]))
        sides.append(np.sign(along[:, 0] * across[:, 1] - along[:, 1] * across[:, 0]))
    edges, sides = np.concatenate(edges), np.concatenate(sides)
    proper = sides != 0.0   # a degenerate triangle bounds nothing
    unique_edges, edge_index = np.unique(edges[proper], axis=0, return_inverse=True)
    left = np.zeros(len(unique_edges), bool)
    right = np.zeros(len(unique_edges), bool)
    np.logical_or.at(left, edge_index, sides[proper] > 0.0)
    np.logical_or.at(right, edge_index, sides[proper] < 0.0)
    boundary = unique_edges[left != right]
    return (corners[boundary[:, 0]] + corners[boundary[:, 1]]) / 2.0


def _deepest(query: np.ndarray, hull: ConvexHull, tolerance: float,
             corners: np.ndarray = None) -> float:
    """
    Return how deep the deepest query point lies inside the hull (0 if within ``tolerance``).

    For a point inside, the distance to the boundary is the smallest distance to a facet
    plane, so any facet gives an upper bound on its depth. Two sets of facets are tried per
    point: those whose centres are nearest, and (when ``corners`` names the hull point
    indices of each query's triangle) the facets at one of its corners, which contain the
    triangle's plane when the triangle is on the hull: together they settle every face of a
    convex mesh in O(n log n), even long thin ones (a cylinder of 20,000 sections) whose
    nearest facet centres are elsewhere. The other points are measured against every
    facet, deepest bound first, until the bound of the next one cannot beat the deepest found
    (then the answer is exact) or the work budget is spent (then it is the deepest found so
    far: the answer may be low, never high, and the work stays bounded for any input).
    """
    if len(query) == 0:
        return 0.0
    normals, offsets = hull.equations[:, :-1], hull.equations[:, -1]
    centres = hull.points[hull.simplices].mean(axis=1)
    count = min(_NEAR_FACETS, len(centres))
    near = cKDTree(centres).query(query, k=count)[1].reshape(len(query), count)
    bounds = -(np.einsum('qkd,qd->qk', normals[near], query) + offsets[near]).max(axis=1)
    if corners is not None:
        bounds = np.minimum(bounds, _corner_bounds(query, hull, corners))
    order = np.argsort(-bounds)
    order = order[bounds[order] > tolerance]
    rows = max(1, _DEPTH_BLOCK_ELEMENTS // len(normals))
    deepest, work = 0.0, 0
    for start in range(0, len(order), rows):
        if bounds[order[start]] <= deepest or work > _DEPTH_BUDGET:
            break
        block = query[order[start:start + rows]]
        deepest = max(deepest, float(-(block @ normals.T + offsets).max(axis=1).min()))
        work += block.size * len(normals)
    return deepest if deepest > tolerance else 0.0


def _corner_bounds(query: np.ndarray, hull: ConvexHull, corners: np.ndarray) -> np.ndarray:
    """
    Upper bounds on the depth of each query from the facets at one corner of its triangle.

    The corner of smallest facet degree is used, and the pairs are capped at
    ``_DEPTH_BLOCK_ELEMENTS`` (queries beyond get no bound here), so this is linear.
    """
    simplices = hull.simplices.ravel()
    degree = np.bincount(simplices, minlength=len(hull.points))
    facet_of = np.argsort(simplices, kind='stable') // 3
    starts = np.concatenate([[0], np.cumsum(degree)[:-1]])
    corner_degree = np.where(degree[corners] > 0, degree[corners], np.iinfo(np.int64).max)
    chosen = corners[np.arange(len(corners)), np.argmin(corner_degree, axis=1)]
    counts = degree[chosen]
    counts[np.cumsum(counts) > _DEPTH_BLOCK_ELEMENTS] = 0
    total = int(counts.sum())
    bounds = np.full(len(query), np.inf)
    if total == 0:
        return bounds
    owner = np.repeat(np.arange(len(query)), counts)
    ramp = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    facets = facet_of[starts[chosen][owner] + ramp]
    depths = -(np.einsum('pd,pd->p', normals_of(hull)[facets], query[owner])
               + hull.equations[facets, -1])
    np.minimum.at(bounds, owner, depths)
    return bounds


def normals_of(hull: ConvexHull) -> np.ndarray:
    """Outward unit normals of the hull's facets."""
    return hull.equations[:, :-1]
