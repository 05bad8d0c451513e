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
A synthetic depth camera for the demo scene: its obstacles and the arm, rendered into a cloud.

The camera looks at the arm from a fixed viewpoint and casts one ray per pixel against the same
primitives the scene publishes (the obstacle markers and the arm's URDF collision geometry at
the joint positions of the TF it sends) and the floor. Each cloud is an organized
``sensor_msgs/PointCloud2`` (float32 x, y, z in the camera's optical frame: x right, y down,
z forward; NaN where a ray hits nothing within range), stamped with the stamp of the TF tick it
was rendered at, so the node places it and poses the arm for its self-filter at exactly the
rendered instant. The arm is in the picture: without the self-filter its own points would be
the nearest obstacle of every link.

``python -m gjk_ros.demo.depth_camera`` runs the demo scene with the camera (what
``gjk-ros demo`` starts); ``DEPTH_CAMERA_PARAMETERS`` configures the node's observation source.
"""

from dataclasses import dataclass
import math
import os
import sys

from geometry_msgs.msg import TransformStamped
from gjk_ros.demo.scene import FIXED_FRAME, main as scene_main, make_transform, ScenePublisher
from gjk_ros.models.kinematics import parse_kinematics
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.urdf import child_elements, robot_element
from gjk_ros.ros.qos import cloud_publisher_environment, LATCHED_QOS
import numpy
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import PointCloud2, PointField
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker

__all__ = ['camera_pose', 'DEPTH_CAMERA_PARAMETERS', 'DepthCamera', 'DepthCameraScene',
           'link_poses', 'render', 'scene_primitives', 'urdf_primitives']

CAMERA_NAME = 'depth_camera'
CAMERA_TOPIC = '/depth_camera/points'
# The node's observation source for the camera (``name:=value`` assignments): the floor is
# cut by min_height, and the self-filtered cloud is republished for RViz.
DEPTH_CAMERA_PARAMETERS = (
    "observation_sources:=['%s']" % CAMERA_NAME,
    '%s.type:=pointcloud' % CAMERA_NAME,
    '%s.topic:=%s' % (CAMERA_NAME, CAMERA_TOPIC),
    '%s.source_timeout:=1.0' % CAMERA_NAME,
    '%s.min_height:=0.02' % CAMERA_NAME,
    '%s.publish_filtered:=true' % CAMERA_NAME,
)


@dataclass(frozen=True)
class DepthCamera:
    """
    A pinhole depth camera.

    Attributes
    ----------
    eye, target : (3,) float
        Where it is and what it looks at, in the fixed frame.
    width, height : int
        Pixels.
    horizontal_fov : float
        Radians.
    max_range : float
        Metres; farther hits are no return (NaN).
    every : int
        Render a cloud every this many TF ticks of the scene.

    """

    eye: tuple = (1.7, -0.9, 1.1)
    target: tuple = (0.35, 0.0, 0.3)
    width: int = 160
    height: int = 120
    horizontal_fov: float = math.radians(70.0)
    max_range: float = 4.0
    every: int = 5

    def rays(self):
        """Return the unit ray of every pixel in the optical frame, (height * width, 3)."""
        focal = 0.5 * self.width / math.tan(0.5 * self.horizontal_fov)
        columns = (numpy.arange(self.width) + 0.5 - 0.5 * self.width) / focal
        rows = (numpy.arange(self.height) + 0.5 - 0.5 * self.height) / focal
        v, u = numpy.meshgrid(rows, columns, indexing='ij')
        rays = numpy.stack([u.ravel(), v.ravel(), numpy.ones(u.size)], axis=1)
        return rays / numpy.linalg.norm(rays, axis=1)[:, None]


def camera_pose(camera):
    """Return fixed <- optical frame (x right, y down, z forward) of a camera."""
    eye = numpy.asarray(camera.eye, dtype=float)
    forward = numpy.asarray(camera.target, dtype=float) - eye
    forward /= numpy.linalg.norm(forward)
    right = numpy.cross(forward, (0.0, 0.0, 1.0))
    right /= numpy.linalg.norm(right)
    pose = numpy.eye(4)
    pose[:3, :3] = numpy.stack([right, numpy.cross(forward, right), forward], axis=1)
    pose[:3, 3] = eye
    return pose


def link_poses(model, positions):
    """
    Return {link: fixed <- link} of a joint tree at ``positions`` ({joint: value}).

    ``model`` is a ``gjk_ros.models.kinematics.KinematicModel`` (its forward kinematics); a
    tree whose root is not the fixed frame is not drawn.
    """
    if model.links[0] != FIXED_FRAME:
        return {FIXED_FRAME: numpy.eye(4)}
    names = set(model.variable_names)
    poses = model.forward(model.configuration(
        {name: value for name, value in positions.items() if name in names}))
    return dict(zip(model.links, poses))


def urdf_primitives(urdf):
    """Return (link, kind, origin, size) of each box, sphere and cylinder <collision>."""
    primitives = []
    for link in child_elements(robot_element(urdf), 'link'):
        for collision in link.iter('collision'):
            origin = collision.find('origin')
            pose = xyz_rpy_to_matrix(*(('0 0 0', '0 0 0') if origin is None else
                                       (origin.get('xyz', '0 0 0'), origin.get('rpy', '0 0 0'))))
            geometry = collision.find('geometry')[0]
            if geometry.tag == 'box':
                size = tuple(float(v) / 2.0 for v in geometry.get('size').split())
            elif geometry.tag == 'sphere':
                size = (float(geometry.get('radius')),)
            elif geometry.tag == 'cylinder':
                size = (float(geometry.get('radius')), float(geometry.get('length')) / 2.0)
            else:
                continue
            primitives.append((link.get('name'), geometry.tag, pose, size))
    return primitives


def scene_primitives(config, robot, positions, frames, model=None):
    """
    Return (kind, fixed <- primitive, size) of everything the camera sees at one instant.

    Parameters
    ----------
    config : gjk_ros.demo.scene.SceneConfig
        The obstacles.
    robot : list
        ``urdf_primitives`` of the arm.
    positions : dict
        Joint positions.
    frames : dict
        Fixed <- frame of the scene's moving frames (an obstacle on an arm link rides the
        link's pose at ``positions``).
    model : gjk_ros.models.kinematics.KinematicModel, optional
        The arm's joint tree (read from ``config.urdf`` when not given).

    """
    links = link_poses(model or parse_kinematics(config.urdf), positions)
    shapes = [(kind, links[link] @ origin, size) for link, kind, origin, size in robot
              if link in links]
    kinds = {Marker.CUBE: 'box', Marker.SPHERE: 'sphere', Marker.CYLINDER: 'cylinder'}
    for spec in config.obstacles:
        kind = kinds.get(spec.marker_type)
        # The fixed frame, a moving frame of the scene, or an arm link.
        frame = numpy.eye(4) if spec.frame_id == FIXED_FRAME else frames.get(
            spec.frame_id, links.get(spec.frame_id))
        if kind is None or frame is None:
            continue
        pose = frame @ xyz_rpy_to_matrix(spec.position, spec.rpy)
        scale = numpy.asarray(spec.scale, dtype=float) / 2.0
        size = {'box': tuple(scale), 'sphere': (scale[0],),
                'cylinder': (scale[0], scale[2])}[kind]
        shapes.append((kind, pose, size))
    return shapes


def render(camera, pose, shapes, floor=True):
    """
    Return the organized cloud of one frame in the optical frame, (height * width, 3).

    Exact ray casts against boxes (slabs), spheres, cylinders (side and caps), convex hulls
    (``_hull_hit``) and the floor z = 0; the nearest hit within ``max_range`` wins, NaN where
    there is none.
    """
    rays = camera.rays()
    directions = rays @ pose[:3, :3].T
    origin = pose[:3, 3]
    depth = numpy.full(len(rays), numpy.inf)
    with numpy.errstate(divide='ignore', invalid='ignore'):
        for kind, shape_pose, size in shapes:
            local_origin = shape_pose[:3, :3].T @ (origin - shape_pose[:3, 3])
            local_directions = directions @ shape_pose[:3, :3]
            hit = _HITS[kind](local_origin, local_directions, size)
            depth = numpy.fmin(depth, numpy.where(hit > 0.0, hit, numpy.inf))
        if floor:
            hit = -origin[2] / directions[:, 2]
            depth = numpy.fmin(depth, numpy.where(hit > 0.0, hit, numpy.inf))
    depth[depth > camera.max_range] = numpy.nan
    return rays * depth[:, None]


def _box_hit(origin, directions, half):
    """Entry distance of each ray into the box |x_i| <= half_i (slab method), NaN if none."""
    low = (-numpy.asarray(half) - origin) / directions
    high = (numpy.asarray(half) - origin) / directions
    near = numpy.nanmax(numpy.fmin(low, high), axis=1)
    far = numpy.nanmin(numpy.fmax(low, high), axis=1)
    return numpy.where(far >= numpy.maximum(near, 0.0), near, numpy.nan)


def _sphere_hit(origin, directions, size):
    half_b = directions @ origin
    disc = half_b * half_b - (origin @ origin - size[0] ** 2)
    return -half_b - numpy.sqrt(disc)


def _cylinder_hit(origin, directions, size):
    """Nearest entry into the cylinder x^2 + y^2 <= r^2, |z| <= half (side or cap)."""
    radius, half = size
    a = directions[:, 0] ** 2 + directions[:, 1] ** 2
    b = directions[:, :2] @ origin[:2]
    c = origin[:2] @ origin[:2] - radius ** 2
    side = (-b - numpy.sqrt(b * b - a * c)) / a
    side[numpy.abs(origin[2] + side * directions[:, 2]) > half] = numpy.nan
    best = side
    for cap in (-half, half):
        t = (cap - origin[2]) / directions[:, 2]
        x = origin[0] + t * directions[:, 0]
        y = origin[1] + t * directions[:, 1]
        t[x * x + y * y > radius * radius] = numpy.nan
        best = numpy.fmin(best, numpy.where(t > 0.0, t, numpy.nan))
    return best


def _hull_hit(origin, directions, size):
    """
    Entry distance of each ray into a convex hull (Cyrus-Beck clipping), NaN if none.

    ``size`` is (face planes (f, 4), radius of a ball about the shape origin holding the hull).
    The ray enters the last of the half-spaces it enters and leaves by the first it leaves;
    only the rays that pass the ball are clipped.
    """
    planes, radius = numpy.asarray(size[0], dtype=float), float(size[1])
    hit = numpy.full(len(directions), numpy.nan)
    along = directions @ origin
    passing = numpy.flatnonzero(along * along - (origin @ origin - radius * radius) >= 0.0)
    if not len(planes) or not len(passing):
        return hit
    normals, offsets = planes[:, :3], planes[:, 3]
    start = normals @ origin + offsets
    rate = directions[passing] @ normals.T
    crossing = -start / rate
    near = numpy.where(rate < 0.0, crossing, -numpy.inf).max(axis=1)
    far = numpy.where(rate > 0.0, crossing, numpy.inf).min(axis=1)
    # A ray parallel to a face plane misses when it starts outside that plane.
    parallel_outside = ((rate == 0.0) & (start > 0.0)).any(axis=1)
    entered = (near <= far) & (far >= 0.0) & ~parallel_outside
    hit[passing[entered]] = numpy.maximum(near[entered], 0.0)
    return hit


_HITS = {'box': _box_hit, 'sphere': _sphere_hit, 'cylinder': _cylinder_hit, 'hull': _hull_hit}


def cloud_message(points, camera, stamp):
    """Return an organized PointCloud2 (float32 x, y, z) of rendered points."""
    message = PointCloud2()
    message.header.stamp = stamp
    message.header.frame_id = CAMERA_NAME
    message.height, message.width = camera.height, camera.width
    message.fields = [PointField(name=axis, offset=4 * index, datatype=PointField.FLOAT32,
                                 count=1) for index, axis in enumerate('xyz')]
    message.is_bigendian = sys.byteorder == 'big'
    message.point_step, message.row_step = 12, 12 * camera.width
    message.is_dense = False
    message.data = points.astype(numpy.float32).tobytes()
    return message


class DepthCameraScene(ScenePublisher):
    """The demo scene publisher with the depth camera (see the module docstring)."""

    def __init__(self, config, stamp_log=None, node_name='gjk_demo_scene',
                 camera=DepthCamera()):
        self._camera, self._pose = camera, camera_pose(camera)
        self._robot = urdf_primitives(config.urdf)
        self._user_stamp_log = stamp_log
        self._cloud_pub = None
        super().__init__(config, stamp_log=self._on_tick, node_name=node_name)
        self._cloud_pub = self.create_publisher(PointCloud2, CAMERA_TOPIC,
                                                qos_profile_sensor_data)
        # The camera does not move: a static transform, from its own latched publisher (one
        # latched message per publisher, so the arm's static joints stay latched too).
        self._camera_tf = self.create_publisher(TFMessage, '/tf_static', LATCHED_QOS)
        now = self.get_clock().now().to_msg()
        self._camera_tf.publish(TFMessage(transforms=[
            make_transform(FIXED_FRAME, CAMERA_NAME, self._pose, now)]))

    def _on_tick(self, stamp_ns):
        """Render the frame of the TF tick just sent, with its stamp."""
        if self._user_stamp_log is not None:
            self._user_stamp_log(stamp_ns)
        tick = self._tick - 1
        if self._cloud_pub is None or tick % self._camera.every:
            return
        time = tick / self._config.rate_hz
        positions = self._config.joint_positions(time)
        frames = {frame.child: frame.pose_at(time) for frame in self._config.moving_frames}
        shapes = scene_primitives(self._config, self._robot, positions, frames, self._model)
        points = render(self._camera, self._pose, shapes)
        stamp = TransformStamped().header.stamp
        stamp.sec, stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        self._cloud_pub.publish(cloud_message(points, self._camera, stamp))


def main(argv=None):
    """Run the demo scene with the depth camera, on the transport docs/transport.md advises."""
    os.environ.update(cloud_publisher_environment())  # read by rclpy.init in scene_main
    scene_main(argv, node_class=DepthCameraScene)


if __name__ == '__main__':
    main()
