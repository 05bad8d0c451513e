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
The two per-cycle passes over a cycle's records, one compiled call each (GIL released).

- ``fold_answers``: each record's status and values from its piece pairs' input states and
  the engine's answer, written into the records' memory in place;
- ``smallest_bound``: the fail-safe minimum's pass, the smallest bound over the records and
  the first record that carries no measurement.

Both take the node's status codes as arguments (tables and codes; the core knows no ROS
status), and the records as views of their memory: float64 words, float32 singles and bytes
of a packed record array with the column of each field. As numpy passes each of them took a
dozen array operations over every record (half a millisecond at 11,000 records); one loop
reads each record once.
"""

import math

import numpy as np

from ._jit import njit

__all__ = ['fold_answers', 'smallest_bound']


@njit(inline=True)
def _worst_input(pair_inputs, start, stop, stale_code, invalid_code):
    """Return (any INVALID, any STALE) over the pair inputs of one record."""
    invalid, stale = False, False
    for p in range(start, stop):
        if pair_inputs[p] == invalid_code:
            invalid = True
        elif pair_inputs[p] == stale_code:
            stale = True
    return invalid, stale


@njit(inline=True)
def _finite_row(rows, i):
    for c in range(rows.shape[1]):
        if not math.isfinite(rows[i, c]):
            return False
    return True


@njit
def fold_answers(state, starts, stops, pair_inputs, input_codes, rows, core_status, measured_table,
                 approximate_table, codes, words, word_columns, row_columns, singles,
                 single_columns, octets, status_byte):
    """
    Write each record's status and values from its pairs' inputs and the engine's answer.

    Parameters
    ----------
    state : (r,) int64
        Each record's own status before any measurement (``codes``: INVALID and PENDING
        override a measurement).
    starts, stops : (r,) int64
        Record i's piece pairs are ``pair_inputs[starts[i]:stops[i]]``.
    pair_inputs : (p,) int
        Each pair's input state.
    input_codes : (2,) int64
        The input states STALE and INVALID.
    rows, core_status : (r, k) float64, (r,) int
        The engine's value row and core status of each record.
    measured_table, approximate_table : (s,) bool
        By core status: carries a measurement; carries a bound (APPROXIMATE).
    codes : (6,) int64
        The record status codes VALID, APPROXIMATE, BEYOND, STALE, INVALID and PENDING, in
        that order.
    words, word_columns, row_columns
        The records as (r, w) float64 words; value field j is ``words[:, word_columns[j]]``,
        taken from ``rows[:, row_columns[j]]`` (NaN where not measured).
    singles, single_columns
        The records as (r, f) float32; ``singles[:, single_columns[j]]`` takes value field j
        rounded to float32 (the x, y, z of the link witness, for RViz).
    octets, status_byte
        The records as (r, itemsize) bytes; the status is the byte ``status_byte``.

    Notes
    -----
    Statuses, worst input first: INVALID (own state, or an INVALID pair input), PENDING, STALE
    (a STALE pair input), BEYOND (known, no answer), VALID or APPROXIMATE (a finite answer);
    an answer with a non-finite value is never published (INVALID).

    """
    valid, approximate, beyond = codes[0], codes[1], codes[2]
    stale_status, invalid_status, pending_status = codes[3], codes[4], codes[5]
    stale_code, invalid_code = input_codes[0], input_codes[1]
    for i in range(state.shape[0]):
        bad_input, stale = _worst_input(pair_inputs, starts[i], stops[i], stale_code,
                                        invalid_code)
        invalid = state[i] == invalid_status or bad_input
        pending = state[i] == pending_status and not invalid
        stale = stale and not invalid and not pending
        known = not invalid and not stale and not pending
        answer = core_status[i]
        answered = known and measured_table[answer]
        measured = answered and _finite_row(rows, i)
        status = invalid_status
        if pending:
            status = pending_status
        elif stale:
            status = stale_status
        elif known and not answered:
            status = beyond
        elif measured:
            status = approximate if approximate_table[answer] else valid
        octets[i, status_byte] = status
        for j in range(word_columns.shape[0]):
            words[i, word_columns[j]] = rows[i, row_columns[j]] if measured else np.nan
        for j in range(single_columns.shape[0]):
            singles[i, single_columns[j]] = np.float32(
                rows[i, row_columns[j]] if measured else np.nan)


@njit
def smallest_bound(octets, status_byte, words, columns, unknown_table, approximate_code,
                   beyond_code, max_distance):
    """
    Return (bound, its record, first unknown record) over a cycle's records.

    ``octets`` and ``words`` are the records as bytes and float64 words, the status the byte
    ``status_byte`` and ``columns`` the words of (distance, error_bound, swept_distance). A
    record's bound is its distance (``distance - error_bound`` when APPROXIMATE,
    ``max_distance`` when BEYOND), or its swept distance where that is lower (a NaN swept
    distance is none). Records whose status ``unknown_table`` marks carry none, nor does a
    record whose own bound is not a number (a measurement without a distance): the first of
    either is returned (-1: none). The smallest bound is that of the first record that has it
    (NaN, -1: no bound).
    """
    distance, error_bound, swept = columns[0], columns[1], columns[2]
    best, row, unknown = np.nan, -1, -1
    for i in range(octets.shape[0]):
        code = octets[i, status_byte]
        if unknown_table[code]:
            if unknown < 0:
                unknown = i
            continue
        bound = words[i, distance]
        if code == approximate_code:
            bound = words[i, distance] - words[i, error_bound]
        elif code == beyond_code:
            bound = max_distance
        if math.isnan(bound):
            if unknown < 0:
                unknown = i
            continue
        if words[i, swept] < bound:
            bound = words[i, swept]
        if row < 0 or bound < best:
            best, row = bound, i
    return best, row, unknown
