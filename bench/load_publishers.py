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
The load benchmark's publishers: the Panda on /tf with obstacles, and depth cameras.

Each runs as its own process (``python -m bench.load_publishers arm|camera ...``), as
robot_state_publisher and a camera driver would, and writes the stamp (int ns) of everything it
publishes to a log, so the benchmark can tell which input each output rests on.

- **arm**: the URDF on ``robot_description``; ``/tf_static`` for the fixed joints (and
  ``world`` -> the root); ``/tf`` at ``--rate-hz``, one message of every moving joint as
  robot_state_publisher sends it (parent -> child, from forward kinematics of a smooth sinusoid
  per joint, ``gjk_ros.models.kinematics``), padded to ``--frames`` transforms a message with a
  chain of frames the robot does not use; ``--obstacles`` markers around the arm, republished
  until the node's ``~/names`` lists them all (or, with ``--names-topic`` once per shard, until
  the shards' lists together do).
- **camera**: one organized 640x480 ``PointCloud2`` (float32 x, y, z) rendered once by the demo's
  ray caster (``gjk_ros.demo.depth_camera``) from a camera on a ring around the arm looking at
  it; the boxes around the arm and the floor are in the picture, the arm is not (a cloud
  rendered once cannot follow its motion: the self-filter still tests every point, and removes
  none). Published at ``--rate-hz`` with the current time as stamp.
- **listen**: a raw subscriber of one camera's clouds, as the node subscribes them, that logs
  what arrives (receive time, cloud stamp, the publisher's sequence number): the transport
  table of ``python -m bench.load_bench --transport`` (docs/transport.md).

Both publish pre-serialized bytes (``Publisher.publish`` of CDR) with the stamps and poses
written in place, so that a 1 kHz TF stream or a 4.9 MB cloud at 30 Hz costs the publisher
little more than the middleware's own work (a Python publisher building messages field by
field could not keep 1 kHz on this machine).
"""

import argparse
import math
import os
import pathlib
import sys
import time

import numpy

# Where MotionBenchMaker's scenes and the Panda are (test/mbm.py looks in the same place).
MBM_DIR = pathlib.Path(os.environ.get(
    'GJK_ROS_MBM', pathlib.Path(__file__).resolve().parent.parent.parent / 'shared' / 'mbm'))
PANDA_URDF = pathlib.Path('robowflex_resources') / 'panda' / 'urdf' / 'panda.urdf'
FIXED_FRAME = 'world'
# A usual Panda working pose (MoveIt's 'ready'); the sinusoids swing about it.
PANDA_READY = {'panda_joint1': 0.0, 'panda_joint2': -0.785, 'panda_joint3': 0.0,
               'panda_joint4': -2.356, 'panda_joint5': 0.0, 'panda_joint6': 1.571,
               'panda_joint7': 0.785, 'panda_finger_joint1': 0.02}
AMPLITUDE_RAD = 0.4
AMPLITUDE_M = 0.015
CAMERA_WIDTH, CAMERA_HEIGHT = 640, 480
# The cameras sit on a ring around the arm, at this radius and height, looking at its middle.
CAMERA_RING = (1.6, 1.0)
CAMERA_TARGET = (0.0, 0.0, 0.45)
# Boxes around the arm the cameras see: (centre, half sizes); inside the arm's reach in part.
CAMERA_BOXES = (((0.6, 0.0, 0.2), (0.15, 0.3, 0.2)), ((-0.5, 0.4, 0.35), (0.1, 0.1, 0.35)),
                ((0.0, -0.7, 0.5), (0.3, 0.05, 0.5)), ((0.3, 0.55, 0.1), (0.1, 0.1, 0.1)))


# -- the robot --------------------------------------------------------------------------------

def robot_description():
    """
    Return (URDF text, label): the Panda of ../shared/mbm when present, else the demo arm.

    The Panda's meshes are named ``package://robowflex_resources/...``; they are rewritten to
    ``file://`` URIs of that folder so the node finds them without an ament index entry. Its
    root ``panda_link0`` sits at the origin of ``world`` (MotionBenchMaker's placement with no
    ``base_offset``).
    """
    urdf = MBM_DIR / PANDA_URDF
    if urdf.is_file():
        share = (MBM_DIR / 'robowflex_resources').resolve()
        text = urdf.read_text().replace('package://robowflex_resources/', f'file://{share}/')
        return text, f'Panda ({urdf})'
    from gjk_ros.demo.scene import load_demo_urdf
    return load_demo_urdf(), (f'demo arm (gjk_ros/resources/demo_arm.urdf): no Panda at '
                              f'{MBM_DIR} (set GJK_ROS_MBM)')


def joint_motion(kinematics):
    """
    Return (offset, amplitude, period, phase) arrays, one sinusoid per configuration variable.

    Revolute joints swing AMPLITUDE_RAD about PANDA_READY (0 for other robots), prismatic ones
    AMPLITUDE_M; both kept inside the joint limits; periods 3 to 8 s, phases apart.
    """
    names = kinematics.variable_names
    count = len(names)
    prismatic = {joint.name for joint in kinematics.joints if joint.type == 'prismatic'}
    amplitude = numpy.array([AMPLITUDE_M if name in prismatic else AMPLITUDE_RAD
                             for name in names])
    lower = numpy.where(numpy.isfinite(kinematics.lower), kinematics.lower, -math.pi)
    upper = numpy.where(numpy.isfinite(kinematics.upper), kinematics.upper, math.pi)
    amplitude = numpy.minimum(amplitude, 0.5 * (upper - lower))
    ready = numpy.array([PANDA_READY.get(name, 0.0) for name in names])
    offset = numpy.clip(ready, lower + amplitude, upper - amplitude)
    period = 3.0 + 5.0 * numpy.arange(count) / max(count - 1, 1)
    phase = 0.7 * numpy.arange(count)
    return offset, amplitude, period, phase


def configuration(motion, seconds):
    """Return the configuration at scene time ``seconds`` of ``joint_motion``'s sinusoids."""
    offset, amplitude, period, phase = motion
    return offset + amplitude * numpy.sin(2.0 * math.pi * seconds / period + phase)


def obstacle_specs(count, seed=7):
    """
    Return ``count`` obstacle markers around the arm (node_bench's seeded shell, any count).

    Boxes, spheres, cylinders and 40-point hulls 0.25 to 1.0 m from the arm's axis, 0.1 to 1.6 m
    high: some within reach, most not.
    """
    from bench.node_bench import bench_obstacles
    return bench_obstacles(count, seed) if count else []


# -- pre-serialized messages ------------------------------------------------------------------

class TfTemplate:
    """
    A serialized ``tf2_msgs/TFMessage`` whose stamps and poses are written in place.

    The transforms' frame names are fixed, so every field sits at a fixed offset of the CDR
    bytes; the offsets are found by serializing once with marker values in them.

    Parameters
    ----------
    frames : sequence of (parent, child)
        The transforms of every message, in order.

    """

    def __init__(self, frames):
        from geometry_msgs.msg import TransformStamped
        from rclpy.serialization import serialize_message
        from tf2_msgs.msg import TFMessage

        message = TFMessage()
        for index, (parent, child) in enumerate(frames):
            transform = TransformStamped()
            transform.header.frame_id, transform.child_frame_id = parent, child
            transform.header.stamp.sec = 1_000_000 + index
            transform.transform.translation.x = 1e9 + index
            transform.transform.rotation.w = 1.0
            message.transforms.append(transform)
        data = serialize_message(message)
        self._buffer = bytearray(data)
        # The transforms are serialized in order, each its stamp before its pose: search each
        # marker after the last one found, so that one marker's bytes inside another field (a
        # float's, with hundreds of frames) are never taken for it.
        stamps, poses, start = [], [], 0
        for index in range(len(frames)):
            stamps.append(_find(data, numpy.int32(1_000_000 + index).tobytes(), start))
            poses.append(_find(data, numpy.float64(1e9 + index).tobytes(), stamps[-1]))
            start = poses[-1] + 56
        self._stamps, self._poses = numpy.array(stamps), numpy.array(poses)
        # Translation then rotation: 7 consecutive float64 (CDR aligns each to 8 already).
        self._words = numpy.frombuffer(self._buffer, dtype=numpy.uint8)

    def __len__(self):
        """Return the number of transforms in a message."""
        return len(self._stamps)

    def fill(self, stamp_ns, poses):
        """
        Return the message bytes with every stamp ``stamp_ns`` and ``poses``.

        Parameters
        ----------
        stamp_ns : int
            Header stamp of every transform, ns.
        poses : (n, 7) float
            Translation x, y, z and quaternion x, y, z, w of each transform.

        """
        sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
        stamp = numpy.array([sec, nanosec], dtype='<u4').view(numpy.uint8)
        pose_bytes = numpy.ascontiguousarray(poses, dtype='<f8').view(numpy.uint8).reshape(
            len(self._poses), 56)
        words = self._words
        words[self._stamps[:, None] + numpy.arange(8)] = stamp
        words[self._poses[:, None] + numpy.arange(56)] = pose_bytes
        return bytes(self._buffer)


def _find(data, marker, start):
    """Return the first offset of ``marker`` in ``data`` from ``start`` (ValueError if none)."""
    found = data.find(marker, start)
    if found < 0:
        raise ValueError('template marker not found')
    return found


def stamped_bytes(message):
    """
    Return (bytearray of a serialized message with a Header first, offset of its stamp).

    The CDR payload follows a 4-byte encapsulation header; ``header.stamp`` (int32 sec, uint32
    nanosec) is the first field of such a message.
    """
    from rclpy.serialization import serialize_message
    return bytearray(serialize_message(message)), 4


def write_stamp(buffer, offset, stamp_ns):
    """Write ``stamp_ns`` as a little-endian builtin_interfaces/Time at ``offset``."""
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    buffer[offset:offset + 8] = numpy.array([sec, nanosec], dtype='<u4').tobytes()


def joint_transforms(moving, links):
    """
    Return (n, 7) parent -> child poses of the ``moving`` joints, as robot_state_publisher.

    ``moving`` holds (parent, child) link indices, ``links`` the (L, 4, 4) world poses from
    ``KinematicModel.forward``; a joint's transform is inv(parent) @ child.
    """
    from gjk_ros.core.rigid import matrix_to_quaternion

    rows = numpy.empty((len(moving), 7))
    for row, (parent, child) in enumerate(moving):
        relative = numpy.linalg.solve(links[parent], links[child])
        rows[row, :3] = relative[:3, 3]
        rows[row, 3:] = matrix_to_quaternion(relative[:3, :3])
    return rows


# -- the processes ----------------------------------------------------------------------------

def run_arm(options):
    """Publish the robot, its motion on /tf and the obstacles until stopped."""
    from gjk_ros.demo.monitor import NODE_NAME
    from gjk_ros.demo.scene import make_marker, make_transform
    from gjk_ros.models.kinematics import parse_kinematics
    from gjk_ros.ros.qos import LATCHED_QOS, TF_QOS
    from gjk_ros.ros.records import names_from_json
    import rclpy
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    urdf, _ = robot_description()
    kinematics = parse_kinematics(urdf)
    motion = joint_motion(kinematics)
    index = {link: i for i, link in enumerate(kinematics.links)}
    moving = [(index[joint.parent], index[joint.child]) for joint in kinematics.joints
              if joint.type != 'fixed']
    names = [(joint.parent, joint.child) for joint in kinematics.joints if joint.type != 'fixed']
    extra = max(options.frames - len(names), 0)
    names += [(FIXED_FRAME if i == 0 else f'load_extra_{i}', f'load_extra_{i + 1}')
              for i in range(extra)]
    template = TfTemplate(names)
    extra_poses = numpy.tile([0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 1.0], (extra, 1))

    rclpy.init(args=[sys.argv[0]])
    node = rclpy.create_node('gjk_load_arm')
    node.create_publisher(String, '/robot_description', LATCHED_QOS).publish(String(data=urdf))
    now = node.get_clock().now().to_msg()
    links = kinematics.forward(kinematics.neutral())
    static = [make_transform(joint.parent, joint.child,
                             numpy.linalg.solve(links[index[joint.parent]],
                                                links[index[joint.child]]), now)
              for joint in kinematics.joints if joint.type == 'fixed']
    if kinematics.links[0] != FIXED_FRAME:
        static.append(make_transform(FIXED_FRAME, kinematics.links[0], numpy.eye(4), now))
    node.create_publisher(TFMessage, '/tf_static', LATCHED_QOS).publish(
        TFMessage(transforms=static))
    tf_publisher = node.create_publisher(TFMessage, '/tf', TF_QOS)
    specs = obstacle_specs(options.obstacles)
    state = {'acknowledged': not specs, 'next_markers': 0.0}
    marker_publisher = node.create_publisher(MarkerArray, f'/{NODE_NAME}/obstacles',
                                             LATCHED_QOS)

    # Every node that reads the markers (one, or each shard its part) lists what it took in its
    # ~/names: acknowledged once the names listed together cover every marker.
    listed = {}

    def on_names(topic, message):
        listed[topic] = set(names_from_json(message.data)[1].values())
        if len(set().union(*listed.values())) >= len(specs):
            state['acknowledged'] = True
    for topic in options.names_topic or [f'/{NODE_NAME}/names']:
        node.create_subscription(String, topic, lambda message, topic=topic: on_names(
            topic, message), LATCHED_QOS)

    period = 1.0 / options.rate_hz
    start, tick = time.monotonic(), 0
    with open(options.stamp_log, 'w', buffering=1 << 16) as stamp_log:
        try:
            while True:
                q = configuration(motion, tick * period)
                links = kinematics.forward(q)
                poses = joint_transforms(moving, links)
                if extra:
                    poses = numpy.concatenate([poses, extra_poses])
                stamp_ns = node.get_clock().now().nanoseconds
                tf_publisher.publish(template.fill(stamp_ns, poses))
                stamp_log.write(f'{stamp_ns}\n')
                tick += 1
                if tick % 10 == 0:
                    rclpy.spin_once(node, timeout_sec=0.0)
                    if not state['acknowledged'] and time.monotonic() >= state['next_markers']:
                        stamp = node.get_clock().now().to_msg()
                        marker_publisher.publish(MarkerArray(
                            markers=[make_marker(spec, stamp) for spec in specs]))
                        state['next_markers'] = time.monotonic() + 1.0
                start = keep_pace(start, tick, period)
        except KeyboardInterrupt:
            pass
        finally:
            rclpy.try_shutdown()


def keep_pace(start, tick, period):
    """Sleep until tick ``tick`` of a fixed-rate loop is due (``pace``); return its start."""
    start, delay = pace(start, tick, period)
    if delay > 0.0:
        time.sleep(delay)
    return start


def pace(start, tick, period):
    """
    Return (start, seconds to sleep) before tick ``tick`` of a fixed-rate loop.

    A publisher that fell more than 5 periods behind (the machine is overloaded) starts its
    schedule again from now instead of bursting to catch up, as a driver drops late frames:
    the stamp log shows the rate it kept.
    """
    delay = start + tick * period - time.monotonic()
    if delay < -5.0 * period:
        return start - delay, 0.0
    return start, delay


def camera_of(index, count):
    """Return the DepthCamera ``index`` of ``count``, evenly spaced on CAMERA_RING."""
    from gjk_ros.demo.depth_camera import DepthCamera
    angle = 2.0 * math.pi * index / count + 0.3
    radius, height = CAMERA_RING
    return DepthCamera(eye=(radius * math.cos(angle), radius * math.sin(angle), height),
                       target=CAMERA_TARGET, width=CAMERA_WIDTH, height=CAMERA_HEIGHT,
                       horizontal_fov=math.radians(70.0), max_range=4.0)


def render_cloud(camera, seed=0):
    """
    Return the camera's points (optical frame, (h * w, 3) float32) of the boxes and the floor.

    One pixel in ten drops out (NaN), as a depth camera's do.
    """
    from gjk_ros.demo.depth_camera import camera_pose, render
    from gjk_ros.models.transforms import xyz_rpy_to_matrix
    shapes = [('box', xyz_rpy_to_matrix(centre), half) for centre, half in CAMERA_BOXES]
    points = render(camera, camera_pose(camera), shapes)
    points[numpy.random.default_rng(seed).random(len(points)) < 0.1] = numpy.nan
    return points.astype(numpy.float32)


def run_camera(options):
    """Publish one camera's cloud at ``--rate-hz`` until stopped."""
    from gjk_ros.demo.depth_camera import camera_pose, cloud_message
    from gjk_ros.demo.scene import make_transform
    from gjk_ros.ros.qos import LATCHED_QOS
    import rclpy
    from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import PointCloud2
    from tf2_msgs.msg import TFMessage

    camera = camera_of(options.index, options.count)
    name = camera_name(options.index)
    rclpy.init(args=[sys.argv[0]])
    node = rclpy.create_node(f'gjk_load_{name}')
    now = node.get_clock().now().to_msg()
    node.create_publisher(TFMessage, '/tf_static', LATCHED_QOS).publish(TFMessage(
        transforms=[make_transform(FIXED_FRAME, name, camera_pose(camera), now)]))
    qos = qos_profile_sensor_data if options.qos == 'sensor_data' else QoSProfile(
        depth=5, reliability=ReliabilityPolicy.RELIABLE)
    publisher = node.create_publisher(PointCloud2, camera_topic(options.index), qos)
    message = cloud_message(render_cloud(camera, options.index), camera, now)
    message.header.frame_id = name
    buffer, offset = stamped_bytes(message)
    period = 1.0 / options.rate_hz
    start, tick = time.monotonic(), 0
    with open(options.stamp_log, 'w', buffering=1 << 12) as stamp_log:
        try:
            while True:
                stamp_ns = node.get_clock().now().nanoseconds
                write_stamp(buffer, offset, stamp_ns)
                publisher.publish(bytes(buffer))
                stamp_log.write(f'{stamp_ns}\n')
                tick += 1
                start = keep_pace(start, tick, period)
        except KeyboardInterrupt:
            pass
        finally:
            rclpy.try_shutdown()


def run_listener(options):
    """Log ``receive_ns stamp_ns publication_sequence_number`` of every cloud until stopped."""
    from gjk_ros.ros.inputs.sources.clouds import read_cloud_header
    from gjk_ros.ros.inputs.sources.observations import subscription_qos
    import rclpy
    from sensor_msgs.msg import PointCloud2

    rclpy.init(args=[sys.argv[0]])
    node = rclpy.create_node('gjk_load_listener')
    with open(options.log, 'w', buffering=1) as log:  # line by line: stopped any time
        def on_cloud(data, info):
            log.write('%d %d %d\n' % (time.time_ns(), read_cloud_header(data).stamp_ns,
                                      info['publication_sequence_number']))

        node.create_subscription(PointCloud2, options.topic, on_cloud,
                                 subscription_qos(options.qos), raw=True)
        try:
            rclpy.spin(node)
        except KeyboardInterrupt:
            pass
        finally:
            rclpy.try_shutdown()


def camera_name(index):
    """Return the observation source name (and optical frame) of camera ``index``."""
    return f'camera{index}'


def camera_topic(index):
    """Return the cloud topic of camera ``index``."""
    return f'/{camera_name(index)}/depth/points'


def parse_args(argv=None):
    """Parse the command line: ``arm`` or ``camera`` and their settings."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    kinds = parser.add_subparsers(dest='kind', required=True)
    arm = kinds.add_parser('arm', help='the robot, its /tf and the obstacles')
    arm.add_argument('--rate-hz', type=float, default=100.0)
    arm.add_argument('--frames', type=int, default=0,
                     help='transforms a /tf message (at least the moving joints)')
    arm.add_argument('--obstacles', type=int, default=0)
    arm.add_argument('--names-topic', action='append', default=[],
                     help='a ~/names topic of a node that reads the markers (repeat for each '
                          "shard; default the node's)")
    arm.add_argument('--stamp-log', required=True)
    camera = kinds.add_parser('camera', help='one depth camera')
    camera.add_argument('--index', type=int, default=0)
    camera.add_argument('--count', type=int, default=1, help='cameras on the ring')
    camera.add_argument('--rate-hz', type=float, default=30.0)
    camera.add_argument('--qos', choices=('reliable', 'sensor_data'), default='reliable')
    camera.add_argument('--stamp-log', required=True)
    listen = kinds.add_parser('listen', help="log the clouds that arrive on a camera's topic")
    listen.add_argument('--topic', default=camera_topic(0))
    listen.add_argument('--qos', choices=('reliable', 'sensor_data'), default='reliable')
    listen.add_argument('--log', required=True)
    return parser.parse_args(argv)


def main(argv=None):
    """Run one publisher."""
    options = parse_args(argv)
    {'arm': run_arm, 'camera': run_camera, 'listen': run_listener}[options.kind](options)
    return 0


if __name__ == '__main__':
    sys.exit(main())
