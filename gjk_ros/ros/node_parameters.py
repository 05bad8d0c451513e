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
The node's parameters: declared with descriptors, validated, and routed to their components.

Every ``ParameterSpec`` names the components it reconfigures (``reconfigures``); a change
accepted at run time calls ``configure(config)`` on exactly those components, so no component
keeps an old value because a hand-written list forgot it. A bad value from the parameter file
falls back to the default with one error line; a bad value set at run time is refused with the
reason (``ros2 param set`` prints it).

Nav2's layout: each name of ``observation_sources`` (read at start-up) and of
``separation_groups`` (start-up and run time) has its own ``<name>.*`` parameters, declared here
once the name is known, validated and routed as any other. A separation group's term from the
parameter file that is refused leaves its group unknown, naming it, instead of the default: a
rated term never falls back.
"""

import math

from gjk_ros.ros.inputs.model_imports import load_models
from gjk_ros.ros.inputs.sources.observations import ObservationSource
from gjk_ros.ros.params import (Config, PARAMETERS, parsed_bodies, source_parameter_of,
                                START_UP_SOURCE_PARAMETERS, validate_parameter)
from gjk_ros.ros.params.separation import group_parameter_of, group_parameter_specs
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.parameter import Parameter

__all__ = ['NodeParameters', 'parameter_problem']

_PARAMETER_TYPES = {
    'string': Parameter.Type.STRING,
    'double': Parameter.Type.DOUBLE,
    'integer': Parameter.Type.INTEGER,
    'bool': Parameter.Type.BOOL,
    'string_array': Parameter.Type.STRING_ARRAY,
    'double_array': Parameter.Type.DOUBLE_ARRAY,
}
_SPECS = {spec.name: spec for spec in PARAMETERS}
# Parameters read once, at start-up (observation_sources shapes the subscriptions; autostart
# is what the node does on construction): a change at run time is refused with the reason,
# never accepted and silently ignored.
START_UP_ONLY = ('observation_sources', 'autostart')
# Piece types cheap enough to build in the parameter callback, so that a typo in a size is
# refused at `ros2 param set` time; meshes and point sets are built (and, if bad, rejected with
# a log line and a diagnostics error) by the geometry worker.
_CHEAP_TYPES = ('box', 'sphere', 'cylinder', 'capsule', 'cone', 'ellipsoid', 'half_space')


class NodeParameters:
    """
    Declare every parameter on ``node`` and keep ``config`` (a ``Config``) up to date.

    Parameters
    ----------
    node : rclpy.node.Node
        The node whose parameters these are.
    reconfigure : callable(Config, set of str)
        Called after an accepted change with the new config and the components to configure.

    """

    def __init__(self, node, reconfigure):
        self._node = node
        self._reconfigure = reconfigure
        self._specs = dict(_SPECS)
        self._refused = {}  # <group>.<parameter> -> why the parameter file's value was refused
        self._declaring = False
        for spec in PARAMETERS:
            self._declare_checked(spec)
        # Nav2's way: each observation source declares its parameters under its name once
        # observation_sources is known (it is read at start-up only).
        for source in node.get_parameter('observation_sources').value or ():
            self._declare_all(ObservationSource.parameter_specs(source))
        self._declare_groups()
        self.config = self._read()
        node.add_on_set_parameters_callback(self._on_set)
        node.add_post_set_parameters_callback(self._on_changed)

    def _declare_groups(self):
        """Declare the ``<group>.*`` parameters of each separation group not declared yet."""
        for group in self._node.get_parameter('separation_groups').value or ():
            self._declare_all(group_parameter_specs(group))

    def _declare_all(self, specs):
        """
        Declare each of ``specs`` not declared yet, and route its changes.

        At run time each declaration calls the post-set callback: ``_on_changed`` waits for
        the caller, which reads every parameter once they are all declared.
        """
        declaring, self._declaring = self._declaring, True
        try:
            for spec in specs:
                if spec.name not in self._specs:
                    self._declare_checked(spec)
                    self._specs[spec.name] = spec
        finally:
            self._declaring = declaring

    def _declare_checked(self, spec):
        """
        Declare one parameter; a bad value from the parameter file is replaced by the default.

        For a separation group's term the refusal is kept: its group is unknown until the term
        is set (``SeparationGroup.from_values``).
        """
        node, descriptor = self._node, _descriptor(spec)
        try:
            self._declare(spec, descriptor, ignore_override=False)
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            reason = str(error)  # refused by its type or by _on_set: not declared
        else:
            reason = parameter_problem(spec.name, node.get_parameter(spec.name).value)
            if reason is not None:
                node.undeclare_parameter(spec.name)
        if reason is None:
            return
        self._declare(spec, descriptor, ignore_override=True)
        if group_parameter_of(spec.name) is not None:
            self._refused[spec.name] = reason
            node.get_logger().error('parameter %s rejected: %s; its separation group is '
                                    'unknown until it is set' % (spec.name, reason))
        else:
            node.get_logger().error('parameter %s rejected: %s; using the default %r'
                                    % (spec.name, reason, spec.default))

    def _declare(self, spec, descriptor, ignore_override):
        node = self._node
        if not descriptor.dynamic_typing:
            node.declare_parameter(spec.name, spec.default, descriptor, ignore_override)
            return
        # Clients cannot type an empty list (rclpy makes [] a byte array, `ros2 param set`
        # a bool array, YAML's [] is dropped): arrays are dynamically typed, any empty array
        # is accepted as "none", and the callback rejects anything else of the wrong type.
        array = spec.kind.endswith('_array')
        node.declare_parameter(spec.name, (list(spec.default) or None) if array else
                               spec.default, descriptor, ignore_override)
        if array and node.get_parameter(spec.name).type_ == Parameter.Type.NOT_SET:
            node.set_parameters([Parameter(spec.name, _PARAMETER_TYPES[spec.kind],
                                           list(spec.default))])

    def _read(self):
        return Config.from_values({name: self._node.get_parameter(name).value
                                   for name in self._specs}, self._refused)

    def _on_set(self, parameters):
        limits = self.config.ingest_limits()
        for parameter in parameters:
            reason = parameter_problem(parameter.name, parameter.value, limits)
            if parameter.type_ == Parameter.Type.NOT_SET and parameter.name in self._specs:
                # rclpy undeclares a dynamically typed parameter set to NOT_SET.
                reason = 'cannot be deleted: set it to its default instead'
            if reason is None and _changes_start_up_value(parameter, self._node):
                reason = 'read at start-up: restart the node'
            if reason is not None:
                return SetParametersResult(successful=False,
                                           reason='%s: %s' % (parameter.name, reason))
        return SetParametersResult(successful=True)

    def _on_changed(self, parameters):
        if self._declaring:
            return  # the declaring caller reads every parameter when it is done
        for parameter in parameters:
            self._refused.pop(parameter.name, None)  # a value set now passed validation
        if any(parameter.name == 'separation_groups' for parameter in parameters):
            self._declare_groups()
        self.config = self._read()
        components = set()
        for parameter in parameters:
            spec = self._specs.get(parameter.name)
            if spec is not None:
                components.update(spec.reconfigures)
            elif parameter.name == 'use_sim_time':
                components.add('clock')
        self._reconfigure(self.config, components)


def _changes_start_up_value(parameter, node):
    """Whether ``parameter`` changes a value read once, at start-up."""
    templated = source_parameter_of(parameter.name)
    start_up = parameter.name in START_UP_ONLY or (
        templated is not None and templated.parameter in START_UP_SOURCE_PARAMETERS)
    if not start_up or not node.has_parameter(parameter.name):
        return False
    current = node.get_parameter(parameter.name).value
    if isinstance(current, (list, tuple)) or hasattr(current, 'tolist'):
        return tuple(parameter.value or ()) != tuple(current or ())
    return parameter.value != current


def _descriptor(spec):
    if spec.dynamic_typing or spec.kind.endswith('_array'):
        return ParameterDescriptor(description=spec.description, dynamic_typing=True)
    descriptor = ParameterDescriptor(description=spec.description,
                                     type=_PARAMETER_TYPES[spec.kind].value)
    finite = math.isfinite(spec.low) and math.isfinite(spec.high)
    if spec.kind == 'double' and finite:
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=spec.low, to_value=spec.high, step=0.0)]
    if spec.kind == 'integer' and finite:
        descriptor.integer_range = [
            IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    if spec.positive:
        descriptor.additional_constraints = 'must be > %g' % spec.low
    return descriptor


def parameter_problem(name, value, limits=None):
    """
    Why a parameter value is refused, or None; never raises.

    Validation is bounded (parse_body_descriptions limits size, nesting and node counts, with
    the node's current limits), and whatever escapes it anyway (RecursionError, MemoryError)
    is a refusal, not a dead node.
    """
    try:
        reason = validate_parameter(name, value, limits)
        if reason is None and name in ('static_obstacles', 'link_geometry'):
            reason = _check_primitive_pieces(value, limits)
        return reason
    except RecursionError:
        return 'nested too deeply'
    except Exception as error:  # noqa: B902 -- any failure to validate is a refusal
        return 'cannot be validated (%s)' % type(error).__name__


def _check_primitive_pieces(text, limits=None):
    """Build the primitive pieces of a body-description parameter; the first error, or None."""
    try:
        bodies = parsed_bodies(text, limits)
    except ValueError as error:
        return str(error)
    if not bodies:
        return None  # the usual empty default: no need to import the models (see below)
    # Imported here: gjk_ros.models brings trimesh, which only the worker needs otherwise.
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models import ModelError, piece_from_description
    for name, _, descriptions in bodies:
        for description in descriptions:
            if description.get('type') not in _CHEAP_TYPES:
                continue
            try:
                piece_from_description(name, 'frame', description)
            except ModelError as error:
                return str(error)
            except (ValueError, TypeError) as error:
                return '%s: %s' % (name, error)
    return None
