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

import shutil

import pytest


@pytest.mark.linter
@pytest.mark.xmllint
@pytest.mark.skipif(
    shutil.which('xmllint') is None,
    reason="the 'xmllint' program is missing (Debian/Ubuntu: apt-get install libxml2-utils)")
def test_xmllint():
    # Imported here, not at module level: see test_copyright.py.
    main = pytest.importorskip('ament_xmllint.main',
                               reason='ament_xmllint is not installed').main
    rc = main(argv=[])
    assert rc == 0, 'Found errors'
