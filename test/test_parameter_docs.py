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

"""The parameter specification is the one source of the YAML file, the README table and routing."""

import pathlib
import sys

from gjk_ros.ros.params import PARAMETERS, TEMPLATED_PARAMETERS
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
import parameter_docs  # noqa: E402, I100

# The components DistanceNode.components routes parameter changes to.
COMPONENTS = {'clock', 'pacing', 'frames', 'sources', 'ingestion', 'decomposition', 'layout',
              'outputs', 'lifecycle', 'sweeping'}


def test_yaml_file_is_generated_from_the_specification():
    assert parameter_docs.YAML_PATH.read_text() == parameter_docs.yaml_text(PARAMETERS), \
        'config/gjk_distance.yaml is out of date: run python tools/parameter_docs.py'


def test_every_templated_parameter_is_documented():
    table = parameter_docs.table_text(PARAMETERS)
    example = parameter_docs.yaml_text(PARAMETERS)
    for placeholder, specs in TEMPLATED_PARAMETERS:
        _, name, _ = parameter_docs.EXAMPLES[placeholder]
        for spec in specs:
            assert '| `%s.%s` |' % (placeholder, spec.name) in table
            assert '    #   %s: ' % spec.name in example.split('    # %s:\n' % name)[1]


def test_readme_table_is_generated_from_the_specification():
    readme = parameter_docs.README_PATH.read_text()
    wanted = parameter_docs.readme_with_table(readme, parameter_docs.table_text(PARAMETERS))
    assert readme == wanted, 'README.md parameter table is out of date: ' \
        'run python tools/parameter_docs.py'


def test_yaml_file_loads_to_the_defaults():
    yaml = pytest.importorskip('yaml')
    values = yaml.safe_load(parameter_docs.YAML_PATH.read_text())['/**']['ros__parameters']
    assert list(values) == [spec.name for spec in PARAMETERS]
    for spec in PARAMETERS:
        expected = list(spec.default) if spec.kind == 'string_array' else spec.default
        assert values[spec.name] == expected, spec.name


ALL_SPECS = PARAMETERS + tuple(spec for _, specs in TEMPLATED_PARAMETERS for spec in specs)


@pytest.mark.parametrize('spec', ALL_SPECS, ids=[spec.name for spec in ALL_SPECS])
def test_every_parameter_reconfigures_a_known_component(spec):
    assert spec.reconfigures, '%s names no component to reconfigure' % spec.name
    assert set(spec.reconfigures) <= COMPONENTS, spec.name


def test_the_node_routes_to_exactly_these_components():
    rclpy = pytest.importorskip('rclpy')
    pytest.importorskip('tf2_msgs')
    from gjk_ros.ros.node import DistanceNode
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = DistanceNode(context=context)
    try:
        assert set(node.components) == COMPONENTS
    finally:
        node.close()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
