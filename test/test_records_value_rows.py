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

"""The records' value fields gathered in one step are those read field by field."""

from gjk_ros.ros.compute.pairs import VALUE_FIELDS, value_rows
from gjk_ros.ros.records import new_records
import numpy
import pytest


@pytest.mark.parametrize('count', [0, 1, 7, 300])
def test_value_rows_are_the_fields_in_order(count):
    rng = numpy.random.default_rng(count)
    records = new_records(count)
    for name in VALUE_FIELDS:
        records[name] = rng.normal(size=count)
    rows = numpy.sort(rng.choice(count, count // 2, replace=False)) if count else \
        numpy.zeros(0, numpy.int64)
    expected = numpy.stack([records[name][rows] for name in VALUE_FIELDS], axis=1)
    gathered = value_rows(records, rows)
    assert gathered.shape == (len(rows), len(VALUE_FIELDS))
    numpy.testing.assert_array_equal(gathered, expected)
