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
How a mesh becomes pieces: its hull, its exact convex pieces, or its CoACD parts (``mesh_mode``).

Every input that can carry a mesh (a URDF ``<mesh>``, a marker, a CollisionObject mesh, a
static obstacle, the planner's obstacles) picks one of three modes per body:

``hull``
    The mesh's convex hull: one piece, the fastest, conservative (a distance can only be
    shorter than the mesh's; never a missed contact) but it fills every cavity: a hand inside a
    cupboard is "in collision" with air. The report says how far the hull reaches beyond the
    mesh.
``exact``
    The mesh as it is (``gjk_ros.core.mesh_pieces``): each closed part cut into convex cells
    whose union is that part's solid, each open part as flat pieces. Distances are exact; a
    body inside or overlapping a closed part is negative (the deepest piece-pair MTD); an open
    part has no inside and gives the unsigned surface distance (:class:`SurfacePiece`). A mesh
    that is not watertight is said to be so, by name, in the pieces' warnings.
``parts``
    CoACD's approximate convex decomposition (``gjk_ros.models.decomposition``), as
    ``decompose_meshes`` does.

Overrides are ``'name_pattern:mode'`` entries (fnmatch on the link or obstacle name), the
first match winning, as the node's other per-name parameters (``link_padding``).
"""

from dataclasses import dataclass
import fnmatch
import math
from typing import ClassVar

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.mesh_pieces import DEFAULT_MAX_PIECES, TooManyPieces
from gjk_ros.models.errors import ModelError
from gjk_ros.models.pieces import CollisionPiece
import numpy as np

__all__ = ['MESH_MODES', 'MeshUse', 'SurfacePiece', 'check_mode', 'exact_pieces',
           'mode_for', 'parse_mode_overrides', 'DEFAULT_MAX_PIECES']

MESH_MODES = ('hull', 'exact', 'parts')


@dataclass(frozen=True, eq=False)
class SurfacePiece(CollisionPiece):
    """
    A flat convex piece of an open mesh surface, which has no inside.

    Measured like any piece, except that a body crossing it is at distance 0 (touching),
    never negative: ``unsigned`` in ``gjk_ros.core.bodypairs``.
    """

    unsigned: ClassVar[bool] = True


@dataclass(frozen=True)
class MeshUse:
    """
    What one mesh of a body became, for diagnostics.

    Attributes
    ----------
    body : str
        The link or obstacle.
    label : str
        The mesh (its URI, or 'mesh of N triangles').
    mode : str
        The mode used: 'hull', 'exact' or 'parts' (a failed 'exact' falls back to 'hull').
    pieces : int
        Convex pieces it became.
    watertight : bool or None
        For 'exact': whether every part is closed (has an inside); None otherwise.
    hull_deviation : float
        For 'hull': how far the hull reaches beyond the mesh surface (metres; 0 when convex).
    note : str
        Why the mode differs from the one asked for, if it does.

    """

    body: str
    label: str
    mode: str
    pieces: int
    watertight: bool = None
    hull_deviation: float = 0.0
    note: str = ''


def check_mode(mode, name: str = 'mesh_mode') -> str:
    """Return ``mode`` when it is one of MESH_MODES; ValueError naming ``name`` otherwise."""
    if mode not in MESH_MODES:
        raise ValueError(f'{name} must be one of {", ".join(MESH_MODES)}, got {mode!r}')
    return mode


def parse_mode_overrides(entries, name: str = 'mesh_mode_overrides'):
    """
    Parse ``'name_pattern:mode'`` entries into (pattern, mode) pairs, in order.

    Raises
    ------
    ValueError
        Naming ``name`` and the entry: no ':', an empty pattern, an unknown mode.

    """
    parsed = []
    for entry in entries or ():
        if not isinstance(entry, str) or ':' not in entry:
            raise ValueError(f"{name}: entry {entry!r} is not 'name_pattern:mode'")
        pattern, mode = entry.rsplit(':', 1)
        if not pattern:
            raise ValueError(f'{name}: entry {entry!r} has an empty pattern')
        parsed.append((pattern, check_mode(mode.strip(), f'{name} entry {entry!r}')))
    return tuple(parsed)


def mode_for(body: str, default: str, overrides=()) -> str:
    """Return the mode of ``body``: the first override whose pattern matches, else default."""
    for pattern, mode in overrides:
        if fnmatch.fnmatchcase(body, pattern):
            return mode
    return default


def exact_pieces(body: str, frame_id: str, origin, triangles, label: str, *, resolver=None,
                 key=None, max_pieces: int = DEFAULT_MAX_PIECES):
    """
    Return the exact convex pieces of a mesh, as pieces of ``body``, and its :class:`MeshUse`.

    Parameters
    ----------
    body, frame_id : str
        Owner and frame of the pieces.
    origin : array-like
        (4, 4) pose of the mesh in ``frame_id``.
    triangles : array-like
        (m, 3, 3) the mesh, scaled, in its own frame.
    label : str
        Names the mesh in descriptions and warnings.
    resolver : ResourceResolver, optional
        Caches the decomposition under ``key`` (recomputed every call without one).
    key : hashable, optional
        Names the triangles in that cache (the URI and scale, or a digest of the data).
    max_pieces : int
        Beyond this many pieces the exact decomposition gives up.

    Returns
    -------
    (list of CollisionPiece, MeshUse) or (None, MeshUse)
        None when the decomposition needs more than ``max_pieces`` pieces: the caller uses the
        hull instead (the MeshUse's note says so).

    Raises
    ------
    ModelError
        Naming ``body``: no triangles, coordinates that are not finite.

    """
    triangles = np.asarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    try:
        if resolver is not None and key is not None:
            found = resolver.exact_pieces(key, triangles, max_pieces)
        else:
            from gjk_ros.core.mesh_pieces import mesh_pieces
            found = mesh_pieces(triangles, max_pieces=max_pieces)
    except TooManyPieces:
        note = (f'{body}: {label} needs more than {max_pieces} convex pieces to be exact; using '
                'its convex hull')
        return None, MeshUse(body, label, 'hull', 1, None, math.nan, note)
    except ValueError as error:
        raise ModelError(body, f'{label}: {error}') from None
    pieces = []
    total = len(found.solids) + len(found.surfaces)
    for kind, group in (('solid', found.solids), ('surface', found.surfaces)):
        for points in group:
            shape = ConvexPolytope.from_points(points)
            text = f'{label}: exact {kind} piece {len(pieces) + 1} of {total}'
            make = SurfacePiece if kind == 'surface' else CollisionPiece
            pieces.append(make(body, frame_id, origin, shape, text))
    warnings = ()
    if not found.watertight:
        parts = found.closed_parts + found.open_parts
        warnings = (f'{body}: {label} is not watertight ({found.open_parts} of {parts} parts '
                    'open): an open part has no inside, so its distances are unsigned (a body '
                    'crossing it reads 0, never negative)',)
    if pieces and warnings:
        first = pieces[0]
        pieces[0] = type(first)(first.body, first.frame_id, first.origin, first.shape,
                                first.description, warnings)
    return pieces, MeshUse(body, label, 'exact', len(pieces), found.watertight)
