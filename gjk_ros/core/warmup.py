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
Compile (or load from numba's cache) every kernel entry point the package calls.

The core's kernels compile on first use: a minute or more on a fresh install, which a node
would otherwise spend before its first distances. ``warm_up`` runs one tiny query through each
entry point (a PairSet update, tracked and cold, separated and overlapping; a sequence update;
single ``signed_distance`` calls) with the argument types the package uses, so that numba
compiles them once and caches them next to the sources. ``make install`` runs it (``gjk-ros
warmup``); a colcon user runs ``ros2 run gjk_ros gjk-ros warmup`` once after building, or lets
the first node start pay it. On a read-only install numba caches in ``NUMBA_CACHE_DIR`` instead
(set it to a writable folder, e.g. ``~/.cache/gjk_ros/numba``, for the node and the warm-up).
"""

import time

import numpy

from .cache import SimplexCache
from .distance import signed_distance
from .pairset import PairSet
from .polytope import ConvexPolytope

__all__ = ['warm_up']


def _bodies():
    """Return a box, a sphere, a cylinder and a point hull: every kind of support."""
    points = numpy.random.default_rng(0).normal(size=(40, 3))
    return [ConvexPolytope.box([0.1, 0.1, 0.1]), ConvexPolytope.sphere(0.1),
            ConvexPolytope.cylinder(0.1, 0.3), ConvexPolytope.from_points(points)]


def warm_up():
    """
    Run every entry point once; return the seconds it took.

    Separated and overlapping poses are both used, so GJK and EPA are compiled.
    """
    started = time.perf_counter()
    bodies = _bodies()
    pairs = numpy.array([[0, 1], [0, 2], [0, 3], [1, 2]], dtype=numpy.int64)
    for hill_climb in (True, False):
        for tracking in (True, False):
            pair_set = PairSet(bodies, pairs, hill_climb=hill_climb, tracking=tracking)
            for gap in (0.5, 0.0):  # apart, then overlapping (EPA)
                poses = numpy.tile(numpy.eye(4), (len(bodies), 1, 1))
                poses[:, 0, 3] = numpy.arange(len(bodies)) * gap
                pair_set.update(poses)
                pair_set.update(poses, active=numpy.ones(len(pairs), dtype=bool),
                                max_distance=1.0)
    pair_set.update_sequence(numpy.tile(numpy.eye(4), (2, len(bodies), 1, 1)))
    apart = numpy.eye(4)
    apart[0, 3] = 0.5
    for pose in (apart, numpy.eye(4)):
        cache = SimplexCache()
        signed_distance(bodies[0], numpy.eye(4), bodies[3], pose, cache)
        signed_distance(bodies[0], numpy.eye(4), bodies[3], pose, cache)
        signed_distance(bodies[1], numpy.eye(4), bodies[2], pose)
    return time.perf_counter() - started
