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
The node's parameters (``PARAMETERS``): the one list the node declares from.

``config/gjk_distance.yaml`` and the README table are generated from it
(tools/parameter_docs.py; a test checks that they agree). The ``<name>.*`` parameters of each
observation source are its own (``sources.observation_settings``), and the ``<group>.*`` ones of
each separation group (``params.separation``).
"""

from gjk_ros.ros.inputs.limits import IngestLimits
from gjk_ros.ros.inputs.sources.observation_settings import OBSERVATION_SOURCE_PARAMETERS
from gjk_ros.ros.parameter_spec import ParameterSpec
from gjk_ros.ros.params.separation import SEPARATION_GROUP_PARAMETERS

__all__ = ['documented_parameter_names', 'PARAMETERS', 'TEMPLATED_PARAMETERS']

# The input limits' defaults live in one place, IngestLimits.
_LIMITS = IngestLimits()

PARAMETERS = (
    ParameterSpec('fixed_frame', 'string', 'world',
                  'Frame of every output: witness points, normals, markers, the ~/distances '
                  'header.',
                  reconfigures=('frames', 'sources')),
    ParameterSpec('rate_hz', 'double', 30.0,
                  'Most cycles per second, Hz. A cycle runs when new /tf arrives (capped at this '
                  'rate) and, when no /tf comes, every 1/rate_hz s from a watchdog timer on the '
                  'steady clock. Each cycle uses the latest input only; a /tf callback decodes '
                  'what waits for at most half a period, newest first, and drops (and counts in '
                  '/diagnostics) what an overloaded node cannot decode.',
                  low=0.0, high=1000.0, positive=True, reconfigures=('pacing', 'frames')),
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
                  'settings. A named mesh is measured as parts whatever mesh_mode says; only a '
                  'mesh_mode_overrides entry naming its body wins over it.',
                  reconfigures=('decomposition', 'ingestion', 'sources')),
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
    ParameterSpec('mesh_mode', 'string', '',
                  'How a non-convex mesh (URDF <mesh>, marker MESH_RESOURCE or TRIANGLE_LIST, '
                  'CollisionObject mesh, static_obstacles mesh) is measured: hull (its convex '
                  'hull: one piece, conservative, fills every cavity), exact (the mesh as it '
                  'is, as exact convex pieces: negative inside a closed mesh, unsigned at an '
                  'open one), parts (CoACD parts of the mesh files decompose_meshes names). '
                  "'' (default): obstacles exact, links hull (docs/nonconvex.md says why). "
                  'Every body the node holds is rebuilt in its new mode when it changes, '
                  'one-shot markers and planning-scene objects included (off the cycle).',
                  reconfigures=('ingestion', 'sources')),
    ParameterSpec('mesh_mode_overrides', 'string_array', [],
                  "mesh_mode per body, as 'name_pattern:mode' entries (fnmatch on link and "
                  "obstacle names), e.g. ['shelf*:exact', 'panda_*:hull']; the first matching "
                  'entry wins over mesh_mode.',
                  reconfigures=('ingestion', 'sources')),
    ParameterSpec('max_mesh_pieces', 'integer', _LIMITS.mesh.max_pieces,
                  'Most convex pieces one exact mesh may become; a mesh needing more keeps its '
                  'hull, and a warning names it.',
                  low=1, high=1000000, reconfigures=('ingestion', 'sources')),
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
    ParameterSpec('swept_distances', 'bool', False,
                  'Also bound each pair over the motion between the last cycle and this one '
                  '(tf2 interpolation, conservative advancement: docs/motion.md): the records '
                  'carry swept_distance and swept_fraction, and ~/min_distance, ~/safety and the '
                  'speed scaling take the swept bound when it is lower, so a link passing through '
                  'a thin obstacle between two samples reads as contact.',
                  reconfigures=('sweeping',)),
    ParameterSpec('swept_tolerance', 'double', 1e-4,
                  'Metres: each swept bound is within this (plus swept_relative_tolerance of the '
                  'distance) of the true minimum over the motion.',
                  low=1e-9, high=1.0, reconfigures=('sweeping',)),
    ParameterSpec('swept_relative_tolerance', 'double', 0.05,
                  'Share of the distance a swept bound may lie below the true minimum, in [0, 1): '
                  'far pairs settle from their two samples alone.',
                  low=0.0, high=0.99, reconfigures=('sweeping',)),
    # Observation sources (gjk_ros/ros/inputs/sources/observations.py); each source's own
    # parameters are its OBSERVATION_SOURCE_PARAMETERS, declared under its name.
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
    # Planning scene source (gjk_ros/ros/inputs/sources/planning_scene.py,
    # docs/planning_scene.md).
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
    # Managed node and speed scaling (gjk_ros/ros/managed.py, outputs/speed_scaling.py;
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
    # Speed and separation monitoring (gjk_ros/ros/outputs/separation_margins.py,
    # docs/motion.md); each group's own parameters are its SEPARATION_GROUP_PARAMETERS.
    ParameterSpec('separation_groups', 'string_array', [],
                  'Obstacle groups monitored as ISO/TS 15066 writes speed and separation '
                  'monitoring (e.g. [people, fixtures]; a convenience, not a rated safety '
                  'function): each name G is configured by G.obstacles, G.reaction_time and the '
                  'other <group>.* parameters (docs/motion.md), and gets ~/separation_margin/G '
                  '(sensor_msgs/Range: distance minus the protective separation distance) and '
                  '~/separation_scaling/G; ~/speed_scaling takes the smallest of them. Names '
                  'must differ from observation_sources.',
                  reconfigures=('outputs',)),
)


TEMPLATED_PARAMETERS = (('<name>', OBSERVATION_SOURCE_PARAMETERS),
                        ('<group>', SEPARATION_GROUP_PARAMETERS))
"""The parameters declared under each name of a list: ``(placeholder, specs)``."""


def documented_parameter_names():
    """Every parameter name, the per-source and per-group ones as ``<name>.<parameter>``."""
    return [spec.name for spec in PARAMETERS] + [
        '%s.%s' % (placeholder, spec.name)
        for placeholder, specs in TEMPLATED_PARAMETERS for spec in specs]
