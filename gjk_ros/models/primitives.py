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
Primitive shapes as ConvexPolytope, with their descriptions.

Box, sphere, cylinder, capsule, cone, ellipsoid (``exact_ellipsoid``) and half-space are exact
(the core represents spheres and capsules as a point or a segment swept by a radius, cylinders,
cones and ellipsoids by their smooth support functions, and measures a half-space in closed
form).

Two marker shapes are replaced by an OUTER polytope, which contains the true shape, so a distance
is never over-estimated:

* ellipsoid (a non-uniform SPHERE marker): a subdivided icosahedron whose faces are pushed out
  until they touch the unit sphere, then scaled by the semi-axes. Every point of it lies within
  ``ELLIPSOID_OUTER_ERROR`` times the largest semi-axis of the ellipsoid.
* elliptic cylinder (a CYLINDER marker with scale.x != scale.y): a prism over a regular
  ``ELLIPTIC_CYLINDER_SIDES``-gon circumscribed about the unit circle, scaled by the semi-axes;
  within ``ELLIPTIC_CYLINDER_OUTER_ERROR`` times the larger semi-axis.

Both carry a warning saying so.
"""

import functools
from typing import NamedTuple

from gjk_ros.core import ConvexPolytope
from gjk_ros.models.values import (check_positive, MAX_MAGNITUDE, parse_numbers,
                                   parse_positive)
import numpy as np
from scipy.spatial import ConvexHull, QhullError
import trimesh

ELLIPSOID_SUBDIVISIONS = 3   # 642 vertices; hill climbing keeps queries cheap anyway
ELLIPTIC_CYLINDER_SIDES = 64
ELLIPTIC_CYLINDER_OUTER_ERROR = 1.0 / np.cos(np.pi / ELLIPTIC_CYLINDER_SIDES) - 1.0
# Relative tolerance under which diameters count as equal (a true sphere or circle).
UNIFORM_RTOL = 1e-9


class Shape(NamedTuple):
    """A convex shape in its piece frame, with what to tell the user about it."""

    polytope: ConvexPolytope
    description: str
    warnings: tuple[str, ...] = ()
    # (uri, (sx, sy, sz)) of a non-convex mesh file this is the hull of, else (): what a
    # convex decomposition would replace (see gjk_ros.models.decomposition).
    mesh: tuple = ()


def box(size) -> Shape:
    """Axis-aligned box centred at the origin; ``size`` are the full edge lengths (3,)."""
    edges = check_positive(parse_numbers(size, 'box size', 3), 'box size')
    return Shape(ConvexPolytope.box(edges / 2.0), f'box {_times(edges)}')


def sphere(radius) -> Shape:
    """Exact sphere centred at the origin."""
    radius = parse_positive(radius, 'sphere radius')
    return Shape(ConvexPolytope.sphere(radius), f'sphere radius {radius:g}')


def cylinder(radius, length) -> Shape:
    """Exact cylinder, axis z, centred at the origin, ``length`` along z."""
    radius = parse_positive(radius, 'cylinder radius')
    length = parse_positive(length, 'cylinder length')
    return Shape(ConvexPolytope.cylinder(radius, length),
                 f'cylinder radius {radius:g} length {length:g}')


def capsule(radius, length) -> Shape:
    """Exact capsule: the z segment from -length/2 to +length/2 swept by ``radius``."""
    radius = parse_positive(radius, 'capsule radius')
    length = parse_positive(length, 'capsule length')
    return Shape(ConvexPolytope.capsule(radius, length),
                 f'capsule radius {radius:g} length {length:g}')


def cone(radius, length) -> Shape:
    """Exact cone, axis z, centred: base disc of ``radius`` at -length/2, apex at +length/2."""
    radius = parse_positive(radius, 'cone radius')
    length = parse_positive(length, 'cone length')
    return Shape(ConvexPolytope.cone(radius, length),
                 f'cone radius {radius:g} length {length:g}')


def exact_ellipsoid(semi_axes) -> Shape:
    """Exact ellipsoid centred at the origin with the given (3,) semi-axes (support mapping)."""
    axes = check_positive(parse_numbers(semi_axes, 'ellipsoid semi_axes', 3),
                          'ellipsoid semi_axes')
    return Shape(ConvexPolytope.ellipsoid(axes), f'ellipsoid semi-axes {_times(axes)}')


def half_space() -> Shape:
    """Return the half-space z <= 0 of the piece frame (a table top, a floor): exact."""
    return Shape(ConvexPolytope.half_space(), 'half-space z <= 0')


def ellipsoid(diameters, body: str) -> Shape:
    """
    Ellipsoid with the given full diameters along x, y, z, centred at the origin.

    Equal diameters give the exact sphere; otherwise the outer polytope described in the module
    docstring, with a warning naming ``body``.
    """
    diameters = check_positive(parse_numbers(diameters, 'sphere diameters', 3),
                               'sphere diameters')
    if _uniform(diameters):
        return sphere(float(np.mean(diameters)) / 2.0)
    template = _outer_unit_sphere()
    description = (f'ellipsoid {_times(diameters)} (outer polytope of {len(template)} '
                   f'vertices, within {ELLIPSOID_OUTER_ERROR:.2%} of the largest semi-axis)')
    warning = (f'{body}: non-uniform sphere scale {_times(diameters)} is an ellipsoid; using '
               f'an outer polytope within {ELLIPSOID_OUTER_ERROR:.2%} of its largest semi-axis')
    return Shape(_scaled(_outer_unit_sphere_polytope(), diameters / 2.0), description,
                 (warning,))


def elliptic_cylinder(diameters, body: str) -> Shape:
    """
    Cylinder along z with x/y diameters and z length ``diameters = (dx, dy, length)``.

    Equal x and y diameters give the exact cylinder; otherwise the outer prism described in the
    module docstring, with a warning naming ``body``.
    """
    diameters = check_positive(parse_numbers(diameters, 'cylinder scale', 3), 'cylinder scale')
    if _uniform(diameters[:2]):
        return cylinder(float(np.mean(diameters[:2])) / 2.0, diameters[2])
    ring = _outer_unit_circle() * (diameters[:2] / 2.0)
    half_length = diameters[2] / 2.0
    points = np.vstack([np.column_stack([ring, np.full(len(ring), z)])
                        for z in (-half_length, half_length)])
    description = (f'elliptic cylinder {_times(diameters)} (outer prism of {len(points)} '
                   f'vertices, within {ELLIPTIC_CYLINDER_OUTER_ERROR:.2%} of the larger '
                   'semi-axis)')
    warning = (f'{body}: cylinder with unequal x/y diameters {_times(diameters[:2])} is '
               f'elliptic; using an outer prism within {ELLIPTIC_CYLINDER_OUTER_ERROR:.2%} '
               'of its larger semi-axis')
    return Shape(ConvexPolytope.from_points(points), description, (warning,))


def point_hull(points, radius: float = 0.0, label: str = 'points') -> Shape:
    """
    Convex hull of points, optionally swept by a sphere of ``radius`` (exact).

    Raises
    ------
    ValueError
        No points, non-finite coordinates, negative radius, or a hull of no size (all points
        equal and radius 0).

    """
    points = check_points(points, label)
    radius = float(radius)
    if not np.isfinite(radius) or radius < 0.0:
        raise ValueError(f'{label}: radius must be finite and >= 0, got {radius!r}')
    distinct = np.unique(points, axis=0)
    if len(distinct) == 1 and radius == 0.0:
        raise ValueError(f'{label}: all {len(points)} points coincide, the hull has no size')
    shape = ConvexPolytope.from_points(hull_vertices(distinct), radius=radius)
    swept = f' swept by radius {radius:g}' if radius > 0.0 else ''
    return Shape(shape, f'hull of {len(distinct)} {label}{swept}')


def ellipsoid_sweep(points, diameters, body: str, label: str) -> Shape:
    """
    Convex hull of ellipsoids of the given diameters centred at each point.

    Equal diameters give the exact swept hull; otherwise the Minkowski sum of the points' hull
    and the ellipsoid's outer polytope (so still an outer approximation), with a warning.
    """
    diameters = check_positive(parse_numbers(diameters, f'{label} scale', 3), f'{label} scale')
    if _uniform(diameters):
        shape = point_hull(points, float(np.mean(diameters)) / 2.0, label)
        return shape._replace(description=f'{shape.description} (spheres of diameter '
                                          f'{np.mean(diameters):g})')
    corners = hull_vertices(np.unique(check_points(points, label), axis=0))
    blob = ellipsoid(diameters, body)
    sums = (corners[:, None, :] + blob.polytope.vertices[None, :, :]).reshape(-1, 3)
    description = (f'hull of {len(corners)} {label} swept by {blob.description}')
    return Shape(ConvexPolytope.from_points(sums), description, blob.warnings)


def check_points(points, label: str) -> np.ndarray:
    """
    Return ``points`` as a finite, non-empty (n, 3) float64 array.

    Raises
    ------
    ValueError
        Otherwise, saying which.

    """
    array = np.asarray(points, dtype=np.float64)
    if array.size == 0:
        raise ValueError(f'{label}: no points')
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f'{label}: expected (n, 3) coordinates, got shape {array.shape}')
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():
        raise ValueError(f'{label}: {int(bad.sum())} of {len(array)} points are not finite')
    if np.abs(array).max() > MAX_MAGNITUDE:
        raise ValueError(f'{label}: coordinates beyond {MAX_MAGNITUDE:g} m')
    return array


def hull_vertices(points: np.ndarray) -> np.ndarray:
    """Vertices of the 3-D hull of ``points``, or ``points`` itself when it is flat or tiny."""
    if len(points) < 5:
        return points
    try:
        # Joggled: a superset of the true vertices at worst, fast on coplanar/cocircular sets.
        return points[ConvexHull(points, qhull_options='QJ').vertices]
    except QhullError:
        # Flat or collinear: the core handles degenerate sets directly.
        return points


@functools.lru_cache(maxsize=1)
def _outer_unit_sphere() -> np.ndarray:
    sphere_mesh = trimesh.creation.icosphere(subdivisions=ELLIPSOID_SUBDIVISIONS)
    vertices = sphere_mesh.vertices / np.linalg.norm(sphere_mesh.vertices, axis=1)[:, None]
    # Push the vertices out so that the nearest face plane touches the unit sphere.
    normals = np.cross(vertices[sphere_mesh.faces[:, 1]] - vertices[sphere_mesh.faces[:, 0]],
                       vertices[sphere_mesh.faces[:, 2]] - vertices[sphere_mesh.faces[:, 0]])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    inradius = np.abs(np.einsum('ij,ij->i', normals, vertices[sphere_mesh.faces[:, 0]])).min()
    outer = vertices / inradius
    outer.setflags(write=False)
    return outer


@functools.lru_cache(maxsize=1)
def _outer_unit_sphere_polytope() -> ConvexPolytope:
    return ConvexPolytope.from_points(_outer_unit_sphere())


def _scaled(polytope: ConvexPolytope, scale: np.ndarray) -> ConvexPolytope:
    """
    Return ``polytope`` scaled by ``scale`` (3,) > 0 along the axes, without a new hull.

    A positive diagonal map keeps every hull vertex extreme and every face a face, so the
    vertex graph is the template's: 0.5 ms instead of 18 ms of qhull and graph building per
    ellipsoid marker (a perception stack republishes them every frame).
    """
    return ConvexPolytope(polytope.vertices * scale, polytope.neighbor_offsets,
                          polytope.neighbor_indices)


def _outer_unit_circle() -> np.ndarray:
    angles = 2.0 * np.pi * np.arange(ELLIPTIC_CYLINDER_SIDES) / ELLIPTIC_CYLINDER_SIDES
    return np.column_stack([np.cos(angles), np.sin(angles)]) / np.cos(
        np.pi / ELLIPTIC_CYLINDER_SIDES)


def _uniform(values: np.ndarray) -> bool:
    return bool(np.allclose(values, values[0], rtol=UNIFORM_RTOL, atol=0.0))


def _times(values) -> str:
    return 'x'.join(f'{v:g}' for v in values)


ELLIPSOID_OUTER_ERROR = float(np.linalg.norm(_outer_unit_sphere()[0]) - 1.0)
