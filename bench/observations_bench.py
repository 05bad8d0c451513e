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
Observation sources: a 640x480 organized cloud against the Panda, exact, and a cKDTree baseline.

The cloud (307,200 points, float32 x, y, z and rgb, 16 bytes a point) is rendered by ray casts
from a camera 1.2 m in front of the arm (the demo's depth camera, 70 degrees wide): a wall behind
the arm, the floor, a box beside it and the arm's own link pieces (which the self-filter must
remove), in pixel order, with one pixel in ten dropped out (NaN). Measured, in this process, with
the node's own functions (gjk_ros/ros/sources/observations.py), at 30 Hz (one cloud per cycle):

- **per cloud** (the background thread): decode the CDR bytes, skip non-finite points, place
  with the camera transform, build the search grid, self-filter against every Panda piece; and
  the same for the same points in random order (no two neighbours adjacent in memory: the
  worst case for the grid's counting sort);
- **per cycle** (the compute thread): the exact nearest point of every link piece, the arm
  moving a little each cycle (tracked: each search starts from the last answer); and the
  node's path, every piece at once from its candidates or the grid (``NearestTracker``);
- **cloud -> distances latency**: per-cloud time + the first cycle's search in that cloud (a
  new cloud starts from the last cloud's nearest points); the node adds the wait for its next
  cycle (at most one period) and the measurement of the pairs;
- **exact**: every cycle's nearest distance per link against brute force (every kept point
  against every link piece), and the self-filter against measuring every point;
- **work**: machine-independent counts (cells visited, points bounded, points measured);
- **baseline**: scipy cKDTree over the raw finite points, queried with the hull vertices of the
  link pieces (sampling the link: no self-filter, not exact; its error is shown).

Run: ``.venv/bin/python -m bench.observations_bench`` (``--clouds``, ``--cycles``, ``--voxel``).
Needs ``example-robot-data`` (bench extras) for the Panda, and skips without it; writes
bench/results/observations.md. It asserts nothing about speed.
"""

import argparse
import math
import os
import time

from bench.planning_bench import robot_data_dir, ROBOTS
import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')
WIDTH, HEIGHT = 640, 480
PADDING = 0.02
RATE_HZ = 30.0


def panda_pieces(data_dir):
    """Return the kinematics and (link index, origin, shape) of every Panda collision piece."""
    from gjk_ros.models import parse_urdf_collisions, ResourceResolver
    from gjk_ros.models.kinematics import parse_kinematics
    urdf = open(os.path.join(data_dir, ROBOTS['panda'][0])).read()
    model = parse_urdf_collisions(urdf, resolver=ResourceResolver(
        {'example-robot-data': data_dir}))
    kinematics = parse_kinematics(urdf)
    pieces = [(kinematics.link_index(link), piece.origin, piece.shape)
              for link, link_pieces in model.pieces.items() for piece in link_pieces]
    return kinematics, pieces


def posed(kinematics, pieces, q):
    """Return the world pose of every piece at configuration ``q``."""
    links = kinematics.forward(q)
    return [links[index] @ origin for index, origin, _ in pieces]


def scene_camera():
    """Return a 640x480 depth camera (70 degrees wide) 1.2 m in front of the arm, facing it."""
    from gjk_ros.demo.depth_camera import DepthCamera
    return DepthCamera(eye=(1.2, 0.0, 0.5), target=(0.0, 0.0, 0.45), width=WIDTH,
                       height=HEIGHT, horizontal_fov=math.radians(70.0), max_range=4.0)


def scene_cloud(rng, pieces, prepared, poses, camera):
    """
    Render the cell: its world points in pixel order, (HEIGHT*WIDTH, 3), NaN for no return.

    A wall 0.6 m behind the arm, the floor, a box beside the arm and the Panda's own pieces
    (the self-filter's work); one pixel in ten drops out, as a depth camera's do.
    """
    from gjk_ros.demo.depth_camera import camera_pose, render
    from gjk_ros.models.transforms import xyz_rpy_to_matrix
    shapes = [('box', xyz_rpy_to_matrix((-0.65, 0.0, 1.0)), (0.05, 2.5, 1.0)),
              ('box', xyz_rpy_to_matrix((0.45, -0.45, 0.15)), (0.1, 0.1, 0.15))]
    for (_, _, shape), piece, pose in zip(pieces, prepared, poses):
        radius = float(numpy.linalg.norm(shape.vertices, axis=1).max())
        shapes.append(('hull', pose, (piece.planes, radius)))
    pose = camera_pose(camera)
    local = render(camera, pose, shapes)
    local[rng.random(len(local)) < 0.1] = numpy.nan
    return local @ pose[:3, :3].T + pose[:3, 3], pose


def cloud_bytes(points, pose, stamp_ns=1):
    """Serialize the points (world) as a camera-frame PointCloud2, float32 x y z rgb."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import PointCloud2, PointField
    inverse = numpy.linalg.inv(pose)
    local = points @ inverse[:3, :3].T + inverse[:3, 3]
    data = numpy.zeros((len(points), 4), dtype='<f4')
    data[:, :3] = local
    message = PointCloud2()
    message.header.frame_id = 'camera'
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 10 ** 9)
    message.height, message.width = HEIGHT, WIDTH
    message.fields = [PointField(name=name, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                      for i, name in enumerate(('x', 'y', 'z', 'rgb'))]
    message.point_step, message.row_step = 16, 16 * WIDTH
    message.data = data.tobytes()
    return serialize_message(message)


class _Config:
    observation_max_points = 10 ** 7
    self_filter_padding = PADDING


def percentiles(seconds):
    """Return (p50, p99) in milliseconds."""
    return tuple(1e3 * numpy.percentile(seconds, [50, 99]))


def run(args):
    """Measure everything; None without example-robot-data."""
    from gjk_ros.core.point_distance import PointDistanceShape
    from gjk_ros.core.point_grid import CloudGatherer
    from gjk_ros.ros.params import ObservationSettings
    from gjk_ros.ros.inputs.sources.clouds import decode_pointcloud2, read_cloud_header
    from gjk_ros.ros.inputs.sources.nearest_points import nearest_point
    from gjk_ros.ros.inputs.sources.observations import CloudLimits, process_cloud
    data_dir = robot_data_dir()
    if data_dir is None:
        return None
    rng = numpy.random.default_rng(args.seed)
    kinematics, pieces = panda_pieces(data_dir)
    prepared = [PointDistanceShape(shape) for _, _, shape in pieces]
    q = kinematics.neutral()
    poses = posed(kinematics, pieces, q)
    points, camera = scene_cloud(rng, pieces, prepared, poses, scene_camera())
    # The same points in random order: the worst case for binning them (a camera's pixel
    # order keeps neighbours together).
    shuffled = points[rng.permutation(len(points))]
    data = cloud_bytes(points, camera)
    header = read_cloud_header(data)
    limits = CloudLimits(_Config, ObservationSettings('camera', voxel_size=args.voxel))
    links = list(zip(prepared, poses))
    gatherer = CloudGatherer()
    warm = process_cloud(decode_pointcloud2, data, header, camera, links, limits, gatherer)[0]
    nearest_point(warm, prepared[0], poses[0], 0)
    clouds = cloud_figures(process_cloud, decode_pointcloud2, data, header, camera, links,
                           limits, gatherer, args.clouds)
    worst = cloud_figures(process_cloud, decode_pointcloud2, cloud_bytes(shuffled, camera),
                          header, camera, links, limits, gatherer, args.clouds)
    cloud = clouds['last']
    cycles = cycle_figures(cloud, clouds['answers'], kinematics, pieces, prepared, q,
                           args.cycles)
    tracked = tracked_figures(cloud, kinematics, pieces, q, args.cycles)
    filtered = filter_check(gatherer, decode_pointcloud2(data)[1], camera, limits, links,
                            cloud)
    exact = exact_minimum(cloud, prepared, poses)
    baseline = baseline_figures(points, pieces, poses, exact, args.clouds)
    return {'points': len(points), 'bytes': len(data), 'kept': len(cloud),
            'removed': cloud.removed, 'pieces': len(pieces), 'cloud': clouds['time'],
            'cloud_min': clouds['min'], 'cycle': cycles['time'], 'latency': clouds['latency'],
            'first': clouds['first'],
            'cloud_cpu': clouds['cpu'], 'cycle_cpu': cycles['cpu'],
            'shuffled': worst['time'], 'shuffled_cpu': worst['cpu'],
            'error': max(cycles['error'], clouds['error'], worst['error'], tracked['error']),
            'tracked': tracked['time'], 'tracked_cpu': tracked['cpu'],
            'work_tracked': tracked['work'], 'searched': tracked['searched'],
            'filter_exact': filtered,
            'work_cloud': clouds['work'], 'work_cycle': cycles['work'],
            'gap': cycles['gap'], 'baseline': baseline, 'load': os.getloadavg()[0],
            'records': cycles['records'], 'gjk': cycles['gjk'],
            'record_error': cycles['record_error'], 'pairs': cycles['pairs']}


def cloud_figures(process, decode, data, header, camera, links, limits, gatherer, count):
    """Process ``count`` clouds as they arrive; each is searched once with the last answers."""
    from gjk_ros.ros.inputs.sources.nearest_points import nearest_point, point_near
    times, cpu, latencies, error, answers = [], [], [], 0.0, None
    for step in range(count):
        started, cpu_started = time.perf_counter(), time.thread_time()
        cloud, _ = process(decode, data, header, camera, links, limits, gatherer)
        processed = time.perf_counter()
        cpu.append(time.thread_time() - cpu_started)
        work = cloud.grid.work.copy()  # the self-filter's
        hints = [None] * len(links) if answers is None else \
            [point_near(cloud, answer.point) for answer in answers]
        answers = [nearest_point(cloud, shape, pose, hint)
                   for (shape, pose), hint in zip(links, hints)]
        done = time.perf_counter()
        times.append(processed - started)
        latencies.append(done - started)
        if step in (0, count - 1):  # searched from nothing, and from the last cloud's answers
            error = max(error, answer_error(cloud, links, answers))
    # The first cloud is searched from nothing; every later one from the last one's answers.
    return {'time': percentiles(times), 'min': 1e3 * min(times), 'cpu': percentiles(cpu),
            'latency': percentiles(latencies[1:] or latencies), 'first': 1e3 * latencies[0],
            'error': error, 'last': cloud,
            'answers': answers, 'work': work.tolist()}


def cycle_figures(cloud, answers, kinematics, pieces, prepared, q, cycles):
    """Per-cycle search with the arm moving, tracked from ``answers`` (steady state)."""
    from gjk_ros.ros.inputs.sources.nearest_points import nearest_point
    times, cpu, error, hints = [], [], 0.0, [answer.index for answer in answers]
    current = [answers]
    by_answers, by_gjk = record_trackers(pieces, current)
    record_times, gjk_times, record_error = [], [], 0.0
    before = cloud.grid.work.copy()
    for step in range(cycles):
        moved = posed(kinematics, pieces, q + 0.002 * step)
        started, cpu_started = time.perf_counter(), time.thread_time()
        answers = [nearest_point(cloud, shape, pose, hint)
                   for shape, pose, hint in zip(prepared, moved, hints)]
        hints = [answer.index for answer in answers]
        times.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - cpu_started)
        if step % 10 == 0:
            error = max(error, answer_error(cloud, list(zip(prepared, moved)), answers))
        current[0] = answers
        poses = numpy.stack(moved + [_at(answer.point) for answer in answers])
        inputs = numpy.zeros(len(poses), dtype=numpy.int64)
        started = time.perf_counter()
        records = by_answers.compute(poses, inputs, 1.0)
        record_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference = by_gjk.compute(poses, inputs, 1.0)
        gjk_times.append(time.perf_counter() - started)
        assert (records['status'] == reference['status']).all()
        record_error = max(record_error, float(numpy.nan_to_num(numpy.abs(
            records['distance'] - reference['distance'])).max()))
    work = (cloud.grid.work - before) // max(cycles, 1)
    # The cycle's outputs wait for the search on the compute thread: the gap between two
    # outputs at 30 Hz is one period, or the search when it is longer.
    gap = max(1.0 / RATE_HZ, numpy.max(times)) * RATE_HZ
    return {'time': percentiles(times), 'cpu': percentiles(cpu), 'error': error,
            'work': work.tolist(), 'gap': gap, 'records': percentiles(record_times),
            'gjk': percentiles(gjk_times), 'record_error': record_error,
            'pairs': len(by_gjk.layout.pairs)}


def tracked_figures(cloud, kinematics, pieces, q, cycles):
    """
    Per cycle, the node's path: ``NearestTracker.nearest`` for every piece at once.

    A piece that moved within its margin is answered from its candidates, else searched in
    the grid (one thread here; the node shares the pieces with a helper thread). Starts at the
    cloud's anchor poses, the arm moving as in ``cycle_figures``.
    """
    tracker = cloud.tracker
    hints = numpy.full(len(pieces), -1, dtype=numpy.int64)
    times, cpu, searched, error = [], [], 0, 0.0
    kept = cloud.grid.kept()
    before = cloud.grid.work.copy()
    for step in range(cycles):
        poses = numpy.stack(posed(kinematics, pieces, q + 0.002 * step))
        started, cpu_started = time.perf_counter(), time.thread_time()
        rows, hints = tracker.nearest(poses, hints)
        times.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - cpu_started)
        searched += int(tracker.searched.sum())
        if step % 10 == 0:
            for k, (shape, pose) in enumerate(zip(tracker.shapes.shapes, poses)):
                error = max(error, abs(rows[k, 0] - shape.signed_distances(kept, pose).min()))
    work = (cloud.grid.work - before) // max(cycles, 1)
    return {'time': percentiles(times), 'cpu': percentiles(cpu), 'error': error,
            'work': work.tolist(), 'searched': searched / max(cycles, 1)}


def _at(point):
    pose = numpy.eye(4)
    pose[:3, 3] = point
    return pose


def record_trackers(pieces, current):
    """
    Two pair trackers of the cloud's records, one record per Panda link, as the node lays out.

    The first takes each piece's nearest-point answer (``current[0]``, the cycle's) as its
    pair's measurement; the second measures every (link piece, nearest point) pair by GJK, the
    node's second measurement before the answers were the records.
    """
    from dataclasses import replace
    from gjk_ros.core import ConvexPolytope
    from gjk_ros.ros.compute.pairs import PairTracker, RecordSpec, TrackerLayout
    from gjk_ros.ros.records import PairStatus
    count = len(pieces)
    point = ConvexPolytope.from_points(numpy.zeros((1, 3)))
    shapes = [shape for _, _, shape in pieces] + [point] * count
    pairs, records, measured = [], [], []
    for record, link in enumerate(sorted({index for index, _, _ in pieces})):
        start = len(pairs)
        for piece in (p for p, (index, _, _) in enumerate(pieces) if index == link):
            measured.append((record, piece, count + piece, len(pairs) + piece))
            pairs += [(piece, count + other) for other in range(count)]
        records.append(RecordSpec(str(link), 'camera', record, 0, start, len(pairs),
                                  PairStatus.VALID))
    layout = TrackerLayout(list(range(2 * count)), numpy.array(pairs, dtype=numpy.int64),
                           records)
    by_answers, by_gjk = PairTracker(), PairTracker()
    by_answers.rebuild(replace(layout, points=numpy.ones(len(pairs), dtype=bool),
                               measured=numpy.array(measured, dtype=numpy.int64)),
                       shapes, lambda point, shape, pose: current[0][point - count])
    by_gjk.rebuild(layout, shapes)
    return by_answers, by_gjk


def answer_error(cloud, links, answers):
    """
    Largest gap between each piece's answer and brute force over every kept point.

    The answer's distance, and its witness and normal (``point - witness == distance *
    normal``), against every kept point measured.
    """
    kept = cloud.grid.kept()
    worst = 0.0
    for (shape, pose), answer in zip(links, answers):
        truth = shape.signed_distances(kept, pose).min()
        offset = answer.point - answer.witness - answer.distance * answer.normal
        worst = max(worst, abs(answer.distance - truth), float(numpy.abs(offset).max()))
    return worst


def filter_check(gatherer, columns, camera, limits, links, cloud):
    """Whether the self-filter kept exactly the points farther than the padding from all."""
    placed, _ = gatherer.gather(*columns, camera, limits.ranges, limits.heights, limits.voxel)
    near = numpy.zeros(len(placed), dtype=bool)
    for shape, pose in links:
        near |= shape.signed_distances(placed, pose) <= limits.padding

    def rows(points):  # the same rows in any order
        return points[numpy.lexsort(points.T[::-1])]
    return bool(numpy.array_equal(rows(placed[~near]), rows(cloud.grid.kept())))


def exact_minimum(cloud, prepared, poses):
    """Exact distance from every piece to the self-filtered cloud (brute force)."""
    return numpy.array([shape.signed_distances(cloud.grid.kept(), pose).min()
                        for shape, pose in zip(prepared, poses)])


def baseline_figures(points, pieces, poses, exact, repeats):
    """Time a cKDTree over the raw finite points, queried with the pieces' hull vertices."""
    from scipy.spatial import cKDTree
    finite = points[numpy.isfinite(points).all(axis=1)]
    samples = [pose[:3, :3] @ shape.vertices.T + pose[:3, 3:4]
               for (_, _, shape), pose in zip(pieces, poses)]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        tree = cKDTree(finite)
        sampled = numpy.array([tree.query(vertices.T)[0].min() for vertices in samples])
        times.append(time.perf_counter() - started)
    return {'time': percentiles(times), 'error': float(numpy.abs(sampled - exact).max()),
            'samples': int(sum(v.shape[1] for v in samples))}


def report(figures, args):
    """Return observations.md."""
    base = figures['baseline']
    command = '.venv/bin/python -m bench.observations_bench --clouds %d --cycles %d%s' % (
        args.clouds, args.cycles, ' --voxel %g' % args.voxel if args.voxel else '')
    lines = [
        '# Observation sources: 640x480 cloud against the Panda', '',
        'Command: `%s` (load average %.1f on %d cores while it ran)'
        % (command, figures['load'], os.cpu_count() or 1), '',
        '%d points (%d bytes), %d Panda pieces; self-filter removed %d, %d kept.'
        % (figures['points'], figures['bytes'], figures['pieces'], figures['removed'],
           figures['kept']), '',
        '| stage | p50 ms | p99 ms | CPU p50 ms | CPU p99 ms |',
        '| --- | --- | --- | --- | --- |',
        '| per cloud: decode, place, self-filter, grid (background thread) | %.1f | %.1f | '
        '%.1f | %.1f |' % (figures['cloud'] + figures['cloud_cpu']),
        '| per cloud, the same points in random order (worst case for the binning) | %.1f | '
        '%.1f | %.1f | %.1f |' % (figures['shuffled'] + figures['shuffled_cpu']),
        '| per cycle: exact nearest point of every piece, tracked (compute thread) | %.1f | '
        '%.1f | %.1f | %.1f |' % (figures['cycle'] + figures['cycle_cpu']),
        "| per cycle: the node's path, every piece at once from its candidates or the grid "
        '(``NearestTracker.nearest``, one thread) | %.1f | %.1f | %.1f | %.1f |'
        % (figures['tracked'] + figures['tracked_cpu']),
        '| per cycle: the records of the cloud, from the answers of the searches (compute '
        'thread) | '
        '%.2f | %.2f | | |' % figures['records'],
        '| per cycle: the same records by GJK, every piece against every nearest point (%d '
        'pairs; what the answers save) | %.2f | %.2f | | |'
        % ((figures['pairs'],) + figures['gjk']),
        "| cloud -> nearest points of every piece (new cloud, searched from the last one's) | "
        '%.1f | %.1f | | |' % figures['latency'],
        '| baseline: cKDTree build + query of %d hull vertices | %.1f | %.1f | | |'
        % ((base['samples'],) + base['time']), '',
        "CPU: the thread's own CPU time (time.thread_time), which other processes on the "
        'machine inflate far less than the wall time. Fastest cloud: %.1f ms wall (target: '
        '10 ms per cloud, every point considered). The very first cloud, searched from '
        'nothing, took %.1f ms from bytes to nearest points.'
        % (figures['cloud_min'], figures['first']),
        '',
        'Exact: the largest difference between a searched nearest distance and brute force '
        '(every kept point against every piece), or between point - witness and distance * '
        'normal in an answer, is %.3g m; the records from the answers and by GJK differ by at '
        'most %.3g m, with the same statuses; the self-filter keeps exactly the points '
        'farther than the padding from every piece: %s.'
        % (figures['error'], figures['record_error'],
           'yes' if figures['filter_exact'] else 'NO'), '',
        'Work per cloud (self-filter): %d cells visited, %d points bounded, %d measured '
        'exactly; per cycle (every piece): %d cells, %d points bounded, %d measured exactly.'
        % tuple(figures['work_cloud'] + figures['work_cycle']), '',
        "The node's path per cycle: %d cells, %d points bounded (candidates included), %d "
        'measured exactly; %.1f of %d pieces searched in the grid (moved beyond their '
        'margin), the others answered from their candidates.'
        % tuple(figures['work_tracked'] + [figures['searched'], figures['pieces']]), '',
        'Output gap at %g Hz: the cycle waits for its nearest-point searches, so the longest '
        'gap between two outputs is %.2f cycles (the cloud itself is processed on a '
        'background thread).' % (RATE_HZ, figures['gap']), '',
        'The baseline samples the links at their hull vertices and keeps the robot in the '
        'cloud: its largest error against the exact distance is %.3f m.' % base['error'], '']
    return '\n'.join(lines)


def main(argv=None):
    """Run the benchmark and write its report (``--output ''``: print only)."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--clouds', type=int, default=10)
    parser.add_argument('--cycles', type=int, default=100)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--voxel', type=float, default=0.0)
    parser.add_argument('--output', default=os.path.join(RESULTS, 'observations.md'))
    args = parser.parse_args(argv)
    figures = run(args)
    if figures is None:
        print('observations bench skipped: example-robot-data is missing '
              '(pip install -r bench/requirements.txt)')
        return
    text = report(figures, args)
    print(text)
    if args.output:
        with open(args.output, 'w') as stream:
            stream.write(text)


if __name__ == '__main__':
    main()
