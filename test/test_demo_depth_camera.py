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

"""The demo's depth camera: its rays hit the surfaces of the primitives it renders, first."""

import math

from gjk_ros.core import ConvexPolytope
from gjk_ros.core.point_distance import PointDistanceShape
import numpy
import pytest

pytest.importorskip('sensor_msgs.msg')

from gjk_ros.demo.depth_camera import (camera_pose, DepthCamera, render,  # noqa: E402, I100
                                       scene_primitives, urdf_primitives)
from gjk_ros.demo.scene import demo_scene_config  # noqa: E402

CORE_SHAPES = {
    'box': lambda size: ConvexPolytope.box(size),
    'sphere': lambda size: ConvexPolytope.sphere(size[0]),
    'cylinder': lambda size: ConvexPolytope.cylinder(size[0], 2.0 * size[1]),
}


def scene_at(time=1.3):
    config = demo_scene_config()
    frames = {frame.child: frame.pose_at(time) for frame in config.moving_frames}
    return scene_primitives(config, urdf_primitives(config.urdf), config.joint_positions(time),
                            frames)


def test_the_scene_tf_is_the_urdf_joint_chain():
    """Each joint's TF is its origin turned about its axis (a quaternion, not the model's FK)."""
    from gjk_ros.core.rigid import quaternion_matrix
    from gjk_ros.demo.depth_camera import link_poses
    from gjk_ros.demo.scene import joint_transforms
    from gjk_ros.models.kinematics import parse_kinematics
    config = demo_scene_config()
    model = parse_kinematics(config.urdf)
    positions = config.joint_positions(2.7)
    by_child = {child: (parent, pose) for parent, child, pose in
                joint_transforms(model, {}, False) + joint_transforms(model, positions, True)}
    assert set(by_child) == set(model.links[1:])
    links = link_poses(model, positions)
    for joint in model.joints:
        motion = numpy.eye(4)
        if joint.type != 'fixed':
            half = 0.5 * positions[joint.name]
            motion[:3, :3] = quaternion_matrix(*(joint.axis * math.sin(half)), math.cos(half))
        parent, pose = by_child[joint.child]
        assert parent == joint.parent
        numpy.testing.assert_allclose(pose, joint.origin @ motion, atol=1e-12)
        numpy.testing.assert_allclose(links[joint.child], links[parent] @ pose, atol=1e-12)


def test_every_hit_is_on_the_nearest_surface_along_its_ray():
    camera = DepthCamera(width=64, height=48)
    pose, shapes = camera_pose(camera), scene_at()
    local = render(camera, pose, shapes)
    hits = numpy.isfinite(local).all(axis=1)
    assert 0.3 < hits.mean() < 1.0
    world = local[hits] @ pose[:3, :3].T + pose[:3, 3]
    prepared = [(PointDistanceShape(CORE_SHAPES[kind](size)), shape_pose)
                for kind, shape_pose, size in shapes]
    distances = numpy.array([shape.signed_distances(world, shape_pose)
                             for shape, shape_pose in prepared] + [world[:, 2]])
    # On a surface (the floor counts), and inside none: the first hit along the ray.
    assert numpy.abs(distances).min(axis=0).max() < 1e-9
    assert distances.min() > -1e-9
    depth = numpy.linalg.norm(local[hits], axis=1)
    assert depth.max() <= camera.max_range


def test_the_arm_is_in_the_picture():
    """The self-filter has work to do: some rays end on the arm's links."""
    camera = DepthCamera(width=64, height=48)
    pose = camera_pose(camera)
    config = demo_scene_config()
    robot = urdf_primitives(config.urdf)
    arm_only = scene_at()[:len(robot)]
    local = render(camera, pose, arm_only, floor=False)
    assert numpy.isfinite(local).all(axis=1).sum() > 50


def test_optical_frame_looks_at_the_target():
    camera = DepthCamera()
    pose = camera_pose(camera)
    forward = numpy.subtract(camera.target, camera.eye)
    assert numpy.allclose(pose[:3, 2], forward / numpy.linalg.norm(forward))
    assert pose[2, 1] < 0.0  # image y points down
    assert numpy.allclose(pose[:3, :3].T @ pose[:3, :3], numpy.eye(3))
    assert math.isclose(numpy.linalg.det(pose[:3, :3]), 1.0)


def test_hull_hits_are_first_hits_on_the_surface():
    """Convex hulls (their face planes) are hit on their surface, first, and missed only clear."""
    rng = numpy.random.default_rng(3)
    camera = DepthCamera(eye=(1.5, 0.0, 0.4), target=(0.0, 0.0, 0.4), width=48, height=36)
    pose = camera_pose(camera)
    prepared, shapes = [], []
    for centre in ((0.0, -0.3, 0.4), (0.2, 0.25, 0.5), (-0.3, 0.0, 0.3)):
        hull = ConvexPolytope.from_points(rng.normal(size=(30, 3)) * 0.15)
        shape_pose = numpy.eye(4)
        shape_pose[:3, :3] = _rotation(rng)
        shape_pose[:3, 3] = centre
        piece = PointDistanceShape(hull)
        radius = float(numpy.linalg.norm(hull.vertices, axis=1).max())
        prepared.append((piece, shape_pose))
        shapes.append(('hull', shape_pose, (piece.planes, radius)))
    local = render(camera, pose, shapes, floor=False)
    hits = numpy.isfinite(local).all(axis=1)
    assert 0.1 < hits.mean() < 0.9
    world = local @ pose[:3, :3].T + pose[:3, 3]
    distances = numpy.array([piece.signed_distances(world[hits], shape_pose)
                             for piece, shape_pose in prepared])
    assert numpy.abs(distances).min(axis=0).max() < 1e-9
    assert distances.min() > -1e-9
    # A missed ray passes outside every hull: sampled every millimetre, it never enters one.
    rays = camera.rays()[~hits] @ pose[:3, :3].T
    steps = numpy.arange(0.0, 3.0, 1e-3)
    for piece, shape_pose in prepared:
        for ray in rays[::7]:
            along = pose[:3, 3] + steps[:, None] * ray
            assert piece.signed_distances(along, shape_pose).min() > -1e-3


def _rotation(rng):
    """Return a random rotation matrix (QR of a Gaussian matrix, sign-fixed to det +1)."""
    q, r = numpy.linalg.qr(rng.normal(size=(3, 3)))
    q = q * numpy.sign(numpy.diag(r))
    if numpy.linalg.det(q) < 0.0:
        q[:, 0] = -q[:, 0]
    return q
