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
Exact reference answers for every query of a scene, and the errors of each method against them.

Two exact sources (bench/exact.py):

- certificate: for a separated query, a claimed answer's witness points (checked to lie in the
  bodies) and normal bound the true distance from above and below. When the bounds meet to
  within `CERTIFICATE_WIDTH` the query is settled in O(n), whoever made the claim.
- hull: the Minkowski-difference hull (reduced by normal-cone caps, no vertex lost) gives the
  exact signed distance, penetration included. It costs up to about 0.5 s at 2048 vertices, so
  hull checks run under a time budget per scene on a seeded random sample of the queries that
  need them (for scenes without rotation one hull serves all steps of a pair). The report gives
  the number of queries checked.
"""

from dataclasses import dataclass
import time

import numpy

from .exact import BodyGeometry, certify_separation, DifferenceHull

# Certified bounds narrower than this (distance units; bodies have unit radius) settle a query.
CERTIFICATE_WIDTH = 1e-9
# Error above which an answer counts as wrong (unit-radius bodies; looser than any solver's
# documented tolerance, so only real failures count).
WRONG_ANSWER = 1e-6

SOURCE_NONE, SOURCE_CERTIFICATE, SOURCE_HULL = 0, 1, 2


@dataclass
class Reference:
    """
    Exact answers of a scene's queries (NaN where not checked).

    Attributes
    ----------
    value : numpy.ndarray
        (steps, pairs) exact signed distance.
    width : numpy.ndarray
        (steps, pairs) uncertainty of `value` (certificate width; 0 for hull answers).
    source : numpy.ndarray
        (steps, pairs) SOURCE_NONE, SOURCE_CERTIFICATE or SOURCE_HULL.
    hull_seconds : float
        Time spent on hulls.

    """

    value: numpy.ndarray
    width: numpy.ndarray
    source: numpy.ndarray
    hull_seconds: float = 0.0

    @property
    def checked(self):
        """
        Return the mask of queries that have an exact answer.

        Returns
        -------
        numpy.ndarray
            (steps, pairs) bool.

        """
        return self.source != SOURCE_NONE

    def summary(self):
        """
        Count the checked queries by source.

        Returns
        -------
        dict
            queries, certified, hull, penetrating_checked, max_width.

        """
        checked = self.checked
        return {
            'queries': int(self.value.size),
            'certified': int(numpy.count_nonzero(self.source == SOURCE_CERTIFICATE)),
            'hull': int(numpy.count_nonzero(self.source == SOURCE_HULL)),
            'penetrating_checked': int(numpy.count_nonzero(checked & (self.value < 0.0))),
            'max_width': float(numpy.max(self.width[checked])) if checked.any() else 0.0,
        }


def body_geometries(points):
    """
    Build the exact-reference geometry of every body.

    Parameters
    ----------
    points : list of numpy.ndarray
        Body-frame vertices.

    Returns
    -------
    list of BodyGeometry
        One per body.

    """
    return [BodyGeometry.from_points(p) for p in points]


def compute_reference(scene, geometries, claim=None, hull_budget_s=2.0, seed=0):
    """
    Settle as many queries of a scene as the budget allows.

    Parameters
    ----------
    scene : bench.scenes.Scene
        The scene.
    geometries : list of BodyGeometry
        `body_geometries(scene.points)`.
    claim : bench.peers.Run, optional
        Answers with witness points and normals (gjk_ros) to certify separated queries.
    hull_budget_s : float
        Seconds allowed for hull checks in this scene.
    seed : int
        Seed of the hull sample order.

    Returns
    -------
    Reference
        Exact answers where settled.

    """
    steps, pairs = scene.spec.steps, scene.spec.num_pairs
    reference = Reference(value=numpy.full((steps, pairs), numpy.nan),
                          width=numpy.zeros((steps, pairs)),
                          source=numpy.zeros((steps, pairs), dtype=int))
    if claim is not None and claim.witness_a is not None:
        certify_all(scene, geometries, claim, reference)
    hull_check(scene, geometries, reference, hull_budget_s, seed)
    return reference


def certify_all(scene, geometries, claim, reference):
    """
    Certify every separated claimed answer whose bounds meet.

    Parameters
    ----------
    scene : bench.scenes.Scene
        The scene.
    geometries : list of BodyGeometry
        Exact-reference bodies.
    claim : bench.peers.Run
        Answers with witness points and normals.
    reference : Reference
        Filled in place.

    """
    for step in range(scene.spec.steps):
        poses = scene.poses[step]
        for pair in range(scene.spec.num_pairs):
            if not claim.distance[step, pair] > 0.0:
                continue
            bounds = certify_separation(
                geometries[2 * pair], poses[2 * pair], geometries[2 * pair + 1],
                poses[2 * pair + 1], claim.witness_a[step, pair], claim.witness_b[step, pair],
                claim.normal[step, pair])
            if bounds is None or abs(bounds[1] - bounds[0]) > CERTIFICATE_WIDTH:
                continue
            reference.value[step, pair] = 0.5 * (bounds[0] + bounds[1])
            reference.width[step, pair] = abs(bounds[1] - bounds[0])
            reference.source[step, pair] = SOURCE_CERTIFICATE


def hull_check(scene, geometries, reference, budget_s, seed):
    """
    Settle unsettled queries with exact hulls until the time budget is spent.

    Parameters
    ----------
    scene : bench.scenes.Scene
        The scene.
    geometries : list of BodyGeometry
        Exact-reference bodies.
    reference : Reference
        Filled in place.
    budget_s : float
        Seconds allowed.
    seed : int
        Seed of the sample order.

    """
    pending = numpy.argwhere(reference.source == SOURCE_NONE)
    if len(pending) == 0:
        return
    rng = numpy.random.default_rng(seed)
    # Without rotation the relative orientation of a pair never changes: one hull per pair.
    shared = scene.spec.rotation_deg == 0.0
    groups = {}
    for step, pair in pending:
        key = pair if shared else (step, pair)
        groups.setdefault(key, []).append((step, pair))
    keys = list(groups)
    order = rng.permutation(len(keys))
    start = time.perf_counter()
    for index in order:
        if time.perf_counter() - start > budget_s:
            break
        queries = groups[keys[index]]
        first_step, pair = queries[0]
        body_a, body_b = geometries[2 * pair], geometries[2 * pair + 1]
        pose_a = scene.poses[first_step, 2 * pair]
        pose_b = scene.poses[first_step, 2 * pair + 1]
        hull = DifferenceHull(body_a, pose_a[:3, :3], body_b, pose_b[:3, :3])
        for step, pair in queries:
            poses = scene.poses[step]
            reference.value[step, pair] = hull.signed_distance(poses[2 * pair, :3, 3],
                                                               poses[2 * pair + 1, :3, 3])
            reference.source[step, pair] = SOURCE_HULL
    reference.hull_seconds += time.perf_counter() - start


def answer_errors(distance, reference):
    """
    Compare a method's answers with the reference.

    Parameters
    ----------
    distance : numpy.ndarray
        (steps, pairs) signed distances (NaN where the method gave none).
    reference : Reference
        Exact answers.

    Returns
    -------
    dict
        checked, max_error, max_error_penetrating, max_error_separated, wrong (count of
        errors above WRONG_ANSWER, a missing answer counting as wrong), checked_penetrating.

    """
    checked = reference.checked
    error = numpy.abs(distance - reference.value) + reference.width
    error = numpy.where(checked & ~numpy.isfinite(distance), numpy.inf, error)
    penetrating = checked & (reference.value < 0.0)
    separated = checked & (reference.value >= 0.0)

    def worst(mask):
        return float(numpy.max(error[mask])) if mask.any() else float('nan')

    return {
        'checked': int(numpy.count_nonzero(checked)),
        'checked_penetrating': int(numpy.count_nonzero(penetrating)),
        'max_error': worst(checked),
        'max_error_penetrating': worst(penetrating),
        'max_error_separated': worst(separated),
        'wrong': int(numpy.count_nonzero(checked & (error > WRONG_ANSWER))),
    }
