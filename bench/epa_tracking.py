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
Tracked exact MTD on overlapping 2,048-vertex hulls, per step: the experiment behind EPA's caps.

Five pairs of random 2,048-vertex hulls overlap and move back and forth (0.02 per step, turning
0 or 6 degrees per step) for 200 steps in one PairSet; prints the CPU time and EPA iterations per
tracked pair-step. tolerances.py records what it measured for several EPA_MAX_VERTICES /
EPA_TRACK_MAX_VERTICES settings. Run: `.venv/bin/python -m bench.epa_tracking` (five pairs stay
in cache); `--pairs 100 --steps 20 --rotations 0 6 12` is make bench's case, where every pair's
hulls come from memory.
"""

import time

from gjk_ros.core import ConvexPolytope, PairSet
import numpy as np
from scipy.spatial.transform import Rotation

VERTICES = 2048
PAIRS = 5
STEPS = 200


def _random_hull(rng):
    points = rng.normal(size=(VERTICES, 3))
    return ConvexPolytope.from_points(points / np.linalg.norm(points, axis=1)[:, None])


def measure(rotation_deg, seed=0):
    """Return (CPU us per tracked pair-step, EPA iterations per pair-step)."""
    rng = np.random.default_rng(seed)
    bodies = [_random_hull(rng) for _ in range(2 * PAIRS)]
    pair_set = PairSet(bodies, [(i, PAIRS + i) for i in range(PAIRS)])
    poses = np.tile(np.eye(4), (2 * PAIRS, 1, 1))
    poses[:PAIRS, 0, 3] = 10.0 * np.arange(PAIRS)
    poses[PAIRS:, :3, 3] = poses[:PAIRS, :3, 3] + rng.normal(size=(PAIRS, 3)) * 0.5
    velocity = rng.normal(size=(PAIRS, 3)) * 0.02
    turns = [Rotation.from_rotvec(axis * np.radians(rotation_deg)).as_matrix()
             for axis in rng.normal(size=(PAIRS, 3))]
    pair_set.update(poses)
    seconds, expansions = 0.0, 0
    for step in range(STEPS):
        poses[PAIRS:, :3, 3] += velocity * (1 if (step // 25) % 2 == 0 else -1)
        for k in range(PAIRS):
            poses[PAIRS + k, :3, :3] = turns[k] @ poses[PAIRS + k, :3, :3]
        started = time.process_time()
        pair_set.update(poses)
        seconds += time.process_time() - started
        expansions += int(pair_set.epa_iterations.sum())
    return seconds / STEPS / PAIRS * 1e6, expansions / STEPS / PAIRS


def main(argv=None):
    """Print the figures; ``--pairs 100 --steps 20`` is make bench's cache-cold case."""
    import argparse
    global PAIRS, STEPS
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--pairs', type=int, default=PAIRS)
    parser.add_argument('--steps', type=int, default=STEPS)
    parser.add_argument('--rotations', type=float, nargs='+', default=[0.0, 6.0])
    args = parser.parse_args(argv)
    PAIRS, STEPS = args.pairs, args.steps
    for rotation_deg in args.rotations:
        microseconds, expansions = measure(rotation_deg)
        print(f'{rotation_deg:4.1f} deg/step: {microseconds:6.1f} us per tracked pair-step, '
              f'{expansions:5.1f} EPA iterations ({PAIRS} pairs, {STEPS} steps)')


if __name__ == '__main__':
    main()
