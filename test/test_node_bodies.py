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

"""Node bookkeeping: bodies and their pieces, bounded names, the problem log."""


from component_fakes import RecordingLogger
from gjk_ros.core import ConvexPolytope
from gjk_ros.models import CollisionPiece
from gjk_ros.ros.compute.bodies import BodyRegistry, LINK, NameRegistry, OBSTACLE
from gjk_ros.ros.inputs.sources.base import PieceKey
from gjk_ros.ros.problems import ProblemLog
import numpy


def piece(body, half=0.1, x=0.0, frame='world'):
    origin = numpy.eye(4)
    origin[0, 3] = x
    return CollisionPiece(body, frame, origin, ConvexPolytope.box([half] * 3), 'box')


def key(source, *item):
    return PieceKey(source, item)


def test_moving_piece_keeps_its_uid_and_the_layout():
    bodies = BodyRegistry()
    bodies.set_piece(OBSTACLE, 'a/0', key('obstacles', 'a', 0), piece('a/0'))
    (first,) = bodies.pieces(OBSTACLE, 'a/0')
    version = bodies.version
    bodies.set_piece(OBSTACLE, 'a/0', key('obstacles', 'a', 0), piece('a/0', x=1.0))
    (moved,) = bodies.pieces(OBSTACLE, 'a/0')
    assert moved.uid == first.uid and moved.piece.shape is first.piece.shape
    assert moved.piece.origin[0, 3] == 1.0
    assert bodies.version == version
    bodies.set_piece(OBSTACLE, 'a/0', key('obstacles', 'a', 0), piece('a/0', half=0.2))
    (grown,) = bodies.pieces(OBSTACLE, 'a/0')
    assert grown.uid != first.uid and bodies.version > version


def test_errors_make_a_body_and_clear_with_good_geometry():
    bodies = BodyRegistry()
    bodies.set_error(OBSTACLE, 'b/1', key('obstacles', 'b', 1), 'empty mesh')
    assert bodies.names(OBSTACLE) == ['b/1']
    assert bodies.all_errors() == [(OBSTACLE, 'b/1', 'empty mesh')]
    version = bodies.version
    bodies.set_error(OBSTACLE, 'b/1', key('obstacles', 'b', 1), 'empty mesh')
    assert bodies.version == version  # the same problem again changes nothing
    bodies.set_piece(OBSTACLE, 'b/1', key('obstacles', 'b', 1), piece('b/1'))
    assert bodies.all_errors() == [] and len(bodies.pieces(OBSTACLE, 'b/1')) == 1
    assert bodies.remove(OBSTACLE, 'b/1', key('obstacles', 'b', 1))
    assert bodies.names(OBSTACLE) == []


def test_a_body_is_assembled_from_several_sources():
    bodies = BodyRegistry()
    bodies.set_piece(LINK, 'hand', key('robot_description', 'piece', 'hand', 0), piece('hand'))
    bodies.set_piece(LINK, 'hand', key('links', 'tool', 0), piece('hand', x=0.2))
    bodies.set_piece(OBSTACLE, 'c/0', key('obstacles', 'c', 0), piece('c/0'))
    assert bodies.keys(LINK, 'links') == [('hand', key('links', 'tool', 0))]
    assert bodies.remove(LINK, 'hand', key('links', 'tool', 0))
    assert [found for found, _ in bodies.keyed_pieces(LINK, 'hand')] == [
        key('robot_description', 'piece', 'hand', 0)]


def test_names_are_bounded_and_ids_never_reused():
    names = NameRegistry()
    assert names.id_of(LINK, 'arm') == (0, True)
    assert names.id_of(OBSTACLE, 'x/1') == (0, True)
    assert names.id_of(LINK, 'hand') == (1, True)
    assert names.id_of(LINK, 'arm') == (0, False)
    assert names.as_dict() == {'links': {'0': 'arm', '1': 'hand'}, 'obstacles': {'0': 'x/1'}}
    # Churn: bodies come and go; the table holds only the live ones and ids only grow.
    for step in range(1, 1001):
        names.keep_only(OBSTACLE, set())
        assert names.id_of(OBSTACLE, 'churn/%d' % step) == (step, True)
    assert names.as_dict()['obstacles'] == {'1000': 'churn/1000'}
    assert names.keep_only(LINK, {'hand'}) and names.as_dict()['links'] == {'1': 'hand'}
    assert names.id_of(LINK, 'arm') == (2, True)  # back, with a new id


def test_name_ids_wrap_without_colliding():
    names = NameRegistry()
    names._next[OBSTACLE] = 2**32 - 1
    assert names.id_of(OBSTACLE, 'a') == (2**32 - 1, True)
    names._next[OBSTACLE] = 2**32 - 1  # pretend every id was handed out once
    assert names.id_of(OBSTACLE, 'b') == (0, True)  # wrapped, skipping the live 2**32 - 1


def test_pending_geometry_makes_the_body_pending_until_built():
    bodies = BodyRegistry()
    pending = key('obstacles', 'p', 0)
    bodies.set_pending(OBSTACLE, 'p/0', pending)
    assert bodies.names(OBSTACLE) == ['p/0'] and bodies.is_pending(OBSTACLE, 'p/0')
    assert bodies.pieces(OBSTACLE, 'p/0') == [] and bodies.pending_count() == 1
    version = bodies.version
    bodies.set_piece(OBSTACLE, 'p/0', pending, piece('p/0'))
    assert not bodies.is_pending(OBSTACLE, 'p/0') and bodies.version > version
    bodies.set_pending(OBSTACLE, 'p/0', pending)  # new geometry: the old piece is dropped
    assert bodies.pieces(OBSTACLE, 'p/0') == [] and bodies.is_pending(OBSTACLE, 'p/0')
    bodies.set_error(OBSTACLE, 'p/0', pending, 'too big')
    assert not bodies.is_pending(OBSTACLE, 'p/0') and bodies.errors(OBSTACLE, 'p/0')
    assert bodies.remove(OBSTACLE, 'p/0', pending) and bodies.names(OBSTACLE) == []


def test_problem_log_reports_once_and_on_recovery():
    logger = RecordingLogger()
    problems = ProblemLog(logger)
    for _ in range(100):
        problems.report(('frame', 'x'), 'x is stale', level='warning')
    problems.resolve(('frame', 'x'), 'x recovered')
    problems.resolve(('frame', 'x'), 'x recovered')
    problems.report(('body', 'a'), 'a rejected')
    problems.report(('body', 'b'), 'b rejected')
    problems.keep_only(('body',), {('body', 'b')}, lambda key: '%s cleared' % key[1])
    assert logger.lines == [('warning', 'x is stale'), ('info', 'x recovered'),
                            ('error', 'a rejected'), ('error', 'b rejected'),
                            ('info', 'a cleared')]
    assert problems.is_active(('body', 'b')) and not problems.is_active(('body', 'a'))


def test_problem_log_is_bounded():
    logger = RecordingLogger()
    problems = ProblemLog(logger, capacity=10)
    for index in range(10_000):
        problems.report(('body', index), 'body %d rejected' % index)
    assert len(problems.active()) == 10 and problems.suppressed == 9990
    assert len(logger.lines) == 11  # ten problems and one "log is full" line
    problems.keep_only(('body',), set())
    assert problems.active() == {} and problems.suppressed == 0
