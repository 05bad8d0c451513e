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
The source interface: every input that brings bodies into the world is a ``Source``.

Modelled on Nav2's collision monitor, where each ``Source`` owns its subscription, its
parameters, the conversion of its messages and its timeout, and the monitor asks each one for
its data once per cycle (``Source::getData``). Here a source:

- **subscribes** raw (bytes only: the node never converts a message on its executor thread; a
  100 MB message would hold the GIL for seconds), keeps its subscription handles and destroys
  them itself (``close``);
- hands what must be decoded or built to the geometry worker, whose results come back to its
  own ``Mailbox``;
- answers ``collect(now_ns, frames)`` once per cycle with a ``SourceData``: its pieces, each
  already placed, when each piece's data was confirmed, which are stale, why the node cannot
  vouch for its scope yet, and (the planning scene, the robot model) pair rules. The node
  replaces the source's slot in the world with it, wholesale; nothing calls a source back.

Freshness has one rule, in this base (``source_valid``, Nav2's ``sourceValid``): data older
than the source's timeout is stale. A source that is state (a robot model, parameters, the
planning scene) never goes stale.

Adding an input kind is one ``Source`` subclass and one line in ``sources.make_sources``.
"""

from dataclasses import dataclass, field

from gjk_ros.ros.inputs.timekeeping import NS_PER_S, TIMELESS, UNKNOWN
import numpy

__all__ = ['CollisionRules', 'PieceKey', 'placed_as_built', 'RobotLinks', 'SOURCE_HOOKS',
           'Source', 'SourceContext', 'SourceData', 'SourcePiece', 'SourceStatus', 'source_valid',
           'state_data']

SOURCE_HOOKS = ('parameter_specs', 'configure', 'subscribe', 'collect', 'status', 'close')
"""The methods a source may override; ``collect`` is the one the node calls every cycle."""


@dataclass(frozen=True, order=True)
class PieceKey:
    """Which piece of which source: ``source`` names it, ``item`` is the source's own key."""

    source: str
    item: tuple


@dataclass(frozen=True)
class SourcePiece:
    """
    One piece of a body as its source holds it now.

    Exactly one of: ``piece`` (a ``CollisionPiece``), ``error`` (why the geometry was rejected:
    the body is INVALID) or ``pending`` (the geometry is being built: the body is PENDING).
    """

    kind: str
    body: str
    key: PieceKey
    piece: object = None
    error: str = None
    pending: bool = False


@dataclass(frozen=True)
class CollisionRules:
    """
    What the planning scene says about pairs and links.

    MoveIt's allowed collision matrix, the touch links of attached objects (with the link
    holding each), its ``link_padding`` and ``link_scale``.

    Hashable and compared by value, so the layout rebuilds only when the rules change.
    """

    matrix: object = None
    touch: frozenset = frozenset()
    padding: tuple = ()
    scale: tuple = ()

    def allows(self, first, second):
        """Whether the pair is never checked (allowed to touch, as MoveIt says)."""
        if frozenset((first, second)) in self.touch:
            return True
        return self.matrix is not None and self.matrix.allows(first, second)

    def padding_of(self, link):
        """Metres the scene pads ``link`` with (added to the node's own padding)."""
        return dict(self.padding).get(link, 0.0)

    def scale_of(self, link):
        """Return the factor the scene scales ``link``'s pieces by (MoveIt's ``link_scale``)."""
        return dict(self.scale).get(link, 1.0)


@dataclass(frozen=True)
class RobotLinks:
    """What the robot model says about its links: joined by a joint, disabled, grouped."""

    adjacent: frozenset = frozenset()
    disabled: frozenset = frozenset()
    groups: dict = field(default_factory=dict)
    warnings: tuple = ()


@dataclass(frozen=True)
class SourceData:
    """
    What a source holds at one instant: the node's slot for it, replaced every cycle.

    ``pieces`` is a tuple of ``SourcePiece``; a source returns the same tuple object while its
    geometry is unchanged (the layout rebuilds only when some source's tuple changed). The
    arrays follow ``pieces``:

    - ``frames``: the frame each piece's ``origins`` row is in; None while it cannot be placed
      (its pairs are STALE);
    - ``times``: when each piece's data was last confirmed, ROS time in int ns
      (``timekeeping.TIMELESS`` for state that does not age, ``UNKNOWN`` for data never had);
    - ``stale``: each piece's freshness verdict (``source_valid``).

    ``not_ready`` says why the node cannot vouch for its scope yet; ``rules`` (a
    ``CollisionRules``) and ``links`` (``RobotLinks``) are what the planning scene and
    the robot model say about pairs.
    """

    pieces: tuple = ()
    frames: tuple = ()
    origins: numpy.ndarray = field(default_factory=lambda: numpy.zeros((0, 4, 4)))
    times: numpy.ndarray = field(default_factory=lambda: numpy.zeros(0, dtype=numpy.int64))
    stale: numpy.ndarray = field(default_factory=lambda: numpy.zeros(0, dtype=bool))
    not_ready: tuple = ()
    rules: object = None
    links: RobotLinks = None


@dataclass(frozen=True)
class SourceStatus:
    """
    What ``/diagnostics`` reports of a source.

    ``heard``: ``{label: ROS time in ns}`` of each stream's last message; ``silent``: labels of
    its silent streams; ``topic_heard``: ``{topic label: ns}`` of its topics' last messages;
    ``incompatible_qos``: ``{topic: text}``; ``error``: why its input was rejected;
    ``counts``: what became of its messages since it started, when it keeps count (a dataclass
    of counts, e.g. an observation source's clouds received, used, superseded and refused).
    """

    heard: dict = field(default_factory=dict)
    silent: tuple = ()
    topic_heard: dict = field(default_factory=dict)
    incompatible_qos: dict = field(default_factory=dict)
    error: str = None
    counts: object = None


@dataclass(frozen=True)
class SourceContext:
    """
    What every source may use.

    The geometry worker, the problem log, the clocks, the meshes' convex parts, and the world
    (the robot's link pieces, which the self-filter of a sensor cloud needs).
    """

    ingestor: object = None
    problems: object = None
    clocks: object = None
    decomposer: object = None
    world: object = None


def source_valid(stamp_ns, now_ns, timeout_s):
    """
    Whether data confirmed at ``stamp_ns`` is fresh at ``now_ns`` (Nav2's ``sourceValid``).

    A ``timeout_s`` of 0 or less never times out (as Nav2's 0); otherwise unknown data
    (``UNKNOWN`` or None) is never fresh and timeless data always is.
    """
    if timeout_s <= 0.0 or stamp_ns == TIMELESS:
        return True
    if stamp_ns is None or stamp_ns == UNKNOWN:
        return False
    return now_ns - stamp_ns <= timeout_s * NS_PER_S


class Source:
    """
    Base class of the node's inputs; every hook has a harmless default.

    Parameters
    ----------
    name : str
        Unique: the ``source`` of every ``PieceKey`` the source owns, and the prefix of its
        ``<name>.*`` parameters.
    context : SourceContext
        What the source may use.

    """

    def __init__(self, name, context):
        self.name = name
        self._context = context
        self._node = None
        self._subscriptions = []

    @classmethod
    def parameter_specs(cls, name):
        """Return the ``ParameterSpec`` of the ``<name>.*`` parameters of a source ``name``."""
        return ()

    def configure(self, config):
        """Take this source's parameters from a new ``Config`` (start-up and every change)."""

    def subscribe(self, node):
        """Create this source's subscriptions on ``node`` (raw messages; see ``_subscribe``)."""

    def collect(self, now_ns, frames):
        """
        Return what the source holds now (``SourceData``); the one call of every cycle.

        Parameters
        ----------
        now_ns : int
            ROS time, nanoseconds.
        frames : gjk_ros.ros.inputs.frames.Frames
            TF: ``lookup`` at a stamp, ``lookup_latest`` for the cycle's poses.

        """
        return SourceData()

    def status(self, now_ns):
        """Return what ``/diagnostics`` says of this source (``SourceStatus``)."""
        return SourceStatus()

    def close(self):
        """Destroy this source's subscriptions and stop what it runs (cleanup, shutdown)."""
        node, subscriptions = self._node, self._subscriptions
        self._subscriptions = []
        for subscription in subscriptions:
            try:
                node.destroy_subscription(subscription)
            except Exception:  # noqa: B902 -- already gone, or the context shut down
                pass

    def _subscribe(self, node, *args, **kwargs):
        """Create a subscription this source owns (``close`` destroys it); return it."""
        self._node = node
        subscription = node.create_subscription(*args, **kwargs)
        self._subscriptions.append(subscription)
        return subscription

    def _unsubscribe(self, subscription):
        """Destroy one subscription this source made (a topic changed at run time)."""
        self._subscriptions.remove(subscription)
        self._node.destroy_subscription(subscription)


def placed_as_built(pieces, fixed_frame):
    """
    Return (frames, origins) of pieces that sit where they were built.

    That is their own frame and origin (an empty frame is ``fixed_frame``); a rejected or
    pending piece has none to measure, and gets ``fixed_frame`` and the identity.
    """
    frames, origins = [], numpy.tile(numpy.eye(4), (len(pieces), 1, 1))
    for index, entry in enumerate(pieces):
        if entry.piece is None:
            frames.append(fixed_frame)
            continue
        frames.append(entry.piece.frame_id.lstrip('/') or fixed_frame)
        origins[index] = entry.piece.origin
    return tuple(frames), origins


def state_data(pieces, fixed_frame, not_ready=(), **extra):
    """Return the ``SourceData`` of state that never goes stale: placed as built, timeless."""
    frames, origins = placed_as_built(pieces, fixed_frame)
    return SourceData(pieces, frames, origins, numpy.full(len(pieces), TIMELESS, numpy.int64),
                      numpy.zeros(len(pieces), dtype=bool), tuple(not_ready), **extra)
