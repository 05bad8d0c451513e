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
YAML or JSON text parsed under bounds that are ours, whatever the parser's version.

Hostile text is refused by this module's own checks, with this module's own messages, before a
parser sees it, so that what a user reads does not change when PyYAML or libyaml changes its
limits or wording (libyaml 0.2.5 stops at 1,000 levels with its own message; older versions
recursed until the stack ran out):

1. size, in UTF-8 bytes;
2. nesting, by a lexical scan (:func:`nesting_depth`): flow brackets outside quoted scalars and
   comments, and block collections by their indentation and compact indicators ('- - x');
3. then, for YAML, the parser's event stream: exact nesting, the node count and aliases, in one
   streaming pass that stops at the first excess, before any document is built.

Messages give the problem and its line and column, never the text.
"""

import json
import re

__all__ = ['TextLimits', 'load_bounded', 'nesting_depth']


class TextLimits:
    """Bounds of one text: bytes, nesting depth and node count."""

    def __init__(self, max_bytes, max_nesting, max_nodes):
        self.max_bytes = int(max_bytes)
        self.max_nesting = int(max_nesting)
        self.max_nodes = int(max_nodes)


# A quote or bracket starts a node only where a node may start: at the start of a line's content,
# after a block indicator ('- ', '? ', 'key: ') or after flow punctuation ('a[1]' and "it's" are
# plain scalars in YAML 1.2, section 7.3.3). Everything else in a line is scalar text.
_FLOW_NODE_START = frozenset('[{,:?')
_BLOCK_NODE_START = re.compile(r'(?:(?:^|[ \t])[-?]|:)$')
_SIGNIFICANT = re.compile(r'[\[\]{}"\'#]')
_DOUBLE_QUOTED_END = re.compile(r'(?:[^"\\]|\\.)*"')
_SINGLE_QUOTED_END = re.compile(r"(?:[^']|'')*'")
_COMPACT_INDICATOR = re.compile(r'[-?:](?:[ \t]+|$)')
# '- ' is a sequence entry; '? ' and ': ' are the key and value of a complex mapping entry.
_INDICATOR_KIND = {'-': 'seq', '?': 'map', ':': 'map'}
_MAPPING_KEY = re.compile(r'(?:[^\s#\'"\[\]{}][^#]*?|"(?:[^"\\]|\\.)*"|\'(?:[^\']|\'\')*\')'
                          r'[ \t]*:(?:[ \t]|$)')
_BLOCK_SCALAR = re.compile(r'(?:^|[ \t])[|>][-+0-9]*[ \t]*(?:#.*)?$')


def nesting_depth(text, stop_above=None):
    """
    Return an upper bound of the nesting depth of YAML (or JSON) ``text``, with its position.

    Exact for JSON and for YAML written as block collections and flow collections; never lower
    than the depth a YAML parser would build, so that a text under the bound is under the
    parser's depth too. A scalar that a parser would read as text is never counted.

    Parameters
    ----------
    text : str
        The whole text, any size (the caller bounds the size).
    stop_above : int, optional
        Return as soon as the depth exceeds this (the scan is linear; this only makes it stop
        early on hostile text).

    Returns
    -------
    (int, int, int)
        Depth, and the 1-based line and column where it is first reached.

    """
    scan = _DepthScan(stop_above)
    for number, line in enumerate(text.split('\n'), start=1):
        if scan.line(number, line):
            break
    return scan.deepest, scan.where[0], scan.where[1]


class _DepthScan:
    """State of :func:`nesting_depth` from one line to the next."""

    def __init__(self, stop_above):
        self.stop_above = stop_above
        self.blocks = []            # open block collections: (column, 'seq' | 'map')
        self.flow = 0               # open flow collections
        self.quote = None           # the quote of a quoted scalar spanning lines, if any
        self.literal_above = None   # block-scalar lines are deeper than this column
        self.deepest, self.where = 0, (1, 1)

    def line(self, number, line):
        """Account for one line; return True when the depth passed ``stop_above``."""
        start = 0
        if self.quote is not None:
            start = self._close_quote(line, 0)
            if start is None:
                return False
        elif self.flow == 0:
            start = self._block_line(number, line)
            if start is None:
                return False
        return self._flow_text(number, line, start)

    def _block_line(self, number, line):
        """Block structure of a line at flow level 0; the column its flow scan starts at."""
        content = line.lstrip(' ')
        column = len(line) - len(content)
        if self.literal_above is not None:
            if not content.strip() or column > self.literal_above:
                return None
            self.literal_above = None
        if not content.strip() or content.startswith('#') or content.startswith('%'):
            return None
        if content.startswith(('---', '...')) and content[3:4] in ('', ' ', '\t'):
            self.blocks = []
            return column + 3
        while self.blocks and self.blocks[-1][0] > column:
            self.blocks.pop()
        self._open(column, self._kind(content))
        position = column
        indicator = _COMPACT_INDICATOR.match(line, position)
        while indicator:
            position = indicator.end()
            following = _COMPACT_INDICATOR.match(line, position)
            if following or _MAPPING_KEY.match(line, position):
                self._open(position, _INDICATOR_KIND[following.group()[0]] if following else 'map')
            indicator = following
        self._reach(len(self.blocks), number, column + 1)
        if _BLOCK_SCALAR.search(line):
            self.literal_above = column
        return position

    def _kind(self, content):
        indicator = _COMPACT_INDICATOR.match(content)
        if indicator:
            return _INDICATOR_KIND[indicator.group()[0]]
        return 'map' if _MAPPING_KEY.match(content) else None

    def _open(self, column, kind):
        """Enter a line's entry at ``column``: a sibling, a new collection or a map's list."""
        if kind is None:
            return
        top = self.blocks[-1] if self.blocks else None
        if top is not None and top[0] == column:
            if top[1] == kind:
                return
            if top[1] == 'seq':   # back from a sequence written at its mapping's column
                self.blocks.pop()
                if self.blocks and self.blocks[-1] == (column, kind):
                    return
        self.blocks.append((column, kind))

    def _flow_text(self, number, line, position):
        """Brackets and quotes from ``position`` on; True when the depth passed the stop."""
        while True:
            match = _SIGNIFICANT.search(line, position)
            if match is None:
                return False
            symbol, position = match.group(), match.end()
            at_node_start = self._node_start(line[:match.start()].rstrip(' \t'))
            if symbol == '#':
                if match.start() == 0 or line[match.start() - 1] in ' \t':
                    return False
            elif symbol in '"\'':
                if at_node_start:
                    self.quote = symbol
                    position = self._close_quote(line, position)
                    if position is None:
                        return False
            elif symbol in '[{':
                if at_node_start or self.flow:
                    self.flow += 1
                    depth = len(self.blocks) + self.flow
                    if self._reach(depth, number, match.start() + 1):
                        return True
            elif self.flow:
                self.flow -= 1

    def _node_start(self, before):
        """Whether a quote or bracket after ``before`` (on its line) starts a node."""
        if not before:
            return True
        if self.flow:
            return before[-1] in _FLOW_NODE_START
        return _BLOCK_NODE_START.search(before) is not None

    def _close_quote(self, line, position):
        """Position after the closing quote, or None when the scalar goes on to the next line."""
        end = (_DOUBLE_QUOTED_END if self.quote == '"' else _SINGLE_QUOTED_END).match(
            line, position)
        if end is None:
            return None
        self.quote = None
        return end.end()

    def _reach(self, depth, number, column):
        if depth > self.deepest:
            self.deepest, self.where = depth, (number, column)
        return self.stop_above is not None and depth > self.stop_above


def load_bounded(text, limits):
    """
    Parse YAML (JSON when PyYAML is missing: YAML is a superset of JSON) within ``limits``.

    Parameters
    ----------
    text : str
        The text, as received (its size is the first bound checked).
    limits : TextLimits
        The bounds to enforce.

    Returns
    -------
    object
        The document (lists, dicts, scalars); None for blank text.

    Raises
    ------
    ValueError
        Naming the bound that was passed, or the syntax error, with a line and column.

    """
    size = len(text.encode('utf-8', 'replace'))
    if size > limits.max_bytes:
        raise ValueError('%d bytes, more than the limit of %d' % (size, limits.max_bytes))
    depth, line, column = nesting_depth(text, stop_above=limits.max_nesting)
    if depth > limits.max_nesting:
        raise ValueError('nested deeper than %d (line %d, column %d)'
                         % (limits.max_nesting, line, column))
    if not text.strip():
        return None
    try:
        import yaml
    except ImportError:
        return _load_json(text)
    return _load_yaml(yaml, text, limits)


def _load_yaml(yaml, text, limits):
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)   # libyaml: ten times faster
    try:
        _check_events(yaml, yaml.parse(text, Loader=loader), limits)
        return yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as error:
        raise ValueError('not valid YAML/JSON: %s%s'
                         % (error.problem or error.context, _position(error))) from None
    except (yaml.YAMLError, RecursionError, MemoryError) as error:
        raise ValueError('not valid YAML/JSON (%s)' % type(error).__name__) from None
    except ValueError as error:
        if str(error).startswith(('nested deeper', 'more than', 'YAML aliases')):
            raise
        # A constructor refusing a value (e.g. an integer of 5,000 digits).
        raise ValueError('not valid YAML/JSON: a value cannot be read (%s)'
                         % type(error).__name__) from None


def _check_events(yaml, events, limits):
    depth = nodes = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise ValueError('YAML aliases (*name) are not supported%s' % _mark(event))
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > limits.max_nesting:
                raise ValueError('nested deeper than %d%s' % (limits.max_nesting, _mark(event)))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        if isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent,
                              yaml.MappingStartEvent)):
            nodes += 1
            if nodes > limits.max_nodes:
                raise ValueError('more than %d values%s' % (limits.max_nodes, _mark(event)))


def _mark(event):
    mark = getattr(event, 'start_mark', None)
    return '' if mark is None else ' (line %d, column %d)' % (mark.line + 1, mark.column + 1)


def _position(error):
    mark = error.problem_mark or error.context_mark
    return '' if mark is None else ' (line %d, column %d)' % (mark.line + 1, mark.column + 1)


def _load_json(text):
    """JSON without PyYAML: the lexical scan has bounded the depth already."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError('not valid JSON (line %d, column %d)'
                         % (error.lineno, error.colno)) from None
    except (ValueError, RecursionError) as error:
        raise ValueError('not valid JSON (%s)' % type(error).__name__) from None
