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
The parameter source: bodies declared in ``static_obstacles`` and ``link_geometry``.

Each text is parsed once, by the parameter layer that validated it (``params.parsed_bodies``),
and its bodies are built by the geometry worker like any input (a mesh there is bounded in
time and memory too). They are state, not a stream: they never go stale. While they are being
built the node is not ready (a missing piece could be the closest one).
"""

from gjk_ros.ros.compute.bodies import LINK, OBSTACLE
from gjk_ros.ros.inputs.ingestion import Mailbox
from gjk_ros.ros.inputs.jobs import BodyTextJob
from gjk_ros.ros.inputs.sources.base import PieceKey, Source, SourcePiece, state_data
from gjk_ros.ros.params import parsed_bodies

__all__ = ['ParameterBodySource']

_TEXT_OF_KIND = {OBSTACLE: 'static_obstacles', LINK: 'link_geometry'}


class ParameterBodySource(Source):
    """
    Bodies from the parameters; rebuilt when a text or ``fixed_frame`` changes.

    Parameters
    ----------
    context : SourceContext
        The geometry worker, and the problem log (a rejected text is logged once).

    """

    def __init__(self, context):
        super().__init__('parameters', context)
        self._mailbox = Mailbox()
        self._texts = {}
        self._fixed_frame = ''
        self._tokens = {}
        self._pieces = {LINK: (), OBSTACLE: ()}
        self._mesh = None
        self._mesh_uses = {LINK: (), OBSTACLE: ()}
        self._data = None

    def configure(self, config):
        texts = {kind: getattr(config, name) for kind, name in _TEXT_OF_KIND.items()}
        limits = config.ingest_limits()
        # Built again when a text, the frame or how meshes are built (mesh_mode) changes.
        if (texts, config.fixed_frame, limits.mesh) == (self._texts, self._fixed_frame,
                                                        self._mesh):
            return
        self._texts, self._fixed_frame, self._data = texts, config.fixed_frame, None
        self._mesh = limits.mesh
        for kind, text in texts.items():
            problem = ('parameter', kind)
            try:
                bodies = parsed_bodies(text, limits)
            except ValueError as error:
                self._context.problems.report(problem, 'parameter bodies rejected: %s' % error)
                self._tokens.pop(kind, None)
                self._pieces[kind] = ()
                continue
            self._context.problems.resolve(problem)
            self._tokens[kind] = self._context.ingestor.submit(
                BodyTextJob(kind, bodies, config.fixed_frame), self._mailbox)

    def collect(self, now_ns, frames):
        for result in self._mailbox.take(len(_TEXT_OF_KIND)):
            kind = result.job.kind
            if result.token == self._tokens.get(kind):
                del self._tokens[kind]
                self._apply(kind, result)
                self._data = None
        if self._data is None:
            not_ready = ['static_obstacles / link_geometry being built'] if self._tokens else []
            self._data = state_data(self._pieces[LINK] + self._pieces[OBSTACLE],
                                    self._fixed_frame, not_ready)
        return self._data

    def _apply(self, kind, result):
        problem = ('parameter', kind)
        if result.error is not None:
            self._context.problems.report(problem, 'parameter bodies rejected: %s'
                                          % result.error.reason)
            self._pieces[kind], self._mesh_uses[kind] = (), ()
            return
        self._context.problems.resolve(problem)
        self._mesh_uses[kind] = tuple(entry.mesh_use for entry in result.value
                                      if entry.mesh_use is not None)
        # A body the worker rejected keeps its reason (the body is INVALID).
        self._pieces[kind] = tuple(
            SourcePiece(kind, entry.body, PieceKey(self.name, (kind, entry.body, entry.index)),
                        entry.piece, entry.error)
            for entry in result.value)

    def mesh_uses(self):
        """Return the ``MeshUse`` of each non-convex mesh of the parameter bodies."""
        return list(self._mesh_uses[LINK] + self._mesh_uses[OBSTACLE])
