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

"""The node's problem log: each problem logged once when it appears and once when it clears."""

import threading

__all__ = ['ProblemLog']


class ProblemLog:
    """
    Log each problem once, when it appears, and once more when it goes away.

    Problems are keyed; a key stays active (and silent) until ``resolve`` or ``keep_only``
    drops it, so a cycle that sees the same fault again logs nothing. At most ``capacity``
    problems are kept: beyond that, new ones are counted (``suppressed``) and one line says
    that the log is full, so hostile input cannot grow the node's memory or flood /rosout.
    """

    def __init__(self, logger, capacity=256):
        self._logger = logger
        self._active = {}
        self._capacity = capacity
        self._lock = threading.Lock()
        self.suppressed = 0

    def report(self, key, message, level='error'):
        """Log ``message`` at ``level`` ('warning' or 'error') unless ``key`` is active."""
        with self._lock:
            if key in self._active:
                return False
            if len(self._active) >= self._capacity:
                self.suppressed += 1
                if self.suppressed == 1:
                    self._logger.error('more than %d distinct problems at once; further ones '
                                       'are counted in /diagnostics, not logged'
                                       % self._capacity)
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
        with self._lock:
            found = self._active.pop(key, None) is not None
            if len(self._active) < self._capacity:
                self.suppressed = 0
        if found and message:
            self._logger.info(message)

    def keep_only(self, prefix, keys, message=None):
        """
        Resolve every active key starting with ``prefix`` that is not in ``keys``.

        ``message(key)`` gives the info line for a resolved key (None logs nothing).
        """
        with self._lock:
            mine = [key for key in self._active if _starts_with(key, prefix)]
        for key in mine:
            if key not in keys:
                self.resolve(key, message(key) if message else None)

    def is_active(self, key):
        """Whether ``key`` is currently reported."""
        return key in self._active

    def active(self, prefix=()):
        """``{key: message}`` of the active problems whose key starts with ``prefix``."""
        with self._lock:
            return {key: message for key, message in self._active.items()
                    if _starts_with(key, prefix)}


def _starts_with(key, prefix):
    """Whether a problem key (a tuple, named or not) begins with the items of ``prefix``."""
    return len(key) >= len(prefix) and all(item == wanted for item, wanted in zip(key, prefix))
