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
Publish /tf as robot_state_publisher does at a high joint rate: one TFMessage of a chain.

``python -m bench.tf_flood --rate-hz 1000 --frames 50 [--duration 10]`` publishes a chain
``world -> flood_1 -> ... -> flood_<frames>`` stamped with the current time, at the given rate,
until stopped (or for ``duration`` seconds). Used by the node benchmark and the shutdown test.
"""

import argparse
import time


def main(argv=None):
    """Publish until the duration ends or the process is stopped."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--rate-hz', type=float, default=1000.0)
    parser.add_argument('--frames', type=int, default=50)
    parser.add_argument('--parent', default='world')
    parser.add_argument('--duration', type=float, default=float('inf'))
    options = parser.parse_args(argv)

    from geometry_msgs.msg import TransformStamped
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage
    rclpy.init()
    node = rclpy.create_node('gjk_tf_flood')
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    publisher = node.create_publisher(TFMessage, '/tf', qos)
    message = TFMessage()
    for index in range(options.frames):
        transform = TransformStamped()
        transform.header.frame_id = options.parent if index == 0 else 'flood_%d' % index
        transform.child_frame_id = 'flood_%d' % (index + 1)
        transform.transform.translation.z = 0.01
        transform.transform.rotation.w = 1.0
        message.transforms.append(transform)
    period, start, count = 1.0 / options.rate_hz, time.monotonic(), 0
    try:
        while time.monotonic() - start < options.duration:
            stamp = node.get_clock().now().to_msg()
            for transform in message.transforms:
                transform.header.stamp = stamp
            publisher.publish(message)
            count += 1
            delay = start + count * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
