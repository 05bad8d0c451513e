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
Serialized ``tf2_msgs/msg/TFMessage`` (CDR, as a raw subscription receives it) to arrays.

rclpy's conversion of a 50-transform message costs more than a millisecond and a field-by-field
Python reader about 0.4 ms, which at 1 kHz ``/tf`` is most of a core. Here one compiled call
(``nogil``: the executor's other threads run meanwhile) walks the message and fills arrays:
stamps (int ns), the 7 values of each transform and the offsets of its two frame ids. The
frame ids become ``str`` only when they differ from the previous message's at the same index
(a TF publisher sends the same frames in the same order every time), which the kernel checks
byte for byte: a usual message costs no Python per transform.

Every length is checked against the bytes that are there (the sequence count, each string's
length, each field's end); a malformed or truncated message raises ``ValueError`` saying what is
wrong, never reads out of bounds, and never costs more work than its size.

Where the kernel is cached: numba's own cache (``cache=True``: ``__pycache__`` next to this
file, or the user-wide numba cache for a read-only install), not the core's digest folder
(``gjk_ros/core/_jit.py``). That folder is keyed by a digest of the core's sources and exists
because core kernels inline code from other files, which numba's per-file stamp does not see.
This kernel calls nothing outside this file, so numba's stamp (this file's path, size and
modification time) is exact for it; and a ROS-side kernel in the core's digest would make every
edit here recompile the geometry kernels. A missing cache costs one compilation of a few
seconds at the node's first ``/tf`` message; ``warm_up`` does it at configure instead.
"""

import numba
import numpy

__all__ = ['decode_tf_message', 'TfBatch', 'TfDecoder', 'warm_up']

NS_PER_S = 1_000_000_000
# The fewest bytes one serialized TransformStamped takes: stamp 8, two string lengths 8 and their
# NULs 2, alignment, 7 doubles 56. A sequence count beyond body / this is a lie.
MIN_TRANSFORM_BYTES = 80
# Kernel outcomes (0 is success).
_ERRORS = {
    1: 'sequence of %(count)d transforms in %(size)d bytes',
    2: 'truncated',
    3: 'bad string length',
}


@numba.njit(cache=True, nogil=True, error_model='numpy')
def _align(offset, alignment):
    return (offset + alignment - 1) & ~(alignment - 1)


@numba.njit(cache=True, nogil=True, error_model='numpy')
def _read_string(raw, words, offset, size):
    """(start, length without the NUL, next offset), or length -1 when malformed."""
    offset = _align(offset, 4)
    if offset + 4 > size:
        return 0, -2, offset
    length = numpy.int64(words[offset // 4])
    offset += 4
    if length == 0 or offset + length > size:
        return 0, -3, offset
    return offset, length - 1, offset + length


@numba.njit(cache=True, nogil=True, error_model='numpy')
def _same_bytes(raw, start, length, previous, previous_start, previous_length):
    if length != previous_length:
        return False
    for index in range(length):
        if raw[start + index] != previous[previous_start + index]:
            return False
    return True


@numba.njit(cache=True, nogil=True, error_model='numpy')
def _decode(raw, words, doubles, size, stamps, values, names, previous, previous_names):
    """
    Fill ``stamps``, ``values`` and ``names`` from a CDR body of ``size`` bytes.

    ``raw`` is the body as bytes, ``words`` and ``doubles`` the same bytes as native uint32 and
    float64 (CDR aligns each to its size from the body's start). ``names`` rows: parent start,
    parent length, child start, child length, and 1 when both equal the ``previous`` body's
    names at that row (``previous_names``, as many rows as it had).

    Returns
    -------
    tuple of (int, int)
        (error code, count): error 0 and the number of transforms, or the code of ``_ERRORS``.

    """
    if size < 4:
        return 2, 0
    count = numpy.int64(words[0])
    if count * MIN_TRANSFORM_BYTES > size:
        return 1, count
    offset = 4
    for index in range(count):
        offset = _align(offset, 4)
        if offset + 8 > size:
            return 2, index
        sec = numpy.int64(words[offset // 4])
        if sec >= 2 ** 31:  # int32 on the wire
            sec -= 2 ** 32
        stamps[index] = sec * NS_PER_S + numpy.int64(words[offset // 4 + 1])
        parent, parent_length, offset = _read_string(raw, words, offset + 8, size)
        if parent_length < 0:
            return -parent_length, index
        child, child_length, offset = _read_string(raw, words, offset, size)
        if child_length < 0:
            return -child_length, index
        offset = _align(offset, 8)
        if offset + 56 > size:
            return 2, index
        first = offset // 8
        for column in range(7):
            values[index, column] = doubles[first + column]
        offset += 56
        names[index, 0], names[index, 1] = parent, parent_length
        names[index, 2], names[index, 3] = child, child_length
        same = index < previous_names.shape[0]
        if same:
            same = (_same_bytes(raw, parent, parent_length, previous, previous_names[index, 0],
                                previous_names[index, 1]) and
                    _same_bytes(raw, child, child_length, previous, previous_names[index, 2],
                                previous_names[index, 3]))
        names[index, 4] = 1 if same else 0
    return 0, count


class TfBatch:
    """
    The transforms of one ``/tf`` or ``/tf_static`` message, as arrays.

    Attributes
    ----------
    parents, children : list of str
        ``header.frame_id`` and ``child_frame_id`` of each transform, as sent.
    stamps : (n,) int64
        ``header.stamp`` in ns.
    values : (n, 7) float64
        x, y, z, qx, qy, qz, qw as sent.

    Indexing gives the (parent, child, stamp, values) tuple of one transform.

    """

    __slots__ = ('parents', 'children', 'stamps', 'values')

    def __init__(self, parents, children, stamps, values):
        self.parents, self.children = parents, children
        self.stamps, self.values = stamps, values

    @classmethod
    def from_entries(cls, entries):
        """Build a batch from (parent, child, stamp ns, 7 values) tuples."""
        entries = list(entries)
        return cls([entry[0] for entry in entries], [entry[1] for entry in entries],
                   numpy.array([entry[2] for entry in entries], dtype=numpy.int64),
                   numpy.array([entry[3] for entry in entries],
                               dtype=numpy.float64).reshape(len(entries), 7))

    def __len__(self):
        return len(self.parents)

    def subset(self, rows):
        """Return the batch of the transforms at ``rows`` (a list of indices), in that order."""
        return TfBatch([self.parents[row] for row in rows], [self.children[row] for row in rows],
                       self.stamps[rows], self.values[rows])

    def __getitem__(self, index):
        return (self.parents[index], self.children[index], int(self.stamps[index]),
                tuple(self.values[index].tolist()))


_NO_NAMES = numpy.zeros((0, 5), dtype=numpy.int64)
_NO_BYTES = numpy.zeros(0, dtype=numpy.uint8)


class TfDecoder:
    """
    Decode one topic's messages, reusing the frame ids of the message before.

    One per topic (its messages repeat each other's frame ids); not shared between threads.
    """

    def __init__(self):
        self._previous = _NO_BYTES
        self._previous_names = _NO_NAMES
        self._parents, self._children = [], []

    def decode(self, data):
        """
        Return the ``TfBatch`` of serialized bytes.

        Raises
        ------
        ValueError
            Truncated or malformed data.

        """
        if len(data) < 8:
            raise ValueError('shorter than a CDR header and a sequence length')
        size = len(data) - 4
        # An aligned copy of the body, padded to whole doubles: the kernel reads the same bytes
        # as bytes, uint32 and float64 (a CDR body aligns each field to its size).
        raw = numpy.zeros((size + 7) // 8 * 8, dtype=numpy.uint8)
        raw[:size] = numpy.frombuffer(data, dtype=numpy.uint8, offset=4)
        words, doubles = raw.view(numpy.uint32), raw.view(numpy.float64)
        if data[1] == 0x00:  # CDR big endian: every multi-byte field swapped to native
            words, doubles = words.byteswap(), doubles.byteswap()
        capacity = min(int(words[0]), size // MIN_TRANSFORM_BYTES + 1)
        stamps = numpy.empty(capacity, dtype=numpy.int64)
        values = numpy.empty((capacity, 7), dtype=numpy.float64)
        names = numpy.empty((capacity, 5), dtype=numpy.int64)
        error, count = _decode(raw, words, doubles, size, stamps, values, names,
                               self._previous, self._previous_names)
        if error:
            raise ValueError(_ERRORS[error] % {'count': count, 'size': size})
        names = names[:count]
        self._parents, self._children = self._frame_ids(raw, names)
        self._previous, self._previous_names = raw, names
        return TfBatch(self._parents, self._children, stamps[:count], values[:count])

    def _frame_ids(self, raw, names):
        """Return the frame ids as str; the previous message's where they are equal."""
        count = len(names)
        if count and names[:, 4].all() and count == len(self._parents):
            return self._parents, self._children
        parents, children = [], []
        reuse = names[:, 4].tolist()
        rows = names[:, :4].tolist()
        for index, (same, (parent, parent_length, child, child_length)) in \
                enumerate(zip(reuse, rows)):
            if same and index < len(self._parents):
                parents.append(self._parents[index])
                children.append(self._children[index])
                continue
            parents.append(raw[parent:parent + parent_length].tobytes().decode(
                'utf-8', 'replace'))
            children.append(raw[child:child + child_length].tobytes().decode('utf-8', 'replace'))
        return parents, children


def decode_tf_message(data):
    """``TfDecoder().decode(data)``: one message, nothing reused."""
    return TfDecoder().decode(data)


def warm_up():
    """Compile (or load from the cache) the kernel, so the first message does not wait."""
    decode_tf_message(b'\x00\x01\x00\x00\x00\x00\x00\x00')
