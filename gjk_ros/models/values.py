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

"""Checked reading of numbers from URDF attributes, parameter values and messages."""

import numbers

from gjk_ros.core.rigid import MAX_COORDINATE
import numpy as np

# Largest magnitude accepted for any number entering geometry (metres, or a scale factor):
# beyond it, float arithmetic on a distance keeps no useful precision, so it is a mistake.
MAX_MAGNITUDE = MAX_COORDINATE
# Longest echo of a bad value in an error message (a value may be a list of 200,000 numbers).
_SHOWN_CHARACTERS = 80


def parse_numbers(value, name: str, count: int | None = None) -> np.ndarray:
    """
    Read finite numbers from a whitespace-separated string or a sequence.

    Parameters
    ----------
    value : str, real number or sequence of real numbers
        ``'0.1 0.2 0.3'`` (URDF style), ``[0.1, 0.2, 0.3]`` (parameter style) or ``0.1``.
    name : str
        What the numbers are, for the error message.
    count : int or None
        Required number of values; None accepts any non-zero number of values.

    Returns
    -------
    numpy.ndarray
        (count,) float64.

    Raises
    ------
    ValueError
        Wrong count, something that is not a number, NaN or infinity.

    """
    numbers_read = _read_numbers(value, name)
    if numbers_read.size == 0 or (count is not None and numbers_read.size != count):
        wanted = f'{count} numbers' if count is not None else 'at least one number'
        raise ValueError(f'{name} must be {wanted}, got {_shown(value)}')
    if not np.isfinite(numbers_read).all():
        raise ValueError(f'{name} must be finite, got {_shown(value)}')
    if np.abs(numbers_read).max() > MAX_MAGNITUDE:
        raise ValueError(f'{name} must be within +-{MAX_MAGNITUDE:g}, got {_shown(value)}')
    return numbers_read


def parse_positive(value, name: str) -> float:
    """
    Read one finite number > 0 (a radius, a length, an edge).

    Raises
    ------
    ValueError
        Not a number, not finite, or <= 0.

    """
    number = float(parse_numbers(value, name, count=1)[0])
    if number <= 0.0:
        raise ValueError(f'{name} must be > 0, got {value!r}')
    return number


def check_positive(values: np.ndarray, name: str) -> np.ndarray:
    """
    Check that every entry of an already parsed vector is > 0.

    Raises
    ------
    ValueError
        Some entry is zero or negative.

    """
    if np.any(values <= 0.0):
        raise ValueError(f'{name} must all be > 0, got {_format(values)}')
    return values


def _read_numbers(value, name: str) -> np.ndarray:
    if isinstance(value, str):
        tokens = value.split()
    elif _is_real(value):
        tokens = [value]
    elif isinstance(value, (list, tuple, np.ndarray)):
        tokens = list(np.ravel(np.asarray(value, dtype=object)))
        if not all(_is_real(token) for token in tokens):
            raise ValueError(f'{name} must contain only numbers, got {_shown(value)}')
    else:
        raise ValueError(f'{name} must be a number or a list of numbers, got {_shown(value)}')
    try:
        return np.array([float(token) for token in tokens], dtype=np.float64)
    except (ValueError, OverflowError):
        # OverflowError: an integer too large for a float (a YAML literal of 400 digits).
        raise ValueError(f'{name} must contain only numbers, got {_shown(value)}') from None


def _is_real(token) -> bool:
    # bool is an int subclass, but True as a radius is a mistake, not 1.0.
    return isinstance(token, numbers.Real) and not isinstance(token, (bool, np.bool_))


def _shown(value) -> str:
    text = repr(value) if not isinstance(value, (list, tuple, np.ndarray)) or \
        len(value) <= 16 else f'{type(value).__name__} of {len(value)} values'
    return text if len(text) <= _SHOWN_CHARACTERS else text[:_SHOWN_CHARACTERS - 3] + '...'


def _format(values: np.ndarray) -> str:
    return ' '.join(f'{v:g}' for v in values)
