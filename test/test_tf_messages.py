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
The compiled /tf decoder against a field-by-field reading of the CDR layout, and rclpy's.

Messages are serialized by rclpy's ``serialize_message`` (random frame ids, including non-ASCII
and empty ones, random stamps and values, NaN and infinities), then read whole, truncated at
every length, and with bytes overwritten: the compiled decoder must give exactly what the
reference reader gives, the same error where that one raises, and never crash. The batched
value check is compared bitwise with the one-by-one check.
"""

import math
import struct

from gjk_ros.ros.inputs.tf_buffer import check_batch, check_values, MAX_COORDINATE, TfBuffer
from gjk_ros.ros.inputs.tf_messages import decode_tf_message, TfBatch, TfDecoder
from hypothesis import given, settings, strategies
import numpy
import pytest

serialization = pytest.importorskip('rclpy.serialization')
tf2_msgs = pytest.importorskip('tf2_msgs.msg')
geometry_msgs = pytest.importorskip('geometry_msgs.msg')

S = 1_000_000_000


def reference_decode(data):
    """Read the CDR layout of TFMessage field by field with struct (the specification)."""
    data = bytes(data)
    if len(data) < 8:
        raise ValueError('shorter than a CDR header and a sequence length')
    order = '>' if data[1] == 0x00 else '<'
    body, offset = data[4:], 0

    def read(layout, alignment):
        nonlocal offset
        offset = (offset + alignment - 1) & ~(alignment - 1)
        size = struct.calcsize(order + layout)
        if offset + size > len(body):
            raise ValueError('truncated')
        values = struct.unpack_from(order + layout, body, offset)
        offset += size
        return values

    def string():
        nonlocal offset
        (length,) = read('I', 4)
        if length == 0 or offset + length > len(body):
            raise ValueError('bad string length')
        text = body[offset:offset + length - 1].decode('utf-8', 'replace')
        offset += length
        return text

    (count,) = read('I', 4)
    if count * 80 > len(body):
        raise ValueError('sequence of %d transforms in %d bytes' % (count, len(body)))
    entries = []
    for _ in range(count):
        sec, nanosec = read('iI', 4)
        parent, child = string(), string()
        entries.append((parent, child, sec * S + nanosec, read('7d', 8)))
    return entries


def outcome(decode, data):
    try:
        return [(parent, child, stamp, struct.pack('<7d', *values))  # NaN compared bitwise
                for parent, child, stamp, values in decode(data)]
    except ValueError as error:
        return 'ValueError: %s' % error


floats = strategies.one_of(strategies.floats(allow_nan=True, allow_infinity=True),
                           strategies.floats(-10.0, 10.0))
# rclpy sends a str as a C string: up to its first NUL.
frame_ids = strategies.text(strategies.characters(blacklist_categories=('Cs',),
                                                  blacklist_characters='\x00'), max_size=12)
transforms = strategies.tuples(frame_ids, frame_ids, strategies.integers(-2 ** 31, 2 ** 31 - 1),
                               strategies.integers(0, 2 ** 32 - 1),
                               strategies.lists(floats, min_size=7, max_size=7))


def serialize(entries):
    message = tf2_msgs.TFMessage()
    for parent, child, sec, nanosec, numbers in entries:
        transform = geometry_msgs.TransformStamped()
        transform.header.frame_id, transform.child_frame_id = parent, child
        transform.header.stamp.sec, transform.header.stamp.nanosec = sec, nanosec
        t, q = transform.transform.translation, transform.transform.rotation
        t.x, t.y, t.z, q.x, q.y, q.z, q.w = numbers
        message.transforms.append(transform)
    return serialization.serialize_message(message), message


@settings(max_examples=150, deadline=None)
@given(strategies.lists(transforms, max_size=6), strategies.data())
def test_the_compiled_decoder_reads_what_rclpy_wrote(entries, data):
    serialized, message = serialize(entries)
    decoded = decode_tf_message(serialized)
    assert outcome(lambda _: decoded, None) == outcome(reference_decode, serialized)
    assert [(p, c) for p, c, _, _ in decoded] == \
        [(t.header.frame_id, t.child_frame_id) for t in message.transforms]
    # Truncated anywhere, or with a few bytes overwritten: the same answer or the same error.
    cut = data.draw(strategies.integers(0, len(serialized)))
    assert outcome(decode_tf_message, serialized[:cut]) == \
        outcome(reference_decode, serialized[:cut])
    damaged = bytearray(serialized)
    for _ in range(data.draw(strategies.integers(1, 4))):
        damaged[data.draw(strategies.integers(4, len(damaged) - 1))] = \
            data.draw(strategies.integers(0, 255))
    assert outcome(decode_tf_message, bytes(damaged)) == \
        outcome(reference_decode, bytes(damaged))


def test_every_truncation_of_a_message_gives_the_reference_answer():
    serialized, _ = serialize([('world', 'base', 5, 6, [0.5] * 7),
                               ('base', 'link_\u00e9', 7, 8, [1.0, 2.0, 3.0, 0, 0, 0, 1])])
    for cut in range(len(serialized) + 1):
        assert outcome(decode_tf_message, serialized[:cut]) == \
            outcome(reference_decode, serialized[:cut])


@settings(max_examples=300, deadline=None)
@given(strategies.binary(max_size=400), strategies.sampled_from([b'\x00\x01', b'\x00\x00']))
def test_garbage_gives_the_reference_answer(data, encapsulation):
    message = encapsulation + b'\x00\x00' + data
    assert outcome(decode_tf_message, message) == outcome(reference_decode, message)


def test_a_lying_sequence_length_is_refused_before_any_work():
    with pytest.raises(ValueError, match='sequence of 1000000000 transforms'):
        decode_tf_message(b'\x00\x01\x00\x00' + (10 ** 9).to_bytes(4, 'little'))


def test_big_endian_cdr_is_read():
    body = struct.pack('>I', 1) + struct.pack('>iI', -3, 7)
    for name in (b'world', b'base'):
        body += struct.pack('>I', len(name) + 1) + name + b'\0'
        body += b'\0' * (-len(body) % 4)
    body += b'\0' * (-len(body) % 8) + struct.pack('>7d', *range(7))
    message = b'\x00\x00\x00\x00' + body
    assert decode_tf_message(message)[0] == ('world', 'base', -3 * S + 7,
                                             tuple(float(v) for v in range(7)))
    assert outcome(decode_tf_message, message) == outcome(reference_decode, message)


def test_a_decoder_reuses_frame_ids_only_when_their_bytes_are_equal():
    decoder = TfDecoder()
    first, _ = serialize([('world', 'a', 1, 0, [0.0] * 7), ('a', 'b', 1, 0, [0.0] * 7)])
    second, _ = serialize([('world', 'a', 2, 0, [0.0] * 7), ('a', 'c', 2, 0, [0.0] * 7)])
    third, _ = serialize([('world', 'a', 3, 0, [0.0] * 7)])
    assert decoder.decode(first).children == ['a', 'b']
    assert decoder.decode(second).children == ['a', 'c']
    assert decoder.decode(second).children == ['a', 'c']
    assert decoder.decode(third).children == ['a']
    with pytest.raises(ValueError):
        decoder.decode(first[:-3])
    assert decoder.decode(first).children == ['a', 'b']


def test_a_batch_indexes_as_tuples():
    batch = TfBatch.from_entries([('w', 'a', 5, (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0))])
    assert len(batch) == 1 and batch[0] == ('w', 'a', 5, (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0))
    assert len(TfBatch.from_entries([])) == 0


special = strategies.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1e-160,
                                   1e154, 1e155, MAX_COORDINATE, 1.0000001 * MAX_COORDINATE])


@settings(max_examples=300, deadline=None)
@given(strategies.lists(strategies.lists(strategies.one_of(floats, special), min_size=7,
                                         max_size=7), max_size=8))
def test_the_batched_check_is_bitwise_the_single_one(rows):
    samples, reasons = check_batch(numpy.array(rows, dtype=numpy.float64).reshape(-1, 7))
    for row, sample, reason in zip(rows, samples, reasons):
        expected, why = check_values(tuple(row))
        assert reason == why
        if expected is None:
            assert sample is None
        else:
            assert struct.pack('<7d', *sample) == struct.pack('<7d', *expected)


def test_a_message_inserts_as_its_transforms_one_by_one():
    entries = [('world', 'a', 5 * S, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0)),
               ('/a', 'b', 5 * S, (math.nan,) * 7), ('a', 'a', 5 * S, (0.0,) * 7),
               ('a', 'c', -1, (0.0,) * 6 + (1.0,)), ('', 'd', -1, (0.0,) * 6 + (1.0,)),
               ('world', 'a', 6 * S, (1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))]
    one_by_one, batched = TfBuffer(), TfBuffer()
    outcomes = [one_by_one.insert(*entry, False) for entry in entries]
    refused = batched.insert_message(TfBatch.from_entries(entries), False)
    assert [(p, c) for p, c, _ in refused] == [('a', 'a'), ('a', 'c'), ('', 'd')]
    assert outcomes == ['stored', 'invalid', 'rejected', 'bad stamp', 'rejected', 'stored']
    for frame in 'abcd':
        one, two = one_by_one.lookup('world', frame), batched.lookup('world', frame)
        assert (one.status, one.stamp_ns, one.reason) == (two.status, two.stamp_ns, two.reason)
        assert numpy.array_equal(one.matrix, two.matrix) if one.matrix is not None else \
            two.matrix is None
