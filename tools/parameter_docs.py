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
Write the node's parameter documentation from its one specification.

``gjk_ros/ros/params/catalogue.py`` (``PARAMETERS``) holds each parameter's name, type, default,
range, description and the components it reconfigures; the node declares its parameters from it (so
``ros2 param describe`` shows the same text). This script writes the two human copies of it:

- ``config/gjk_distance.yaml``: every parameter with its default, its description as comment;
- the parameter table of ``README.md``, between ``<!-- parameters:begin -->`` and
  ``<!-- parameters:end -->``.

Each observation source's own parameters (``OBSERVATION_SOURCE_PARAMETERS``, declared as
``<name>.<parameter>`` for each name of ``observation_sources``) and each separation group's
(``SEPARATION_GROUP_PARAMETERS``, ``<group>.<parameter>`` for each name of ``separation_groups``)
follow (``TEMPLATED_PARAMETERS``): in the YAML file as commented example blocks, in the table as
``<name>.<parameter>`` and ``<group>.<parameter>`` rows.

test/test_parameter_docs.py fails when either is out of date.

Usage: python tools/parameter_docs.py [--check]
"""

import math
import pathlib
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
YAML_PATH = ROOT / 'config' / 'gjk_distance.yaml'
README_PATH = ROOT / 'README.md'
BEGIN, END = '<!-- parameters:begin -->', '<!-- parameters:end -->'
WIDTH = 99

YAML_HEADER = """\
# Parameters of the gjk_distance node (gjk_ros), with their defaults. Generated from
# gjk_ros/ros/params/catalogue.py by tools/parameter_docs.py: edit the descriptions there.
# Use: ros2 launch gjk_ros gjk_distance.launch.py params_file:=my_copy.yaml
#  or: gjk_distance_node --ros-args --params-file config/gjk_distance.yaml
# Every parameter can also be changed at run time (ros2 param set); bad values are rejected
# with a reason.
/**:
  ros__parameters:
"""


def _specs():
    sys.path.insert(0, str(ROOT))
    from gjk_ros.ros.params import PARAMETERS
    return PARAMETERS


def _templated():
    sys.path.insert(0, str(ROOT))
    from gjk_ros.ros.params import TEMPLATED_PARAMETERS
    return TEMPLATED_PARAMETERS


# Per placeholder of TEMPLATED_PARAMETERS: the example block's heading, its name and the values
# it shows other than the defaults.
EXAMPLES = {
    '<name>': ("""\
    # Each name in observation_sources is configured by the parameters below, declared under
    # that name when the node starts (Nav2's layout), e.g. for observation_sources: [camera]:
""", 'camera', {'topic': '/camera/depth/points'}),
    '<group>': ("""\
    # Each name in separation_groups is configured by the parameters below, declared under
    # that name when it joins the list (at start-up or at run time), e.g. for
    # separation_groups: [people]:
""", 'people', {'obstacles': ['person_*']}),
}


def yaml_value(value):
    """Return ``value`` as YAML (the spelling ros2's parameter files use)."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        if math.isnan(value):
            return '.nan'
        if math.isinf(value):
            return '.inf' if value > 0 else '-.inf'
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "''" if not value else value
    return '[%s]' % ', '.join("'%s'" % item for item in value)


def yaml_text(specs):
    """Return the whole ``config/gjk_distance.yaml``."""
    indent = '    '
    blocks = []
    for spec in specs:
        lines = textwrap.wrap(spec.description, WIDTH - len(indent) - 2)
        comment = ''.join('%s# %s\n' % (indent, line) for line in lines)
        blocks.append('%s%s%s: %s\n' % (comment, indent, spec.name, yaml_value(spec.default)))
    examples = [example_text(placeholder, specs) for placeholder, specs in _templated()]
    return YAML_HEADER + '\n'.join(blocks) + '\n' + '\n'.join(examples)


def example_text(placeholder, specs):
    """Return the commented example block (YAML) of the parameters under each ``placeholder``."""
    heading, name, values = EXAMPLES[placeholder]
    indent = '    #   '
    lines = [heading, '    # %s:\n' % name]
    for spec in specs:
        for line in textwrap.wrap(spec.description, WIDTH - len(indent) - 2,
                                  break_on_hyphens=False):
            lines.append('%s# %s\n' % (indent, line))
        value = yaml_value(values.get(spec.name, spec.default))
        lines.append('%s%s: %s\n' % (indent, spec.name, value))
    return ''.join(lines)


def _range(spec):
    if spec.kind != 'double' or (spec.low == -math.inf and spec.high == math.inf):
        return ''
    low = '(%g' % spec.low if spec.positive else '[%g' % spec.low
    high = 'inf)' if spec.high == math.inf else '%g]' % spec.high
    return ' %s, %s' % (low, high)


def table_text(specs):
    """Return the README's parameter table (markdown)."""
    kinds = {'string_array': 'string[]', 'double_array': 'double[]'}
    rows = ['| name | type | default | meaning |', '| --- | --- | --- | --- |']
    templated = [(spec, '%s.%s' % (placeholder, spec.name))
                 for placeholder, specs in _templated() for spec in specs]
    for spec, name in [(spec, spec.name) for spec in specs] + templated:
        description = spec.description.replace('|', '\\|')
        rows.append('| `%s` | %s%s | `%s` | %s |' % (
            name, kinds.get(spec.kind, spec.kind), _range(spec),
            yaml_value(spec.default), description))
    return '\n'.join(rows) + '\n'


def readme_with_table(readme, table):
    """Return ``readme`` with the text between the markers replaced by ``table``."""
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[:start] + '\n' + table + readme[end:]


def main(argv):
    """Write (or with --check, compare) both files; exit status 1 when --check finds drift."""
    specs = _specs()
    wanted = {YAML_PATH: yaml_text(specs),
              README_PATH: readme_with_table(README_PATH.read_text(), table_text(specs))}
    stale = [path for path, text in wanted.items() if path.read_text() != text]
    if '--check' in argv:
        for path in stale:
            print('%s is out of date: run python tools/parameter_docs.py' % path.name)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
