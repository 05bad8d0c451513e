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
The node's opt-in convex decomposition: hull first, CoACD parts when ready.

The bookkeeping is tested with a stand-in worker; the node is tested through its topics with
an L-shaped mesh whose parts are put in the on-disk cache first (a stand-in for CoACD, in this
process), so the node's worker reads them back: that is the cached path a restart takes, and
it keeps the test independent of CoACD's speed. A second case lets real CoACD run past a tiny
``decomposition_timeout`` and checks the body keeps its hull and says why.
"""

from types import SimpleNamespace

from gjk_ros.core import ConvexPolytope
from gjk_ros.models import decomposition
from gjk_ros.ros import PairStatus
from gjk_ros.ros.inputs.decomposer import MeshDecomposer
from gjk_ros.ros.inputs.jobs import DecomposeJob, JobResult
from gjk_ros.ros.inputs.limits import IngestLimits
from node_harness import (box_urdf, find_record, marker, NodeProcess, Parameter, Scene,
                          STARTUP_TIMEOUT, wait_until)
import numpy
import pytest

L_URI_PATTERN = '*l_shape.stl'
NOTCH = (0.15, 0.0, 0.15)   # outside the L, inside its hull
CUBE_HALF = 0.01
EXACT_TO_L = 0.1 - CUBE_HALF  # from the notch cube to the nearer face of either leg


class FakeWorker:
    """Records what is submitted; the test delivers results to the mailbox of the job."""

    def __init__(self, limits):
        self.limits, self.submitted, self.mailbox, self.closed = limits, [], None, False

    def submit(self, job, mailbox):
        self.submitted.append(job)
        self.mailbox = mailbox
        return len(self.submitted)

    def deliver(self, job, value=None, error=None):
        self.mailbox.put(JobResult(job, 0, value, None if error is None
                                   else SimpleNamespace(reason=error)))

    def set_limits(self, limits):
        self.limits = limits

    def close(self):
        self.closed = True


def piece(uri, scale=(1.0, 1.0, 1.0)):
    return SimpleNamespace(mesh=(uri, scale) if uri else ())


def test_decomposer_queues_each_wanted_mesh_once_and_takes_its_parts():
    workers = []
    decomposer = MeshDecomposer(lambda limits: workers.append(FakeWorker(limits)) or workers[-1])
    decomposer.configure((), 0.05, '', IngestLimits())
    assert workers == []  # no pattern: no worker process
    decomposer.configure(('*shelf*',), 0.05, '/tmp/cache', IngestLimits(job_timeout_s=60.0))
    (worker,) = workers
    assert worker.limits.job_timeout_s == 60.0
    shelf, scale = 'package://cell/shelf.stl', (1.0, 1.0, 1.0)
    assert decomposer.parts_for(piece(shelf)) is None
    assert decomposer.parts_for(piece(shelf)) is None
    assert decomposer.parts_for(piece('package://cell/table.stl')) is None
    assert decomposer.parts_for(piece('')) is None  # convex or not from a file
    assert worker.submitted == [DecomposeJob(shelf, scale, 0.05, '/tmp/cache')]
    assert decomposer.waiting() == [shelf]
    version = decomposer.version
    parts = (ConvexPolytope.box([0.1, 0.1, 0.1]),)
    worker.deliver(worker.submitted[0], parts)
    assert decomposer.poll() and decomposer.version > version
    assert decomposer.parts_for(piece(shelf)) is parts
    assert decomposer.waiting() == [] and len(worker.submitted) == 1


def test_decomposer_failure_keeps_the_hull_and_new_settings_retry():
    workers = []
    decomposer = MeshDecomposer(lambda limits: workers.append(FakeWorker(limits)) or workers[-1])
    decomposer.configure(('*',), 0.05, '', IngestLimits())
    uri, scale = 'file:///m.stl', (2.0, 2.0, 2.0)
    decomposer.parts_for(piece(uri, scale))
    workers[0].deliver(workers[0].submitted[0], error='took longer than x')
    decomposer.poll()
    assert decomposer.failures() == {uri: 'took longer than x'}
    assert decomposer.parts_for(piece(uri, scale)) is None
    assert len(workers[0].submitted) == 1  # a failure is not retried with the same settings
    decomposer.configure(('*',), 0.1, '', IngestLimits())
    assert decomposer.failures() == {}
    decomposer.parts_for(piece(uri, scale))
    assert len(workers[0].submitted) == 2 and len(workers) == 1
    decomposer.close()
    assert workers[0].closed


# Through the node ------------------------------------------------------------------------------

def l_mesh():
    import trimesh
    leg = trimesh.creation.box([0.4, 0.1, 0.1])
    leg.apply_translation((0.15, 0.0, 0.0))
    arm = trimesh.creation.box([0.1, 0.1, 0.4])
    arm.apply_translation((0.0, 0.0, 0.15))
    return trimesh.util.concatenate([leg, arm])


def cache_leg_parts(path, cache_dir, monkeypatch):
    """Put the L's two boxes in the part cache, as CoACD would have (keyed as the node keys)."""
    import trimesh
    loaded = trimesh.load(str(path), force='mesh', process=False)
    vertices = numpy.asarray(loaded.vertices, dtype=numpy.float64)
    # STL repeats corners per triangle: the leg's 12 triangles come first, then the arm's.
    leg, arm = vertices[:36], vertices[36:]
    monkeypatch.setattr(decomposition, '_run_coacd', lambda *_: [leg, arm])
    decomposition.decompose_mesh(vertices, numpy.asarray(loaded.faces),
                                 {'threshold': 0.05}, cache_dir)


def l_urdf(path):
    return box_urdf('bracketbot', {'bracket': [
        ('<mesh filename="file://%s"/>' % path, (), (0.0, 0.0, 0.0))]})


def notch_distance(scene):
    record = find_record(scene.records() or [], 'bracket', 'probe/0')
    if record is None or record.status != PairStatus.VALID:
        return None
    return record.distance


def start_l_scene(scene, node, path):
    scene.send_static_tf('world', 'bracket')
    scene.send_urdf(l_urdf(path))
    scene.wait_for_subscribers('obstacles', node_process=node)
    scene.send_markers([marker('probe', 0, xyz=NOTCH, scale=(2 * CUBE_HALF,) * 3)])
    wait_until(lambda: notch_distance(scene) is not None, STARTUP_TIMEOUT,
               'the notch pair measured', node_process=node)


@pytest.mark.ros
def test_node_measures_the_hull_then_the_parts(ros_env, tmp_path, monkeypatch):
    path, cache_dir = tmp_path / 'l_shape.stl', tmp_path / 'cache'
    l_mesh().export(str(path))
    cache_leg_parts(path, str(cache_dir), monkeypatch)
    parameters = {'rate_hz': 20.0, 'decomposition_cache': str(cache_dir),
                  'hull_warning_threshold': 0.001}
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_l_scene(scene, node, path)
        # The hull fills the notch: the probe is inside it, the warning names the mesh.
        assert notch_distance(scene) < 0.0
        wait_until(lambda: node.lines_with('bracket', 'not convex', 'beyond the mesh surface'),
                   what='the hull warning')
        (answer,) = scene.set_node_parameters([Parameter('decompose_meshes',
                                                         value=[L_URI_PATTERN])])
        assert answer.successful, answer.reason
        wait_until(lambda: notch_distance(scene) is not None and
                   abs(notch_distance(scene) - EXACT_TO_L) < 1e-6,
                   what='the distance to the parts', node_process=node)
        wait_until(lambda: any(status.name.endswith(': decomposition') and
                               status.message == 'all parts ready'
                               for status in scene.diagnostic_statuses().values()),
                   what='the decomposition diagnostics')


@pytest.mark.ros
def test_node_keeps_the_hull_when_decomposition_times_out(ros_env, tmp_path):
    pytest.importorskip('coacd')
    path = tmp_path / 'l_shape.stl'
    l_mesh().export(str(path))
    parameters = {'rate_hz': 20.0, 'decomposition_cache': str(tmp_path / 'cache'),
                  'decompose_meshes': [L_URI_PATTERN], 'decomposition_timeout': 0.05}
    with NodeProcess(ros_env, tmp_path, parameters) as node, \
            Scene(int(ros_env['ROS_DOMAIN_ID'])) as scene:
        start_l_scene(scene, node, path)
        wait_until(lambda: node.lines_with('l_shape.stl', 'keeps its hull',
                                           'decomposition_timeout'),
                   STARTUP_TIMEOUT, 'the timeout named in the log', node_process=node)
        assert notch_distance(scene) < 0.0  # still the hull: conservative
        assert not (tmp_path / 'cache').exists() or not any((tmp_path / 'cache').iterdir())
