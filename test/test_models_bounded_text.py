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
Bounds of parameter and scene text are ours: the same message whatever parser does the parsing.

Each hostile text is refused with this package's message by the lexical scan alone, with
libyaml (CSafeLoader, which has a nesting limit of its own since 0.2.5), with the pure-Python
loader (which has none), without PyYAML (the JSON path), and with a parser that refuses the
text first in its own words.
"""

import json
import sys

from gjk_ros.models.bounded_text import load_bounded, nesting_depth, TextLimits
from hypothesis import given, settings, strategies as st
import pytest

yaml = pytest.importorskip('yaml')

LIMITS = TextLimits(max_bytes=1024 * 1024, max_nesting=32, max_nodes=100_000)

HOSTILE = {
    'brackets': '[' * 5000 + '1' + ']' * 5000,
    'braces': '{a: ' * 5000 + '1' + '}' * 5000,
    'indentation': ''.join(' ' * depth + '- \n' for depth in range(1100)),
    'mappings': ''.join(' ' * depth + 'k:\n' for depth in range(1100)),
    'compact': '- ' * 2000 + 'x\n',
    'block then flow': 'a:\n  b:\n    c: ' + '[' * 40 + ']' * 40 + '\n',
    'multi-line flow': '[\n' * 40 + ']\n' * 40,
    'sequence at its key column': ''.join('  ' * d + 'k:\n' + '  ' * d + '- ' for d in range(40)),
}
WORDS = {name: 'nested deeper than 32' for name in HOSTILE}
HOSTILE['aliases'] = 'a: &x [1]\nb: *x\n'
WORDS['aliases'] = 'aliases'
HOSTILE['nodes'] = '[' + ', '.join(['1'] * 200_000) + ']'
WORDS['nodes'] = 'more than 100000 values'
HOSTILE['size'] = ' ' * (1024 * 1024 + 1)
WORDS['size'] = 'more than the limit'


def _loaders():
    loaders = [('pure', yaml.SafeLoader)]
    if hasattr(yaml, 'CSafeLoader'):
        loaders.append(('libyaml', yaml.CSafeLoader))
    return loaders


@pytest.mark.parametrize('loader', [loader for _, loader in _loaders()],
                         ids=[name for name, _ in _loaders()])
@pytest.mark.parametrize('name', sorted(HOSTILE))
def test_hostile_text_gets_our_message_with_either_yaml_loader(name, loader, monkeypatch):
    monkeypatch.delattr(yaml, 'CSafeLoader', raising=False)
    monkeypatch.setattr(yaml, 'SafeLoader', loader)
    with pytest.raises(ValueError, match=WORDS[name]):
        load_bounded(HOSTILE[name], LIMITS)


@pytest.mark.parametrize('name', sorted(n for n in HOSTILE if WORDS[n].startswith('nested')))
def test_nesting_is_refused_before_any_parser_runs(name, monkeypatch):
    """A parser that refuses deep text in its own words first never gets to speak."""
    def refuse(*args, **kwargs):
        raise yaml.YAMLError('exceeded maximum nesting depth')

    monkeypatch.setattr(yaml, 'parse', refuse)
    monkeypatch.setattr(yaml, 'load', refuse)
    with pytest.raises(ValueError, match='nested deeper than 32 \\(line \\d+, column \\d+\\)'):
        load_bounded(HOSTILE[name], LIMITS)


@pytest.mark.parametrize('name', ['brackets', 'braces', 'size'])
def test_without_pyyaml_the_json_path_has_the_same_messages(name, monkeypatch):
    monkeypatch.setitem(sys.modules, 'yaml', None)   # import yaml raises ImportError
    text = HOSTILE[name].replace('{a: ', '{"a": ')
    with pytest.raises(ValueError, match=WORDS[name]):
        load_bounded(text, LIMITS)


def test_errors_name_the_position_never_the_text():
    secret = 'SECRET_VALUE_123'
    for text in ('[%s, {{ : ]' % secret, '{"%s": [1, 2' % secret, 'a: 1\n b: %s: 2' % secret):
        with pytest.raises(ValueError) as caught:
            load_bounded(text, LIMITS)
        assert 'line' in str(caught.value) and secret not in str(caught.value)


def test_a_value_the_constructor_refuses_is_named_by_kind_not_content():
    text = '[%s]' % ('9' * 5000)   # int() refuses more than 4,300 digits
    try:
        load_bounded(text, LIMITS)
    except ValueError as error:
        assert '9999' not in str(error)


def test_blank_text_is_no_document_and_still_bounded():
    assert load_bounded('  \n# only a comment\n', LIMITS) is None
    with pytest.raises(ValueError, match='more than the limit of 8'):
        load_bounded(' ' * 9, TextLimits(8, 32, 100))


def test_scalars_that_look_like_structure_are_not_counted():
    text = ("- a[[[[1]]]]\n- it's [not] a list\n- '[[[['\n- \"{{{{\"\n- x # [[[[\n"
            '- |\n  [[[[[[\n  {{{{{{\n- k: v\n')
    assert nesting_depth(text)[0] == 2
    assert load_bounded(text, TextLimits(1000, 2, 100))[0] == 'a[[[[1]]]]'


def _depth(document):
    if isinstance(document, list):
        return 1 + max([_depth(item) for item in document] or [0])
    if isinstance(document, dict):
        return 1 + max([_depth(item) for item in document.values()] or [0])
    return 0


_SCALARS = st.one_of(st.integers(-5, 5), st.none(), st.booleans(),
                     st.sampled_from(['a[1]', "it's", 'x: y', '#c', '- z', '{', '|', '? q',
                                      'a\nb[', '"q"', "'", ' lead', 'k:', '[x]', '- - x',
                                      'a # b', '', ': v']),
                     st.text(max_size=6))
_KEYS = st.one_of(st.sampled_from(['k0', 'k1', 'k: 2', '- k', '[k]', '? k']), st.text(max_size=4))
_DOCUMENTS = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(_DOCUMENTS, st.sampled_from(['json', 'block', 'flow', 'auto', 'indent4', 'narrow']))
def test_lexical_depth_is_the_parsed_depth(document, style):
    """On what JSON and PyYAML's emitter write, the scan's depth is the document's, exactly."""
    text = {
        'json': lambda: json.dumps(document),
        'block': lambda: yaml.safe_dump(document, default_flow_style=False),
        'flow': lambda: yaml.safe_dump(document, default_flow_style=True),
        'auto': lambda: yaml.safe_dump(document),
        'indent4': lambda: yaml.safe_dump(document, default_flow_style=False, indent=4),
        'narrow': lambda: yaml.safe_dump(document, default_flow_style=True, width=12),
    }[style]()
    assert nesting_depth(text)[0] == _depth(yaml.safe_load(text))
