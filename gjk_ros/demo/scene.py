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
Demo scene publisher: a moving arm near obstacles, as real ROS 2 traffic.

The process plays the part of robot_state_publisher and of a perception stack:

- the URDF on ``robot_description`` (``std_msgs/String``, transient_local);
- joint motion as TF on ``/tf`` (reliable, volatile, depth 100, as tf2_ros) and the fixed joints
  on ``/tf_static`` (reliable, transient_local);
- obstacles as a ``visualization_msgs/MarkerArray`` on the distance node's ``~/obstacles``, one
  of them attached to a frame that moves, so a moving frame moves the obstacle; or, with
  ``--collision-objects``, the same obstacles as ``moveit_msgs/CollisionObject`` messages on
  ``/collision_object``, as a MoveIt application adds them to the planning scene (each object's
  id is the marker's ``ns/id``, so the node reports the same names).

The motion is a function of the tick count, not of the wall clock, so every run plays the same
sequence of poses (only the stamps, which are the wall time of publication, differ).

Run it alone with ``python -m gjk_ros.demo.scene`` (``--help``: the obstacle topic and rate, and
ROS arguments such as ``--ros-args -r __ns:=/sim``); ``gjk-ros demo`` starts it for you.
"""

import argparse
from dataclasses import dataclass, field
import importlib.resources
import math
import os
import sys
from typing import Callable, Optional, Sequence

from geometry_msgs.msg import Point, Pose, TransformStamped
from gjk_ros.core.rigid import matrix_to_quaternion
from gjk_ros.demo.dropout import CrossingGaps, TfDropout
from gjk_ros.models.kinematics import parse_kinematics
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.ros.qos import LATCHED_QOS, TF_QOS
import numpy
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

DEMO_URDF_RESOURCE = 'demo_arm.urdf'
DEFAULT_OBSTACLE_TOPIC = '/gjk_distance/obstacles'
COLLISION_OBJECT_TOPIC = '/collision_object'
FIXED_FRAME = 'world'


@dataclass(frozen=True)
class JointMotion:
    """
    A sinusoidal joint trajectory: ``offset + amplitude * sin(2 pi t / period + phase)``.

    Attributes
    ----------
    offset, amplitude : float
        In joint units (rad or m).
    period : float
        Seconds.
    phase : float
        Radians.

    """

    offset: float
    amplitude: float
    period: float
    phase: float = 0.0

    def at(self, time):
        """Return the joint position at scene time ``time`` (s)."""
        return self.offset + self.amplitude * math.sin(2.0 * math.pi * time / self.period
                                                       + self.phase)


@dataclass(frozen=True)
class MovingFrame:
    """
    A frame that is not part of the robot and moves with scene time.

    Attributes
    ----------
    parent, child : str
        Frame names.
    pose_at : callable
        Scene time (s) -> (4, 4) float pose of ``child`` in ``parent``.

    """

    parent: str
    child: str
    pose_at: Callable[[float], numpy.ndarray]


@dataclass(frozen=True)
class ObstacleSpec:
    """
    One obstacle marker; the node names it ``ns/marker_id``.

    Attributes
    ----------
    ns : str
        Marker namespace.
    marker_id : int
        Marker id.
    marker_type : int
        A ``visualization_msgs/Marker`` type constant (CUBE, SPHERE, CYLINDER, POINTS, ...).
    frame_id : str
        The frame the obstacle is attached to (the fixed frame, a moving frame or an arm
        link).
    position : (3,) float
        Marker position in ``frame_id``.
    rpy : (3,) float
        Marker orientation in ``frame_id`` (roll, pitch, yaw as URDF's ``rpy``).
    scale : (3,) float
        Marker scale (full sizes, as RViz reads them).
    color : (4,) float
        RGBA, for RViz.
    points : tuple of (3,) float
        Points for POINTS, SPHERE_LIST and TRIANGLE_LIST markers.

    """

    ns: str
    marker_id: int
    marker_type: int
    frame_id: str
    position: tuple
    scale: tuple
    color: tuple = (0.8, 0.3, 0.2, 0.8)
    points: tuple = ()
    rpy: tuple = (0.0, 0.0, 0.0)

    @property
    def name(self):
        """Return the obstacle name as the node reports it (``ns/id``)."""
        return f'{self.ns}/{self.marker_id}'


@dataclass
class SceneConfig:
    """
    Everything the scene publisher sends.

    Attributes
    ----------
    urdf : str
        The robot description (URDF XML).
    joint_motion : dict of str to JointMotion
        Trajectory of each moving joint; a moving joint not listed stays at 0.
    obstacles : list of ObstacleSpec
        Obstacle markers.
    moving_frames : list of MovingFrame
        Extra frames published on /tf.
    rate_hz : float
        TF publication rate.
    obstacle_topic : str
        Where the MarkerArray goes (the distance node's ``~/obstacles``).
    obstacle_period : float
        Seconds between MarkerArray republications (ADD again is idempotent), so a node that
        starts late or subscribes with volatile QoS still gets them.
    collision_objects : bool
        Publish the obstacles as moveit_msgs/CollisionObject on ``/collision_object`` instead
        of markers (the node's planning scene source).
    tf_dropout : gjk_ros.demo.dropout.TfDropout or None
        TF samples left out while a link crosses an obstacle (``demo/dropout.py``).

    """

    urdf: str
    joint_motion: dict
    obstacles: list
    moving_frames: list = field(default_factory=list)
    rate_hz: float = 50.0
    obstacle_topic: str = DEFAULT_OBSTACLE_TOPIC
    obstacle_period: float = 1.0
    collision_objects: bool = False
    tf_dropout: Optional[TfDropout] = None

    def joint_positions(self, time):
        """Return {joint: value} of the moving joints at scene time ``time`` (s)."""
        return {name: motion.at(time) for name, motion in self.joint_motion.items()}


def joint_transforms(model, positions, moving):
    """
    Return (parent, child, parent <- child) of the fixed joints, or (``moving``) of the others.

    Parameters
    ----------
    model : gjk_ros.models.kinematics.KinematicModel
        The arm's joint tree.
    positions : dict
        Joint values by name (rad or m); a joint not in it is at 0.
    moving : bool
        False: the fixed joints (their origins); True: every other joint at ``positions``,
        from the model's forward kinematics.

    """
    if not moving:
        return [(joint.parent, joint.child, joint.origin) for joint in model.joints
                if joint.type == 'fixed']
    names = set(model.variable_names)
    poses = model.forward(model.configuration(
        {name: value for name, value in positions.items() if name in names}))
    return [(joint.parent, joint.child,
             numpy.linalg.solve(poses[model.link_index(joint.parent)],
                                poses[model.link_index(joint.child)]))
            for joint in model.joints if joint.type != 'fixed']


def load_demo_urdf():
    """Return the demo arm's URDF text shipped with the package."""
    resource = importlib.resources.files('gjk_ros') / 'resources' / DEMO_URDF_RESOURCE
    return resource.read_text(encoding='utf-8')


def conveyor_pose(time):
    """Return the pose of the demo's moving 'conveyor' frame: it slides along y."""
    return xyz_rpy_to_matrix((0.7, 0.45 * math.sin(2.0 * math.pi * time / 7.0), 0.45))


# The guard plate in the upper arm's frame: centred on the tool where the elbow turns it
# fastest, its normal along the tool's motion there.
PLATE_POSITION = (0.305, 0.0, 0.693)
PLATE_PITCH = -0.665


def demo_scene_config(rate_hz=50.0):
    """
    Return the demo scene.

    The periods are chosen so that within any 8 s window the tool or the forearm penetrates each
    obstacle and also clears it by more than 20 cm: the arm passes near, touches and penetrates
    every obstacle over the run. The tool crosses the guard plate every 4 s, and every other
    time between two TF samples (``TfDropout``): only the swept distance sees that contact.

    Parameters
    ----------
    rate_hz : float
        TF publication rate.

    Returns
    -------
    SceneConfig

    """
    joint_motion = {
        'shoulder_yaw': JointMotion(offset=0.0, amplitude=0.9, period=10.0),
        'shoulder_pitch': JointMotion(offset=0.75, amplitude=0.35, period=6.0),
        'elbow': JointMotion(offset=0.9, amplitude=0.5, period=4.0, phase=1.0),
    }
    obstacles = [
        ObstacleSpec('box', 0, Marker.CUBE, FIXED_FRAME, (0.62, 0.0, 0.15), (0.24, 0.5, 0.3),
                     color=(0.6, 0.6, 0.6, 0.8)),
        ObstacleSpec('sphere', 0, Marker.SPHERE, FIXED_FRAME, (0.45, 0.5, 0.55),
                     (0.2, 0.2, 0.2), color=(0.2, 0.4, 0.9, 0.8)),
        ObstacleSpec('cylinder', 0, Marker.CYLINDER, FIXED_FRAME, (0.5, -0.5, 0.3),
                     (0.14, 0.14, 0.6), color=(0.2, 0.8, 0.3, 0.8)),
        ObstacleSpec('conveyor', 0, Marker.CUBE, 'conveyor', (0.0, 0.0, 0.0),
                     (0.12, 0.12, 0.12), color=(0.9, 0.7, 0.1, 0.9)),
        # A 5 mm guard plate on the upper arm, across the tool's path where the elbow swings
        # it fastest: the tool passes through it every elbow period (4 s).
        ObstacleSpec('plate', 0, Marker.CUBE, 'upper_arm', PLATE_POSITION, (0.1, 0.1, 0.005),
                     color=(0.9, 0.2, 0.6, 0.8), rpy=(0.0, PLATE_PITCH, 0.0)),
    ]
    return SceneConfig(urdf=load_demo_urdf(), joint_motion=joint_motion, obstacles=obstacles,
                       moving_frames=[MovingFrame(FIXED_FRAME, 'conveyor', conveyor_pose)],
                       rate_hz=rate_hz, tf_dropout=TfDropout('tool', 'plate/0'))


def make_transform(parent, child, pose, stamp):
    """Return a ``geometry_msgs/TransformStamped`` for a (4, 4) pose."""
    message = TransformStamped()
    message.header.stamp = stamp
    message.header.frame_id = parent
    message.child_frame_id = child
    translation = message.transform.translation
    translation.x, translation.y, translation.z = (float(v) for v in pose[:3, 3])
    rotation = message.transform.rotation
    rotation.x, rotation.y, rotation.z, rotation.w = matrix_to_quaternion(pose[:3, :3])
    return message


def _orient(orientation, spec):
    """Write an obstacle's orientation (its ``rpy``) into a geometry_msgs/Quaternion."""
    orientation.x, orientation.y, orientation.z, orientation.w = matrix_to_quaternion(
        xyz_rpy_to_matrix((0.0, 0.0, 0.0), spec.rpy)[:3, :3])


def make_marker(spec, stamp):
    """Return the ``visualization_msgs/Marker`` (action ADD, no lifetime) of an obstacle."""
    marker = Marker()
    marker.header.stamp = stamp
    marker.header.frame_id = spec.frame_id
    marker.ns = spec.ns
    marker.id = spec.marker_id
    marker.type = spec.marker_type
    marker.action = Marker.ADD
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = (
        float(v) for v in spec.position)
    _orient(marker.pose.orientation, spec)
    marker.scale.x, marker.scale.y, marker.scale.z = (float(v) for v in spec.scale)
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = (
        float(v) for v in spec.color)
    marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in spec.points]
    return marker


# shape_msgs/SolidPrimitive of each marker type the demo uses, from the marker's full sizes.
_PRIMITIVES = {
    Marker.CUBE: (1, lambda scale: list(scale)),                          # BOX x, y, z
    Marker.SPHERE: (2, lambda scale: [scale[0] / 2.0]),                   # SPHERE radius
    Marker.CYLINDER: (3, lambda scale: [scale[2], scale[0] / 2.0]),       # CYLINDER h, r
}


def make_collision_object(spec, stamp):
    """Return the ``moveit_msgs/CollisionObject`` (ADD) of an obstacle, named ``ns/id``."""
    from moveit_msgs.msg import CollisionObject
    from shape_msgs.msg import SolidPrimitive
    kind, dimensions = _PRIMITIVES[spec.marker_type]
    message = CollisionObject(id=spec.name, operation=CollisionObject.ADD)
    message.header.stamp = stamp
    message.header.frame_id = spec.frame_id
    message.pose.position.x, message.pose.position.y, message.pose.position.z = (
        float(v) for v in spec.position)
    _orient(message.pose.orientation, spec)
    message.primitives = [SolidPrimitive(type=kind, dimensions=[
        float(v) for v in dimensions(spec.scale)])]
    message.primitive_poses = [Pose()]
    return message


class ScenePublisher(Node):
    """
    Publish a SceneConfig: URDF once, static TF once, moving TF at ``rate_hz``, obstacles.

    Parameters
    ----------
    config : SceneConfig
        What to publish.
    stamp_log : callable, optional
        Called with the stamp (int nanoseconds) of every /tf message after it is published;
        the node benchmark uses it to match ``~/distances`` stamps to TF messages.
    node_name : str
        ROS node name.

    """

    def __init__(self, config, stamp_log=None, node_name='gjk_demo_scene'):
        super().__init__(node_name)
        self._config = config
        self._stamp_log = stamp_log
        self._model = parse_kinematics(config.urdf)
        self._gaps = None if config.tf_dropout is None else \
            CrossingGaps(config.tf_dropout, config, self._model)
        self._tick = 0
        self._parent_pid = os.getppid()
        self._tf_pub = self.create_publisher(TFMessage, '/tf', TF_QOS)
        self._static_pub = self.create_publisher(TFMessage, '/tf_static', LATCHED_QOS)
        self._description_pub = self.create_publisher(String, 'robot_description', LATCHED_QOS)
        if config.collision_objects:
            from moveit_msgs.msg import CollisionObject
            self._obstacle_pub = self.create_publisher(CollisionObject, COLLISION_OBJECT_TOPIC,
                                                       LATCHED_QOS)
        else:
            self._obstacle_pub = self.create_publisher(MarkerArray, config.obstacle_topic,
                                                       LATCHED_QOS)
        self._description_pub.publish(String(data=config.urdf))
        self._publish_static()
        self._publish_obstacles()
        self.create_timer(1.0 / config.rate_hz, self._publish_motion)
        self._obstacle_timer = None
        if config.obstacle_period > 0.0:
            self._obstacle_timer = self.create_timer(config.obstacle_period,
                                                     self._publish_obstacles)
        # Stop with the process that started us, even if it was killed without cleaning up.
        self.create_timer(1.0, self._check_parent)
        self.get_logger().info(
            f'publishing {len(self._model.joints)} joints at {config.rate_hz:g} Hz and '
            f'{len(config.obstacles)} obstacles on {config.obstacle_topic}')

    @property
    def scene_time(self):
        """Return the scene time (s) of the next motion tick."""
        return self._tick / self._config.rate_hz

    def stop_obstacle_republication(self):
        """Stop republishing the obstacles (e.g. once the receiver has them all)."""
        if self._obstacle_timer is not None:
            self.destroy_timer(self._obstacle_timer)
            self._obstacle_timer = None

    def _now(self):
        return self.get_clock().now().to_msg()

    def _publish_static(self):
        stamp = self._now()
        transforms = [make_transform(parent, child, pose, stamp)
                      for parent, child, pose in joint_transforms(self._model, {}, False)]
        self._static_pub.publish(TFMessage(transforms=transforms))

    def _publish_obstacles(self):
        stamp = self._now()
        if self._config.collision_objects:
            for spec in self._config.obstacles:
                self._obstacle_pub.publish(make_collision_object(spec, stamp))
            return
        markers = [make_marker(spec, stamp) for spec in self._config.obstacles]
        self._obstacle_pub.publish(MarkerArray(markers=markers))

    def _publish_motion(self):
        time = self.scene_time
        self._tick += 1
        if self._gaps is not None and not self._gaps.send(self._tick - 1):
            return  # a TF gap while the tool crosses the plate (demo/dropout.py)
        stamp = self._now()
        transforms = [make_transform(parent, child, pose, stamp) for parent, child, pose in
                      joint_transforms(self._model, self._config.joint_positions(time), True)]
        transforms.extend(make_transform(frame.parent, frame.child, frame.pose_at(time), stamp)
                          for frame in self._config.moving_frames)
        self._tf_pub.publish(TFMessage(transforms=transforms))
        if self._stamp_log is not None:
            self._stamp_log(stamp.sec * 1_000_000_000 + stamp.nanosec)

    def _check_parent(self):
        if os.getppid() != self._parent_pid:
            self.get_logger().info('parent process is gone, stopping')
            raise SystemExit(0)


def run_scene(config, args=None, stamp_log=None, duration=None, node_class=ScenePublisher):
    """
    Run a ScenePublisher until Ctrl-C, SIGTERM, parent exit, or ``duration`` seconds.

    Parameters
    ----------
    config : SceneConfig
        The scene.
    args : list of str, optional
        ROS arguments for ``rclpy.init``.
    stamp_log : callable, optional
        See ScenePublisher.
    duration : float, optional
        Wall seconds to run; None runs until stopped.
    node_class : type
        ScenePublisher or a subclass.

    """
    rclpy.init(args=args)
    try:
        node = node_class(config, stamp_log=stamp_log)
        if duration is None:
            rclpy.spin(node)
        else:
            end = node.get_clock().now().nanoseconds + int(duration * 1e9)
            while rclpy.ok() and node.get_clock().now().nanoseconds < end:
                rclpy.spin_once(node, timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException, SystemExit):
        pass
    finally:
        rclpy.try_shutdown()


def parse_args(argv: Optional[Sequence[str]] = None):
    """Parse the scene publisher's command line (ROS arguments are left for rclpy)."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--rate-hz', type=float, default=50.0, help='TF rate (default 50)')
    parser.add_argument('--obstacle-topic', default=DEFAULT_OBSTACLE_TOPIC,
                        help=f'MarkerArray topic (default {DEFAULT_OBSTACLE_TOPIC})')
    parser.add_argument('--duration', type=float, default=None,
                        help='stop after this many seconds (default: run until stopped)')
    parser.add_argument('--collision-objects', action='store_true',
                        help=f'publish the obstacles as moveit_msgs/CollisionObject on '
                             f'{COLLISION_OBJECT_TOPIC} instead of markers')
    return parser.parse_known_args(argv)


def main(argv=None, node_class=ScenePublisher):
    """Run the demo scene publisher (``node_class``: a ScenePublisher subclass may add to it)."""
    argv = sys.argv[1:] if argv is None else argv
    options, ros_args = parse_args(argv)
    config = demo_scene_config(rate_hz=options.rate_hz)
    config.obstacle_topic = options.obstacle_topic
    config.collision_objects = options.collision_objects
    run_scene(config, args=[sys.argv[0]] + ros_args, duration=options.duration,
              node_class=node_class)


if __name__ == '__main__':
    main()
