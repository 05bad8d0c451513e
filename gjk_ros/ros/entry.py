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
The ``gjk_distance_node`` console script's entry point, cheap to import on purpose.

It starts the server the geometry workers fork from before anything else (see
``ingestion.worker_context``): the server imports the workers' libraries while this process
imports the node, on another core, and the first worker forks from it ready to work. Where there
is no forkserver the worker is a *spawn* child, which imports the parent's main script first;
the console script imports its entry point's module at the top, so pointing it at
``gjk_ros.ros.node`` made every worker import the whole node (rclpy, numba, the core: 0.75 s)
before its own work. This module imports the node only when ``main`` runs.
"""

__all__ = ['main', 'scene_publisher_main']


def main(args=None):
    """
    Run the ``gjk_distance`` node (see ``gjk_ros.ros.node.main``).

    The node publishes megabytes a cycle (``~/distances``: 160 bytes a record, 11,000 records
    for a Panda among 1,000 obstacles), more than Fast DDS's default shared-memory segment
    holds: it runs with the cloud publishers' profile (docs/transport.md) unless the
    environment names a profile of its own.
    """
    import os
    from gjk_ros.ros.qos import cloud_publisher_environment
    os.environ.update(cloud_publisher_environment())
    from gjk_ros.ros.inputs.ingestion import start_worker_server
    start_worker_server()
    from gjk_ros.ros.node import main as run_node
    return run_node(args)


def scene_publisher_main(args=None):
    """Run the ``scene_publisher`` node (see ``gjk_ros.ros.scene_publisher``)."""
    from gjk_ros.ros.scene_publisher import main as run_publisher
    return run_publisher(args)
