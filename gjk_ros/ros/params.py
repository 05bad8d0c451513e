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
Parameters of the ``gjk_distance`` node: specification, validation and a typed snapshot.

``PARAMETERS`` is the single list the node declares from and that ``config/gjk_distance.yaml``
mirrors (a test checks that they agree). Validation is plain Python so that it can be tested
without a ROS graph; the node calls it from its set-parameters callback.
"""

import array
from dataclasses import dataclass, replace
import fnmatch
import math
import re

from gjk_ros.ros.limits import IngestLimits
from gjk_ros.ros.model_imports import load_models

# The input limits' defaults live in one place, IngestLimits.
_LIMITS = IngestLimits()

__all__ = ['Config', 'documented_parameter_names', 'OBSERVATION_SOURCE_PARAMETERS',
           'ObservationSettings', 'PARAMETERS', 'ParameterSpec', 'parse_body_descriptions',
           'source_parameter_of', 'source_parameter_specs', 'validate_parameter']


@dataclass(frozen=True)
class ParameterSpec:
    """
    One parameter: name, default, description and limits.

    ``kind`` is one of 'string', 'double', 'bool', 'string_array'. ``low``/``high`` are
    inclusive bounds of a double (also declared as a FloatingPointRange unless infinite);
    ``positive`` makes the lower bound exclusive. ``reconfigures`` names the node components
    that take a new value at run time (``DistanceNode.components``).
    """

    name: str
    kind: str
    default: object
    description: str
    low: float = -math.inf
    high: float = math.inf
    positive: bool = False
    reconfigures: tuple = ()


PARAMETERS = (
    ParameterSpec('fixed_frame', 'string', 'world',
                  'Frame of every output: witness points, normals, markers, the ~/distances '
                  'header.',
                  reconfigures=('frames', 'sources')),
    ParameterSpec('rate_hz', 'double', 30.0,
                  'Most cycles per second, Hz. A cycle runs when new /tf arrives (capped at this '
                  'rate) and, when no /tf comes, every 1/rate_hz s from a watchdog timer on the '
                  'steady clock. Each cycle uses the latest input only.',
                  low=0.0, high=1000.0, positive=True, reconfigures=('pacing',)),
    ParameterSpec('tf_timeout', 'double', 0.5,
                  'Seconds after which a chain of /tf transforms is stale, measured from its '
                  'latest common header.stamp on the node clock (Nav2 source_timeout): pairs '
                  'that depend on it are published with status STALE (1) until it is updated. '
                  '/tf_static never goes stale.',
                  low=0.0, high=3600.0, positive=True, reconfigures=('frames',)),
    ParameterSpec('clock_timeout', 'double', 1.0,
                  'Seconds of steady (wall) time that ROS time may stand still, or be zero, '
                  'before nothing counts as fresh: every pair STALE, ~/min_distance -inf, the '
                  'reason naming /clock (a stopped or paused simulator under use_sim_time).',
                  low=0.0, high=3600.0, positive=True, reconfigures=('clock',)),
    ParameterSpec('tf_buffer_duration', 'double', 10.0,
                  'Seconds of /tf history kept per frame (tf2 cache_time), for interpolation and '
                  'for markers placed at their header.stamp (frame_locked false).',
                  low=0.0, high=3600.0, positive=True, reconfigures=('frames',)),
    ParameterSpec('obstacle_timeout', 'double', 2.0,
                  'Seconds after which a marker namespace that published nothing is a silent '
                  'obstacle source: its obstacles stay, with status STALE (1), and '
                  '~/min_distance is -inf until it publishes again (Nav2 source_timeout). Marker '
                  'lifetimes do not remove the obstacles of a silent source. 0 disables the '
                  'check.',
                  low=0.0, high=3600.0, reconfigures=('sources',)),
    ParameterSpec('static_obstacle_namespaces', 'string_array', [],
                  'fnmatch patterns of marker namespaces published once (latched maps, '
                  'fixtures): they never go stale.',
                  reconfigures=('sources',)),
    ParameterSpec('required_obstacle_sources', 'string_array', [],
                  'Marker namespaces that must have published, and be fresh, before '
                  '~/min_distance is anything but -inf (e.g. the perception pipeline).',
                  reconfigures=('sources',)),
    ParameterSpec('allow_no_obstacles', 'bool', False,
                  'Whether ~/min_distance may read +inf when no obstacle is in scope; false: an '
                  'empty scope reads -inf, because nothing known is not "clear".',
                  reconfigures=('outputs',)),
    ParameterSpec('require_robot_description', 'bool', True,
                  'Whether ~/min_distance stays -inf until robot_description was received and '
                  'built (false: links come only from link_geometry and ~/links).',
                  reconfigures=('sources',)),
    ParameterSpec('robot_description_timeout', 'double', 5.0,
                  'Seconds after start-up without robot_description before it is reported as an '
                  "error (usually a missing remap: see the launch file's robot_description_topic "
                  'argument).',
                  low=0.0, high=3600.0, positive=True, reconfigures=('sources',)),
    ParameterSpec('max_distance', 'double', 1.0,
                  'Metres (.inf for no limit). Pairs whose bounding spheres are farther apart '
                  'than this (after padding) are not computed and are published with status '
                  'BEYOND (4).',
                  low=0.0, positive=True, reconfigures=('outputs',)),
    ParameterSpec('link_include', 'string_array', ['*'],
                  "Links to track, as fnmatch patterns ('*', 'arm_*', 'tool?'): a link must "
                  'match one include pattern and no exclude pattern.',
                  reconfigures=('layout',)),
    ParameterSpec('link_exclude', 'string_array', [],
                  'fnmatch patterns of links not to track (wins over link_include; empty '
                  'excludes none).',
                  reconfigures=('layout',)),
    ParameterSpec('obstacle_include', 'string_array', ['*'],
                  "Obstacles to track, as fnmatch patterns (names are the marker's ns/id, or the "
                  "static obstacle's name).",
                  reconfigures=('layout',)),
    ParameterSpec('obstacle_exclude', 'string_array', [],
                  'fnmatch patterns of obstacles not to track (wins over obstacle_include; empty '
                  'excludes none).',
                  reconfigures=('layout',)),
    ParameterSpec('allowed_pairs', 'string_array', [],
                  "Pairs to track, as 'link_pattern:obstacle_pattern' fnmatch patterns, e.g. "
                  "['gripper*:*', '*:table']; empty tracks every included link against every "
                  'included obstacle.',
                  reconfigures=('layout',)),
    ParameterSpec('excluded_pairs', 'string_array', [],
                  "Pairs not to track, as 'link_pattern:obstacle_pattern' fnmatch patterns "
                  "(MoveIt's allowed collision matrix), e.g. ['tool:workpiece*']: wins over "
                  'allowed_pairs. With self_collision an entry also drops the link-link pairs '
                  'it matches, in either order.',
                  reconfigures=('layout',)),
    ParameterSpec('padding', 'double', 0.0,
                  'Safety margin in metres, subtracted from every distance: every link is '
                  'inflated, its witness point moves along the normal by this much (a self pair '
                  'loses it twice).',
                  low=0.0, high=1000.0, reconfigures=('layout',)),
    ParameterSpec('link_padding', 'string_array', [],
                  "Extra padding per link (MoveIt's link_padding), as 'link_pattern:metres' "
                  "entries added to padding, e.g. ['panda_hand:0.02', 'panda_link[67]:0.01']; "
                  'the first matching entry wins.',
                  reconfigures=('layout',)),
    ParameterSpec('obstacle_padding', 'string_array', [],
                  "Padding per obstacle, as 'obstacle_pattern:metres' entries (names are ns/id "
                  "or the static_obstacles name), e.g. ['people/*:0.3']: the obstacle is "
                  'inflated; the first matching entry wins.',
                  reconfigures=('layout',)),
    ParameterSpec('self_collision', 'bool', False,
                  'Also measure link-link pairs (self-collision) and publish them on '
                  '~/self_distances: every pair of links in scope except links joined by a joint '
                  "(MoveIt's default) and the disable_collisions pairs of "
                  'robot_description_semantic (the SRDF, as MoveIt publishes it).',
                  reconfigures=('layout', 'outputs')),
    ParameterSpec('self_collision_in_min_distance', 'bool', True,
                  'With self_collision, count the link-link pairs in ~/min_distance.',
                  reconfigures=('outputs',)),
    ParameterSpec('static_obstacles', 'string', '',
                  'Obstacles fixed to a frame, as a YAML (or JSON) list in a string. Each entry '
                  'has a name, a frame_id (default: fixed_frame) and pieces; a piece is {type: '
                  'box|sphere|cylinder|capsule|cone|ellipsoid|half_space|mesh|points, ...} '
                  'with xyz/rpy placing it in frame_id (URDF conventions; a half_space is the '
                  'solid z <= 0 of its frame: a floor or a table top), e.g. "[{name: table, '
                  'frame_id: world, pieces: [{type: box, size: [1.2, 0.8, 0.05], xyz: [0.6, '
                  '0.0, 0.4]}]}, {name: floor, type: half_space}]". Empty for none.',
                  reconfigures=('sources',)),
    ParameterSpec('link_geometry', 'string', '',
                  'Extra collision pieces for links (a tool, a held part), in the '
                  'static_obstacles format where name is the link and frame_id defaults to the '
                  "link's frame. They add to the link's URDF collision geometry (the link's "
                  'distance is the minimum over all its pieces). Empty for none.',
                  reconfigures=('sources',)),
    ParameterSpec('decompose_meshes', 'string_array', [],
                  'fnmatch patterns of mesh URIs (URDF <mesh filename>, marker mesh_resource, '
                  "static_obstacles uri), e.g. ['package://my_cell/meshes/shelf*.stl'], to split "
                  'into convex parts with CoACD (the coacd package) when not convex; each part '
                  'is tracked. Off the compute path: a body uses its hull (conservative: '
                  'distances can only be shorter) until its parts are ready, and the diagnostics '
                  'list the meshes still waiting. Parts are cached on disk by mesh content and '
                  'settings.',
                  reconfigures=('decomposition',)),
    ParameterSpec('decomposition_threshold', 'double', 0.05,
                  "CoACD's concavity threshold (relative to the mesh size): smaller gives more, "
                  'tighter parts.',
                  low=0.01, high=1.0, reconfigures=('decomposition',)),
    ParameterSpec('decomposition_timeout', 'double', 600.0,
                  'Seconds one mesh may take to decompose; past it the body keeps its hull (and '
                  'the diagnostics say so).',
                  low=0.0, high=86400.0, positive=True, reconfigures=('decomposition',)),
    ParameterSpec('decomposition_cache', 'string', '',
                  'Folder of the decomposition cache (parts keyed by mesh content and settings); '
                  "'' for $XDG_CACHE_HOME/gjk_ros/decomposition.",
                  reconfigures=('decomposition',)),
    ParameterSpec('max_points', 'integer', _LIMITS.max_points,
                  'Most points in one marker (POINTS, TRIANGLE_LIST, ...) or point-set piece; a '
                  'bigger body is rejected with a reason naming it.',
                  low=1, high=100000000, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('max_markers_per_message', 'integer', _LIMITS.max_markers_per_message,
                  'Most markers in one MarkerArray; a bigger message is ignored (its sources are '
                  'not refreshed, so their obstacles go STALE).',
                  low=1, high=10000000, reconfigures=('ingestion', 'decomposition', 'sources')),
    ParameterSpec('max_message_bytes', 'integer', _LIMITS.max_message_bytes,
                  'Largest ~/obstacles or ~/links message, bytes; a bigger one is ignored.',
                  low=1, high=1099511627776,
                  reconfigures=('ingestion', 'decomposition', 'sources')),
    ParameterSpec('max_mesh_bytes', 'integer', _LIMITS.max_mesh_bytes,
                  'Largest mesh file or MeshFile payload, bytes (loading peaks at about 27x the '
                  'file size, so this keeps the worst case inside ingest_memory_mb).',
                  low=1, high=1099511627776, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('max_mesh_triangles', 'integer', _LIMITS.max_mesh_triangles,
                  'Most triangles in one mesh.',
                  low=1, high=1000000000, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('max_description_bytes', 'integer', _LIMITS.max_description_bytes,
                  'Largest robot_description, bytes.',
                  low=1, high=1099511627776,
                  reconfigures=('ingestion', 'decomposition', 'sources')),
    ParameterSpec('max_parameter_bytes', 'integer', _LIMITS.max_parameter_bytes,
                  'Largest static_obstacles / link_geometry text, bytes.',
                  low=1, high=2147483648, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('max_nesting', 'integer', _LIMITS.max_nesting,
                  'Deepest nesting of static_obstacles / link_geometry YAML.',
                  low=1, high=1000, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('max_yaml_nodes', 'integer', _LIMITS.max_yaml_nodes,
                  'Most YAML nodes in static_obstacles / link_geometry (aliases counted, so an '
                  'alias bomb costs nothing).',
                  low=1, high=100000000, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('ingest_timeout', 'double', _LIMITS.job_timeout_s,
                  'Seconds the geometry worker may spend on one body before it is stopped and '
                  'the body rejected.',
                  low=0.0, high=3600.0, positive=True,
                  reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('ingest_memory_mb', 'integer', _LIMITS.worker_memory_mb,
                  'Memory limit of the geometry worker process, MiB.',
                  low=64, high=1048576, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('hull_warning_threshold', 'double', _LIMITS.hull_warning_threshold,
                  'A non-convex mesh is replaced by its convex hull; warn (once, naming it and '
                  'the figure) when the hull reaches farther than this beyond the mesh surface, '
                  'metres (measured by sampling both surfaces; the warning states the error of '
                  'the figure).',
                  low=0.0, high=1000.0, reconfigures=('ingestion', 'decomposition')),
    ParameterSpec('publish_markers', 'bool', True,
                  'Publish the measured hulls and witness segments on ~/markers '
                  '(visualization_msgs/MarkerArray) for RViz.',
                  reconfigures=('outputs',)),
    ParameterSpec('hill_climbing', 'bool', True,
                  'Find support points by hill climbing over the vertex adjacency graph (Cameron '
                  '1997); false scans every vertex. Results are the same, speed differs for '
                  'large meshes.',
                  reconfigures=('layout',)),
    ParameterSpec('tracking', 'bool', True,
                  'Warm-start each pair from its simplex of the previous cycle (Cameron 1997 '
                  'tracking); false starts every query cold. Results are the same, speed '
                  'differs.',
                  reconfigures=('layout',)),
    # Observation sources (gjk_ros/ros/sources/observations.py); each source's own parameters
    # are OBSERVATION_SOURCE_PARAMETERS, declared under its name.
    ParameterSpec('observation_sources', 'string_array', [],
                  'Names of the point-cloud and laser-scan sources (as in the collision monitor '
                  'of Nav2), e.g. [camera, lidar]; each name N is configured by N.type, N.topic '
                  'and the other <name>.* parameters, declared when the node starts. Each '
                  'source is one obstacle named N, measured exactly from every link to the '
                  'nearest self-filtered point. Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('required_observation_sources', 'string_array', [],
                  'Observation sources that must have sent a usable cloud, and be fresh, '
                  'before ~/min_distance is anything but -inf.',
                  reconfigures=('sources',)),
    ParameterSpec('self_filter_padding', 'double', 0.02,
                  'Metres: cloud points within this distance of a link piece (posed at the '
                  "cloud's stamp) are the robot itself and are removed before measuring.",
                  low=0.0, high=10.0, reconfigures=('sources',)),
    ParameterSpec('observation_max_points', 'integer', 2000000,
                  'Most points in one cloud or scan; a bigger one is refused, naming its '
                  'source (its pairs go STALE).',
                  low=1, high=100000000, reconfigures=('sources',)),
    ParameterSpec('observation_max_bytes', 'integer', 64000000,
                  'Most bytes in one cloud or scan message; a bigger one is refused, naming its '
                  'source.',
                  low=1, high=2000000000, reconfigures=('sources',)),
    ParameterSpec('observation_max_time', 'double', 0.5,
                  'Seconds one cloud may take to decode, place and self-filter (on a '
                  'background thread); a slower cloud is refused, naming its source.',
                  low=0.0, high=60.0, positive=True, reconfigures=('sources',)),
    # Planning scene source (gjk_ros/ros/sources/planning_scene.py, docs/planning_scene.md).
    ParameterSpec('planning_scene', 'bool', False,
                  "Take MoveIt's planning scene as input: world collision objects as "
                  'obstacles named by their id, attached objects as pieces of their link (never '
                  'paired with its touch_links), the allowed collision matrix and link_padding '
                  'as pair rules. The scene is state: it never goes stale.',
                  reconfigures=('sources',)),
    ParameterSpec('collision_object_topic', 'string', '/collision_object',
                  'moveit_msgs/CollisionObject topic (ADD, REMOVE, APPEND, MOVE); empty: none.',
                  reconfigures=('sources',)),
    ParameterSpec('attached_collision_object_topic', 'string', '/attached_collision_object',
                  'moveit_msgs/AttachedCollisionObject topic (attach, detach); empty: none.',
                  reconfigures=('sources',)),
    ParameterSpec('planning_scene_topic', 'string', '/planning_scene',
                  'moveit_msgs/PlanningScene topic (full scenes and diffs, as applications '
                  'publish them to move_group); empty: none.',
                  reconfigures=('sources',)),
    ParameterSpec('monitored_planning_scene_topic', 'string', '/monitored_planning_scene',
                  "moveit_msgs/PlanningScene topic of move_group's scene monitor (full scenes "
                  'and diffs); empty: none.',
                  reconfigures=('sources',)),
    # Managed node and speed scaling (gjk_ros/ros/managed.py, speed_scaling.py;
    # docs/managed_node.md).
    ParameterSpec('autostart', 'bool', True,
                  'Configure and activate at start-up; false waits for a lifecycle manager or '
                  '~/change_state calls (unconfigured: no output but /diagnostics). Read at '
                  'start-up.',
                  reconfigures=('lifecycle',)),
    ParameterSpec('slowdown_distance', 'double', 0.3,
                  'Metres: ~/speed_scaling is 1 at or beyond this minimum distance and falls '
                  'linearly to 0 at stop_distance (a convenience for arm drivers, not a rated '
                  'safety function). Must exceed stop_distance; keep it within max_distance.',
                  low=0.0, high=1000.0, positive=True, reconfigures=('outputs',)),
    ParameterSpec('stop_distance', 'double', 0.05,
                  'Metres: ~/speed_scaling is 0 at or below this minimum distance, and whenever '
                  'the minimum is unknown (-inf).',
                  low=0.0, high=1000.0, reconfigures=('outputs',)),
    ParameterSpec('scaling_release_margin', 'double', 0.02,
                  'Hysteresis, metres: the scaling falls along the ramp and rises along the '
                  'ramp shifted out by this much, so a distance hovering at one point cannot '
                  'make it chatter.',
                  low=0.0, high=1000.0, reconfigures=('outputs',)),
    ParameterSpec('scaling_trigger_cycles', 'integer', 1,
                  'Consecutive cycles that must ask for a lower scaling before it is lowered '
                  "(Nav2's trigger debounce; 1: at once). Unknown is 0 at once regardless.",
                  low=1, high=1000, reconfigures=('outputs',)),
    ParameterSpec('scaling_release_cycles', 'integer', 3,
                  'Consecutive cycles that must allow a higher scaling before it is raised '
                  "(Nav2's release debounce).",
                  low=1, high=1000, reconfigures=('outputs',)),
    ParameterSpec('scaling_groups', 'string_array', [],
                  'Link groups with their own scaling: the name of an SRDF group (its links '
                  "as MoveIt reads the group; e.g. 'panda_arm'), or 'name:link_pattern' "
                  "(fnmatch; e.g. 'left_arm:left_*', several entries with one name join their "
                  'patterns). Each name gets ~/speed_scaling/<name> from the minimum over its '
                  'links; an SRDF group the SRDF does not have reads 0 (unknown).',
                  reconfigures=('outputs',)),
)

OBSERVATION_TYPES = ('pointcloud', 'scan')
"""Values of ``<name>.type``: sensor_msgs/PointCloud2 and sensor_msgs/LaserScan."""

OBSERVATION_QOS = ('sensor_data', 'reliable', 'system_default')
"""Values of ``<name>.qos``: rclpy's qos_profile_sensor_data, reliable depth 5, the default."""

OBSERVATION_SOURCE_PARAMETERS = (
    ParameterSpec('type', 'string', 'pointcloud',
                  'pointcloud (sensor_msgs/PointCloud2: organized or not, float32/float64 x, y, '
                  'z, NaN/inf points skipped) or scan (sensor_msgs/LaserScan, projected with its '
                  'angles, returns outside [range_min, range_max] skipped). Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('topic', 'string', '',
                  'Topic of the source (required). Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('qos', 'string', 'sensor_data',
                  'Subscription QoS: sensor_data (SensorDataQoS: best effort, depth 5; matches '
                  'best-effort and reliable publishers), reliable (reliable, depth 5) or '
                  'system_default. Read at start-up.',
                  reconfigures=('sources',)),
    ParameterSpec('source_timeout', 'double', 0.5,
                  'Seconds after the stamp of its last usable cloud at which the source is '
                  'silent: its pairs are STALE and ~/min_distance is -inf (Nav2 '
                  'source_timeout).',
                  low=0.0, high=3600.0, positive=True, reconfigures=('sources',)),
    ParameterSpec('min_range', 'double', 0.0,
                  'Metres from the sensor under which points are ignored.',
                  low=0.0, reconfigures=('sources',)),
    ParameterSpec('max_range', 'double', math.inf,
                  'Metres from the sensor beyond which points are ignored (.inf: none).',
                  low=0.0, positive=True, reconfigures=('sources',)),
    ParameterSpec('min_height', 'double', -math.inf,
                  'Points lower than this z in fixed_frame (metres) are ignored.',
                  reconfigures=('sources',)),
    ParameterSpec('max_height', 'double', math.inf,
                  'Points higher than this z in fixed_frame (metres) are ignored.',
                  reconfigures=('sources',)),
    ParameterSpec('voxel_size', 'double', 0.0,
                  'Edge of the downsampling voxels in fixed_frame, metres (0: off). The first '
                  'point of each occupied voxel is kept: a real point, so a distance can only be '
                  'longer than with the full cloud, by at most the voxel diagonal.',
                  low=0.0, high=10.0, reconfigures=('sources',)),
    ParameterSpec('publish_filtered', 'bool', False,
                  'Republish the self-filtered cloud (fixed_frame, float32 x, y, z) on '
                  '~/<name>/filtered (sensor_msgs/PointCloud2), for RViz and other consumers.',
                  reconfigures=('sources',)),
)
"""The parameters of one observation source, declared as ``<name>.<parameter>``."""

_SOURCE_SPECS = {spec.name: spec for spec in OBSERVATION_SOURCE_PARAMETERS}
START_UP_SOURCE_PARAMETERS = ('type', 'topic', 'qos')
"""Source parameters that shape its subscription: refused at run time."""


def source_parameter_specs(source):
    """Return the ``OBSERVATION_SOURCE_PARAMETERS`` of one source, named ``<source>.<name>``."""
    return tuple(replace(spec, name='%s.%s' % (source, spec.name))
                 for spec in OBSERVATION_SOURCE_PARAMETERS)


def source_parameter_of(name):
    """Return (source, parameter) of a ``<source>.<parameter>`` name, or None."""
    source, dot, parameter = name.rpartition('.')
    if dot and source and parameter in _SOURCE_SPECS:
        return source, parameter
    return None


def documented_parameter_names():
    """Every parameter name, the per-source ones as ``<name>.<parameter>``."""
    return [spec.name for spec in PARAMETERS] + \
        ['<name>.%s' % spec.name for spec in OBSERVATION_SOURCE_PARAMETERS]


# Names of the node's other sources (piece keys start with a source's name).
_TAKEN_SOURCE_NAMES = ('robot_description', 'parameters', 'obstacles', 'links')


def _validate_source_names(names):
    seen = set()
    for name in names:
        if not isinstance(name, str) or not name or not all(
                part.replace('_', 'a').isalnum() for part in name.split('/')):
            return 'names must be letters, digits, _ and /, got %r' % (name,)
        if name in seen or name in _TAKEN_SOURCE_NAMES:
            return 'the name %r is taken' % name
        seen.add(name)
    return None


def _validate_source_parameter(parameter, value):
    if parameter == 'type' and value not in OBSERVATION_TYPES:
        return 'must be one of %s, got %r' % (', '.join(OBSERVATION_TYPES), value)
    if parameter == 'qos' and value not in OBSERVATION_QOS:
        return 'must be one of %s, got %r' % (', '.join(OBSERVATION_QOS), value)
    return None


@dataclass(frozen=True)
class ObservationSettings:
    """One observation source's parameters (``OBSERVATION_SOURCE_PARAMETERS``; kind is type)."""

    name: str
    kind: str = 'pointcloud'
    topic: str = ''
    qos: str = 'sensor_data'
    source_timeout: float = 0.5
    min_range: float = 0.0
    max_range: float = math.inf
    min_height: float = -math.inf
    max_height: float = math.inf
    voxel_size: float = 0.0
    publish_filtered: bool = False

    @classmethod
    def from_values(cls, name, values):
        """Build from ``{'<name>.<parameter>': value}``; missing ones keep their defaults."""
        kwargs = {}
        for spec in OBSERVATION_SOURCE_PARAMETERS:
            value = values.get('%s.%s' % (name, spec.name))
            if value is not None:
                field = 'kind' if spec.name == 'type' else spec.name
                kwargs[field] = float(value) if spec.kind == 'double' else value
        return cls(name, **kwargs)


_SPECS = {spec.name: spec for spec in PARAMETERS}
# A ROS 2 topic name (absolute, relative or private) without substitutions.
_TOPIC_NAME = re.compile(r'(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')

# A scaling_groups entry: the name becomes a topic name token (~/speed_scaling/<name>).
SCALING_GROUP_ENTRY = re.compile(r'([A-Za-z][A-Za-z0-9_]*)(:.+)?')

PAIR_PARAMETERS = ('allowed_pairs', 'excluded_pairs')
"""The parameters of 'link_pattern:obstacle_pattern' entries."""

LIMIT_PARAMETERS = frozenset({
    'max_points', 'max_markers_per_message', 'max_message_bytes', 'max_mesh_bytes',
    'max_mesh_triangles', 'max_description_bytes', 'max_parameter_bytes', 'max_nesting',
    'max_yaml_nodes', 'ingest_timeout', 'ingest_memory_mb', 'hull_warning_threshold'})
"""The parameters that bound input (see ``Config.ingest_limits``)."""

DECOMPOSITION_PARAMETERS = frozenset({
    'decompose_meshes', 'decomposition_threshold', 'decomposition_timeout',
    'decomposition_cache'})
"""The parameters of the convex decomposition (see gjk_ros.ros.decomposer)."""

_PYTHON_TYPES = {
    'string': (str,),
    'double': (float, int),
    'bool': (bool,),
    'integer': (int,),
    # Any array type: an empty array of whatever type means "no patterns" (see the node).
    'string_array': (list, tuple, array.array),
}


def _validate_double(spec, value):
    if math.isnan(value):
        return 'must be a number, got NaN'
    if spec.positive and value <= spec.low:
        return 'must be > %g, got %g' % (spec.low, value)
    if value < spec.low or value > spec.high:
        return 'must be in [%g, %g], got %g' % (spec.low, spec.high, value)
    return None


# Padding entries per parameter, and the largest padding (the bound of ``padding`` too).
MAX_PADDING_ENTRIES = 1000
MAX_PADDING = 1000.0


def parse_padding_entry(entry):
    """
    Split a ``'pattern:metres'`` padding entry into (pattern, metres).

    The last colon separates, so a pattern may contain colons. Raises ValueError with the
    reason (the entry is quoted: a parameter value, not file content).
    """
    pattern, colon, number = entry.rpartition(':')
    try:
        metres = float(number)
    except ValueError:
        metres = math.nan
    if not colon or not pattern or not 0.0 <= metres <= MAX_PADDING:
        raise ValueError("entries must look like 'pattern:metres' with metres in [0, %g], got %r"
                         % (MAX_PADDING, entry))
    return pattern, metres


def _validate_patterns(spec, value):
    if len(value) > MAX_PADDING_ENTRIES and spec.name.endswith('_padding'):
        return 'at most %d entries, got %d' % (MAX_PADDING_ENTRIES, len(value))
    for pattern in value:
        if not isinstance(pattern, str) or not pattern:
            return 'patterns must be non-empty strings, got %r' % (pattern,)
        if spec.name.endswith('_padding'):
            try:
                parse_padding_entry(pattern)
            except ValueError as error:
                return str(error)
        if spec.name == 'scaling_groups' and not SCALING_GROUP_ENTRY.fullmatch(pattern):
            return "entries must be an SRDF group's name or 'name:link_pattern', with a " \
                "name of letters, digits and '_' (a topic name token), got %r" % pattern
        if spec.name in PAIR_PARAMETERS:
            link_pattern, colon, obstacle_pattern = pattern.partition(':')
            if not colon or not link_pattern or not obstacle_pattern:
                return "entries must look like 'link_pattern:obstacle_pattern', got %r" % pattern
    return None


def validate_parameter(name, value):
    """
    Check one parameter value.

    Parameters
    ----------
    name : str
        Parameter name; unknown names are accepted.
    value : object
        The Python value (float, str, bool, list of str).

    Returns
    -------
    str or None
        Why the value is rejected, or None if it is acceptable.

    """
    spec = _SPECS.get(name)
    templated = source_parameter_of(name) if spec is None else None
    if templated is not None:
        spec = _SOURCE_SPECS[templated[1]]
    if spec is None:
        return None
    if isinstance(value, bool) and spec.kind in ('double', 'integer') or \
            not isinstance(value, _PYTHON_TYPES[spec.kind]):
        return 'expected a %s, got %r' % (spec.kind.replace('_', ' '), value)
    if spec.kind in ('double', 'integer'):
        return _validate_double(spec, float(value))
    if spec.kind == 'string_array':
        reason = _validate_patterns(spec, value)
        if reason is None and name == 'observation_sources':
            reason = _validate_source_names(value)
        return reason
    if templated is not None:
        return _validate_source_parameter(templated[1], value)
    if name == 'fixed_frame' and not value.strip('/'):
        return 'must name a frame'
    if name.endswith('_topic') and value and not _TOPIC_NAME.fullmatch(value):
        return 'not a valid topic name'
    if name in ('static_obstacles', 'link_geometry'):
        try:
            parse_body_descriptions(value)
        except ValueError as error:
            return str(error)
    return None


def _text_limit(limits, name):
    """Return a bound of the body-description text: the caller's, else the default."""
    return int(getattr(limits, name, getattr(_LIMITS, name)))


def parse_body_descriptions(text, limits=None):
    """
    Parse the ``static_obstacles`` / ``link_geometry`` encoding.

    The text is a JSON (or YAML) list; each entry names one body::

        [{"name": "table", "frame_id": "world",
          "pieces": [{"type": "box", "size": [1.0, 0.6, 0.02], "xyz": [0.5, 0, 0.4]}]}]

    ``frame_id`` defaults to the body name for ``link_geometry`` and to ``fixed_frame`` for
    obstacles (an absent one is returned as '', the caller substitutes); an empty one is
    refused (``frame_id: ''`` is a mistake, not a request for the default). A single
    piece may be written inline (the entry's other keys are the piece description).

    Parameters
    ----------
    text : str
        Empty or blank for no bodies.
    limits : IngestLimits or alike, optional
        ``max_parameter_bytes``, ``max_nesting`` and ``max_yaml_nodes`` (read duck-typed);
        default those of IngestLimits. Parsing is linear in the text and stops at the first
        excess, so this is fast for any text (a 1 MB text in well under a second).

    Returns
    -------
    list of (str, str, list of dict)
        (name, frame_id, piece descriptions) per entry, in order.

    Raises
    ------
    ValueError
        If the text is not a list of such entries or exceeds a limit.

    """
    load_models()
    from gjk_ros.models.bounded_text import load_bounded, TextLimits
    entries = load_bounded(text, TextLimits(_text_limit(limits, 'max_parameter_bytes'),
                                            _text_limit(limits, 'max_nesting'),
                                            _text_limit(limits, 'max_yaml_nodes')))
    if entries is None:   # blank text, or a document holding only comments
        return []
    if not isinstance(entries, list):
        raise ValueError('expected a list of bodies, got %s' % type(entries).__name__)
    bodies, seen = [], set()
    for position, entry in enumerate(entries):
        body = _body_entry(position, entry)
        if body[0] in seen:
            raise ValueError('entry %d: duplicate name %r' % (position, body[0]))
        seen.add(body[0])
        bodies.append(body)
    return bodies


def _body_entry(position, entry):
    """(name, frame_id, piece descriptions) of one entry of a body-description list."""
    if not isinstance(entry, dict):
        raise ValueError('entry %d: expected a mapping, got %r' % (position, entry))
    entry = dict(entry)
    name = entry.pop('name', None)
    if not isinstance(name, str) or not name:
        raise ValueError('entry %d: needs a non-empty string "name"' % position)
    frame_id = entry.pop('frame_id', None)
    if frame_id is not None and (not isinstance(frame_id, str) or not frame_id.strip('/')):
        # Absent means the default frame; an empty one is a mistake, not a request for it.
        raise ValueError('%s: frame_id must name a frame, got %r' % (name, frame_id))
    pieces = entry.pop('pieces', None)
    if pieces is None:
        pieces = [entry]
    elif entry:
        raise ValueError('%s: unexpected keys %s next to "pieces"' % (name, sorted(entry)))
    if not isinstance(pieces, list) or not pieces or \
            not all(isinstance(piece, dict) for piece in pieces):
        raise ValueError('%s: "pieces" must be a non-empty list of mappings' % name)
    return name, (frame_id or '').lstrip('/'), pieces


def _matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@dataclass(frozen=True)
class Config:
    """Typed snapshot of the node's parameters (see ``PARAMETERS`` for meanings)."""

    fixed_frame: str = 'world'
    rate_hz: float = 30.0
    tf_timeout: float = 0.5
    clock_timeout: float = 1.0
    tf_buffer_duration: float = 10.0
    obstacle_timeout: float = 2.0
    static_obstacle_namespaces: tuple = ()
    required_obstacle_sources: tuple = ()
    allow_no_obstacles: bool = False
    require_robot_description: bool = True
    robot_description_timeout: float = 5.0
    max_distance: float = 1.0
    link_include: tuple = ('*',)
    link_exclude: tuple = ()
    obstacle_include: tuple = ('*',)
    obstacle_exclude: tuple = ()
    allowed_pairs: tuple = ()
    excluded_pairs: tuple = ()
    padding: float = 0.0
    link_padding: tuple = ()
    obstacle_padding: tuple = ()
    self_collision: bool = False
    self_collision_in_min_distance: bool = True
    static_obstacles: str = ''
    link_geometry: str = ''
    decompose_meshes: tuple = ()
    decomposition_threshold: float = 0.05
    decomposition_timeout: float = 600.0
    decomposition_cache: str = ''
    max_points: int = _LIMITS.max_points
    max_markers_per_message: int = _LIMITS.max_markers_per_message
    max_message_bytes: int = _LIMITS.max_message_bytes
    max_mesh_bytes: int = _LIMITS.max_mesh_bytes
    max_mesh_triangles: int = _LIMITS.max_mesh_triangles
    max_description_bytes: int = _LIMITS.max_description_bytes
    max_parameter_bytes: int = _LIMITS.max_parameter_bytes
    max_nesting: int = _LIMITS.max_nesting
    max_yaml_nodes: int = _LIMITS.max_yaml_nodes
    ingest_timeout: float = _LIMITS.job_timeout_s
    ingest_memory_mb: int = _LIMITS.worker_memory_mb
    hull_warning_threshold: float = _LIMITS.hull_warning_threshold
    publish_markers: bool = True
    hill_climbing: bool = True
    tracking: bool = True
    observation_sources: tuple = ()
    required_observation_sources: tuple = ()
    self_filter_padding: float = 0.02
    observation_max_points: int = 2000000
    observation_max_bytes: int = 64000000
    observation_max_time: float = 0.5
    observations: tuple = ()
    """ObservationSettings of each name of observation_sources, in order."""
    planning_scene: bool = False
    collision_object_topic: str = '/collision_object'
    attached_collision_object_topic: str = '/attached_collision_object'
    planning_scene_topic: str = '/planning_scene'
    monitored_planning_scene_topic: str = '/monitored_planning_scene'
    # Managed node and speed scaling.
    autostart: bool = True
    slowdown_distance: float = 0.3
    stop_distance: float = 0.05
    scaling_release_margin: float = 0.02
    scaling_trigger_cycles: int = 1
    scaling_release_cycles: int = 3
    scaling_groups: tuple = ()

    @classmethod
    def from_values(cls, values):
        """
        Build from a {name: python value} mapping; lists become tuples, floats are cast.

        Unknown names are ignored and missing ones keep their defaults.
        """
        kwargs = {}
        for spec in PARAMETERS:
            if spec.name not in values or values[spec.name] is None:
                continue
            value = values[spec.name]
            if spec.kind == 'string_array':
                value = tuple(value)
            elif spec.kind == 'double':
                value = float(value)
            elif spec.name == 'fixed_frame':
                value = value.strip('/')
            kwargs[spec.name] = value
        kwargs['observations'] = tuple(ObservationSettings.from_values(name, values)
                                       for name in kwargs.get('observation_sources', ()))
        return cls(**kwargs)

    def ingest_limits(self):
        """Return the input limits as the ingestion path takes them."""
        return IngestLimits(
            max_points=self.max_points, max_markers_per_message=self.max_markers_per_message,
            max_message_bytes=self.max_message_bytes, max_mesh_bytes=self.max_mesh_bytes,
            max_mesh_triangles=self.max_mesh_triangles,
            max_description_bytes=self.max_description_bytes,
            max_parameter_bytes=self.max_parameter_bytes, max_nesting=self.max_nesting,
            max_yaml_nodes=self.max_yaml_nodes, job_timeout_s=self.ingest_timeout,
            worker_memory_mb=self.ingest_memory_mb,
            hull_warning_threshold=self.hull_warning_threshold)

    def link_in_scope(self, name):
        """Whether a link is tracked (include/exclude patterns)."""
        return _matches(name, self.link_include) and not _matches(name, self.link_exclude)

    def obstacle_in_scope(self, name):
        """Whether an obstacle is tracked (include/exclude patterns)."""
        return _matches(name, self.obstacle_include) and \
            not _matches(name, self.obstacle_exclude)

    def link_padding_of(self, link):
        """Return a link's padding: ``padding`` plus its first matching ``link_padding``."""
        return self.padding + _first_padding(link, self.link_padding)

    def obstacle_padding_of(self, obstacle):
        """Return an obstacle's padding: its first matching ``obstacle_padding``, else 0."""
        return _first_padding(obstacle, self.obstacle_padding)

    def pair_allowed(self, link, obstacle):
        """Whether a (link, obstacle) pair is tracked: in ``allowed_pairs``, not excluded."""
        if self.allowed_pairs and not _pair_listed(link, obstacle, self.allowed_pairs):
            return False
        return not _pair_listed(link, obstacle, self.excluded_pairs)

    def self_pair_allowed(self, first, second):
        """Whether a link-link pair is tracked: ``excluded_pairs`` in either order drops it."""
        return not (_pair_listed(first, second, self.excluded_pairs) or
                    _pair_listed(second, first, self.excluded_pairs))

    def unmatched_patterns(self, links, obstacles, namespaces):
        """
        Return the pattern entries that match no current body (each has no effect now).

        Parameters
        ----------
        links, obstacles : collection of str
            Names of every link and obstacle in the world (in scope or not).
        namespaces : collection of str
            Marker namespaces heard (for ``static_obstacle_namespaces``).

        Returns
        -------
        list of (str, str)
            (parameter, entry), in parameter order. A kind with no body at all is not judged
            (nothing has arrived yet: readiness already says so), so the defaults never
            appear.

        """
        # A pair entry's second pattern may name a link too when self pairs are measured.
        partners = set(obstacles) | (set(links) if self.self_collision else set())
        candidates = {
            'link_include': links, 'link_exclude': links, 'link_padding': links,
            'obstacle_include': obstacles, 'obstacle_exclude': obstacles,
            'obstacle_padding': obstacles, 'static_obstacle_namespaces': namespaces,
        }
        unmatched = []
        for parameter, names in candidates.items():
            if names:
                unmatched += [(parameter, entry) for entry in getattr(self, parameter)
                              if not _matches_any(_pattern_of(parameter, entry), names)]
        for parameter in PAIR_PARAMETERS:
            if links and partners:
                unmatched += [(parameter, entry) for entry in getattr(self, parameter)
                              if not _pair_entry_matches(entry, links, partners)]
        return unmatched


def _pair_listed(first, second, entries):
    for entry in entries:
        first_pattern, _, second_pattern = entry.partition(':')
        if fnmatch.fnmatchcase(first, first_pattern) and \
                fnmatch.fnmatchcase(second, second_pattern):
            return True
    return False


def _pattern_of(parameter, entry):
    return parse_padding_entry(entry)[0] if parameter.endswith('_padding') else entry


def _matches_any(pattern, names):
    return any(fnmatch.fnmatchcase(name, pattern) for name in names)


def _pair_entry_matches(entry, links, partners):
    first_pattern, _, second_pattern = entry.partition(':')
    return _matches_any(first_pattern, links) and _matches_any(second_pattern, partners)


def _first_padding(name, entries):
    for entry in entries:
        pattern, metres = parse_padding_entry(entry)
        if fnmatch.fnmatchcase(name, pattern):
            return metres
    return 0.0
