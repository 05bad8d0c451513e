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
Fill ``config/gjk_distance.rviz`` in for one node instance (used by the launch file).

An RViz2 config names its topics and fixed frame literally; a node launched with a namespace,
another ``fixed_frame`` or another robot description topic needs a copy with those values.
Only PyYAML is needed (RViz2 configs are YAML).
"""

import yaml

__all__ = ['fill_rviz_config', 'fixed_frame_of', 'node_topic_prefix']

DEFAULT_FIXED_FRAME = 'world'


def node_topic_prefix(namespace, node_name='gjk_distance'):
    """Return the fully qualified node name (its topics' prefix) for a launch namespace."""
    parts = [part for part in namespace.split('/') if part] + [node_name]
    return '/' + '/'.join(parts)


def fixed_frame_of(params_file, override=''):
    """
    Return the ``fixed_frame`` a node started with ``params_file`` will use.

    Parameters
    ----------
    params_file : str
        A ROS 2 parameter file (``<node or /**>: ros__parameters: ...``).
    override : str
        The launch argument; wins when not empty.

    """
    if override:
        return override
    with open(params_file, encoding='utf-8') as stream:
        document = yaml.safe_load(stream) or {}
    for section in document.values():
        parameters = section.get('ros__parameters', {}) if isinstance(section, dict) else {}
        if 'fixed_frame' in parameters:
            return str(parameters['fixed_frame'])
    return DEFAULT_FIXED_FRAME


def fill_rviz_config(template, node_prefix, fixed_frame, description_topic):
    """
    Return the RViz2 config text for one node instance.

    Parameters
    ----------
    template : str
        The text of ``config/gjk_distance.rviz``.
    node_prefix : str
        The node's fully qualified name, e.g. ``/left/gjk_distance``.
    fixed_frame : str
        RViz's fixed frame (the node's ``fixed_frame``).
    description_topic : str
        Topic of the URDF, for the RobotModel display.

    """
    config = yaml.safe_load(template)
    manager = config['Visualization Manager']
    manager['Global Options']['Fixed Frame'] = fixed_frame
    for display in manager['Displays']:
        kind = display['Class'].rsplit('/', 1)[-1]
        if kind == 'RobotModel':
            display['Description Topic']['Value'] = description_topic
        elif kind == 'PointCloud2':
            # ~/distances, or a source's ~/<name>/filtered: the same topic under this node.
            display['Topic']['Value'] = node_prefix + display['Topic']['Value'][
                len(node_topic_prefix('')):]
        elif kind == 'MarkerArray':
            display['Topic']['Value'] = node_prefix + '/markers'
    return yaml.safe_dump(config, default_flow_style=False, sort_keys=False)
