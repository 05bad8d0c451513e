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
Cost of one ``signed_distance`` call from Python (a planner's loop), against coal's.

Two random hulls, separated, B translating a little per call (a tracked sequence). Each method
runs the whole sequence, one Python call per step, ``--repeats`` times; the table gives the
median of the per-call means, with the mean GJK iterations and support calls of gjk_ros. coal
gets its transforms ready-made (not timed); gjk_ros takes the (4, 4) arrays as they are.

Like with like: coal's ``ComputeDistance`` is a functor bound to two shapes that returns the
distance and fills a result object it was handed; ``DistanceQuery`` is gjk_ros's (bound to two
bodies, returns the distance, the full answer on request). ``signed_distance`` is the one-off
function, which builds a ``DistanceResult`` (witness arrays and all) at every call. Run::

    .venv/bin/python -m bench.single_call

It writes ``bench/results/single_call.md``.
"""

import argparse
import os
import platform
import statistics
import time

from gjk_ros.core import ConvexPolytope, DistanceQuery, signed_distance, SimplexCache
import numpy

QUERY_TRACKED = 'gjk_ros DistanceQuery, tracked'
QUERY_COLD = 'gjk_ros DistanceQuery, cold (tracking=False)'
CALL_TRACKED = 'gjk_ros signed_distance, tracked (SimplexCache)'
CALL_COLD = 'gjk_ros signed_distance, cold (cache=None)'
COAL_WARM = 'coal ComputeDistance, CachedGuess + updateGuess'
COAL_COLD = 'coal ComputeDistance, DefaultGuess'
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results',
                       'single_call.md')


def hull_points(count, seed):
    """Return ``count`` points on a unit sphere (all hull vertices), scaled to 0.1."""
    points = numpy.random.default_rng(seed).normal(size=(count, 3))
    return 0.1 * points / numpy.linalg.norm(points, axis=1, keepdims=True)


def sequence(steps):
    """Return poses of B: 0.3 apart along x (0.1 gap), swaying 2 cm along y (0.6 mm per step)."""
    poses = numpy.tile(numpy.eye(4), (steps, 1, 1))
    poses[:, 0, 3] = 0.3
    poses[:, 1, 3] = 0.02 * numpy.sin(2.0 * numpy.pi * numpy.arange(steps) / 200.0)
    return list(poses)


def time_ours(a, b, poses, tracked):
    """Return (seconds per call, distances, iterations, support calls) of one run."""
    pose_a = numpy.eye(4)
    cache = SimplexCache() if tracked else None
    results = []
    start = time.perf_counter()
    for pose_b in poses:
        results.append(signed_distance(a, pose_a, b, pose_b, cache))
    seconds = (time.perf_counter() - start) / len(poses)
    return (seconds, [r.distance for r in results], [r.iterations for r in results],
            [r.support_calls for r in results])


def time_query(a, b, poses, tracked):
    """Return (seconds per call, distances, iterations, support calls) of a DistanceQuery run."""
    pose_a = numpy.eye(4)
    query = DistanceQuery(a, b, tracking=tracked)
    distances = []
    start = time.perf_counter()
    for pose_b in poses:
        distances.append(query(pose_a, pose_b))
    seconds = (time.perf_counter() - start) / len(poses)
    # The counters, from a second pass outside the clock (reading them costs a DistanceResult).
    query.reset()
    counters = [(query(pose_a, pose_b), query.result())[1] for pose_b in poses]
    return (seconds, distances, [r.iterations for r in counters],
            [r.support_calls for r in counters])


def time_coal(points_a, points_b, poses, warm):
    """Return (seconds per call, distances) of coal's ComputeDistance over the sequence."""
    import coal

    shapes = []
    for points in (points_a, points_b):
        vector = coal.StdVec_Vec3s()
        vector.extend(list(points))
        shapes.append(coal.ConvexBase.convexHull(vector, False, ''))
    functor = coal.ComputeDistance(shapes[0], shapes[1])
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    request.enable_signed_distance = True
    if warm:
        request.gjk_initial_guess = coal.GJKInitialGuess.CachedGuess
    tf_a = coal.Transform3s()
    transforms = [coal.Transform3s(p[:3, :3].copy(), p[:3, 3].copy()) for p in poses]
    distances = []
    start = time.perf_counter()
    for tf_b in transforms:
        result.clear()
        distances.append(functor(tf_a, tf_b, request, result))
        if warm:
            request.updateGuess(result)
    return (time.perf_counter() - start) / len(poses), distances


def measure(vertices, steps, repeats):
    """Return the table rows of one body size."""
    points_a, points_b = hull_points(vertices, 1), hull_points(vertices, 2)
    a, b = ConvexPolytope.from_points(points_a), ConvexPolytope.from_points(points_b)
    poses = sequence(steps)
    rows, reference = [], None
    for name, timer, tracked in ((QUERY_TRACKED, time_query, True),
                                 (QUERY_COLD, time_query, False),
                                 (CALL_TRACKED, time_ours, True),
                                 (CALL_COLD, time_ours, False)):
        runs = [timer(a, b, poses, tracked) for _ in range(repeats)]
        distances = runs[-1][1]
        if reference is None:
            reference = distances
        rows.append((vertices, name, statistics.median(r[0] for r in runs) * 1e6,
                     numpy.mean(runs[-1][2]), numpy.mean(runs[-1][3]),
                     max(abs(x - y) for x, y in zip(distances, reference))))
    try:
        for name, warm in ((COAL_WARM, True), (COAL_COLD, False)):
            runs = [time_coal(points_a, points_b, poses, warm) for _ in range(repeats)]
            rows.append((vertices, name, statistics.median(r[0] for r in runs) * 1e6,
                         None, None, max(abs(x - y) for x, y in zip(runs[-1][1], reference))))
    except ImportError:
        pass  # coal is a bench requirement only
    return rows


def markdown(rows, steps, repeats):
    """Return the report as Markdown."""
    lines = ['# Single-pair call cost: DistanceQuery, signed_distance and coal', '',
             f'{steps} calls per run, median of {repeats} runs; {platform.machine()}, '
             f'{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}. '
             '`|d - d_tracked|` compares each answer with gjk_ros tracked.', '',
             '| vertices | method | us per call | GJK iterations | support calls '
             '| max abs(d - d_tracked) |',
             '|---:|---|---:|---:|---:|---:|']
    for vertices, name, micro, iterations, supports, error in rows:
        iterations = '-' if iterations is None else f'{iterations:.2f}'
        supports = '-' if supports is None else f'{supports:.2f}'
        lines.append(f'| {vertices} | {name} | {micro:.2f} | {iterations} | {supports} '
                     f'| {error:.1e} |')
    return '\n'.join(lines) + '\n'


def main(argv=None):
    """Measure, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--vertices', type=int, nargs='+', default=[8, 2048])
    parser.add_argument('--steps', type=int, default=2000)
    parser.add_argument('--repeats', type=int, default=7)
    parser.add_argument('--output', default=RESULTS)
    args = parser.parse_args(argv)
    rows = [row for vertices in args.vertices
            for row in measure(vertices, args.steps, args.repeats)]
    text = markdown(rows, args.steps, args.repeats)
    print(text)
    if args.output:
        with open(args.output, 'w', encoding='utf-8') as stream:
            stream.write(text)


if __name__ == '__main__':
    main()
