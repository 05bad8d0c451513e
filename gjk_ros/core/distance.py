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

"""The single-pair entry point, ``signed_distance``, and pose validation."""

import threading

import numpy as np

from ._jit import frozen, njit
from .cache import SimplexCache
from .polytope import ConvexPolytope
from .query import (_valid_pose, MODE_HILL_CLIMB, MODE_TRACKING, out_buffer, out_views,
                    query_posed, scratch_buffer)
from .status import DistanceResult, Status
from .tolerances import ROTATION_TOLERANCE

__all__ = ['signed_distance', 'DistanceQuery', 'check_poses', 'first_invalid_pose']


_local = threading.local()


@njit
def first_invalid_pose(poses, tolerance):
    """
    Index of the first pose that is not a finite rigid transform, or -1.

    Compiled so that validating every pose of every update costs about 10 ns per body (the
    numpy version cost 30 us per update, more than the tracked queries of 100 pairs).
    """
    for b in range(poses.shape[0]):
        if not _valid_pose(poses[b], tolerance):
            return b
    return -1


def check_poses(poses, name, shape=None):
    """
    Validate homogeneous rigid transforms; return them as a float64 C array.

    ``poses`` is (..., 4, 4), or exactly ``shape`` when given. The test is the compiled
    ``first_invalid_pose`` (one definition of a valid pose, cheap enough for every update); only
    when it fails are the poses checked one by one to name the offenders. Raises ValueError
    naming ``name``.
    """
    try:
        array = np.ascontiguousarray(poses, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f'{name}: not an array of numbers ({error})') from None
    if shape is not None and array.shape != shape:
        raise ValueError(f'{name}: expected shape {shape}, got {array.shape}')
    if array.shape[-2:] != (4, 4):
        raise ValueError(f'{name}: expected (4, 4) homogeneous transforms, got {array.shape}')
    stack = array.reshape(-1, 4, 4)
    if first_invalid_pose(stack, ROTATION_TOLERANCE) >= 0:
        bad = [i for i in range(stack.shape[0])
               if first_invalid_pose(stack[i:i + 1], ROTATION_TOLERANCE) >= 0]
        where = '' if array.ndim == 2 else f' at {bad[:10]}'
        raise ValueError(f'{name}: not a finite rigid transform{where} (rotation must be '
                         'orthonormal with determinant +1, last row [0, 0, 0, 1])')
    return array


def _thread_buffers():
    """
    Return the answer buffer and the cold-call cache of this thread, reused by every call.

    A cold query empties and ignores its cache, so a call without a SimplexCache allocates
    none. Per thread, as the answer is read after the kernel returns, when another thread may
    run one.
    """
    buffers = getattr(_local, 'buffers', None)
    if buffers is None:
        out = out_buffer()
        buffers = (out, out_views(out), SimplexCache()._buffer)
        _local.buffers = buffers
    return buffers


def _signature():
    """
    Return the argument types ``query_posed`` is compiled for: what its two callers hand it.

    Bodies are read-only byte buffers; the poses are writeable float64 C (4, 4) arrays, as
    ``numpy.eye(4)`` and a pose computed by numpy are. Any other pose (a list, float32, a
    transposed view, a read-only array) does not match, and is converted by ``_plain_pose``.
    """
    from numba import types
    body, buffer = types.Array(types.uint8, 1, 'C', readonly=True), \
        types.Array(types.uint8, 1, 'C')
    pose = types.Array(types.float64, 2, 'C')
    return (body, body, buffer, buffer, buffer, types.int64, pose, pose)


def _query_kernel():
    """
    Return ``query_posed``, compiled (or loaded from numba's cache) for ``_signature()`` only.

    Any other pose type raises TypeError at once (``_jit.frozen``), so the fast path checks
    nothing in Python (each check of a pose cost about 0.2 us, as much as the tracked query);
    the kernel checks the pose shapes itself. Also allocates the process's single-query
    scratch buffer.
    """
    global _kernel, _scratch
    if _kernel is None:
        _scratch = scratch_buffer()
        _kernel = frozen(query_posed, _signature(), _python_query)
    return _kernel


def _python_query(a, b, cache, out, scratch, mode, pose_a, pose_b):
    """``query_posed`` under NUMBA_DISABLE_JIT: converts the poses first, as numba would."""
    return query_posed(a, b, cache, out, scratch, mode, _plain_pose(pose_a, 'pose_a'),
                       _plain_pose(pose_b, 'pose_b'))


_kernel = _scratch = None


def _plain_pose(pose, name):
    """Return ``pose`` validated as a writeable float64 C (4, 4) array (a copy if needed)."""
    array = check_poses(pose, name, (4, 4))
    return array if array.flags.writeable else array.copy()


def _query(a, b, cache, out, mode, pose_a, pose_b):
    """
    Run ``query_posed`` (``a`` and ``b`` packed bodies); return the distance.

    Raises ValueError naming a pose that is not a finite rigid (4, 4) transform.
    """
    kernel = _kernel or _query_kernel()
    try:
        distance = kernel(a, b, cache, out, _scratch, mode, pose_a, pose_b)
    except TypeError:  # not the compiled pose type (see _query_kernel): convert, then retry
        pose_a, pose_b = _plain_pose(pose_a, 'pose_a'), _plain_pose(pose_b, 'pose_b')
        distance = kernel(a, b, cache, out, _scratch, mode, pose_a, pose_b)
    if distance != distance:  # the kernel's answer to an invalid pose (a query is never NaN)
        check_poses(pose_a, 'pose_a', (4, 4))
        check_poses(pose_b, 'pose_b', (4, 4))
    return distance


def _check_body(body, name):
    if not isinstance(body, ConvexPolytope):
        raise TypeError(f'{name}: expected a ConvexPolytope, got {type(body).__name__}')


_STATUSES = tuple(Status)


def _result(views):
    """Build the DistanceResult of ``out_views`` (one copy; the vectors are views of it)."""
    values, status, counts = views
    row = values[0].copy()
    n = counts[0].tolist()
    result = object.__new__(DistanceResult)
    # The dataclass is frozen: its __init__ sets each field through object.__setattr__, which
    # cost more than the tracked query itself; the fields are the same.
    result.__dict__.update(distance=float(row[0]), witness_a=row[1:4], witness_b=row[4:7],
                           normal=row[7:10], status=_STATUSES[status[0]], iterations=n[0],
                           error_bound=float(row[10]), support_calls=n[1],
                           hill_climb_steps=n[2], epa_iterations=n[3])
    return result


def signed_distance(a, pose_a, b, pose_b, cache=None, *, hill_climb=True):
    """
    Signed distance (the MTD) between two convex bodies.

    Parameters
    ----------
    a, b : ConvexPolytope
        The bodies.
    pose_a, pose_b : (4, 4) float
        Body-to-world homogeneous transforms.
    cache : SimplexCache, optional
        Tracked state of this ordered pair, read and updated (None: a cold start). Reusing it
        over time steps makes a query cost about one GJK iteration (Cameron 1997 section 4).
    hill_climb : bool
        Find support vertices by walking the vertex graph (True) or by scanning all vertices.

    Returns
    -------
    DistanceResult
        Distance, witness points, normal (A to B), status, error bound and counters.

    See Also
    --------
    DistanceQuery : the same query bound to one pair, for a loop (a third of the call's cost).

    """
    _check_body(a, 'a')
    _check_body(b, 'b')
    out, views, cold = _thread_buffers()
    mode = MODE_HILL_CLIMB if hill_climb else 0
    if cache is None:
        state = cold
    else:
        cache._bind(a, b)
        state, mode = cache._buffer, mode | MODE_TRACKING
    _query(a._packed, b._packed, state, out, mode, pose_a, pose_b)
    return _result(views)


class DistanceQuery:
    """
    Signed distance of one ordered pair of bodies, tracked from call to call.

    The single-pair entry point for a loop (a planner, a controller), like coal's
    ``ComputeDistance`` functor: everything but the poses is bound once, a call returns the
    distance as a float, and the rest of the answer (status, witnesses, normal, counters) is
    read from the query afterwards. It keeps its own tracked state and work arrays: use one
    object per pair and per thread.

    Parameters
    ----------
    a, b : ConvexPolytope
        The bodies.
    tracking : bool
        Warm-start each call from the last (Cameron 1997 section 4); False makes every call a
        cold start, with the same answers.
    hill_climb : bool
        As for ``signed_distance``.

    """

    def __init__(self, a, b, *, tracking=True, hill_climb=True):
        """Bind the bodies and allocate this pair's tracked state and answer."""
        _check_body(a, 'a')
        _check_body(b, 'b')
        self._cache = SimplexCache()
        self._out = out_buffer()
        self._views = out_views(self._out)
        self._a, self._b = a._packed, b._packed
        self._mode = (MODE_HILL_CLIMB if hill_climb else 0) | (MODE_TRACKING if tracking else 0)

    def __call__(self, pose_a, pose_b):
        """
        Return the signed distance at these (4, 4) body-to-world poses (see signed_distance).

        Raises ValueError naming a pose that is not a finite rigid transform.
        """
        return _query(self._a, self._b, self._cache._buffer, self._out, self._mode, pose_a,
                      pose_b)

    def result(self):
        """Return the last call's full answer (DistanceResult; status INACTIVE before any)."""
        return _result(self._views)

    @property
    def status(self):
        """Status of the last call (INACTIVE before the first)."""
        return _STATUSES[self._views[1][0]]

    def reset(self):
        """Forget the tracked state: the next call is a cold start."""
        self._cache.reset()
