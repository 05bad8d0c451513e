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
Deliberately naive, exact reference for the signed distance (MTD) of two convex bodies.

It never imports gjk_ros: it works on world-frame point sets (and sweep radii) that the tests
build themselves, so a bug in the core cannot leak into the expected answers.

Method. The translational C-space obstacle D = A - B = {a - b} is the convex hull of every
pairwise difference a_i - b_j (scipy.spatial.ConvexHull). Then

- origin outside D: distance = Euclidean distance from the origin to D, the minimum over all hull
  triangles of an exact point-triangle distance; normal = -v / |v| with v the closest point;
- origin inside D: distance = -(penetration depth) = the largest facet plane offset (all are
  negative), normal = the outward normal of that facet;
- flat D (coplanar or collinear differences, where ConvexHull cannot work): solved exactly in 2D
  or 1D. The origin within a flat D means touching (distance 0).

Both cases are one formula: distance = max over unit n of gap(n), with
gap(n) = min_b n.b - max_a n.a (the separating-axis gap); `normal` is a maximiser. So moving B by
-distance * normal brings the bodies into contact, and witness_b - witness_a = distance * normal.

Sweep radii (a sphere swept over the hull) only shift the answer: the distance of the swept
bodies is the core distance minus (ra + rb), with the same normal.

Cylinders have no finite vertex set, so for them this is an approximate reference with a known
bound, not an exact one. `cylinder_points` gives a prism inscribed in (or circumscribed about)
the exact cylinder; the signed distance is monotone in the bodies, so the inscribed and
circumscribed answers bracket the exact one (`cylinder_bracket`, `expected_pair`). With 4096
sides the bracket is 2.9e-7 of the radius wide; two cylinders against each other use 128 sides
(3e-4 of the radius), since their difference has sides squared points. A cylinder against a
sphere is exact (`point_cylinder_signed_distance`). The witness checks of `check_result` use the
cylinder's exact support function and surface distance, so for separated bodies they certify an
answer exactly whatever the bracket: gap(normal) == distance == |witness_b - witness_a| with
both witnesses on the surfaces.

`Shape`, `expected_pair` and `check_result` are the test-side description of bodies and the
judge of a core answer; they take the core's classes as arguments and never import gjk_ros.
"""

from dataclasses import dataclass

import numpy
from scipy.spatial import ConvexHull
from scipy.spatial import QhullError

# Relative thickness below which a point set counts as flat: qhull cannot hull thinner sets, and
# flattening them moves the answer by at most this fraction of their extent.
FLAT_RELATIVE_THICKNESS = 1e-11
# Distances within this fraction of the coordinate scale count as ties when deciding which
# normals a correct solver may return (the core is held to 1e-9 of the size).
TIE_RELATIVE = 4e-9
# Rounding allowance for a normal near contact: computed as -v / |v| (or chosen between facets
# that touch the origin), its direction is only known to about eps * coordinate scale / |v|.
# This is 18 eps, a margin of about 10 over what a careful computation reaches.
NORMAL_ROUNDING_RELATIVE = 4e-15
# Rounding allowance on any distance or point, relative to the largest world coordinate (64 eps).
ROUNDING_RELATIVE = 64.0 * numpy.finfo(float).eps
# Largest relative move of a prism vertex (see cylinder_points).
CYLINDER_JITTER = 1e-9


@dataclass(frozen=True)
class Reference:
    """
    Exact signed distance of two convex bodies, with the data needed to judge an answer.

    Attributes
    ----------
    distance : float
        Signed distance (MTD): > 0 apart, 0 touching, < 0 minus the penetration depth.
    normal : numpy.ndarray
        (3,) unit vector from A to B at the optimum.
    normal_tolerance : float
        How far (Euclidean, between unit vectors) a correct solver's normal may be from
        `normal`: the spread of every direction whose gap is within the tie tolerance of the
        optimum, plus `normal_rounding`. 2.0 means any normal is acceptable (fully ambiguous).
    normal_rounding : float
        The part of `normal_tolerance` due to rounding alone: how far any computed normal may
        be from every optimal one because the core bodies nearly touch (|v| small).
    scale : float
        Largest absolute world coordinate of the two bodies: coordinates are rounded relative
        to it, so it sets the rounding tolerances.
    closest_point : numpy.ndarray
        (3,) point of the boundary of A - B (core hulls, before radii) closest to the origin.
    dimension : int
        Affine dimension of A - B (0 point, 1 segment, 2 polygon, 3 solid).

    """

    distance: float
    normal: numpy.ndarray
    normal_tolerance: float
    normal_rounding: float
    scale: float
    closest_point: numpy.ndarray
    dimension: int

    @property
    def normal_is_unique(self):
        """
        Tell whether the normal is determined to better than 1e-6.

        Returns
        -------
        bool
            True when every correct solver must return (nearly) this normal.

        """
        return self.normal_tolerance <= 1e-6


def transform_points(pose, points):
    """
    Map body-frame points to the world frame.

    Parameters
    ----------
    pose : array_like
        (4, 4) homogeneous transform, body -> world.
    points : array_like
        (n, 3) body-frame points.

    Returns
    -------
    numpy.ndarray
        (n, 3) world-frame points.

    """
    pose = numpy.asarray(pose, dtype=float)
    points = numpy.asarray(points, dtype=float).reshape(-1, 3)
    return points @ pose[:3, :3].T + pose[:3, 3]


def hull_vertices(points):
    """
    Reduce a point set to the vertices of its convex hull (all unique points if flat).

    Parameters
    ----------
    points : array_like
        (n, 3) points.

    Returns
    -------
    numpy.ndarray
        (k, 3) points whose hull equals the hull of `points`.

    """
    points = numpy.unique(numpy.asarray(points, dtype=float).reshape(-1, 3), axis=0)
    scale = max(float(numpy.max(numpy.abs(points))), numpy.finfo(float).tiny)
    if len(points) <= 4 or _affine_frame(points, scale)[0] < 3:
        return points
    try:
        return points[ConvexHull(points).vertices]
    except QhullError:
        return points


def minkowski_difference(points_a, points_b):
    """
    Return every pairwise difference a_i - b_j of two point sets (hull vertices only).

    Parameters
    ----------
    points_a, points_b : array_like
        (n, 3) and (m, 3) world-frame points.

    Returns
    -------
    numpy.ndarray
        (n' * m', 3) differences, whose hull is A - B.

    """
    a = hull_vertices(points_a)
    b = hull_vertices(points_b)
    return (a[:, None, :] - b[None, :, :]).reshape(-1, 3)


def signed_distance_reference(points_a, points_b, radius_a=0.0, radius_b=0.0):
    """
    Compute the exact signed distance (MTD) of two convex bodies given by world points.

    Parameters
    ----------
    points_a, points_b : array_like
        World-frame points whose convex hulls are the core bodies A and B.
    radius_a, radius_b : float
        Sweep radii of A and B (the bodies are the hulls grown by these radii).

    Returns
    -------
    Reference
        Signed distance, normal from A to B and the tolerance a correct normal must meet.

    """
    difference = minkowski_difference(points_a, points_b)
    scale = max(float(numpy.max(numpy.abs(points_a))), float(numpy.max(numpy.abs(points_b))),
                numpy.finfo(float).tiny)
    dimension, frame = _affine_frame(difference, scale)
    if dimension == 3:
        try:
            core = _solid_difference(difference, scale)
        except QhullError:
            core = _flat_difference(difference, frame, 2, scale)
    else:
        core = _flat_difference(difference, frame, dimension, scale)
    distance, normal, spread, closest_point, dimension = core
    rounding = 2.0
    if distance != 0.0:
        rounding = min(2.0, NORMAL_ROUNDING_RELATIVE * scale / abs(distance))
    return Reference(
        distance=distance - float(radius_a) - float(radius_b),
        normal=normal,
        normal_tolerance=min(2.0, spread + rounding),
        normal_rounding=rounding,
        scale=scale,
        closest_point=closest_point,
        dimension=dimension,
    )


def gap(points_a, points_b, direction, radius_a=0.0, radius_b=0.0):
    """
    Return the separating gap of two bodies along a direction.

    gap(n) = min_b n.b - max_a n.a (minus the radii); the signed distance is its maximum over
    unit vectors, so any direction gives a lower bound.

    Parameters
    ----------
    points_a, points_b : array_like
        World-frame points of A and B.
    direction : array_like
        (3,) direction from A to B (normalised here).
    radius_a, radius_b : float
        Sweep radii.

    Returns
    -------
    float
        The gap along the unit direction.

    """
    unit = numpy.asarray(direction, dtype=float)
    unit = unit / numpy.linalg.norm(unit)
    a = numpy.asarray(points_a, dtype=float).reshape(-1, 3)
    b = numpy.asarray(points_b, dtype=float).reshape(-1, 3)
    return float(numpy.min(b @ unit) - numpy.max(a @ unit)) - radius_a - radius_b


def bounding_size(points, radius=0.0):
    """
    Return the diameter of a bounding sphere of a body (at most twice its true diameter).

    Parameters
    ----------
    points : array_like
        (n, 3) points of the core hull.
    radius : float
        Sweep radius.

    Returns
    -------
    float
        2 * (largest distance from the centroid + radius).

    """
    points = numpy.asarray(points, dtype=float).reshape(-1, 3)
    centre = points.mean(axis=0)
    return 2.0 * (float(numpy.max(numpy.linalg.norm(points - centre, axis=1))) + radius)


def cylinder_points(radius, length, segments, circumscribed=False):
    """
    Return the vertices of a polygonal cylinder (axis z, centred) approximating an exact one.

    Each vertex is moved by a fixed pseudo-random fraction of at most 1e-9 of its radius and
    height, inwards for the inscribed prism and outwards for the circumscribed one. This keeps
    the inclusions (inscribed prism in cylinder in circumscribed prism) and spares qhull the slow
    merging of thousands of exactly coplanar cap points.

    Parameters
    ----------
    radius, length : float
        Radius and full length of the exact cylinder.
    segments : int
        Number of polygon sides of each cap.
    circumscribed : bool
        False: the polygon is inscribed (the prism lies inside the cylinder). True: the polygon's
        sides touch the circle (the prism contains the cylinder).

    Returns
    -------
    numpy.ndarray
        (2 * segments, 3) vertices.

    """
    angles = 2.0 * numpy.pi * numpy.arange(segments) / segments
    ring = radius / numpy.cos(numpy.pi / segments) if circumscribed else radius
    jitter = CYLINDER_JITTER * numpy.random.default_rng(segments).random((2, 2 * segments))
    direction = 1.0 if circumscribed else -1.0
    ring_radii = ring * (1.0 + direction * jitter[0])
    angles = numpy.concatenate([angles, angles])
    heights = numpy.repeat([0.5 * length, -0.5 * length], segments) * (1.0 + direction * jitter[1])
    return numpy.column_stack([ring_radii * numpy.cos(angles), ring_radii * numpy.sin(angles),
                               heights])


def cylinder_bracket(cylinder_pose, radius, length, points_b, radius_b=0.0, segments=4096,
                     cylinder_is_a=True):
    """
    Bracket the exact signed distance between a cylinder and a convex body.

    The prism inscribed in the cylinder gives an upper bound and the circumscribed prism a lower
    bound (a larger body is never farther away).

    Parameters
    ----------
    cylinder_pose : array_like
        (4, 4) pose of the cylinder (axis z, centred, in its body frame).
    radius, length : float
        Cylinder radius and full length.
    points_b : array_like
        World-frame points of the other body.
    radius_b : float
        Sweep radius of the other body.
    segments : int
        Polygon sides of the approximating prisms.
    cylinder_is_a : bool
        Whether the cylinder is body A (else B; only the normal's sign depends on it).

    Returns
    -------
    tuple of (float, float, Reference)
        Lower bound, upper bound and the inscribed prism's reference (for its normal).

    """
    inner = transform_points(cylinder_pose, cylinder_points(radius, length, segments))
    outer = transform_points(cylinder_pose, cylinder_points(radius, length, segments, True))
    if cylinder_is_a:
        upper = signed_distance_reference(inner, points_b, 0.0, radius_b)
        lower = signed_distance_reference(outer, points_b, 0.0, radius_b)
    else:
        upper = signed_distance_reference(points_b, inner, radius_b, 0.0)
        lower = signed_distance_reference(points_b, outer, radius_b, 0.0)
    return lower.distance, upper.distance, upper


def point_cylinder_signed_distance(point, radius, length):
    """
    Return the exact signed distance from a point to a solid cylinder (axis z, centred).

    Parameters
    ----------
    point : array_like
        (3,) point in the cylinder's body frame.
    radius, length : float
        Cylinder radius and full length.

    Returns
    -------
    float
        Distance to the surface, negative inside.

    """
    x, y, z = (float(c) for c in point)
    radial = numpy.hypot(x, y)
    half = 0.5 * length
    radial_excess = radial - radius
    axial_excess = abs(z) - half
    if radial_excess <= 0.0 and axial_excess <= 0.0:
        return max(radial_excess, axial_excess)
    return float(numpy.hypot(max(radial_excess, 0.0), max(axial_excess, 0.0)))


def _affine_frame(points, scale):
    """
    Return the affine dimension of a point set and an orthonormal frame of its span.

    Parameters
    ----------
    points : numpy.ndarray
        (n, 3) points.
    scale : float
        Magnitude of the coordinates the points were computed from.

    Returns
    -------
    tuple of (int, tuple)
        Dimension (0 to 3) and (centroid, (3, 3) rows = principal axes by decreasing extent).

    """
    centroid = points.mean(axis=0)
    centred = points - centroid
    # Zero rows change neither the singular values nor the axes; they make V a full 3x3 frame.
    padded = numpy.vstack([centred, numpy.zeros((3, 3))])
    _, _, axes = numpy.linalg.svd(padded, full_matrices=False)
    extents = numpy.ptp(centred @ axes.T, axis=0)
    # Rounding of the coordinates alone gives a thickness of about eps * scale.
    threshold = max(FLAT_RELATIVE_THICKNESS * extents[0], 64.0 * numpy.finfo(float).eps * scale)
    dimension = int(numpy.count_nonzero(extents > threshold))
    return dimension, (centroid, axes)


def _solid_difference(difference, scale):
    """
    Solve the full-dimensional case with a 3D hull.

    Parameters
    ----------
    difference : numpy.ndarray
        (n, 3) points of A - B.
    scale : float
        Coordinate scale.

    Returns
    -------
    tuple
        (distance, normal, spread of near-optimal normals, closest_point, 3) without radii.

    """
    hull = ConvexHull(difference)
    facet_normals = hull.equations[:, :3]
    # qhull's planes are n.x + offset <= 0 inside, so the gap along a facet normal is its offset.
    facet_gaps = hull.equations[:, 3]
    triangles = hull.points[hull.simplices]
    closest, boundary_distance = _closest_point_on_triangles(triangles)
    tie = TIE_RELATIVE * scale
    best_facet = int(numpy.argmax(facet_gaps))
    if facet_gaps[best_facet] <= 0.0 or boundary_distance == 0.0:
        # Inside, or exactly on the boundary (where the sign of a tiny facet gap is rounding).
        distance = min(float(facet_gaps[best_facet]), 0.0)
        normal = facet_normals[best_facet].copy()
        closest = -distance * normal
        candidates = facet_normals[facet_gaps >= distance - tie]
    else:
        distance = boundary_distance
        normal = -closest / distance
        near_facets = facet_normals[facet_gaps >= distance - tie]
        candidates = numpy.vstack([normal[None, :], near_facets])
    spread = float(numpy.max(numpy.linalg.norm(candidates - normal, axis=1)))
    return distance, normal, spread, closest, 3


def _flat_difference(difference, frame, dimension, scale):
    """
    Solve a flat (polygon, segment or point) Minkowski difference exactly.

    Parameters
    ----------
    difference : numpy.ndarray
        (n, 3) points of A - B.
    frame : tuple
        Centroid and principal axes from `_affine_frame`.
    dimension : int
        Affine dimension, 0 to 2.
    scale : float
        Coordinate scale.

    Returns
    -------
    tuple
        (distance, normal, spread of near-optimal normals, closest_point, dimension) without
        radii.

    """
    centroid, axes = frame
    in_plane = axes[:dimension]
    coordinates = (difference - centroid) @ in_plane.T
    origin = (-centroid) @ in_plane.T
    if dimension == 0:
        local = numpy.zeros(0)
    elif dimension == 1:
        local = numpy.clip(origin, coordinates.min(), coordinates.max())
    else:
        local = _closest_point_in_polygon(coordinates, origin)
    closest = centroid + local @ in_plane
    distance = float(numpy.linalg.norm(closest))
    if distance == 0.0:
        # The origin lies in a set without interior: touching, with no preferred normal.
        return 0.0, axes[2].copy(), 2.0, closest, dimension
    return distance, -closest / distance, 0.0, closest, dimension


def _closest_point_in_polygon(vertices, point):
    """
    Return the point of a convex polygon (2D) closest to a 2D point.

    Parameters
    ----------
    vertices : numpy.ndarray
        (n, 2) points whose hull is the polygon (full 2D rank).
    point : numpy.ndarray
        (2,) query point.

    Returns
    -------
    numpy.ndarray
        (2,) closest point (the point itself when inside).

    """
    hull = ConvexHull(vertices)
    if numpy.all(hull.equations[:, :2] @ point + hull.equations[:, 2] <= 0.0):
        return point.copy()
    starts = vertices[hull.simplices[:, 0]]
    ends = vertices[hull.simplices[:, 1]]
    candidates = _closest_point_on_segments(starts, ends, point)
    errors = numpy.linalg.norm(candidates - point, axis=1)
    return candidates[int(numpy.argmin(errors))]


def _closest_point_on_segments(starts, ends, point):
    """
    Return, for each segment, its point closest to a query point (any dimension).

    Parameters
    ----------
    starts, ends : numpy.ndarray
        (k, d) segment end points.
    point : numpy.ndarray
        (d,) query point.

    Returns
    -------
    numpy.ndarray
        (k, d) closest points.

    """
    edge = ends - starts
    length_squared = numpy.einsum('ij,ij->i', edge, edge)
    along = numpy.einsum('ij,ij->i', point - starts, edge)
    safe_length = numpy.where(length_squared > 0.0, length_squared, 1.0)
    fraction = numpy.clip(numpy.where(length_squared > 0.0, along / safe_length, 0.0), 0.0, 1.0)
    return starts + fraction[:, None] * edge


def _closest_point_on_triangles(triangles):
    """
    Return the point closest to the origin over a set of triangles, and its distance.

    For each triangle the closest point is either the projection of the origin onto its plane,
    when that projection lies inside (all barycentric coordinates >= 0), or the closest point of
    one of its three edges; the minimum over these four candidates is exact (Ericson 5.1.5 gets
    the same point by classifying the Voronoi regions; taking the minimum is simpler to trust).

    Parameters
    ----------
    triangles : numpy.ndarray
        (k, 3, 3) triangle corners.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        (3,) closest point and its distance to the origin.

    """
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    origin = numpy.zeros(3)
    candidates = [
        _closest_point_on_segments(a, b, origin),
        _closest_point_on_segments(b, c, origin),
        _closest_point_on_segments(c, a, origin),
    ]
    distances = [numpy.linalg.norm(points, axis=1) for points in candidates]
    plane_points, inside = _project_origin_onto_triangles(a, b, c)
    candidates.append(plane_points)
    distances.append(numpy.where(inside, numpy.linalg.norm(plane_points, axis=1), numpy.inf))
    stacked_points = numpy.stack(candidates)
    stacked_distances = numpy.stack(distances)
    kind, triangle = numpy.unravel_index(numpy.argmin(stacked_distances),
                                         stacked_distances.shape)
    return stacked_points[kind, triangle].copy(), float(stacked_distances[kind, triangle])


def _project_origin_onto_triangles(a, b, c):
    """
    Project the origin onto each triangle's plane and tell whether it falls inside.

    Parameters
    ----------
    a, b, c : numpy.ndarray
        (k, 3) triangle corners.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        (k, 3) projections and (k,) bool, True where the projection lies in the triangle.

    """
    normal = numpy.cross(b - a, c - a)
    area_squared = numpy.einsum('ij,ij->i', normal, normal)
    valid = area_squared > 0.0
    safe_area = numpy.where(valid, area_squared, 1.0)
    height = numpy.einsum('ij,ij->i', a, normal) / safe_area
    projection = height[:, None] * normal
    # Barycentric coordinates from the signed areas of the sub-triangles around the projection.
    weight_a = numpy.einsum('ij,ij->i', numpy.cross(b - projection, c - projection), normal)
    weight_b = numpy.einsum('ij,ij->i', numpy.cross(c - projection, a - projection), normal)
    weight_c = numpy.einsum('ij,ij->i', numpy.cross(a - projection, b - projection), normal)
    inside = valid & (weight_a >= 0.0) & (weight_b >= 0.0) & (weight_c >= 0.0)
    return projection, inside


# --- Bodies as the tests describe them ----------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """
    A convex body described on the test side, in its body frame.

    Attributes
    ----------
    name : str
        Short label for messages and test ids.
    points : numpy.ndarray
        (n, 3) core points whose hull is the core body (empty for an exact cylinder).
    radius : float
        Sweep radius.
    constructor : tuple
        How to build it with the core: ('from_points',), ('box', half_extents),
        ('sphere', radius), ('capsule', radius, length) or ('cylinder', radius, length).

    """

    name: str
    points: numpy.ndarray
    radius: float = 0.0
    constructor: tuple = ('from_points',)

    @property
    def is_cylinder(self):
        """
        Tell whether this is an exact (smooth) cylinder.

        Returns
        -------
        bool
            True for ('cylinder', radius, length).

        """
        return self.constructor[0] == 'cylinder'

    @property
    def size(self):
        """
        Return the diameter of a bounding sphere of the body.

        Returns
        -------
        float
            At least the body's diameter and at most twice it.

        """
        if self.is_cylinder:
            _, radius, length = self.constructor
            return 2.0 * float(numpy.hypot(radius, 0.5 * length))
        return bounding_size(self.points, self.radius)

    def build(self, polytope_class):
        """
        Build the body with the core's ConvexPolytope class (passed in: no core import here).

        Parameters
        ----------
        polytope_class : type
            gjk_ros.core.ConvexPolytope.

        Returns
        -------
        object
            The core body.

        """
        kind, *arguments = self.constructor
        if kind == 'from_points':
            return polytope_class.from_points(self.points, radius=self.radius)
        return getattr(polytope_class, kind)(*arguments)

    def scaled(self, factor):
        """
        Return the same body scaled about its origin.

        Parameters
        ----------
        factor : float
            Scale factor.

        Returns
        -------
        Shape
            Scaled copy.

        """
        kind, *arguments = self.constructor
        scaled_arguments = [numpy.asarray(value, dtype=float) * factor for value in arguments]
        return Shape(
            name=f'{self.name}*{factor:g}',
            points=self.points * factor,
            radius=self.radius * factor,
            constructor=(kind, *scaled_arguments),
        )

    def world_points(self, pose):
        """
        Return the core points in the world frame.

        Parameters
        ----------
        pose : array_like
            (4, 4) pose.

        Returns
        -------
        numpy.ndarray
            (n, 3) points.

        """
        return transform_points(pose, self.points)

    def support_value(self, pose, direction):
        """
        Return the exact support function max over the body of direction . x (world frame).

        Parameters
        ----------
        pose : array_like
            (4, 4) pose.
        direction : array_like
            (3,) world direction (any length).

        Returns
        -------
        float
            The support value.

        """
        pose = numpy.asarray(pose, dtype=float)
        direction = numpy.asarray(direction, dtype=float)
        local = pose[:3, :3].T @ direction
        centre_term = float(direction @ pose[:3, 3])
        if self.is_cylinder:
            _, radius, length = self.constructor
            return (centre_term + 0.5 * float(length) * abs(local[2])
                    + float(radius) * float(numpy.hypot(local[0], local[1])))
        return (centre_term + float(numpy.max(self.points @ local))
                + self.radius * float(numpy.linalg.norm(direction)))

    def surface_distance(self, pose, point):
        """
        Return the exact signed distance of a world point to the body (negative inside).

        Parameters
        ----------
        pose : array_like
            (4, 4) pose.
        point : array_like
            (3,) world point.

        Returns
        -------
        float
            Signed distance to the surface.

        """
        pose = numpy.asarray(pose, dtype=float)
        point = numpy.asarray(point, dtype=float)
        if self.is_cylinder:
            _, radius, length = self.constructor
            local = pose[:3, :3].T @ (point - pose[:3, 3])
            return point_cylinder_signed_distance(local, float(radius), float(length))
        return signed_distance_reference(point[None, :], self.world_points(pose),
                                         0.0, self.radius).distance


def box_corners(half_extents):
    """
    Return the eight corners of an axis-aligned box centred at the origin.

    Parameters
    ----------
    half_extents : array_like
        (3,) half sizes.

    Returns
    -------
    numpy.ndarray
        (8, 3) corners.

    """
    signs = numpy.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return signs * numpy.asarray(half_extents, dtype=float)


def points_shape(name, points, radius=0.0):
    """
    Describe the hull of a point set (optionally swept), built with from_points.

    Parameters
    ----------
    name : str
        Label.
    points : array_like
        (n, 3) points.
    radius : float
        Sweep radius.

    Returns
    -------
    Shape
        The body.

    """
    return Shape(name, numpy.asarray(points, dtype=float).reshape(-1, 3), float(radius))


def box_shape(half_extents):
    """
    Describe a box built with ConvexPolytope.box.

    Parameters
    ----------
    half_extents : array_like
        (3,) half sizes.

    Returns
    -------
    Shape
        The body.

    """
    half = numpy.asarray(half_extents, dtype=float)
    return Shape('box', box_corners(half), 0.0, ('box', half))


def sphere_shape(radius):
    """
    Describe a sphere built with ConvexPolytope.sphere (a point swept by the radius).

    Parameters
    ----------
    radius : float
        Radius.

    Returns
    -------
    Shape
        The body.

    """
    return Shape('sphere', numpy.zeros((1, 3)), float(radius), ('sphere', float(radius)))


def capsule_shape(radius, length):
    """
    Describe a capsule built with ConvexPolytope.capsule (a z segment swept by the radius).

    Parameters
    ----------
    radius, length : float
        Radius and segment length.

    Returns
    -------
    Shape
        The body.

    """
    segment = numpy.array([[0.0, 0.0, -0.5 * length], [0.0, 0.0, 0.5 * length]])
    return Shape('capsule', segment, float(radius), ('capsule', float(radius), float(length)))


def cylinder_shape(radius, length):
    """
    Describe an exact cylinder built with ConvexPolytope.cylinder (axis z, centred).

    Parameters
    ----------
    radius, length : float
        Radius and full length.

    Returns
    -------
    Shape
        The body (its points are the two cap centres, for bounding only).

    """
    caps = numpy.array([[0.0, 0.0, -0.5 * length], [0.0, 0.0, 0.5 * length]])
    return Shape('cylinder', caps, 0.0, ('cylinder', float(radius), float(length)))


def sphere_surface_points(rng, count, radius=1.0):
    """
    Return points drawn uniformly on a sphere (all are hull vertices).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    count : int
        Number of points.
    radius : float
        Sphere radius.

    Returns
    -------
    numpy.ndarray
        (count, 3) points.

    """
    points = rng.normal(size=(count, 3))
    return radius * points / numpy.linalg.norm(points, axis=1)[:, None]


def ball_points(rng, count, radius=1.0):
    """
    Return points drawn uniformly in a ball (many are interior, not hull vertices).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    count : int
        Number of points.
    radius : float
        Ball radius.

    Returns
    -------
    numpy.ndarray
        (count, 3) points.

    """
    radii = radius * rng.random(count) ** (1.0 / 3.0)
    return sphere_surface_points(rng, count) * radii[:, None]


def random_rotation(rng, max_angle=numpy.pi):
    """
    Return a random rotation matrix (uniform when max_angle is pi).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    max_angle : float
        Largest rotation angle (radians); below pi the angle is uniform in [0, max_angle].

    Returns
    -------
    numpy.ndarray
        (3, 3) rotation.

    """
    if max_angle >= numpy.pi:
        quaternion = rng.normal(size=4)
        w, x, y, z = quaternion / numpy.linalg.norm(quaternion)
        return numpy.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ])
    return axis_angle_rotation(sphere_surface_points(rng, 1)[0], rng.uniform(0.0, max_angle))


def axis_angle_rotation(axis, angle):
    """
    Return the rotation by an angle about an axis (Rodrigues).

    Parameters
    ----------
    axis : array_like
        (3,) axis (normalised here).
    angle : float
        Angle in radians.

    Returns
    -------
    numpy.ndarray
        (3, 3) rotation.

    """
    x, y, z = numpy.asarray(axis, dtype=float) / numpy.linalg.norm(axis)
    cross = numpy.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return numpy.eye(3) + numpy.sin(angle) * cross + (1.0 - numpy.cos(angle)) * cross @ cross


def make_pose(rotation=None, translation=(0.0, 0.0, 0.0)):
    """
    Build a (4, 4) homogeneous pose.

    Parameters
    ----------
    rotation : array_like, optional
        (3, 3) rotation; identity when omitted.
    translation : array_like
        (3,) translation.

    Returns
    -------
    numpy.ndarray
        (4, 4) pose.

    """
    pose = numpy.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


def translated(pose, offset):
    """
    Return a pose moved by a world-frame offset.

    Parameters
    ----------
    pose : array_like
        (4, 4) pose.
    offset : array_like
        (3,) world translation.

    Returns
    -------
    numpy.ndarray
        (4, 4) moved pose.

    """
    moved = numpy.array(pose, dtype=float)
    moved[:3, 3] += numpy.asarray(offset, dtype=float)
    return moved


# --- Expected answers and checks ----------------------------------------------------------------

# Polygon sides of the prisms that bracket an exact cylinder against another body; two cylinders
# against each other use fewer (the difference has segments_a * segments_b points).
CYLINDER_SEGMENTS = 4096
CYLINDER_PAIR_SEGMENTS = 128


@dataclass(frozen=True)
class Expected:
    """
    What a correct answer must satisfy: the signed distance lies in [low, high].

    For polytopes (and spheres, capsules) low == high is exact. For cylinders it is the prism
    bracket, and `normal` is the inscribed prism's normal, good to about 2 pi / segments.

    Attributes
    ----------
    low, high : float
        Bounds of the exact signed distance.
    normal : numpy.ndarray
        (3,) expected normal (A to B).
    normal_tolerance : float
        Allowed Euclidean distance from `normal`.
    normal_rounding : float
        Part of it due to rounding near contact (see Reference).
    size : float
        Largest bounding diameter of the two bodies (the scale of the tolerances).
    scale : float
        Largest absolute world coordinate (for rounding allowances).

    """

    low: float
    high: float
    normal: numpy.ndarray
    normal_tolerance: float
    normal_rounding: float
    size: float
    scale: float

    @property
    def distance(self):
        """
        Return the middle of the bracket (the exact distance for polytopes).

        Returns
        -------
        float
            (low + high) / 2.

        """
        return 0.5 * (self.low + self.high)


def expected_pair(shape_a, pose_a, shape_b, pose_b):
    """
    Compute the expected answer for two bodies in given poses.

    Parameters
    ----------
    shape_a, shape_b : Shape
        The bodies.
    pose_a, pose_b : array_like
        (4, 4) world poses.

    Returns
    -------
    Expected
        Exact distance (bracket for cylinders), normal and tolerances.

    """
    size = max(shape_a.size, shape_b.size)
    if not (shape_a.is_cylinder or shape_b.is_cylinder):
        reference = signed_distance_reference(shape_a.world_points(pose_a),
                                              shape_b.world_points(pose_b),
                                              shape_a.radius, shape_b.radius)
        return Expected(reference.distance, reference.distance, reference.normal,
                        reference.normal_tolerance, reference.normal_rounding, size,
                        reference.scale)
    exact = _cylinder_point_distance(shape_a, pose_a, shape_b, pose_b)
    if exact is not None:
        # No normal to compare with: the witness checks (exact support and surface distance)
        # still tie the normal to the optimum.
        scale = _world_scale(shape_a, pose_a, shape_b, pose_b)
        return Expected(exact, exact, numpy.array([0.0, 0.0, 1.0]), 2.0, 0.0, size, scale)
    segments = CYLINDER_SEGMENTS
    if shape_a.is_cylinder and shape_b.is_cylinder:
        segments = CYLINDER_PAIR_SEGMENTS
    inner_a, outer_a, radius_a = _prisms(shape_a, pose_a, segments)
    inner_b, outer_b, radius_b = _prisms(shape_b, pose_b, segments)
    upper = signed_distance_reference(inner_a, inner_b, radius_a, radius_b)
    lower = signed_distance_reference(outer_a, outer_b, radius_a, radius_b)
    # A side of the prism turns the normal by up to pi / segments.
    normal_tolerance = min(2.0, upper.normal_tolerance + 2.0 * numpy.pi / segments)
    rounding = max(upper.normal_rounding, lower.normal_rounding)
    return Expected(lower.distance, upper.distance, upper.normal, normal_tolerance, rounding,
                    size, max(upper.scale, lower.scale))


def _world_scale(shape_a, pose_a, shape_b, pose_b):
    """
    Return the largest absolute world coordinate of two bodies (core points and radii).

    Parameters
    ----------
    shape_a, shape_b : Shape
        The bodies.
    pose_a, pose_b : array_like
        (4, 4) world poses.

    Returns
    -------
    float
        The coordinate scale.

    """
    return max(float(numpy.max(numpy.abs(shape.world_points(pose)))) + shape.size
               for shape, pose in ((shape_a, pose_a), (shape_b, pose_b)))


def _cylinder_point_distance(shape_a, pose_a, shape_b, pose_b):
    """
    Return the exact distance of a cylinder and a swept point (a sphere), else None.

    Parameters
    ----------
    shape_a, shape_b : Shape
        The bodies.
    pose_a, pose_b : array_like
        (4, 4) world poses.

    Returns
    -------
    float or None
        The exact signed distance when one body is a cylinder and the other a single point.

    """
    for cylinder, cylinder_pose, other, other_pose in ((shape_a, pose_a, shape_b, pose_b),
                                                       (shape_b, pose_b, shape_a, pose_a)):
        if cylinder.is_cylinder and not other.is_cylinder:
            points = numpy.unique(other.points, axis=0)
            if len(points) == 1:
                centre = other.world_points(other_pose)[0]
                return cylinder.surface_distance(cylinder_pose, centre) - other.radius
    return None


def _prisms(shape, pose, segments):
    """
    Return inscribed and circumscribed world points for a body (the same twice if polytope).

    Parameters
    ----------
    shape : Shape
        The body.
    pose : array_like
        (4, 4) pose.
    segments : int
        Polygon sides for a cylinder.

    Returns
    -------
    tuple
        (inner points, outer points, sweep radius).

    """
    if not shape.is_cylinder:
        points = shape.world_points(pose)
        return points, points, shape.radius
    _, radius, length = shape.constructor
    inner = transform_points(pose, cylinder_points(radius, length, segments))
    outer = transform_points(pose, cylinder_points(radius, length, segments, True))
    return inner, outer, 0.0


def check_result(result, shape_a, pose_a, shape_b, pose_b, expected=None, relative=1e-9,
                 check_error_bound=True):
    """
    List every way a core result disagrees with the reference (empty list: correct).

    Tolerances are `relative` times (size + |distance|), size being the larger bounding diameter.

    Parameters
    ----------
    result : object
        A DistanceResult (any object with its attributes).
    shape_a, shape_b : Shape
        The bodies.
    pose_a, pose_b : array_like
        (4, 4) world poses.
    expected : Expected, optional
        Precomputed expectation (computed here when omitted).
    relative : float
        Relative tolerance on distances and points.
    check_error_bound : bool
        Also require |distance - exact| <= error_bound (+ rounding).

    Returns
    -------
    list of str
        Problems found.

    """
    if expected is None:
        expected = expected_pair(shape_a, pose_a, shape_b, pose_b)
    problems = []
    distance = float(result.distance)
    normal = numpy.asarray(result.normal, dtype=float)
    witness_a = numpy.asarray(result.witness_a, dtype=float)
    witness_b = numpy.asarray(result.witness_b, dtype=float)
    values = numpy.concatenate([[distance, result.error_bound], normal, witness_a, witness_b])
    if not numpy.all(numpy.isfinite(values)):
        return [f'non-finite result: {result}']
    # Rounding of world coordinates alone allows a few eps of their magnitude.
    tolerance = (relative * (expected.size + abs(expected.distance))
                 + ROUNDING_RELATIVE * expected.scale)
    problems += _check_distance(distance, expected, tolerance)
    problems += _check_status(result, distance, expected, tolerance)
    if check_error_bound:
        problems += _check_error_bound(result, distance, expected)
    problems += _check_normal(normal, expected, relative)
    # Near contact the normal is only known to normal_rounding, and a support value moves by
    # up to size times a change of direction.
    support_tolerance = tolerance + expected.size * expected.normal_rounding
    problems += _check_witnesses(distance, normal, witness_a, witness_b, shape_a, pose_a,
                                 shape_b, pose_b, tolerance, support_tolerance)
    return problems


def _check_distance(distance, expected, tolerance):
    if expected.low - tolerance <= distance <= expected.high + tolerance:
        return []
    return [f'distance {distance!r} outside [{expected.low!r}, {expected.high!r}] '
            f'+- {tolerance:.3g} (off by {distance - expected.distance:.3g})']


def _check_status(result, distance, expected, tolerance):
    status = int(result.status)
    problems = []
    if expected.low > tolerance and status != 0:
        problems.append(f'status {status} for separated bodies (distance {expected.low:.6g})')
    if expected.high < -tolerance and status != 2:
        problems.append(f'status {status} for penetrating bodies (distance {expected.high:.6g})')
    if status not in (0, 1, 2):
        problems.append(f'status {status} for valid input')
    if status == 1 and abs(distance) > tolerance:
        problems.append(f'status TOUCHING with distance {distance!r}')
    return problems


def _check_error_bound(result, distance, expected):
    bound = float(result.error_bound)
    if bound < 0.0:
        return [f'negative error_bound {bound!r}']
    rounding = (1e-11 * (expected.size + abs(expected.distance))
                + ROUNDING_RELATIVE * expected.scale)
    error = max(expected.low - distance, distance - expected.high, 0.0)
    if error > bound + rounding:
        return [f'error {error:.3g} exceeds error_bound {bound:.3g}']
    return []


def _check_normal(normal, expected, relative):
    problems = []
    length = float(numpy.linalg.norm(normal))
    if abs(length - 1.0) > 1e-12:
        problems.append(f'|normal| = {length!r}')
    deviation = float(numpy.linalg.norm(normal - expected.normal))
    if deviation > expected.normal_tolerance + relative:
        problems.append(f'normal {normal} differs from {expected.normal} by {deviation:.3g} '
                        f'(allowed {expected.normal_tolerance + relative:.3g})')
    return problems


def _check_witnesses(distance, normal, witness_a, witness_b, shape_a, pose_a, shape_b, pose_b,
                     tolerance, support_tolerance):
    problems = []
    mismatch = float(numpy.linalg.norm(witness_b - witness_a - distance * normal))
    if mismatch > tolerance:
        problems.append(f'witness_b - witness_a != distance * normal (off by {mismatch:.3g})')
    # Optimal witnesses are support points: witness_a maximises normal . a over A and witness_b
    # minimises it over B; together this says gap(normal) == distance.
    support_a = shape_a.support_value(pose_a, normal) - float(normal @ witness_a)
    support_b = shape_b.support_value(pose_b, -normal) + float(normal @ witness_b)
    if abs(support_a) > support_tolerance:
        problems.append(f'witness_a is not a support point of A along normal '
                        f'(off {support_a:.3g})')
    if abs(support_b) > support_tolerance:
        problems.append(f'witness_b is not a support point of B along -normal '
                        f'(off {support_b:.3g})')
    on_a = shape_a.surface_distance(pose_a, witness_a)
    on_b = shape_b.surface_distance(pose_b, witness_b)
    if abs(on_a) > tolerance:
        problems.append(f'witness_a is {on_a:.3g} from the surface of A')
    if abs(on_b) > tolerance:
        problems.append(f'witness_b is {on_b:.3g} from the surface of B')
    return problems
