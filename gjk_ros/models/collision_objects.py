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
MoveIt's collision objects as convex pieces: moveit_msgs/CollisionObject and what carries it.

Messages are read duck-typed, and so are dicts with the message's field names (what
``rosidl_runtime_py.message_to_ordereddict`` gives), so the node and the planner API share this
one conversion. No rclpy here.

Shapes (shape_msgs), in the object frame ``pose`` (itself in ``header.frame_id``), each at its
own pose (``primitive_poses``, ``mesh_poses``, ``plane_poses``):

- SolidPrimitive BOX [x, y, z], SPHERE [radius], CYLINDER and CONE [height, radius] (axis z,
  centred; the cone's tip at +height/2), all exact; PRISM [height] with ``polygon`` (x, y of
  its points): the hull of the polygon extruded to z = +-height/2.
- Mesh: by ``mesh_mode`` (``gjk_ros.models.mesh_bodies``): its convex hull (``hull``, a
  warning names the object when the mesh is not convex), its exact convex pieces (``exact``;
  open parts as unsigned surface pieces, a warning names a mesh that is not watertight) or its
  CoACD parts (``parts``). A mesh may also name a file: ``resource`` (a URI, as
  MotionBenchMaker's scenes do) with an optional ``scale``.
- Plane ``coef`` (a, b, c, d): the half-space a x + b y + c z + d <= 0 (the plane equation of
  the message; the normal (a, b, c) points out of the solid): a table top, a floor, a wall.

Subframes, ``type`` and colours carry no geometry and are ignored. Every rejection is one
:class:`ModelError` naming the object's id, the field (``primitive_poses[1].orientation``)
and what is wrong, never the values.

Besides the message's own form, the YAML shorthand of robowflex (MotionBenchMaker's scene
files) is read: a position as ``[x, y, z]``, an orientation as ``[x, y, z, w]`` and a
primitive ``type`` by name (``box``, ``sphere``, ``cylinder``, ``cone``, ``prism``).

The scene semantics (``SceneState``) follow MoveIt's ``PlanningScene`` (docs/planning_scene.md).
"""

from dataclasses import dataclass, field, replace
import hashlib
import math
import re

from gjk_ros.core.rigid import tf2_quaternion
from gjk_ros.models import primitives
from gjk_ros.models.errors import ModelError
from gjk_ros.models.mesh_bodies import DEFAULT_MAX_PIECES, exact_pieces
from gjk_ros.models.meshes import HULL_WARNING_THRESHOLD, mesh_shape, triangles_hull
from gjk_ros.models.pieces import CollisionPiece
from gjk_ros.models.transforms import quaternion_to_matrix
from gjk_ros.models.values import MAX_MAGNITUDE
import numpy as np

__all__ = ['ADD', 'AllowedCollisions', 'APPEND', 'AttachedObject', 'attached_object',
           'collision_object_pieces', 'MeshOptions', 'MeshSource', 'message_form', 'MOVE',
           'rebuilt_object', 'REMOVE', 'scaled_shape', 'scene_object', 'scene_update',
           'SceneObject', 'SceneState', 'SceneUpdate', 'shape_centre']

# moveit_msgs/CollisionObject operations.
ADD, REMOVE, APPEND, MOVE = 0, 1, 2, 3
OPERATION_NAMES = {ADD: 'ADD', REMOVE: 'REMOVE', APPEND: 'APPEND', MOVE: 'MOVE'}
# shape_msgs/SolidPrimitive types and the number of dimensions each takes.
BOX, SPHERE, CYLINDER, CONE, PRISM = 1, 2, 3, 4, 5
PRIMITIVE_NAMES = {BOX: 'BOX', SPHERE: 'SPHERE', CYLINDER: 'CYLINDER', CONE: 'CONE',
                   PRISM: 'PRISM'}
_DIMENSIONS = {BOX: 3, SPHERE: 1, CYLINDER: 2, CONE: 2, PRISM: 1}
_MISSING = object()


def _get(value, name, default=_MISSING):
    """Field ``name`` of a message or a dict (``default`` when a dict lacks it)."""
    if isinstance(value, dict):
        if name in value:
            return value[name]
    elif hasattr(value, name):
        return getattr(value, name)
    if default is _MISSING:
        raise ValueError(f'no field {name}')
    return default


def _operation(value):
    """
    Return the operation as an int.

    rclpy reads a ``byte`` field as one-byte ``bytes`` and ``message_to_ordereddict`` turns it
    into a one-character str; a dict may also name it ('ADD') or give the number.
    """
    if isinstance(value, (bytes, bytearray)):
        return value[0] if len(value) == 1 else -1
    if isinstance(value, str):
        names = {name: code for code, name in OPERATION_NAMES.items()}
        if value.upper() in names:
            return names[value.upper()]
        return ord(value) if len(value) == 1 and not value.isdigit() else int(value)
    return int(value)


def _xyz(point):
    if isinstance(point, (list, tuple, np.ndarray)):  # robowflex's shorthand [x, y, z]
        if len(point) != 3:
            raise ValueError(f'expected [x, y, z], got {len(point)} numbers')
        return [float(value) for value in point]
    return [float(_get(point, axis)) for axis in ('x', 'y', 'z')]


def _xyzw(orientation):
    if isinstance(orientation, (list, tuple, np.ndarray)):  # robowflex's [x, y, z, w]
        if len(orientation) != 4:
            raise ValueError(f'expected [x, y, z, w], got {len(orientation)} numbers')
        return [float(value) for value in orientation]
    return [float(_get(orientation, axis)) for axis in ('x', 'y', 'z', 'w')]


class _Field:
    """Prefix the ValueError or TypeError raised in a block with a field path."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is not None and issubclass(kind, (ValueError, TypeError)) and \
                not issubclass(kind, ModelError):
            raise ValueError(f'{self.path}: {_reason(error)}') from None
        return False


# What Python's and numpy's conversions say of a value they cannot read: they quote it.
_CONVERSION = re.compile(r'could not convert|invalid literal|argument must be|'
                         r'cannot convert')


def _reason(error):
    """Return the text of an error, without the value a conversion quotes (never contents)."""
    text = str(error)
    return 'not a number' if _CONVERSION.search(text) else text


def pose_matrix(pose):
    """
    (4, 4) transform of a geometry_msgs/Pose (message or dict; None is the identity).

    Raises
    ------
    ValueError
        A position that is not finite or beyond ``MAX_MAGNITUDE``, or a quaternion whose
        squared norm is off 1 by more than tf2 accepts (as ``/tf``): MoveIt normalises any
        quaternion, which turns a garbage orientation into a plausible one.

    """
    matrix = np.eye(4)
    if pose is None:
        return matrix
    with _Field('position'):
        position = _xyz(_get(pose, 'position'))
        if not all(abs(value) <= MAX_MAGNITUDE for value in position):
            raise ValueError(f'not finite or beyond {MAX_MAGNITUDE:g} m')
    with _Field('orientation'):
        quaternion = _xyzw(_get(pose, 'orientation'))
        unit, reason = tf2_quaternion(quaternion)
        if unit is None:
            raise ValueError(f'not a rotation ({reason})')
    matrix[:3, :3] = quaternion_to_matrix(unit)
    matrix[:3, 3] = position
    return matrix


@dataclass(frozen=True, eq=False)
class SceneObject:
    """
    One collision object: its shapes in the object frame, and where the object is.

    ``pieces`` hold each shape's pose relative to the object (their ``origin``); the object
    sits at ``pose`` in ``frame_id``. ``resolve_into`` names a frame the pose must be
    expressed in once, with the transform of the moment (an object attached from another
    frame, a detached object put back into the world; '' is the node's fixed frame), else None.
    ``error`` is why the object was rejected (it then has no pieces). ``sources`` are what
    builds the pieces again in another mesh mode (``rebuilt_object``), one per shape: its built
    pieces (a primitive or a plane: the same piece objects), or a :class:`MeshSource`.
    """

    id: str  # noqa: A003 -- the message's field name
    frame_id: str
    pose: np.ndarray
    pieces: tuple = ()
    error: str = None
    resolve_into: str = None
    sources: tuple = ()

    @property
    def has_meshes(self):
        """Whether a mesh mode shapes the pieces (a mesh among the shapes)."""
        return any(isinstance(source, MeshSource) for source in self.sources)

    def placed(self):
        """Return the pieces in ``frame_id`` (``pose`` composed with each shape's pose)."""
        return [replace(piece, frame_id=self.frame_id, origin=self.pose @ piece.origin)
                for piece in self.pieces]


def _shape_poses(message, shapes_field, poses_field, count):
    poses = list(_get(message, poses_field, []) or [])
    if not poses and isinstance(message, dict) and poses_field not in message:
        return [np.eye(4)] * count  # a dict may leave out the poses: identity
    if len(poses) != count:
        raise ValueError(f'{poses_field}: {len(poses)} poses for {count} {shapes_field}')
    matrices = []
    for i, pose in enumerate(poses):
        with _Field(f'{poses_field}[{i}]'):
            matrices.append(pose_matrix(pose))
    return matrices


def _primitive_type(primitive):
    """Return a SolidPrimitive's ``type`` code; robowflex's shorthand names it ('box')."""
    kind = _get(primitive, 'type')
    if isinstance(kind, str) and not kind.strip().isdigit():
        names = {name.lower(): code for code, name in PRIMITIVE_NAMES.items()}
        if kind.strip().lower() not in names:
            raise ValueError(f'type: unknown SolidPrimitive type {kind!r} (box, sphere, '
                             'cylinder, cone, prism)')
        kind = names[kind.strip().lower()]
    return int(kind)


def _primitive(primitive):
    kind = _primitive_type(primitive)
    name = PRIMITIVE_NAMES.get(kind)
    if name is None:
        raise ValueError(f'unknown SolidPrimitive type {kind} (BOX 1, SPHERE 2, CYLINDER 3, '
                         'CONE 4, PRISM 5)')
    dimensions = [float(value) for value in _get(primitive, 'dimensions', [])]
    if len(dimensions) != _DIMENSIONS[kind]:
        raise ValueError(f'dimensions: {name} takes {_DIMENSIONS[kind]}, got {len(dimensions)}')
    if kind == BOX:
        return primitives.box(dimensions)
    if kind == SPHERE:
        return primitives.sphere(dimensions[0])
    if kind == CYLINDER:
        return primitives.cylinder(dimensions[1], dimensions[0])
    if kind == CONE:
        return primitives.cone(dimensions[1], dimensions[0])
    return _prism(dimensions[0], _get(_get(primitive, 'polygon', {}), 'points', []))


def _prism(height, points):
    """Extrude the polygon (x, y of its points) to z = +-height/2; return its hull."""
    if not height > 0.0 or not math.isfinite(height):
        raise ValueError('PRISM height must be finite and > 0')
    corners = np.array([[float(_get(p, 'x')), float(_get(p, 'y'))] for p in points]
                       ).reshape(-1, 2)
    if len(corners) < 3:
        raise ValueError(f'PRISM polygon has {len(corners)} points (3 or more)')
    centred = corners - corners.mean(axis=0)
    if not np.isfinite(corners).all() or np.linalg.matrix_rank(centred, tol=1e-12) < 2:
        raise ValueError('PRISM polygon is not finite or has no area')
    half = np.full((len(corners), 1), height / 2.0)
    solid = np.vstack([np.hstack([corners, -half]), np.hstack([corners, half])])
    shape = primitives.point_hull(solid, 0.0, 'prism corners')
    return shape._replace(description=f'prism of {len(corners)} sides height {height:g}')


@dataclass(frozen=True, eq=False)
class MeshSource:
    """
    One mesh of a collision object, kept to build it again in another mode.

    A message's mesh as it came (``vertices`` (n, 3), ``triangles`` (m, 3) indices: no more
    than the message held), or a file by ``uri`` and ``scale``; ``pose`` in the object frame.
    """

    pose: np.ndarray
    vertices: np.ndarray = None
    triangles: np.ndarray = None
    uri: str = ''
    scale: tuple = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class MeshOptions:
    """How collision-object meshes become pieces (``gjk_ros.models.mesh_bodies``)."""

    mode: str = 'hull'
    resolver: object = None
    max_pieces: int = DEFAULT_MAX_PIECES


def _mesh_source(mesh, limits, options, pose):
    """Read one mesh of a message (checked) into a :class:`MeshSource`."""
    resource = _get(mesh, 'resource', None)
    if resource:
        scale = _resource_scale(mesh)  # the file is read (and checked) when built
        return MeshSource(pose, uri=str(resource), scale=tuple(scale.tolist()))
    vertices, triangles = _message_mesh(mesh, limits)
    return MeshSource(pose, vertices, triangles)


def _mesh(source, object_id, hull_warning_threshold, options):
    """Return the (shape, pose, piece class) items of one mesh, by ``options.mode``."""
    pose = source.pose
    if source.uri:
        triangles = _resource_triangles(source.uri, np.array(source.scale), options)
        label = f'mesh {source.uri}'
    else:
        triangles = source.vertices[source.triangles]
        label = f'mesh of {len(triangles)} triangles'
    if options.mode == 'exact':
        key = ('message', hashlib.sha256(triangles.tobytes()).hexdigest())
        pieces, use = exact_pieces(object_id, '', pose, triangles, label,
                                   resolver=options.resolver, key=key,
                                   max_pieces=options.max_pieces)
        if pieces is not None:
            return [(primitives.Shape(p.shape, p.description, p.warnings), p.origin, type(p))
                    for p in pieces]
    info = triangles_hull(object_id, triangles)
    shape = mesh_shape(info, label, np.ones(3), object_id, hull_warning_threshold)
    if options.mode == 'exact':  # too many pieces to be exact: the hull, and say so
        shape = shape._replace(warnings=shape.warnings + (use.note,))
    if options.mode == 'parts' and not info.is_convex:
        from gjk_ros.models.decomposition import decompose_mesh
        points, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
        parts = decompose_mesh(points, inverse.reshape(-1, 3), {})
        return [(primitives.point_hull(part, 0.0, f'{label}: CoACD part {i + 1} of '
                                       f'{len(parts)}'), pose, CollisionPiece)
                for i, part in enumerate(parts)]
    return [(shape, pose, CollisionPiece)]


def _message_mesh(mesh, limits):
    """Return the (n, 3) vertices and (m, 3) int32 vertex indices of a shape_msgs/Mesh."""
    with _Field('vertices'):
        vertices = _get(mesh, 'vertices', [])
        if not isinstance(vertices, np.ndarray):  # message_form gives arrays
            vertices = [_xyz(point) for point in vertices]
        vertices = np.array(vertices, dtype=float).reshape(-1, 3)
    with _Field('triangles'):
        triangles = _get(mesh, 'triangles', [])
        if not isinstance(triangles, np.ndarray):
            triangles = [list(_get(triangle, 'vertex_indices'))
                         if not isinstance(triangle, (list, tuple)) else list(triangle)
                         for triangle in triangles]
        triangles = np.array(triangles, dtype=np.int64)
        if len(triangles) == 0 or len(vertices) == 0:
            raise ValueError('the mesh has no triangles')
        triangles = triangles.reshape(-1, 3)
        if limits is not None and (len(vertices) > limits.max_points
                                   or len(triangles) > limits.max_mesh_triangles):
            raise ValueError(f'mesh of {len(vertices)} vertices and {len(triangles)} triangles '
                             f'exceeds max_points ({limits.max_points}) or max_mesh_triangles '
                             f'({limits.max_mesh_triangles})')
        if triangles.min() < 0 or triangles.max() >= len(vertices):
            raise ValueError('triangle indices beyond the vertices')
    return vertices, triangles.astype(np.int32)


def _resource_scale(mesh):
    with _Field('scale'):
        scale = np.array([float(v) for v in np.ravel(_get(mesh, 'scale', [1.0]))])
        scale = np.repeat(scale, 3) if scale.size == 1 else scale
        if scale.size != 3:
            raise ValueError(f'expected 1 or 3 numbers, got {scale.size}')
    return scale


def _resource_triangles(uri, scale, options):
    from gjk_ros.models.meshes import default_resolver
    resolver = options.resolver or default_resolver()
    with _Field('resource'):
        try:
            return resolver.load_mesh_triangles(uri, scale)
        except ModelError as error:
            raise ValueError(error.reason) from None


def _plane(plane):
    """Half-space a x + b y + c z + d <= 0 as (shape, its pose): z <= 0 of a rotated frame."""
    coefficients = [float(value) for value in _get(plane, 'coef')]
    if len(coefficients) != 4 or not all(math.isfinite(v) for v in coefficients):
        raise ValueError('plane coef must be 4 finite numbers')
    normal = np.array(coefficients[:3])
    length = float(np.linalg.norm(normal))
    if not length > 1e-12:
        raise ValueError('plane normal (a, b, c) is zero')
    normal /= length
    origin = np.eye(4)
    origin[:3, :3] = _rotation_from_z(normal)
    origin[:3, 3] = -coefficients[3] / length * normal
    if not np.all(np.abs(origin[:3, 3]) <= MAX_MAGNITUDE):
        raise ValueError(f'plane offset beyond {MAX_MAGNITUDE:g} m')
    return primitives.half_space(), origin


def _rotation_from_z(axis):
    """Return a rotation taking +z onto the unit vector ``axis`` (Rodrigues about z x axis)."""
    cosine = float(axis[2])
    if cosine < -1.0 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])  # half a turn about x
    cross = np.array([-axis[1], axis[0], 0.0])
    skew = np.array([[0.0, -cross[2], cross[1]], [cross[2], 0.0, -cross[0]],
                     [-cross[1], cross[0], 0.0]])
    return np.eye(3) + skew + skew @ skew / (1.0 + cosine)


def _shapes(message, object_id, limits, threshold, options):
    """
    Return the shapes of a CollisionObject, one list per shape, and each shape's source.

    A shape's list holds (Shape, pose in the object frame, piece class) items (a mesh may be
    many pieces); its source is a :class:`MeshSource` for a mesh, else None.
    """
    found, sources = [], []
    primitives_ = list(_get(message, 'primitives', []) or [])
    meshes = list(_get(message, 'meshes', []) or [])
    planes = list(_get(message, 'planes', []) or [])
    count = len(primitives_) + len(meshes) + len(planes)
    if limits is not None and count > limits.max_markers_per_message:
        raise ValueError(f'{count} shapes exceed max_markers_per_message '
                         f'({limits.max_markers_per_message})')
    poses = _shape_poses(message, 'primitives', 'primitive_poses', len(primitives_))
    for i, (primitive, pose) in enumerate(zip(primitives_, poses)):
        with _Field(f'primitives[{i}]'):
            found.append([(_primitive(primitive), pose, CollisionPiece)])
            sources.append(None)
    poses = _shape_poses(message, 'meshes', 'mesh_poses', len(meshes))
    for i, (mesh, pose) in enumerate(zip(meshes, poses)):
        with _Field(f'meshes[{i}]'):
            source = _mesh_source(mesh, limits, options, pose)
            found.append(_mesh(source, object_id, threshold, options))
            sources.append(source)
    poses = _shape_poses(message, 'planes', 'plane_poses', len(planes))
    for i, (plane, pose) in enumerate(zip(planes, poses)):
        with _Field(f'planes[{i}]'):
            shape, origin = _plane(plane)
        found.append([(shape, pose @ origin, CollisionPiece)])
        sources.append(None)
    return found, sources


def _pieces_of(object_id, frame_id, items):
    return tuple(kind(object_id, frame_id, origin, shape.polytope, shape.description,
                      shape.warnings) for shape, origin, kind in items)


def message_form(message, resolver=None, frame_id=''):
    """
    Return a CollisionObject (message or dict) in the form of the message itself.

    Any form ``scene_object`` reads; the result is what a publisher fills a
    moveit_msgs/CollisionObject from. Positions and orientations become ``{x, y, z(, w)}``,
    primitive types their numbers, and a mesh named by ``resource`` its ``vertices`` ((n, 3)
    array) and ``triangles`` ((m, 3) array), read with ``resolver`` (the message has no field
    for a file: MoveIt's tools load the file and send its triangles). ``frame_id`` fills an
    empty ``header.frame_id``. Only the fields with geometry are kept (``id``,
    ``header.frame_id``, ``operation``, ``pose`` and the shapes with their poses).

    Raises
    ------
    ModelError
        Naming the object's id, the field and what is wrong (never the values), as
        ``scene_object``: the same checks, run on the result.

    """
    object_id = str(_get(message, 'id', '')) or '<no id>'
    try:
        found = {'id': object_id,
                 'header': {'frame_id': str(_get(_get(message, 'header', {}), 'frame_id', '')
                                            ).lstrip('/') or frame_id},
                 'operation': _operation(_get(message, 'operation', ADD))}
        with _Field('pose'):
            found['pose'] = _pose_form(_get(message, 'pose', None))
        for shapes, poses in _POSE_FIELDS:
            items = list(_get(message, shapes, []) or [])
            listed = list(_get(message, poses, []) or [])
            if not listed and isinstance(message, dict) and poses not in message:
                listed = [None] * len(items)  # a dict may leave out the poses: identity
            if len(listed) != len(items):
                raise ValueError(f'{poses}: {len(listed)} poses for {len(items)} {shapes}')
            forms = []
            for i, item in enumerate(items):
                with _Field(f'{shapes}[{i}]'):
                    forms.append(_SHAPE_FORMS[shapes](item, resolver))
            found[shapes] = forms
            found[poses] = []
            for i, pose in enumerate(listed):
                with _Field(f'{poses}[{i}]'):
                    found[poses].append(_pose_form(pose))
    except (ValueError, TypeError) as error:
        raise ModelError(object_id, _reason(error)) from None
    operation, built = scene_object(found, mesh_options=MeshOptions('hull', resolver))
    if built.error is not None:
        raise ModelError(object_id, built.error)
    if not built.pieces and operation in (ADD, APPEND):
        raise ModelError(object_id, 'the collision object has no shapes')
    return found


def _pose_form(pose):
    """Return a geometry_msgs/Pose as the message's dict (None: the identity), checked."""
    if pose is None:
        return {'position': {'x': 0.0, 'y': 0.0, 'z': 0.0},
                'orientation': {'x': 0.0, 'y': 0.0, 'z': 0.0, 'w': 1.0}}
    pose_matrix(pose)
    return {'position': dict(zip('xyz', _xyz(_get(pose, 'position')))),
            'orientation': dict(zip('xyzw', _xyzw(_get(pose, 'orientation'))))}


def _primitive_form(primitive, resolver):
    kind = _primitive_type(primitive)
    with _Field('dimensions'):
        dimensions = [float(value) for value in _get(primitive, 'dimensions', [])]
    form = {'type': kind, 'dimensions': dimensions}
    points = _get(_get(primitive, 'polygon', {}), 'points', []) or []
    if len(points):
        with _Field('polygon'):
            form['polygon'] = {'points': [{'x': float(_get(p, 'x')), 'y': float(_get(p, 'y')),
                                           'z': float(_get(p, 'z', 0.0))} for p in points]}
    return form


def _mesh_form(mesh, resolver):
    resource = _get(mesh, 'resource', None)
    if not resource:
        vertices, triangles = _message_mesh(mesh, None)
        return {'vertices': vertices, 'triangles': triangles}
    triangles = _resource_triangles(str(resource), _resource_scale(mesh),
                                    MeshOptions(resolver=resolver))
    vertices, indices = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    return {'vertices': vertices, 'triangles': indices.reshape(-1, 3).astype(np.int32)}


def _plane_form(plane, resolver):
    with _Field('coef'):
        return {'coef': [float(value) for value in _get(plane, 'coef')]}


# Each shape list of a CollisionObject with its poses, and how ``message_form`` writes a shape.
_POSE_FIELDS = (('primitives', 'primitive_poses'), ('meshes', 'mesh_poses'),
                ('planes', 'plane_poses'))
_SHAPE_FORMS = {'primitives': _primitive_form, 'meshes': _mesh_form, 'planes': _plane_form}


def scene_object(message, *, limits=None, hull_warning_threshold=HULL_WARNING_THRESHOLD,
                 mesh_options=None):
    """
    Convert a CollisionObject (message or dict) to a :class:`SceneObject` and its operation.

    Parameters
    ----------
    message : moveit_msgs.msg.CollisionObject or dict
        Read: id, operation, header.frame_id, pose, primitives, primitive_poses, meshes,
        mesh_poses, planes, plane_poses. A dict may leave out header, pose, operation and the
        shape lists (identity, '', ADD, none).
    limits : object, optional
        ``max_points``, ``max_mesh_triangles`` and ``max_markers_per_message`` (the node's
        ``IngestLimits``: the cap on shapes per object); None: unbounded.
    hull_warning_threshold : float
        Metres a mesh hull may reach beyond the mesh before a warning says so.
    mesh_options : MeshOptions, optional
        The mesh mode (default ``hull``), the resolver of ``resource`` meshes, the piece cap.

    Returns
    -------
    tuple of (int, SceneObject)
        The operation, and the object; a rejected object carries ``error`` (the id is always
        named).

    """
    object_id = str(_get(message, 'id', ''))
    header = _get(message, 'header', {})
    frame_id = str(_get(header, 'frame_id', '')).lstrip('/')
    operation = -1
    try:
        operation = _operation(_get(message, 'operation', ADD))
        if operation not in OPERATION_NAMES:
            raise ValueError(f'unknown operation {operation}')
        with _Field('pose'):
            pose = pose_matrix(_get(message, 'pose', None))
        shapes, sources = ([], []) if operation == REMOVE else _shapes(
            message, object_id, limits, hull_warning_threshold, mesh_options or MeshOptions())
    except (ValueError, TypeError, ModelError) as error:
        reason = error.reason if isinstance(error, ModelError) else _reason(error)
        return operation, SceneObject(object_id, frame_id, np.eye(4), error=reason)
    built = [_pieces_of(object_id, frame_id, items) for items in shapes]
    return operation, SceneObject(
        object_id, frame_id, pose, sum(built, ()),
        sources=tuple(pieces if source is None else source
                      for pieces, source in zip(built, sources)))


def rebuilt_object(found, *, hull_warning_threshold=HULL_WARNING_THRESHOLD, mesh_options=None):
    """
    Return ``found`` (a SceneObject) with its meshes built again by ``mesh_options``.

    Its primitives and planes keep their pieces; each mesh is built from its
    :class:`MeshSource` as ``scene_object`` builds it. A mesh file that no longer loads
    rejects the object (``error``), as it would have when first received.
    """
    options = mesh_options or MeshOptions()
    pieces = []
    try:
        for source in found.sources:
            if not isinstance(source, MeshSource):
                pieces += source
                continue
            pieces += _pieces_of(found.id, found.frame_id,
                                 _mesh(source, found.id, hull_warning_threshold, options))
    except (ValueError, TypeError, ModelError) as error:
        reason = error.reason if isinstance(error, ModelError) else _reason(error)
        return replace(found, pieces=(), error=reason)
    return replace(found, pieces=tuple(pieces), error=None)


def collision_object_pieces(message, *, limits=None, mesh_options=None):
    """
    Return the pieces of a CollisionObject (message or dict), each placed in its frame.

    The planner API's obstacles: the object's pose composed with each shape's pose.

    Raises
    ------
    ModelError
        Naming the object's id, for anything invalid, or an object with no shapes.

    """
    _, found = scene_object(message, limits=limits, mesh_options=mesh_options)
    if found.error is not None:
        raise ModelError(found.id or '<no id>', found.error)
    if not found.pieces:
        raise ModelError(found.id or '<no id>', 'the collision object has no shapes')
    return found.placed()


@dataclass(frozen=True)
class AttachedObject:
    """An object held by a link: it moves with ``link`` and ignores its ``touch_links``."""

    link: str
    touch_links: frozenset
    object: SceneObject  # noqa: A003 -- the message's field name


def attached_object(message, *, limits=None,
                    hull_warning_threshold=HULL_WARNING_THRESHOLD, mesh_options=None):
    """
    Convert an AttachedCollisionObject (message or dict): (operation, AttachedObject).

    The object's pose is in the link frame when ``header.frame_id`` is empty or the link;
    otherwise it is expressed in the link frame once, when attached (``resolve_into``).
    """
    operation, found = scene_object(_get(message, 'object'), limits=limits,
                                    hull_warning_threshold=hull_warning_threshold,
                                    mesh_options=mesh_options)
    link = str(_get(message, 'link_name', '')).lstrip('/')
    if found.frame_id in ('', link):
        found = replace(found, frame_id=link)
    else:
        found = replace(found, resolve_into=link)
    touch = frozenset(str(name) for name in _get(message, 'touch_links', []) or [])
    return operation, AttachedObject(link, touch, found)


@dataclass(frozen=True)
class AllowedCollisions:
    """
    MoveIt's allowed collision matrix: which pairs of bodies are never checked.

    ``entries`` are (name, name, allowed) for pairs the matrix names; ``defaults`` are
    (name, allowed) for bodies it gives a default. As MoveIt's
    ``AllowedCollisionMatrix::getAllowedCollision``: an entry decides; else the defaults, and
    when both bodies have one, the pair is allowed only if both allow it. An entry given
    twice (both triangles of the matrix) is allowed only if both say so: leaving a pair out
    is the unsafe side.
    """

    entries: tuple = ()
    defaults: tuple = ()
    _lookup: dict = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self):
        pairs = {}
        for first, second, allowed in self.entries:
            key = frozenset((first, second))
            pairs[key] = pairs.get(key, True) and allowed
        object.__setattr__(self, '_lookup', (pairs, dict(self.defaults)))

    def allows(self, first, second):
        """Tell whether the matrix allows the pair (it is then never checked)."""
        pairs, defaults = self._lookup
        entry = pairs.get(frozenset((first, second)))
        if entry is not None:
            return entry
        found = [defaults[name] for name in (first, second) if name in defaults]
        return bool(found) and all(found)

    @classmethod
    def from_message(cls, matrix):
        """Read a moveit_msgs/AllowedCollisionMatrix (message or dict); ValueError if bad."""
        names = [str(name) for name in _get(matrix, 'entry_names', []) or []]
        rows = [list(_get(row, 'enabled')) for row in _get(matrix, 'entry_values', []) or []]
        if len(rows) != len(names) or any(len(row) != len(names) for row in rows):
            raise ValueError(f'allowed_collision_matrix: {len(names)} entry_names but '
                             f'entry_values is not {len(names)} x {len(names)}')
        default_names = [str(n) for n in _get(matrix, 'default_entry_names', []) or []]
        default_values = [bool(v) for v in _get(matrix, 'default_entry_values', []) or []]
        if len(default_names) != len(default_values):
            raise ValueError('allowed_collision_matrix: default_entry_names and '
                             'default_entry_values differ in length')
        entries = tuple((names[i], names[j], bool(rows[i][j])) for i in range(len(names))
                        for j in range(len(names)) if i != j)
        return cls(entries, tuple(zip(default_names, default_values)))


@dataclass
class SceneUpdate:
    """A PlanningScene (message or dict) converted: what ``SceneState.apply_scene`` reads."""

    is_diff: bool
    objects: list
    attached: list
    attached_is_diff: bool
    matrix: object = None
    padding: dict = field(default_factory=dict)
    scale: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)


def scene_update(message, *, limits=None, hull_warning_threshold=HULL_WARNING_THRESHOLD,
                 mesh_options=None):
    """Convert a moveit_msgs/PlanningScene (message or dict) to a :class:`SceneUpdate`."""
    is_diff = bool(_get(message, 'is_diff', False))
    world = _get(message, 'world', {})
    options = {'limits': limits, 'hull_warning_threshold': hull_warning_threshold,
               'mesh_options': mesh_options}
    objects = [scene_object(o, **options) for o in _get(world, 'collision_objects', []) or []]
    state = _get(message, 'robot_state', {})
    attached = [attached_object(a, **options)
                for a in _get(state, 'attached_collision_objects', []) or []]
    update = SceneUpdate(is_diff, objects, attached, bool(_get(state, 'is_diff', False)))
    matrix = _get(message, 'allowed_collision_matrix', {})
    if not is_diff or _get(matrix, 'entry_names', []) or _get(matrix, 'default_entry_names', []):
        try:
            update.matrix = AllowedCollisions.from_message(matrix)
        except ValueError as error:
            update.problems.append(('allowed_collision_matrix', str(error)))
    for name, target in (('link_padding', update.padding), ('link_scale', update.scale)):
        for entry in _get(message, name, []) or []:
            value = float(_get(entry, 'padding' if name == 'link_padding' else 'scale'))
            link = str(_get(entry, 'link_name'))
            if not math.isfinite(value) or value < 0.0 or (name == 'link_scale' and value == 0):
                update.problems.append((link, f'{name} {value!r} is not usable'))
            else:
                target[link] = value
    octomap = _get(_get(_get(world, 'octomap', {}), 'octomap', {}), 'data', [])
    if len(octomap):
        update.problems.append(('octomap', 'the world octomap is not used (give the node the '
                                'sensor data as observation_sources instead)'))
    return update


def shape_centre(shape):
    """Return the point ``scaled_shape`` scales about: a polytope's vertex mean, else 0."""
    return shape.vertices.mean(axis=0) if shape.kind == 'polytope' else np.zeros(3)


def scaled_shape(shape, factor, centre=None):
    """
    Return ``shape`` (a ConvexPolytope) scaled by ``factor``: MoveIt's ``link_scale``.

    MoveIt scales a primitive about its origin and a mesh about the mean of its vertices
    (geometric_shapes' ``scaleAndPadd``); a primitive here is centred on the piece origin and a
    polytope is scaled about the mean of its hull vertices (``shape_centre``), or ``centre``.
    A half-space has no size: it is returned as it is.
    """
    if factor == 1.0 or shape.kind == 'half_space':
        return shape
    # The constructor's arguments, as the shape pickles itself (a scaled copy keeps its graph).
    rebuild, (vertices, offsets, indices, radius, kind, cylinder) = shape.__reduce__()
    centre = shape_centre(shape) if centre is None else centre
    return rebuild(centre + (vertices - centre) * factor, offsets, indices, radius * factor,
                   kind, tuple(value * factor for value in cylinder))


class SceneState:
    """
    The planning scene as MoveIt's ``PlanningScene`` keeps it.

    World objects, attached objects, the allowed collision matrix, link padding and scale.

    Every ``apply_*`` returns the problems it met as (name, reason): an operation on an
    unknown id changes nothing and is reported, never guessed. A rejected object stays in the
    scene with its ``error`` (its pairs are INVALID), so that a malformed object is never
    mistaken for free space.
    """

    def __init__(self):
        self.objects = {}
        self.attached = {}
        self.matrix = AllowedCollisions()
        self.padding = {}
        self.scale = {}
        self.revision = 0

    def apply_object(self, operation, found):
        """Apply one world CollisionObject operation (MoveIt's semantics per operation)."""
        self.revision += 1
        name = found.id
        if operation == REMOVE:
            return self._remove_object(name)
        if not name:
            return [('<no id>', f'{OPERATION_NAMES.get(operation, operation)} of an object '
                                'with an empty id')]
        if found.error is not None or operation not in (ADD, APPEND, MOVE):
            self.objects[name] = replace(found, pieces=(),
                                         error=found.error or f'unknown operation {operation}')
            return []
        current = self.objects.get(name)
        if operation == MOVE:
            if current is None:
                return [(name, 'MOVE of an unknown object (nothing changed)')]
            self.objects[name] = replace(current, frame_id=found.frame_id, pose=found.pose,
                                         resolve_into=None)
            return [(name, 'MOVE ignores the shapes it carries')] if found.pieces else []
        if operation == APPEND and current is not None and current.error is None:
            found = replace(found, pieces=current.pieces + found.pieces,
                            sources=current.sources + found.sources)
        if not found.pieces:
            found = replace(found, error=f'{OPERATION_NAMES[operation]} of an object with no '
                                         'shapes')
        self.objects[name] = found
        return []

    def _remove_object(self, name):
        if not name:
            self.objects.clear()  # MoveIt: REMOVE with an empty id removes every world object
        elif self.objects.pop(name, None) is None:
            return [(name, 'REMOVE of an unknown object (nothing changed)')]
        return []

    def apply_attached(self, operation, held):
        """Attach (ADD, APPEND) or detach (REMOVE) one AttachedCollisionObject."""
        self.revision += 1
        name = held.object.id
        if operation == REMOVE:
            return self._detach(name, held.link)
        if operation not in (ADD, APPEND):
            return [(name or '<no id>', f'{OPERATION_NAMES.get(operation, operation)} is not '
                                        'an operation on attached objects (nothing changed)')]
        if not name or not held.link:
            return [(name or '<no id>', 'attaching needs an object id and a link_name')]
        found = held.object
        if found.error is None and not found.pieces:
            found = self._existing(name, held.link)
            if found is None:
                return [(name, 'attach of an unknown object with no shapes (nothing changed)')]
        else:
            self.objects.pop(name, None)  # MoveIt replaces a world object of the same id
            current = self.attached.get(name)
            if operation == APPEND and current is not None and current.object.error is None \
                    and found.error is None:
                found = replace(found, pieces=current.object.pieces + found.pieces,
                                sources=current.object.sources + found.sources)
        self.attached[name] = AttachedObject(held.link, held.touch_links, found)
        return []

    def _existing(self, name, link):
        """Return the world or attached object of that id, to be held by ``link``, or None."""
        found = self.objects.pop(name, None)
        if found is None and name in self.attached:
            found = self.attached[name].object
        if found is None or found.frame_id == link:
            return found
        return replace(found, resolve_into=link)

    def _detach(self, name, link):
        """Detached objects go back to the world where they are now (MoveIt does so)."""
        if name and name not in self.attached:
            return [(name, 'detach of an object that is not attached (nothing changed)')]
        names = [name] if name else [n for n, held in self.attached.items()
                                     if not link or held.link == link]
        for detached in names:
            held = self.attached.pop(detached)
            self.objects[detached] = replace(held.object, resolve_into='')
        return []

    def apply_scene(self, update):
        """Apply a PlanningScene: a full scene replaces everything, a diff changes parts."""
        self.revision += 1
        problems = list(update.problems)
        if not update.is_diff:
            self.objects.clear()
            self.padding.clear()
            self.scale.clear()
            self.matrix = AllowedCollisions()
        # Operations apply as given, after the clearing (MoveIt's setPlanningSceneMsg and
        # robotStateMsgToRobotState do the same; move_group's full scenes say ADD throughout).
        for operation, found in update.objects:
            problems += self.apply_object(operation, found)
        if not update.is_diff or (update.attached and not update.attached_is_diff):
            self.attached.clear()
        for operation, held in update.attached:
            problems += self.apply_attached(operation, held)
        if update.matrix is not None:
            self.matrix = update.matrix
        self.padding.update(update.padding)
        self.scale.update(update.scale)
        return problems

    def take_rebuilt(self, name, attached, sources, found):
        """
        Give the object ``name`` the pieces of ``found`` (``rebuilt_object`` of it).

        Only while the object still has ``sources`` (the very tuple it was rebuilt from): a
        message applied since decides. Returns whether it did.
        """
        table = self.attached if attached else self.objects
        entry = table.get(name)
        current = entry.object if attached and entry is not None else entry
        if current is None or current.sources is not sources:
            return False
        updated = replace(current, pieces=found.pieces, error=found.error)
        table[name] = replace(entry, object=updated) if attached else updated
        self.revision += 1
        return True

    def resolve(self, lookup, fixed_frame):
        """
        Express poses waiting for it in their target frame, with ``lookup(target, source)``.

        ``lookup`` returns T(target <- source) now, or None (not yet: tried again next time).
        Returns whether anything moved.
        """
        moved = False
        for table, unwrap in ((self.objects, None), (self.attached, 'object')):
            for name, entry in table.items():
                found = entry if unwrap is None else entry.object
                if found.resolve_into is None:
                    continue
                target = found.resolve_into or fixed_frame
                transform = lookup(target, found.frame_id or fixed_frame)
                if transform is None:
                    continue
                found = replace(found, frame_id=target, pose=transform @ found.pose,
                                resolve_into=None)
                table[name] = found if unwrap is None else replace(entry, object=found)
                moved = True
        if moved:
            self.revision += 1
        return moved

    def touch_pairs(self):
        """Pairs (attached object, link or body it may touch) that are never checked."""
        return frozenset(frozenset((name, other)) for name, held in self.attached.items()
                         for other in held.touch_links | {held.link} if other != name)
