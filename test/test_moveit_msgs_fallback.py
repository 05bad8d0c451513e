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

"""The vendored planning scene messages are upstream's text, and the build uses every one."""

import hashlib
import pathlib
import re

import pytest

FALLBACK = pathlib.Path(__file__).resolve().parent.parent / 'tools' / 'moveit_msgs_fallback'


def recorded_digests():
    text = (FALLBACK / 'README.md').read_text(encoding='utf-8')
    return {path: digest for digest, path in
            re.findall(r'^([0-9a-f]{64})  (\S+\.msg)$', text, flags=re.MULTILINE)}


def test_every_vendored_file_is_upstream_text():
    digests = recorded_digests()
    files = sorted(str(path.relative_to(FALLBACK)) for path in FALLBACK.glob('*/msg/*.msg'))
    assert files == sorted(digests)
    for name in files:
        assert hashlib.sha256((FALLBACK / name).read_bytes()).hexdigest() == digests[name], name


def test_each_package_builds_exactly_its_vendored_messages():
    for package in ('moveit_msgs', 'octomap_msgs', 'object_recognition_msgs'):
        listed = re.findall(r'"(msg/\w+\.msg)"',
                            (FALLBACK / package / 'CMakeLists.txt').read_text(encoding='utf-8'))
        present = sorted('msg/' + path.name for path in (FALLBACK / package / 'msg').glob('*'))
        assert sorted(listed) == present, package
        assert (FALLBACK / package / 'COLCON_IGNORE').is_file()


def test_planning_scene_types_import():
    from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
    scene = PlanningScene()
    assert isinstance(scene.world.collision_objects, list)
    # A byte field and its constants read as one-byte bytes in rclpy.
    assert CollisionObject.MOVE == b'\x03'
    assert AttachedCollisionObject().object.operation == b'\x00'


def recorded_hashes():
    text = (FALLBACK / 'README.md').read_text(encoding='utf-8')
    return dict(re.findall(r'^(moveit_msgs/msg/\w+) +(RIHS01_[0-9a-f]{64})$', text,
                           flags=re.MULTILINE))


@pytest.mark.ros
def test_endpoint_type_hashes_are_the_recorded_ones(rclpy_context):
    from moveit_msgs import msg
    from rclpy.node import Node
    hashes = recorded_hashes()
    assert len(hashes) == 3
    node = Node('moveit_hash_probe', context=rclpy_context)
    try:
        for type_name, expected in hashes.items():
            topic = 'moveit_hash_probe_' + type_name.rsplit('/', 1)[1]
            node.create_publisher(getattr(msg, type_name.rsplit('/', 1)[1]), topic, 1)
            # Local endpoints are in the graph cache at once: no discovery wait.
            endpoints = node.get_publishers_info_by_topic(topic)
            assert [str(e.topic_type_hash) for e in endpoints] == [expected], type_name
    finally:
        node.destroy_node()
