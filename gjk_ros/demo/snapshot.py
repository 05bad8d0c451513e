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
A picture of ``~/markers`` at one instant, without RViz.

``MarkerState`` keeps the markers a MarkerArray subscriber has received the way RViz does
(visualization_msgs/Marker: ADD and MODIFY replace the marker of the same ns and id, DELETE
removes it, DELETEALL removes every marker, and a marker with a lifetime disappears that long
after it was received). ``render_markers`` draws them with matplotlib: TRIANGLE_LIST as faces,
LINE_LIST and LINE_STRIP as lines, TEXT_VIEW_FACING as text; each marker's points are scaled
and moved by its pose as RViz does. Other marker types are not drawn.
"""

from dataclasses import dataclass

from gjk_ros.models.transforms import quaternion_to_matrix
import numpy
from visualization_msgs.msg import Marker

__all__ = ['MarkerGeometry', 'marker_geometry', 'MarkerState', 'render_markers']


class MarkerState:
    """The markers alive at a time, from the MarkerArrays received so far."""

    def __init__(self):
        self._markers = {}  # (ns, id) -> (Marker, received at, seconds)

    def apply(self, array, now):
        """
        Apply one MarkerArray received at ``now`` (seconds, any monotonic clock).

        Parameters
        ----------
        array : visualization_msgs.msg.MarkerArray
            As received.
        now : float
            Reception time.

        """
        for marker in array.markers:
            key = (marker.ns, marker.id)
            if marker.action == Marker.DELETEALL:
                self._markers.clear()
            elif marker.action == Marker.DELETE:
                self._markers.pop(key, None)
            else:
                self._markers[key] = (marker, now)

    def live(self, now):
        """Return the markers alive at ``now``, ordered by (ns, id)."""
        alive = []
        for key in sorted(self._markers):
            marker, received = self._markers[key]
            lifetime = marker.lifetime.sec + 1e-9 * marker.lifetime.nanosec
            if lifetime == 0.0 or now - received <= lifetime:
                alive.append(marker)
        return alive


@dataclass
class MarkerGeometry:
    """
    What one marker draws, in its header's frame.

    Attributes
    ----------
    triangles : (t, 3, 3) float
        Faces of a TRIANGLE_LIST.
    segments : (s, 2, 3) float
        Lines of a LINE_LIST or LINE_STRIP.
    colours : (t or s, 4) float
        RGBA of each triangle or segment.
    text : str
        For a text marker.
    position : (3,) float
        Where the text goes.

    """

    triangles: numpy.ndarray
    segments: numpy.ndarray
    colours: numpy.ndarray
    text: str
    position: numpy.ndarray


def _rgba(colour):
    return (colour.r, colour.g, colour.b, colour.a)


def marker_geometry(marker):
    """
    Return the triangles, segments or text a marker draws, posed as RViz poses them.

    Parameters
    ----------
    marker : visualization_msgs.msg.Marker
        Any marker; types other than TRIANGLE_LIST, LINE_LIST, LINE_STRIP and
        TEXT_VIEW_FACING give empty geometry.

    Returns
    -------
    MarkerGeometry

    """
    orientation = marker.pose.orientation
    quaternion = (orientation.x, orientation.y, orientation.z, orientation.w)
    rotation = quaternion_to_matrix(quaternion) if any(quaternion) else numpy.eye(3)
    position = numpy.array([marker.pose.position.x, marker.pose.position.y,
                            marker.pose.position.z])
    scale = numpy.array([marker.scale.x, marker.scale.y, marker.scale.z])
    points = numpy.array([(p.x, p.y, p.z) for p in marker.points], dtype=float).reshape(-1, 3)
    colours = numpy.array([_rgba(c) for c in marker.colors], dtype=float).reshape(-1, 4)
    if marker.type == Marker.TRIANGLE_LIST:
        points = points * scale  # RViz scales triangle list points
    world = points @ rotation.T + position
    triangles, segments = numpy.zeros((0, 3, 3)), numpy.zeros((0, 2, 3))
    colour_step = None  # points per drawn element that carry its per-vertex colour
    if marker.type == Marker.TRIANGLE_LIST:
        triangles, colour_step = world[:len(world) // 3 * 3].reshape(-1, 3, 3), 3
    elif marker.type == Marker.LINE_LIST:
        segments, colour_step = world[:len(world) // 2 * 2].reshape(-1, 2, 3), 2
    elif marker.type == Marker.LINE_STRIP and len(world) > 1:
        segments, colour_step = numpy.stack([world[:-1], world[1:]], axis=1), 1
    count = len(triangles) + len(segments)
    if colour_step is not None and len(colours) >= colour_step * count:
        colours = colours[::colour_step][:count]
    else:
        colours = numpy.tile(_rgba(marker.color), (count, 1))
    text = marker.text if marker.type == Marker.TEXT_VIEW_FACING else ''
    return MarkerGeometry(triangles, segments, colours, text, position)


def render_markers(markers, path, title=''):
    """
    Write a PNG of markers (all in one frame) with matplotlib.

    Parameters
    ----------
    markers : iterable of visualization_msgs.msg.Marker
        E.g. ``MarkerState.live(now)``.
    path : str
        Output file.
    title : str
        Figure title.

    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    figure = pyplot.figure(figsize=(8.0, 7.0))
    axes = figure.add_subplot(projection='3d')
    # Draw in the order below (faces, then lines, then text) rather than by depth, so that
    # witness segments inside translucent hulls stay visible.
    axes.computed_zorder = False
    extent = []
    for marker in markers:
        geometry = marker_geometry(marker)
        if len(geometry.triangles):
            axes.add_collection3d(Poly3DCollection(
                geometry.triangles, facecolors=geometry.colours, edgecolors='none', zorder=1))
            extent.append(geometry.triangles.reshape(-1, 3))
        if len(geometry.segments):
            axes.add_collection3d(Line3DCollection(
                geometry.segments, colors=geometry.colours, linewidths=2.0, zorder=2))
            extent.append(geometry.segments.reshape(-1, 3))
        if geometry.text:
            axes.text(*geometry.position, geometry.text, fontsize=8, zorder=3)
    _frame(axes, numpy.concatenate(extent) if extent else numpy.zeros((1, 3)))
    frames = sorted({marker.header.frame_id for marker in markers} - {''})
    axes.set_xlabel('x [m]')
    axes.set_ylabel('y [m]')
    axes.set_zlabel('z [m]')
    figure.suptitle(title + (f"   (frame {', '.join(frames)})" if frames else ''),
                    fontsize='medium')
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def _frame(axes, points):
    """Fit the axes to the points with equal scales on x, y and z."""
    low, high = points.min(axis=0), points.max(axis=0)
    centre, half = (low + high) / 2.0, max(float((high - low).max()) / 2.0, 0.05) * 1.05
    axes.set_xlim(centre[0] - half, centre[0] + half)
    axes.set_ylim(centre[1] - half, centre[1] + half)
    axes.set_zlim(centre[2] - half, centre[2] + half)
    axes.set_box_aspect((1.0, 1.0, 1.0))
