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

"""A convex piece of collision geometry attached to a frame."""

from dataclasses import dataclass
from typing import ClassVar

from gjk_ros.core import ConvexPolytope
import numpy as np


@dataclass(frozen=True, eq=False)
class CollisionPiece:
    """
    One convex piece of a link or an obstacle, in the frame it moves with.

    The piece's world pose is ``T_world_frame @ origin``; the shape is given in the piece frame.
    Equality is identity (the fields hold arrays).

    Attributes
    ----------
    body : str
        Link name, or obstacle name ``ns/id``.
    frame_id : str
        Frame the piece is attached to (URDF: the link; marker: ``header.frame_id``).
    origin : numpy.ndarray
        (4, 4) float64, read-only: pose of the piece in ``frame_id``.
    shape : ConvexPolytope
        The convex geometry in the piece frame.
    description : str
        Human-readable summary, e.g. ``'box 0.1x0.2x0.3'``.
    warnings : tuple of str
        Things the user should hear about once (mesh replaced by its hull, ellipsoid
        approximated by a polytope), each naming the body.
    mesh : tuple
        ``(uri, (sx, sy, sz))`` when ``shape`` is the hull of a non-convex mesh file (what a
        convex decomposition may replace), else ``()``.

    """

    body: str
    frame_id: str
    origin: np.ndarray
    shape: ConvexPolytope
    description: str
    warnings: tuple[str, ...] = ()
    mesh: tuple = ()
    # A flat piece of an open surface has no inside (mesh_bodies.SurfacePiece): a body
    # crossing it is at 0, never negative (``unsigned`` in gjk_ros.core.bodypairs).
    unsigned: ClassVar[bool] = False

    def __post_init__(self):
        origin = np.array(self.origin, dtype=np.float64)
        if origin.shape != (4, 4) or not np.isfinite(origin).all():
            raise ValueError(f'{self.body}: origin must be a finite (4, 4) matrix')
        origin.setflags(write=False)
        object.__setattr__(self, 'origin', origin)
        object.__setattr__(self, 'warnings', tuple(self.warnings))
