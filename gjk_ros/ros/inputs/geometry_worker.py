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
The geometry worker process: raw messages and parameter bodies in, convex pieces out.

It runs in a process of its own (``ingestion.Ingestor`` starts it) so that one hostile input
never stalls the node's outputs: it decodes the raw bytes, checks them against the
``IngestLimits``, builds the pieces with a memory limit, and sends back small results. It keeps
the pieces it built (latest wins per marker), so a marker republished unchanged costs nothing.

Only the worker runs this module: each job kind of ``jobs`` has its handler here
(``_WorkerState.HANDLERS``), and nothing here is imported by the node's own threads.
"""

import collections
from dataclasses import replace
import fnmatch
import time

from gjk_ros.ros.inputs.jobs import (ADD, BodyEntry, BodyTextJob, check_pose, DecomposeJob, DELETE,
                                     DELETEALL, Finished, geometry_key, marker_name, MarkerBatch,
                                     MarkerBatchJob, MarkerId, MarkerOp, MarkerRebuild,
                                     MarkerRebuildJob, MarkerSource, Progress, Ready,
                                     receive_job, rejection, RobotDescriptionJob, RobotModel,
                                     RobotSemantics, SceneChange, SceneMessageJob, SceneRebuild,
                                     SceneRebuildJob, SemanticDescriptionJob)

__all__ = ['worker_main']

# visualization_msgs/Marker.TRIANGLE_LIST (the worker imports the messages lazily).
TRIANGLE_LIST = 11


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
        connection.send(Ready())
    except (OSError, ValueError):
        return
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message is None:
            return
        job, skip = receive_job(connection, message)
        finished = state.run(job, skip, lambda body: connection.send(Progress(body)))
        try:
            connection.send(finished)
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
        self.pieces = collections.OrderedDict()   # (geometry key, mode, explicit) -> built
        self.sent = {}                            # kind -> {MarkerId: geometry key last sent}

    def warm_up(self):
        """Import every library a job needs and build one piece (compiling what must be)."""
        from gjk_ros.models import piece_from_description
        import rclpy.serialization  # noqa: F401 -- imported for its cost, before any job
        from std_msgs.msg import String  # noqa: F401
        from visualization_msgs.msg import MarkerArray  # noqa: F401
        piece_from_description('warm_up', 'world', {'type': 'box', 'size': [0.1, 0.1, 0.1]},
                               resolver=self.resolver)

    def run(self, job, skip, progress):
        """Run the handler of ``job``'s kind; a ``Finished`` with its value or its error."""
        from gjk_ros.models import ModelError
        try:
            return Finished(self.HANDLERS[type(job)](self, job, skip, progress))
        except ModelError as error:
            return Finished(error=error)
        except MemoryError:
            return Finished(error=rejection(job, 'out of memory (ingest_memory_mb %d MiB)'
                                            % self.limits.worker_memory_mb))
        except RecursionError:
            return Finished(error=rejection(job, 'nested too deeply'))

    # robot_description ------------------------------------------------------------------

    def urdf(self, job, skip, progress):
        from gjk_ros.models import parse_urdf_collisions
        from gjk_ros.models.kinematics import parse_kinematics
        text = self._text('robot_description', job.data)
        model = parse_urdf_collisions(text, resolver=self.resolver)
        uses = []
        for link, pieces in model.pieces.items():
            model.pieces[link] = [built for piece in pieces
                                  for built in self._in_mode(piece, 'link', uses)]
        try:
            kinematics = parse_kinematics(text)
        except ValueError:
            # Not a kinematic tree: no pair is excluded as adjacent, no SRDF group resolves.
            return RobotModel(model, mesh_uses=tuple(uses))
        joints = tuple((joint.name, joint.parent, joint.child) for joint in kinematics.joints)
        return RobotModel(model, frozenset(kinematics.adjacent_pairs()), joints, tuple(uses))

    def srdf(self, job, skip, progress):
        from gjk_ros.models.srdf import parse_srdf
        text = self._text('robot_description_semantic', job.data)
        try:
            srdf = parse_srdf(text)
        except ValueError as error:
            from gjk_ros.models import ModelError
            raise ModelError('robot_description_semantic', str(error)[:200]) from None
        return RobotSemantics(frozenset(srdf.disabled_collisions), srdf.groups)

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

    def decompose(self, job, skip, progress):
        """Return the CoACD parts of a mesh file as ConvexPolytopes (models.decomposition)."""
        from gjk_ros.core import ConvexPolytope
        from gjk_ros.models import ModelError
        from gjk_ros.models.decomposition import decompose_mesh_file
        progress(job.uri)
        # The mesh size limits, before CoACD reads it.
        self.resolver.load_mesh_info(job.uri, job.scale)
        try:
            parts = decompose_mesh_file(self.resolver.resolve(job.uri), job.scale,
                                        {'threshold': job.threshold}, job.cache_dir or None)
            return tuple(ConvexPolytope.from_points(part) for part in parts)
        except ImportError:
            raise ModelError(job.uri, 'cannot decompose: the coacd package is not installed '
                                      '(pip install coacd)') from None
        except (ValueError, RuntimeError) as error:
            raise ModelError(job.uri, 'decomposition failed (%s)'
                             % type(error).__name__) from None

    # static_obstacles / link_geometry -------------------------------------------------------

    def parameter_bodies(self, job, skip, progress):
        """Build the pieces of bodies the node parsed (``params.parse_body_descriptions``)."""
        from gjk_ros.models import ModelError, piece_from_description
        entries = []
        for body, frame_id, descriptions in job.bodies:
            frame_id = frame_id or (job.fixed_frame if job.kind == 'obstacle' else body)
            for index, description in enumerate(descriptions):
                try:
                    uses = []
                    pieces = self._in_mode(piece_from_description(
                        body, frame_id, description, resolver=self.resolver), job.kind, uses)
                    entries += [BodyEntry(body, (index, part), piece,
                                          mesh_use=uses[0] if uses and not part else None)
                                for part, piece in enumerate(pieces)]
                except ModelError as error:
                    entries.append(BodyEntry(body, (index, 0), error=error.reason))
                except (ValueError, TypeError, MemoryError) as error:
                    entries.append(BodyEntry(body, (index, 0),
                                             error='rejected (%s)' % type(error).__name__))
        return tuple(entries)

    # meshes by mode (mesh_mode; docs/nonconvex.md) ---------------------------------------------

    def _in_mode(self, piece, kind, uses):
        """
        Return the pieces of a built piece in its body's mesh mode; its ``MeshUse`` into uses.

        Only the hull of a non-convex mesh file (``piece.mesh``) has a choice: a convex mesh is
        its hull in every mode. A hull keeps ``mesh`` for the decomposer (which replaces it by
        CoACD's parts when ``decompose_meshes`` names it) unless its mode was chosen, so a hull
        the user chose is never decomposed.
        """
        if not piece.mesh:
            return [piece]
        from gjk_ros.models.mesh_bodies import MeshUse
        uri, scale = piece.mesh
        label = 'mesh %s' % uri
        settings = self.limits.mesh
        mode, explicit = self._mode_of(piece.body, kind, uri)
        note = ''
        if mode == 'exact':
            triangles = self.resolver.load_mesh_triangles(uri, scale)
            pieces, use = self._exact(piece.body, piece.frame_id, piece.origin, triangles,
                                      label, (uri, tuple(scale)))
            if pieces is not None:
                uses.append(use)
                return pieces
            note = use.note
        elif mode == 'parts' and not any(fnmatch.fnmatchcase(uri, pattern)
                                         for pattern in settings.decompose):
            note = ('%s: mesh_mode parts needs decompose_meshes to name %s; using its convex '
                    'hull' % (piece.body, uri))
        deviation = self.resolver.load_mesh_info(uri, scale).hull_deviation
        used = 'parts' if mode == 'parts' and not note else 'hull'
        uses.append(MeshUse(piece.body, label, used, 1, None, deviation, note))
        if note:
            piece = replace(piece, warnings=piece.warnings + (note,))
        return [piece if used == 'parts' or not explicit else replace(piece, mesh=())]

    def _mode_of(self, body, kind, uri=''):
        """
        Return (mode, explicit) of a mesh of ``body`` in the node's order of precedence.

        As ``MeshSettings.mode_of``, except that a URI ``decompose_meshes`` names is 'parts'
        unless an override names the body (docs/nonconvex.md, "In the node"): naming a mesh
        file asks for its parts whatever ``mesh_mode`` says for every body; only a mode chosen
        for that very body (``mesh_mode_overrides``) wins over it.
        """
        settings = self.limits.mesh
        overridden = any(fnmatch.fnmatchcase(body, pattern) for pattern, _ in settings.overrides)
        if uri and not overridden and any(fnmatch.fnmatchcase(uri, pattern)
                                          for pattern in settings.decompose):
            return 'parts', False
        return settings.mode_of(body, kind, uri)

    def _exact(self, body, frame_id, origin, triangles, label, key):
        """``models.mesh_bodies.exact_pieces`` with the worker's resolver and piece bound."""
        from gjk_ros.models.mesh_bodies import exact_pieces
        return exact_pieces(body, frame_id, origin, triangles, label, resolver=self.resolver,
                            key=key, max_pieces=self.limits.mesh.max_pieces)

    def _mesh_options(self, body, kind):
        """Return the ``MeshOptions`` of a collision object's meshes (its body's mode)."""
        from gjk_ros.models.collision_objects import MeshOptions
        mode, _ = self._mode_of(body, kind)
        return MeshOptions(mode, self.resolver, self.limits.mesh.max_pieces)

    # planning scene -------------------------------------------------------------------------

    def scene_message(self, job, skip, progress):
        """Decode one raw moveit_msgs message into what ``SceneState`` applies."""
        from gjk_ros.models import ModelError
        from gjk_ros.models.collision_objects import attached_object, scene_object, scene_update
        from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningScene
        from rclpy.serialization import deserialize_message
        message_type = {'object': CollisionObject, 'attached': AttachedCollisionObject,
                        'scene': PlanningScene}[job.kind]
        try:
            message = deserialize_message(job.data, message_type)
        except Exception as error:  # noqa: B902 -- any decoding failure is a rejection
            raise ModelError(job.subject, 'not a moveit_msgs/%s (%s)'
                             % (message_type.__name__, type(error).__name__)) from None
        options = {'limits': self.limits,
                   'hull_warning_threshold': self.limits.hull_warning_threshold}
        mesh = self.limits.mesh
        if job.kind == 'object':
            operation, entry = scene_object(
                message, mesh_options=self._mesh_options(message.id, 'obstacle'), **options)
            return SceneChange('object', entry, operation, mesh)
        if job.kind == 'attached':
            operation, entry = attached_object(
                message, mesh_options=self._mesh_options(message.object.id, 'link'), **options)
            return SceneChange('attached', entry, operation, mesh)
        common = self._mesh_options('', 'obstacle')
        update = scene_update(message, mesh_options=common, **options)
        # One mode for the whole message above; an object whose own mode differs (an attached
        # one is a link's, an override names it) is built again in its mode.
        for index, found in enumerate(message.world.collision_objects):
            own = self._mesh_options(found.id, 'obstacle')
            if found.meshes and own.mode != common.mode:
                update.objects[index] = scene_object(found, mesh_options=own, **options)
        for index, found in enumerate(message.robot_state.attached_collision_objects):
            own = self._mesh_options(found.object.id, 'link')
            if found.object.meshes and own.mode != common.mode:
                update.attached[index] = attached_object(found, mesh_options=own, **options)
        return SceneChange('scene', update, mesh=mesh)

    def scene_rebuild(self, job, skip, progress):
        """Build held scene objects' meshes again in this worker's modes (``SceneRebuild``)."""
        from gjk_ros.models.collision_objects import rebuilt_object
        built = []
        for key, kind, found in job.objects:
            progress(key)  # each object has ingest_timeout
            built.append((key, rebuilt_object(
                found, hull_warning_threshold=self.limits.hull_warning_threshold,
                mesh_options=self._mesh_options(found.id, kind))))
        return SceneRebuild(self.limits.mesh, tuple(built))

    # markers --------------------------------------------------------------------------------

    def markers(self, job, skip, progress):
        kind = job.kind
        if len(job.messages) > 1:
            progress = _throttled(progress)
        sent = self.sent.setdefault(kind, {})
        for marker_id in job.forget:
            sent.pop(MarkerId(*marker_id), None)
        clears, latest, heard = self._coalesce(kind, job.messages, progress)
        ops = tuple(self._op(kind, marker, received, skip, progress)
                    for marker, received in latest.values())
        return MarkerBatch(tuple(clears), ops, heard, self.limits.mesh)

    def marker_rebuild(self, job, skip, progress):
        """Build held mesh markers again in this worker's modes (``MarkerRebuild``)."""
        from gjk_ros.models import ModelError
        built = []
        for marker_id, name, key, source in job.markers:
            progress(marker_id)  # each marker has ingest_timeout
            mode, explicit = self._mode_of(name, job.kind, source.uri)
            try:
                pieces, use = self._marker_pieces(source, name, job.kind, key, mode)
            except ModelError as error:
                built.append((marker_id, key, None, None, error.reason))
                continue
            self._keep((key, mode, explicit), (pieces, use, source))
            built.append((marker_id, key, pieces, use, None))
        return MarkerRebuild(self.limits.mesh, tuple(built))

    HANDLERS = {RobotDescriptionJob: urdf, SemanticDescriptionJob: srdf,
                DecomposeJob: decompose, BodyTextJob: parameter_bodies,
                SceneMessageJob: scene_message, SceneRebuildJob: scene_rebuild,
                MarkerBatchJob: markers, MarkerRebuildJob: marker_rebuild}

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
                    latest[MarkerId(marker.ns, marker.id)] = (marker, received)
        return clears, latest, heard

    def _clear(self, kind, namespace, clears, latest):
        for marker_id in [marker_id for marker_id in latest
                          if not namespace or marker_id.ns == namespace]:
            del latest[marker_id]
        sent = self.sent.setdefault(kind, {})
        for marker_id in [marker_id for marker_id in sent
                          if not namespace or marker_id.ns == namespace]:
            del sent[marker_id]
        if not namespace:
            clears[:] = ['']
        elif namespace not in clears:
            clears.append(namespace)

    def _op(self, kind, marker, received, skip, progress):
        lifetime_ns = marker.lifetime.sec * 1_000_000_000 + marker.lifetime.nanosec
        op = MarkerOp(kind, marker.ns, marker.id, marker.action, marker_name(kind, marker),
                      received, lifetime_ns)
        key = MarkerId(marker.ns, marker.id)
        sent = self.sent.setdefault(kind, {})
        previous = sent.pop(key, None)  # restored below if the geometry is unchanged
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
        if key in skip:
            op.error = ('took longer than ingest_timeout (%g s) or exceeded ingest_memory_mb '
                        '(%d MiB); rejected'
                        % (self.limits.job_timeout_s, self.limits.worker_memory_mb))
            return op
        if previous == op.geometry_key:
            sent[key] = previous  # the node holds this piece: send the pose only
            return op
        self._attach_piece(op, key, sent, marker, progress)
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

    def _attach_piece(self, op, key, sent, marker, progress):
        from gjk_ros.models import marker_to_piece, ModelError
        # The whole choice is in the key: two bodies with one geometry may differ in it.
        mode, explicit = self._mode_of(op.name, op.kind, marker.mesh_resource)
        cached = (op.geometry_key, mode, explicit)
        built = self.pieces.get(cached)
        if built is None:
            progress(key)
            try:
                source = _marker_source(marker_to_piece(marker, resolver=self.resolver), marker)
                built = self._marker_pieces(source, op.name, op.kind, op.geometry_key, mode) + \
                    (source if source.piece.mesh or source.triangles is not None else None,)
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
            self._keep(cached, built)
        self.pieces.move_to_end(cached)
        op.pieces, op.mesh_use, op.source = built
        sent[key] = op.geometry_key

    def _keep(self, cached, built):
        """Keep built marker geometry for re-use, the most recently used ``WORKER_CACHE``."""
        self.pieces[cached] = built
        self.pieces.move_to_end(cached)
        while len(self.pieces) > WORKER_CACHE:
            self.pieces.popitem(last=False)

    def _marker_pieces(self, source, name, kind, key, mode):
        """
        Return (pieces, MeshUse or None) of a marker's ``MarkerSource`` in ``mode``.

        A MESH_RESOURCE marker is a mesh file (``_in_mode``); a TRIANGLE_LIST marker is the
        triangles of its points, scaled as RViz scales them.
        """
        uses, piece = [], source.piece
        if source.triangles is None or mode != 'exact':
            pieces = self._in_mode(piece, kind, uses)
            return tuple(pieces), (uses[0] if uses else None)
        triangles = source.triangles
        pieces, use = self._exact(name, piece.frame_id, piece.origin, triangles,
                                  'mesh of %d triangles' % len(triangles), ('marker', key))
        if pieces is None:
            return (replace(piece, warnings=piece.warnings + (use.note,)),), use
        return tuple(pieces), use


def _marker_source(piece, marker):
    """Return the ``MarkerSource`` of a marker's hull piece (a TRIANGLE_LIST's triangles too)."""
    if marker.type != TRIANGLE_LIST:
        return MarkerSource(piece, None, marker.mesh_resource)
    import numpy
    points = marker.points if isinstance(marker.points, numpy.ndarray) else numpy.array(
        [[point.x, point.y, point.z] for point in marker.points])
    scale = numpy.array([marker.scale.x, marker.scale.y, marker.scale.z])
    return MarkerSource(piece, (points * scale).reshape(-1, 3, 3), marker.mesh_resource)


def _throttled(progress):
    """Send decode progress once per 0.1 s at most (a batch may hold thousands of messages)."""
    last = [0.0]

    def send(body):
        now = time.monotonic()
        if body is not None or now - last[0] > 0.1:
            last[0] = now
            progress(body)
    return send
