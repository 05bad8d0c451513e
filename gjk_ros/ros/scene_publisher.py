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
The ``scene_publisher`` node: world files into the planning scene (docs/planning_scene.md).

It reads PlanningScene YAML (the message form or robowflex's shorthand of MotionBenchMaker's
scenes), MoveIt ``.scene`` files and URDF worlds with ``gjk_ros.models.scene_files`` and
publishes their objects as one moveit_msgs/PlanningScene diff, as MoveIt's
``PlanningSceneInterface`` adds world objects (``is_diff`` and ``robot_state.is_diff`` true,
each object ADD: adding it again replaces it). Parameters (read at start):

- ``scene_files`` (string array): the files, in order;
- ``frame_id`` (string, default ''): the frame of objects whose ``header.frame_id`` is empty
  ('' leaves it empty: the distance node reads that as its ``fixed_frame``);
- ``topic`` (string, default ``/planning_scene``): where the distance node's
  ``planning_scene_topic`` (and ``move_group``) read scene diffs;
- ``republish_on_subscribe`` (bool, default false): also publish whenever a subscriber joins
  later (see below: it undoes removals; for a distance node that restarts alone, without
  move_group to ask).

A mesh named by a file (``resource``, a ``package://`` URI through the ament index, a
``file://`` URI or a path) is read here and sent as its triangles: a CollisionObject carries
meshes, not files. Every error names the file, the object and the field, never the contents;
a bad object or file is left out and the others are published.

When it publishes is MoveIt's ``publish_scene_from_text``'s rule: once, as soon as the topic
has a subscriber. The files are the scene's start, not its state: a node that removes or
moves one of their objects afterwards is never undone behind its back, as it would be by a
publication to every later subscriber (a volatile subscription, as the distance node's and
move_group's are, cannot be sent to alone). The publisher is transient-local (latched), so a
transient-local subscriber that joins later still gets the files' scene; a volatile one asks
for it with ``~/publish`` (std_srvs/Trigger), which publishes it again to every subscriber
(adding back what was removed since: that is what is asked). ``republish_on_subscribe`` makes
every new subscriber such a request.
"""

from dataclasses import dataclass
import sys

from gjk_ros.ros.inputs.model_imports import load_models

__all__ = ['collision_object_message', 'load_scene_files', 'main', 'planning_scene_message',
           'SceneFiles', 'MAX_SCENE_FILES']

# A bound on the ``scene_files`` parameter (each file is bounded by MAX_SCENE_BYTES).
MAX_SCENE_FILES = 1000
NODE_NAME = 'scene_publisher'
DEFAULT_TOPIC = '/planning_scene'


@dataclass(frozen=True)
class SceneFiles:
    """
    What the files hold, in the message's form (``collision_objects.message_form``).

    ``objects`` are world CollisionObjects, ``attached`` AttachedCollisionObjects (a file's
    ``robot_state``); ``errors`` say, file by file, what was left out and why.
    """

    objects: tuple = ()
    attached: tuple = ()
    errors: tuple = ()


def load_scene_files(paths, frame_id='', resolver=None) -> SceneFiles:
    """
    Read world files into message-form objects; a bad file or object is an error, not a stop.

    ``resolver`` (a ``ResourceResolver``; default the ament index, ``file://`` and paths) reads
    the meshes files name. An id given by two files is kept from the first.
    """
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models import default_resolver, ModelError, scene_files as world_files
    resolver = resolver or default_resolver()
    paths = list(paths)
    objects, attached, errors, seen = [], [], [], {}
    if len(paths) > MAX_SCENE_FILES:
        errors.append('scene_files: %d files, more than %d; the first %d are read'
                      % (len(paths), MAX_SCENE_FILES, MAX_SCENE_FILES))
        paths = paths[:MAX_SCENE_FILES]
    for path in paths:
        try:
            scene = world_files.read_scene_file(path)
        except ModelError as error:
            errors.append(str(error))
            continue
        for item in scene.objects:
            found = _object(item, path, resolver, frame_id, seen, errors)
            if found is not None:
                objects.append(found)
        for index, item in enumerate(scene.attached):
            found = _attached(item, index, path, resolver, seen, errors)
            if found is not None:
                attached.append(found)
    return SceneFiles(tuple(objects), tuple(attached), tuple(errors))


def _object(item, path, resolver, frame_id, seen, errors):
    """Return one object of a file in message form, or None (the error is in ``errors``)."""
    load_models()  # one whole import, whatever thread (model_imports.py)
    from gjk_ros.models import collision_objects, ModelError
    try:
        found = collision_objects.message_form(item, resolver, frame_id)
    except ModelError as error:
        errors.append('%s: %s' % (path, error))
        return None
    if found['id'] in seen:
        errors.append('%s: %s: the id is given by %s already; left out'
                      % (path, found['id'], seen[found['id']]))
        return None
    seen[found['id']] = path
    return found


def _attached(item, index, path, resolver, seen, errors):
    """Return an AttachedCollisionObject of a file's robot state in message form, or None."""
    where = 'robot_state.attached_collision_objects[%d]' % index
    if not isinstance(item, dict) or not isinstance(item.get('object'), dict):
        errors.append('%s: %s.object: expected a mapping' % (path, where))
        return None
    link = item.get('link_name')
    touch = item.get('touch_links', []) or []
    if not isinstance(link, str) or not link.strip() or not isinstance(touch, list) or \
            not all(isinstance(name, str) for name in touch):
        errors.append('%s: %s: link_name must be a name and touch_links a list of names'
                      % (path, where))
        return None
    found = _object(item['object'], path, resolver, '', seen, errors)
    if found is None:
        return None
    return {'link_name': link.strip(), 'object': found, 'touch_links': list(touch)}


def planning_scene_message(scene_files):
    """Return the moveit_msgs/PlanningScene diff that adds every object of ``scene_files``."""
    from moveit_msgs.msg import AttachedCollisionObject, PlanningScene
    message = PlanningScene(is_diff=True)
    message.robot_state.is_diff = True
    message.world.collision_objects = [collision_object_message(found)
                                       for found in scene_files.objects]
    message.robot_state.attached_collision_objects = [
        AttachedCollisionObject(link_name=held['link_name'],
                                object=collision_object_message(held['object']),
                                touch_links=held['touch_links'])
        for held in scene_files.attached]
    return message


def collision_object_message(found):
    """Return the moveit_msgs/CollisionObject of one ``message_form`` dict."""
    from geometry_msgs.msg import Point, Point32
    from moveit_msgs.msg import CollisionObject
    from shape_msgs.msg import Mesh, MeshTriangle, Plane, SolidPrimitive
    message = CollisionObject(id=found['id'])
    message.header.frame_id = found['header']['frame_id']
    message.operation = bytes([found['operation']])
    message.pose = _pose(found['pose'])
    for primitive in found['primitives']:
        shape = SolidPrimitive(type=primitive['type'], dimensions=primitive['dimensions'])
        shape.polygon.points = [Point32(**point)
                                for point in primitive.get('polygon', {}).get('points', [])]
        message.primitives.append(shape)
    for mesh in found['meshes']:
        message.meshes.append(Mesh(
            vertices=[Point(x=float(x), y=float(y), z=float(z)) for x, y, z in mesh['vertices']],
            triangles=[MeshTriangle(vertex_indices=[int(i) for i in triangle])
                       for triangle in mesh['triangles']]))
    message.planes = [Plane(coef=plane['coef']) for plane in found['planes']]
    for field in ('primitive_poses', 'mesh_poses', 'plane_poses'):
        setattr(message, field, [_pose(pose) for pose in found[field]])
    return message


def _pose(form):
    from geometry_msgs.msg import Pose
    pose = Pose()
    for axis in 'xyz':
        setattr(pose.position, axis, form['position'][axis])
    for axis in 'xyzw':
        setattr(pose.orientation, axis, form['orientation'][axis])
    return pose


def _node():
    """Build the node: read the files; publish once a subscriber matches, and on request."""
    from moveit_msgs.msg import PlanningScene
    from gjk_ros.ros.qos import LATCHED_QOS
    from rcl_interfaces.msg import ParameterDescriptor
    from rclpy.event_handler import PublisherEventCallbacks
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from std_srvs.srv import Trigger

    node = Node(NODE_NAME)
    read_only = ParameterDescriptor(read_only=True)
    files = node.declare_parameter('scene_files', Parameter.Type.STRING_ARRAY,
                                   read_only).value or []
    frame_id = node.declare_parameter('frame_id', '', read_only).value
    topic = node.declare_parameter('topic', DEFAULT_TOPIC, read_only).value
    on_subscribe = node.declare_parameter('republish_on_subscribe', False, read_only).value
    files = [path for path in files if path]
    logger = node.get_logger()
    if not files:
        logger.warning('scene_files is empty: nothing to publish')
    loaded = load_scene_files(files, frame_id)
    for error in loaded.errors:
        logger.error(error)
    message = planning_scene_message(loaded)
    published = []  # why each publication so far was made

    def publish(why):
        publisher.publish(message)
        published.append(why)
        summary = '%d objects and %d attached objects from %d file(s) on %s (%d error(s)), ' \
            '%s, to %d subscriber(s)' % (len(loaded.objects), len(loaded.attached), len(files),
                                         publisher.topic_name, len(loaded.errors), why,
                                         publisher.get_subscription_count())
        logger.info(summary)
        return summary

    def on_matched(info):
        if info.current_count_change > 0 and not published:
            publish('once a subscriber matched')
        elif info.current_count_change > 0 and on_subscribe:
            publish('for a subscriber that joined (republish_on_subscribe)')

    def on_request(request, response):
        response.message, response.success = publish('on request'), True
        return response

    publisher = node.create_publisher(PlanningScene, topic, LATCHED_QOS,
                                      event_callbacks=PublisherEventCallbacks(
                                          matched=on_matched))
    node.create_service(Trigger, '~/publish', on_request)
    return node


def main(args=None):
    """Run the node until Ctrl-C or shutdown; returns the exit code."""
    import rclpy
    from rclpy.executors import ExternalShutdownException
    rclpy.init(args=args)
    node = None
    try:
        node = _node()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
