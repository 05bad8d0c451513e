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
The GJK sub-algorithm: the point of a simplex closest to the origin.

For a simplex of 1 to 4 Minkowski points ``w[i]`` the solvers find the smallest sub-simplex whose
affine hull's closest point to the origin lies inside it (Cameron 1997 section 3.3; Gilbert,
Johnson and Keerthi 1988). Subsets are bit-indexed as in the paper: bit ``i`` of a mask is set when
``w[i]`` belongs to the subset. Each solver writes the barycentric weights (lambda) of the kept
vertices into ``weights`` (zero elsewhere) and returns ``(mask, vx, vy, vz)``, where ``v`` is the
closest point.

Region tests use signed volumes (Montanari, Petrinic and Barbieri 2017, "Improving the GJK
algorithm for faster and more reliable distance queries between convex objects"): the origin lies
in the region of vertex ``i`` exactly when the signed volume obtained by replacing ``w[i]`` with the
origin has the sign of the full volume. The triangle solver measures those areas in the coordinate
plane where the triangle's projection is largest, which keeps them accurate on slivers; a simplex
that is degenerate (zero length, area or volume) is solved by its faces. No tolerance is needed
here: degenerate cases fall through to lower dimensions by sign tests alone.
"""

from ._jit import njit

__all__ = ['solve_simplex', 'solve_segment', 'solve_triangle', 'solve_tetrahedron']


@njit
def _same_sign(a, b):
    return (a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)


@njit
def _clear(weights):
    for i in range(4):
        weights[i] = 0.0


@njit
def solve_segment(w, i0, i1, weights):
    """
    Closest point to the origin on the segment ``w[i0] w[i1]``.

    With ``e = w1 - w0`` the origin projects to ``w0 + t e`` where ``t = -(w0 . e) / (e . e)``;
    ``t <= 0`` is the region of ``w0``, ``t >= 1`` that of ``w1``, anything else the edge with
    weights ``(1 - t, t)``. A zero-length segment is its first point.
    """
    _clear(weights)
    ax, ay, az = w[i0, 0], w[i0, 1], w[i0, 2]
    ex, ey, ez = w[i1, 0] - ax, w[i1, 1] - ay, w[i1, 2] - az
    ee = ex * ex + ey * ey + ez * ez
    t = 0.0
    if ee > 0.0:
        t = -(ax * ex + ay * ey + az * ez) / ee
    if t <= 0.0:
        weights[i0] = 1.0
        return (1 << i0), ax, ay, az
    if t >= 1.0:
        weights[i1] = 1.0
        return (1 << i1), w[i1, 0], w[i1, 1], w[i1, 2]
    weights[i0] = 1.0 - t
    weights[i1] = t
    return (1 << i0) | (1 << i1), ax + t * ex, ay + t * ey, az + t * ez


@njit
def _area2(ux, uy, vx, vy, wx, wy):
    """Twice the signed area of the 2D triangle (u, v, w)."""
    return (vx - ux) * (wy - uy) - (wx - ux) * (vy - uy)


@njit
def _best_edge(w, i0, i1, i2, use0, use1, use2, weights, scratch):
    """Solve the edges opposite the flagged vertices and keep the closest result."""
    best = -1.0
    mask, vx, vy, vz = 0, 0.0, 0.0, 0.0
    edges = ((use0, i1, i2), (use1, i0, i2), (use2, i0, i1))
    for use, j0, j1 in edges:
        if not use:
            continue
        m, px, py, pz = solve_segment(w, j0, j1, scratch)
        d2 = px * px + py * py + pz * pz
        if best < 0.0 or d2 < best:
            best = d2
            mask, vx, vy, vz = m, px, py, pz
            for k in range(4):
                weights[k] = scratch[k]
    return mask, vx, vy, vz


@njit
def solve_triangle(w, i0, i1, i2, weights, scratch):
    """
    Closest point to the origin on the triangle ``w[i0] w[i1] w[i2]``.

    The origin projects onto the triangle's plane at ``p = n (n . w0) / (n . n)`` with
    ``n = (w1 - w0) x (w2 - w0)``. Drop the axis of the largest ``|n|`` component and compare, in
    the remaining coordinate plane, the signed area of the triangle with the areas obtained by
    replacing each vertex with ``p``: when all agree in sign ``p`` is inside and the areas divided
    by the total are its barycentric weights; otherwise the closest point lies on an edge opposite
    a vertex whose area disagrees. ``scratch`` is a (4,) work array.
    """
    ax, ay, az = w[i0, 0], w[i0, 1], w[i0, 2]
    bx, by, bz = w[i1, 0], w[i1, 1], w[i1, 2]
    cx, cy, cz = w[i2, 0], w[i2, 1], w[i2, 2]
    abx, aby, abz = bx - ax, by - ay, bz - az
    acx, acy, acz = cx - ax, cy - ay, cz - az
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    nn = nx * nx + ny * ny + nz * nz
    if nn == 0.0:
        return _best_edge(w, i0, i1, i2, True, True, True, weights, scratch)
    s = (nx * ax + ny * ay + nz * az) / nn
    px, py, pz = s * nx, s * ny, s * nz
    # Project onto the coordinate plane where the triangle's shadow is largest.
    if abs(nx) >= abs(ny) and abs(nx) >= abs(nz):
        u = (ay, by, cy, py)
        v = (az, bz, cz, pz)
    elif abs(ny) >= abs(nz):
        u = (az, bz, cz, pz)
        v = (ax, bx, cx, px)
    else:
        u = (ax, bx, cx, px)
        v = (ay, by, cy, py)
    total = _area2(u[0], v[0], u[1], v[1], u[2], v[2])
    c0 = _area2(u[3], v[3], u[1], v[1], u[2], v[2])
    c1 = _area2(u[0], v[0], u[3], v[3], u[2], v[2])
    c2 = _area2(u[0], v[0], u[1], v[1], u[3], v[3])
    in0 = _same_sign(total, c0)
    in1 = _same_sign(total, c1)
    in2 = _same_sign(total, c2)
    if in0 and in1 and in2:
        _clear(weights)
        weights[i0] = c0 / total
        weights[i1] = c1 / total
        weights[i2] = c2 / total
        return (1 << i0) | (1 << i1) | (1 << i2), px, py, pz
    return _best_edge(w, i0, i1, i2, not in0, not in1, not in2, weights, scratch)


@njit
def _volume6(ax, ay, az, bx, by, bz, cx, cy, cz, dx, dy, dz):
    """Six times the signed volume of the tetrahedron (a, b, c, d): (b - a) . ((c - a) x (d - a))."""
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    qx, qy, qz = dx - ax, dy - ay, dz - az
    return ux * (vy * qz - vz * qy) + uy * (vz * qx - vx * qz) + uz * (vx * qy - vy * qx)


@njit
def solve_tetrahedron(w, weights, scratch, scratch2):
    """
    Closest point to the origin on the tetrahedron ``w[0..3]``.

    ``c[i]`` is the signed volume with ``w[i]`` replaced by the origin; the four sum to the full
    volume. All four agreeing in sign with it means the origin is inside (mask 0b1111, v = 0, the
    weights are the normalised volumes); otherwise the closest point lies on a face opposite a
    vertex whose volume disagrees, and the closest of those face solutions wins.
    """
    p = (w[0, 0], w[0, 1], w[0, 2], w[1, 0], w[1, 1], w[1, 2],
         w[2, 0], w[2, 1], w[2, 2], w[3, 0], w[3, 1], w[3, 2])
    total = _volume6(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])
    c0 = _volume6(0.0, 0.0, 0.0, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11])
    c1 = _volume6(p[0], p[1], p[2], 0.0, 0.0, 0.0, p[6], p[7], p[8], p[9], p[10], p[11])
    c2 = _volume6(p[0], p[1], p[2], p[3], p[4], p[5], 0.0, 0.0, 0.0, p[9], p[10], p[11])
    c3 = _volume6(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], 0.0, 0.0, 0.0)
    inside = (_same_sign(total, c0), _same_sign(total, c1),
              _same_sign(total, c2), _same_sign(total, c3))
    if inside[0] and inside[1] and inside[2] and inside[3]:
        weights[0] = c0 / total
        weights[1] = c1 / total
        weights[2] = c2 / total
        weights[3] = c3 / total
        return 15, 0.0, 0.0, 0.0
    faces = ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))
    best = -1.0
    mask, vx, vy, vz = 0, 0.0, 0.0, 0.0
    for k in range(4):
        if inside[k]:
            continue
        i0, i1, i2 = faces[k]
        m, px, py, pz = solve_triangle(w, i0, i1, i2, scratch, scratch2)
        d2 = px * px + py * py + pz * pz
        if best < 0.0 or d2 < best:
            best = d2
            mask, vx, vy, vz = m, px, py, pz
            for j in range(4):
                weights[j] = scratch[j]
    return mask, vx, vy, vz


@njit
def solve_simplex(w, count, weights, scratch, scratch2):
    """Dispatch on the simplex size; ``w[:count]`` are the vertices."""
    if count == 1:
        _clear(weights)
        weights[0] = 1.0
        return 1, w[0, 0], w[0, 1], w[0, 2]
    if count == 2:
        return solve_segment(w, 0, 1, weights)
    if count == 3:
        return solve_triangle(w, 0, 1, 2, weights, scratch)
    return solve_tetrahedron(w, weights, scratch, scratch2)
