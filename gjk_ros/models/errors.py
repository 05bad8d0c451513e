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

"""The one exception type of gjk_ros.models."""

import contextlib


class ModelError(ValueError):
    """
    Geometry that cannot become a convex piece, and which body it belongs to.

    ``str(error)`` is ``'<body>: <reason>'``, one line fit for a log or a diagnostics entry.
    Resolver errors name the URI as the body; the URDF, marker and description readers re-raise
    them under the link or obstacle name, so the URI ends up in the reason.

    Attributes
    ----------
    body : str
        Link name, obstacle name ``ns/id`` or, for resolver errors, the URI.
    reason : str
        What is wrong, in words a user can act on.

    """

    def __init__(self, body: str, reason: str):
        super().__init__(f'{body}: {reason}')
        self.body = body
        self.reason = reason

    def __reduce__(self):
        # The default would call ModelError(str(self)) and lose the two fields.
        return (type(self), (self.body, self.reason))


@contextlib.contextmanager
def blame(body: str, context: str = ''):
    """
    Turn any ValueError raised inside the block into a ModelError for ``body``.

    Parameters
    ----------
    body : str
        The body the geometry belongs to.
    context : str
        Prefix for the reason, e.g. ``'collision 2 (mesh)'``.

    """
    try:
        yield
    except ModelError as error:
        reason = error.reason if error.body == body else f'{error.body}: {error.reason}'
        raise ModelError(body, _prefixed(context, reason)) from error
    except ValueError as error:
        raise ModelError(body, _prefixed(context, str(error))) from error


def _prefixed(context: str, reason: str) -> str:
    return f'{context}: {reason}' if context else reason
