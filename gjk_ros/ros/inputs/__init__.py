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
Everything that comes into the node: TF, the sources, and the geometry worker they use.

- ``frames``, ``tf_buffer``: ``/tf`` and ``/tf_static`` read raw into the node's own buffer
  (tf2's semantics), and the poses of the layout's pieces;
- ``timekeeping``: ROS time against the steady clock, integer-nanosecond stamps;
- ``sources/``: one ``Source`` per input kind (robot model, parameter bodies, marker arrays,
  the planning scene, sensor clouds), each answering ``collect`` once per cycle;
- ``ingestion``, ``jobs``, ``geometry_worker``: the geometry worker process, its typed jobs and
  their worker-side handlers; ``limits``: the bounds on every input; ``decomposer``: convex
  parts of meshes; ``model_imports``: the one lock ``gjk_ros.models`` is imported under;
  ``placement``: a marker placed at its stamp.
"""
