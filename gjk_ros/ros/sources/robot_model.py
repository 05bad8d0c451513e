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

Both are latched strings, as robot_state_publisher and MoveIt publish them. The URDF's
``<collision>`` elements become the links' pieces (keys ``('robot_description', n)``); a
rejected element leaves an error on its link (its pairs are INVALID). The SRDF's
``disable_collisions`` pairs are skipped by self-collision. The model is state, not a stream:
it never goes silent. Until a model is built, the node is not ready (when
``require_robot_description``).
"""

from dataclasses import dataclass

from gjk_ros.ros.bodies import LINK
from gjk_ros.ros.model_imports import load_models
from gjk_ros.ros.qos import LATCHED_QOS
from gjk_ros.ros.sources.base import Source
from std_msgs.msg import String

__all__ = ['RobotModelSource']

# The CDR header and the string length in front of a serialized std_msgs/String.
_STRING_OVERHEAD = 8


@dataclass
class _ModelState:
    """The robot description: received, being built, built, or rejected."""

    received: float = None
    token: object = None
    built: bool = False
    error: str = None


class RobotModelSource(Source):
    """
    Links from the URDF, collision semantics from the URDF joints and the SRDF.

    Parameters
    ----------
    ingestor : gjk_ros.ros.ingestion.Ingestor
        Where the strings are parsed and the pieces built.
    problems : gjk_ros.ros.problems.ProblemLog
        Where rejections are logged once.
    clocks : gjk_ros.ros.timekeeping.NodeClocks
        Receive times (ROS time) and the start-up wait (steady time).

    """

    def __init__(self, ingestor, problems, clocks):
        super().__init__('robot_description')
        self._ingestor = ingestor
        self._problems = problems
        self._clocks = clocks
        self._started = clocks.steady()
        self._model = _ModelState()
        self._srdf_token = None
        self._joints = ()          # (name, parent, child) of the URDF's joints
        self._groups = {}          # the SRDF's groups, as written
        self._max_bytes = 0
        self._required = True
        self._timeout = 0.0
        self._topic = 'robot_description'

    @property
    def built(self):
        """Tell whether some model is in use (a newer one may still be building)."""
        return self._model.built

    @property
    def busy(self):
        """Tell whether a received model is being built."""
        return self._model.token is not None

    @property
    def error(self):
        """Return why the last model was rejected, or None."""
        return self._model.error

    @property
    def received(self):
        """ROS time the last model arrived, or None."""
        return self._model.received

    def forget_model(self):
        """Drop the model state, as before the first message (tests start over with it)."""
        self._model = _ModelState()
        self._started = self._clocks.steady()

    def subscribe(self, node):
        node.create_subscription(String, 'robot_description', self.on_description,
                                 LATCHED_QOS, raw=True)
        # MoveIt publishes the SRDF latched, as robot_state_publisher the URDF.
        node.create_subscription(String, 'robot_description_semantic', self.on_semantic,
                                 LATCHED_QOS, raw=True)
        self._topic = node.resolve_topic_name('robot_description')

    def configure(self, config):
        self._max_bytes = config.max_description_bytes
        self._required = config.require_robot_description
        self._timeout = config.robot_description_timeout

    def on_description(self, data):
        """Raw ``robot_description`` bytes: to the worker, unless over the size limit."""
        self._model.received = self._clocks.now()
        if len(data) > self._max_bytes + _STRING_OVERHEAD:
            self._reject('%d bytes exceed max_description_bytes (%d)'
                         % (len(data), self._max_bytes))
            return
        self._model.token = self._ingestor.submit(('urdf',), data)

    def on_semantic(self, data):
        """Raw ``robot_description_semantic`` bytes: to the worker."""
        self._srdf_token = self._ingestor.submit(('srdf',), data)

    def owns(self, job_key):
        return job_key in (('urdf',), ('srdf',))

    def on_result(self, result, world):
        if result.key == ('srdf',):
            self._apply_srdf(result, world)
        elif result.token == self._model.token:
            self._model.token = None
            self._apply_model(result, world)

    def _apply_srdf(self, result, world):
        if result.token != self._srdf_token:
            return
        if result.error is not None:
            self._problems.report(('srdf',), 'robot_description_semantic rejected: %s'
                                  % result.error.reason)
            return
        self._problems.resolve(('srdf',))
        disabled, self._groups = result.value
        world.disabled_links = frozenset(disabled)
        self._resolve_groups(world)

    def _resolve_groups(self, world):
        """Resolve the SRDF groups' links as MoveIt reads them, once both documents are known."""
        if not self._groups or not self._joints:
            world.link_groups = {}
            return
        load_models()  # one whole import, whatever thread (model_imports.py)
        from gjk_ros.models.srdf import group_links
        world.link_groups = {name: group_links(self._groups, self._joints, name)
                             for name in self._groups}

    def _apply_model(self, result, world):
        if result.error is not None:
            self._reject(result.error.reason)
            return
        model, adjacent, self._joints = result.value
        self._model.built, self._model.error = True, None
        self._problems.keep_only(('robot_description',), set())
        entries = [(link, (self.name, index), piece) for link, pieces in model.pieces.items()
                   for index, piece in enumerate(pieces)]
        counts = {}
        for error in model.errors:
            counts[error.body] = counts.get(error.body, -1) + 1
            entries.append((error.body, (self.name, 'error', counts[error.body]),
                            error.reason))
        world.set_pieces(LINK, self.name, entries)
        world.adjacent_links = frozenset(adjacent)
        self._resolve_groups(world)
        world.model_warnings = tuple(model.warnings)

    def _reject(self, reason):
        self._model.error = reason
        self._problems.report(('robot_description', reason),
                              'robot_description rejected (keeping the previous model): %s'
                              % reason)

    def not_ready(self, now):
        if not self._required or self._model.built:
            return []
        if self._model.error is not None:
            return ['robot_description rejected: %s' % self._model.error]
        if self._model.token is not None:
            return ['robot_description being built']
        waited = self._clocks.steady() - self._started
        if waited >= self._timeout:
            return ['no robot_description after %.0f s: remap it? (this node subscribes to '
                    "'%s')" % (waited, self._topic)]
        return ['waiting for robot_description']
