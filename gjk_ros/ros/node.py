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
The ``gjk_distance`` node: tracked distances between robot links and obstacles.

The node is a composition (docs/architecture.md): inputs arrive through **sources** (robot
model, parameter bodies, marker topics) and **frames** (TF) into the **world**; each cycle the
**layout** measures every piece pair in scope, **readiness** decides whether the minimum can
be vouched for, and the **outputs** and **diagnostics** publish. Three paths never wait on each
other: TF (decoded raw into the node's buffer, may start a cycle), ingestion (the geometry
worker process builds pieces from raw bytes) and compute (the cycle below, also started by a
steady-clock watchdog when TF stops).

It is a managed node (docs/managed_node.md): cycles run, and outputs are published, only while
it is active; ``~/toggle`` pauses measuring while outputs keep coming and say so.
"""

import sys
import threading
import time

from gjk_ros.core.warmup import warm_up_group
from gjk_ros.ros.compute.cycle import Cycle
from gjk_ros.ros.managed import check_combination, run_transition, Toggle
from gjk_ros.ros.node_parameters import NodeParameters
from gjk_ros.ros.outputs.diagnostics import DiagnosticsReporter
from gjk_ros.ros.problems import ProblemLog
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

__all__ = ['DistanceNode', 'main']

NODE_NAME = 'gjk_distance'

DIAGNOSTICS_PERIOD = 1.0  # seconds, diagnostic_updater's default


class DistanceNode(LifecycleNode):
    """
    Publish tracked link-obstacle distances; see the module docstring and docs/architecture.md.

    A managed node (docs/managed_node.md): construction declares the parameters and makes
    ``/diagnostics``, its timer and ``~/toggle``; *configure* makes everything else (a
    ``Cycle``: the components, the geometry workers, subscriptions, publishers and the
    watchdog), *activate* lets cycles run and publish, *deactivate* stops them, *cleanup* and
    *shutdown* release what configure made. With ``autostart`` (the default) the node
    configures and activates itself at the end of construction.

    Parameters
    ----------
    **kwargs
        Passed to ``rclpy.lifecycle.LifecycleNode`` (e.g. ``parameter_overrides`` in tests).

    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.problems = ProblemLog(self.get_logger())
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self._warmed_up = False
        self.state = 'unconfigured'
        self.cycle = None
        self.components = {}
        self.parameters = NodeParameters(self, self._reconfigure)
        self.add_on_set_parameters_callback(check_combination(lambda: self.config))
        self.diagnostics = DiagnosticsReporter(self, self.problems)
        self.toggle = Toggle(self)
        # Steady clock: diagnostics must run whatever ROS time does (timekeeping.py), and in
        # every lifecycle state, to say which one the node is in.
        self.create_timer(DIAGNOSTICS_PERIOD, self._on_diagnostics, clock=self._steady_clock)
        if self.config.autostart:
            self._autostart()

    @property
    def config(self):
        """Return the current parameters (a ``Config``)."""
        return self.parameters.config

    # -- lifecycle -----------------------------------------------------------------------------

    def _autostart(self):
        """Configure, then activate, as a lifecycle manager with autostart would."""
        if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
            self.trigger_activate()

    def on_configure(self, state):
        """Read the parameters, make the components, subscribe, start the watchdog."""
        result = run_transition(self.get_logger(), 'configure', self._configure)
        if result != TransitionCallbackReturn.SUCCESS:
            self._release()
            return result
        self.state = 'inactive'
        self.get_logger().info("configured: computing distances in '%s' at up to %g Hz once "
                               'active' % (self.config.fixed_frame, self.config.rate_hz))
        return result

    def _configure(self):
        self.cycle = Cycle(self, self.config, self.problems, self._on_transform,
                           self._on_watchdog, self._steady_clock)
        self.components = self.cycle.components
        self.cycle.start()
        if not self._warmed_up:
            self._warm_up()
            self._warmed_up = True

    def on_activate(self, state):
        """Start cycles; the speed scaling starts at 0 (nothing measured yet)."""
        self.cycle.outputs.scaling.reset()
        self.state = 'active'
        self.get_logger().info('active: publishing')
        return super().on_activate(state)

    def on_deactivate(self, state):
        """Stop cycles: no output until activated again (the safety deadline shows it)."""
        self.state = 'inactive'
        self.get_logger().info('inactive: not publishing')
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        """Release what configure made."""
        self._release()
        self.get_logger().info('cleaned up: unconfigured')
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        """Release what configure made (from any primary state); the node is finalized."""
        self._release()
        self.state = 'finalized'
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state):
        """Release what configure made; the node goes back to unconfigured."""
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _release(self):
        """Stop the workers and destroy what configure made; safe in any state."""
        self.state = 'unconfigured'
        self.close()
        self.cycle, self.components = None, {}

    def _reconfigure(self, config, components):
        """
        Hand a new config to the named components (``ParameterSpec.reconfigures``).

        Unconfigured, no component exists: configure hands each one the config then.
        """
        if self.cycle is not None:
            self.cycle.reconfigure(config, components)

    def _warm_up(self):
        """
        Load the PairSet kernels from numba's cache (or compile them) in a background thread.

        The node has nothing to measure until its geometry worker has built the first bodies,
        so the 0.3-0.4 s of loading overlaps waiting for robot_description and the worker's
        first job instead of delaying the node's start. A cycle that needs the kernels before
        the thread is done waits on numba's compiler lock: never a made-up number.
        """
        def load():
            try:
                self.get_logger().debug('core ready in %.2f s' % warm_up_group('pairset'))
            except Exception as error:  # noqa: B902 -- the first cycle compiles and reports
                self.get_logger().error('loading the core kernels failed: %s' % error)

        threading.Thread(target=load, name='gjk_core_warm_up', daemon=True).start()

    def close(self):
        """Stop the workers and release what configure made (cleanup, shutdown, destroy)."""
        if self.cycle is not None:
            self.cycle.close()

    # -- when a cycle runs ---------------------------------------------------------------------

    def _on_transform(self):
        pacer = self.cycle.pacer
        was_waiting = pacer.waiting
        if pacer.try_start(time.monotonic()):
            self._run_cycle()
        elif not was_waiting and self.cycle.watchdog is not None:
            # It waits for a token: the watchdog's next tick, a period from now, has one and
            # runs its cycle (pacing.py).
            self.cycle.watchdog.reset()

    def _on_watchdog(self):
        """Keep outputs coming when no TF arrives (they say STALE then); steady clock."""
        if self.cycle.pacer.try_start_from_watchdog(time.monotonic()):
            self._run_cycle()

    def _run_cycle(self):
        if self.state != 'active':
            return  # inactive: nothing is published (docs/managed_node.md)
        started = time.perf_counter()
        try:
            self.cycle.run(self.toggle.enabled)
        except Exception as error:  # noqa: B902 -- the node must outlive any bad cycle
            if not self.context.ok():
                return  # shutting down: publishers are gone, nothing to report
            self.problems.report(('cycle', type(error).__name__),
                                 'cycle failed: %s: %s' % (type(error).__name__, error))
        else:
            self.problems.keep_only(('cycle',), set(), lambda key: 'cycles run again')
        self.cycle.stats.cycle_time += time.perf_counter() - started

    def _on_diagnostics(self):
        try:
            self.diagnostics.check_duplicate_name()
            self.diagnostics.publish(self.state, self.toggle.enabled, self.cycle)
        except Exception as error:  # noqa: B902 -- diagnostics must never stop the node
            if self.context.ok():
                self.problems.report(('diagnostics', type(error).__name__),
                                     'diagnostics failed: %s: %s'
                                     % (type(error).__name__, error))


def main(args=None):
    """Run the node until Ctrl-C, SIGTERM or shutdown; returns the process exit code."""
    rclpy.init(args=args)
    node, executor = None, None
    try:
        node = DistanceNode()
        # One thread: every callback is cheap (bytes in, bytes out), and rclpy's
        # MultiThreadedExecutor could not keep up with 1 kHz /tf (docs/architecture.md).
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterException as error:
        rclpy.logging.get_logger(NODE_NAME).fatal('bad parameter: %s' % error)
        return 1
    except Exception:  # noqa: B902 -- an error racing shutdown is not a failure
        if rclpy.ok():
            raise
    finally:
        _shut_down(node, executor)
    return 0


def _shut_down(node, executor):
    """Stop everything whatever state shutdown left it in; never raise."""
    for step in (lambda: node.close(), lambda: executor.shutdown(timeout_sec=1.0),
                 lambda: node.destroy_node(), rclpy.try_shutdown):
        try:
            step()
        except Exception:  # noqa: B902 -- a half-built node or a shut-down context
            pass


if __name__ == '__main__':
    sys.exit(main())
