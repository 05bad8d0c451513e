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
The answer contract checked at contact, at every core entry point, with no oracle.

For every pair of shape kinds (``KINDS``), at sizes 1e-4 to 1e3 m and 1e3 m from the origin,
B is placed so that its support point along -u coincides with A's support point along u: the
bodies then touch, and the signed distance is exactly 0 (u separates them and they share a
point). Moving B by +delta u makes it exactly delta; by -delta u it lies in [-delta, delta]
(u bounds it from below, the shared point from above; a point or a flat body may come apart
again). Every
answer is checked against the contract (``violations``):

- the truth lies in ``[distance - error_bound, distance]``, or within ``tolerance`` of
  ``distance`` (exact: 1e-9 of the bodies' size, plus the round-off of coordinates 1e3 m out);
- SEPARATED and PENETRATING never contradict the truth;
- ``witness_b - witness_a == distance * normal`` and each witness lies on its body;
- the support certificate: along the answer's normal n, ``-(h_A(n) + h_B(-n))`` is a lower bound
  of the signed distance for any n; it must lie in ``[distance - error_bound, distance]``
  (GJK's and EPA's bounds are exactly that value), which also proves the normal points from A
  to B;
- the shift test: moving B by ``-distance * normal`` makes the bodies touch;
- both argument orders agree.

Run::

    .venv/bin/python -m bench.contact_suite [--cases N] [--seed S]

It writes ``bench/results/contact_suite.md`` with the number of checked answers per entry
point and the violations (the expected count is 0).
"""

import argparse
import collections
import math
import os

from gjk_ros.core import ConvexPolytope, DistanceQuery, PairSet, signed_distance, SimplexCache
from gjk_ros.core import Status
from gjk_ros.core.bodypairs import BodyPairs
import numpy

KINDS = ('box', 'mesh', 'point', 'segment', 'polygon', 'needle', 'plate', 'sphere', 'capsule',
         'cylinder', 'cone', 'ellipsoid', 'half_space')
ENTRY_POINTS = ('signed_distance', 'signed_distance tracked', 'DistanceQuery',
                'PairSet cold', 'PairSet tracked', 'BodyPairs tracked')
SIZES = (1e-4, 1e-2, 1.0, 1e3)
EXACT_REL = 1e-9
# Round-off of a coordinate: a pose 1e3 m out is known to about 1e3 * 2^-52 m.
COORDINATE_REL = 1e-15
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results',
                       'contact_suite.md')

Answer = collections.namedtuple('Answer', 'distance witness_a witness_b normal status error_bound')


def make_shape(kind, size):
    """Return a ConvexPolytope of ``kind`` whose extent is about ``size`` metres."""
    s = float(size)
    if kind == 'box':
        return ConvexPolytope.box([0.5 * s, 0.3 * s, 0.2 * s])
    if kind == 'mesh':
        points = numpy.random.default_rng(7).normal(size=(24, 3))
        points /= numpy.linalg.norm(points, axis=1, keepdims=True)
        return ConvexPolytope.from_points(0.5 * s * points)
    if kind == 'point':
        return ConvexPolytope.from_points([[0.1 * s, -0.2 * s, 0.05 * s]])
    if kind == 'segment':
        return ConvexPolytope.from_points([[-0.5 * s, 0.1 * s, 0.0], [0.5 * s, -0.1 * s, 0.2 * s]])
    if kind == 'polygon':
        angles = numpy.arange(6) * numpy.pi / 3.0
        return ConvexPolytope.from_points(0.5 * s * numpy.column_stack(
            [numpy.cos(angles), numpy.sin(angles), numpy.zeros(6)]))
    if kind == 'needle':  # 10 m x 1 mm at size 1
        return ConvexPolytope.box([5.0 * s, 5e-4 * s, 5e-4 * s])
    if kind == 'plate':
        return ConvexPolytope.box([0.5 * s, 0.4 * s, 1e-4 * s])
    if kind == 'sphere':
        return ConvexPolytope.sphere(0.5 * s)
    if kind == 'capsule':
        return ConvexPolytope.capsule(0.2 * s, s)
    if kind == 'cylinder':  # radius 0.05, half length 0.3 at size 1
        return ConvexPolytope.cylinder(0.05 * s, 0.6 * s)
    if kind == 'cone':
        return ConvexPolytope.cone(0.3 * s, s)
    if kind == 'ellipsoid':
        return ConvexPolytope.ellipsoid([0.5 * s, 0.3 * s, 0.2 * s])
    if kind == 'half_space':
        return ConvexPolytope.half_space()
    raise ValueError(f'unknown shape kind {kind!r}')


def random_rotation(rng):
    """Return a uniformly random rotation matrix (from a normalised quaternion)."""
    w, x, y, z = rng.normal(size=4) / 1.0
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return numpy.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rotation_with_z(axis, rng):
    """Return a rotation whose z axis is the unit vector ``axis``, turned randomly about it."""
    x = numpy.cross(axis, rng.normal(size=3))
    x /= numpy.linalg.norm(x)
    return numpy.column_stack([x, numpy.cross(axis, x), axis])


def pose(rotation, translation):
    """Return the (4, 4) transform of a rotation and a translation."""
    result = numpy.eye(4)
    result[:3, :3], result[:3, 3] = rotation, translation
    return result


def support_value(body, body_pose, direction):
    """Return ``h(direction)`` of a posed body (+inf for a half-space off its normal)."""
    local = body_pose[:3, :3].T @ direction
    if body.kind == 'half_space':
        length = numpy.linalg.norm(local)
        if numpy.hypot(local[0], local[1]) > 1e-12 * length or local[2] <= 0.0:
            return math.inf
        return float(direction @ body_pose[:3, 3]) + body.radius * length
    return float(direction @ (body_pose[:3, :3] @ body.support(local) + body_pose[:3, 3]))


def support_point(body, body_pose, direction):
    """Return the world support point of a posed body (a half-space: its frame origin)."""
    if body.kind == 'half_space':
        return body_pose[:3, 3].copy()
    return body_pose[:3, :3] @ body.support(body_pose[:3, :3].T @ direction) + body_pose[:3, 3]


def touching_case(kind_a, kind_b, size, far, rng):
    """
    Return ``(a, pose_a, b, pose_b, u)``: bodies that touch exactly, u separating them.

    A half-space has a support point only along its normal, so u is A's normal when A is one,
    and B is turned so that its normal is -u when B is one.
    """
    a, b = make_shape(kind_a, size), make_shape(kind_b, size)
    centre = (rng.normal(size=3) / math.sqrt(3.0)) * (1e3 if far else size)
    pose_a = pose(random_rotation(rng), centre)
    u = rng.normal(size=3)
    u /= numpy.linalg.norm(u)
    if kind_a == 'half_space':
        u = pose_a[:3, 2].copy()
    rotation_b = rotation_with_z(-u, rng) if kind_b == 'half_space' else random_rotation(rng)
    contact = support_point(a, pose_a, u)
    local = numpy.zeros(3) if kind_b == 'half_space' else b.support(rotation_b.T @ -u)
    return a, pose_a, b, pose(rotation_b, contact - rotation_b @ local), u


def tolerance(a, pose_a, b, pose_b):
    """Exactness tolerance of a pair: 1e-9 of its size plus coordinate round-off."""
    bounds = [body.bounding_radius for body in (a, b) if math.isfinite(body.bounding_radius)]
    reach = numpy.abs(pose_a[:3, 3]).max() + numpy.abs(pose_b[:3, 3]).max()
    return EXACT_REL * sum(bounds) + COORDINATE_REL * reach


class EntryPoints:
    """
    Ask one question of every entry point, keeping each one's tracked state per ordered pair.

    The tracked entry points carry their state over every configuration of a pair, as the
    node does from cycle to cycle: a contact query warm-started from unrelated configurations.
    """

    def __init__(self):
        """Start with no tracked state."""
        self._state = {}

    def _tracked(self, key, make):
        if key not in self._state:
            self._state[key] = make()
        return self._state[key]

    def ask(self, entry, a, pose_a, b, pose_b, key):
        """Return the Answer of ``entry`` for A at ``pose_a`` and B at ``pose_b``."""
        if entry == 'signed_distance':
            return _answer(signed_distance(a, pose_a, b, pose_b))
        if entry == 'signed_distance tracked':
            cache = self._tracked((entry, key), SimplexCache)
            return _answer(signed_distance(a, pose_a, b, pose_b, cache))
        if entry == 'DistanceQuery':
            query = self._tracked((entry, key), lambda: DistanceQuery(a, b))
            query(pose_a, pose_b)
            return _answer(query.result())
        if entry == 'BodyPairs tracked':  # the engine of RobotDistances and of the node
            engine = self._tracked((entry, key), lambda: BodyPairs([a, b], [[(0, 1)]], [0.0],
                                                                   [0.0]))
            rows, status = engine.update(numpy.stack([pose_a, pose_b]))
            row = rows[0]
            return Answer(float(row[0]), row[1:4].copy(), row[4:7].copy(), row[7:10].copy(),
                          Status(int(status[0])), float(row[10]))
        tracking = entry == 'PairSet tracked'
        pairs = self._tracked((entry, key), lambda: PairSet([a, b], [[0, 1]], tracking=tracking))
        pairs.update(numpy.stack([pose_a, pose_b]))
        return Answer(float(pairs.distance[0]), pairs.witness_a[0].copy(),
                      pairs.witness_b[0].copy(), pairs.normal[0].copy(), Status(pairs.status[0]),
                      float(pairs.error_bound[0]))


def _answer(result):
    return Answer(result.distance, result.witness_a, result.witness_b, result.normal,
                  result.status, result.error_bound)


def _on_body(body, body_pose, point, tol, directions):
    """Return True when ``point`` lies in the posed body (within ``tol``), by support values."""
    for direction in directions:
        if numpy.dot(direction, point) > support_value(body, body_pose, direction) + tol:
            return False
    return True


def violations(answer, a, pose_a, b, pose_b, truth, tol, directions):
    """
    Return the contract clauses ``answer`` breaks (an empty list when it keeps them all).

    ``truth`` is the (low, high) interval known to hold the signed distance (None: unknown).
    """
    d, n, bound = answer.distance, answer.normal, answer.error_bound
    broken = []
    if not (math.isfinite(d) and abs(numpy.linalg.norm(n) - 1.0) <= 1e-12 and bound >= 0.0):
        return ['finite distance, unit normal, bound >= 0']
    if truth is not None:
        low, high = truth
        if high < d - bound - tol or low > d + tol:
            broken.append(f'truth [{low:.3g}, {high:.3g}] outside [d - e, d] = '
                          f'[{d - bound:.3g}, {d:.3g}]')
        if answer.status == Status.SEPARATED and high <= 0.0 and d > tol:
            broken.append(f'SEPARATED ({d:.3g}) where the truth is <= 0')
        if answer.status == Status.PENETRATING and low >= 0.0 and d < -tol:
            broken.append(f'PENETRATING ({d:.3g}) where the truth is >= 0')
    gap = numpy.linalg.norm(answer.witness_b - answer.witness_a - d * n)
    if gap > tol:
        broken.append(f'witness_b - witness_a - d n = {gap:.3g}')
    certificate = -(support_value(a, pose_a, n) + support_value(b, pose_b, -n))
    if not d - bound - tol <= certificate <= d + tol:
        broken.append(f'certificate {certificate:.6g} outside [d - e, d] = [{d - bound:.6g}, '
                      f'{d:.6g}]')
    extra = [n, -n] + list(directions)
    if not _on_body(a, pose_a, answer.witness_a, tol, extra):
        broken.append('witness_a off A')
    if not _on_body(b, pose_b, answer.witness_b, tol, extra):
        broken.append('witness_b off B')
    return broken


def _shifted(pose_b, offset):
    moved = pose_b.copy()
    moved[:3, 3] += offset
    return moved


def check_case(entries, kind_a, kind_b, size, far, rng, deltas=(1e-3, 1e-7)):
    """
    Check one touching configuration, B moved by 0 and +-delta u, at every entry point.

    Returns ``(checked, failures)``: answers checked per entry point, and one line per broken
    clause naming the case.
    """
    a, pose_a, b, pose_b, u = touching_case(kind_a, kind_b, size, far, rng)
    tol = tolerance(a, pose_a, b, pose_b)
    directions = [d / numpy.linalg.norm(d) for d in rng.normal(size=(6, 3))]
    checked, failures = collections.Counter(), []
    key = (kind_a, kind_b, size, far)
    for step in (0.0,) + tuple(deltas) + tuple(-delta for delta in deltas):
        moved = _shifted(pose_b, step * size * u)
        # Moving in keeps -delta as a lower bound (u still separates at -delta) and the shared
        # point bounds it by +delta: flat or pointed bodies may come apart again.
        truth = (step * size, abs(step) * size)
        for entry in ENTRY_POINTS:
            forward = entries.ask(entry, a, pose_a, b, moved, key)
            backward = entries.ask(entry, b, moved, a, pose_a, key + ('reverse',))
            broken = _pair_violations(forward, backward, a, pose_a, b, moved, truth, tol,
                                      directions)
            checked[entry] += 2
            failures += [f'{entry}: {kind_a}/{kind_b} size {size:g}{" far" if far else ""} '
                         f'step {step:g}: {text}' for text in broken]
    return checked, failures


def _pair_violations(forward, backward, a, pose_a, b, pose_b, truth, tol, directions):
    """Check both orders of one query, their agreement, and the shift test of each."""
    broken = violations(forward, a, pose_a, b, pose_b, truth, tol, directions)
    broken += ['reverse: ' + text
               for text in violations(backward, b, pose_b, a, pose_a, truth, tol, directions)]
    slack = tol + max(forward.error_bound, backward.error_bound)
    if abs(forward.distance - backward.distance) > slack:
        broken.append(f'orders disagree: {forward.distance:.6g} vs {backward.distance:.6g}')
    if abs(forward.distance) > tol:
        moved = _shifted(pose_b, -forward.distance * forward.normal)
        after = signed_distance(a, pose_a, b, moved)
        if abs(after.distance) > tol + forward.error_bound + after.error_bound:
            broken.append(f'shift test: {after.distance:.3g} after moving B by -d n')
    return broken


def kind_pairs():
    """Return every ordered pair of kinds but two half-spaces (no body to measure)."""
    return [(a, b) for a in KINDS for b in KINDS if not (a == b == 'half_space')]


def run(cases_per_pair, seed, sizes=SIZES):
    """Run the suite: ``cases_per_pair`` configurations of every kind pair, size and placement."""
    rng = numpy.random.default_rng(seed)
    entries = EntryPoints()
    checked, failures = collections.Counter(), []
    for kind_a, kind_b in kind_pairs():
        for size in sizes:
            for far in (False, True):
                for _ in range(cases_per_pair):
                    counts, broken = check_case(entries, kind_a, kind_b, size, far, rng)
                    checked.update(counts)
                    failures += broken
    return checked, failures


def measure(quick, seed):
    """
    Run the suite for bench.run: one configuration per kind pair, size and placement.

    Returns a dict: ``checked`` and ``violations`` per entry point, the first ``failures``,
    ``cases`` per pair, ``seed`` and ``markdown`` (the section text). ``quick`` runs the sizes
    1e-2 and 1 only.
    """
    sizes = (1e-2, 1.0) if quick else SIZES
    checked, failures = run(1, seed, sizes)
    text = markdown(checked, failures, 1, seed, sizes)
    per_entry = collections.Counter(line.split(':')[0] for line in failures)
    return {'checked': dict(checked), 'violations': {e: per_entry[e] for e in ENTRY_POINTS},
            'failures': failures[:40], 'cases': 1, 'seed': seed, 'markdown': text}


def markdown(checked, failures, cases_per_pair, seed, sizes=SIZES):
    """Return the report: answers checked and contract violations per entry point."""
    lines = ['# Contact suite: the answer contract at touching contacts', '',
             f'{len(kind_pairs())} ordered kind pairs x sizes {", ".join(map(str, sizes))} m x '
             f'near/1e3 m out x {cases_per_pair} configurations (seed {seed}); each touching '
             'exactly, then moved by +-1e-3 and +-1e-7 of the size along u; both argument orders. '
             'Reproduce: `.venv/bin/python -m bench.contact_suite`.', '',
             '| entry point | answers checked | violations |', '|---|---:|---:|']
    per_entry = collections.Counter(line.split(':')[0] for line in failures)
    for entry in ENTRY_POINTS:
        lines.append(f'| {entry} | {checked[entry]} | {per_entry[entry]} |')
    lines += ['', f'Total: {sum(checked.values())} answers, {len(failures)} violations.']
    lines += [f'- {line}' for line in failures[:40]]
    return '\n'.join(lines) + '\n'


def main(argv=None):
    """Run the suite and write its report."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--cases', type=int, default=2, help='configurations per kind pair')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--output', default=RESULTS)
    args = parser.parse_args(argv)
    checked, failures = run(args.cases, args.seed)
    text = markdown(checked, failures, args.cases, args.seed)
    with open(args.output, 'w') as stream:
        stream.write(text)
    print(text)
    return checked, failures


if __name__ == '__main__':
    main()
