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
What convex decomposition buys: distance error of the hull vs CoACD parts, and the cost.

Two non-convex meshes built from boxes: an L bracket and a bin (a floor and four walls, open at
the top). A point probe follows a seeded smooth path through the bounding box (into the bin and
the L's notch); at each step gjk_ros measures the signed distance to (a) the mesh's convex hull,
one tracked piece, and (b) the CoACD parts, one tracked piece each (minimum over parts).

Exact: the distance to the true mesh from trimesh.proximity.closest_point (needs ``rtree``),
checked against the analytic distance to the union of boxes; only probe positions outside the
mesh count (inside it, the union's signed distance is not what either method reports).

Cost: CoACD's time on a cold cache and the time to load the parts from the cache, and the
tracked query time per step for the hull and for the parts.

Run: ``.venv/bin/python -m bench.decomposition_bench`` (bench extras ``coacd``, ``rtree``);
writes bench/results/decomposition.md and .csv.
"""

import argparse
import csv
import os
import tempfile
import time

import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')


def _box(size, centre):
    import trimesh
    transform = numpy.eye(4)
    transform[:3, 3] = centre
    return trimesh.creation.box(size, transform), (numpy.asarray(centre, float),
                                                   numpy.asarray(size, float) / 2.0)


def meshes():
    """{name: (trimesh mesh, [(centre, half extents)] of its boxes)}."""
    shapes = {
        'L bracket': [((0.4, 0.1, 0.1), (0.15, 0.0, 0.0)), ((0.1, 0.1, 0.4), (0.0, 0.0, 0.15))],
        'bin': [((0.5, 0.4, 0.02), (0.0, 0.0, 0.0)),
                ((0.02, 0.4, 0.3), (-0.24, 0.0, 0.16)), ((0.02, 0.4, 0.3), (0.24, 0.0, 0.16)),
                ((0.46, 0.02, 0.3), (0.0, -0.19, 0.16)), ((0.46, 0.02, 0.3), (0.0, 0.19, 0.16))],
    }
    import trimesh
    out = {}
    for name, boxes in shapes.items():
        parts = [_box(size, centre) for size, centre in boxes]
        out[name] = (trimesh.util.concatenate([p[0] for p in parts]), [p[1] for p in parts])
    return out


def box_union_distance(points, boxes):
    """Exact distance from points outside every box to the union of boxes (0 inside one)."""
    best = numpy.full(len(points), numpy.inf)
    for centre, half in boxes:
        outside = numpy.maximum(numpy.abs(points - centre) - half, 0.0)
        best = numpy.minimum(best, numpy.linalg.norm(outside, axis=1))
    return best


def probe_path(mesh, steps, seed):
    """Return a smooth Lissajous path through the bounding box grown by 0.1 m."""
    rng = numpy.random.default_rng(seed)
    low, high = mesh.bounds[0] - 0.1, mesh.bounds[1] + 0.1
    t = numpy.linspace(0.0, 2.0 * numpy.pi, steps)[:, None]
    frequency, phase = rng.integers(1, 4, 3), rng.uniform(0, 2 * numpy.pi, 3)
    unit = 0.5 + 0.5 * numpy.sin(frequency * t + phase)
    return low + unit * (high - low)


def tracked_distances(pieces, path):
    """Minimum signed distance over pieces at each probe position, and us per step."""
    from gjk_ros.core import ConvexPolytope, PairSet
    bodies = [ConvexPolytope.from_points(numpy.zeros((1, 3)))] + [
        ConvexPolytope.from_points(p) for p in pieces]
    pair_set = PairSet(bodies, [(0, i) for i in range(1, len(bodies))])
    poses = numpy.tile(numpy.eye(4), (len(bodies), 1, 1))
    poses[0, :3, 3] = path[0]
    pair_set.update(poses)
    out = numpy.empty(len(path))
    start = time.perf_counter()
    for n, point in enumerate(path):
        poses[0, :3, 3] = point
        pair_set.update(poses)
        out[n] = pair_set.distance.min()
    return out, (time.perf_counter() - start) / len(path) * 1e6


def bench_mesh(name, mesh, boxes, args, cache_dir):
    """Return one row of figures for a mesh."""
    import trimesh
    from gjk_ros.models import decomposition
    settings = {'threshold': args.threshold}
    start = time.perf_counter()
    parts = decomposition.decompose_mesh(mesh.vertices, mesh.faces, settings, cache_dir)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    decomposition.decompose_mesh(mesh.vertices, mesh.faces, settings, cache_dir)
    cached = time.perf_counter() - start
    path = probe_path(mesh, args.steps, args.seed)
    exact_boxes = box_union_distance(path, boxes)
    outside = exact_boxes > 1e-6
    closest, surface, _ = trimesh.proximity.closest_point(mesh, path[outside])
    exact = numpy.asarray(surface)
    assert numpy.allclose(exact, exact_boxes[outside], atol=1e-9), 'references disagree'
    hull, hull_us = tracked_distances([mesh.convex_hull.vertices], path)
    decomposed, parts_us = tracked_distances(parts, path)
    hull_error = numpy.abs(hull[outside] - exact)
    parts_error = numpy.abs(decomposed[outside] - exact)
    return {
        'mesh': name, 'threshold': args.threshold, 'parts': len(parts),
        'probe_positions_outside': int(outside.sum()),
        'hull_max_error_m': float(hull_error.max()), 'hull_mean_error_m': float(hull_error.mean()),
        'parts_max_error_m': float(parts_error.max()),
        'parts_mean_error_m': float(parts_error.mean()),
        'hull_reports_contact_fraction': float((hull[outside] <= 0.0).mean()),
        'parts_report_contact_fraction': float((decomposed[outside] <= 0.0).mean()),
        'coacd_seconds': cold, 'cached_load_seconds': cached,
        'hull_us_per_step': hull_us, 'parts_us_per_step': parts_us,
    }


def main(argv=None):
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--steps', type=int, default=2000)
    parser.add_argument('--threshold', type=float, default=0.05)
    parser.add_argument('--seed', type=int, default=3)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir:  # a cold cache: CoACD runs once per mesh
        for name, (mesh, boxes) in meshes().items():
            rows.append(bench_mesh(name, mesh, boxes, args, cache_dir))
    os.makedirs(RESULTS, exist_ok=True)
    keys = list(rows[0])
    with open(os.path.join(RESULTS, 'decomposition.csv'), 'w', newline='') as stream:
        writer = csv.DictWriter(stream, keys)
        writer.writeheader()
        writer.writerows(rows)
    lines = ['# Convex hull vs CoACD decomposition (gjk_ros distances vs the exact mesh)', '',
             f'{args.steps} probe steps, seed {args.seed}, CoACD threshold {args.threshold}. '
             'Command: `python -m bench.decomposition_bench`.', '',
             '| ' + ' | '.join(keys) + ' |', '|' + ' --- |' * len(keys)]
    for row in rows:
        lines.append('| ' + ' | '.join(
            f'{row[k]:.3g}' if isinstance(row[k], float) else str(row[k]) for k in keys) + ' |')
    with open(os.path.join(RESULTS, 'decomposition.md'), 'w') as stream:
        stream.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
