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
``~/markers``: the geometry the node measures, drawn for RViz.

``MarkerBuilder.build`` turns one cycle's records and the pieces in use into a
``visualization_msgs/MarkerArray``:

- ``link_hulls`` / ``obstacle_hulls``: one TRIANGLE_LIST per convex piece, the shape the
  distance is computed on (a mesh's hull, not the mesh), coloured by status (``HULL_COLOURS``);
- ``witness_segments``: one LINE_LIST, the witness segment of every measured pair, coloured by
  distance (red at contact, green at ``max_distance``);
- ``distance_labels``: a TEXT_VIEW_FACING label with the distance of each of the closest pairs.

Triangulating a hull is the expensive part, so it is done once per shape object: each piece
keeps its Marker, whose points are the triangles in the body frame, and a cycle only writes the
marker's pose (the piece's world pose), colour and stamp. Every marker carries a lifetime of a
few cycles (RViz drops it when it expires, so a dead node leaves nothing stale), ids are stable
per piece, and a piece that disappears gets a DELETE (the RViz conventions of
visualization_msgs/Marker). No node state is read: everything comes in through ``build``.
"""

import collections
from dataclasses import dataclass
import functools
import itertools
import math
import weakref

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from gjk_ros.core.rigid import matrix_to_quaternion
from gjk_ros.ros.records import PairStatus
import numpy
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['distance_colour', 'HULL_COLOURS', 'hull_state', 'LABEL_NAMESPACE', 'LINK',
           'MarkerBuilder', 'OBSTACLE', 'PieceView', 'POINT_RADIUS',
           'SEGMENT_NAMESPACE', 'shape_triangles', 'swept_segment', 'SWEPT_NAMESPACE',
           'witness_segments']

# Body kinds, the values of gjk_ros.ros.compute.bodies.LINK and OBSTACLE.
LINK = 'link'
OBSTACLE = 'obstacle'
HULL_NAMESPACES = {LINK: 'link_hulls', OBSTACLE: 'obstacle_hulls'}
SEGMENT_NAMESPACE = 'witness_segments'
SWEPT_NAMESPACE = 'swept_segment'
LABEL_NAMESPACE = 'distance_labels'

# RGBA of a hull by state. Translucent, so that witness segments inside stay visible.
HULL_COLOURS = {
    'clear': (0.35, 0.75, 0.35, 0.35),        # measured, farther than near_distance
    'near': (1.0, 0.65, 0.0, 0.55),           # measured, closer than near_distance
    'penetrating': (0.9, 0.1, 0.1, 0.7),      # measured, overlapping an obstacle
    'stale': (0.55, 0.55, 0.55, 0.35),        # PairStatus.STALE: its pose is old or missing
    'invalid': (0.8, 0.0, 0.8, 0.6),          # PairStatus.INVALID
    'pending': (0.3, 0.6, 1.0, 0.3),          # PairStatus.PENDING: geometry being built
}
_STATE_OF_STATUS = {PairStatus.STALE: 'stale', PairStatus.INVALID: 'invalid',
                    PairStatus.PENDING: 'pending'}
_MEASURED = (PairStatus.VALID, PairStatus.APPROXIMATE)

# Points and segments have no surface: they are drawn swept by this radius (m).
THIN_RADIUS = 0.004
# A single point (the nearest point of a sensor cloud to a link) is drawn as a ball of this
# radius (m), big enough to find in a cloud in RViz.
POINT_RADIUS = 0.012
# Rim points of a drawn cylinder, and the budget of points of a drawn swept hull.
_CYLINDER_SEGMENTS = 32
_SWEPT_POINT_BUDGET = 4000
_LABEL_HEIGHT = 0.03
_LABEL_LIFT = 0.03


@dataclass(frozen=True)
class PieceView:
    """
    One convex piece as the node uses it this cycle.

    Attributes
    ----------
    kind : str
        ``'link'`` or ``'obstacle'``.
    body_name : str
        The link name, or the obstacle name ``ns/id``.
    piece_index : int
        Which piece of the body; with kind and body_name, the stable identity of the marker.
    shape : gjk_ros.core.ConvexPolytope or None
        The shape the distances are computed on; None draws nothing (geometry not built yet).
    world_pose : (4, 4) float
        Body-to-``fixed_frame`` transform (rigid); a non-finite pose draws nothing.
    status : PairStatus
        The piece's input state: VALID (or APPROXIMATE, BEYOND) when its pose is fresh, else
        STALE, INVALID or PENDING.
    body_id : int, optional
        The body's id in ``~/names``: with it the hull is coloured near or penetrating from the
        body's closest record, and labels show names.

    """

    kind: str
    body_name: str
    piece_index: int
    shape: object
    world_pose: numpy.ndarray
    status: PairStatus
    body_id: object = None


def hull_state(status, closest, near_distance):
    """
    Return the ``HULL_COLOURS`` key of a piece.

    Parameters
    ----------
    status : PairStatus
        The piece's input state; STALE, INVALID and PENDING win over distances.
    closest : float
        The body's smallest measured distance this cycle (+inf if none).
    near_distance : float
        Closer than this (m) is ``'near'``.

    """
    state = _STATE_OF_STATUS.get(status)
    if state is not None:
        return state
    if closest < 0.0:
        return 'penetrating'
    return 'near' if closest < near_distance else 'clear'


# --- shapes to triangles ------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _icosphere(level):
    """Return the unit vectors of an icosahedron subdivided ``level`` times (12, 42, 162)."""
    from scipy.spatial import ConvexHull  # here: the node starts without scipy (0.3 s)
    golden = (1.0 + math.sqrt(5.0)) / 2.0
    vertices = [(-1, golden, 0), (1, golden, 0), (-1, -golden, 0), (1, -golden, 0),
                (0, -1, golden), (0, 1, golden), (0, -1, -golden), (0, 1, -golden),
                (golden, 0, -1), (golden, 0, 1), (-golden, 0, -1), (-golden, 0, 1)]
    points = numpy.array(vertices, dtype=float)
    points /= numpy.linalg.norm(points, axis=1)[:, None]
    for _ in range(level):
        # Midpoints of every edge of the hull, pushed out to the sphere.
        hull = ConvexHull(points)
        edges = {tuple(sorted(edge)) for face in hull.simplices
                 for edge in ((face[0], face[1]), (face[1], face[2]), (face[2], face[0]))}
        middles = numpy.array([points[a] + points[b] for a, b in sorted(edges)])
        middles /= numpy.linalg.norm(middles, axis=1)[:, None]
        points = numpy.concatenate([points, middles])
    return points


def _core_points(shape):
    """
    Points whose hull is the shape before its sweep (a cylinder gets two rims).

    A cone or an ellipsoid is drawn as the hull of its support points along icosphere
    directions (on its true surface); a half-space, which has no extent, as a slab of
    ``HALF_SPACE_DRAWN`` metres under its plane.
    """
    if shape.kind in ('cone', 'ellipsoid'):
        return numpy.array([shape.support(direction) for direction in _icosphere(2)])
    if shape.kind == 'half_space':
        half = HALF_SPACE_DRAWN / 2.0
        return numpy.array([(x, y, z) for x in (-half, half) for y in (-half, half)
                            for z in (-0.01, 0.0)])
    if shape.kind != 'cylinder':
        return numpy.asarray(shape.vertices, dtype=float)
    angles = numpy.linspace(0.0, 2.0 * math.pi, _CYLINDER_SEGMENTS, endpoint=False)
    rim = numpy.stack([shape.cylinder_radius * numpy.cos(angles),
                       shape.cylinder_radius * numpy.sin(angles)], axis=1)
    half = shape.cylinder_half_length
    return numpy.concatenate([numpy.column_stack([rim, numpy.full(len(rim), z)])
                              for z in (-half, half)])


# Edge of the square drawn for a half-space (a table top or a floor), metres.
HALF_SPACE_DRAWN = 4.0


def _swept(points, radius):
    """Grow the points by a sphere of ``radius``, sampled on an icosphere."""
    if radius <= 0.0:
        return points
    level = 2
    while level > 0 and len(points) * len(_icosphere(level)) > _SWEPT_POINT_BUDGET:
        level -= 1
    offsets = radius * _icosphere(level)
    return (points[:, None, :] + offsets[None, :, :]).reshape(-1, 3)


def _solid_triangles(points):
    """Outward-wound hull triangles (t, 3, 3) of a full-dimensional point set, else None."""
    from scipy.spatial import ConvexHull, QhullError
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError):
        return None
    triangles = points[hull.simplices]
    normals = numpy.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    inward = numpy.einsum('ij,ij->i', normals, hull.equations[:, :3]) < 0.0
    triangles[inward] = triangles[inward][:, ::-1]
    return triangles


def _flat_triangles(points):
    """Both faces of a flat polygon's fan (t, 3, 3), or None if the points are collinear."""
    centre = points.mean(axis=0)
    _, singular, axes = numpy.linalg.svd(points - centre, full_matrices=False)
    if len(singular) < 2 or singular[1] <= 1e-9 * max(singular[0], 1e-300):
        return None
    from scipy.spatial import ConvexHull, QhullError
    try:
        outline = ConvexHull((points - centre) @ axes[:2].T).vertices
    except (QhullError, ValueError):
        return None
    ring = points[outline]
    fan = numpy.stack([numpy.repeat(ring[:1], len(ring) - 2, axis=0), ring[1:-1], ring[2:]],
                      axis=1)
    return numpy.concatenate([fan, fan[:, ::-1]])


def shape_triangles(shape):
    """
    Return the surface drawn for a shape: triangles (t, 3, 3) in its body frame.

    A polytope is its hull (a flat one both faces of its polygon); a cylinder has 32 rim
    points; a swept body (sphere, capsule, rounded box) is the hull of its vertices grown by
    an icosphere of its radius, which lies inside the true surface. A segment is drawn swept
    by ``THIN_RADIUS``, a single point (a cloud's nearest point) as a ball of
    ``POINT_RADIUS``.

    Parameters
    ----------
    shape : gjk_ros.core.ConvexPolytope
        Any shape the core accepts.

    Returns
    -------
    (t, 3, 3) float
        Counter-clockwise seen from outside.

    """
    core = _core_points(shape)
    single = len(core) > 0 and bool((core == core[0]).all())
    for radius in (shape.radius, max(shape.radius, POINT_RADIUS if single else THIN_RADIUS)):
        points = _swept(core, radius)
        for triangulate in (_solid_triangles, _flat_triangles):
            triangles = triangulate(points)
            if triangles is not None:
                return triangles
    raise ValueError('cannot draw %r' % (shape,))  # unreachable: a swept set is solid


# --- messages -----------------------------------------------------------------------------------

def _duration(seconds):
    whole = int(seconds)
    return Duration(sec=whole, nanosec=int(round((seconds - whole) * 1e9)))


def _colour(rgba):
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _point(values):
    return Point(x=float(values[0]), y=float(values[1]), z=float(values[2]))


def _distance_rgb(distance, scale):
    """RGB of ``distance_colour`` for an array of distances, shape (n, 3)."""
    fraction = numpy.clip(numpy.asarray(distance, dtype=float) / scale, 0.0, 1.0)
    return numpy.stack([numpy.minimum(1.0, 2.0 * (1.0 - fraction)),
                        numpy.minimum(1.0, 2.0 * fraction), numpy.zeros_like(fraction)], axis=-1)


def distance_colour(distance, scale):
    """
    Colour of a witness segment: red at contact, yellow at half ``scale``, green beyond.

    Parameters
    ----------
    distance : float
        Signed distance, metres.
    scale : float
        Distance shown in full green (``max_distance``, or 1 m if that is infinite).

    """
    red, green, blue = _distance_rgb(distance, scale).tolist()
    return ColorRGBA(r=red, g=green, b=blue, a=1.0)


# Witness segment colours are drawn from this many steps between red and green, so that a
# cycle reuses ColorRGBA messages instead of building two per segment.
_COLOUR_STEPS = 64
_PALETTE = [ColorRGBA(r=red, g=green, b=blue, a=1.0) for red, green, blue in
            _distance_rgb(numpy.linspace(0.0, 1.0, _COLOUR_STEPS), 1.0).tolist()]


def witness_segments(records, header, max_distance, line_width=0.005, lifetime=0.0,
                     point_pool=None):
    """
    Witness segments of the measured records as one LINE_LIST marker.

    One marker with per-vertex colours (``distance_colour``, in 64 steps), always the same id,
    so each message replaces the last; with nothing measured the marker is a DELETE.

    Parameters
    ----------
    records : (r,) numpy array of RECORD_DTYPE
        Records of one cycle; only VALID and APPROXIMATE ones are drawn.
    header : std_msgs.msg.Header
        ``fixed_frame`` and stamp.
    max_distance : float
        Distance drawn in full green (1 m if infinite).
    line_width : float
        Metres.
    lifetime : float
        Seconds; 0 lives until replaced.
    point_pool : list of geometry_msgs.msg.Point, optional
        Points to reuse (and grow): writing three fields of an existing Point costs a seventh
        of building one. The marker then shares them, until the next call with the same pool.

    """
    measured = records[numpy.isin(records['status'], _MEASURED)]
    marker = Marker(header=header, ns=SEGMENT_NAMESPACE, id=0, type=Marker.LINE_LIST,
                    lifetime=_duration(lifetime))
    marker.pose.orientation.w = 1.0
    marker.scale.x = float(line_width)
    scale = max_distance if math.isfinite(max_distance) else 1.0
    # Vectorised, then one tolist(): indexing numpy records one field at a time costs more
    # than building the messages.
    ends = numpy.stack([numpy.stack([measured[f'{side}_{axis}'] for axis in 'xyz'], axis=-1)
                        for side in ('link', 'obstacle')], axis=1)
    steps = numpy.clip(measured['distance'] / scale, 0.0, 1.0) * (_COLOUR_STEPS - 1)
    marker.points = _points(ends.reshape(-1, 3).tolist(), point_pool)
    marker.colors = [_PALETTE[step] for step in numpy.repeat(
        numpy.rint(steps).astype(int), 2).tolist()]
    marker.action = Marker.ADD if marker.points else Marker.DELETE
    return marker


def swept_segment(records, witnesses, header, max_distance, line_width=0.005, lifetime=0.0):
    """
    Return the closest swept pair as one LINE_LIST marker (namespace ``swept_segment``).

    The witness pair at the instant of the smallest ``swept_distance`` over the records
    (``witnesses`` (r, 6): link then obstacle point there; None without swept distances),
    coloured by that bound as the witness segments are; a DELETE of the same id when no record
    has a swept bound (RViz: DELETE by namespace and id).
    """
    marker = Marker(header=header, ns=SWEPT_NAMESPACE, id=0, type=Marker.LINE_LIST,
                    lifetime=_duration(lifetime))
    marker.pose.orientation.w = 1.0
    marker.scale.x = float(line_width)
    swept = records['swept_distance']
    if witnesses is None or not len(records) or numpy.isnan(swept).all():
        marker.action = Marker.DELETE
        return marker
    row = int(numpy.nanargmin(swept))
    ends = witnesses[row].reshape(2, 3)
    if not numpy.isfinite(ends).all():
        marker.action = Marker.DELETE
        return marker
    marker.points = [_point(end) for end in ends.tolist()]
    colour = distance_colour(float(swept[row]),
                             max_distance if math.isfinite(max_distance) else 1.0)
    marker.colors = [colour, colour]
    marker.action = Marker.ADD
    return marker


def _points(coordinates, pool):
    """Return Points at ``coordinates`` (a list of [x, y, z]), reusing ``pool`` if given."""
    if pool is None:
        return [Point(x=x, y=y, z=z) for x, y, z in coordinates]
    pool.extend(Point() for _ in range(len(coordinates) - len(pool)))
    for point, (x, y, z) in zip(pool, coordinates):
        point.x, point.y, point.z = x, y, z
    return pool[:len(coordinates)]


def _closest_per_body(ids, distances):
    """Smallest distance per id, as a dict."""
    closest = {}
    for body_id, distance in zip(ids.tolist(), distances.tolist()):
        if distance < closest.get(body_id, math.inf):
            closest[body_id] = distance
    return closest


class MarkerBuilder:
    """
    Build ``~/markers`` every cycle, keeping one Marker per piece between cycles.

    Parameters
    ----------
    near_distance : float
        Hulls of bodies closer than this (m) to something are drawn ``'near'``.
    label_count : int
        How many of the closest measured pairs get a distance label.
    lifetime : float
        Seconds each marker lives in RViz unless republished: a few cycles.
    line_width : float
        Width of the witness segments, metres.

    Notes
    -----
    The hull markers and segment points of the returned array are reused and modified by the
    next ``build``: publish the array before building the next one (rclpy serialises on
    ``publish``).

    """

    def __init__(self, near_distance=0.05, label_count=5, lifetime=0.5, line_width=0.005):
        self.near_distance = float(near_distance)
        self.label_count = int(label_count)
        self.lifetime = float(lifetime)
        self.line_width = float(line_width)
        self._hulls = {}        # (kind, body_name, piece_index) -> Marker
        self._ids = itertools.count()
        self._shape_of = {}     # same keys -> shape object drawn by that Marker
        self._points = weakref.WeakKeyDictionary()  # shape -> list of Point, body frame
        self._segment_points = []
        self._colours = {state: _colour(rgba) for state, rgba in HULL_COLOURS.items()}
        self._labels_sent = 0

    def build(self, records, header, pieces, max_distance=math.inf):
        """
        Return this cycle's MarkerArray.

        Parameters
        ----------
        records : (r,) numpy array of RECORD_DTYPE
            This cycle's records.
        header : std_msgs.msg.Header
            ``fixed_frame`` and the stamp of the records.
        pieces : iterable of PieceView
            Every piece in use this cycle; a piece of the previous cycle that is missing is
            deleted.
        max_distance : float
            Witness segments this long are drawn in full green (1 m if infinite).

        Returns
        -------
        visualization_msgs.msg.MarkerArray

        """
        pieces = list(pieces)
        measured = records[numpy.isin(records['status'], _MEASURED)]
        lifetime = _duration(self.lifetime)
        markers = self._hull_markers(header, lifetime, pieces, measured)
        markers.append(witness_segments(measured, header, max_distance, self.line_width,
                                        self.lifetime, self._segment_points))
        markers += self._label_markers(header, measured, pieces)
        return MarkerArray(markers=markers)

    # -- hulls ---------------------------------------------------------------------------------

    def _hull_markers(self, header, lifetime, pieces, measured):
        closest = {LINK: _closest_per_body(measured['link_id'], measured['distance']),
                   OBSTACLE: _closest_per_body(measured['obstacle_id'], measured['distance'])}
        markers, seen = [], set()
        for piece in pieces:
            key = _HullKey(piece.kind, piece.body_name, piece.piece_index)
            pose = numpy.asarray(piece.world_pose, dtype=float)
            if piece.shape is None or pose.shape != (4, 4) or not numpy.isfinite(pose).all():
                continue
            seen.add(key)
            marker = self._hull_marker(key, piece.shape)
            body_closest = closest[piece.kind].get(piece.body_id, math.inf)
            state = hull_state(piece.status, body_closest, self.near_distance)
            self._place(marker, header, lifetime, pose, self._colours[state])
            markers.append(marker)
        return markers + self._deletions(header, seen)

    def _hull_marker(self, key, shape):
        """Return the cached Marker of a piece, rebuilt when its shape object changes."""
        marker = self._hulls.get(key)
        if marker is None:
            marker = Marker(ns=HULL_NAMESPACES[key.kind], id=next(self._ids),
                            type=Marker.TRIANGLE_LIST, action=Marker.ADD)
            marker.scale.x = marker.scale.y = marker.scale.z = 1.0
            self._hulls[key] = marker
        if self._shape_of.get(key) is not shape:
            points = self._points.get(shape)
            if points is None:
                points = [_point(p) for p in shape_triangles(shape).reshape(-1, 3)]
                self._points[shape] = points
            marker.points = points
            self._shape_of[key] = shape
        return marker

    def _place(self, marker, header, lifetime, pose, colour):
        marker.header = header
        marker.lifetime = lifetime
        position = marker.pose.position
        position.x, position.y, position.z = (float(v) for v in pose[:3, 3])
        orientation = marker.pose.orientation
        orientation.x, orientation.y, orientation.z, orientation.w = \
            matrix_to_quaternion(pose[:3, :3])
        marker.color = colour

    def _deletions(self, header, seen):
        """DELETE the markers of pieces that were drawn before and are gone now."""
        deletions = []
        for key in [key for key in self._hulls if key not in seen]:
            marker = self._hulls.pop(key)
            self._shape_of.pop(key, None)
            deletions.append(Marker(header=header, ns=marker.ns, id=marker.id,
                                    action=Marker.DELETE))
        return deletions

    # -- labels ----------------------------------------------------------------------------------

    def _label_markers(self, header, measured, pieces):
        names = {(piece.kind, piece.body_id): piece.body_name for piece in pieces}
        order = numpy.argsort(measured['distance'], kind='stable')[:self.label_count]
        markers = []
        for label_id, record in enumerate(measured[order]):
            link = names.get((LINK, int(record['link_id'])), '#%d' % record['link_id'])
            obstacle = names.get((OBSTACLE, int(record['obstacle_id'])),
                                 '#%d' % record['obstacle_id'])
            middle = (numpy.array([record['link_x'], record['link_y'], record['link_z']])
                      + numpy.array([record['obstacle_x'], record['obstacle_y'],
                                     record['obstacle_z']])) / 2.0
            marker = Marker(header=header, ns=LABEL_NAMESPACE, id=label_id,
                            type=Marker.TEXT_VIEW_FACING, action=Marker.ADD,
                            lifetime=_duration(self.lifetime),
                            text='%s / %s: %+.3f m' % (link, obstacle, record['distance']))
            marker.pose.position = _point(middle + (0.0, 0.0, _LABEL_LIFT))
            marker.pose.orientation.w = 1.0
            marker.scale.z = _LABEL_HEIGHT
            marker.color = _colour((1.0, 1.0, 1.0, 1.0))
            markers.append(marker)
        markers += [Marker(header=header, ns=LABEL_NAMESPACE, id=label_id, action=Marker.DELETE)
                    for label_id in range(len(markers), self._labels_sent)]
        self._labels_sent = len(order)
        return markers


# Which piece a cached hull marker draws.
_HullKey = collections.namedtuple('_HullKey', 'kind body piece')
