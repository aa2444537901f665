"""``sim_server``'s visualisation topics: ``/tf`` and ``~/markers``, only while someone listens.

``/tf`` (``tf2_msgs/TFMessage``) carries one transform per model, and per link whose scoped
name matches a ``tf_links`` regex, each from ``world`` to the entity's SDF scoped name, stamped
with sim time. ``~/markers`` (``visualization_msgs/MarkerArray``) draws the scene's shapes
(:mod:`sim_fidelity.viz.shapes`) coloured by fidelity level, as the engine's lever flags give it
(:mod:`sim_fidelity.viz.levels`): namespace ``scene``, marker id = MuJoCo geom id, frame
``world``. A marker goes out when its shape moved or changed colour, every marker once per
``FULL_PERIOD_S`` (late subscribers, a restarted RViz), and a DELETEALL first after the world was
recompiled (ids change). Both are checked at ``rate`` Hz; with no subscriber nothing is read or
built: the timer's callback returns after two subscription counts.
"""
from __future__ import annotations

import re
import threading
import time

import mujoco
import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ...viz.scene_look import SceneLook
from ...viz.shapes import CUBE, CYLINDER, SPHERE, scene_shapes
from ..engine import MujocoEngine
from ..protocol import EntityKind
from .convert import pose_msg, time_msg

QUEUE = 10
WORLD_FRAME = "world"
MARKER_NS = "scene"
FULL_PERIOD_S = 2.0  # wall seconds between complete marker sets
MOVED = 1e-4  # a marker is resent when a pose number changes by more than this (m, quat)
MARKER_TYPES = {CUBE: Marker.CUBE, SPHERE: Marker.SPHERE, CYLINDER: Marker.CYLINDER}


class SceneVisualization:
    """The ``/tf`` and ``~/markers`` publishers of one ``sim_server`` node and their timer."""

    def __init__(self, node: Node, engine: MujocoEngine, lock: threading.RLock, gate, *,
                 rate: float, tf_links: list[str]):
        self.engine, self.lock, self.gate = engine, lock, gate
        self._tf_links = [re.compile(p) for p in tf_links if p]
        self.tf = node.create_publisher(TFMessage, "/tf", QUEUE)
        self.markers = node.create_publisher(MarkerArray, "~/markers", QUEUE)
        self._look: SceneLook | None = None  # made for the first marker subscriber
        self._sent: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # geom, pose, rgba
        self._last_full = 0.0
        if rate > 0:
            node.create_timer(1.0 / rate, self.publish)

    def publish(self) -> None:
        """Publish what has subscribers; nothing at all without any."""
        want_tf = self.tf.get_subscription_count() > 0
        want_markers = self.markers.get_subscription_count() > 0
        if not (want_tf or want_markers):
            return
        outgoing = []
        with self.lock:
            stamp = time_msg(self.engine.time)
            frames = self._frames() if want_tf else None
            shapes = self._shapes() if want_markers else None
        if frames is not None:
            outgoing.append((self.tf, tf_message(*frames, stamp)))
        if shapes is not None:
            array = self._marker_array(*shapes, stamp)
            if array.markers:
                outgoing.append((self.markers, array))
        self.gate.publish(outgoing)

    def _frames(self) -> tuple[list[str], np.ndarray]:
        """Models, and links matching a ``tf_links`` regex, with their world poses (under lock)."""
        e = self.engine
        names = e.entities(EntityKind.MODEL)
        if self._tf_links:
            names += [n for n in e.entities(EntityKind.LINK)
                      if any(p.fullmatch(n) for p in self._tf_links)]
        return names, e.get_states(names)[0]

    def _shapes(self):
        """The shapes (under the lock) and whether the geom ids changed (a recompile)."""
        recompiled = self._look is not None and self._look.stale
        if self._look is None:
            self._look = SceneLook(self.engine, levels=True)
        self._look.update()
        mujoco.mj_kinematics(self.engine.model, self.engine.data)  # poses set since a step
        return scene_shapes(self._look, self.engine.data), recompiled

    def _marker_array(self, shapes, recompiled: bool, stamp) -> MarkerArray:
        """Markers of the shapes that moved or changed colour (all of them now and then)."""
        now = time.monotonic()
        out = MarkerArray()
        sent = self._sent
        full = (recompiled or sent is None or now - self._last_full >= FULL_PERIOD_S
                or not np.array_equal(sent[0], shapes.geom))
        if recompiled:
            out.markers.append(Marker(action=Marker.DELETEALL, ns=MARKER_NS))
        if full:
            self._last_full = now
            rows = np.arange(len(shapes.geom))
        else:
            rows = np.flatnonzero((np.abs(shapes.pose - sent[1]) > MOVED).any(axis=1)
                                  | (shapes.rgba != sent[2]).any(axis=1))
        self._sent = (shapes.geom, shapes.pose, shapes.rgba)
        for i in rows:
            out.markers.append(marker(int(shapes.geom[i]), int(shapes.kind[i]), shapes.pose[i],
                                      shapes.scale[i], shapes.rgba[i], stamp))
        return out


def marker(geom: int, kind: int, pose: np.ndarray, scale: np.ndarray, rgba: np.ndarray,
           stamp) -> Marker:
    """One shape's marker (frame ``world``, namespace ``scene``, id = the geom's id)."""
    m = Marker(ns=MARKER_NS, id=geom, type=MARKER_TYPES[kind], action=Marker.ADD)
    m.header.frame_id, m.header.stamp = WORLD_FRAME, stamp
    m.pose = pose_msg(pose)
    m.scale.x, m.scale.y, m.scale.z = (float(v) for v in scale)
    m.color.r, m.color.g, m.color.b, m.color.a = (float(v) for v in rgba)
    return m


def tf_message(names: list[str], pose: np.ndarray, stamp) -> TFMessage:
    """Transforms from ``world`` to each named frame."""
    out = TFMessage()
    for name, p in zip(names, pose):
        t = TransformStamped()
        t.header.frame_id, t.header.stamp, t.child_frame_id = WORLD_FRAME, stamp, name
        tr, q = t.transform.translation, t.transform.rotation
        tr.x, tr.y, tr.z, q.x, q.y, q.z, q.w = (float(v) for v in p)
        out.transforms.append(t)
    return out
