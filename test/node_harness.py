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
Test plumbing for the gjk_distance node: the node as a real process, and a scene publisher.

``NodeProcess`` runs the installed ``gjk_distance_node`` console script with a parameter file
and captures its log. ``Scene`` is an rclpy node in the test process that publishes what a
robot would (TF, static TF, ``robot_description``, markers) with the QoS of tf2_ros and
robot_state_publisher, republishes its dynamic transforms at 20 Hz from a background thread,
and keeps the latest output of the distance node. Every wait is on a condition with a timeout.

Typical use::

    with NodeProcess(env, tmp_path, {'rate_hz': 20.0}) as node, Scene(domain_id) as scene:
        scene.send_urdf(urdf)
        scene.send_tf('world', 'arm', xyz=(0, 0, 0))
        records = scene.wait_for_records(lambda records: ..., node=node)

The demo helper may import this module read-only.
"""

import atexit
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import unittest

try:
    from builtin_interfaces.msg import Duration
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from geometry_msgs.msg import Point, TransformStamped
    from gjk_ros.ros import read_distances
    from gjk_ros.ros.params import PARAMETERS
    from gjk_ros.ros.qos import LATCHED_QOS, MARKER_QOS, TF_QOS
    import numpy
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.parameter_client import AsyncParameterClient
    from sensor_msgs.msg import PointCloud2
    from std_msgs.msg import Float64, String
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import Marker, MarkerArray
    import yaml
except ImportError as error:
    # No ROS 2 Python packages here: every test module that imports this one is skipped.
    raise unittest.SkipTest('ROS 2 packages missing (%s); use make test' % error) from error

# Re-exported so that test modules need no ROS import of their own before this one.
__all__ = ['box_urdf', 'DiagnosticStatus', 'find_record', 'LATCHED_QOS', 'Marker', 'marker',
           'matrix', 'NodeProcess', 'Parameter', 'parameter', 'Scene', 'session_domain_id',
           'set_or_fail', 'setting', 'STARTUP_TIMEOUT', 'TFMessage', 'TIMEOUT', 'wait_until']

VENV_BIN = pathlib.Path(sys.executable).parent
NODE_EXECUTABLE = VENV_BIN / 'gjk_distance_node'
NODE_NAME = 'gjk_distance'

# Waits: discovery alone can take ~2.8 s; the first start after a core change also compiles
# the numba kernels (~40 s on 2 busy cores), hence the longer start-up allowance.
TIMEOUT = 10.0
# The longest the test node's spin thread waits for work before it checks whether to stop.
SPIN_PERIOD = 0.05
STARTUP_TIMEOUT = 180.0
TF_REPUBLISH_PERIOD = 0.05

# The node's own profiles (one definition); a deep volatile queue for everything we stream.
STREAM_QOS = MARKER_QOS


def matrix(xyz=(0.0, 0.0, 0.0), quaternion=(0.0, 0.0, 0.0, 1.0)):
    """(4, 4) pose from a translation and an (x, y, z, w) quaternion (normalised)."""
    x, y, z, w = numpy.asarray(quaternion, dtype=float) / numpy.linalg.norm(quaternion)
    pose = numpy.eye(4)
    pose[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    pose[:3, 3] = xyz
    return pose


def wait_until(predicate, timeout=TIMEOUT, what='condition', period=0.02, node_process=None):
    """
    Poll ``predicate`` until it returns something truthy; fail with ``what`` otherwise.

    With ``node_process``, fail at once if that process has exited, and show its log.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if node_process is not None and not node_process.alive():
            raise AssertionError('the node exited (code %s) while waiting for %s; log:\n%s'
                                 % (node_process.process.returncode, what,
                                    node_process.output()[-4000:]))
        if time.monotonic() > deadline:
            log = '' if node_process is None else '; node log:\n' + node_process.output()[-4000:]
            raise AssertionError('timed out after %.1f s waiting for %s%s' % (timeout, what, log))
        time.sleep(period)


def node_environment(base_env, log_dir):
    """Environment for a node process: the given one plus unbuffered, per-test logging."""
    env = dict(base_env)
    env['ROS_LOG_DIR'] = str(log_dir)
    env['PYTHONUNBUFFERED'] = '1'
    env['RCUTILS_LOGGING_BUFFERED_STREAM'] = '0'
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    return env


_RUNNING = set()


@atexit.register
def _stop_leftovers():
    """Kill node processes a crashed or interrupted test run did not stop."""
    for process in list(_RUNNING):
        if process.poll() is None:
            process.kill()


class NodeProcess:
    """
    The ``gjk_distance_node`` console script as a subprocess.

    Parameters
    ----------
    env : dict
        Environment (``ros_env`` fixture or alike: domain id, discovery range, log dir).
    work_dir : pathlib.Path
        Where the parameter file and the captured output go.
    parameters : dict, optional
        Written to a ``--params-file`` under ``/**: ros__parameters``.
    namespace : str, optional
        Remaps the node's namespace.
    remaps : sequence of str, optional
        ``from:=to`` remappings, e.g. ``robot_description:=/robot_description`` for a
        namespaced node that should read the global robot description.

    """

    def __init__(self, env, work_dir, parameters=None, namespace=None, remaps=()):
        self.work_dir = pathlib.Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.env = node_environment(env, self.work_dir / 'ros_log')
        self.parameters = dict(parameters or {})
        self.namespace = namespace
        self.remaps = list(remaps)
        self.log_path = self.work_dir / 'gjk_distance_node.log'
        self.process = None

    def command(self):
        """Return the command line; writes a parameter file for ``parameters``."""
        params_file = self.work_dir / 'params.yaml'
        params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': self.parameters}}))
        command = [str(NODE_EXECUTABLE), '--ros-args', '--params-file', str(params_file)]
        if self.namespace:
            command += ['-r', '__ns:=%s' % self.namespace]
        for remap in self.remaps:
            command += ['-r', remap]
        return command

    def start(self):
        """Start the process (its output goes to ``log_path``)."""
        with open(self.log_path, 'wb') as log:
            self.process = subprocess.Popen(self.command(), env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        _RUNNING.add(self.process)
        return self

    def alive(self):
        """Whether the process is still running."""
        return self.process is not None and self.process.poll() is None

    def output(self):
        """Everything the node logged so far."""
        return self.log_path.read_text(errors='replace') if self.log_path.exists() else ''

    def lines_with(self, *fragments):
        """Log lines that contain every fragment."""
        return [line for line in self.output().splitlines()
                if all(fragment in line for fragment in fragments)]

    def stop(self, timeout=TIMEOUT):
        """Stop with SIGINT (as Ctrl-C would); kill if it does not exit. Returns the code."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        _RUNNING.discard(self.process)
        return self.process.returncode

    def __enter__(self):
        """Start on entry."""
        return self.start()

    def __exit__(self, *exc_info):
        """Stop the process, whatever happened."""
        self.stop()


class SpinThread:
    """
    Spin an executor in a daemon thread until ``stop``.

    ``stop`` ends the thread before it shuts the executor down: ``Executor.shutdown`` destroys
    its guard condition at once, and a callback still finishing in a spinning thread would
    trigger it (rclpy's InvalidHandle).
    """

    def __init__(self, executor):
        self.executor = executor
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        try:
            while not self._stopping.is_set():
                self.executor.spin_once(timeout_sec=SPIN_PERIOD)
        except (ExternalShutdownException, rclpy.executors.ShutdownException):
            pass

    def stop(self):
        """End the thread, then shut the executor down."""
        self._stopping.set()
        self._thread.join(TIMEOUT)
        self.executor.shutdown(timeout_sec=TIMEOUT)


class Scene:
    """
    A test-side rclpy node publishing a scene and collecting the distance node's output.

    Parameters
    ----------
    domain_id : int
        ROS domain of the node under test.
    node_namespace : str
        Namespace of the distance node ('' for the root).

    """

    _instances = 0

    def __init__(self, domain_id, node_namespace=''):
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        Scene._instances += 1
        self.node = Node('gjk_test_scene_%d' % Scene._instances, context=self.context)
        prefix = '%s/%s/' % (node_namespace.rstrip('/'), NODE_NAME)
        self.topics = {name: prefix + name for name in (
            'distances', 'names', 'min_distance', 'markers', 'obstacles', 'links')}
        self._lock = threading.Lock()
        self._dynamic = {}
        self._static = {}
        self._tf_paused = False
        self._live_markers = {'obstacles': {}, 'links': {}}
        self._markers_paused = False
        self.latest = {}
        self.counts = {}
        self.histories = {}
        self.arrivals = {}
        self.diagnostics = []
        self._make_publishers()
        self._make_subscriptions()
        self.node.create_timer(TF_REPUBLISH_PERIOD, self._republish_tf)
        self.node.create_timer(TF_REPUBLISH_PERIOD, self._republish_markers)
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        self._spinner = SpinThread(executor)

    def _make_publishers(self):
        node = self.node
        self.tf_pub = node.create_publisher(TFMessage, '/tf', TF_QOS)
        self.tf_static_pub = node.create_publisher(TFMessage, '/tf_static', LATCHED_QOS)
        self.urdf_pub = node.create_publisher(String, '/robot_description', LATCHED_QOS)
        self.obstacles_pub = node.create_publisher(MarkerArray, self.topics['obstacles'],
                                                   STREAM_QOS)
        self.links_pub = node.create_publisher(MarkerArray, self.topics['links'], STREAM_QOS)

    def _make_subscriptions(self):
        node = self.node
        node.create_subscription(PointCloud2, self.topics['distances'],
                                 self._keeper('distances'), STREAM_QOS)
        node.create_subscription(String, self.topics['names'], self._keeper('names'),
                                 LATCHED_QOS)
        node.create_subscription(Float64, self.topics['min_distance'],
                                 self._keeper('min_distance'), STREAM_QOS)
        node.create_subscription(MarkerArray, self.topics['markers'], self._keeper('markers'),
                                 STREAM_QOS)
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                 STREAM_QOS)

    def subscribe(self, name, msg_type, topic, qos=STREAM_QOS):
        """Keep the latest message of another topic under ``name`` (see ``message``)."""
        self.node.create_subscription(msg_type, topic, self._keeper(name), qos)

    def set_node_parameters(self, parameters, timeout=TIMEOUT):
        """
        Set parameters of the node under test through its parameter service.

        Returns
        -------
        list of rcl_interfaces.msg.SetParametersResult

        """
        client = AsyncParameterClient(self.node, self.topics['distances'].rsplit('/', 1)[0])
        wait_until(lambda: client.services_are_ready(), timeout, 'the parameter services')
        future = client.set_parameters(list(parameters))
        wait_until(future.done, timeout, 'the set_parameters answer')
        return future.result().results

    def _keeper(self, name):
        def keep(msg):
            with self._lock:
                self.latest[name] = msg
                self.counts[name] = self.counts.get(name, 0) + 1
                if name in self.histories:
                    self.histories[name].append(msg)
                    self.arrivals[name].append(time.monotonic())
        return keep

    def start_history(self, name):
        """Keep every message of an output from now on (see ``history``)."""
        with self._lock:
            self.histories[name] = []
            self.arrivals[name] = []

    def history_gaps(self, name):
        """Seconds between consecutive arrivals of ``name`` since ``start_history``."""
        with self._lock:
            times = list(self.arrivals.get(name, []))
        return [later - earlier for earlier, later in zip(times, times[1:])]

    def history(self, name):
        """Every message of ``name`` since ``start_history``."""
        with self._lock:
            return list(self.histories.get(name, []))

    def _on_diagnostics(self, msg):
        with self._lock:
            self.diagnostics.append(msg)
            self.counts['diagnostics'] = self.counts.get('diagnostics', 0) + 1

    def close(self):
        """Stop spinning, then shut the context down."""
        self._spinner.stop()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def __enter__(self):
        """Use as a context manager."""
        return self

    def __exit__(self, *exc_info):
        """Close, whatever happened."""
        self.close()

    # -- publishing --------------------------------------------------------------------------

    def _transform(self, parent, child, xyz, quaternion, stamp_ns=None):
        transform = TransformStamped()
        if stamp_ns is None:
            transform.header.stamp = self.node.get_clock().now().to_msg()
        else:
            transform.header.stamp.sec, transform.header.stamp.nanosec = divmod(
                int(stamp_ns), 1_000_000_000)
        transform.header.frame_id = parent
        transform.child_frame_id = child
        transform.transform.translation.x, transform.transform.translation.y, \
            transform.transform.translation.z = (float(v) for v in xyz)
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = (float(v) for v in quaternion)
        return transform

    def send_tf(self, parent, child, xyz=(0.0, 0.0, 0.0), quaternion=(0.0, 0.0, 0.0, 1.0)):
        """Set a dynamic transform; it is republished at 20 Hz until paused or forgotten."""
        with self._lock:
            self._dynamic[child] = (parent, tuple(xyz), tuple(quaternion))
        self.tf_pub.publish(TFMessage(transforms=[self._transform(parent, child, xyz,
                                                                  quaternion)]))

    def send_tf_once(self, parent, child, xyz=(0.0, 0.0, 0.0),
                     quaternion=(0.0, 0.0, 0.0, 1.0), stamp_ns=None):
        """Publish one dynamic transform once, with an explicit stamp (not republished)."""
        self.tf_pub.publish(TFMessage(transforms=[self._transform(parent, child, xyz,
                                                                  quaternion, stamp_ns)]))

    def now_ns(self):
        """Return the scene's clock (the node's system clock too), nanoseconds."""
        return self.node.get_clock().now().nanoseconds

    def forget_tf(self, child):
        """Stop republishing one dynamic transform."""
        with self._lock:
            self._dynamic.pop(child, None)

    def pause_tf(self, paused=True):
        """Stop (or resume) republishing every dynamic transform."""
        with self._lock:
            self._tf_paused = paused

    def _republish_tf(self):
        with self._lock:
            if self._tf_paused or not self._dynamic:
                return
            transforms = [self._transform(parent, child, xyz, quaternion)
                          for child, (parent, xyz, quaternion) in self._dynamic.items()]
        self.tf_pub.publish(TFMessage(transforms=transforms))

    def send_static_tf(self, parent, child, xyz=(0.0, 0.0, 0.0),
                       quaternion=(0.0, 0.0, 0.0, 1.0)):
        """Add a static transform; all of them go out in one latched message, as tf2_ros."""
        with self._lock:
            self._static[child] = self._transform(parent, child, xyz, quaternion)
            message = TFMessage(transforms=list(self._static.values()))
        self.tf_static_pub.publish(message)

    def send_urdf(self, urdf):
        """Publish a robot description (latched)."""
        self.urdf_pub.publish(String(data=urdf))

    def send_markers(self, markers, topic='obstacles', repeat=True):
        """
        Publish a MarkerArray on the node's ~/obstacles or ~/links.

        With ``repeat`` the scene behaves like a live perception source: it republishes its
        current markers (ADDs, minus DELETEs and DELETEALLs) at 20 Hz until paused, so their
        namespaces stay fresh. Without it the message goes out once.
        """
        markers = list(markers)
        if repeat:
            with self._lock:
                self._remember_markers(self._live_markers[topic], markers)
        self._publisher_of(topic).publish(MarkerArray(markers=markers))

    def _publisher_of(self, topic):
        return self.obstacles_pub if topic == 'obstacles' else self.links_pub

    @staticmethod
    def _remember_markers(live, markers):
        for item in markers:
            if item.action == Marker.DELETEALL:
                for key in [key for key in live if not item.ns or key[0] == item.ns]:
                    del live[key]
            elif item.action == Marker.DELETE:
                live.pop((item.ns, item.id), None)
            else:
                live[(item.ns, item.id)] = item

    def pause_markers(self, paused=True):
        """Stop (or resume) republishing the live markers: the sources go silent."""
        with self._lock:
            self._markers_paused = paused

    def forget_markers(self, topic='obstacles', namespace=None):
        """Stop republishing the markers of a namespace (all if None) without deleting them."""
        with self._lock:
            live = self._live_markers[topic]
            for key in [key for key in live if namespace is None or key[0] == namespace]:
                del live[key]

    def _republish_markers(self):
        with self._lock:
            if self._markers_paused:
                return
            batches = {topic: list(live.values())
                       for topic, live in self._live_markers.items() if live}
        for topic, markers in batches.items():
            self._publisher_of(topic).publish(MarkerArray(markers=markers))

    # -- waiting -----------------------------------------------------------------------------

    def wait_for_subscribers(self, topic='obstacles', timeout=STARTUP_TIMEOUT,
                             node_process=None):
        """Wait until the node under test subscribes to one of our topics."""
        publisher = {'obstacles': self.obstacles_pub, 'links': self.links_pub,
                     'tf': self.tf_pub}[topic]
        wait_until(lambda: publisher.get_subscription_count() > 0, timeout,
                   'a subscriber on %s' % topic, node_process=node_process)

    def message(self, name):
        """Latest message of an output ('distances', 'names', ...), or None."""
        with self._lock:
            return self.latest.get(name)

    def count(self, name):
        """How many messages of an output arrived so far."""
        with self._lock:
            return self.counts.get(name, 0)

    def names(self):
        """Latest ``~/names`` as ``{'links': {id: name}, 'obstacles': {id: name}}``, or None."""
        message = self.message('names')
        if message is None:
            return None
        names = json.loads(message.data)
        return {kind: {int(key): value for key, value in names[kind].items()}
                for kind in ('links', 'obstacles')}

    def name_list(self, kind='links'):
        """Names of one kind ('links' or 'obstacles') in id order; [] before ~/names."""
        names = self.names()
        return [] if names is None else [names[kind][i] for i in sorted(names[kind])]

    def records(self):
        """Return the latest ``~/distances`` read with the latest names, or None."""
        cloud = self.message('distances')
        return None if cloud is None else read_distances(cloud, self.message('names'))

    def wait_for_records(self, predicate, timeout=TIMEOUT, what='distances',
                         node_process=None):
        """
        Wait until the latest records satisfy ``predicate``; return them.

        On timeout the failure shows the last records (and the node's log if given).
        """
        last = []

        def check():
            records = self.records()
            if records is None:
                return False
            last[:] = records
            return predicate(records)
        try:
            wait_until(check, timeout, what, node_process=node_process)
            return list(last)
        except AssertionError as error:
            details = '\nlast records:\n' + '\n'.join(repr(record) for record in last)
            raise AssertionError(str(error) + details) from None

    def wait_for_more(self, name, count=3, timeout=TIMEOUT):
        """Wait until ``count`` more messages of an output arrive (the node is alive)."""
        target = self.count(name) + count
        wait_until(lambda: self.count(name) >= target, timeout,
                   '%d more %s messages' % (count, name))

    def diagnostic_statuses(self):
        """Statuses of the latest diagnostics message, by name."""
        with self._lock:
            message = self.diagnostics[-1] if self.diagnostics else None
        return {} if message is None else {status.name: status for status in message.status}


def find_record(records, link, obstacle):
    """Return the record of a (link, obstacle) pair, or None."""
    for record in records:
        if record.link == link and record.obstacle == obstacle:
            return record
    return None


def marker(ns, marker_id, marker_type=Marker.CUBE, frame_id='world', xyz=(0.0, 0.0, 0.0),
           quaternion=(0.0, 0.0, 0.0, 1.0), scale=(0.1, 0.1, 0.1), action=Marker.ADD,
           lifetime=0.0, points=(), mesh_resource='', frame_locked=False):
    """Build a visualization_msgs/Marker with the fields the node reads."""
    result = Marker(ns=ns, id=marker_id, type=marker_type, action=action,
                    frame_locked=frame_locked)
    result.header.frame_id = frame_id
    result.pose.position.x, result.pose.position.y, result.pose.position.z = \
        (float(v) for v in xyz)
    orientation = result.pose.orientation
    orientation.x, orientation.y, orientation.z, orientation.w = (float(v) for v in quaternion)
    result.scale.x, result.scale.y, result.scale.z = (float(v) for v in scale)
    seconds = int(lifetime)
    result.lifetime = Duration(sec=seconds, nanosec=int(round((lifetime - seconds) * 1e9)))
    result.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in points]
    result.mesh_resource = mesh_resource
    result.color.a = 1.0
    return result


def box_urdf(robot, links):
    """
    Write a URDF whose links have box/sphere collision elements.

    Parameters
    ----------
    robot : str
        The robot name.
    links : dict of str to list of (str, tuple, tuple)
        Link name -> [(kind, size, xyz)], kind 'box' (size = full edges) or 'sphere'
        (size = (radius,)); a link with an empty list has no collision.

    """
    parts = ['<?xml version="1.0"?>', '<robot name="%s">' % robot]
    for name, pieces in links.items():
        parts.append('  <link name="%s">' % name)
        for kind, size, xyz in pieces:
            if kind == 'box':
                geometry = '<box size="%s"/>' % ' '.join(repr(float(v)) for v in size)
            elif kind == 'sphere':
                geometry = '<sphere radius="%r"/>' % float(size[0])
            else:
                geometry = kind  # raw XML, for tests of broken geometry
            parts.append('    <collision><origin xyz="%s"/><geometry>%s</geometry></collision>'
                         % (' '.join(repr(float(v)) for v in xyz), geometry))
        parts.append('  </link>')
    parts.append('</robot>')
    return '\n'.join(parts)


def session_domain_id():
    """Return the ROS domain id conftest holds for this test process (module fixtures)."""
    return int(os.environ['ROS_DOMAIN_ID'])


def installed_launch_description(arguments):
    """
    Return a launch description that includes the installed launch file, then starts the tests.

    For launch_testing's ``generate_test_description``; ``arguments`` are the launch
    arguments (strings), as on a ``ros2 launch`` line.
    """
    import launch
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    import launch_testing.actions
    from ament_index_python.packages import get_package_share_directory
    launch_file = os.path.join(get_package_share_directory('gjk_ros'), 'launch',
                               'gjk_distance.launch.py')
    return launch.LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(launch_file),
                                 launch_arguments=dict(arguments).items()),
        launch_testing.actions.ReadyToTest(),
    ])


def parameter(name, value):
    """
    Return a ``Parameter`` typed as the node declares ``name``.

    A name of ``PARAMETERS`` takes its declared kind (so 20 sets a double to 20.0); any other
    (a source's ``<name>.*``) the type of ``value``: float a double, a list a string array.
    """
    kind = {spec.name: spec.kind for spec in PARAMETERS}.get(name)
    if kind == 'string_array' or (kind is None and isinstance(value, (list, tuple))):
        return Parameter(name, Parameter.Type.STRING_ARRAY, list(value))
    if kind == 'double' or (kind is None and isinstance(value, float)):
        return Parameter(name, Parameter.Type.DOUBLE, float(value))
    return Parameter(name, value=value)


def set_or_fail(scene, **values):
    """Set parameters through the node's parameter service; every one must be accepted."""
    answers = scene.set_node_parameters([parameter(name, value)
                                         for name, value in values.items()])
    assert all(answer.successful for answer in answers), [a.reason for a in answers]


@contextlib.contextmanager
def setting(scene, restore, **values):
    """Set parameters for a ``with`` block, then put back ``restore[name]`` for each."""
    set_or_fail(scene, **values)
    try:
        yield
    finally:
        set_or_fail(scene, **{name: restore[name] for name in values})
