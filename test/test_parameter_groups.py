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
The separation groups' ``<group>.*`` parameters go the observation sources' way.

``NodeParameters`` on an rclpy node in this process (no other node, no executor): it declares
them from the parameter file at start-up and when a name joins ``separation_groups`` at run
time, validates a change with the reason naming the parameter, routes it to the ``outputs``
component, and keeps a refused file value as the reason its group is unknown.
"""

import math

from gjk_ros.ros.params.separation import SEPARATION_GROUP_PARAMETERS
import pytest

rclpy = pytest.importorskip('rclpy')

from rclpy.parameter import Parameter  # noqa: E402, I100

TERMS = {'reaction_time': 0.1, 'stopping_time': 0.2, 'stopping_distance': 0.05,
         'intrusion_distance': 0.1, 'human_uncertainty': 0.02, 'robot_uncertainty': 0.01}


class Parameters:
    """A node with ``NodeParameters``, recording each reconfiguration it asks for."""

    def __init__(self, context, overrides):
        from gjk_ros.ros.node_parameters import NodeParameters
        self.node = rclpy.node.Node(
            'group_parameters', context=context,
            parameter_overrides=[Parameter(name, value=value)
                                 for name, value in overrides.items()])
        self.calls = []
        self.parameters = NodeParameters(
            self.node, lambda config, components: self.calls.append(set(components)))

    def group(self, name):
        return {group.name: group for group in self.parameters.config.separations}[name]

    def value(self, name):
        return self.node.get_parameter(name).value

    def set_each(self, **values):
        """Set parameters one call each; return the reasons of the refused ones."""
        results = [self.node.set_parameters([Parameter(name, value=value)])[0]
                   for name, value in values.items()]
        return [result.reason for result in results if not result.successful]


@pytest.fixture
def parameters(rclpy_context):
    overrides = {'separation_groups': ['people', 'fixtures'], 'people.obstacles': ['person_*'],
                 **{'people.' + name: value for name, value in TERMS.items()},
                 # Refused: out of range, and not a number.
                 'fixtures.human_speed': -1.0, 'fixtures.reaction_time': 'soon',
                 # Declared only when `late` joins the groups, then refused.
                 'late.stopping_time': 1000.0, 'late.reaction_time': 0.3}
    made = Parameters(rclpy_context, overrides)
    try:
        yield made
    finally:
        made.node.destroy_node()


def test_the_file_declares_each_group_with_descriptors(parameters):
    people = parameters.group('people')
    assert people.problem == '' and people.obstacles == ('person_*',)
    assert people.settings.reaction_time == 0.1 and people.settings.human_speed == 1.6
    assert not people.settings.missing()
    for spec in SEPARATION_GROUP_PARAMETERS:
        for group in ('people', 'fixtures'):
            descriptor = parameters.node.describe_parameter('%s.%s' % (group, spec.name))
            assert descriptor.description == spec.description
            assert descriptor.dynamic_typing, 'a rated term takes .nan and integers'
    assert not parameters.node.has_parameter('late.reaction_time')


def test_a_refused_file_value_leaves_its_group_unknown_naming_it(parameters):
    # The value itself is the default, never the file's; the group says why it is unknown.
    assert parameters.value('fixtures.human_speed') == 1.6
    assert math.isnan(parameters.value('fixtures.reaction_time'))
    fixtures = parameters.group('fixtures')
    assert fixtures.problem.startswith('fixtures.human_speed: must be in [0, 100]')
    # Setting the parameter clears its refusal; the other one still names itself.
    assert parameters.set_each(**{'fixtures.human_speed': 1.6}) == []
    assert parameters.group('fixtures').problem.startswith('fixtures.reaction_time: ')
    assert parameters.set_each(**{'fixtures.reaction_time': 0.1}) == []
    assert parameters.group('fixtures').problem == ''


def test_a_group_named_at_run_time_is_declared_and_routed(parameters):
    assert parameters.set_each(separation_groups=['people', 'fixtures', 'late']) == []
    # One reconfiguration for the change, not one per declared parameter.
    assert parameters.calls == [{'outputs'}]
    assert parameters.value('late.reaction_time') == 0.3
    late = parameters.group('late')
    assert late.problem.startswith('late.stopping_time: ')
    assert math.isnan(parameters.value('late.stopping_time'))
    assert parameters.set_each(**{'late.stopping_time': 0.25}) == []
    assert parameters.calls[-1] == {'outputs'}
    late = parameters.group('late')
    assert late.problem == '' and late.settings.stopping_time == 0.25
    assert late.settings.missing() == ['stopping_distance', 'intrusion_distance',
                                       'human_uncertainty', 'robot_uncertainty']
    # Dropped and named again, the group keeps its parameters.
    assert parameters.set_each(separation_groups=['people']) == []
    assert [group.name for group in parameters.parameters.config.separations] == ['people']
    assert parameters.set_each(separation_groups=['people', 'late']) == []
    assert parameters.group('late').settings.stopping_time == 0.25


def test_run_time_values_are_validated_naming_the_parameter(parameters):
    calls = len(parameters.calls)
    assert parameters.set_each(**{'people.reaction_time': -1.0}) == [
        'people.reaction_time: must be in [0, 60], got -1.0']
    assert parameters.set_each(**{'people.obstacles': ['']})[0].startswith('people.obstacles: ')
    assert parameters.set_each(**{'people.stopping_table_speeds': [0.0] * 101}) == [
        'people.stopping_table_speeds: at most 100 rows, got 101']
    # Deleting a dynamically typed parameter would undeclare it: refused.
    refused = parameters.node.set_parameters([Parameter('people.reaction_time')])[0]
    assert not refused.successful and 'cannot be deleted' in refused.reason
    assert parameters.set_each(separation_groups=['g%d' % index for index in range(101)]) == [
        'separation_groups: at most 100 groups, got 101']
    assert len(parameters.calls) == calls, 'a refused value reconfigures nothing'
    assert parameters.value('people.reaction_time') == 0.1
    # An integer is a number; .nan is "unset".
    assert parameters.set_each(**{'people.human_speed': 2, 'people.reaction_time': math.nan}) == []
    people = parameters.group('people')
    assert people.settings.human_speed == 2.0 and people.settings.missing() == [
        'reaction_time']
