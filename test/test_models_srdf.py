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

"""The SRDF reader: disabled collisions, groups, padding, and what it refuses."""

from gjk_ros.models import ModelError
from gjk_ros.models.srdf import MAX_SRDF_BYTES, parse_srdf
import pytest

SRDF = """<?xml version="1.0"?>
<robot name="arm">
  <group name="manipulator">
    <chain base_link="base" tip_link="tool"/>
    <joint name="shoulder"/>
    <link name="tool"/>
  </group>
  <group_state name="home" group="manipulator"><joint name="shoulder" value="0"/></group_state>
  <disable_collisions link1="base" link2="upper" reason="Never"/>
  <disable_collisions link1="tool" link2="upper" reason="Adjacent"/>
  <disable_collisions link1="tool"/>
  <link_padding link="tool" padding="0.02"/>
  <link_padding link="base" padding="lots"/>
</robot>
"""


def test_reads_disabled_pairs_in_either_order():
    model = parse_srdf(SRDF)
    assert model.robot_name == 'arm'
    assert model.is_disabled('upper', 'base') and model.is_disabled('base', 'upper')
    assert model.disabled_collisions[frozenset(('tool', 'upper'))] == 'Adjacent'
    assert not model.is_disabled('base', 'tool')
    assert len(model.disabled_collisions) == 2


def test_reads_groups_and_padding_and_reports_bad_elements():
    model = parse_srdf(SRDF)
    group = model.groups['manipulator']
    assert group.chains == (('base', 'tool'),)
    assert group.joints == ('shoulder',) and group.links == ('tool',)
    assert model.link_padding == {'tool': 0.02}
    assert len(model.errors) == 2
    assert any('link1 and link2' in str(error) for error in model.errors)


@pytest.mark.parametrize('text, message', [
    ('', 'empty'),
    ('<robot name="a"><disable_collisions', 'malformed'),
    ('<model/>', 'expected <robot>'),
    ('<!DOCTYPE r [<!ENTITY a "aaaa">]><robot>&a;</robot>', 'entities'),
    ('<robot>' + ' ' * MAX_SRDF_BYTES + '</robot>', 'larger'),
])
def test_rejects_bad_documents(text, message):
    with pytest.raises(ModelError, match=message):
        parse_srdf(text)


# base -j1-> upper -j2-> tool -j3-> finger, and base -j4-> camera.
JOINTS = [('j1', 'base', 'upper'), ('j2', 'upper', 'tool'), ('j3', 'tool', 'finger'),
          ('j4', 'base', 'camera')]
GROUPS_SRDF = """<robot name="arm">
  <group name="arm"><chain base_link="base" tip_link="tool"/></group>
  <group name="hand"><link name="finger"/><joint name="j4"/></group>
  <group name="arm_hand"><group name="arm"/><group name="hand"/></group>
  <group name="loop"><group name="loop"/><link name="base"/></group>
</robot>
"""


def test_group_links_and_joints_as_moveit_reads_a_group():
    """Chains from tip to base, links' parent joints, joints' child links, subgroups once."""
    from gjk_ros.models.srdf import group_joints, group_links
    groups = parse_srdf(GROUPS_SRDF).groups
    assert group_joints(groups, JOINTS, 'arm') == ['j2', 'j1']
    assert group_links(groups, JOINTS, 'arm') == {'upper', 'tool'}  # the base does not move
    assert sorted(group_joints(groups, JOINTS, 'hand')) == ['j3', 'j4']
    assert group_links(groups, JOINTS, 'hand') == {'finger', 'camera'}
    assert group_links(groups, JOINTS, 'arm_hand') == {'upper', 'tool', 'finger', 'camera'}
    assert group_links(groups, JOINTS, 'loop') == {'base'}  # a listed root link counts
    with pytest.raises(KeyError):
        group_links(groups, JOINTS, 'legs')
