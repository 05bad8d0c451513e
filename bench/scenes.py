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
Seeded test scenes in the manner of Cameron 1997, section 4.

A scene is a set of body pairs and a motion sequence for each. Body A of a pair keeps a random
fixed pose; body B starts at a random position around it and then moves, every step, by a constant
small translation and (optionally) a random incremental rotation about its own centre. The first
step of a sequence is the cold query and every later step is tracked.

Bodies are either random convex hulls of points drawn uniformly on the unit sphere (every point
is a hull vertex, so the hull has exactly the requested number of vertices) or random boxes.

Distances are given in bounding diameters (the mean of the two bodies' bounding-sphere
diameters): a gap of k diameters puts the centres at ``r_a + r_b + k * diameter``, so the
bounding spheres are k diameters apart, as in the paper's "about 3 object diameters" for "roughly
ball-shaped objects". The overlapping scene puts the centres at 0.2 to 0.8 times ``r_a + r_b``,
so the bodies interpenetrate for most of the sequence.
"""

from dataclasses import dataclass
import zlib

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.rigid import quaternion_matrix
import numpy

HULL_SIZES = (8, 16, 32, 64, 128, 256, 512, 1024, 2048)
ROTATIONS_DEG = (0.0, 6.0, 12.0)
# Gap between the bounding spheres in diameters; None means overlapping bodies.
DISTANCES = (3.0, 1.0, None)
STEPS = 20
# Translation of body B per step, in diameters: small, as the tracking claim requires.
STEP_TRANSLATION = 0.01
# Overlapping scenes: centre distance as a fraction of r_a + r_b.
OVERLAP_RANGE = (0.2, 0.8)
BOX_HALF_EXTENT_RANGE = (0.3, 1.0)


@dataclass(frozen=True)
class SceneSpec:
    """
    Parameters of one scene.

    Attributes
    ----------
    shape : str
        'hull' (random hull of points on the unit sphere) or 'box'.
    size : int
        Vertices per body (8 for boxes).
    gap : float or None
        Gap between bounding spheres in diameters; None for overlapping bodies.
    rotation_deg : float
        Largest incremental rotation of body B per step, in degrees.
    num_pairs : int
        Number of body pairs.
    steps : int
        Length of each motion sequence (the first query is cold).

    """

    shape: str
    size: int
    gap: object
    rotation_deg: float
    num_pairs: int
    steps: int = STEPS

    @property
    def distance_label(self):
        """
        Name the distance setting as used in tables and plots.

        Returns
        -------
        str
            'gap3', 'gap1' or 'overlap'.

        """
        return 'overlap' if self.gap is None else 'gap%g' % self.gap

    @property
    def name(self):
        """
        Return a unique, readable scene name.

        Returns
        -------
        str
            e.g. 'hull-n256-gap1-rot6'.

        """
        return '%s-n%d-%s-rot%g' % (self.shape, self.size, self.distance_label,
                                    self.rotation_deg)


@dataclass
class Scene:
    """
    Bodies and poses of one scene.

    Attributes
    ----------
    spec : SceneSpec
        The parameters it was made from.
    points : list of numpy.ndarray
        Body-frame vertices, (n, 3) each; bodies 2k and 2k + 1 form pair k (A, B).
    poses : numpy.ndarray
        (steps, num_bodies, 4, 4) world poses at every step.

    """

    spec: SceneSpec
    points: list
    poses: numpy.ndarray

    @property
    def pairs(self):
        """
        Return the (A, B) body indices of every pair.

        Returns
        -------
        numpy.ndarray
            (num_pairs, 2) int array.

        """
        first = 2 * numpy.arange(self.spec.num_pairs)
        return numpy.column_stack([first, first + 1])

    @property
    def num_queries(self):
        """
        Return the number of distance queries in the scene.

        Returns
        -------
        int
            num_pairs * steps.

        """
        return self.spec.num_pairs * self.spec.steps


def body_rng(shape, size, seed):
    """
    Return the generator of a scene family's bodies.

    Bodies depend only on the seed, shape and size, so every motion scene of one size uses the
    same bodies (and the peers build their objects once per size).

    Parameters
    ----------
    shape : str
        'hull' or 'box'.
    size : int
        Vertices per body.
    seed : int
        Run seed.

    Returns
    -------
    numpy.random.Generator
        Independent stream.

    """
    return numpy.random.default_rng([seed, zlib.crc32(('%s|%d' % (shape, size)).encode())])


def motion_rng(spec, seed):
    """
    Return the generator of a scene's motions.

    Parameters
    ----------
    spec : SceneSpec
        Scene parameters (the pair count is left out, so a smaller run is a prefix).
    seed : int
        Run seed.

    Returns
    -------
    numpy.random.Generator
        Independent stream for this scene.

    """
    key = '%s|%d|%s|%g' % (spec.shape, spec.size, spec.distance_label, spec.rotation_deg)
    return numpy.random.default_rng([seed, 1, zlib.crc32(key.encode())])


def sphere_points(count, rng):
    """
    Draw points uniformly on the unit sphere.

    Parameters
    ----------
    count : int
        Number of points.
    rng : numpy.random.Generator
        Random source.

    Returns
    -------
    numpy.ndarray
        (count, 3) unit vectors.

    """
    directions = rng.normal(size=(count, 3))
    return directions / numpy.linalg.norm(directions, axis=1, keepdims=True)


def box_points(half_extents):
    """
    Return the 8 corners of an axis-aligned box centred at the origin.

    Parameters
    ----------
    half_extents : array_like
        (3,) half sizes.

    Returns
    -------
    numpy.ndarray
        (8, 3) corners.

    """
    return ConvexPolytope.box(half_extents).vertices.copy()


def random_rotation(rng):
    """
    Draw a rotation matrix uniformly from SO(3) (a normalised Gaussian quaternion).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.

    Returns
    -------
    numpy.ndarray
        (3, 3) rotation.

    """
    w, x, y, z = rng.normal(size=4)
    return quaternion_matrix(x, y, z, w)


def make_body(shape, size, rng):
    """
    Make the body-frame vertices of one body.

    Parameters
    ----------
    shape : str
        'hull' (points on the unit sphere) or 'box' (8 corners, random half sizes).
    size : int
        Vertices of a hull (ignored for boxes).
    rng : numpy.random.Generator
        Random source.

    Returns
    -------
    numpy.ndarray
        (n, 3) vertices, centred on the origin.

    """
    if shape == 'box':
        return box_points(rng.uniform(*BOX_HALF_EXTENT_RANGE, size=3))
    if shape == 'hull':
        return sphere_points(size, rng)
    raise ValueError('unknown shape %r (expected hull or box)' % shape)


def make_bodies(shape, size, num_pairs, seed=0):
    """
    Make the bodies of every pair of a scene family.

    Parameters
    ----------
    shape : str
        'hull' or 'box'.
    size : int
        Vertices per hull.
    num_pairs : int
        Number of pairs; bodies 2k and 2k + 1 form pair k.
    seed : int
        Run seed.

    Returns
    -------
    list of numpy.ndarray
        (n, 3) body-frame vertices of the 2 * num_pairs bodies.

    """
    rng = body_rng(shape, size, seed)
    return [make_body(shape, size, rng) for _ in range(2 * num_pairs)]


def centre_distance(spec, radius_a, radius_b, rng):
    """
    Draw the initial centre distance of a pair.

    Parameters
    ----------
    spec : SceneSpec
        Scene parameters (gap).
    radius_a, radius_b : float
        Bounding radii of the two bodies.
    rng : numpy.random.Generator
        Random source.

    Returns
    -------
    float
        Distance between the body centres.

    """
    if spec.gap is None:
        return rng.uniform(*OVERLAP_RANGE) * (radius_a + radius_b)
    return radius_a + radius_b + spec.gap * (radius_a + radius_b)


def pair_motion(spec, radius_a, radius_b, rng):
    """
    Make the poses of one pair over the whole sequence.

    Parameters
    ----------
    spec : SceneSpec
        Scene parameters.
    radius_a, radius_b : float
        Bounding radii of the two bodies.
    rng : numpy.random.Generator
        Random source.

    Returns
    -------
    numpy.ndarray
        (steps, 2, 4, 4) poses of A and B.

    """
    diameter = radius_a + radius_b
    poses = numpy.tile(numpy.eye(4), (spec.steps, 2, 1, 1))
    poses[:, 0, :3, :3] = random_rotation(rng)
    poses[:, 0, :3, 3] = rng.uniform(-1.0, 1.0, size=3)
    offset = sphere_points(1, rng)[0] * centre_distance(spec, radius_a, radius_b, rng)
    velocity = sphere_points(1, rng)[0] * STEP_TRANSLATION * diameter
    rotation = random_rotation(rng)
    max_angle = numpy.radians(spec.rotation_deg)
    for step in range(spec.steps):
        if step > 0 and max_angle > 0.0:
            # A turn by a random angle about a random unit axis, as its quaternion.
            axis = sphere_points(1, rng)[0]
            half = 0.5 * rng.uniform(0.0, max_angle)
            x, y, z = numpy.sin(half) * axis
            rotation = quaternion_matrix(x, y, z, numpy.cos(half)) @ rotation
        poses[step, 1, :3, :3] = rotation
        poses[step, 1, :3, 3] = poses[0, 0, :3, 3] + offset + step * velocity
    return poses


def make_scene(spec, seed=0, bodies=None):
    """
    Generate a scene.

    Parameters
    ----------
    spec : SceneSpec
        Scene parameters.
    seed : int
        Run seed; the same seed and parameters always give the same scene.
    bodies : list of numpy.ndarray, optional
        The output of `make_bodies` for this shape and size (made here when omitted).

    Returns
    -------
    Scene
        Bodies and poses.

    """
    if bodies is None:
        bodies = make_bodies(spec.shape, spec.size, spec.num_pairs, seed)
    rng = motion_rng(spec, seed)
    poses = numpy.empty((spec.steps, 2 * spec.num_pairs, 4, 4))
    for pair in range(spec.num_pairs):
        radius_a = float(numpy.max(numpy.linalg.norm(bodies[2 * pair], axis=1)))
        radius_b = float(numpy.max(numpy.linalg.norm(bodies[2 * pair + 1], axis=1)))
        poses[:, 2 * pair:2 * pair + 2] = pair_motion(spec, radius_a, radius_b, rng)
    return Scene(spec=spec, points=list(bodies[:2 * spec.num_pairs]), poses=poses)


def transform(pose, points):
    """
    Map body-frame points to the world frame.

    Parameters
    ----------
    pose : numpy.ndarray
        (4, 4) body -> world transform.
    points : numpy.ndarray
        (n, 3) body-frame points.

    Returns
    -------
    numpy.ndarray
        (n, 3) world points.

    """
    return points @ pose[:3, :3].T + pose[:3, 3]
