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
URDF ``<collision>`` elements to convex pieces (xml.etree; no urdfdom).

Each ``<link>``'s ``<collision>`` elements become one CollisionPiece each, attached to the link
frame, posed by ``<origin xyz rpy>`` (rpy: fixed-axis roll, pitch, yaw,
``R = Rz(yaw) Ry(pitch) Rx(roll)``). Geometry: ``<box size>``, ``<cylinder radius length>``
(axis z), ``<sphere radius>``, ``<mesh filename [scale]>`` (its convex hull) and, as an
extension some tools emit, ``<capsule radius length>``.

A link with any rejected collision element gets no pieces at all: a link that silently lost
part of its geometry would report distances larger than the real ones. Every rejection is one
ModelError naming the link; other links are not affected.
"""

from dataclasses import dataclass, field
import xml.etree.ElementTree as ElementTree

from gjk_ros.models import primitives
from gjk_ros.models.errors import blame, ModelError
from gjk_ros.models.meshes import default_resolver, mesh_shape, ResourceResolver
from gjk_ros.models.pieces import CollisionPiece
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.values import parse_numbers

DOCUMENT_BODY = 'robot_description'


@dataclass
class UrdfCollisionModel:
    """
    Collision geometry of a robot description.

    Attributes
    ----------
    robot_name : str
        The ``<robot name>``.
    pieces : dict of str to list of CollisionPiece
        Link name -> its pieces, in document order; only links with collision geometry that
        was accepted in full.
    errors : list of ModelError
        One per rejected element (or nameless/duplicate link), each naming the link.
    warnings : list of str
        Each distinct warning once (non-convex mesh replaced by its hull, naming link and
        file).
    links : list of str
        Every link name of the document, with or without collision geometry.

    """

    robot_name: str
    pieces: dict[str, list[CollisionPiece]] = field(default_factory=dict)
    errors: list[ModelError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    @property
    def rejected_links(self) -> set[str]:
        """Names of links whose collision geometry was rejected (they have no pieces)."""
        return {error.body for error in self.errors}


def parse_urdf_collisions(urdf_xml: str, *,
                          resolver: ResourceResolver | None = None) -> UrdfCollisionModel:
    """
    Build the convex collision pieces of every link of a URDF document.

    Parameters
    ----------
    urdf_xml : str
        The URDF text (e.g. the ``robot_description`` topic's data).
    resolver : ResourceResolver, optional
        For mesh files; default the shared :func:`default_resolver`.

    Returns
    -------
    UrdfCollisionModel
        Pieces per link, plus the errors and warnings of individual links.

    Raises
    ------
    ModelError
        With body ``'robot_description'``: empty text, malformed XML, or a root element that
        is not ``<robot>``.

    """
    root = _parse_robot(urdf_xml)
    resolver = resolver or default_resolver()
    model = UrdfCollisionModel(robot_name=root.get('name', ''))
    for index, link in enumerate(_children(root, 'link'), start=1):
        name = link.get('name', '')
        if not name:
            model.errors.append(ModelError(f'link #{index}', 'link without a name attribute'))
        elif name in model.links:
            model.errors.append(ModelError(name, 'duplicate link name; the first one is used'))
        else:
            model.links.append(name)
            _add_link(model, name, link, resolver)
    return model


def robot_element(urdf_xml: str) -> ElementTree.Element:
    """
    Parse a URDF document and return its ``<robot>`` element (for the other URDF readers).

    Raises
    ------
    ModelError
        As :func:`parse_urdf_collisions` does for the document.

    """
    return _parse_robot(urdf_xml)


def child_elements(element, tag: str) -> list:
    """Return the children of ``element`` with local tag name ``tag``, in document order."""
    return _children(element, tag)


def _parse_robot(urdf_xml) -> ElementTree.Element:
    if not isinstance(urdf_xml, (str, bytes)) or not urdf_xml.strip():
        raise ModelError(DOCUMENT_BODY, 'the robot description is empty')
    try:
        root = ElementTree.fromstring(urdf_xml)
    except ElementTree.ParseError as error:
        raise ModelError(DOCUMENT_BODY, f'malformed XML: {error}') from None
    if _local_name(root.tag) != 'robot':
        raise ModelError(DOCUMENT_BODY, f'the root element is <{_local_name(root.tag)}>, '
                                        'expected <robot>')
    return root


def _add_link(model: UrdfCollisionModel, name: str, link, resolver: ResourceResolver):
    pieces, errors = [], []
    collisions = _children(link, 'collision')
    for index, collision in enumerate(collisions, start=1):
        label = _collision_label(collision, index, len(collisions))
        try:
            with blame(name, label):
                pieces.append(_collision_piece(name, collision, resolver))
        except ModelError as error:
            errors.append(error)
    model.errors.extend(errors)
    if pieces and not errors:
        model.pieces[name] = pieces
        for warning in (warning for piece in pieces for warning in piece.warnings):
            if warning not in model.warnings:
                model.warnings.append(warning)


def _collision_label(collision, index: int, count: int) -> str:
    name = collision.get('name')
    label = f'collision {index} of {count}' if count > 1 else 'collision'
    return f"{label} '{name}'" if name else label


def _collision_piece(link: str, collision, resolver: ResourceResolver) -> CollisionPiece:
    origin = _children(collision, 'origin')
    if origin:
        pose = xyz_rpy_to_matrix(origin[0].get('xyz', '0 0 0'), origin[0].get('rpy', '0 0 0'))
    else:
        pose = xyz_rpy_to_matrix()
    shape = _geometry_shape(link, _geometry_element(collision), resolver)
    return CollisionPiece(link, link, pose, shape.polytope, shape.description, shape.warnings,
                          shape.mesh)


def _geometry_element(collision) -> ElementTree.Element:
    geometry = _children(collision, 'geometry')
    if not geometry:
        raise ValueError('no <geometry> element')
    shapes = list(geometry[0])
    if len(shapes) != 1:
        raise ValueError(f'<geometry> must hold exactly one shape, found {len(shapes)}')
    return shapes[0]


def _geometry_shape(link: str, element, resolver: ResourceResolver) -> primitives.Shape:
    kind = _local_name(element.tag)
    if kind == 'box':
        return primitives.box(_attribute(element, 'size'))
    if kind == 'sphere':
        return primitives.sphere(_attribute(element, 'radius'))
    if kind == 'cylinder':
        return primitives.cylinder(_attribute(element, 'radius'), _attribute(element, 'length'))
    if kind == 'capsule':
        return primitives.capsule(_attribute(element, 'radius'), _attribute(element, 'length'))
    if kind == 'mesh':
        uri = _attribute(element, 'filename')
        scale = parse_numbers(element.get('scale', '1 1 1'), 'mesh scale', 3)
        info = resolver.load_mesh_info(uri, scale)
        return mesh_shape(info, f'mesh {uri}', scale, link,
                          resolver.hull_warning_threshold, uri)
    raise ValueError(f'unsupported geometry <{kind}> (expected box, cylinder, sphere, mesh '
                     'or capsule)')


def _attribute(element, name: str) -> str:
    value = element.get(name)
    if value is None:
        raise ValueError(f'<{_local_name(element.tag)}> has no {name} attribute')
    return value


def _children(element, tag: str) -> list:
    return [child for child in element if _local_name(child.tag) == tag]


def _local_name(tag) -> str:
    # Comments and processing instructions have a callable tag; they never match.
    return tag.rsplit('}', 1)[-1] if isinstance(tag, str) else ''
