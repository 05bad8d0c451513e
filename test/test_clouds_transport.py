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

"""The Fast DDS profile of a cloud publisher (docs/transport.md), read back as Fast DDS would."""

import xml.etree.ElementTree as ElementTree

from gjk_ros.ros.qos import cloud_publisher_environment, SHM_SEGMENT_BYTES
import pytest

NS = {'fastdds': 'http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles'}
CLOUD_BYTES = 640 * 480 * 12  # the demo's and the load bench's cloud: x, y, z float32


def test_the_profile_gives_shared_memory_a_segment_for_whole_clouds(tmp_path, monkeypatch):
    monkeypatch.delenv('FASTRTPS_DEFAULT_PROFILES_FILE', raising=False)
    environment = cloud_publisher_environment(str(tmp_path / 'profiles'))
    root = ElementTree.parse(environment['FASTRTPS_DEFAULT_PROFILES_FILE']).getroot()
    transports = {node.findtext('fastdds:transport_id', namespaces=NS):
                  node for node in root.iterfind('.//fastdds:transport_descriptor', NS)}
    assert {node.findtext('fastdds:type', namespaces=NS) for node in transports.values()} == \
        {'SHM', 'UDPv4'}, 'local subscribers by shared memory, remote ones by UDP'
    (shm,) = [node for node in transports.values()
              if node.findtext('fastdds:type', namespaces=NS) == 'SHM']
    segment = int(shm.findtext('fastdds:segment_size', namespaces=NS))
    assert segment == SHM_SEGMENT_BYTES >= 4 * CLOUD_BYTES
    participant = root.find('fastdds:participant', NS)
    assert participant.get('is_default_profile') == 'true'
    assert participant.findtext('.//fastdds:useBuiltinTransports', namespaces=NS) == 'false'
    used = [node.text for node in participant.iterfind('.//fastdds:userTransports/'
                                                       'fastdds:transport_id', NS)]
    assert sorted(used) == sorted(transports)


def test_a_profile_the_user_named_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv('FASTRTPS_DEFAULT_PROFILES_FILE', '/etc/my_robot/fastdds.xml')
    assert cloud_publisher_environment(str(tmp_path)) == {}
    assert not list(tmp_path.iterdir())


def test_the_transport_table_counts_what_arrived_and_the_sequence_gaps():
    numpy = pytest.importorskip('numpy')
    load_bench = pytest.importorskip('bench.load_bench')
    ms = 1_000_000
    published = numpy.arange(10, dtype=numpy.int64) * 33 * ms
    # Clouds 2 and 5 lost on the way; the one published at 9 is outside the window.
    received = numpy.array([[stamp + 4 * ms, stamp, index + 100]
                            for index, stamp in enumerate(published) if index not in (2, 5)],
                           dtype=numpy.int64)
    figures = load_bench.transport_figures(published, received, (0, 9 * 33 * ms))
    assert (figures['published'], figures['arrived'], figures['sequence_gaps']) == (9, 7, 2)
    assert figures['latency_p99_ms'] == pytest.approx(4.0)
    empty = load_bench.transport_figures(published, numpy.zeros((0, 3), numpy.int64),
                                         (0, 9 * 33 * ms))
    assert (empty['arrived'], empty['sequence_gaps']) == (0, 0)


@pytest.mark.parametrize('variable, value, loopback', [
    ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST', True),
    ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET', False),
    ('ROS_LOCALHOST_ONLY', '1', True),
    (None, None, False),
])
def test_udp_stays_on_loopback_when_ros_is_kept_on_this_machine(
        tmp_path, monkeypatch, variable, value, loopback):
    for name in ('FASTRTPS_DEFAULT_PROFILES_FILE', 'ROS_AUTOMATIC_DISCOVERY_RANGE',
                 'ROS_LOCALHOST_ONLY'):
        monkeypatch.delenv(name, raising=False)
    if variable is not None:
        monkeypatch.setenv(variable, value)
    environment = cloud_publisher_environment(str(tmp_path))
    root = ElementTree.parse(environment['FASTRTPS_DEFAULT_PROFILES_FILE']).getroot()
    (udp,) = [node for node in root.iterfind('.//fastdds:transport_descriptor', NS)
              if node.findtext('fastdds:type', namespaces=NS) == 'UDPv4']
    addresses = [node.text for node in udp.iterfind('.//fastdds:address', NS)]
    assert addresses == (['127.0.0.1'] if loopback else [])
