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

"""``config/gjk_distance.rviz`` and the copy the launch file fills in for one node."""

import pathlib

from gjk_ros.ros.rviz_config import fill_rviz_config, fixed_frame_of, node_topic_prefix
import pytest
import yaml

CONFIG_DIR = pathlib.Path(__file__).resolve().parent.parent / 'config'
TEMPLATE = (CONFIG_DIR / 'gjk_distance.rviz').read_text(encoding='utf-8')


def displays(config):
    """Return the first display of each class, by class."""
    shown = {}
    for display in config['Visualization Manager']['Displays']:
        shown.setdefault(display['Class'], display)
    return shown


def named(config, name):
    return next(display for display in config['Visualization Manager']['Displays']
                if display['Name'] == name)


def test_filtered_cloud_of_the_depth_camera_follows_the_node_instance():
    display = named(yaml.safe_load(TEMPLATE), 'Filtered cloud (depth_camera)')
    assert display['Topic']['Value'] == '/gjk_distance/depth_camera/filtered'
    filled = yaml.safe_load(fill_rviz_config(TEMPLATE, '/left/gjk_distance', 'base_link',
                                             '/left/description'))
    assert named(filled, 'Filtered cloud (depth_camera)')['Topic']['Value'] == \
        '/left/gjk_distance/depth_camera/filtered'


def test_shipped_config_shows_the_robot_the_distances_and_the_markers():
    config = yaml.safe_load(TEMPLATE)
    assert config['Visualization Manager']['Global Options']['Fixed Frame'] == 'world'
    shown = displays(config)
    robot = shown['rviz_default_plugins/RobotModel']
    assert robot['Description Source'] == 'Topic'
    # robot_state_publisher latches robot_description: the display must be transient local.
    assert robot['Description Topic'] == {
        'Depth': 1, 'Durability Policy': 'Transient Local', 'History Policy': 'Keep Last',
        'Reliability Policy': 'Reliable', 'Value': '/robot_description'}
    cloud = shown['rviz_default_plugins/PointCloud2']
    assert cloud['Topic']['Value'] == '/gjk_distance/distances'
    assert (cloud['Position Transformer'], cloud['Color Transformer'],
            cloud['Channel Name']) == ('XYZ', 'Intensity', 'distance')
    # Unmeasured records carry NaN: fixed bounds, red at contact.
    assert cloud['Autocompute Intensity Bounds'] is False
    assert (cloud['Min Intensity'], cloud['Min Color']) == (0, '255; 0; 0')
    assert shown['rviz_default_plugins/MarkerArray']['Topic']['Value'] == \
        '/gjk_distance/markers'


def test_shipped_config_shows_the_speed_scaling_label():
    """The factor is a label in ~/markers (outputs.SCALING_NAMESPACE): RViz2 has no Float64."""
    markers = displays(yaml.safe_load(TEMPLATE))['rviz_default_plugins/MarkerArray']
    assert markers['Namespaces'] == {'speed_scaling': True}


@pytest.mark.parametrize('namespace, prefix', [('', '/gjk_distance'),
                                               ('left', '/left/gjk_distance'),
                                               ('/robot/left/', '/robot/left/gjk_distance')])
def test_node_topic_prefix(namespace, prefix):
    assert node_topic_prefix(namespace) == prefix


def test_filled_config_follows_the_node_instance():
    text = fill_rviz_config(TEMPLATE, '/left/gjk_distance', 'base_link', '/left/description')
    config = yaml.safe_load(text)
    shown = displays(config)
    assert config['Visualization Manager']['Global Options']['Fixed Frame'] == 'base_link'
    assert shown['rviz_default_plugins/RobotModel']['Description Topic']['Value'] == \
        '/left/description'
    assert shown['rviz_default_plugins/PointCloud2']['Topic']['Value'] == \
        '/left/gjk_distance/distances'
    assert shown['rviz_default_plugins/MarkerArray']['Topic']['Value'] == \
        '/left/gjk_distance/markers'
    # Everything else is kept as it was.
    original = yaml.safe_load(TEMPLATE)
    assert config['Panels'] == original['Panels']
    assert shown['rviz_default_plugins/PointCloud2']['Channel Name'] == 'distance'


def test_fixed_frame_comes_from_the_argument_or_the_parameter_file(tmp_path):
    shipped = str(CONFIG_DIR / 'gjk_distance.yaml')
    assert fixed_frame_of(shipped) == 'world'
    assert fixed_frame_of(shipped, 'odom') == 'odom'
    named = tmp_path / 'named.yaml'
    named.write_text('left/gjk_distance:\n  ros__parameters:\n    fixed_frame: base\n')
    assert fixed_frame_of(str(named)) == 'base'
    empty = tmp_path / 'empty.yaml'
    empty.write_text('')
    assert fixed_frame_of(str(empty)) == 'world'
