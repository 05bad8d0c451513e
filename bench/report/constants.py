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

"""Scenes, methods and thresholds the report reads, and the project's targets."""

# Scenes the figures and the headline table are drawn from.
FIG34 = {'distance': 'gap3', 'rotation_deg': 0.0}
HEADLINE = {'distance': 'gap1', 'rotation_deg': 6.0}
MAIN = 'gjk_batch_track_hc'
# Targets of the project: tracked batch time, ratio to coal, flatness over sizes, iterations.
TARGET_BATCH_NS = 500.0
TARGET_COAL_RATIO = 3.0
TARGET_FLATNESS = 1.5
TARGET_ITERATIONS = 2.0
EXACT_DEPTH = 1e-9
PAPER_FIG4_FLATNESS = 42.0 / 32.0

PEER_ORDER = ('gjk_batch_track_hc', 'gjk_call_track', 'coal_warm', 'coal_cold', 'fcl', 'mujoco')
SHORT = {
    'gjk_batch_track_hc': 'gjk batch tracked',
    'gjk_batch_track_nohc': 'gjk batch tracked, no HC',
    'gjk_batch_cold_hc': 'gjk batch cold',
    'gjk_batch_cold_nohc': 'gjk batch cold, no HC',
    'gjk_call_track': 'gjk call tracked',
    'gjk_call_cold': 'gjk call cold',
    'coal_warm': 'coal warm',
    'coal_cold': 'coal cold',
    'fcl': 'fcl',
    'mujoco': 'mujoco',
}
