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
The robot model source: ``robot_description`` (URDF) and ``robot_description_semantic`` (SRDF).

Both are latched strings, as robot_state_publisher and MoveIt publish them, decoded and built
by the geometry worker. The URDF's ``<collision>`` elements become the links' pieces; a
rejected element leaves an error on its link (its pairs are INVALID). The URDF's joints and the
SRDF's ``disable_collisions`` pairs and groups are the slot's ``RobotLinks``: self-collision
skips adjacent and disabled pairs. The model is state, not a stream: it never goes stale. Until
a model is built, the node is not ready (when ``require_robot_description``).
"""

from dataclasses import dataclass

from gjk_ros.ros.compute.bodies import LINK
from gjk_ros.ros.inputs.ingestion import Mailbox
from gjk_ros.ros.inputs.jobs import RobotDescriptionJob, RobotModel, SemanticDescriptionJob
from gjk_ros.ros.inputs.model_imports import load_models
from gjk_ros.ros.inputs.sources.base import (PieceKey, RobotLinks, Source, SourcePiece,
                                             SourceStatus, state_data)
from gjk_ros.ros.qos import LATCHED_QOS
from std_msgs.msg import String

__all__ = ['RobotModelSource']

# The CDR header and the string length in front of a serialized std_msgs/String.
_STRING_OVERHEAD = 8
# Results taken per cycle: a robot model or two at most.
_RESULTS_PER_CYCLE = 8


@dataclass
class _ModelState:
    """The robot description: received, being built, built, or rejected."""

    received: int = None  # ROS time, ns
    token: object = None
    built: bool = False
    error: str = None


class RobotModelSource(Source):
    """
    Links from the URDF, collision semantics from the URDF joints and the SRDF.

    Parameters
    ----------
    context : SourceContext
        The geometry worker, the problem log (rejections are logged once) and the clocks
        (receive times; the start-up wait on the steady clock).

    """

    def __init__(self, context):
        super().__init__('robot_description', context)
        self._mailbox = Mailbox()
        self._started = context.clocks.steady()
        self._model = _ModelState()
        self._srdf_token = None
        self._joints = ()          # (name, parent, child) of the URDF's joints
        self._groups = {}          # the SRDF's groups, as written
        self._pieces = ()
        self._links = RobotLinks()
        self._fixed_frame = ''
        self._data = None
        self._max_bytes = 0
        self._mesh = None          # the mesh settings the model was built with
        self._description = None   # the last accepted bytes (rebuilt when _mesh changes)
        self._mesh_uses = ()
        self._required = True
        self._timeout = 0.0
        self._topic = 'robot_description'

    @property
    def busy(self):
        """Tell whether a received model is being built."""
        return self._model.token is not None

    def forget_model(self):
        """Drop the model, as before the first message (tests start over with it)."""
        self._model = _ModelState()
        self._started = self._context.clocks.steady()
        self._pieces, self._data, self._description, self._mesh_uses = (), None, None, ()

    def subscribe(self, node):
        self._subscribe(node, String, 'robot_description', self.on_description, LATCHED_QOS,
                        raw=True)
        # MoveIt publishes the SRDF latched, as robot_state_publisher the URDF.
        self._subscribe(node, String, 'robot_description_semantic', self.on_semantic,
                        LATCHED_QOS, raw=True)
        self._topic = node.resolve_topic_name('robot_description')

    def configure(self, config):
        self._max_bytes = config.max_description_bytes
        self._required = config.require_robot_description
        self._timeout = config.robot_description_timeout
        if config.fixed_frame != self._fixed_frame:
            self._fixed_frame, self._data = config.fixed_frame, None
        mesh = config.ingest_limits().mesh
        if mesh != self._mesh:
            self._mesh = mesh
            if self._description is not None:
                self._submit(self._description)  # built again in the new mesh modes

    def on_description(self, data):
        """Raw ``robot_description`` bytes: to the worker, unless over the size limit."""
        self._model.received = self._context.clocks.now_ns()
        if len(data) > self._max_bytes + _STRING_OVERHEAD:
            self._reject('%d bytes exceed max_description_bytes (%d)'
                         % (len(data), self._max_bytes))
            return
        self._submit(bytes(data))

    def _submit(self, data):
        self._description = data
        self._model.token = self._context.ingestor.submit(RobotDescriptionJob(data),
                                                          self._mailbox)

    def mesh_uses(self):
        """Return the ``MeshUse`` of each non-convex mesh of the built model."""
        return list(self._mesh_uses)

    def on_semantic(self, data):
        """Raw ``robot_description_semantic`` bytes: to the worker."""
        self._srdf_token = self._context.ingestor.submit(SemanticDescriptionJob(bytes(data)),
                                                         self._mailbox)

    def collect(self, now_ns, frames):
        for result in self._mailbox.take(_RESULTS_PER_CYCLE):
            if isinstance(result.job, SemanticDescriptionJob):
                self._apply_srdf(result)
            elif result.token == self._model.token:
                self._model.token = None
                self._apply_model(result)
        not_ready = tuple(self._not_ready())
        if self._data is None or self._data.not_ready != not_ready:
            self._data = state_data(self._pieces, self._fixed_frame, not_ready,
                                    links=self._links)
        return self._data

    def status(self, now_ns):
        return SourceStatus(topic_heard={'robot_description': self._model.received},
                            error=self._model.error)

    def _apply_srdf(self, result):
        if result.token != self._srdf_token:
            return
        if result.error is not None:
            self._context.problems.report(('srdf',), 'robot_description_semantic rejected: %s'
                                          % result.error.reason)
            return
        self._context.problems.resolve(('srdf',))
        semantics = result.value
        self._groups = semantics.groups or {}
        self._set_links(disabled=semantics.disabled)

    def _set_links(self, **changes):
        """Replace the slot's ``RobotLinks``, with the SRDF groups resolved again."""
        links = {'adjacent': self._links.adjacent, 'disabled': self._links.disabled,
                 'warnings': self._links.warnings}
        links.update(changes)
        self._links = RobotLinks(groups=self._resolve_groups(), **links)
        self._data = None

    def _resolve_groups(self):
        """Resolve the SRDF groups' links as MoveIt reads them, once both documents are known."""
        if not self._groups or not self._joints:
            return {}
        load_models()  # one whole import, whatever thread (model_imports.py)
        from gjk_ros.models.srdf import group_links
        return {name: group_links(self._groups, self._joints, name) for name in self._groups}

    def _apply_model(self, result):
        if result.error is not None:
            self._reject(result.error.reason)
            return
        model: RobotModel = result.value
        self._joints = model.joints
        self._mesh_uses = model.mesh_uses
        self._model.built, self._model.error = True, None
        self._context.problems.keep_only(('robot_description',), set())
        pieces = [SourcePiece(LINK, link, PieceKey(self.name, ('piece', link, index)), piece)
                  for link, link_pieces in model.collisions.pieces.items()
                  for index, piece in enumerate(link_pieces)]
        counts = {}
        for error in model.collisions.errors:
            counts[error.body] = counts.get(error.body, -1) + 1
            pieces.append(SourcePiece(LINK, error.body,
                                      PieceKey(self.name, ('error', error.body,
                                                           counts[error.body])),
                                      error=error.reason))
        self._pieces = tuple(pieces)
        self._set_links(adjacent=model.adjacent,
                        warnings=tuple(model.collisions.warnings))

    def _reject(self, reason):
        self._model.error = reason
        self._context.problems.report(('robot_description', reason),
                                      'robot_description rejected (keeping the previous model): '
                                      '%s' % reason)

    def _not_ready(self):
        if not self._required or self._model.built:
            return []
        if self._model.error is not None:
            return ['robot_description rejected: %s' % self._model.error]
        if self._model.token is not None:
            return ['robot_description being built']
        waited = self._context.clocks.steady() - self._started
        if waited >= self._timeout:
            return ['no robot_description after %.0f s: remap it? (this node subscribes to '
                    "'%s')" % (waited, self._topic)]
        return ['waiting for robot_description']
