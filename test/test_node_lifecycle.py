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
The managed node's transitions in the test process: what configure makes, cleanup releases.

A ``DistanceNode`` with ``autostart`` false is driven through its transitions directly; after
each one the node's subscriptions, publishers, timers and services are counted and its geometry
worker looked at. Cleanup must leave exactly what construction made, and configuring again must
make the same entities as the first time. The service-driven path (``~/change_state``) is
test_launch_managed's.
"""

import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('tf2_msgs')

from gjk_ros.ros.node import DistanceNode  # noqa: E402, I100
from node_harness import wait_until  # noqa: E402
from rclpy.lifecycle import TransitionCallbackReturn  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

SUCCESS = TransitionCallbackReturn.SUCCESS


def entities(node):
    """Topic names of subscriptions and publishers, and counts of timers and services."""
    return (sorted(subscription.topic_name for subscription in node.subscriptions),
            sorted(publisher.topic_name for publisher in node.publishers),
            len(list(node.timers)), len(list(node.services)))


@pytest.fixture
def node(rclpy_context):
    node = DistanceNode(context=rclpy_context,
                        parameter_overrides=[Parameter('autostart', value=False)])
    yield node
    node.close()
    node.destroy_node()


def test_construction_makes_only_diagnostics_toggle_and_services(node):
    subscriptions, publishers, timers, services = entities(node)
    assert node.state == 'unconfigured'
    assert subscriptions == []
    assert '/diagnostics' in publishers and '/gjk_distance/min_distance' not in publishers
    assert timers == 1  # the diagnostics timer
    assert any(service.srv_name.endswith('/toggle') for service in node.services)


def test_cleanup_releases_what_configure_made_and_configure_works_again(node):
    constructed = entities(node)
    assert node.trigger_configure() == SUCCESS and node.state == 'inactive'
    configured = entities(node)
    assert '/tf' in configured[0] and '/gjk_distance/obstacles' in configured[0]
    assert '/gjk_distance/speed_scaling' in configured[1]
    ingestor = node.cycle.ingestor
    wait_until(lambda: ingestor._worker is not None and ingestor._worker.is_alive(),
               what='the geometry worker process')
    process = ingestor._worker
    assert node.trigger_activate() == SUCCESS and node.state == 'active'
    assert node.trigger_deactivate() == SUCCESS and node.state == 'inactive'
    assert node.trigger_cleanup() == SUCCESS and node.state == 'unconfigured'
    assert entities(node) == constructed
    assert not process.is_alive() and not ingestor._thread.is_alive()
    assert node.trigger_configure() == SUCCESS
    assert entities(node) == configured
    assert node.trigger_activate() == SUCCESS
    assert node.trigger_shutdown() == SUCCESS and node.state == 'finalized'
    assert entities(node) == constructed


def test_a_rate_change_replaces_the_watchdog_and_cleanup_still_releases_it(node):
    constructed = entities(node)
    assert node.trigger_configure() == SUCCESS
    assert node.set_parameters([Parameter('rate_hz', value=12.5)])[0].successful
    assert entities(node)[2] == constructed[2] + 1  # diagnostics + the new watchdog
    assert node.trigger_cleanup() == SUCCESS
    assert entities(node) == constructed


def test_a_source_subscribing_at_run_time_is_released_by_cleanup(node):
    constructed = entities(node)
    assert node.trigger_configure() == SUCCESS
    assert node.set_parameters([Parameter('planning_scene', value=True),
                                Parameter('collision_object_topic', value='/scene_objects')]
                               )[0].successful
    assert '/scene_objects' in entities(node)[0]
    assert node.trigger_cleanup() == SUCCESS
    assert entities(node) == constructed


def test_inactive_node_runs_no_cycle(node):
    assert node.trigger_configure() == SUCCESS
    node._run_cycle()
    assert node.cycle.last_records is None
    assert node.trigger_activate() == SUCCESS
    node._run_cycle()
    assert node.cycle.last_records is not None
