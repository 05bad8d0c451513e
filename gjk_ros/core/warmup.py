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
Compile the core's kernels ahead of use, each group where it is needed, in parallel processes.

The core's kernels are compiled on first use and cached (``cache=True``); the first,
uncached compilation of the tracked query takes most of a minute, because its hot path is
inlined. The kernels come in groups by who runs them, so that nobody waits for kernels it
never calls:

- ``pairset``: the node's cycle (``BodyPairs.update`` with an input mask: ``PairSet.update``
  and the body-pair reduction), the pose check of its frames, its records' closing speeds
  (``core.closing.record_rates``) and their two passes (``core.record_passes``);
- ``points``: the observation sources' point kernels (clouds and scans);
- ``planning``: the planner's chain, collision checks and sequences;
- ``signed_distance``: the single-pair API;
- ``swept``: swept distances between two samples (``core.swept``, ``core.interpolation``);
- ``meshes``: exact non-convex meshes (``core.mesh_body``: the tracked link-versus-mesh step and
  its rebuild; ``core.winding``), which the planner's exact mesh obstacles run.

``NODE_GROUPS`` are what the node runs. ``gjk-ros warmup`` compiles them once after an install
(``make install`` does; a colcon user runs ``ros2 run gjk_ros gjk-ros warmup`` after ``colcon
build``), ``gjk-ros warmup --all`` every group; later processes only load them. Each group runs
the public API on a few bodies, so the argument types are exactly those of a real call; a new
argument type would be a new specialisation, compiled on first use again.

The groups are compiled in separate processes, one per core, because a numba compilation is
single-threaded and holds the GIL. Where a group calls another group's kernels that are not
inlined (the planner's sequences call the node's ``PairSet.update`` kernel), it starts only
once that group is compiled, and loads them from the cache instead of compiling them again;
other groups fill the cores meanwhile.

Where the cache goes: the user's cache, in a folder keyed by a digest of the core's sources
(``~/.cache/gjk_ros/core-<digest>``, see ``_jit.py``), so the warm-up is per user: run it as
the user who runs the node (or with NUMBA_CACHE_DIR pointing at a shared writable folder).
"""

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
import itertools
import os
import time

import numpy as np

__all__ = ['warm_up', 'warm_up_group', 'GROUPS', 'NODE_GROUPS', 'cache_directory']

# Every group, in the order they are handed to the worker processes: the node's first.
GROUPS = ('pairset', 'points', 'planning', 'signed_distance', 'swept', 'meshes')
# The groups the distance node runs.
NODE_GROUPS = ('pairset', 'points')
# A group that calls another group's non-inlined kernels, and that group.
_AFTER = {'planning': 'pairset', 'swept': 'pairset'}


def _bodies():
    """Return one body of each kind the kernels branch on (types do not depend on the kind)."""
    from .polytope import ConvexPolytope
    return [ConvexPolytope.box([0.1, 0.1, 0.1]), ConvexPolytope.cylinder(0.05, 0.2),
            ConvexPolytope.sphere(0.05)]


def _poses(count, spacing):
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, 0, 3] = spacing * np.arange(count)
    return poses


def _warm_pairset():
    """Compile the node's cycle: BodyPairs.update with an input mask, and the pose check."""
    from .bodypairs import BodyPairs
    from .rigid import valid_pose_mask
    bodies = _bodies()
    engine = BodyPairs(bodies, [[(0, 2)], [(1, 2)], [(0, 1)]], [0.0, 0.01, 0.0],
                       [0.0, 0.0, 0.0])
    poses = _poses(len(bodies), 0.15)
    valid_pose_mask(poses)
    engine.update(poses, np.array([True, False, True]), max_distance=1.0)
    # A large update shares its groups with a worker thread (pairset.py): that kernel too.
    engine.pair_set._update_shared(poses, np.array([True, False, True]), 1.0)
    _warm_record_rates(poses)
    _warm_record_passes()


def _warm_record_passes():
    """Compile the records' two passes with the node's argument types (compute/pairs.py)."""
    from .record_passes import fold_answers, smallest_bound
    octets, words = np.zeros((2, 160), dtype=np.uint8), np.zeros((2, 20))
    singles, tables = np.zeros((2, 40), dtype=np.float32), np.ones(256, dtype=bool)
    columns, codes = np.arange(3, dtype=np.int64), np.arange(6, dtype=np.int64)
    fold_answers(codes[:2], columns[:2], columns[1:], columns[:2], columns[:2],
                 np.zeros((2, 11)), np.zeros(2, dtype=np.int8), tables, tables, codes, words,
                 columns, columns, singles, columns, octets, 112)
    smallest_bound(octets, 112, words, columns, tables, 1, 2, 1.0)


def _warm_record_rates(poses):
    """Compile the records' closing speeds with the node's argument types (closing_speeds.py)."""
    from .closing import record_rates
    from .interpolation import FrameMotion
    count = len(poses)
    motion = FrameMotion(poses, poses)
    pairs = np.array([[0, 2], [1, 2]], dtype=np.int64)
    words = np.zeros((2, 20))
    rows = np.array([0, -1, 1], dtype=np.int64)
    at_rest = np.array([False, True, False])
    for robot, work in ((np.empty(2), np.empty(count)), (np.zeros(0), np.zeros(0))):
        record_rates(motion.arrays() + (np.ones(count),), rows, at_rest, pairs,
                     np.array([[0, 1], [1, 2]], dtype=np.int64), np.zeros(2, dtype=np.uint8),
                     np.ones(256, dtype=bool), words, np.arange(0, 19, 3, dtype=np.int64),
                     robot, (poses, np.zeros((count, 3)), np.ones(count)), work)


def _warm_signed_distance():
    """Compile signed_distance, cold and tracked."""
    from .cache import SimplexCache
    from .distance import signed_distance
    box, cylinder, _ = _bodies()
    pose_a, pose_b = _poses(2, 0.12)
    cache = SimplexCache()
    for _ in range(2):
        signed_distance(box, pose_a, cylinder, pose_b, cache)
    signed_distance(box, pose_a, box, pose_b, hill_climb=False)


def _warm_planning():
    """Compile the chain FK, the collision checks and the planner's sequences."""
    from .bodypairs import BodyPairs
    from .chain import chain_forward, place_sequence
    from .collision import check_arrays, configurations_hit, segment_hit
    from .pairset import PairSet
    bodies = _bodies()
    engine = BodyPairs(bodies, [[(0, 2)], [(1, 2)]], [0.0, 0.01], [0.0, 0.0])
    poses = _poses(len(bodies), 0.3)
    # A one-joint chain moving bodies 0 and 1, body 2 an obstacle: the real calls' types.
    chain = (np.array([[0, 1, 0, 0]], np.int64), np.eye(4)[None].copy(),
             np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0]]))
    placement = (np.array([1, 1, -1], np.int64), np.array([0, 0, 0], np.int64), poses.copy(),
                 np.eye(4), _poses(1, 0.3))
    work = (np.empty((2, 4, 4)), np.empty((3, 4, 4)), np.empty((2, 4, 4)))
    links = np.empty((2, 2, 4, 4))
    chain_forward(np.zeros((2, 1)), np.eye(4), *chain, links, work[2])
    place_sequence(links, placement[4][None], placement[0], placement[1], placement[2],
                   np.empty((2, 3, 4, 4)))
    arrays = check_arrays(engine, 1)
    qs = np.array([[0.0], [0.5]])
    configurations_hit(qs, chain, placement, work, *arrays.pair_arguments(), 0.0,
                       arrays.hit_buffer(2), arrays.stats)
    segment_hit(qs[0], qs[1], chain, placement, work, *arrays.segment_arguments(
        np.ones((2, 1))), 0.0, 1e-4, arrays.stats)
    # These call the node's PairSet.update kernel, which the pairset group compiles (_AFTER).
    engine.update(poses, max_distance=1.0)
    engine.update_sequence(poses[None], engine.answer_arrays(1))
    PairSet(bodies, [[0, 1], [1, 2]]).update_sequence(np.stack([poses, poses]))


def _warm_points():
    """Compile the point distance kernels (observation sources), every cloud layout."""
    from .point_distance import PointDistanceShape
    from .point_grid import CloudGatherer, PointGrid
    from .point_tracking import NearestTracker, PackedShapes
    rng = np.random.default_rng(0)
    points = rng.normal(size=(16, 3))
    everything = np.arange(16, dtype=np.int64)
    gatherer = CloudGatherer()
    for dtype, count in itertools.product(('<f4', '<f8'), (16, 1)):
        # Strided columns of a packed record, as a PointCloud2's bytes give them: read-only
        # views of the message's bytes (a node's), or of a writable array (a caller's); numpy
        # calls a one-point column contiguous, and numba compiles that layout apart.
        record = np.zeros(count, dtype=[('x', dtype), ('y', dtype), ('z', dtype), ('i', '<f4')])
        for packed in (record, np.frombuffer(record.tobytes(), dtype=record.dtype)):
            for voxel in (0.0, 0.1):
                gatherer.gather(packed['x'], packed['y'], packed['z'], np.eye(4),
                                (0.0, np.inf), (-np.inf, np.inf), voxel)
    # Contiguous float64 columns: a laser scan's, and an empty cloud's.
    gatherer.gather(*points.T.copy(), np.eye(4), (0.0, np.inf), (-np.inf, np.inf), 0.0)
    for body in _bodies():
        shape = PointDistanceShape(body)
        shape.signed_distances(points, np.eye(4))
        shape.within(points, np.eye(4), everything, 0.01)
        grid = PointGrid(points)
        grid.nearest(shape, np.eye(4), hint=0)
        grid.remove_near([(shape, np.eye(4))], 0.01)
        grid.kept()
        # A cloud's per-piece work in one call, as the observation sources make it.
        tracker = NearestTracker(PointGrid(points, sort=False), PackedShapes([shape]))
        tracker.filter_and_anchor(np.eye(4)[None], 0.01)
        tracker.nearest(np.eye(4)[None], np.zeros(1, dtype=np.int64))


def _warm_swept():
    """Compile the swept distances: frame motion, sphere bounds and the sweep, from end rows."""
    from .bodypairs import BodyPairs
    from .interpolation import FrameMotion
    from .swept import pair_rows, SweptPairs
    bodies = _bodies()
    engine = BodyPairs(bodies, [[(0, 2)], [(1, 2)]], [0.0, 0.01], [0.0, 0.0])
    start_poses, end_poses = _poses(len(bodies), 0.15), _poses(len(bodies), 0.12)
    end_poses[0, :3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    swept = SweptPairs.from_engine(engine, np.arange(len(bodies)))
    motion = FrameMotion(start_poses, end_poses)
    motion.poses(0.5)
    motion.velocities(0.01)
    engine.update(start_poses)
    start = pair_rows(engine.pair_set)
    engine.update(end_poses)
    swept.update(motion, start, pair_rows(engine.pair_set))
    swept.update(motion, max_distance=1.0)


def _warm_meshes():
    """Compile the exact mesh kernels: winding numbers, the tracked step and its rebuild."""
    from .mesh_body import MeshBody, MeshDistance
    from .winding import winding_numbers
    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    triangles = corners[faces]
    winding_numbers(np.array([[0.1, 0.1, 0.1], [2.0, 2.0, 2.0]]), triangles)
    link = _bodies()[0]
    for mesh in (MeshBody.from_triangles(triangles), MeshBody.from_mesh(triangles)):
        pair = MeshDistance(link, mesh)
        for x in (0.6, 0.55, 0.2, 3.0):
            pose = np.eye(4)
            pose[:3, 3] = x
            pair(pose, np.eye(4))


_WARMERS = {'pairset': _warm_pairset, 'swept': _warm_swept, 'meshes': _warm_meshes,
            'signed_distance': _warm_signed_distance,
            'planning': _warm_planning, 'points': _warm_points}


def warm_up_group(name):
    """
    Compile (or load from the cache) the kernels of one group in this process.

    Returns the seconds it took.
    """
    started = time.perf_counter()
    _WARMERS[name]()
    return time.perf_counter() - started


def warm_up(groups=NODE_GROUPS, jobs=None, extra=None):
    """
    Compile the kernels of ``groups`` into numba's cache, in parallel processes.

    Parameters
    ----------
    groups : sequence of str
        Names from ``GROUPS`` (default: the node's, ``NODE_GROUPS``); compiled in the order of
        ``GROUPS``.
    jobs : int, optional
        Processes to compile in (default: one per core, at most one per group). 1 compiles in
        this process, which then needs no compilation later either.
    extra : dict of str to callable, optional
        More warm-ups to run alongside, by name: module-level functions (a process pool must
        be able to pickle them) that take no argument and return their seconds (the mesh
        checks of ``gjk_ros.models``, which this layer cannot import).

    Returns
    -------
    dict
        Seconds per group, then per ``extra`` name.

    Raises
    ------
    ValueError
        For a name that is not a group.

    """
    unknown = sorted(set(groups) - set(GROUPS))
    if unknown:
        raise ValueError(f'groups: unknown {unknown}; the groups are {list(GROUPS)}')
    tasks = {name: _WARMERS[name] for name in GROUPS if name in groups}
    tasks.update(extra or {})
    if jobs is None:
        jobs = min(len(tasks), os.cpu_count() or 1)
    if jobs <= 1 or len(tasks) <= 1:
        return {name: _timed(task) for name, task in tasks.items()}
    # Separate processes: numba compiles on one thread and holds the GIL while doing it.
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        seconds = _run_in_order(pool, jobs, tasks)
    return {name: seconds[name] for name in tasks}


def _run_in_order(pool, jobs, tasks):
    """Run ``tasks`` (name to function) on ``jobs`` processes, each after its ``_AFTER``."""
    waiting, running, seconds = list(tasks), {}, {}
    while waiting or running:
        for name in list(waiting):
            blocked = _AFTER.get(name) in set(waiting) | set(running.values())
            if len(running) < jobs and not blocked:
                running[pool.submit(_timed, tasks[name])] = name
                waiting.remove(name)
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            seconds[running.pop(future)] = future.result()
    return seconds


def _timed(task):
    started = time.perf_counter()
    task()
    return time.perf_counter() - started


def cache_directory():
    """Return the folder numba keeps the core's compiled kernels in, for this user."""
    from ._jit import cache_directory as locate
    return locate()
