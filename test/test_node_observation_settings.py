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
The observation-source parameters, set at run time through the real node, take effect.

One node with one point-cloud source, ``cam`` on ``/settings_cloud``, in the frame ``sensor``
at (2, 0, 0.5). The arm is a 0.2 m cube at (0, 0, 0.5) (``link_geometry``). The cloud holds
``NEAR`` (world (0.5, 0, 0.5): 0.4 m from the arm, 1.5 m from the sensor) and ``FAR`` (world
(1, 0, 0.5): 0.9 m from the arm, 1.0 m from the sensor), and ``OWN`` 0.015 m from the arm's face,
which the default ``self_filter_padding`` (0.02) removes. ``OBSERVATION_EFFECTS`` joins
test_node_settings' table, so no parameter escapes the every-parameter check; a source's own
parameters are named ``<name>.<parameter>`` there and set as ``cam.<parameter>``.
"""

import math
import os

from gjk_ros.ros import PairStatus
from node_harness import find_record, NodeProcess, parameter, Scene, session_domain_id, \
    setting as harness_setting, STARTUP_TIMEOUT, wait_until
import numpy
import pytest
import yaml

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip('rclpy')

from sensor_msgs.msg import PointCloud2  # noqa: E402, I100
from test_node_observations import cloud_message, Sensors  # noqa: E402, I100

TOPIC = '/settings_cloud'
NEAR, FAR, OWN = (-1.5, 0.0, 0.0), (-1.0, 0.0, 0.0), (-1.885, 0.0, 0.0)  # sensor frame
START = {'rate_hz': 20.0, 'tf_timeout': 5.0, 'max_distance': 10.0,
         'require_robot_description': False, 'robot_description_timeout': 3600.0,
         'link_geometry': yaml.safe_dump([{'name': 'arm', 'frame_id': 'arm', 'type': 'box',
                                           'size': [0.2, 0.2, 0.2]}]),
         'observation_sources': ['cam'],
         'cam': {'type': 'pointcloud', 'topic': TOPIC, 'source_timeout': 5.0}}
DEFAULTS = {'required_observation_sources': [], 'cam.source_timeout': 5.0,
            'cam.min_range': 0.0, 'cam.max_range': math.inf,
            'cam.min_height': -math.inf, 'cam.max_height': math.inf, 'cam.voxel_size': 0.0,
            'cam.publish_filtered': False, 'self_filter_padding': 0.02,
            'observation_max_points': 2000000, 'observation_max_bytes': 64000000,
            'observation_max_time': 0.5}
# World coordinates of the points (the sensor is at (2, 0, 0.5), axes as the world's).
WORLD = {point: (point[0] + 2.0, point[1], point[2] + 0.5) for point in (NEAR, FAR, OWN)}


@pytest.fixture(scope='module')
def node(tmp_path_factory):
    with NodeProcess(os.environ, tmp_path_factory.mktemp('observation_settings'),
                     START) as process:
        yield process


@pytest.fixture(scope='module')
def scene(node):
    with Scene(session_domain_id()) as scene:
        scene.send_static_tf('world', 'sensor', (2.0, 0.0, 0.5))
        scene.send_tf('world', 'arm', (0.0, 0.0, 0.5))
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
                   'the nearest point at 0.4 m', STARTUP_TIMEOUT)
        yield scene


def setting(scene, **values):
    """Set parameters (``cam__x`` stands for ``cam.x``), then restore their defaults."""
    values = {name.replace('__', '.'): value for name, value in values.items()}
    return harness_setting(scene, DEFAULTS, **values)


def cam_record(scene):
    return find_record(scene.records() or [], 'arm', 'cam')


def cam_distance(scene):
    record = cam_record(scene)
    return record.distance if record is not None and record.status == PairStatus.VALID \
        else None


def send_until(scene, node, predicate, what, timeout=10.0, points=(NEAR, FAR, OWN)):
    """Send the cloud, freshly stamped, until ``predicate`` holds (best effort may drop one)."""
    sensors = Sensors(scene)

    def sent():
        sensors.send(TOPIC, cloud_message(numpy.array(points, dtype=float), 'sensor',
                                          scene.now_ns()))
        return predicate()
    wait_until(sent, timeout, what, period=0.1, node_process=node)


def check_start_up_only(scene, node):
    for name, value in (('observation_sources', ['x']), ('cam.type', 'scan'),
                        ('cam.topic', '/elsewhere'), ('cam.qos', 'reliable')):
        answers = scene.set_node_parameters([parameter(name, value)])
        assert not answers[0].successful and 'restart' in answers[0].reason, name
    answers = scene.set_node_parameters([parameter('cam.qos', 'best')])
    assert not answers[0].successful and 'sensor_data' in answers[0].reason


def check_required(scene, node):
    with setting(scene, required_observation_sources=['cam']):
        send_until(scene, node, lambda: scene.message('min_distance').data == pytest.approx(
            0.4, abs=1e-9), 'a finite minimum once cam is heard and fresh')
        with setting(scene, cam__source_timeout=0.05):  # cam silent at once: not ready
            wait_until(lambda: scene.message('min_distance').data == -math.inf,
                       what='-inf while the required source is silent', node_process=node)


def check_timeout(scene, node):
    with setting(scene, cam__source_timeout=0.05):
        wait_until(lambda: cam_record(scene) is not None and
                   cam_record(scene).status == PairStatus.STALE, what='cam STALE',
                   node_process=node)


def check_ranges(scene, node):
    with setting(scene, cam__max_range=1.2):  # NEAR is 1.5 m from the sensor
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.9, abs=1e-9),
                   'FAR nearest once NEAR is out of range')
    with setting(scene, cam__min_range=1.2):  # FAR is 1.0 m from the sensor
        send_until(scene, node, lambda: cam_distance(scene) is None,
                   'a cloud of FAR alone leaves nothing', points=(FAR,))
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
                   'NEAR kept')


def check_heights(scene, node):
    for name, value in (('cam__max_height', 0.4), ('cam__min_height', 0.6)):
        with setting(scene, **{name: value}):  # every point is at z 0.5: none left
            send_until(scene, node, lambda: cam_distance(scene) is None,
                       'no measured cam pair with %s %g' % (name, value))
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
                   'cam measured again')


def check_self_filter(scene, node):
    with setting(scene, self_filter_padding=0.0):
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.015, abs=1e-9),
                   'the arm-side point kept without padding')
    send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
               'the arm-side point filtered again')


def check_limits(scene, node):
    for name, value in (('observation_max_points', 2), ('observation_max_bytes', 64),
                        ('observation_max_time', 1e-9)):
        with setting(scene, **{name: value}):
            send_until(scene, node, lambda name=name: node.lines_with("'cam'", name),
                       'the cloud refused by %s' % name)
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
                   'cam measured again')


def check_voxel_size(scene, node):
    """FAR and NEAR share one 2 m voxel; FAR comes first in the cloud and is kept."""
    with setting(scene, cam__voxel_size=2.0):
        send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.9, abs=1e-9),
                   'FAR kept for the voxel', points=(FAR, NEAR, OWN))
    send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
               'NEAR measured again without voxels', points=(FAR, NEAR, OWN))


def check_publish_filtered(scene, node):
    """Republish the self-filtered cloud in the world frame: NEAR and FAR, not the arm's OWN."""
    scene.subscribe('filtered', PointCloud2, '/gjk_distance/cam/filtered')
    with setting(scene, cam__publish_filtered=True):
        def republished():
            message = scene.message('filtered')
            if message is None or message.header.frame_id != 'world':
                return False
            xyz = numpy.frombuffer(bytes(message.data), dtype='<f4').reshape(-1, 3)
            got = sorted(map(tuple, xyz.astype(float).tolist()))
            want = sorted(tuple(float(numpy.float32(v)) for v in WORLD[p]) for p in (NEAR, FAR))
            return got == want
        send_until(scene, node, republished, 'the filtered cloud on ~/cam/filtered')


OBSERVATION_EFFECTS = [
    (('observation_sources', '<name>.type', '<name>.topic', '<name>.qos'),
     check_start_up_only),
    (('required_observation_sources',), check_required),
    (('<name>.source_timeout',), check_timeout),
    (('<name>.min_range', '<name>.max_range'), check_ranges),
    (('<name>.min_height', '<name>.max_height'), check_heights),
    (('<name>.voxel_size',), check_voxel_size),
    (('<name>.publish_filtered',), check_publish_filtered),
    (('self_filter_padding',), check_self_filter),
    (('observation_max_points', 'observation_max_bytes', 'observation_max_time'),
     check_limits),
]


@pytest.mark.parametrize('names, check', OBSERVATION_EFFECTS,
                         ids=['+'.join(names) for names, _ in OBSERVATION_EFFECTS])
def test_observation_setting_at_run_time_takes_effect(scene, node, names, check):
    check(scene, node)
    send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
               'cam back to its start state')


def test_a_cloud_filtered_before_the_robot_changed_is_not_used(scene, node):
    """
    A link appears around NEAR: the cloud filtered without it is not searched (STALE).

    Its NEAR point would lie inside the new link; the next cloud is filtered against it.
    """
    send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
               'cam measured')
    probe = yaml.safe_dump([
        {'name': 'arm', 'frame_id': 'arm', 'type': 'box', 'size': [0.2, 0.2, 0.2]},
        {'name': 'probe', 'frame_id': 'world', 'type': 'box', 'size': [0.1, 0.1, 0.1],
         'xyz': list(WORLD[NEAR])}])
    answers = scene.set_node_parameters([parameter('link_geometry', probe)])
    assert answers[0].successful, answers[0].reason
    try:
        def probe_record():
            return find_record(scene.records() or [], 'probe', 'cam')

        def stale_until_a_new_cloud():
            record = probe_record()
            assert record is None or record.status == PairStatus.STALE or \
                record.distance > 0.0, 'a point inside the new link was measured'
            return cam_record(scene).status == PairStatus.STALE and \
                scene.message('min_distance').data == -math.inf
        wait_until(stale_until_a_new_cloud, what='arm/cam STALE until a new cloud',
                   node_process=node)
        send_until(scene, node, lambda: probe_record() is not None and
                   probe_record().status == PairStatus.VALID and
                   probe_record().distance == pytest.approx(0.45, abs=1e-9),
                   'FAR nearest to the probe once NEAR is filtered')
        assert cam_distance(scene) == pytest.approx(0.9, abs=1e-9)
    finally:
        scene.set_node_parameters([parameter('link_geometry', START['link_geometry'])])
    send_until(scene, node, lambda: cam_distance(scene) == pytest.approx(0.4, abs=1e-9),
               'cam back to its start state')
