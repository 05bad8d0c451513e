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

"""Look-ups into the timing rows, CSV writing and the report's number and verdict formats."""

import csv
import math

import numpy


def write_csv(path, rows):
    """Write rows of dicts as CSV (the union of their keys as columns)."""
    columns = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    with open(path, 'w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


class Table:
    """Look-ups into the timing rows of bench.run."""

    def __init__(self, rows):
        """Index the rows by (shape, size, distance, rotation, method)."""
        self.rows = rows
        self.index = {(r['shape'], r['size'], r['distance'], r['rotation_deg'], r['method']): r
                      for r in rows}

    def get(self, method, size, distance, rotation_deg, shape='hull'):
        """Return one row, or None."""
        return self.index.get((shape, size, distance, float(rotation_deg), method))

    def value(self, key, method, size, distance, rotation_deg, shape='hull'):
        """Return one field of one row as a float (NaN when missing)."""
        row = self.get(method, size, distance, rotation_deg, shape)
        if row is None or row.get(key) is None:
            return float('nan')
        return float(row[key])

    def sizes(self, shape='hull'):
        """Return the sizes present, sorted."""
        return sorted({r['size'] for r in self.rows if r['shape'] == shape})

    def methods(self):
        """Return the set of method names present."""
        return {r['method'] for r in self.rows}

    def present(self, methods):
        """Return those of ``methods`` that ran, in the given order."""
        ran = self.methods()
        return [m for m in methods if m in ran]

    def scenes(self, shape='hull'):
        """Return the (distance, rotation) settings present, sorted."""
        return sorted({(r['distance'], r['rotation_deg']) for r in self.rows
                       if r['shape'] == shape})

    def where(self, **conditions):
        """Return the rows matching every condition (field name -> value)."""
        return [r for r in self.rows if all(r.get(k) == v for k, v in conditions.items())]


def size_series(table, key, method, distance, rotation_deg):
    """Return (sizes, values) of one field over the hull sizes, where it is finite."""
    sizes, values = [], []
    for size in table.sizes():
        value = table.value(key, method, size, distance, rotation_deg)
        if math.isfinite(value):
            sizes.append(size)
            values.append(value)
    return sizes, values


def floats(rows, key, keep=math.isfinite):
    """Return one field of the rows as floats, those that ``keep`` accepts."""
    return [float(r[key]) for r in rows if keep(float(r[key]))]


def not_nan(value):
    """Return whether a value is not NaN (infinities count: sci() calls them missing)."""
    return not math.isnan(value)


def finite_median(values):
    """Return the median of the finite values (NaN when there are none)."""
    finite = [v for v in values if math.isfinite(v)]
    return float(numpy.median(finite)) if finite else float('nan')


def us(nanoseconds):
    """Format nanoseconds as microseconds, e.g. '0.420', '4.20', '420'."""
    if nanoseconds is None or not math.isfinite(nanoseconds):
        return 'n/a'
    value = nanoseconds / 1000.0
    return '%.3f' % value if value < 1.0 else '%.2f' % value if value < 100 else '%.0f' % value


def num(value, digits=2):
    """Format a number with ``digits`` decimals ('n/a' for None and NaN)."""
    if value is None or not math.isfinite(value):
        return 'n/a'
    return '%.*f' % (digits, value)


def sci(value):
    """Format an error in scientific notation, e.g. '3.1e-16' ('missing' for infinity)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 'n/a'
    if math.isinf(value):
        return 'missing'
    return '%.1e' % value


def span(values):
    """Format the range of the finite values, e.g. '1.00-1.25'."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 'n/a'
    return '%.2f-%.2f' % (min(finite), max(finite))


def ratios_by_size(items):
    """Format (size, ratio) pairs, e.g. '8: 1.10x, 16: 1.25x'."""
    return ', '.join('%d: %.2fx' % item for item in items)


def verdict(met):
    """Return '**met**', '**not met**' or, for None (could not be measured), '**not measured**'."""
    if met is None:
        return '**not measured**'
    return '**met**' if met else '**not met**'


def bullet(claim, met, details='', note=''):
    """
    Return one claim or target line: '- claim: verdict[note].' and the details after it.

    ``note`` follows the verdict directly (e.g. ' (coal not installed)'); ``details`` are
    whole sentences.
    """
    line = '- %s: %s%s.' % (claim, verdict(met), note)
    return line + ' ' + details if details else line


def markdown_table(header, rows):
    """Return the lines of a Markdown table: the header, its rule and a line per row of cells."""
    return (['| %s |' % ' | '.join(header), '|' + '---|' * len(header)]
            + ['| %s |' % ' | '.join(cells) for cells in rows])
