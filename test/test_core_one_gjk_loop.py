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
One GJK loop in the package: every question about a pair (distance, within, beyond) runs gjk.gjk.

A second copy of the loop drifts: its stopping rules stop matching the distance the queries
report, and a collision check then disagrees with the distance it is meant to bound. The loop is
recognised by what makes it GJK: a loop that reduces a simplex (``solve_simplex``) and asks
for a new support point in the same body.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / 'gjk_ros'
# The distance loop, and EPA's witness refinement on a smooth facet: the facet point nearest a
# foot point, found with tilted supports (a different problem, with its own stopping rule).
_LOOP_OWNERS = {('core/gjk.py', 'gjk'), ('core/epa.py', 'epa_cover_foot')}


def _gjk_loops(package=PACKAGE):
    found = set()
    for path in package.rglob('*.py'):
        tree = ast.parse(path.read_text(), filename=str(path))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for loop in ast.walk(function):
                if isinstance(loop, (ast.While, ast.For)) and _calls(loop, 'solve_simplex') \
                        and _calls(loop, 'minkowski_support'):
                    found.add((path.relative_to(package).as_posix(), function.name))
    return found


def _calls(node, name):
    return any(isinstance(call, ast.Call) and getattr(call.func, 'id', None) == name
               for call in ast.walk(node))


def test_the_package_has_one_gjk_loop():
    assert _gjk_loops() == _LOOP_OWNERS


def test_the_detector_finds_a_copy_of_the_loop(tmp_path):
    """A second loop written like the first is seen (the check above can fail)."""
    copy = tmp_path / 'gjk_ros' / 'core'
    copy.mkdir(parents=True)
    source = (PACKAGE / 'core' / 'gjk.py').read_text().replace('def gjk(', 'def gjk_copy(')
    for name in ('gjk.py', 'epa.py'):
        (copy / name).write_text((PACKAGE / 'core' / name).read_text())
    (copy / 'checks.py').write_text(source)
    assert _gjk_loops(tmp_path / 'gjk_ros') == _LOOP_OWNERS | {('core/checks.py', 'gjk_copy')}
