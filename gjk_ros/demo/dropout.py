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
A TF hiccup on cue: the scene leaves out its TF samples while the tool crosses a thin plate.

At 50 Hz the demo arm's tool moves a centimetre or two per TF sample, less than its own size:
sampled distances alone would see it enter the plate. A real TF stream has gaps (a loaded
robot computer, a lossy link); the demo makes one where it shows: when the next sample would
bring ``link`` within ``clearance`` of ``obstacle``, the scene looks ahead and, if the link is
clear again within ``max_seconds``, sends no TF until then. The node's two samples around the
gap are both positive, and only its swept distance (``swept_distances``) sees the contact.
Only every ``every``-th crossing gets a gap, so the others show sampled contact as before.

The motion is a function of the tick, so the gaps fall on the same ticks every run.
"""

from dataclasses import dataclass

from gjk_ros.core import ConvexPolytope, signed_distance
from gjk_ros.models.transforms import xyz_rpy_to_matrix
from gjk_ros.models.urdf import parse_urdf_collisions
import numpy

__all__ = ['CrossingGaps', 'TfDropout']


@dataclass(frozen=True)
class TfDropout:
    """
    Where the scene leaves TF samples out (see the module docstring).

    Attributes
    ----------
    link : str
        The arm link that crosses (its URDF collision pieces).
    obstacle : str
        The obstacle crossed, ``ns/id`` of a box obstacle of the scene.
    clearance : float
        Metres: a sample closer than this is left out.
    max_seconds : float
        The longest gap (keep it under the node's ``tf_timeout``).
    every : int
        One crossing in this many gets a gap.

    """

    link: str
    obstacle: str
    clearance: float = 0.005
    max_seconds: float = 0.6
    every: int = 2


class CrossingGaps:
    """
    Decide, tick by tick, whether the scene sends its TF sample.

    Parameters
    ----------
    dropout : TfDropout
        Where.
    config : gjk_ros.demo.scene.SceneConfig
        The scene (its URDF, obstacles, joint motion and rate).
    model : gjk_ros.models.kinematics.KinematicModel
        The arm's joint tree.

    """

    def __init__(self, dropout, config, model):
        self._dropout, self._config, self._model = dropout, config, model
        self._pieces = parse_urdf_collisions(config.urdf).pieces[dropout.link]
        (spec,) = [spec for spec in config.obstacles if spec.name == dropout.obstacle]
        self._obstacle = spec
        self._shape = ConvexPolytope.box([value / 2.0 for value in spec.scale])
        self._origin = xyz_rpy_to_matrix(spec.position, spec.rpy)
        self._clear = {}
        self._until = -1
        self._crossings = 0

    def send(self, tick):
        """Whether the sample of ``tick`` is sent (ticks come in order)."""
        if tick < self._until:
            return False
        if self._is_clear(tick) and not self._is_clear(tick + 1):
            self._crossings += 1
            limit = int(self._dropout.max_seconds * self._config.rate_hz)
            end = next((later for later in range(tick + 2, tick + 2 + limit)
                        if self._is_clear(later)), None)
            if end is not None and self._crossings % self._dropout.every == 0:
                self._until = end
        for old in [key for key in self._clear if key < tick]:
            del self._clear[old]
        return True

    def distance(self, tick):
        """Return the link's smallest signed distance to the obstacle at ``tick``."""
        time = tick / self._config.rate_hz
        model = self._model
        poses = model.forward(model.configuration(
            {name: value for name, value in self._config.joint_positions(time).items()
             if name in set(model.variable_names)}))
        link = poses[model.link_index(self._dropout.link)]
        frame = self._frame_pose(poses, time)
        obstacle = frame @ self._origin
        return min(signed_distance(piece.shape, link @ piece.origin, self._shape,
                                   obstacle).distance for piece in self._pieces)

    def _frame_pose(self, poses, time):
        frame_id = self._obstacle.frame_id
        for frame in self._config.moving_frames:
            if frame.child == frame_id:
                return frame.pose_at(time)
        if frame_id in self._model.links:
            return poses[self._model.link_index(frame_id)]
        return numpy.eye(4)

    def _is_clear(self, tick):
        if tick not in self._clear:
            self._clear[tick] = self.distance(tick) >= self._dropout.clearance
        return self._clear[tick]
