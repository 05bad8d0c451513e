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
Timed distance methods: gjk_ros in several configurations and its peers.

Every method answers the same scene: for each step, the signed distance of every pair. What is
timed is one step of the whole scene (all pairs) with ``time.perf_counter_ns``; the per-query
time is that divided by the number of pairs. Pose objects (coal/fcl transforms, MuJoCo
kinematics) are prepared before the clock starts, so every method is timed on the query alone
plus its Python call. Batch methods (PairSet) pay one Python call per step, per-call methods one
per pair; `call_floor_ns` measures what an empty Python loop of the same shape costs.

Every `Method.run_once` starts from cold caches; bench/run.py discards a warm-up run (numba
compilation, allocations), repeats the timed runs and reports per-step medians.
"""

from dataclasses import dataclass, field
import time

import numpy

try:
    import coal
except ImportError:  # peers are optional: the report says which ones were missing
    coal = None
try:
    import fcl
except ImportError:
    fcl = None
try:
    import mujoco
except ImportError:
    mujoco = None

# MuJoCo's mj_geomDistance returns distmax for pairs farther apart; keep it far above any scene.
MUJOCO_DISTMAX = 1.0e3


def import_core():
    """
    Import gjk_ros.core, or explain why it cannot be used.

    Returns
    -------
    tuple of (module or None, str)
        The module and an empty string, or None and the error message.

    """
    try:
        from gjk_ros import core
    except Exception as error:  # noqa: B902 - any failure means "not usable"; report it
        return None, '%s: %s' % (type(error).__name__, error)
    return core, ''


@dataclass
class Run:
    """
    Answers and timings of one method on one scene.

    Attributes
    ----------
    times_ns : numpy.ndarray
        (reps, steps) time per query of each step, nanoseconds.
    distance : numpy.ndarray
        (steps, pairs) signed distances (from the last repetition).
    witness_a, witness_b, normal : numpy.ndarray or None
        (steps, pairs, 3) when the method reports them.
    status : numpy.ndarray or None
        (steps, pairs) gjk_ros status codes.
    counters : dict
        Name -> (steps, pairs) int arrays (gjk_ros only).

    """

    times_ns: numpy.ndarray
    distance: numpy.ndarray
    witness_a: object = None
    witness_b: object = None
    normal: object = None
    status: object = None
    counters: dict = field(default_factory=dict)


class Method:
    """
    Base class: a named way of answering the distance queries of a scene.

    Subclasses set the class attributes and implement `build` and `run_once`.
    """

    name = ''
    label = ''
    family = ''
    batch = False
    tracked = True

    def build(self, points):
        """
        Prepare the method's own objects for a list of body-frame point sets (not timed).

        Parameters
        ----------
        points : list of numpy.ndarray
            (n, 3) vertices of every body; bodies 2k and 2k + 1 form pair k.

        """
        raise NotImplementedError

    def run_once(self, scene, record):
        """
        Answer the whole scene once, from cold caches.

        Parameters
        ----------
        scene : bench.scenes.Scene
            Bodies must be those given to `build`.
        record : Run or None
            Where to store the answers (None: only time).

        Returns
        -------
        numpy.ndarray
            (steps,) time per query of each step, nanoseconds.

        """
        raise NotImplementedError


class GjkBatch(Method):
    """gjk_ros PairSet: all pairs of a step in one compiled call."""

    family = 'gjk_ros'
    batch = True

    def __init__(self, core, hill_climb=True, tracking=True):
        """
        Choose the configuration.

        Parameters
        ----------
        core : module
            gjk_ros.core.
        hill_climb, tracking : bool
            PairSet options.

        """
        self.core = core
        self.hill_climb = hill_climb
        self.tracked = tracking
        self.name = 'gjk_batch_%s_%s' % ('track' if tracking else 'cold',
                                         'hc' if hill_climb else 'nohc')
        self.label = 'gjk_ros PairSet, %s, %s' % (
            'tracked' if tracking else 'no tracking',
            'hill climbing' if hill_climb else 'brute-force support')
        self.pair_set = None

    def build(self, points):
        """Make the ConvexPolytopes and the PairSet."""
        self.build_from_polytopes([self.core.ConvexPolytope.from_points(p) for p in points])

    def build_from_polytopes(self, bodies):
        """
        Make the PairSet from ready ConvexPolytopes (shared by the gjk_ros methods).

        Parameters
        ----------
        bodies : list of ConvexPolytope
            Bodies 2k and 2k + 1 form pair k.

        """
        first = 2 * numpy.arange(len(bodies) // 2)
        self.pair_set = self.core.PairSet(bodies, numpy.column_stack([first, first + 1]),
                                          hill_climb=self.hill_climb, tracking=self.tracked)

    def run_once(self, scene, record):
        """Update the PairSet once per step; per-query time = step time / pairs."""
        pair_set = self.pair_set
        pair_set.reset_cache()
        poses = [numpy.ascontiguousarray(step_poses) for step_poses in scene.poses]
        times = numpy.empty(len(poses))
        for step, step_poses in enumerate(poses):
            start = time.perf_counter_ns()
            pair_set.update(step_poses)
            times[step] = time.perf_counter_ns() - start
            if record is not None:
                self.store(record, step)
        return times / scene.spec.num_pairs

    def store(self, record, step):
        """Copy the PairSet's answers of one step into the record (not timed)."""
        steps, pairs = record.distance.shape
        pair_set = self.pair_set
        if record.witness_a is None:
            record.witness_a = numpy.full((steps, pairs, 3), numpy.nan)
            record.witness_b = numpy.full((steps, pairs, 3), numpy.nan)
            record.normal = numpy.full((steps, pairs, 3), numpy.nan)
            record.status = numpy.zeros((steps, pairs), dtype=int)
            for key in COUNTERS:
                record.counters[key] = numpy.zeros((steps, pairs), dtype=int)
        record.distance[step] = pair_set.distance
        record.witness_a[step] = pair_set.witness_a
        record.witness_b[step] = pair_set.witness_b
        record.normal[step] = pair_set.normal
        record.status[step] = pair_set.status
        for key in COUNTERS:
            record.counters[key][step] = getattr(pair_set, key)


COUNTERS = ('iterations', 'support_calls', 'hill_climb_steps', 'epa_iterations')


class GjkCall(Method):
    """gjk_ros signed_distance, one Python call per pair, with or without a SimplexCache."""

    family = 'gjk_ros'

    def __init__(self, core, tracking=True):
        """
        Choose the configuration.

        Parameters
        ----------
        core : module
            gjk_ros.core.
        tracking : bool
            Keep one SimplexCache per pair (else every call is cold, cache=None).

        """
        self.core = core
        self.tracked = tracking
        self.name = 'gjk_call_%s' % ('track' if tracking else 'cold')
        self.label = 'gjk_ros signed_distance per call, %s' % (
            'SimplexCache' if tracking else 'no cache')
        self.bodies = []

    def build(self, points):
        """Make the ConvexPolytopes."""
        self.build_from_polytopes([self.core.ConvexPolytope.from_points(p) for p in points])

    def build_from_polytopes(self, bodies):
        """
        Use ready ConvexPolytopes (shared by the gjk_ros methods).

        Parameters
        ----------
        bodies : list of ConvexPolytope
            Bodies 2k and 2k + 1 form pair k.

        """
        self.bodies = list(bodies)

    def run_once(self, scene, record):
        """Call signed_distance for every pair of every step."""
        signed_distance = self.core.signed_distance
        num_pairs = scene.spec.num_pairs
        bodies_a, bodies_b = self.bodies[0::2], self.bodies[1::2]
        if self.tracked:
            caches = [self.core.SimplexCache() for _ in range(num_pairs)]
        else:
            caches = [None] * num_pairs
        times = numpy.empty(scene.spec.steps)
        results = [None] * num_pairs
        pair_range = range(num_pairs)
        for step, step_poses in enumerate(scene.poses):
            poses_a, poses_b = list(step_poses[0::2]), list(step_poses[1::2])
            start = time.perf_counter_ns()
            for k in pair_range:
                results[k] = signed_distance(bodies_a[k], poses_a[k], bodies_b[k], poses_b[k],
                                             caches[k])
            times[step] = time.perf_counter_ns() - start
            if record is not None:
                record.distance[step] = [result.distance for result in results]
        return times / num_pairs


class CoalCall(Method):
    """coal ComputeDistance functor per pair, with or without its cached GJK guess."""

    family = 'coal'

    def __init__(self, warm=True):
        """
        Choose the configuration.

        Parameters
        ----------
        warm : bool
            gjk_initial_guess = CachedGuess, and request.updateGuess(result) after every call
            (coal's documented warm start: previous separating vector and support vertices).

        """
        self.tracked = warm
        self.name = 'coal_%s' % ('warm' if warm else 'cold')
        self.label = 'coal ComputeDistance, %s' % (
            'CachedGuess + updateGuess' if warm else 'DefaultGuess')
        self.functors = []
        self.shapes = []
        self.prepared = (None, None)

    def build(self, points):
        """Make coal convex hulls (ConvexBase.convexHull, with vertex neighbours)."""
        shapes = []
        for body in points:
            vector = coal.StdVec_Vec3s()
            vector.extend(list(numpy.asarray(body, dtype=float)))
            shapes.append(coal.ConvexBase.convexHull(vector, False, ''))
        self.build_from_shapes(shapes)

    def build_from_shapes(self, shapes):
        """
        Use ready coal shapes (shared by the warm and cold configurations).

        Parameters
        ----------
        shapes : list of coal.ConvexBase
            Bodies 2k and 2k + 1 form pair k.

        """
        self.prepared = (None, None)
        self.shapes = list(shapes)
        self.functors = [coal.ComputeDistance(self.shapes[2 * k], self.shapes[2 * k + 1])
                         for k in range(len(shapes) // 2)]

    def scene_transforms(self, scene):
        """
        Return coal transforms of every body at every step, made once per scene (not timed).

        Parameters
        ----------
        scene : bench.scenes.Scene
            The scene.

        Returns
        -------
        list of list of coal.Transform3s
            [step][body].

        """
        if self.prepared[0] is not scene:
            self.prepared = (scene, [[coal.Transform3s(pose[:3, :3].copy(), pose[:3, 3].copy())
                                      for pose in step_poses] for step_poses in scene.poses])
        return self.prepared[1]

    def requests(self, num_pairs):
        """Return fresh per-pair requests and results (a cold start for every pair)."""
        requests = []
        for _ in range(num_pairs):
            request = coal.DistanceRequest()
            request.enable_signed_distance = True
            if self.tracked:
                request.gjk_initial_guess = coal.GJKInitialGuess.CachedGuess
            requests.append(request)
        return requests, [coal.DistanceResult() for _ in range(num_pairs)]

    def run_once(self, scene, record):
        """Call the functor for every pair of every step."""
        num_pairs = scene.spec.num_pairs
        requests, results = self.requests(num_pairs)
        transforms = self.scene_transforms(scene)
        functors = self.functors
        distances = [0.0] * num_pairs
        times = numpy.empty(scene.spec.steps)
        pair_range = range(num_pairs)
        for step, step_transforms in enumerate(transforms):
            tf_a, tf_b = step_transforms[0::2], step_transforms[1::2]
            start = time.perf_counter_ns()
            # A DistanceResult keeps the minimum over calls (it accumulates over BVH leaves),
            # so it must be cleared before every query or penetrating answers come out stale.
            if self.tracked:
                for k in pair_range:
                    results[k].clear()
                    distances[k] = functors[k](tf_a[k], tf_b[k], requests[k], results[k])
                    requests[k].updateGuess(results[k])
            else:
                for k in pair_range:
                    results[k].clear()
                    distances[k] = functors[k](tf_a[k], tf_b[k], requests[k], results[k])
            times[step] = time.perf_counter_ns() - start
            if record is not None:
                record.distance[step] = distances
        return times / num_pairs


class FclCall(Method):
    """python-fcl distance with enable_signed_distance (no warm start in its API)."""

    family = 'fcl'
    tracked = False
    name = 'fcl'
    label = 'python-fcl distance (signed, libccd GJK/EPA)'

    def __init__(self):
        """Start empty."""
        self.objects = []
        self.prepared = (None, None)

    def build(self, points):
        """Make fcl.Convex shapes from scipy hull triangles."""
        from scipy.spatial import ConvexHull
        self.objects = []
        self.prepared = (None, None)
        for body in points:
            body = numpy.asarray(body, dtype=float)
            triangles = ConvexHull(body).simplices
            faces = numpy.column_stack([numpy.full(len(triangles), 3), triangles]).ravel()
            shape = fcl.Convex(body, len(triangles), faces)
            self.objects.append(fcl.CollisionObject(shape, fcl.Transform()))

    def set_poses(self, scene, step):
        """Move every object to its pose at a step (not timed)."""
        if self.prepared[0] is not scene:
            self.prepared = (scene, [[fcl.Transform(pose[:3, :3], pose[:3, 3])
                                      for pose in step_poses] for step_poses in scene.poses])
        for obj, transform in zip(self.objects, self.prepared[1][step]):
            obj.setTransform(transform)

    def run_once(self, scene, record):
        """Call fcl.distance for every pair of every step."""
        num_pairs = scene.spec.num_pairs
        request = fcl.DistanceRequest(enable_nearest_points=False, enable_signed_distance=True)
        objects_a, objects_b = self.objects[0::2], self.objects[1::2]
        distance = fcl.distance
        distances = [0.0] * num_pairs
        times = numpy.empty(scene.spec.steps)
        pair_range = range(num_pairs)
        for step in range(scene.spec.steps):
            self.set_poses(scene, step)
            start = time.perf_counter_ns()
            for k in pair_range:
                distances[k] = distance(objects_a[k], objects_b[k], request)
            times[step] = time.perf_counter_ns() - start
            if record is not None:
                record.distance[step] = distances
        return times / num_pairs

    def collide_depths(self, scene):
        """
        Return -penetration_depth from fcl.collide (default request) for every query.

        Parameters
        ----------
        scene : bench.scenes.Scene
            The scene.

        Returns
        -------
        numpy.ndarray
            (steps, pairs): minus the reported depth where fcl reports a collision, else NaN.

        """
        request = fcl.CollisionRequest(enable_contact=True, num_max_contacts=1)
        depths = numpy.full((scene.spec.steps, scene.spec.num_pairs), numpy.nan)
        for step in range(scene.spec.steps):
            self.set_poses(scene, step)
            for k in range(scene.spec.num_pairs):
                result = fcl.CollisionResult()
                fcl.collide(self.objects[2 * k], self.objects[2 * k + 1], request, result)
                if result.contacts:
                    depths[step, k] = -max(c.penetration_depth for c in result.contacts)
        return depths


class MujocoCall(Method):
    """MuJoCo mj_geomDistance per pair (its own GJK/EPA, float32 mesh vertices)."""

    family = 'mujoco'
    tracked = False
    name = 'mujoco'
    label = 'MuJoCo mj_geomDistance (native GJK/EPA)'

    def __init__(self):
        """Start empty."""
        self.model = None
        self.data = None
        self.prepared = (None, None)

    def build(self, points):
        """
        Compile one model: a free body with one mesh geom per body, and an explicit contact pair.

        Geoms get contype = conaffinity = 0 so mj_collision only tests the listed pairs (pairs of
        different scenes share space).
        """
        assets, bodies, contacts = [], [], []
        for index, body in enumerate(points):
            vertex = ' '.join('%.17g' % value for value in numpy.asarray(body, float).ravel())
            assets.append('<mesh name="m%d" vertex="%s"/>' % (index, vertex))
            bodies.append('<body name="b%d"><freejoint/><geom name="g%d" type="mesh" mesh="m%d"'
                          ' contype="0" conaffinity="0"/></body>' % (index, index, index))
        for k in range(len(points) // 2):
            contacts.append('<pair geom1="g%d" geom2="g%d"/>' % (2 * k, 2 * k + 1))
        xml = ('<mujoco><option gravity="0 0 0"/><asset>%s</asset><worldbody>%s</worldbody>'
               '<contact>%s</contact></mujoco>' % (''.join(assets), ''.join(bodies),
                                                   ''.join(contacts)))
        self.model = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)
        self.prepared = (None, None)

    def set_poses(self, scene, step):
        """Write every free joint at a step and run forward kinematics (not timed)."""
        if self.prepared[0] is not scene:
            qpos = numpy.empty((scene.spec.steps, len(scene.points), 7))
            for step in range(scene.spec.steps):
                for body in range(len(scene.points)):
                    rigid = scene.poses[step, body]
                    qpos[step, body, :3] = rigid[:3, 3]
                    mujoco.mju_mat2Quat(qpos[step, body, 3:],
                                        numpy.ascontiguousarray(rigid[:3, :3]).ravel())
            self.prepared = (scene, qpos.reshape(scene.spec.steps, -1))
        self.data.qpos[:] = self.prepared[1][step]
        mujoco.mj_kinematics(self.model, self.data)

    def run_once(self, scene, record):
        """Call mj_geomDistance for every pair of every step."""
        model, data = self.model, self.data
        num_pairs = scene.spec.num_pairs
        geom_distance = mujoco.mj_geomDistance
        distances = [0.0] * num_pairs
        times = numpy.empty(scene.spec.steps)
        pair_range = range(num_pairs)
        for step in range(scene.spec.steps):
            self.set_poses(scene, step)
            start = time.perf_counter_ns()
            for k in pair_range:
                distances[k] = geom_distance(model, data, 2 * k, 2 * k + 1, MUJOCO_DISTMAX, None)
            times[step] = time.perf_counter_ns() - start
            if record is not None:
                record.distance[step] = distances
        return times / num_pairs

    def collision_depths(self, scene):
        """
        Return the most negative mj_collision contact distance of every query.

        Parameters
        ----------
        scene : bench.scenes.Scene
            The scene.

        Returns
        -------
        numpy.ndarray
            (steps, pairs): the deepest contact's dist where MuJoCo reports contacts, else NaN.

        """
        depths = numpy.full((scene.spec.steps, scene.spec.num_pairs), numpy.nan)
        for step in range(scene.spec.steps):
            self.set_poses(scene, step)
            mujoco.mj_collision(self.model, self.data)
            for index in range(self.data.ncon):
                contact = self.data.contact[index]
                pair = int(min(contact.geom1, contact.geom2)) // 2
                if numpy.isnan(depths[step, pair]) or contact.dist < depths[step, pair]:
                    depths[step, pair] = contact.dist
        return depths

    def geom_distances(self, scene, ccd_iterations):
        """
        Return mj_geomDistance of every query with a different iteration cap (not timed).

        Parameters
        ----------
        scene : bench.scenes.Scene
            The scene.
        ccd_iterations : int
            Cap for GJK and EPA (the model option is restored afterwards).

        Returns
        -------
        numpy.ndarray
            (steps, pairs) signed distances.

        """
        default = int(self.model.opt.ccd_iterations)
        self.model.opt.ccd_iterations = ccd_iterations
        distances = numpy.full((scene.spec.steps, scene.spec.num_pairs), numpy.nan)
        try:
            for step in range(scene.spec.steps):
                self.set_poses(scene, step)
                for k in range(scene.spec.num_pairs):
                    distances[step, k] = mujoco.mj_geomDistance(
                        self.model, self.data, 2 * k, 2 * k + 1, MUJOCO_DISTMAX, None)
        finally:
            self.model.opt.ccd_iterations = default
        return distances

    def iteration_caps(self):
        """
        Return the model options that cap MuJoCo's convex collision iterations.

        Returns
        -------
        dict
            ccd_iterations, ccd_tolerance and whether the native (non-libccd) solver is on.

        """
        option = mujoco.MjModel.from_xml_string('<mujoco/>').opt
        native = not (option.disableflags & int(mujoco.mjtDisableBit.mjDSBL_NATIVECCD))
        return {'ccd_iterations': int(option.ccd_iterations),
                'ccd_tolerance': float(option.ccd_tolerance),
                'native_ccd': bool(native)}


def coal_defaults():
    """
    Return coal's default GJK/EPA caps (from a default DistanceRequest).

    Returns
    -------
    dict
        gjk_max_iterations, gjk_tolerance, epa_max_iterations, epa_tolerance.

    """
    request = coal.DistanceRequest()
    return {key: getattr(request, key) for key in
            ('gjk_max_iterations', 'gjk_tolerance', 'epa_max_iterations', 'epa_tolerance')}


def call_floor_ns(num_pairs=100, repeats=200):
    """
    Measure the cost of an empty per-pair Python loop calling a 5-argument function.

    Parameters
    ----------
    num_pairs : int
        Loop length.
    repeats : int
        Repetitions (the median is taken).

    Returns
    -------
    float
        Nanoseconds per iteration.

    """
    def noop(a, b, c, d, e):
        return a

    args = [object()] * num_pairs
    results = [None] * num_pairs
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for k in range(num_pairs):
            results[k] = noop(args[k], args[k], args[k], args[k], args[k])
        samples.append((time.perf_counter_ns() - start) / num_pairs)
    return float(numpy.median(samples))


def available_methods(core):
    """
    Return every method that can run here, and why the others cannot.

    Parameters
    ----------
    core : module or None
        gjk_ros.core, or None when it cannot be imported.

    Returns
    -------
    tuple of (list of Method, dict)
        The methods and a name -> reason map of the missing ones.

    """
    methods, missing = [], {}
    if core is not None:
        methods += [GjkBatch(core, True, True), GjkBatch(core, False, True),
                    GjkBatch(core, True, False), GjkBatch(core, False, False),
                    GjkCall(core, True), GjkCall(core, False)]
    else:
        missing['gjk_ros'] = 'gjk_ros.core not importable'
    if coal is not None:
        methods += [CoalCall(True), CoalCall(False)]
    else:
        missing['coal'] = 'not installed'
    if fcl is not None:
        methods.append(FclCall())
    else:
        missing['fcl'] = 'not installed'
    if mujoco is not None:
        methods.append(MujocoCall())
    else:
        missing['mujoco'] = 'not installed'
    return methods, missing


def median_ns(function, repeats=200):
    """
    Return the median time of a call, in nanoseconds.

    Parameters
    ----------
    function : callable
        Called without arguments.
    repeats : int
        Number of timed calls (after one untimed call).

    Returns
    -------
    float
        Median nanoseconds per call.

    """
    function()
    samples = numpy.empty(repeats)
    for index in range(repeats):
        start = time.perf_counter_ns()
        function()
        samples[index] = time.perf_counter_ns() - start
    return float(numpy.median(samples))


def profile_overheads(core, num_pairs):
    """
    Measure fixed costs that are not geometry, to explain the timings.

    Parameters
    ----------
    core : module or None
        gjk_ros.core.
    num_pairs : int
        Pairs of the PairSet used for the batch overhead.

    Returns
    -------
    dict
        python_loop_ns (per iteration of an empty per-pair loop), and where available
        pairset_update_inactive_ns (one update with every pair inactive: the Python and
        dispatch cost of a batch), signed_distance_points_ns (a call on two single points),
        coal_spheres_ns (coal's functor on two spheres) and mujoco_spheres_ns.

    """
    profile = {'python_loop_ns': call_floor_ns(num_pairs)}
    if core is not None:
        point = core.ConvexPolytope.from_points([[0.0, 0.0, 0.0]])
        bodies = [point] * (2 * num_pairs)
        first = 2 * numpy.arange(num_pairs)
        pair_set = core.PairSet(bodies, numpy.column_stack([first, first + 1]))
        poses = numpy.tile(numpy.eye(4), (2 * num_pairs, 1, 1))
        poses[1::2, 0, 3] = 1.0
        inactive = numpy.zeros(num_pairs, dtype=bool)
        profile['pairset_update_inactive_ns'] = median_ns(
            lambda: pair_set.update(poses, active=inactive))
        profile['pairset_update_points_ns'] = median_ns(lambda: pair_set.update(poses))
        pose_a, pose_b = poses[0], poses[1]
        profile['signed_distance_points_ns'] = median_ns(
            lambda: core.signed_distance(point, pose_a, point, pose_b))
    if coal is not None:
        functor = coal.ComputeDistance(coal.Sphere(0.5), coal.Sphere(0.5))
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        tf_a = coal.Transform3s()
        tf_b = coal.Transform3s(numpy.eye(3), numpy.array([2.0, 0.0, 0.0]))

        def coal_query():
            result.clear()
            return functor(tf_a, tf_b, request, result)

        profile['coal_spheres_ns'] = median_ns(coal_query)
    if mujoco is not None:
        model = mujoco.MjModel.from_xml_string(
            '<mujoco><worldbody><geom type="sphere" size="0.5"/>'
            '<geom type="sphere" size="0.5" pos="2 0 0"/></worldbody></mujoco>')
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        profile['mujoco_spheres_ns'] = median_ns(
            lambda: mujoco.mj_geomDistance(model, data, 0, 1, MUJOCO_DISTMAX, None))
    return profile
