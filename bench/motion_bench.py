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
Swept distances on arm scenes at 30 Hz: what a cycle costs with them, and what they find.

For each arm (the demo arm always; the UR5 and the Panda from ``example-robot-data`` when it is
installed) among seeded obstacles (boxes, hulls and a 5 mm plate across the workspace), the arm
moves through seeded joint waypoints at ``--joint-speed`` rad/s, sampled at ``--rate-hz``. Each
cycle is computed twice, interleaved, by engines of their own:

- **today**: the node's geometry update, ``BodyPairs.update`` at the cycle's piece poses;
- **swept**: the same update, then ``SweptPairs.update`` over the motion from the last cycle's
  frames to this cycle's, reusing both cycles' piece rows as its end samples (what the node
  would run).

It reports the median and mean compute per cycle of both and their ratio, the exact queries
the swept search made (the machine-independent work) and how many body pairs needed any, the
fastest point speed of the arm, and what sampling misses: cycles where an exact distance measured
between the samples lies more than 1 mm below both samples' minimum, and contacts between samples
(a negative distance measured between them, both samples positive). Run: ``.venv/bin/python -m
bench.motion_bench`` (``--cycles``, ``--joint-speed``, ``--robot-data DIR``); writes
bench/results/motion.md. It asserts nothing about speed.
"""

import argparse
import importlib.resources
import os
import platform
import statistics
import time

from bench.planning_bench import robot_data_dir, ROBOTS
import numpy

RESULTS = os.path.join(os.path.dirname(__file__), 'results')
OBSTACLES = 12
# Relative shares of the bracket measured (core.swept.DEFAULT_RELATIVE_TOLERANCE first).
SHARES = (0.05, 0.0, 0.5)
WARMUP_CYCLES = 10


def arm_model(urdf, data_dir=None):
    """Return the kinematics and (link index, origin, shape) of every collision piece."""
    from gjk_ros.models import parse_urdf_collisions, ResourceResolver
    from gjk_ros.models.kinematics import parse_kinematics
    resolver = ResourceResolver({'example-robot-data': data_dir} if data_dir else {})
    model = parse_urdf_collisions(urdf, resolver=resolver)
    kinematics = parse_kinematics(urdf)
    pieces = [(kinematics.link_index(link), piece.origin, piece.shape)
              for link, link_pieces in model.pieces.items() for piece in link_pieces]
    return kinematics, pieces


def arms(data_dir):
    """Yield (name, urdf text, data dir) of each arm available here."""
    demo = importlib.resources.files('gjk_ros.resources').joinpath('demo_arm.urdf')
    yield 'demo arm', demo.read_text(), None
    if data_dir:
        for name in ('ur5', 'panda'):
            with open(os.path.join(data_dir, ROBOTS[name][0])) as stream:
                yield name, stream.read(), data_dir


def obstacles(rng, count):
    """Return seeded (shape, pose) obstacles: boxes and hulls 0.25-0.9 m out, and a plate."""
    from gjk_ros.core import ConvexPolytope
    from scipy.spatial.transform import Rotation
    out = []
    for i in range(count):
        direction = rng.normal(size=3)
        direction[2] = abs(direction[2])
        pose = numpy.eye(4)
        pose[:3, 3] = direction / numpy.linalg.norm(direction) * rng.uniform(0.25, 0.9)
        pose[:3, :3] = Rotation.random(random_state=rng.integers(2 ** 31)).as_matrix()
        if i % 2 == 0:
            shape = ConvexPolytope.box(rng.uniform(0.02, 0.1, 3))
        else:
            shape = ConvexPolytope.from_points(rng.normal(size=(30, 3))
                                               * rng.uniform(0.02, 0.08, 3))
        out.append((shape, pose))
    plate = numpy.eye(4)
    plate[:3, 3] = (0.45, 0.0, 0.35)
    out.append((ConvexPolytope.box([0.15, 0.4, 0.0025]), plate))
    return out


def trajectory(kinematics, rng, cycles, step):
    """Return (cycles, dof) configurations through seeded waypoints, ``step`` rad per cycle."""
    lower = numpy.maximum(kinematics.lower, -numpy.pi)
    upper = numpy.minimum(kinematics.upper, numpy.pi)
    points = [rng.uniform(lower, upper)]
    qs = []
    while len(qs) < cycles:
        target = rng.uniform(lower, upper)
        count = max(int(numpy.abs(target - points[-1]).max() / step), 1)
        for t in numpy.arange(1, count + 1) / count:
            qs.append(points[-1] + t * (target - points[-1]))
        points.append(target)
    return numpy.array(qs[:cycles])


class Scene:
    """An arm and its obstacles as the node lays them out: frames, pieces, body pairs."""

    def __init__(self, kinematics, link_pieces, obstacle_list):
        from gjk_ros.core.bodypairs import BodyPairs
        self.kinematics = kinematics
        links = sorted({link for link, _, _ in link_pieces})
        self.num_links = len(kinematics.links)
        self.pieces = [shape for _, _, shape in link_pieces] + [s for s, _ in obstacle_list]
        self.piece_frames = numpy.array([link for link, _, _ in link_pieces]
                                        + [self.num_links + o
                                           for o in range(len(obstacle_list))])
        self.origins = numpy.stack([origin for _, origin, _ in link_pieces]
                                   + [numpy.eye(4)] * len(obstacle_list))
        self.obstacle_poses = numpy.stack([pose for _, pose in obstacle_list])
        self.groups = []
        for link in links:
            mine = [p for p, (owner, _, _) in enumerate(link_pieces) if owner == link]
            for o in range(len(obstacle_list)):
                self.groups.append([(p, len(link_pieces) + o) for p in mine])
        self.make_engine = lambda: BodyPairs(self.pieces, self.groups, [0.0] * len(
            self.groups), [0.0] * len(self.groups))

    def frames(self, q):
        """Return the (F, 4, 4) frame poses: every link, then every obstacle."""
        return numpy.concatenate([self.kinematics.forward(q), self.obstacle_poses])

    def piece_poses(self, frames):
        return numpy.ascontiguousarray(frames[self.piece_frames] @ self.origins)


def run_arm(name, urdf, data_dir, args, share):
    """Run one arm at one relative share; return its figures."""
    from gjk_ros.core.interpolation import FrameMotion
    from gjk_ros.core.swept import pair_rows, SweptPairs
    rng = numpy.random.default_rng(args.seed)
    kinematics, link_pieces = arm_model(urdf, data_dir)
    scene = Scene(kinematics, link_pieces, obstacles(rng, OBSTACLES))
    qs = trajectory(kinematics, rng, args.cycles + 1, args.joint_speed / args.rate_hz)
    today, engine = scene.make_engine(), scene.make_engine()
    swept = SweptPairs.from_engine(engine, scene.piece_frames, scene.origins)
    frames = scene.frames(qs[0])
    engine.update(scene.piece_poses(frames))
    previous = pair_rows(engine.pair_set), frames
    previous_sampled = engine.rows[0][:, 0].copy()
    today_ns, swept_ns, steps, working, speeds, dips, between = [], [], [], [], [], 0, 0
    for n, q in enumerate(qs[1:]):
        frames = scene.frames(q)
        poses = scene.piece_poses(frames)
        begin = time.perf_counter_ns()
        today.update(poses)
        middle = time.perf_counter_ns()
        rows, _ = engine.update(poses)
        end_rows = pair_rows(engine.pair_set)
        motion = FrameMotion(previous[1], frames)
        swept.update(motion, previous[0], end_rows, relative_tolerance=share)
        finish = time.perf_counter_ns()
        sampled = numpy.fmin(rows[:, 0], previous_sampled)
        previous, previous_sampled = (end_rows, frames), rows[:, 0].copy()
        if n < WARMUP_CYCLES:
            continue
        today_ns.append(middle - begin)
        swept_ns.append(finish - middle)
        steps.append(int(swept.steps.sum()))
        working.append(int((swept.steps > 0).sum()))
        speeds.append(float(swept.rates(motion).max()) * args.rate_hz)
        measured = swept.distance  # exact distances at instants between the samples
        if numpy.nanmin(measured) < numpy.nanmin(sampled) - 1e-3:
            dips += 1
        between += int(((measured < 0.0) & (sampled > 0.0)).sum())
    return {'name': name, 'share': share, 'links': len({p[0] for p in link_pieces}),
            'pieces': len(link_pieces), 'obstacles': OBSTACLES + 1,
            'body_pairs': len(scene.groups), 'piece_pairs': engine.pair_set.num_pairs,
            'cycles': len(today_ns), 'today_ms': _stats(today_ns), 'swept_ms': _stats(swept_ns),
            'steps': (statistics.mean(steps), max(steps)),
            'working': (statistics.mean(working), max(working)),
            'speed': (statistics.mean(speeds), max(speeds)), 'dips': dips, 'between': between}


def _stats(nanoseconds):
    values = numpy.array(nanoseconds) / 1e6
    return float(numpy.median(values)), float(values.mean())


def report(figures, args):
    """Return the Markdown report."""
    lines = ['# Swept distances on arm scenes', '',
             f'{args.rate_hz:g} Hz cycles, joints at up to {args.joint_speed:g} rad/s, '
             f'{args.cycles} cycles per run ({WARMUP_CYCLES} more discarded first), seed '
             f'{args.seed}; every obstacle against every link with geometry. Machine: '
             f'{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python '
             f'{platform.python_version()}, load average {os.getloadavg()[0]:.2f} at the end.',
             '', '| arm | share | body pairs (piece pairs) | today ms median / mean | '
             'with swept ms median / mean | ratio of means | queries per cycle mean / max | '
             'body pairs searched mean / max | fastest point m/s mean / max | dips > 1 mm | '
             'contacts between samples |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for f in figures:
        today, swept = f['today_ms'], f['swept_ms']
        lines.append(
            f"| {f['name']} | {f['share']:g} | {f['body_pairs']} ({f['piece_pairs']}) | "
            f'{today[0]:.3f} / {today[1]:.3f} | {today[0] + swept[0]:.3f} / '
            f'{today[1] + swept[1]:.3f} | {(today[1] + swept[1]) / today[1]:.2f} | '
            f"{f['steps'][0]:.1f} / {f['steps'][1]} | {f['working'][0]:.1f} / "
            f"{f['working'][1]} | {f['speed'][0]:.2f} / {f['speed'][1]:.2f} | {f['dips']} | "
            f"{f['between']} |")
    lines += ['', 'How each figure is measured:',
              "- today: `BodyPairs.update` at the cycle's piece poses (tracked), the geometry "
              'update the node times as its compute per cycle.',
              '- with swept: that update plus copying its piece rows (`pair_rows`), the '
              '`FrameMotion` of the cycle and `SweptPairs.update` (end samples reused): the '
              "node's compute with swept distances. Both are timed in the same cycle, one after "
              'the other, by engines of their own.',
              '- share: `relative_tolerance` of the bracket (with `tolerance` 0.1 mm).',
              '- queries: exact distance queries the swept search made (machine-independent); '
              'body pairs searched: those that needed at least one.',
              '- fastest point: the largest motion bound of a piece pair (chord plus turn) times '
              'the rate.',
              '- dips: cycles whose smallest swept distance (an exact distance measured between '
              "the samples) lies more than 1 mm below the smaller of the two samples' minima; "
              'contacts between samples: body pairs with a negative swept distance and both '
              'samples positive.',
              '', 'Reproduce: `.venv/bin/python -m bench.motion_bench --cycles '
              f'{args.cycles} --joint-speed {args.joint_speed:g} --rate-hz {args.rate_hz:g}`'
              ' (the UR5 and the Panda need example-robot-data: `--robot-data DIR` or '
              '`pip install -r bench/requirements.txt`).', '']
    return '\n'.join(lines)


def main(argv=None):
    """Run the benchmark and write its report (``--output ''``: print only)."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--cycles', type=int, default=300)
    parser.add_argument('--rate-hz', type=float, default=30.0)
    parser.add_argument('--joint-speed', type=float, default=1.0)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--robot-data', default=None,
                        help='example-robot-data share folder (default: the installed one)')
    parser.add_argument('--output', default=os.path.join(RESULTS, 'motion.md'))
    args = parser.parse_args(argv)
    data_dir = args.robot_data or robot_data_dir()
    figures = []
    for name, urdf, robot_dir in arms(data_dir):
        for share in SHARES:
            figures.append(run_arm(name, urdf, robot_dir, args, share))
            print(figures[-1])
    text = report(figures, args)
    print(text)
    if args.output:
        with open(args.output, 'w') as stream:
            stream.write(text)


if __name__ == '__main__':
    main()
