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

"""The ``static_obstacles`` / ``link_geometry`` text: bounded parsing, once per text."""

import functools

from gjk_ros.ros.inputs.limits import IngestLimits
from gjk_ros.ros.inputs.model_imports import load_models

__all__ = ['parse_body_descriptions', 'parsed_bodies']

# The input limits' defaults live in one place, IngestLimits.
_LIMITS = IngestLimits()


def parsed_bodies(text, limits=None):
    """
    Return ``parse_body_descriptions(text, limits)`` as a tuple, parsing each text once.

    The parameter callback validates a text by parsing it, and the parameter source hands the
    same bodies to the geometry worker: both ask here, and the second is served from memory
    (the texts of the last few values and limits).
    """
    return _parsed(text, _text_limit(limits, 'max_parameter_bytes'),
                   _text_limit(limits, 'max_nesting'), _text_limit(limits, 'max_yaml_nodes'))


@functools.lru_cache(maxsize=8)
def _parsed(text, max_parameter_bytes, max_nesting, max_yaml_nodes):
    limits = IngestLimits(max_parameter_bytes=max_parameter_bytes, max_nesting=max_nesting,
                          max_yaml_nodes=max_yaml_nodes)
    return tuple((name, frame_id, tuple(pieces))
                 for name, frame_id, pieces in parse_body_descriptions(text, limits))


def _text_limit(limits, name):
    """Return a bound of the body-description text: the caller's, else the default."""
    return int(getattr(limits, name, getattr(_LIMITS, name)))


def parse_body_descriptions(text, limits=None):
    """
    Parse the ``static_obstacles`` / ``link_geometry`` encoding.

    The text is a JSON (or YAML) list; each entry names one body::

        [{"name": "table", "frame_id": "world",
          "pieces": [{"type": "box", "size": [1.0, 0.6, 0.02], "xyz": [0.5, 0, 0.4]}]}]

    ``frame_id`` defaults to the body name for ``link_geometry`` and to ``fixed_frame`` for
    obstacles (an absent one is returned as '', the caller substitutes); an empty one is
    refused (``frame_id: ''`` is a mistake, not a request for the default). A single
    piece may be written inline (the entry's other keys are the piece description).

    Parameters
    ----------
    text : str
        Empty or blank for no bodies.
    limits : IngestLimits or alike, optional
        ``max_parameter_bytes``, ``max_nesting`` and ``max_yaml_nodes`` (read duck-typed);
        default those of IngestLimits. Parsing is linear in the text and stops at the first
        excess, so this is fast for any text (a 1 MB text in well under a second).

    Returns
    -------
    list of (str, str, list of dict)
        (name, frame_id, piece descriptions) per entry, in order.

    Raises
    ------
    ValueError
        If the text is not a list of such entries or exceeds a limit.

    """
    load_models()
    from gjk_ros.models.bounded_text import load_bounded, TextLimits
    entries = load_bounded(text, TextLimits(_text_limit(limits, 'max_parameter_bytes'),
                                            _text_limit(limits, 'max_nesting'),
                                            _text_limit(limits, 'max_yaml_nodes')))
    if entries is None:   # blank text, or a document holding only comments
        return []
    if not isinstance(entries, list):
        raise ValueError('expected a list of bodies, got %s' % type(entries).__name__)
    bodies, seen = [], set()
    for position, entry in enumerate(entries):
        body = _body_entry(position, entry)
        if body[0] in seen:
            raise ValueError('entry %d: duplicate name %r' % (position, body[0]))
        seen.add(body[0])
        bodies.append(body)
    return bodies


def _body_entry(position, entry):
    """(name, frame_id, piece descriptions) of one entry of a body-description list."""
    if not isinstance(entry, dict):
        raise ValueError('entry %d: expected a mapping, got %r' % (position, entry))
    entry = dict(entry)
    name = entry.pop('name', None)
    if not isinstance(name, str) or not name:
        raise ValueError('entry %d: needs a non-empty string "name"' % position)
    frame_id = entry.pop('frame_id', None)
    if frame_id is not None and (not isinstance(frame_id, str) or not frame_id.strip('/')):
        # Absent means the default frame; an empty one is a mistake, not a request for it.
        raise ValueError('%s: frame_id must name a frame, got %r' % (name, frame_id))
    pieces = entry.pop('pieces', None)
    if pieces is None:
        pieces = [entry]
    elif entry:
        raise ValueError('%s: unexpected keys %s next to "pieces"' % (name, sorted(entry)))
    if not isinstance(pieces, list) or not pieces or \
            not all(isinstance(piece, dict) for piece in pieces):
        raise ValueError('%s: "pieces" must be a non-empty list of mappings' % name)
    return name, (frame_id or '').lstrip('/'), pieces
