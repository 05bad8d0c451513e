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
Marker namespaces as obstacle sources, fresh or silent as Nav2's collision monitor's sources.

An *obstacle source* is a marker namespace on ``~/obstacles`` (or ``~/links``): perception
stacks publish one namespace per sensor or pipeline. A source is fresh while it published anything
(ADD, MODIFY, DELETE or DELETEALL) within ``obstacle_timeout`` seconds of receive time; a
silent source makes the pairs of its bodies STALE, whatever their marker ``lifetime`` says (a
dead publisher must never make an obstacle vanish). Namespaces matching
``static_obstacle_namespaces`` (a latched map, a fixture published once) never go stale;
parameter bodies and the URDF are not sources and never go stale. Namespaces listed in
``required_obstacle_sources`` must have published before the node is ready, and make
``~/min_distance`` -inf whenever they are silent, even when they hold no obstacle now.

Receive times and ``now`` are ROS time in integer nanoseconds (the datum an output may be
stamped with); freshness is the base's one rule, ``source_valid``.
"""

import fnmatch

from gjk_ros.ros.inputs.sources.base import source_valid
from gjk_ros.ros.inputs.timekeeping import NS_PER_S

__all__ = ['SourceMonitor']


class SourceMonitor:
    """
    Last receive time of every marker namespace, per kind ('obstacle' or 'link').

    The table is bounded: a namespace is forgotten when it holds no body any more and is not
    required (``forget_unused``).
    """

    def __init__(self):
        self._heard = {}
        self.timeout = 0.0
        self.static_patterns = ()
        self.required = ()

    def configure(self, timeout, static_patterns, required):
        """Set ``obstacle_timeout`` (0 disables), static patterns and required namespaces."""
        self.timeout = float(timeout)
        self.static_patterns = tuple(static_patterns)
        self.required = tuple(required)

    def heard(self, kind, namespace, received):
        """Record a message from a namespace received at ``received`` (ROS time, int ns)."""
        key = (kind, namespace)
        self._heard[key] = max(received, self._heard.get(key, received))

    def forget_heard(self):
        """Forget every receive time (ROS time jumped back): all sources count as unheard."""
        self._heard.clear()

    def last_heard(self, kind, namespace):
        """Receive time (int ns) of the namespace's last message, or None."""
        return self._heard.get((kind, namespace))

    def is_static(self, namespace):
        """Whether the namespace is declared static (never stale)."""
        return any(fnmatch.fnmatchcase(namespace, pattern) for pattern in self.static_patterns)

    def is_stale(self, kind, namespace, now_ns):
        """Whether the namespace has been silent for longer than ``obstacle_timeout``."""
        if self.is_static(namespace):
            return False
        return not source_valid(self._heard.get((kind, namespace)), now_ns, self.timeout)

    def required_problems(self, now_ns):
        """
        Why the required obstacle sources do not allow a measurement now.

        Returns
        -------
        list of str
            One reason per required namespace that never published or went silent.

        """
        problems = []
        for namespace in self.required:
            last = self._heard.get(('obstacle', namespace))
            if last is None:
                problems.append("required obstacle source '%s' has not published" % namespace)
            elif self.is_stale('obstacle', namespace, now_ns):
                problems.append("required obstacle source '%s' silent for %.1f s"
                                % (namespace, (now_ns - last) / NS_PER_S))
        return problems

    def heard_times(self):
        """``{(kind, namespace): receive time of its last message, ns}``."""
        return dict(self._heard)

    def forget_unused(self, used):
        """Drop namespaces not in ``used`` (a set of (kind, ns)) and not required."""
        required = {('obstacle', ns) for ns in self.required}
        for key in [key for key in self._heard if key not in used and key not in required]:
            del self._heard[key]
