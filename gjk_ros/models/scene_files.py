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
World files users already have: PlanningScene YAML and MoveIt's ``.scene`` text.

Both become a :class:`SceneFile`: collision objects as dicts with the message's field names,
which ``gjk_ros.models.collision_objects`` (the node's planning-scene source and the planner
API's ``Obstacle.from_collision_object``) reads.

YAML (``.yaml``, ``.yml``)
    A moveit_msgs/PlanningScene (``world.collision_objects``; ``name``), in the message's own
    form or in robowflex's shorthand that MotionBenchMaker's scenes use (positions ``[x, y,
    z]``, orientations ``[x, y, z, w]``, primitive types by name, meshes by ``resource``). A
    mapping with a ``collision_objects`` list, or a list of objects, is read too. Attached
    objects (``robot_state.attached_collision_objects``) belong to a robot state and are
    listed apart; the allowed collision matrix and ``fixed_frame_transforms`` are not read.
A URDF world (``.urdf``: MotionBenchMaker's kitchen)
    One object per link with collision geometry, named by the link, at the link's pose with
    every joint at zero (clipped to its limits), in the root link's frame; each ``<collision>``
    a shape at its ``<origin>``: ``box``, ``sphere``, ``cylinder`` as primitives, ``mesh`` by its
    ``filename`` (a ``resource``, with its ``scale``). What the planner API's ``load_obstacles``
    reads from the same file, as collision objects.
MoveIt's ``.scene`` text (``PlanningScene::saveGeometryToStream``)
    A name line, then objects: ``* id``, the object pose (two lines: x y z, then qx qy qz qw)
    in the format that has it (told, as MoveIt does, by a space on the line after the first
    ``*``), the shape count, each shape (``box`` sx sy sz, ``sphere`` r, ``cylinder`` r l,
    ``cone`` r l, ``plane`` a b c d, ``mesh`` with its vertex and triangle counts and lists),
    its pose and colour, then the subframes (count, name and pose each); ``.`` ends the file.

Every error is a :class:`ModelError` naming the file and the object and field or line at
fault, never the file's contents.
"""

from dataclasses import dataclass
import os

from gjk_ros.models.errors import ModelError

__all__ = ['SceneFile', 'read_scene_file', 'parse_scene_yaml', 'parse_scene_text',
           'parse_scene_urdf', 'MAX_SCENE_BYTES']

# moveit_msgs/PlanningScene's fields, one of which a scene mapping must have.
_SCENE_FIELDS = {'name', 'world', 'robot_state', 'robot_model_name', 'fixed_frame_transforms',
                 'allowed_collision_matrix', 'link_padding', 'link_scale', 'object_colors',
                 'is_diff', 'collision_objects'}
# The poses field of each CollisionObject shape list.
_POSES = {'primitives': 'primitive_poses', 'meshes': 'mesh_poses', 'planes': 'plane_poses'}
# Largest scene file read (a .scene file holds its meshes inline).
MAX_SCENE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class SceneFile:
    """
    A world read from a file.

    Attributes
    ----------
    name : str
        The scene's name ('' when the file gives none).
    objects : tuple of dict
        World collision objects, in file order (CollisionObject fields).
    attached : tuple of dict
        AttachedCollisionObjects of the file's robot state (YAML only).
    source : str
        The file, as named in errors.

    """

    name: str
    objects: tuple
    attached: tuple = ()
    source: str = ''


def read_scene_file(path) -> SceneFile:
    """
    Read a PlanningScene YAML, a ``.scene`` or a URDF world (by extension; module docstring).

    Raises
    ------
    ModelError
        Naming the file: missing, too large, an unknown extension, malformed content (with
        the object and field or line).

    """
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension not in ('.yaml', '.yml', '.scene', '.urdf'):
        raise ModelError(path, f"unknown scene file type '{extension}' (.yaml, .yml, .scene "
                               'or .urdf)')
    try:
        size = os.path.getsize(path)
        if size > MAX_SCENE_BYTES:
            raise ModelError(path, f'{size} bytes, more than the limit of {MAX_SCENE_BYTES}')
        with open(path, encoding='utf-8') as stream:
            text = stream.read()
    except OSError as error:
        raise ModelError(path, f'cannot read the scene file: {error.strerror}') from None
    except UnicodeDecodeError:
        raise ModelError(path, 'not a text file') from None
    if extension == '.scene':
        return parse_scene_text(text, path)
    if extension == '.urdf':
        return parse_scene_urdf(text, path)
    return parse_scene_yaml(text, path)


# YAML --------------------------------------------------------------------------------------------

def parse_scene_yaml(text: str, source: str = '<yaml>') -> SceneFile:
    """Read PlanningScene YAML (message form or robowflex's shorthand); see the module."""
    import yaml
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, 'problem_mark', None)
        where = f' at line {mark.line + 1}' if mark is not None else ''
        raise ModelError(source, f'not valid YAML{where}') from None
    name, attached = '', []
    if isinstance(document, list):
        objects = document
    elif isinstance(document, dict):
        if not _SCENE_FIELDS & set(document):
            raise ModelError(source, 'not a PlanningScene: it has none of the fields '
                                     f'{", ".join(sorted(_SCENE_FIELDS))}')
        name = str(document.get('name', '') or '')
        world = document.get('world', {}) or {}
        if not isinstance(world, dict):
            raise ModelError(source, 'world: expected a mapping')
        objects = world.get('collision_objects', document.get('collision_objects', [])) or []
        state = document.get('robot_state', {}) or {}
        if isinstance(state, dict):
            attached = state.get('attached_collision_objects', []) or []
    else:
        raise ModelError(source, 'expected a PlanningScene mapping or a list of collision '
                                 'objects')
    if not isinstance(objects, list):
        raise ModelError(source, 'world.collision_objects: expected a list')
    checked = [_checked_object(item, i, source) for i, item in enumerate(objects)]
    _unique_ids(checked, source)
    return SceneFile(name, tuple(checked), tuple(attached), source)


def _checked_object(item, index, source):
    where = f'world.collision_objects[{index}]'
    if not isinstance(item, dict):
        raise ModelError(source, f'{where}: expected a mapping')
    object_id = item.get('id')
    if not isinstance(object_id, str) or not object_id.strip():
        raise ModelError(source, f'{where}.id: missing or empty')
    item = dict(item)
    item['id'] = object_id.strip()  # robowflex's files write 'id: cupboard ' with a space
    return item


def _unique_ids(objects, source):
    seen = set()
    for item in objects:
        if item['id'] in seen:
            raise ModelError(source, f"object id '{item['id']}' appears twice")
        seen.add(item['id'])


# A URDF world --------------------------------------------------------------------------------

def parse_scene_urdf(text: str, source: str = '<urdf>') -> SceneFile:
    """Read a URDF world: one collision object per link with collision geometry (module)."""
    from gjk_ros.models.kinematics import parse_kinematics
    from gjk_ros.models.urdf import child_elements, robot_element
    try:
        root = robot_element(text)
        kinematics = parse_kinematics(text)
    except ModelError as error:
        raise ModelError(source, error.reason) from None
    poses = kinematics.forward(kinematics.neutral()[None])[0]
    objects = []
    for link in child_elements(root, 'link'):
        name = link.get('name', '')
        collisions = child_elements(link, 'collision')
        if not collisions:
            continue
        item = {'id': name, 'header': {'frame_id': ''},
                'pose': _pose_of(poses[kinematics.link_index(name)]),
                'primitives': [], 'primitive_poses': [], 'meshes': [], 'mesh_poses': []}
        for index, collision in enumerate(collisions):
            try:
                field, shape, pose = _urdf_shape(collision)
            except ValueError as error:
                raise ModelError(f'{source}: {name}', f'collision[{index}]: {error}') from None
            item[field].append(shape)
            item[_POSES[field]].append(pose)
        objects.append(item)
    _unique_ids(objects, source)
    return SceneFile(root.get('name', ''), tuple(objects), (), source)


def _urdf_shape(collision):
    """Return (shape list field, shape, its pose) of one ``<collision>`` element."""
    from gjk_ros.models.transforms import xyz_rpy_to_matrix
    from gjk_ros.models.urdf import child_elements
    from gjk_ros.models.values import parse_numbers
    origin = child_elements(collision, 'origin')
    pose = xyz_rpy_to_matrix(origin[0].get('xyz', '0 0 0'), origin[0].get('rpy', '0 0 0')) \
        if origin else xyz_rpy_to_matrix()
    geometry = child_elements(collision, 'geometry')
    shapes = list(geometry[0]) if geometry else []
    if len(shapes) != 1:
        raise ValueError('geometry: expected one shape')
    element = shapes[0]
    kind = element.tag.rsplit('}', 1)[-1] if isinstance(element.tag, str) else ''

    def numbers(name, count):
        if element.get(name) is None:
            raise ValueError(f'{kind}: no {name} attribute')
        return [float(v) for v in parse_numbers(element.get(name), f'{kind} {name}', count)]
    if kind == 'box':
        return 'primitives', {'type': 'box', 'dimensions': numbers('size', 3)}, _pose_of(pose)
    if kind == 'sphere':
        return 'primitives', {'type': 'sphere', 'dimensions': numbers('radius', 1)}, \
            _pose_of(pose)
    if kind == 'cylinder':
        return 'primitives', {'type': 'cylinder', 'dimensions': numbers('length', 1) +
                              numbers('radius', 1)}, _pose_of(pose)
    if kind == 'mesh':
        if not element.get('filename'):
            raise ValueError('mesh: no filename attribute')
        scale = numbers('scale', 3) if element.get('scale') is not None else [1.0] * 3
        return 'meshes', {'resource': element.get('filename'), 'scale': scale}, _pose_of(pose)
    raise ValueError(f'geometry: <{kind[:20]}> has no collision object shape (box, sphere, '
                     'cylinder, mesh)')


def _pose_of(matrix):
    """Return a (4, 4) pose in robowflex's shorthand: position [x, y, z], [x, y, z, w]."""
    from scipy.spatial.transform import Rotation
    return {'position': [float(v) for v in matrix[:3, 3]],
            'orientation': [float(v) for v in Rotation.from_matrix(matrix[:3, :3]).as_quat()]}


# MoveIt's .scene text ----------------------------------------------------------------------------

class _Lines:
    """The file's lines as whitespace-separated words, with the line number of each."""

    def __init__(self, text, source):
        self.lines = text.splitlines()
        self.index = 0
        self.source = source
        self.object = None

    def fail(self, reason):
        owner = self.source if self.object is None else f'{self.source}: {self.object}'
        raise ModelError(owner, f'line {min(self.index, len(self.lines)) + 1}: {reason}')

    def next_line(self, what):
        while self.index < len(self.lines) and not self.lines[self.index].strip():
            self.index += 1
        if self.index >= len(self.lines):
            self.fail(f'the file ends where {what} was expected')
        line = self.lines[self.index].strip()
        self.index += 1
        return line

    def numbers(self, count, what):
        words = self.next_line(what).split()
        if len(words) != count:
            self.index -= 1
            self.fail(f'{what}: expected {count} numbers, got {len(words)}')
        try:
            values = [float(word) for word in words]
        except ValueError:
            self.index -= 1
            self.fail(f'{what}: not numbers')
        return values

    def count(self, what):
        value = self.numbers(1, what)[0]
        if value != int(value) or value < 0:
            self.index -= 1
            self.fail(f'{what}: expected a count')
        return int(value)


def _pose(lines, what):
    position = lines.numbers(3, f'{what} position')
    orientation = lines.numbers(4, f'{what} orientation')
    return {'position': position, 'orientation': orientation}


def _scene_shape(lines, kind):
    if kind == 'box':
        return 'primitives', {'type': 'box', 'dimensions': lines.numbers(3, 'box size')}
    if kind == 'sphere':
        return 'primitives', {'type': 'sphere', 'dimensions': lines.numbers(1, 'sphere radius')}
    if kind in ('cylinder', 'cone'):
        radius, length = lines.numbers(2, f'{kind} radius and length')
        return 'primitives', {'type': kind, 'dimensions': [length, radius]}
    if kind == 'plane':
        return 'planes', {'coef': lines.numbers(4, 'plane coefficients')}
    if kind == 'mesh':
        vertices, triangles = (int(v) for v in lines.numbers(2, 'mesh vertex and triangle '
                                                                'counts'))
        return 'meshes', {
            'vertices': [lines.numbers(3, f'mesh vertex {i}') for i in range(vertices)],
            'triangles': [[int(v) for v in lines.numbers(3, f'mesh triangle {i}')]
                          for i in range(triangles)]}
    lines.index -= 1
    return lines.fail(f"unknown shape '{kind[:20]}' (box, sphere, cylinder, cone, plane, mesh)")


def parse_scene_text(text: str, source: str = '<scene>') -> SceneFile:
    """Read MoveIt's ``.scene`` text (see the module docstring)."""
    lines = _Lines(text, source)
    name = lines.lines[0].strip() if lines.lines else ''
    lines.index = 1
    # MoveIt's test: in the newer format the line after the first '*' is a pose (has spaces).
    rest = [line.strip() for line in lines.lines[1:] if line.strip()]
    starts = [i for i, line in enumerate(rest) if line.startswith('*')]
    with_poses = bool(starts) and starts[0] + 1 < len(rest) and ' ' in rest[starts[0] + 1]
    objects = []
    while True:
        line = lines.next_line("'* object id' or '.'")
        if line == '.':
            break
        if not line.startswith('*'):
            lines.index -= 1
            lines.fail("expected '* object id' or '.'")
        object_id = line[1:].strip()
        if not object_id:
            lines.index -= 1
            lines.fail('empty object id')
        lines.object = object_id
        item = {'id': object_id, 'header': {'frame_id': ''},
                'primitives': [], 'primitive_poses': [], 'meshes': [], 'mesh_poses': [],
                'planes': [], 'plane_poses': []}
        if with_poses:
            item['pose'] = _pose(lines, 'object')
        for s in range(lines.count('shape count')):
            field, shape = _scene_shape(lines, lines.next_line(f'shape {s}').lower())
            item[field].append(shape)
            item[_POSES[field]].append(_pose(lines, f'shape {s}'))
            lines.numbers(4, f'shape {s} colour')
        if with_poses:
            for f in range(lines.count('subframe count')):
                lines.next_line(f'subframe {f} name')
                _pose(lines, f'subframe {f}')
        objects.append(item)
        lines.object = None
    _unique_ids(objects, source)
    return SceneFile(name, tuple(objects), (), source)
