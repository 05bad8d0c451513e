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
read raw and decoded, checked and built by the geometry worker (a scene with meshes can be
megabytes); every message is a job of its own, applied in arrival order, because a diff only
makes sense after the messages before it.

- World objects are obstacles named by their id, placed at ``header.frame_id`` (resolved with
  TF every cycle, as a frame-locked marker); attached objects are link pieces named by their
  id, moving with their link, never paired with the link or its ``touch_links``.
- The allowed collision matrix, ``link_padding`` and the touch links reach the layout through
  ``World.collision_rules``.
- The scene is state, not a stream: it never goes silent (``data_times`` +inf). An operation
  on an unknown id is reported by name and changes nothing; a malformed object is rejected by
  name (its pairs INVALID) and everything else is served.
"""

import itertools

from gjk_ros.ros.bodies import LINK, OBSTACLE
from gjk_ros.ros.model_imports import load_models
from gjk_ros.ros.sources.base import Source
from gjk_ros.ros.tf_buffer import TfStatus
from gjk_ros.ros.world import CollisionRules
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ['decode_scene_message', 'PlanningSceneSource', 'SCENE_TOPICS']

# Reliable as MoveIt publishes; volatile, so transient-local publishers match too.
SCENE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
# The message kind each topic parameter carries.
SCENE_TOPICS = (('collision_object_topic', 'object'),
                ('attached_collision_object_topic', 'attached'),
                ('planning_scene_topic', 'scene'),
                ('monitored_planning_scene_topic', 'scene'))


def _message_type(kind):
    from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
    return {'object': CollisionObject, 'attached': AttachedCollisionObject,
            'scene': PlanningScene}[kind]


def decode_scene_message(kind, data, limits):
    """
    Worker side: raw bytes of one message to what ``SceneState`` applies.

    Returns ('object', operation, SceneObject), ('attached', operation, AttachedObject) or
    ('scene', SceneUpdate).
    """
    from gjk_ros.models.collision_objects import attached_object, scene_object, scene_update
    from rclpy.serialization import deserialize_message
    message = deserialize_message(data, _message_type(kind))
    options = {'limits': limits, 'hull_warning_threshold': limits.hull_warning_threshold}
    if kind == 'object':
        return ('object',) + scene_object(message, **options)
    if kind == 'attached':
        return ('attached',) + attached_object(message, **options)
    return ('scene', scene_update(message, **options))


class PlanningSceneSource(Source):
    """
    MoveIt's planning scene topics as a source of obstacles, link pieces and pair rules.

    Parameters
    ----------
    ingestor : gjk_ros.ros.ingestion.Ingestor
        Decodes and builds the messages in the geometry worker.
    problems : gjk_ros.ros.problems.ProblemLog
        Where refusals and operations on unknown ids are logged, by name.
    frames : gjk_ros.ros.frames.Frames
        TF, to express attached and detached objects in their new frame once.

    """

    def __init__(self, ingestor, problems, frames):
        super().__init__('planning_scene')
        self._ingestor = ingestor
        self._problems = problems
        self._frames = frames
        self._node = None
        self._subscriptions = {}
        self._topics = {}
        self._enabled = False
        self._max_bytes = 0
        self._fixed_frame = ''
        self._sequence = itertools.count()
        self._pending = set()
        self._state = None
        self._written = None

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

    def _resubscribe(self):
        """Subscribe to the topics of the parameters (none while disabled)."""
        for subscription in self._subscriptions.values():
            self._node.destroy_subscription(subscription)
        self._subscriptions = {}
        if not self._enabled:
            return
        for name, kind in SCENE_TOPICS:
            topic = self._topics[name]
            if topic and topic not in self._subscriptions:
                self._subscriptions[topic] = self._node.create_subscription(
                    _message_type(kind), topic, self._receiver(topic, kind), SCENE_QOS,
                    raw=True)

    def _receiver(self, topic, kind):
        def on_message(data):
            problem = ('input', 'planning_scene', topic)
            if len(data) > self._max_bytes:
                self._problems.report(problem, '%s: a %d-byte message exceeds '
                                      'max_message_bytes (%d); it was not applied'
                                      % (topic, len(data), self._max_bytes))
                return
            self._problems.resolve(problem)
            key = ('planning_scene', kind, next(self._sequence))
            self._pending.add(self._ingestor.submit(key, (topic, bytes(data))))
        return on_message

    # -- what the worker built -----------------------------------------------------------------

    def owns(self, job_key):
        return job_key[0] == 'planning_scene'

    def on_result(self, result, world):
        self._pending.discard(result.token)
        decode = ('input', 'planning_scene', 'decode')
        if result.error is not None:
            self._problems.resolve(decode)  # each refusal is logged, not only the first
            self._problems.report(decode, 'planning scene message (%s) rejected: %s'
                                  % (result.key[1], result.error.reason))
            return
        self._problems.resolve(decode)
        if self._state is None:
            load_models()  # one whole import, whatever thread (model_imports.py)
            from gjk_ros.models.collision_objects import SceneState
            self._state = SceneState()
        kind, *value = result.value
        if kind == 'object':
            problems = self._state.apply_object(*value)
        elif kind == 'attached':
            problems = self._state.apply_attached(*value)
        else:
            problems = self._state.apply_scene(*value)
        # The problems of the latest message stay active (in /diagnostics) until the next one:
        # a bounded set, however many messages refer to unknown ids.
        current = {('planning_scene', name, reason) for name, reason in problems}
        self._problems.keep_only(('planning_scene',), current)
        for key in current:
            self._problems.report(key, "planning scene '%s': %s" % key[1:], level='warning')

    # -- the world -----------------------------------------------------------------------------

    def poll(self, world, now_ns):
        """Express waiting poses in their frame; write the scene into the world when changed."""
        state = self._state
        if state is None:
            return
        state.resolve(self._lookup, self._fixed_frame)
        key = (state.revision, self._enabled)
        if key == self._written:
            return
        self._written = key
        scene = state if self._enabled else None
        world.set_pieces(OBSTACLE, self.name, _entries(scene, 'objects'))
        world.set_pieces(LINK, self.name, _entries(scene, 'attached'))
        world.collision_rules = CollisionRules() if scene is None else CollisionRules(
            state.matrix, state.touch_pairs(), tuple(sorted(state.padding.items())),
            tuple(sorted(state.scale.items())))
        world.moved()

    def _lookup(self, target, source):
        lookup = self._frames.lookup(target, source, 0)
        return lookup.matrix if lookup.status == TfStatus.OK else None

    def placement(self, kind, key):
        """Pieces still waiting to be expressed in their frame cannot be placed (STALE)."""
        table = self._state.objects if kind == OBSTACLE else self._state.attached
        entry = table.get(key[1])
        found = entry if kind == OBSTACLE or entry is None else entry.object
        if found is not None and found.resolve_into is not None:
            return None, None
        return None

    def not_ready(self, now):
        """
        Not ready while the first scene heard is being built; later ones are not waited for.

        move_group publishes diffs on ``/monitored_planning_scene`` several times a second: a
        minimum that went -inf for each would stop a robot for nothing. Until a newer message is
        built, the scene before it is measured, as for a MarkerArray.
        """
        if self._pending and self._state is None:
            return ['planning scene: the first message heard is being built']
        return []


def _entries(state, table):
    """(name, key, piece or rejection) of every piece of the scene's objects or attached ones."""
    if state is None:
        return []
    entries = []
    for name, entry in getattr(state, table).items():
        found = entry if table == 'objects' else entry.object
        if found.error is not None:
            entries.append((name, ('planning_scene', name, 'error'), found.error))
            continue
        entries += [(name, ('planning_scene', name, index), piece)
                    for index, piece in enumerate(found.placed())]
    return entries
