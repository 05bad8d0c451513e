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
The shape of the node, guarded: so the next input or output cannot quietly undo it.

- ``DistanceNode`` stays small (under 25 methods, ``node.py`` under 400 lines): what configure
  makes and the cycle through it live in ``cycle.Cycle``, each component in its own module.
- A ``Source`` has at most six hooks, and the cycle calls exactly one of them (``collect``).
- No positional indexing of keys anywhere in ``gjk_ros/ros`` (a piece is keyed by a
  ``PieceKey``, a job by its type, a problem by a named tuple).
- One measured-status table (the core's ``MEASURED``), and nothing in the node reads the
  core's private pair keys.
- ``docs/architecture.md`` names modules that exist and the hooks the base class has.

All by reading the sources: nothing is imported that needs ROS.
"""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROS = ROOT / 'gjk_ros' / 'ros'
NODE = ROS / 'node.py'
BASE = ROS / 'inputs' / 'sources' / 'base.py'
CYCLE = ROS / 'compute' / 'cycle.py'
ARCHITECTURE = ROOT / 'docs' / 'architecture.md'


def _class(path, name):
    tree = ast.parse(path.read_text())
    return next(node for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef) and node.name == name)


def _methods(cls):
    return [item.name for item in cls.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _source_hooks():
    tree = ast.parse(BASE.read_text())
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign) and
                any(getattr(target, 'id', '') == 'SOURCE_HOOKS' for target in node.targets)]
    return ast.literal_eval(value)


def test_the_node_stays_small():
    methods = _methods(_class(NODE, 'DistanceNode'))
    assert len(methods) < 25, methods
    assert len(NODE.read_text().splitlines()) < 400


def test_a_source_has_at_most_six_hooks_and_the_base_defines_exactly_them():
    hooks = _source_hooks()
    assert len(hooks) <= 6 and 'collect' in hooks
    public = [name for name in _methods(_class(BASE, 'Source')) if not name.startswith('_')]
    assert sorted(public) == sorted(hooks)


def test_the_cycle_calls_one_hook_of_each_source():
    """Per cycle a source is asked once, ``collect``; nothing calls a source back."""
    cycle = _class(CYCLE, 'Cycle')
    (run,) = [item for item in cycle.body if getattr(item, 'name', '') == 'run']
    called = {node.func.attr for node in ast.walk(run) if isinstance(node, ast.Call) and
              isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
              and node.func.value.id == 'source'}
    assert called == {'collect'}
    for path in ROS.rglob('*.py'):
        if path != CYCLE and 'sources' not in path.parts:
            assert not re.search(r'\.collect\(', path.read_text()), path


# A subscript of something named *key* (or a job's, a result's key) by a number or a slice.
_POSITIONAL_KEY = re.compile(r'\b\w*key\w*\s*\[\s*-?\d*\s*(:|\])')


def test_no_positional_key_indexing_in_the_node():
    found = []
    for path in sorted(ROS.rglob('*.py')):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _POSITIONAL_KEY.search(line):
                found.append('%s:%d: %s' % (path.relative_to(ROOT), number, line.strip()))
    assert not found, '\n'.join(found)


def test_one_measured_status_table_and_no_private_core_keys():
    pairs = (ROS / 'compute' / 'pairs.py').read_text()
    assert re.search(r'from gjk_ros\.core\.bodypairs import .*\bMEASURED\b', pairs)
    for path in ROS.rglob('*.py'):
        text = path.read_text()
        assert not re.search(r'status_table\(\s*\[\s*Status\.', text), path
        assert '._keys' not in text, path


def _documented_modules():
    """Return the module paths docs/architecture.md names (``name.py``, ``folder/name.py``)."""
    return set(re.findall(r'`((?:[a-z_]+/)*[a-z_]+\.py)`', ARCHITECTURE.read_text()))


def test_the_architecture_document_names_modules_that_exist():
    modules = _documented_modules()
    assert len(modules) >= 10
    missing = [module for module in modules
               if not (ROS / module).exists() and not (ROOT / module).exists()]
    assert not missing, missing


def test_the_architecture_document_lists_the_hooks_of_the_base_class():
    text = ARCHITECTURE.read_text()
    table = re.findall(r'^\| `(\w+)\(', text, flags=re.MULTILINE)
    assert sorted(set(table)) == sorted(_source_hooks())
