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
The geometry worker process: raw messages and parameter texts in, convex pieces out.

It runs in a process of its own (``ingestion.Ingestor`` starts it) so that one hostile input
never stalls the node's outputs: it decodes the raw bytes, checks them against the
``IngestLimits``, builds the pieces with a memory limit, and sends back small results. It keeps
the pieces it built (latest wins per marker), so a marker republished unchanged costs nothing.
"""

import collections
import time

from gjk_ros.ros.jobs import (ADD, check_pose, DELETE, DELETEALL, geometry_key, marker_name,
                              MarkerOp, model_error, receive_job)

__all__ = ['worker_main']

# Finished geometry kept by the worker for re-use (a marker toggled between two shapes).
WORKER_CACHE = 1024


def worker_main(connection, limits, package_paths):
    """Serve jobs until told to stop (None) or the parent goes away."""
    import signal
    import warnings
    # Ctrl-C reaches the whole process group: the node shuts the worker down itself, and a
    # KeyboardInterrupt traceback from here would look like a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    warnings.simplefilter('ignore')
    _limit_memory(limits.worker_memory_mb)
    state = _WorkerState(limits, package_paths)
    state.warm_up()
    try:
        connection.send(('ready',))
    except (OSError, ValueError):
        return
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        key, payload, skip = receive_job(connection, message)
        value, error = state.run(key, payload, skip,
                                 lambda body: connection.send(('progress', body)))
        try:
            connection.send(('result', value, error))
        except (OSError, ValueError):
            return


def _limit_memory(megabytes):
    try:
        import resource
        limit = int(megabytes) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the time limit still holds


class _WorkerState:
    """What the worker keeps between jobs: the resolver, built pieces, what it sent."""

    def __init__(self, limits, package_paths):
        from gjk_ros.models import ResourceResolver
        self.limits = limits
        self.resolver = ResourceResolver(
            package_paths, max_mesh_bytes=limits.max_mesh_bytes,
            max_mesh_triangles=limits.max_mesh_triangles,
            hull_warning_threshold=limits.hull_warning_threshold)
        self.pieces = collections.OrderedDict()   # geometry key -> piece (LRU)
        self.sent = {}                            # (kind, ns, id) -> geometry key last sent

    def warm_up(self):
        """Import every library a job needs and build one piece (compiling what must be)."""
        from gjk_ros.models import piece_from_description
        import rclpy.serialization  # noqa: F401 -- imported for its cost, before any job
        from std_msgs.msg import String  # noqa: F401
        from visualization_msgs.msg import MarkerArray  # noqa: F401
        piece_from_description('warm_up', 'world', {'type': 'box', 'size': [0.1, 0.1, 0.1]},
                               resolver=self.resolver)

    def run(self, key, payload, skip, progress):
        from gjk_ros.models import ModelError
        try:
            if key[0] == 'markers':
                return self.markers(key[1], payload, skip, progress), None
            if key[0] == 'urdf':
                return self.urdf(payload), None
            if key[0] == 'srdf':
                return self.srdf(payload), None
            if key[0] == 'decompose':
                return self.decompose(key[1], key[2], *payload, progress), None
            if key[0] == 'planning_scene':
                from gjk_ros.ros.sources.planning_scene import decode_scene_message
                return decode_scene_message(key[1], payload[1], self.limits), None
            return self.parameter(key[1], *payload), None
        except ModelError as error:
            return None, error
        except MemoryError:
            return None, model_error(key, 'out of memory (ingest_memory_mb %d MiB)'
                                     % self.limits.worker_memory_mb)
        except RecursionError:
            return None, model_error(key, 'nested too deeply')

    # robot_description ------------------------------------------------------------------

    def urdf(self, data):
        from gjk_ros.models import parse_urdf_collisions
        from gjk_ros.models.kinematics import parse_kinematics
        text = self._text('robot_description', data)
        model = parse_urdf_collisions(text, resolver=self.resolver)
        try:
            kinematics = parse_kinematics(text)
        except ValueError:
            # Not a kinematic tree: no pair is excluded as adjacent, no SRDF group resolves.
            return model, set(), ()
        joints = tuple((joint.name, joint.parent, joint.child) for joint in kinematics.joints)
        return model, kinematics.adjacent_pairs(), joints

    def srdf(self, data):
        from gjk_ros.models.srdf import parse_srdf
        text = self._text('robot_description_semantic', data)
        try:
            srdf = parse_srdf(text)
        except ValueError as error:
            from gjk_ros.models import ModelError
            raise ModelError('robot_description_semantic', str(error)[:200]) from None
        return set(srdf.disabled_collisions), srdf.groups

    def _text(self, body, data):
        from gjk_ros.models import ModelError
        from rclpy.serialization import deserialize_message
        from std_msgs.msg import String
        if len(data) > self.limits.max_description_bytes + 8:
            raise ModelError(body, '%d bytes exceed max_description_bytes (%d)'
                             % (len(data), self.limits.max_description_bytes))
        try:
            return deserialize_message(bytes(data), String).data
        except Exception as error:  # noqa: B902 -- any decoding failure is a rejection
            raise ModelError(body, 'not a std_msgs/String (%s)' % type(error).__name__) \
                from None

    # convex decomposition -------------------------------------------------------------------

    def decompose(self, uri, scale, settings, cache_dir, progress):
        """Return the CoACD parts of a mesh file as ConvexPolytopes (models.decomposition)."""
        from gjk_ros.core import ConvexPolytope
        from gjk_ros.models import ModelError
        from gjk_ros.models.decomposition import decompose_mesh_file
        progress(uri)
        self.resolver.load_mesh_info(uri, scale)  # the mesh size limits, before CoACD reads it
        try:
            parts = decompose_mesh_file(self.resolver.resolve(uri), scale, settings,
                                        cache_dir or None)
            return tuple(ConvexPolytope.from_points(part) for part in parts)
        except ImportError:
            raise ModelError(uri, 'cannot decompose: the coacd package is not installed '
                                  '(pip install coacd)') from None
        except (ValueError, RuntimeError) as error:
            raise ModelError(uri, 'decomposition failed (%s)' % type(error).__name__) from None

    # static_obstacles / link_geometry -------------------------------------------------------

    def parameter(self, kind, text, fixed_frame):
        from gjk_ros.models import ModelError, piece_from_description
        from gjk_ros.ros.params import parse_body_descriptions
        name = 'static_obstacles' if kind == 'obstacle' else 'link_geometry'
        try:
            bodies = parse_body_descriptions(text, self.limits)
        except ValueError as error:
            raise ModelError(name, str(error)) from None
        entries = []
        for body, frame_id, descriptions in bodies:
            frame_id = frame_id or (fixed_frame if kind == 'obstacle' else body)
            for index, description in enumerate(descriptions):
                try:
                    entries.append((body, index, piece_from_description(
                        body, frame_id, description, resolver=self.resolver)))
                except ModelError as error:
                    entries.append((body, index, error))
                except (ValueError, TypeError, MemoryError) as error:
                    entries.append((body, index, ModelError(body, 'rejected (%s)'
                                                            % type(error).__name__)))
        return entries

    # markers --------------------------------------------------------------------------------

    def markers(self, kind, payload, skip, progress):
        messages, forget = payload
        if len(messages) > 1:
            progress = _throttled(progress)
        for ns, marker_id in forget:
            self.sent.pop((kind, ns, marker_id), None)
        clears, latest, heard = self._coalesce(kind, messages, progress)
        ops = [self._op(kind, marker, received, skip, progress)
               for marker, received in latest.values()]
        return clears, ops, heard

    def _coalesce(self, kind, messages, progress):
        """Latest marker per (ns, id) over the messages, DELETEALL applied in order."""
        from rclpy.serialization import deserialize_message
        from visualization_msgs.msg import MarkerArray
        clears, latest, heard = [], {}, {}
        for data, received in messages:
            progress(None)  # decoding: a time limit hit here rejects the whole batch
            try:
                array = deserialize_message(data, MarkerArray)
            except Exception:  # noqa: B902 -- undecodable bytes refresh nothing
                continue
            if len(array.markers) > self.limits.max_markers_per_message:
                continue  # the node rejected the size already; its sources stay unheard
            for marker in array.markers:
                heard[marker.ns] = received
                if marker.action == DELETEALL:
                    self._clear(kind, marker.ns, clears, latest)
                else:
                    latest[(marker.ns, marker.id)] = (marker, received)
        return clears, latest, heard

    def _clear(self, kind, namespace, clears, latest):
        for key in [key for key in latest if not namespace or key[0] == namespace]:
            del latest[key]
        for key in [key for key in self.sent if key[0] == kind and
                    (not namespace or key[1] == namespace)]:
            del self.sent[key]
        if not namespace:
            clears[:] = ['']
        elif namespace not in clears:
            clears.append(namespace)

    def _op(self, kind, marker, received, skip, progress):
        lifetime = marker.lifetime.sec + marker.lifetime.nanosec * 1e-9
        op = MarkerOp(kind, marker.ns, marker.id, marker.action, marker_name(kind, marker),
                      received, lifetime)
        key = (kind, marker.ns, marker.id)
        previous = self.sent.pop(key, None)  # restored below if the geometry is unchanged
        if marker.action == DELETE:
            return op
        op.error = self._check_marker(kind, marker)
        if op.error is not None:
            return op
        op.frame_id = marker.header.frame_id.lstrip('/')
        position, orientation = marker.pose.position, marker.pose.orientation
        op.pose = (position.x, position.y, position.z,
                   orientation.x, orientation.y, orientation.z, orientation.w)
        op.error = check_pose(op.pose)
        if op.error is not None:
            return op
        op.frame_locked = bool(marker.frame_locked)
        op.stamp_ns = marker.header.stamp.sec * 1_000_000_000 + marker.header.stamp.nanosec
        op.geometry_key = geometry_key(marker)
        if (marker.ns, marker.id) in skip:
            op.error = ('took longer than ingest_timeout (%g s) or exceeded ingest_memory_mb; '
                        'rejected' % self.limits.job_timeout_s)
            return op
        if previous == op.geometry_key:
            self.sent[key] = previous  # the node holds this piece: send the pose only
            return op
        self._attach_piece(op, key, marker, progress)
        return op

    def _check_marker(self, kind, marker):
        if marker.action != ADD:
            return 'unknown marker action %d' % marker.action
        if not marker.header.frame_id.strip('/'):
            # tf2 refuses an empty frame id, so the marker could never be placed: it would wait
            # as STALE for ever. RViz refuses it too.
            return 'header.frame_id is empty (a marker must name its frame)'
        if len(marker.points) > self.limits.max_points:
            return '%d points exceed max_points (%d)' % (len(marker.points),
                                                         self.limits.max_points)
        mesh_bytes = len(getattr(getattr(marker, 'mesh_file', None), 'data', b'') or b'')
        if mesh_bytes > self.limits.max_mesh_bytes:
            return 'mesh_file of %d bytes exceeds max_mesh_bytes (%d)' % (
                mesh_bytes, self.limits.max_mesh_bytes)
        return None  # a mesh_resource file is checked by the resolver, before it is read

    def _attach_piece(self, op, key, marker, progress):
        from gjk_ros.models import marker_to_piece, ModelError
        piece = self.pieces.get(op.geometry_key)
        if piece is None:
            progress((marker.ns, marker.id))
            try:
                piece = marker_to_piece(marker, resolver=self.resolver)
            except ModelError as error:
                op.error = error.reason
                return
            except MemoryError:
                op.error = ('out of memory building it (ingest_memory_mb %d MiB)'
                            % self.limits.worker_memory_mb)
                return
            except Exception as error:  # noqa: B902 -- a library failure rejects one body
                op.error = 'rejected (%s)' % type(error).__name__
                return
            self.pieces[op.geometry_key] = piece
            while len(self.pieces) > WORKER_CACHE:
                self.pieces.popitem(last=False)
        self.pieces.move_to_end(op.geometry_key)
        op.piece = piece
        self.sent[key] = op.geometry_key


def _throttled(progress):
    """Send decode progress once per 0.1 s at most (a batch may hold thousands of messages)."""
    last = [0.0]

    def send(body):
        now = time.monotonic()
        if body is not None or now - last[0] > 0.1:
            last[0] = now
            progress(body)
    return send
