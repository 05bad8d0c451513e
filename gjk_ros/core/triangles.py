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

"""Exact point-triangle distances (Ericson, Real-Time Collision Detection, 5.1.5)."""

import numpy as np

from ._jit import njit

__all__ = ['closest_on_segment', 'closest_on_triangle', 'point_triangle_distances']


@njit
def point_triangle_distances(points, triangles, candidates, out):
    """
    Write to ``out[i]`` the exact distance of ``points[i]`` to its nearest candidate triangle.

    ``candidates[i]`` indexes ``triangles`` (t, 3, 3). Scalar code on purpose: it compiles in
    a second (``gjk-ros warmup`` does it at install).
    """
    for i in range(points.shape[0]):
        best = np.inf
        px, py, pz = points[i, 0], points[i, 1], points[i, 2]
        for j in range(candidates.shape[1]):
            t = triangles[candidates[i, j]]
            squared = _point_triangle_squared(px, py, pz, t[0, 0], t[0, 1], t[0, 2], t[1, 0],
                                              t[1, 1], t[1, 2], t[2, 0], t[2, 1], t[2, 2])
            best = min(best, squared)
        out[i] = np.sqrt(best)


@njit
def _point_triangle_squared(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Squared distance from p to triangle abc: to its nearest point (``closest_on_triangle``)."""
    qx, qy, qz = closest_on_triangle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz)
    return _gap(px, py, pz, qx, qy, qz)


@njit
def closest_on_triangle(px, py, pz, ax, ay, az, bx, by, bz, cx, cy, cz):
    """Return the point of triangle abc nearest to p (Ericson 5.1.5: the module docstring)."""
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    nx, ny, nz = aby * acz - abz * acy, abz * acx - abx * acz, abx * acy - aby * acx
    if nx * nx + ny * ny + nz * nz == 0.0:  # no area: the nearest of its three edges
        best = closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz)
        for other in (closest_on_segment(px, py, pz, bx, by, bz, cx, cy, cz),
                      closest_on_segment(px, py, pz, cx, cy, cz, ax, ay, az)):
            if _gap(px, py, pz, other[0], other[1], other[2]) < \
                    _gap(px, py, pz, best[0], best[1], best[2]):
                best = other
        return best
    apx, apy, apz = px - ax, py - ay, pz - az
    d1, d2 = abx * apx + aby * apy + abz * apz, acx * apx + acy * apy + acz * apz
    if d1 <= 0.0 and d2 <= 0.0:  # vertex a
        return ax, ay, az
    bpx, bpy, bpz = px - bx, py - by, pz - bz
    d3, d4 = abx * bpx + aby * bpy + abz * bpz, acx * bpx + acy * bpy + acz * bpz
    if d3 >= 0.0 and d4 <= d3:  # vertex b
        return bx, by, bz
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:  # edge ab
        v = d1 / (d1 - d3)
        return ax + v * abx, ay + v * aby, az + v * abz
    cpx, cpy, cpz = px - cx, py - cy, pz - cz
    d5, d6 = abx * cpx + aby * cpy + abz * cpz, acx * cpx + acy * cpy + acz * cpz
    if d6 >= 0.0 and d5 <= d6:  # vertex c
        return cx, cy, cz
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:  # edge ac
        w = d2 / (d2 - d6)
        return ax + w * acx, ay + w * acy, az + w * acz
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:  # edge bc
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return bx + w * (cx - bx), by + w * (cy - by), bz + w * (cz - bz)
    scale = 1.0 / (va + vb + vc)  # inside the face
    v, w = vb * scale, vc * scale
    return ax + v * abx + w * acx, ay + v * aby + w * acy, az + v * abz + w * acz


@njit
def closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz):
    """Return the point of segment ab nearest to p."""
    abx, aby, abz = bx - ax, by - ay, bz - az
    length = abx * abx + aby * aby + abz * abz
    t = 0.0
    if length > 0.0:
        t = min(max(((px - ax) * abx + (py - ay) * aby + (pz - az) * abz) / length, 0.0), 1.0)
    return ax + t * abx, ay + t * aby, az + t * abz


@njit
def _gap(px, py, pz, qx, qy, qz):
    return (px - qx) ** 2 + (py - qy) ** 2 + (pz - qz) ** 2
