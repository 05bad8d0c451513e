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
The QoS profiles of the node's topics, as the ecosystem uses them.

One definition for the node, its demo and its consumers; and the Fast DDS profile a process
that publishes camera clouds runs with (docs/transport.md says why and what it measured).
"""

import os
import tempfile

from rclpy.duration import Duration
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, LivelinessPolicy, QoSProfile,
                       ReliabilityPolicy)

__all__ = ['cloud_publisher_environment', 'CLOUD_PUBLISHER_PROFILE', 'LATCHED_QOS', 'MARKER_QOS',
           'OUTPUT_QOS', 'safety_period', 'safety_qos', 'SHM_SEGMENT_BYTES', 'TF_QOS',
           'TF_STATIC_QOS']

# tf2_ros's own settings: /tf reliable volatile depth 100, /tf_static transient_local.
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
TF_STATIC_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL,
                           history=HistoryPolicy.KEEP_LAST)
# robot_state_publisher's robot_description (MoveIt's robot_description_semantic), and our
# ~/names: latched, latest only.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         history=HistoryPolicy.KEEP_LAST)
# Volatile so that both volatile and transient_local marker publishers match.
MARKER_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
# The node's outputs.
OUTPUT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)


# The shortest deadline and liveliness lease the safety outputs offer, seconds.
MIN_SAFETY_PERIOD = 0.25


def safety_period(rate_hz):
    """
    Return the deadline and liveliness lease (seconds) the safety outputs offer at ``rate_hz``.

    The node publishes at least every 2.25 periods (the watchdog, pacing.py); three periods,
    and never under a quarter second, leave room for a late timer on a loaded machine.
    """
    return max(MIN_SAFETY_PERIOD, 3.0 / rate_hz)


def safety_qos(period):
    """
    Return the QoS of the safety outputs: OUTPUT_QOS offering a deadline and a lease.

    A subscriber that requests a deadline or an AUTOMATIC liveliness lease of at least
    ``period`` is matched and told by the middleware when the node stops publishing or its
    process stops (SIGSTOP, a crash), with no message from the node; one that requests
    neither is matched as before.
    """
    lease = Duration(seconds=period)
    return QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST,
                      deadline=lease, liveliness=LivelinessPolicy.AUTOMATIC,
                      liveliness_lease_duration=lease)


# Fast DDS's shared-memory segment of a participant holds what it sends to processes on the same
# machine; its default (512 KiB) fragments a 640x480 cloud (3.7 MB) into many pieces, and with
# best effort nearly every cloud loses one (docs/transport.md: 4-13 % arrive). 32 MiB holds
# eight such clouds: each goes whole. Only the sender's segment matters.
SHM_SEGMENT_BYTES = 32 * 1024 * 1024
# The participant profile of a cloud publisher: shared memory with that segment for local
# subscribers, UDPv4 (Fast DDS's default) for remote ones.
_PROFILE_TEMPLATE = """<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>shm_clouds</transport_id>
      <type>SHM</type>
      <segment_size>%d</segment_size>
    </transport_descriptor>
    <transport_descriptor>
      <transport_id>udp</transport_id>
      <type>UDPv4</type>%s
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="gjk_ros_cloud_publisher" is_default_profile="true">
    <rtps>
      <userTransports>
        <transport_id>shm_clouds</transport_id>
        <transport_id>udp</transport_id>
      </userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
"""
# What keeps UDPv4 on the loopback interface, as ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST asks
# (rmw_fastrtps adds a loopback-only transport of its own then; a profile's transport without
# this list would still reach other machines).
_LOOPBACK_ONLY = """
      <interfaceWhiteList>
        <address>127.0.0.1</address>
      </interfaceWhiteList>"""
CLOUD_PUBLISHER_PROFILE = _PROFILE_TEMPLATE % (SHM_SEGMENT_BYTES, '')


def _localhost_only():
    """Whether the environment keeps ROS on this machine (REP 2009's discovery range)."""
    return os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '').upper() in ('LOCALHOST', 'OFF') \
        or os.environ.get('ROS_LOCALHOST_ONLY') == '1'


def cloud_publisher_environment(folder=None):
    """
    Return the environment variables a cloud publisher process starts with (rmw_fastrtps).

    Writes ``CLOUD_PUBLISHER_PROFILE`` (its UDPv4 kept on the loopback interface when the
    discovery range keeps ROS on this machine) to ``folder`` and names it in
    ``FASTRTPS_DEFAULT_PROFILES_FILE``, which Fast DDS reads when the process creates its
    participant (``rclpy.init``; ``folder`` defaults to ``gjk_ros`` in the temporary
    directory): set it in the child's environment, or in ``os.environ``
    before ``rclpy.init``. A profile file the environment already names is kept (the user's
    own tuning wins), and so is any other RMW, which ignores it.
    """
    if os.environ.get('FASTRTPS_DEFAULT_PROFILES_FILE'):
        return {}
    folder = folder or os.path.join(tempfile.gettempdir(), 'gjk_ros')
    os.makedirs(folder, exist_ok=True)
    local = _localhost_only()
    path = os.path.join(folder, 'gjk_ros_cloud_publisher%s.xml' % ('_localhost' if local else ''))
    # Written beside and renamed over: a process starting meanwhile reads a whole profile.
    partial = '%s.%d' % (path, os.getpid())
    with open(partial, 'w') as profile:
        profile.write(_PROFILE_TEMPLATE % (SHM_SEGMENT_BYTES, _LOOPBACK_ONLY if local else ''))
    os.replace(partial, path)
    return {'FASTRTPS_DEFAULT_PROFILES_FILE': path}
