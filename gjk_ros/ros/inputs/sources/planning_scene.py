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
The planning scene source: MoveIt's world as the node's input (docs/planning_scene.md).

Topics (parameters; '' leaves one out): ``collision_object_topic``
(moveit_msgs/CollisionObject), ``attached_collision_object_topic``
(moveit_msgs/AttachedCollisionObject), ``planning_scene_topic`` and
``monitored_planning_scene_topic`` (moveit_msgs/PlanningScene, full scenes and diffs). All are
read raw; each message goes to the geometry worker once, as raw bytes, and is decoded, checked
and built there (a scene with meshes can be megabytes). Every message is a job of its own,
applied in arrival order, because a diff only makes sense after the messages before it.

- World objects are obstacles named by their id, placed at ``header.frame_id`` (resolved with
  TF every cycle, as a frame-locked marker); attached objects are link pieces named by their
  id, moving with their link, never paired with the link or its ``touch_links``.
- The allowed collision matrix, ``link_padding`` and the touch links are the slot's ``rules``.
- The scene is state, not a stream: it never goes stale. An operation on an unknown id is
  reported by name and changes nothing; a malformed object is rejected by name (its pairs
  INVALID) and everything else is served.
"""

import collections
from dataclasses import replace
import itertools
import math
import re

from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.inputs.ingestion import Mailbox
from gjk_ros.ros.inputs.jobs import SceneMessageJob, SceneRebuildJob
from gjk_ros.ros.inputs.model_imports import load_models
from gjk_ros.ros.inputs.sources.base import (CollisionRules, PieceKey, Source, SourcePiece,
                                             state_data)
from gjk_ros.ros.inputs.tf_buffer import TfStatus
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ['scene_mesh_uses', 'PlanningSceneSource', 'SCENE_TOPICS']

# Reliable as MoveIt publishes; volatile, so transient-local publishers match too.
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
# The message kind each topic parameter carries.
SCENE_TOPICS = (('collision_object_topic', 'object'),
                ('attached_collision_object_topic', 'attached'),
                ('planning_scene_topic', 'scene'),
                ('monitored_planning_scene_topic', 'scene'))
# Messages applied per cycle: each is a cheap update of the scene, but a burst of thousands
# must be spread over cycles rather than delay one.
_RESULTS_PER_CYCLE = 200


def _message_type(kind):
    from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
    return {'object': CollisionObject, 'attached': AttachedCollisionObject,
            'scene': PlanningScene}[kind]


class PlanningSceneSource(Source):
    """
    MoveIt's planning scene topics as a source of obstacles, link pieces and pair rules.

    Parameters
    ----------
    context : SourceContext
        The geometry worker (decodes and builds the messages) and the problem log (refusals
        and operations on unknown ids are logged, by name).

    """

    def __init__(self, context):
        super().__init__('planning_scene', context)
        self._mailbox = Mailbox()
        self._subscribed = {}
        self._topics = {}
        self._enabled = False
        self._max_bytes = 0
        self._fixed_frame = ''
        self._sequence = itertools.count()
        self._pending = set()
        self._state = None
        self._written = None
        self._data = state_data((), '', rules=CollisionRules())
        self._mesh = None            # the MeshSettings of the node's parameters
        self._rebuild = False        # an object with meshes was built in other settings
        self._rebuilding = None      # key -> the sources of the objects being rebuilt

    @property
    def state(self):
        """Return the scene (a ``SceneState``), or None before the first message."""
        return self._state

    # -- input ---------------------------------------------------------------------------------

    def subscribe(self, node):
        self._node = node
        self._resubscribe()

    def configure(self, config):
        topics = {name: getattr(config, name) for name, _ in SCENE_TOPICS}
        changed = (topics, config.planning_scene) != (self._topics, self._enabled)
        self._topics, self._enabled = topics, config.planning_scene
        self._max_bytes = config.max_message_bytes
        if config.fixed_frame != self._fixed_frame:
            self._fixed_frame = config.fixed_frame
            self._written = None
        if changed:
            self._written = None
            if self._node is not None:
                self._resubscribe()
        mesh = config.ingest_limits().mesh
        if mesh != self._mesh:
            self._mesh, self._rebuild = mesh, self._state is not None

    def _resubscribe(self):
        """Subscribe to the topics of the parameters (none while disabled)."""
        for subscription in self._subscribed.values():
            self._unsubscribe(subscription)
        self._subscribed = {}
        if not self._enabled:
            return
        for name, kind in SCENE_TOPICS:
            topic = self._topics[name]
            if topic and topic not in self._subscribed:
                self._subscribed[topic] = self._subscribe(
                    self._node, _message_type(kind), topic, self._receiver(topic, kind),
                    SCENE_QOS, raw=True)

    def _receiver(self, topic, kind):
        def on_message(data):
            problem = ('input', 'planning_scene', topic)
            if len(data) > self._max_bytes:
                self._context.problems.report(
                    problem, '%s: a %d-byte message exceeds max_message_bytes (%d); it was not '
                    'applied' % (topic, len(data), self._max_bytes))
                return
            self._context.problems.resolve(problem)
            self._pending.add(self._context.ingestor.submit(
                SceneMessageJob(kind, topic, bytes(data)), self._mailbox))
        return on_message

    # -- each cycle ----------------------------------------------------------------------------

    def collect(self, now_ns, frames):
        for result in self._mailbox.take(_RESULTS_PER_CYCLE):
            if isinstance(result.job, SceneRebuildJob):
                self._take_rebuilt(result)
            else:
                self._apply(result)
        if self._rebuild and self._rebuilding is None and self._state is not None:
            self._submit_rebuild()
        state = self._state
        if state is not None:
            state.resolve(lambda target, source: _latest(frames, target, source),
                          self._fixed_frame)
            written = (state.revision, self._enabled)
            if written != self._written:
                self._written = written
                self._data = self._write(state if self._enabled else None)
        not_ready = self._not_ready()
        if not_ready != self._data.not_ready:
            self._data = replace(self._data, not_ready=not_ready)
        return self._data

    def mesh_uses(self):
        """Return the ``MeshUse`` of each non-convex mesh of the scene's objects."""
        scene = self._state
        if scene is None:
            return []
        found = [(name, entry) for name, entry in sorted(scene.objects.items())]
        found += [(name, entry.object) for name, entry in sorted(scene.attached.items())]
        return [use for name, entry in found for use in scene_mesh_uses(name, entry.pieces)]

    def _apply(self, result):
        self._pending.discard(result.token)
        problems = self._context.problems
        decode = ('input', 'planning_scene', 'decode')
        if result.error is not None:
            problems.resolve(decode)  # each refusal is logged, not only the first
            problems.report(decode, 'planning scene message (%s) rejected: %s'
                            % (result.job.kind, result.error.reason))
            return
        problems.resolve(decode)
        if self._state is None:
            load_models()  # one whole import, whatever thread (model_imports.py)
            from gjk_ros.models.collision_objects import SceneState
            self._state = SceneState()
        change = result.value
        self._rebuild |= change.mesh != self._mesh  # built before a mesh mode change
        if change.kind == 'object':
            reported = self._state.apply_object(change.operation, change.entry)
        elif change.kind == 'attached':
            reported = self._state.apply_attached(change.operation, change.entry)
        else:
            reported = self._state.apply_scene(change.entry)
        # The problems of the latest message stay active (in /diagnostics) until the next one:
        # a bounded set, however many messages refer to unknown ids.
        current = {_SceneProblem('planning_scene', name, reason) for name, reason in reported}
        problems.keep_only(('planning_scene',), current)
        for key in current:
            problems.report(key, "planning scene '%s': %s" % (key.name, key.reason),
                            level='warning')

    # -- mesh modes (mesh_mode, mesh_mode_overrides, max_mesh_pieces, decompose_meshes) -------

    def _submit_rebuild(self):
        """
        Have the worker build the meshes of every held object again in the current settings.

        A parameter change applies to the scene the node holds: a scene is sent once, not
        streamed. Each object keeps what builds it (``SceneObject.sources``: a message's mesh
        as it came, a file by its URI); until rebuilt its old pieces are measured.
        """
        self._rebuild = False
        objects, sources = [], {}
        for table, kind in (('objects', OBSTACLE), ('attached', LINK)):
            for name, entry in getattr(self._state, table).items():
                found = entry if table == 'objects' else entry.object
                if found.has_meshes:
                    sources[(table, name)] = found.sources
                    objects.append(((table, name), kind, replace(found, pieces=())))
        if objects:
            self._rebuilding = sources
            self._context.ingestor.submit(SceneRebuildJob(tuple(objects)), self._mailbox)

    def _take_rebuilt(self, result):
        submitted, self._rebuilding = self._rebuilding or {}, None
        problem = ('input', 'planning_scene', 'mesh_mode')
        if result.error is not None:
            self._context.problems.report(
                problem, 'planning scene objects not built in the new mesh modes (%s); they '
                'keep their pieces until received again' % result.error.reason)
            return
        self._context.problems.resolve(problem)
        for (table, name), found in result.value.objects:
            self._state.take_rebuilt(name, table == 'attached', submitted[(table, name)], found)
        if result.value.mesh != self._mesh:
            self._rebuild = True  # the settings changed again meanwhile

    def _write(self, scene):
        """Return the slot of ``scene`` (None: disabled): its pieces, placed, and its rules."""
        pieces = _pieces(self.name, scene, OBSTACLE, 'objects') + \
            _pieces(self.name, scene, LINK, 'attached')
        rules = CollisionRules() if scene is None else CollisionRules(
            scene.matrix, scene.touch_pairs(), tuple(sorted(scene.padding.items())),
            tuple(sorted(scene.scale.items())))
        data = state_data(pieces, self._fixed_frame, self._not_ready(), rules=rules)
        # A piece still waiting to be expressed in its new frame cannot be placed (STALE).
        return replace(data, frames=tuple(None if _waiting(scene, entry) else frame
                                          for entry, frame in zip(pieces, data.frames)))

    def _not_ready(self):
        """
        Not ready while the first scene heard is being built; later ones are not waited for.

        move_group publishes diffs on ``/monitored_planning_scene`` several times a second: a
        minimum that went -inf for each would stop a robot for nothing. Until a newer message is
        built, the scene before it is measured, as for a MarkerArray.
        """
        if self._pending and self._state is None:
            return ('planning scene: the first message heard is being built',)
        return ()


def _latest(frames, target, source):
    lookup = frames.lookup(target, source, 0)
    return lookup.matrix if lookup.status == TfStatus.OK else None


def _found(scene, entry):
    """Return the SceneObject behind a slot piece (an attached one's object)."""
    table = scene.objects if entry.kind == OBSTACLE else scene.attached
    found = table.get(entry.body)
    return found if entry.kind == OBSTACLE or found is None else found.object


def _waiting(scene, entry):
    """Whether a piece waits to be expressed in the frame it was attached to or detached in."""
    found = _found(scene, entry)
    return found is not None and found.resolve_into is not None


def _pieces(source, scene, kind, table):
    """Return the slot pieces of the scene's objects or attached ones (none when disabled)."""
    if scene is None:
        return ()
    pieces = []
    for name, entry in getattr(scene, table).items():
        found = entry if table == 'objects' else entry.object
        if found.error is not None:
            pieces.append(SourcePiece(kind, name, PieceKey(source, (table, name, 'error')),
                                      error=found.error))
            continue
        pieces += [SourcePiece(kind, name, PieceKey(source, (table, name, index)), piece)
                   for index, piece in enumerate(found.placed())]
    return tuple(pieces)


# What ``gjk_ros.models.mesh_bodies.exact_pieces`` and ``meshes.mesh_shape`` call the pieces
# of a mesh: a collision object carries only its pieces, so its meshes are read from them.
_EXACT_PIECE = re.compile(r'(?P<label>.*): exact (solid|surface) piece (?P<n>\d+) of \d+')
_HULL_PIECE = re.compile(r'(?P<label>.*?)( scaled \S+)? \(hull of \d+ vertices\), not convex')


def scene_mesh_uses(name, pieces):
    """
    Return the ``MeshUse`` of each non-convex mesh among a collision object's pieces.

    An exact mesh is watertight when none of its pieces is a ``SurfacePiece``; a hull's reach
    beyond its mesh is not carried by the object (NaN), its warning says it when large.
    """
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models.mesh_bodies import MeshUse, SurfacePiece
    uses, exact = [], {}
    for piece in pieces:
        match = _EXACT_PIECE.fullmatch(piece.description)
        if match is not None:
            label = match.group('label')
            if match.group('n') == '1' or label not in exact:
                exact[label] = [0, True]
                uses.append(label)
            exact[label][0] += 1
            exact[label][1] &= not isinstance(piece, SurfacePiece)
            continue
        match = _HULL_PIECE.fullmatch(piece.description)
        if match is not None:
            uses.append(MeshUse(name, match.group('label'), 'hull', 1, None, math.nan))
    return [MeshUse(name, use, 'exact', *exact[use]) if isinstance(use, str) else use
            for use in uses]


# A planning-scene problem of the latest message as the problem log keys it.
_SceneProblem = collections.namedtuple('_SceneProblem', 'topic name reason')
