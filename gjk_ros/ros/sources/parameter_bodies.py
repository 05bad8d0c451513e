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

The texts are parsed and built by the geometry worker like any input (a mesh there is bounded
in time and memory too); their pieces are keyed ``('parameters', n)``. They are state, not a
stream: they never go silent. While they are being built the node is not ready (a missing
piece could be the closest one).
"""

from gjk_ros.ros.bodies import LINK, OBSTACLE
from gjk_ros.ros.sources.base import Source

__all__ = ['ParameterBodySource']

_TEXT_OF_KIND = {OBSTACLE: 'static_obstacles', LINK: 'link_geometry'}


class ParameterBodySource(Source):
    """
    Bodies from the parameters; rebuilt when a text or ``fixed_frame`` changes.

    Parameters
    ----------
    problems : gjk_ros.ros.problems.ProblemLog
        Where a rejected text is logged once.

    """

    def __init__(self, problems):
        super().__init__('parameters')
        self._problems = problems
        self._texts = {}
        self._fixed_frame = ''
        self._tokens = {}
        self._dirty = True

    def configure(self, config):
        texts = {kind: getattr(config, name) for kind, name in _TEXT_OF_KIND.items()}
        if (texts, config.fixed_frame) != (self._texts, self._fixed_frame):
            self._texts, self._fixed_frame = texts, config.fixed_frame
            self._dirty = True

    def submit(self, ingestor):
        if not self._dirty:
            return
        self._dirty = False
        for kind, text in self._texts.items():
            self._tokens[kind] = ingestor.submit(('param', kind), (text, self._fixed_frame))

    def owns(self, job_key):
        return job_key[0] == 'param'

    def on_result(self, result, world):
        kind = result.key[1]
        if result.token != self._tokens.get(kind):
            return  # superseded by a newer text
        del self._tokens[kind]
        entries = []
        if result.error is not None:
            self._problems.report(('parameter', kind), 'parameter bodies rejected: %s'
                                  % result.error.reason)
        else:
            self._problems.resolve(('parameter', kind))
            # A ModelError from the worker rejects its body; its reason is kept.
            entries = [(name, (self.name, index),
                        value.reason if isinstance(value, Exception) else value)
                       for name, index, value in result.value]
        world.set_pieces(kind, self.name, entries)

    def not_ready(self, now):
        return ['static_obstacles / link_geometry being built'] if self._tokens else []
