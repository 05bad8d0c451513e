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
``Config``: a typed snapshot of the node's parameters, and the rules they state.

Scope (include and exclude patterns), pairs (allowed and excluded), padding per link and per
obstacle, and the entries that match nothing now.
"""

from dataclasses import dataclass
import fnmatch

from gjk_ros.ros.inputs.limits import IngestLimits, MeshSettings
from gjk_ros.ros.inputs.sources.observation_settings import ObservationSettings
from gjk_ros.ros.params.catalogue import PARAMETERS
from gjk_ros.ros.params.separation import SeparationGroup, validate_group_names
from gjk_ros.ros.params.validation import (PAIR_PARAMETERS, parse_mesh_mode_entry,
                                           parse_padding_entry)

__all__ = ['Config']

# The input limits' defaults live in one place, IngestLimits.
_LIMITS = IngestLimits()


def separation_groups(names, sources, values, refused=None):
    """
    Return the SeparationGroup of each group name, from ``{'<group>.<parameter>': value}``.

    A name that is also an observation source's is refused here (each is checked alone when
    set): the group carries the reason and is unknown. ``refused`` as for
    ``SeparationGroup.from_values``.
    """
    groups = []
    for name in names:
        reason = validate_group_names([name], sources)
        groups.append(SeparationGroup(name, problem='separation_groups: %s' % reason)
                      if reason else SeparationGroup.from_values(name, values, refused))
    return tuple(groups)


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
    mesh_mode: str = ''
    mesh_mode_overrides: tuple = ()
    max_mesh_pieces: int = _LIMITS.mesh.max_pieces
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
    swept_distances: bool = False
    swept_tolerance: float = 1e-4
    swept_relative_tolerance: float = 0.05
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
    separation_groups: tuple = ()
    separations: tuple = ()
    """SeparationGroup of each name of separation_groups, in order."""

    @classmethod
    def from_values(cls, values, refused=None):
        """
        Build from a {name: python value} mapping; lists become tuples, floats are cast.

        Unknown names are ignored and missing ones keep their defaults. ``refused``:
        ``{'<group>.<parameter>': why}`` of the separation groups' values the parameter file
        gave and the node refused (each leaves its group unknown).
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
        kwargs['separations'] = separation_groups(kwargs.get('separation_groups', ()),
                                                  kwargs.get('observation_sources', ()), values,
                                                  refused)
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
            hull_warning_threshold=self.hull_warning_threshold,
            mesh=MeshSettings(self.mesh_mode, tuple(parse_mesh_mode_entry(entry)
                                                    for entry in self.mesh_mode_overrides),
                              self.max_mesh_pieces, self.decompose_meshes))

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
            'mesh_mode_overrides': set(links) | set(obstacles),
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
    if parameter == 'mesh_mode_overrides':
        return parse_mesh_mode_entry(entry)[0]
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
