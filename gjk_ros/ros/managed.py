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
The managed node's plumbing: ``~/toggle``, transitions, checks of parameter combinations.

The node follows the ROS 2 managed-node design (design.ros2.org "Managed nodes"), as Nav2's
safety nodes do: *configure* reads the parameters and makes the workers, subscriptions,
publishers and timers (``cycle.Cycle``); *activate* starts the cycles that publish;
*deactivate* stops them (the safety outputs' deadline tells consumers); *cleanup* and
*shutdown* release everything configure made, each component what it made. See
docs/managed_node.md.

``~/toggle`` (std_srvs/SetBool) pauses the monitor as Nav2's collision monitor ``~/toggle``
does, except that a paused monitor keeps publishing and says it is paused: a consumer must
never read "clear" from a monitor that is not measuring (``Toggle``).
"""

from gjk_ros.ros.outputs.speed_scaling import ScalingSettings
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import TransitionCallbackReturn
from std_srvs.srv import SetBool

__all__ = ['check_combination', 'PAUSED_REASON', 'run_transition', 'scaling_settings',
           'Toggle']

# The readiness reason while paused: ~/safety_detail names the service that paused it.
PAUSED_REASON = 'paused by ~/toggle'


class Toggle:
    """
    ``~/toggle``: True resumes measuring, False pauses it (the node keeps publishing).

    While paused every pair is STALE (nothing is measured), ``~/min_distance`` and ``~/safety``
    read -inf, ``~/safety_detail`` says ``paused by ~/toggle``, and the speed scaling is 0.
    The switch belongs to the node, not to one configuration: a cleanup and a configure do not
    resume a paused monitor, only ``~/toggle`` does.
    """

    def __init__(self, node):
        self.enabled = True
        self._logger = node.get_logger()
        node.create_service(SetBool, '~/toggle', self._on_request)

    def _on_request(self, request, response):
        enabled = bool(request.data)
        if enabled != self.enabled:
            self._logger.warning('measuring resumed by ~/toggle' if enabled else
                                 'paused by ~/toggle: ~/min_distance reads -inf until resumed')
        self.enabled = enabled
        response.success = True
        response.message = 'measuring' if enabled else PAUSED_REASON
        return response


def check_combination(current_config):
    """
    Return an on-set-parameters callback for what one value alone cannot tell.

    It refuses a speed-scaling combination that cannot work (``ScalingSettings.problem``:
    stop_distance must stay below slowdown_distance), judged on the current values with the
    requested ones applied. ``current_config()`` gives the node's ``Config``.
    """
    def check(parameters):
        config = current_config()
        requested = {parameter.name: parameter.value for parameter in parameters}
        if requested.keys() & set(_SCALING_PARAMETERS):
            problem = scaling_settings(config, requested).problem()
            if problem is not None:
                return SetParametersResult(successful=False, reason=problem)
        return SetParametersResult(successful=True)
    return check


# ScalingSettings field <- parameter.
_SCALING_PARAMETERS = {
    'slowdown_distance': 'slowdown_distance', 'stop_distance': 'stop_distance',
    'scaling_release_margin': 'release_margin', 'scaling_trigger_cycles': 'trigger_cycles',
    'scaling_release_cycles': 'release_cycles'}


def scaling_settings(config, overrides=None):
    """Return the ``ScalingSettings`` of a ``Config``, with parameter values overriding it."""
    overrides = overrides or {}
    return ScalingSettings(**{
        field: overrides.get(name, getattr(config, name))
        for name, field in _SCALING_PARAMETERS.items()})


def run_transition(logger, name, step):
    """
    Run one transition's work; SUCCESS, or FAILURE with the error logged.

    rclpy turns an exception in a transition callback into ERROR without a word; a failed
    configure must say why (a bad parameter combination, a worker that cannot start).
    """
    try:
        step()
    except Exception as error:  # noqa: B902 -- any failure fails the transition, with reason
        logger.error('%s failed: %s: %s' % (name, type(error).__name__, error))
        return TransitionCallbackReturn.FAILURE
    return TransitionCallbackReturn.SUCCESS
