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
SRDF (MoveIt's semantic robot description): disabled collision pairs, groups, link padding.

Read with xml.etree like the URDF, bounded: the text may hold at most ``MAX_SRDF_BYTES``, a
document type declaration (and so any entity definition) is rejected before parsing, and at most
``MAX_SRDF_ELEMENTS`` elements are read. Elements this reader does not use (virtual joints,
group states, end effectors, passive joints) are ignored.

``<disable_collisions link1 link2 reason>``: the pair is never checked for self-collision
(MoveIt's Allowed Collision Matrix). ``<group name>`` with ``<link name>``, ``<joint name>`` and
``<chain base_link tip_link>`` children: kept as written, for selecting links. ``<link_padding
link padding>`` (an extension some SRDFs carry; MoveIt usually sets padding by parameter): the
per-link padding in metres.
"""

from dataclasses import dataclass, field
import xml.etree.ElementTree as ElementTree

from gjk_ros.models.errors import ModelError
from gjk_ros.models.values import parse_numbers

DOCUMENT_BODY = 'robot_description_semantic'
MAX_SRDF_BYTES = 16 * 1024 * 1024
MAX_SRDF_ELEMENTS = 1_000_000


@dataclass(frozen=True)
class Group:
    """A planning group: its links, joints and (base, tip) chains, as written."""

    name: str
    links: tuple[str, ...] = ()
    joints: tuple[str, ...] = ()
    chains: tuple[tuple[str, str], ...] = ()
    subgroups: tuple[str, ...] = ()


@dataclass
class SrdfModel:
    """
    What gjk_ros uses from an SRDF document.

    Attributes
    ----------
    robot_name : str
        The ``<robot name>``.
    disabled_collisions : dict of frozenset to str
        ``{frozenset((link1, link2)): reason}``.
    groups : dict of str to Group
        By name.
    link_padding : dict of str to float
        From ``<link_padding>`` elements, if any.
    errors : list of ModelError
        Elements that were skipped (missing attributes, bad numbers), each naming the element.

    """

    robot_name: str = ''
    disabled_collisions: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)
    link_padding: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)

    def is_disabled(self, link1: str, link2: str) -> bool:
        """Whether self-collision between the two links is disabled."""
        return frozenset((link1, link2)) in self.disabled_collisions


def group_joints(groups, joints, name):
    """
    Return the joints of SRDF group ``name`` as MoveIt reads a group.

    Its ``<joint>`` elements; the joint above each ``<link>``; every joint from each chain's
    tip up to its base; and, recursively, its subgroups' joints (a group met twice counts once).

    Parameters
    ----------
    groups : dict of str to Group
        ``SrdfModel.groups``.
    joints : iterable of (name, parent link, child link)
        The robot's joints (the URDF's kinematic tree).
    name : str
        The group.

    Raises
    ------
    KeyError
        When there is no group ``name``.

    """
    by_child = {child: (joint, parent) for joint, parent, child in joints}
    found, seen, waiting = [], set(), [name]
    while waiting:
        group_name = waiting.pop(0)
        if group_name in seen:
            continue
        seen.add(group_name)
        group = groups[group_name]
        found += list(group.joints)
        found += [by_child[link][0] for link in group.links if link in by_child]
        for base, tip in group.chains:
            link = tip
            while link != base and link in by_child:
                joint, link = by_child[link]
                found.append(joint)
        waiting += list(group.subgroups)
    return found


def group_links(groups, joints, name):
    """
    Return the links of SRDF group ``name`` as MoveIt reads a group (a frozenset).

    The child link of each of its joints (``group_joints``) and its ``<link>`` elements, of
    the group and of its subgroups. Arguments and errors as ``group_joints``.
    """
    child_of = {joint: child for joint, _, child in joints}
    links = {child_of[joint] for joint in group_joints(groups, joints, name) if joint in child_of}
    seen, waiting = set(), [name]
    while waiting:
        group_name = waiting.pop(0)
        if group_name not in seen:
            seen.add(group_name)
            links.update(groups[group_name].links)
            waiting += list(groups[group_name].subgroups)
    return frozenset(links)


def parse_srdf(srdf_xml: str) -> SrdfModel:
    """
    Read disabled collisions, groups and link padding from an SRDF document.

    Raises
    ------
    ModelError
        With body ``'robot_description_semantic'``: empty, too large, a DOCTYPE, malformed
        XML, too many elements, or a root element that is not ``<robot>``.

    """
    root = _parse_root(srdf_xml)
    model = SrdfModel(robot_name=root.get('name', ''))
    for element in root:
        tag = _local_name(element.tag)
        if tag == 'disable_collisions':
            _disable(model, element)
        elif tag == 'group':
            _group(model, element)
        elif tag == 'link_padding':
            _padding(model, element)
    return model


def _parse_root(srdf_xml) -> ElementTree.Element:
    if isinstance(srdf_xml, bytes):
        srdf_xml = srdf_xml.decode('utf-8', errors='replace')
    if not isinstance(srdf_xml, str) or not srdf_xml.strip():
        raise ModelError(DOCUMENT_BODY, 'the semantic description is empty')
    if len(srdf_xml) > MAX_SRDF_BYTES:
        raise ModelError(DOCUMENT_BODY, f'larger than {MAX_SRDF_BYTES} characters')
    if '<!DOCTYPE' in srdf_xml or '<!ENTITY' in srdf_xml:
        raise ModelError(DOCUMENT_BODY, 'document type declarations and entities are not '
                                        'accepted')
    try:
        root = ElementTree.fromstring(srdf_xml)
    except ElementTree.ParseError as error:
        raise ModelError(DOCUMENT_BODY, f'malformed XML: {error}') from None
    if sum(1 for _ in root.iter()) > MAX_SRDF_ELEMENTS:
        raise ModelError(DOCUMENT_BODY, f'more than {MAX_SRDF_ELEMENTS} elements')
    if _local_name(root.tag) != 'robot':
        raise ModelError(DOCUMENT_BODY, f'the root element is <{_local_name(root.tag)}>, '
                                        'expected <robot>')
    return root


def _disable(model: SrdfModel, element):
    link1, link2 = element.get('link1', ''), element.get('link2', '')
    if not link1 or not link2:
        model.errors.append(ModelError('disable_collisions',
                                       f'needs link1 and link2, got {link1!r}, {link2!r}'))
        return
    model.disabled_collisions[frozenset((link1, link2))] = element.get('reason', '')


def _group(model: SrdfModel, element):
    name = element.get('name', '')
    if not name:
        model.errors.append(ModelError('group', 'a group without a name'))
        return
    parts = {'link': [], 'joint': [], 'chain': [], 'group': []}
    for child in element:
        tag = _local_name(child.tag)
        if tag == 'chain':
            parts['chain'].append((child.get('base_link', ''), child.get('tip_link', '')))
        elif tag in parts and child.get('name'):
            parts[tag].append(child.get('name'))
    model.groups[name] = Group(name, tuple(parts['link']), tuple(parts['joint']),
                               tuple(parts['chain']), tuple(parts['group']))


def _padding(model: SrdfModel, element):
    link = element.get('link', '')
    try:
        padding = float(parse_numbers(element.get('padding', ''), 'padding', 1)[0])
    except ValueError as error:
        model.errors.append(ModelError(f'link_padding {link!r}', str(error)))
        return
    if link:
        model.link_padding[link] = padding


def _local_name(tag) -> str:
    return tag.rsplit('}', 1)[-1] if isinstance(tag, str) else ''
