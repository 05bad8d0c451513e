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
Latest-only mailboxes between the subscription callbacks and the compute timer.

Callbacks only store; the timer takes what arrived since the last cycle. Markers are coalesced
per (ns, id), so a flood of messages about the same marker costs one conversion per cycle,
however many messages arrived.
"""

__all__ = ['MarkerInbox', 'ProblemLog']

# visualization_msgs/Marker.DELETEALL; kept here so this module needs no message import.
_DELETEALL = 3


class MarkerInbox:
    """
    Pending marker operations since the last cycle, coalesced.

    ``take()`` returns the namespaces cleared by DELETEALL (an empty string clears every
    namespace) and the latest (marker, receive time) of each (ns, id) that arrived after the
    clears that concern it. Applying the clears first and then the markers gives the same
    result as applying every message in order.
    """

    def __init__(self):
        self._pending = {}
        self._clears = []
        self.last_received = None
        self.messages = 0

    def put(self, marker, received):
        """Store one marker (any action)."""
        self.last_received = received
        if marker.action == _DELETEALL:
            self._clear(marker.ns)
        else:
            self._pending[(marker.ns, marker.id)] = (marker, received)

    def _clear(self, namespace):
        if not namespace:
            self._pending.clear()
            self._clears = ['']
            return
        self._pending = {key: value for key, value in self._pending.items()
                         if key[0] != namespace}
        if namespace not in self._clears:
            self._clears.append(namespace)

    def take(self):
        """
        Hand the pending operations over and empty the inbox.

        Returns
        -------
        tuple of (list of str, list of (Marker, float))

        """
        clears, markers = self._clears, list(self._pending.values())
        self._clears, self._pending = [], {}
        return clears, markers


class ProblemLog:
    """
    Log each problem once, when it appears, and once more when it goes away.

    Problems are keyed; a key stays active (and silent) until ``resolve`` or ``keep_only``
    drops it, so a cycle that sees the same fault again logs nothing.
    """

    def __init__(self, logger):
        self._logger = logger
        self._active = {}

    def report(self, key, message, level='error'):
        """Log ``message`` at ``level`` ('warning' or 'error') unless ``key`` is active."""
        if key in self._active:
            return False
        self._active[key] = message
        # rclpy fixes the severity of each logging call site, hence one call per level.
        if level == 'error':
            self._logger.error(message)
        else:
            self._logger.warning(message)
        return True

    def resolve(self, key, message=None):
        """Drop ``key``; log ``message`` (info) if it was active."""
        if self._active.pop(key, None) is not None and message:
            self._logger.info(message)

    def keep_only(self, prefix, keys, message=None):
        """
        Resolve every active key starting with ``prefix`` that is not in ``keys``.

        ``message(key)`` gives the info line for a resolved key (None logs nothing).
        """
        for key in [key for key in self._active if key[:len(prefix)] == prefix]:
            if key not in keys:
                self.resolve(key, message(key) if message else None)

    def is_active(self, key):
        """Whether ``key`` is currently reported."""
        return key in self._active
