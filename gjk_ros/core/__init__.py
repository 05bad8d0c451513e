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
Geometry core of gjk_ros: Cameron's enhanced GJK with tracking and exact MTD.

Numpy, scipy (hull construction) and numba only; importing this package never imports ROS.

Conventions, stated once for the whole core
-------------------------------------------
- A Minkowski point is ``w = a - b`` (a on A, b on B); GJK finds the point ``v`` of A - B
  closest to the origin.
- ``normal`` is a unit vector from A towards B (the outward normal of A - B at its boundary point
  closest to the origin, which is ``-v / |v|`` when apart).
- ``distance`` is signed, the minimum translational distance (MTD, Cameron 1997 section 2):
  > 0 apart, 0 touching, < 0 overlapping (minus the penetration depth).
- ``witness_b - witness_a == distance * normal``, and translating B by ``-distance * normal``
  brings the bodies into contact.
- Poses are (4, 4) homogeneous body-to-world transforms; results are in the world frame.

References
----------
(GJK88) Gilbert, Johnson, Keerthi, "A fast procedure for computing the distance between complex
objects in three-dimensional space", IEEE Trans. Robotics & Automation 4(2), 1988.
(Cam97) Cameron, "Enhancing GJK: computing minimum and penetration distances between convex
polyhedra", ICRA 1997 (hill climbing 3.2, tracking 4, penetration 5).
(MPB17) Montanari, Petrinic, Barbieri, "Improving the GJK algorithm for faster and more reliable
distance queries between convex objects", ACM TOG 36(3), 2017 (signed-volume sub-algorithm).
(vdB01) van den Bergen, "Proximity queries and penetration depth computation on 3D game objects",
GDC 2001 (EPA).

"""

from .cache import SimplexCache
from .distance import DistanceQuery, signed_distance
from .mesh_body import MeshBody, MeshDistance
from .pairset import PairSet
from .polytope import ConvexPolytope
from .status import DistanceResult, Status

__all__ = ['ConvexPolytope', 'SimplexCache', 'DistanceResult', 'Status', 'signed_distance',
           'DistanceQuery', 'PairSet', 'MeshBody', 'MeshDistance']
