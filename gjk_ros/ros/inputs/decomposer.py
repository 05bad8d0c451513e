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
Opt-in convex decomposition of the node's non-convex meshes, off the compute path.

A piece whose shape is the hull of a non-convex mesh file (``CollisionPiece.mesh``) and whose URI
matches a ``decompose_meshes`` pattern is replaced, in the tracker's layout, by its CoACD parts
once they are known. Until then the body is measured with its hull, which is conservative (the
hull contains the mesh, so a distance is never larger than the true one) and the diagnostics say
which meshes are still waiting.

CoACD takes seconds to minutes per mesh, so it runs in a geometry worker of its own (an
``Ingestor`` whose time limit is ``decomposition_timeout``): a long decomposition never delays
the ingestion of markers or of the robot description. Parts are cached on disk keyed by the
mesh content and the settings (gjk_ros.models.decomposition), so a restart reads them back in
milliseconds. The worker process is started only when some pattern is set.
"""

import fnmatch

from gjk_ros.ros.inputs.ingestion import Mailbox
from gjk_ros.ros.inputs.jobs import DecomposeJob

__all__ = ['MeshDecomposer']

# Finished decompositions taken per poll (each is a few polytopes, already built).
MAX_RESULTS_PER_POLL = 64


class MeshDecomposer:
    """
    Which meshes to decompose, their parts once known, and the worker that computes them.

    Parameters
    ----------
    make_worker : callable(IngestLimits) -> Ingestor
        Builds the decomposition worker (called once, when a pattern is first set).

    """

    def __init__(self, make_worker):
        self._make_worker = make_worker
        self._worker = None
        self._settings = ((), None, '')
        self._parts = {}       # (uri, scale) -> tuple of ConvexPolytope
        self._failures = {}    # (uri, scale) -> reason
        self._requested = set()
        self._mailbox = Mailbox()
        self.version = 0
        """Increases whenever parts arrive or the settings change (the layout must rebuild)."""

    def configure(self, patterns, threshold, cache_dir, limits):
        """
        Apply the parameters; new settings forget every known part (they were for others).

        Parameters
        ----------
        patterns : tuple of str
            fnmatch patterns of mesh URIs to decompose (``decompose_meshes``); empty: none.
        threshold : float
            CoACD's concavity threshold.
        cache_dir : str
            Folder of the part cache; '' for the default.
        limits : IngestLimits
            The worker's limits, with ``job_timeout_s`` the decomposition time limit.

        """
        settings = (tuple(patterns), float(threshold), cache_dir)
        if settings != self._settings:
            self._settings = settings
            self._parts, self._failures, self._requested = {}, {}, set()
            self.version += 1
        if patterns and self._worker is None:
            self._worker = self._make_worker(limits)
        elif self._worker is not None:
            self._worker.set_limits(limits)

    def wants(self, piece):
        """Whether ``piece`` is the hull of a mesh that ``decompose_meshes`` selects."""
        patterns = self._settings[0]
        return bool(piece.mesh) and any(fnmatch.fnmatchcase(piece.mesh[0], pattern)
                                        for pattern in patterns)

    def parts_for(self, piece):
        """
        Return the convex parts replacing ``piece``, or None to keep its shape.

        A wanted mesh without parts yet is queued for decomposition (once).
        """
        if not self.wants(piece):
            return None
        key = piece.mesh
        parts = self._parts.get(key)
        if parts is None and key not in self._failures and key not in self._requested:
            self._submit(key)
        return parts

    def _submit(self, key):
        uri, scale = key
        _, threshold, cache_dir = self._settings
        self._worker.submit(DecomposeJob(uri, scale, threshold, cache_dir), self._mailbox)
        self._requested.add(key)

    def poll(self):
        """Take finished decompositions; True if any arrived (the layout must rebuild)."""
        if self._worker is None:
            return False
        arrived = False
        for result in self._mailbox.take(MAX_RESULTS_PER_POLL):
            key = (result.job.uri, result.job.scale)
            if key not in self._requested:
                continue  # for settings that changed since
            self._requested.discard(key)
            if result.error is not None:
                self._failures[key] = result.error.reason
            else:
                self._parts[key] = result.value
            arrived = True
        if arrived:
            self.version += 1
        return arrived

    def waiting(self):
        """Return the URIs whose decomposition is queued or running (their bodies use the hull)."""
        return sorted({uri for uri, _ in self._requested})

    def failures(self):
        """Return ``{uri: reason}`` of the failed decompositions (those bodies keep the hull)."""
        return {uri: reason for (uri, _), reason in self._failures.items()}

    def close(self):
        """Stop the worker, if one was started."""
        if self._worker is not None:
            self._worker.close()
