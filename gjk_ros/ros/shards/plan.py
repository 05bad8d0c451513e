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
The shards file: what each ``gjk_distance`` instance of a sharded robot measures (no ROS).

``launch/shards.launch.py`` reads it; ``config/shards.yaml`` is an example. One entry per
shard, under ``shards``: its name (the namespace it runs in, under the launch namespace), the
``gjk_distance`` parameters it overrides (``link_include``, ``obstacle_include``,
``observation_sources`` with their ``<name>:`` blocks, ...) and, optionally, remappings and
the CPUs the shard's process may run on::

    shards:
      arm:
        parameters: {link_include: ['panda_link[0-4]']}
        cpus: [0]
      hand:
        parameters: {link_exclude: ['panda_link[0-4]']}
        remappings: {'~/obstacles': /perception/obstacles}
        cpus: [1]

Everything is checked before a process starts, and an error names the file, the shard and
the parameter (never quoting the file): a typo in a scope parameter would otherwise leave a
part of the robot measured by no one, or by two shards.
"""

from dataclasses import dataclass
import os
import re

from gjk_ros.ros.params import PARAMETERS, validate_parameter
from gjk_ros.ros.rviz_config import node_topic_prefix
import yaml

__all__ = ['MAX_SHARDS', 'read_shards', 'ShardPlan', 'SHARD_NODE_NAME']

SHARD_NODE_NAME = 'gjk_distance'
# Most shards one file may describe (each is a process and costs the aggregator two topics).
MAX_SHARDS = 64
# Largest shards file, bytes.
MAX_FILE_BYTES = 1 << 20
# A shard's name is one namespace token.
_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_ENTRY_KEYS = ('parameters', 'remappings', 'cpus')
# Linux numbers CPUs from 0; CPU_SETSIZE is 1024.
MAX_CPU = 1023
_NAMES = frozenset(spec.name for spec in PARAMETERS)


@dataclass(frozen=True)
class ShardPlan:
    """
    One shard: its name, namespace, node name, parameter overrides, remappings and CPUs.

    ``cpus`` is empty when the shard may run on any CPU the launch may use.
    """

    name: str
    namespace: str
    parameters: dict
    remappings: tuple
    cpus: tuple = ()

    @property
    def node(self):
        """Return the shard node's fully qualified name (what the aggregator subscribes to)."""
        return node_topic_prefix(self.namespace, SHARD_NODE_NAME)


def _problem_of_parameters(parameters):
    """Why a shard's parameter overrides are refused, or None."""
    if not isinstance(parameters, dict):
        return 'parameters must be a mapping of gjk_distance parameters'
    for name, value in parameters.items():
        if not isinstance(name, str):
            return 'a parameter name is not a string'
        if isinstance(value, dict):
            continue  # an observation source's <name>: block, checked by the node
        if name not in _NAMES:
            return "parameter '%s' is not a gjk_distance parameter" % name[:100]
        problem = validate_parameter(name, value)
        if problem is not None:
            return 'parameter %s: %s' % (name, problem)
    return None


def _remappings(remappings):
    if not isinstance(remappings, dict) or not all(
            isinstance(key, str) and isinstance(value, str) and key and value
            for key, value in remappings.items()):
        raise ValueError('remappings must map topic names to topic names')
    return tuple(remappings.items())


def _cpus(cpus, available):
    """
    Return the CPU numbers of an entry's ``cpus`` (sorted, each once); ValueError says why not.

    ``available`` (a set of CPU numbers, or None: not checked) is where the launch may run
    processes (``os.sched_getaffinity``): a shard pinned elsewhere would never start.
    """
    if not isinstance(cpus, list) or not cpus or len(cpus) > MAX_CPU + 1 or not all(
            type(cpu) is int and 0 <= cpu <= MAX_CPU for cpu in cpus):
        raise ValueError('cpus must be a non-empty list of CPU numbers (0 to %d)' % MAX_CPU)
    missing = sorted(set(cpus) - set(available)) if available is not None else []
    if missing:
        raise ValueError('cpus %s: not CPUs this launch may use (%s)' % (
            ', '.join(map(str, missing[:8])), ', '.join(map(str, sorted(available)[:64]))))
    return tuple(sorted(set(cpus)))


def _shard(namespace, name, entry, available=None):
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise ValueError('shard name %r is not a namespace token (letters, digits, _)'
                         % (name if isinstance(name, str) and len(name) <= 100 else '...'))
    entry = {} if entry is None else entry
    if not isinstance(entry, dict) or set(entry) - set(_ENTRY_KEYS):
        raise ValueError('shard %s: an entry may only have %s' % (name, ', '.join(
            _ENTRY_KEYS)))
    parameters = entry.get('parameters') or {}
    problem = _problem_of_parameters(parameters)
    if problem is not None:
        raise ValueError('shard %s: %s' % (name, problem))
    try:
        remappings = _remappings(entry.get('remappings') or {})
    except ValueError as error:
        raise ValueError('shard %s: %s' % (name, error)) from None
    try:
        cpus = _cpus(entry['cpus'], available) if 'cpus' in entry else ()
    except ValueError as error:
        raise ValueError('shard %s: %s' % (name, error)) from None
    inner = '/'.join(part for part in namespace.split('/') if part)
    return ShardPlan(name, '/' + '/'.join(filter(None, (inner, name))), dict(parameters),
                     remappings, cpus)


def read_shards(path, namespace='', available_cpus=None):
    """
    Read a shards file into one ``ShardPlan`` per shard, in file order.

    Parameters
    ----------
    path : str
        The YAML file (module docstring).
    namespace : str
        The launch namespace the shards run under ('' for the root).
    available_cpus : set of int, optional
        The CPUs the launch may use: a shard's ``cpus`` must be among them (None: unchecked).

    Raises
    ------
    ValueError
        Naming the file and what is wrong in it.

    """
    name = os.path.basename(path)
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            raise ValueError('larger than %d bytes' % MAX_FILE_BYTES)
        with open(path, encoding='utf-8') as stream:
            document = yaml.safe_load(stream)
        if not isinstance(document, dict) or not isinstance(document.get('shards'), dict):
            raise ValueError("no 'shards' mapping at the top")
        entries = document['shards']
        if not entries or len(entries) > MAX_SHARDS:
            raise ValueError('%d shards; 1 to %d are allowed' % (len(entries), MAX_SHARDS))
        return [_shard(namespace, shard, entry, available_cpus)
                for shard, entry in entries.items()]
    except (OSError, yaml.YAMLError) as error:
        mark = getattr(error, 'problem_mark', None)
        where = '' if mark is None else ' at line %d' % (mark.line + 1)
        raise ValueError('shards file %s cannot be read: %s%s' % (
            name, type(error).__name__, where)) from None
    except ValueError as error:
        raise ValueError('shards file %s: %s' % (name, error)) from None
