"""Where the kernels are, as RViz/Foxglove markers: a sphere per kernel centre, the one that fired
last in a colour of its own.

A centre is a point of the spec's state space; the spec's ``apply`` mapping tells which state
components are an entity's ``pose.x``, ``pose.y``, ``pose.z``: those place the marker in the world
frame (components the spec does not map are 0). Each sphere's extent along a mapped axis is
the kernel's reach there (sigma over the axis's weight, at the activation threshold). A spec
that maps no position has no markers.
"""
from __future__ import annotations

import numpy as np

from .kernel_set import KernelSet

AXES = ("pose.x", "pose.y", "pose.z")
IDLE_RGBA = (0.55, 0.55, 0.55, 0.35)  # grey, see-through
FIRED_RGBA = (0.835, 0.369, 0.0, 0.9)  # Okabe-Ito vermillion
MIN_SIZE = 0.02  # m: the extent along an axis the spec does not map


def kernel_spheres(kernels: KernelSet) -> tuple[np.ndarray, np.ndarray] | None:
    """World positions ``(K, 3)`` and extents ``(K, 3)`` of the kernels; None without a mapped
    position."""
    spec = kernels.spec
    mapped = {t.component: t.index for t in spec.apply if t.component in AXES}
    if not mapped or not len(kernels.kernels):
        return None
    centres = np.array([k.centre for k in kernels.kernels], float)
    reach = kernels.sigma * np.sqrt(-2.0 * np.log(kernels.threshold))
    pos = np.zeros((len(centres), 3))
    size = np.full((len(centres), 3), MIN_SIZE)
    for axis, component in enumerate(AXES):
        if component in mapped:
            i = mapped[component]
            pos[:, axis] = centres[:, i]
            weight = kernels.weights[i]
            if weight > 0:
                size[:, axis] = np.maximum(2 * reach / weight, MIN_SIZE)
    return pos, size


def kernel_marker_array(spheres: tuple[np.ndarray, np.ndarray], fired: int | None, stamp):
    """A ``visualization_msgs/MarkerArray``: namespace ``kernels``, id = kernel index, frame
    ``world``."""
    from visualization_msgs.msg import Marker, MarkerArray

    pos, size = spheres
    out = MarkerArray()
    for k, (p, s) in enumerate(zip(pos, size)):
        m = Marker(ns="kernels", id=k, type=Marker.SPHERE, action=Marker.ADD)
        m.header.frame_id, m.header.stamp = "world", stamp
        m.pose.position.x, m.pose.position.y, m.pose.position.z = (float(v) for v in p)
        m.pose.orientation.w = 1.0
        m.scale.x, m.scale.y, m.scale.z = (float(v) for v in s)
        m.color.r, m.color.g, m.color.b, m.color.a = FIRED_RGBA if k == fired else IDLE_RGBA
        out.markers.append(m)
    return out
