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
Every numeric constant of the core, with what it means and why it has its value.

Relative tolerances are named ``*_REL`` and multiply a length scale of the query: the sum of the
two bodies' bounding radii (their sweep radii included). Nothing here is compared against bare
machine epsilon on a scale-dependent quantity (libccd#71, Box2D's short-edge regression).
"""

# Two cylinders whose axes agree to this sine are measured in closed form as parallel
# (query._parallel_cylinders_row): treating them so moves a point by at most the sine times the
# body's extent, 1e-12 of the size, well inside the 1e-9 the contract allows. GJK and EPA
# converge slowly there (coincident coaxial cylinders capped EPA at 0.3 % of the depth).
PARALLEL_SINE = 1e-12

# Lower bound of a query's length scale (two points have bounding radii 0). Tolerances are scale
# products as small as (1e-14 scale)^2; with this floor they stay normal floats rather than
# denormals, whose arithmetic is slow on x86.
SCALE_FLOOR = 1e-100

# GJK loop cap. Cameron (gjk.c) notes "in practice we never see more than about 6 iterations"
# for polytopes; smooth bodies (cylinders) converge linearly and may need a few dozen. Hitting
# the cap yields Status.MAX_ITERATIONS with an error bound, never a silent wrong number.
GJK_MAX_ITERATIONS = 128

# Polytopes terminate exactly, when the new support vertex pair is already in the simplex
# (Box2D: "the main termination criteria"). This relative G-test only stops the loop when round-
# off makes further progress meaningless: Cameron's g(v) = v.v - v.w bounds the distance error by
# g / |v|, so g <= 1e-13 |v|^2 means the distance is exact to about 1e-13 relative.
GJK_POLYTOPE_REL = 1e-13

# Smooth bodies (cylinders) never repeat a support point; GJK converges linearly, so we stop when
# the G-test guarantees a relative distance error below 1e-10 and report the bound.
GJK_SMOOTH_REL = 1e-10

# |v| below this fraction of the scale is treated as "the origin lies on the simplex": contact or
# overlap, handed to EPA, which then measures the (possibly zero) depth exactly.
CONTACT_REL = 1e-14

# |signed distance| at or below this fraction of the scale is reported as Status.TOUCHING.
TOUCHING_REL = 1e-12

# EPA's witness points are the closest face's vertices weighted to land on the origin's foot
# point d n (witness_b - witness_a == distance * normal). A face whose own foot point is within
# this fraction of the scale of the closest face's may give them (epa._containing_face), and a
# combination missing it by more is replaced (query._penetration_row). A tenth of the 1e-9 the
# contract allows (docs/contract.md).
WITNESS_REL = 1e-10

# When the foot point lies outside EPA's face (a smooth body's flat facet, wider than the face),
# the witnesses take at most this many Frank-Wolfe steps towards it, each a support call along
# the face normal tilted by FOOT_TILT (radians, about) towards the foot: small enough to stay on
# the facet of a polytope or a cap, and any tilt reaches a cap's rim (epa.epa_cover_foot).
FOOT_STEPS = 32
FOOT_TILT = 1e-6

# EPA terminates when the support value along the closest face normal exceeds the face distance
# by no more than this fraction of the scale. For polytopes the closest face is then a facet of
# the Minkowski difference up to round-off, so the depth is exact; a repeated support vertex is
# the combinatorial form of the same test.
EPA_POLYTOPE_REL = 1e-12

# EPA on smooth bodies converges like GJK: stop at a relative gap of 1e-9.
EPA_SMOOTH_REL = 1e-9

# A new EPA vertex sees a face when it lies above the face plane by more than this fraction of
# the scale; points within it count as coplanar, which keeps the expanded polytope convex up to
# round-off instead of creating slivers.
EPA_VISIBLE_REL = 1e-13

# EPA work arrays are sized up front (no allocation inside the loop, coal's rule): vertices and
# the 2V - 4 faces of a closed triangulated polytope with V vertices.
EPA_MAX_VERTICES = 256
EPA_MAX_FACES = 2 * EPA_MAX_VERTICES - 4

# A tracked penetration polytope is reused only while it has room to grow: past this many
# vertices the next penetrating step rebuilds it from the GJK simplex. Room matters: the polytope
# keeps the region refined in earlier steps, so a pair moving around an overlap needs fewer
# expansions. `python -m bench.epa_tracking` (5 overlapping pairs of 2,048-vertex hulls, CPU time
# per tracked step) gives 9.2 us and 1.4 EPA iterations at 0 deg/step, 40 us at 6 deg/step with
# these caps (2026-11-21). An earlier draw of the same experiment compared caps, before unchanged
# polytopes stopped being re-stored: 128/96 gave 4.3 iterations and 17.2 us at 0 deg/step, 49 us
# at 6; 192/160 gave 2.6 and 18.8 us, 48 us; 256/224 gave 1.4 and 15.1 us, 32 us. The cost is
# memory: about 14 kB of cache per pair at 256 vertices.
EPA_TRACK_MAX_VERTICES = 224

# Below this many vertices a brute-force scan is as fast as walking the adjacency graph (Cameron:
# hill climbing pays off "at around 10 vertices per hull, and important at about 20"). Measured
# with `make bench`: see bench/results/report.md.
HILL_CLIMB_MIN_VERTICES = 16

# Points closer than this fraction of the point set's extent count as one point, and a point set
# whose second (third) principal extent is below this fraction of the first is a segment
# (polygon). Keeping the original coordinates means a 1e-12 flattening error stays unmeasurable.
DEGENERATE_EXTENT_REL = 1e-12

# Rotation blocks of poses must be orthonormal to this accuracy (poses from TF are normalised
# quaternions, good to ~1e-15; 1e-6 only rejects matrices that are not rotations at all).
ROTATION_TOLERANCE = 1e-6
