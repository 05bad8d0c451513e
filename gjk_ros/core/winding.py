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
Generalised winding numbers of points with respect to a triangle mesh (inside tests).

The winding number of a point p with respect to a closed, consistently oriented triangle mesh
is the signed solid angle the mesh subtends at p divided by 4 pi: 1 inside (-1 for a mesh
whose faces point inwards), 0 outside, an integer everywhere off the surface, whatever the
mesh's genus. The solid angle of one triangle abc seen from p is Van Oosterom and Strackee's
(IEEE Trans. Biomed. Eng. 30(2), 1983)

    tan(omega / 2) = a . (b x c) / (|a||b||c| + (a . b)|c| + (a . c)|b| + (b . c)|a|)

with a, b, c the corners relative to p, taken with atan2 so that every sign is kept. For an
open mesh the same sum is Jacobson, Kavan and Sorkine-Hornung's generalised winding number
(SIGGRAPH 2013), which is not an integer; this project calls a body inside only for closed
meshes (``mesh_pieces``), where the sum is exact up to round-off.
"""

import math

import numpy as np

from ._jit import njit

__all__ = ['winding_numbers', 'INSIDE_WINDING']

# A point is inside a closed mesh when |winding number| exceeds this: the sum is an integer up
# to round-off (1e-12 or so), so one half separates 0 from +-1 with every margin to spare.
INSIDE_WINDING = 0.5


@njit
def _winding_kernel(points, triangles, out):
    for i in range(points.shape[0]):
        px, py, pz = points[i, 0], points[i, 1], points[i, 2]
        total = 0.0
        for t in range(triangles.shape[0]):
            ax, ay, az = triangles[t, 0, 0] - px, triangles[t, 0, 1] - py, \
                triangles[t, 0, 2] - pz
            bx, by, bz = triangles[t, 1, 0] - px, triangles[t, 1, 1] - py, \
                triangles[t, 1, 2] - pz
            cx, cy, cz = triangles[t, 2, 0] - px, triangles[t, 2, 1] - py, \
                triangles[t, 2, 2] - pz
            la = math.sqrt(ax * ax + ay * ay + az * az)
            lb = math.sqrt(bx * bx + by * by + bz * bz)
            lc = math.sqrt(cx * cx + cy * cy + cz * cz)
            triple = (ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz)
                      + az * (bx * cy - by * cx))
            below = (la * lb * lc + (ax * bx + ay * by + az * bz) * lc
                     + (ax * cx + ay * cy + az * cz) * lb + (bx * cx + by * cy + bz * cz) * la)
            total += 2.0 * math.atan2(triple, below)
        out[i] = total / (4.0 * math.pi)


def winding_numbers(points, triangles):
    """
    Return the winding number of every point with respect to the triangles.

    Parameters
    ----------
    points : array-like
        (n, 3) query points.
    triangles : array-like
        (t, 3, 3) triangle corners, counter-clockwise seen from outside.

    Returns
    -------
    numpy.ndarray
        (n,) float: about +1 inside a closed outward-oriented mesh, -1 inside an inward one,
        0 outside. A point on the surface gets a value in between.

    """
    points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    triangles = np.ascontiguousarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
    out = np.empty(points.shape[0])
    _winding_kernel(points, triangles, out)
    return out
