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
Flat arrays that hand a set of bodies to the compiled kernels.

A scene is the tuple ``(vertices, vertex_start, offsets, offset_start, indices, index_start,
kinds, params)``: every body's arrays concatenated, body ``i`` owning the slices
``[start[i]:start[i + 1]]``. ``params[i]`` is ``(sweep radius, cylinder radius, cylinder half
length, bounding centre x, y, z, bounding radius)``. A single ``ConvexPolytope`` carries a
one-body scene, so a single query and a batch go through the same compiled code.
"""

import numba
from numba.extending import intrinsic
import numpy as np

from ._jit import njit

__all__ = ['build_scene', 'scene_body', 'scene_geometry', 'layout', 'view', 'numpy_view',
           'pack_body', 'packed_body']


def build_scene(bodies):
    """Concatenate the kernel arrays of a sequence of ConvexPolytope."""
    bodies = list(bodies)
    if not bodies:
        raise ValueError('bodies: a scene needs at least one body')

    def starts(sizes):
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    vertices = np.ascontiguousarray(np.concatenate([b.vertices for b in bodies]))
    offsets = np.ascontiguousarray(np.concatenate([b.neighbor_offsets for b in bodies]))
    indices = np.ascontiguousarray(
        np.concatenate([b.neighbor_indices for b in bodies]).astype(np.int32))
    kinds = np.array([b._kind for b in bodies], dtype=np.int64)
    params = np.array([[b.radius, b.cylinder_radius, b.cylinder_half_length,
                        *b.bounding_center, b.bounding_radius] for b in bodies])
    return (vertices, starts([b.num_vertices for b in bodies]), offsets.astype(np.int32),
            starts([b.neighbor_offsets.size for b in bodies]), indices,
            starts([b.neighbor_indices.size for b in bodies]), kinds, params)


# Fields of a kernel body tuple: where its rows start in the scene arrays, then its scalars.
B_VSTART, B_VCOUNT, B_OSTART, B_ISTART, B_KIND, B_SWEEP, B_CYL_R, B_CYL_H = range(8)
B_CX, B_CY, B_CZ, B_BOUND = 8, 9, 10, 11


@njit(inline=True)
def scene_geometry(scene):
    """Return the arrays the kernels read: (vertices, neighbor offsets, neighbor indices)."""
    return scene[0], scene[2], scene[4]


@njit(inline=True)
def scene_body(scene, i):
    """
    Return the kernel tuple of body ``i``, scalars only.

    The tuple is ``(vertex_start, vertex_count, offset_start, index_start, kind, sweep_radius,
    cylinder_radius, cylinder_half_length, centre_x, centre_y, centre_z, bounding_radius)``.
    Scalars, not array slices: making three array views per body per pair cost more than a
    tracked GJK step (numba reference-counts every view).
    """
    vertex_start, offset_start, index_start, kinds, params = scene[1], scene[3], scene[5], \
        scene[6], scene[7]
    return (vertex_start[i], vertex_start[i + 1] - vertex_start[i], offset_start[i],
            index_start[i], kinds[i], params[i, 0], params[i, 1], params[i, 2], params[i, 3],
            params[i, 4], params[i, 5], params[i, 6])


# Packed buffers ---------------------------------------------------------------------------------
# The single query hands numba a few byte buffers instead of two dozen arrays: numba's dispatch
# costs about 80 ns per array argument (measured 2026-11-22), more than a tracked query. Each
# buffer holds arrays of any dtype one after the other, 8-byte aligned, rebuilt inside the
# kernel as views that cost nothing.

def layout(fields):
    """
    Place arrays one after the other in a byte buffer.

    ``fields`` is a sequence of (dtype, shape). Returns ``((byte_start, shape), ...)`` and the
    buffer's size in bytes; every array starts on an 8-byte boundary.
    """
    starts, total = [], 0
    for dtype, shape in fields:
        starts.append((total, tuple(int(extent) for extent in shape)))
        total += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 8) * 8
    return tuple(starts), total


def numpy_view(buffer, start_shape, dtype):
    """Return the array at ``start_shape`` (from ``layout``) of a byte buffer, as numpy."""
    start, shape = start_shape
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return buffer[start:start + size].view(dtype).reshape(shape)


def _view_typer(typingctx, buffer, start, shape, dtype):
    """
    Type and build ``numpy_view(buffer, (start, shape), dtype)`` as pointer arithmetic.

    The buffer is a 1-d C uint8 array (``layout``), so the view is its data pointer plus
    ``start`` bytes, cast to ``dtype``, with C strides: no check and no call. numba's own
    ``view`` and ``reshape`` call C helpers the optimizer cannot remove (about 45 ns a view;
    unpacking the single query's 33 work arrays that way cost 1.1 us, five times the tracked
    query), while a view made here and not used compiles to nothing.
    """
    from numba.core import cgutils, types
    from numba.core.imputils import impl_ret_borrowed
    from numba.np.arrayobj import make_array, populate_array

    element = dtype.instance_type
    result = types.Array(element, len(shape), 'C', readonly=not buffer.mutable)

    def codegen(context, builder, signature, args):
        buffer_type, start_type, shape_type, _ = signature.args
        source = make_array(buffer_type)(context, builder, args[0])
        extents = [context.cast(builder, value, kind, types.intp) for value, kind in
                   zip(cgutils.unpack_tuple(builder, args[2]), shape_type)]
        itemsize = context.get_constant(
            types.intp, context.get_abi_sizeof(context.get_data_type(element)))
        strides, stride = [], itemsize
        for extent in reversed(extents):
            strides.insert(0, stride)
            stride = builder.mul(stride, extent)
        offset = context.cast(builder, args[1], start_type, types.intp)
        data = builder.bitcast(builder.gep(source.data, [offset]),
                               context.get_data_type(element).as_pointer())
        target = make_array(signature.return_type)(context, builder)
        populate_array(target, data=data, shape=extents, strides=strides, itemsize=itemsize,
                       meminfo=source.meminfo)
        # The view shares the buffer's memory: a borrowed reference (a no-op without NRT).
        return impl_ret_borrowed(context, builder, signature.return_type, target._getvalue())

    return result(buffer, start, shape, dtype), codegen


def _view_python(buffer, start, shape, dtype):
    return numpy_view(buffer, (start, shape), dtype)


_view = _view_python if numba.config.DISABLE_JIT else intrinsic(_view_typer)


@njit(inline=True)
def view(buffer, start_shape, dtype):
    """Return the ``dtype`` array at ``start_shape`` (from ``layout``) of a byte buffer."""
    start, shape = start_shape
    return _view(buffer, start, shape, dtype)


# One body packed for a single query, in one read-only byte buffer: four int32 (vertex, offset
# and index counts, kind), the scene's seven float64 params, then (sized by the header) the
# vertices and the CSR offsets and indices (int32).
(_HEADER, _PARAMS), _VERTICES = layout([(np.int32, (4,)), (np.float64, (7,))])


def pack_body(scene):
    """Return the read-only byte buffer of a one-body scene (see ``packed_body``)."""
    vertices, _, offsets, _, indices, _, kinds, params = scene
    header = np.array([len(vertices), len(offsets), len(indices), kinds[0]], np.int32)
    parts = [header, params[0].astype(np.float64), vertices.astype(np.float64).reshape(-1),
             offsets.astype(np.int32), indices.astype(np.int32)]
    buffer = np.concatenate([part.view(np.uint8) for part in parts])
    buffer.flags.writeable = False
    return buffer


@njit(inline=True)
def packed_body(buffer):
    """Return ``(scene_geometry, scene_body)`` of a body packed by ``pack_body``."""
    header = view(buffer, _HEADER, np.int32)
    params = view(buffer, _PARAMS, np.float64)
    count, offset_count = np.int64(header[0]), np.int64(header[1])
    vertices = view(buffer, (_VERTICES, (count, np.int64(3))), np.float64)
    offset_start = _VERTICES + 3 * 8 * count  # float64 vertices, then int32 from here
    offsets = view(buffer, (offset_start, (offset_count,)), np.int32)
    indices = view(buffer, (offset_start + 4 * offset_count, (np.int64(header[2]),)), np.int32)
    zero = np.int64(0)
    body = (zero, count, zero, zero, np.int64(header[3]), params[0], params[1], params[2],
            params[3], params[4], params[5], params[6])
    return (vertices, offsets, indices), body
