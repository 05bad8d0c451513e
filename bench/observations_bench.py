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

The cloud (307,200 points, float32 x, y, z and rgb, 16 bytes a point, 10% NaN) is seen by a
camera 1.6 m in front of the arm: 65% on a wall behind it, 20% on the table, 15% on the arm's own
link pieces (which the self-filter must remove). Measured, in this process, with the node's own
functions (gjk_ros/ros/sources/observations.py):

- **per cloud** (the background thread): decode the CDR bytes, range/height limits, place with
  the camera transform, self-filter against every Panda piece, build the search grid;
- **per cycle** (the compute thread): the exact nearest point of every link piece, with the arm
  moving a little each cycle;
- **cloud -> distances latency**, a lower bound: per-cloud time + one per-cycle time (the node
  adds at most one cycle period of waiting and its own measurement of the pairs);
- **baseline**: scipy cKDTree over the raw finite points, queried with the hull vertices of the
  link pieces (sampling the link: no self-filter, not exact; its error is shown).

Run: ``.venv/bin/python -m bench.observations_bench`` (``--clouds``, ``--cycles``). Needs
``example-robot-data`` (bench extras) for the Panda; writes bench/results/observations.md.
"""

import argparse
import os
import time

from bench.planning_bench import robot_data_dir, ROBOTS
import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')
WIDTH, HEIGHT = 640, 480
PADDING = 0.02


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


def camera_pose():
    """World <- camera: 1.6 m in front of the arm, looking back at it (z forward)."""
    pose = numpy.eye(4)
    pose[:3, :3] = numpy.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]).T
    pose[:3, 3] = (1.6, 0.0, 0.5)
    return pose


def scene_cloud(rng, pieces, poses):
    """Return the organized cloud's world points (NaN rows included), (HEIGHT*WIDTH, 3)."""
    count = WIDTH * HEIGHT
    wall, table = int(0.65 * count), int(0.2 * count)
    own = count - wall - table
    points = numpy.empty((count, 3))
    points[:wall] = numpy.c_[numpy.full(wall, -0.6), rng.uniform(-1.2, 1.2, wall),
                             rng.uniform(0.0, 1.5, wall)]
    points[wall:wall + table] = numpy.c_[rng.uniform(-0.6, 1.0, table),
                                         rng.uniform(-1.2, 1.2, table), numpy.zeros(table)]
    # The arm's own surface: support points of its pieces along random directions.
    chosen = rng.integers(0, len(pieces), own)
    directions = rng.normal(size=(own, 3))
    for row, (piece, direction) in enumerate(zip(chosen, directions)):
        shape, pose = pieces[piece][2], poses[piece]
        points[wall + table + row] = pose[:3, :3] @ shape.support(pose[:3, :3].T @ direction) \
            + pose[:3, 3]
    points[rng.random(count) < 0.1] = numpy.nan
    return points[rng.permutation(count)]


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
    from gjk_ros.core.points import CloudGatherer, PointDistanceShape
    from gjk_ros.ros.params import ObservationSettings
    from gjk_ros.ros.sources.clouds import decode_pointcloud2, read_cloud_header
    from gjk_ros.ros.sources.observations import CloudLimits, nearest_point, process_cloud
    from scipy.spatial import cKDTree
    data_dir = robot_data_dir()
    if data_dir is None:
        raise SystemExit('example-robot-data is missing: pip install -r bench/requirements.txt')
    rng = numpy.random.default_rng(args.seed)
    kinematics, pieces = panda_pieces(data_dir)
    prepared = [PointDistanceShape(shape) for _, _, shape in pieces]
    q = kinematics.neutral()
    poses = posed(kinematics, pieces, q)
    camera = camera_pose()
    points = scene_cloud(rng, pieces, poses)
    data = cloud_bytes(points, camera)
    header = read_cloud_header(data)
    limits = CloudLimits(_Config, ObservationSettings('camera', voxel_size=args.voxel))
    links = list(zip(prepared, poses))
    gatherer = CloudGatherer()
    process_cloud(decode_pointcloud2, data, header, camera, links, limits, gatherer)  # warm
    cloud_times, clouds = [], []
    for _ in range(args.clouds):
        started = time.perf_counter()
        cloud, _ = process_cloud(decode_pointcloud2, data, header, camera, links, limits,
                                 gatherer)
        cloud_times.append(time.perf_counter() - started)
        clouds.append(cloud)
    cloud = clouds[-1]
    cycle_times, hints = [], [None] * len(pieces)
    for step in range(args.cycles):
        moved = posed(kinematics, pieces, q + 0.002 * step)
        started = time.perf_counter()
        hints = [nearest_point(cloud, shape, pose, hint)
                 for shape, pose, hint in zip(prepared, moved, hints)]
        cycle_times.append(time.perf_counter() - started)
    exact = exact_minimum(cloud, prepared, poses)
    baseline = baseline_figures(cKDTree, points, pieces, poses, prepared, exact, args.clouds)
    return {'points': len(points), 'bytes': len(data), 'kept': len(cloud),
            'removed': cloud.removed, 'pieces': len(pieces),
            'cloud': percentiles(cloud_times), 'cycle': percentiles(cycle_times),
            'latency': percentiles(numpy.add.outer(cloud_times, cycle_times).ravel()),
            'baseline': baseline}


def exact_minimum(cloud, prepared, poses):
    """Exact distance from every piece to the self-filtered cloud (brute force)."""
    return numpy.array([shape.signed_distances(cloud.grid.kept(), pose).min()
                        for shape, pose in zip(prepared, poses)])


def baseline_figures(tree_type, points, pieces, poses, prepared, exact, repeats):
    """Time a cKDTree over the raw finite points, queried with the pieces' hull vertices."""
    finite = points[numpy.isfinite(points).all(axis=1)]
    samples = [pose[:3, :3] @ shape.vertices.T + pose[:3, 3:4]
               for (_, _, shape), pose in zip(pieces, poses)]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        tree = tree_type(finite)
        sampled = numpy.array([tree.query(vertices.T)[0].min() for vertices in samples])
        times.append(time.perf_counter() - started)
    return {'time': percentiles(times), 'error': float(numpy.abs(sampled - exact).max()),
            'samples': int(sum(v.shape[1] for v in samples))}


def report(figures, args):
    base = figures['baseline']
    lines = [
        '# Observation sources: 640x480 cloud against the Panda', '',
        'Command: `.venv/bin/python -m bench.observations_bench --clouds %d --cycles %d`'
        % (args.clouds, args.cycles), '',
        '%d points (%d bytes), %d Panda pieces; self-filter removed %d, %d kept.'
        % (figures['points'], figures['bytes'], figures['pieces'], figures['removed'],
           figures['kept']), '',
        '| stage | p50 ms | p99 ms |', '| --- | --- | --- |',
        '| per cloud: decode, place, self-filter, grid (background thread) | %.1f | %.1f |'
        % figures['cloud'],
        '| per cycle: exact nearest point of every piece (compute thread) | %.2f | %.2f |'
        % figures['cycle'],
        '| cloud -> nearest points (lower bound of the latency) | %.1f | %.1f |'
        % figures['latency'],
        '| baseline: cKDTree build + query of %d hull vertices | %.1f | %.1f |'
        % ((base['samples'],) + base['time']), '',
        'The baseline samples the links at their hull vertices and keeps the robot in the '
        'cloud: its largest error against the exact distance is %.3f m. The target of 10 ms '
        'per cloud is %s.' % (base['error'], 'met' if figures['cloud'][0] <= 10.0 else
                              'not met'), '']
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--clouds', type=int, default=10)
    parser.add_argument('--cycles', type=int, default=100)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--voxel', type=float, default=0.0)
    parser.add_argument('--output', default=os.path.join(RESULTS, 'observations.md'))
    args = parser.parse_args(argv)
    text = report(run(args), args)
    print(text)
    if args.output:
        with open(args.output, 'w') as stream:
            stream.write(text)


if __name__ == '__main__':
    main()
