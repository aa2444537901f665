"""``sim_server``'s visualisation topics: ``/tf`` and ``~/markers``, only while someone listens.

``/tf`` (``tf2_msgs/TFMessage``) carries one transform per model, and per link whose scoped
name matches a ``tf_links`` regex, each from ``world`` to the entity's SDF scoped name, stamped
with sim time. ``~/markers`` (``visualization_msgs/MarkerArray``) draws the scene's shapes
(:mod:`sim_fidelity.viz.shapes`) coloured by fidelity level, as the engine's lever flags give it
(:mod:`sim_fidelity.viz.levels`): namespace ``scene``, marker id = MuJoCo geom id, frame
``world``, and a DELETEALL first after the world was recompiled (ids change).

Building and serialising a message per entity is what costs (rclpy: about 0.4 ms per marker
on a loaded machine), so each tick sends only what moved by more than ``MOVED`` (or changed
colour) since it was last sent: all transforms every ``TF_FULL_PERIOD_S`` (tf2 buffers forget
a frame not heard from for 10 s), all markers when a new subscriber appears and every
``MARKERS_FULL_PERIOD_S`` (displays keep markers until told otherwise). Both are checked at
``rate`` Hz; with no subscriber nothing is read or built: the timer's callback returns after two
subscription counts.
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
TF_FULL_PERIOD_S = 1.0  # wall seconds between complete sets of transforms
MARKERS_FULL_PERIOD_S = 10.0  # wall seconds between complete marker sets
MOVED = 2e-3  # resent when a pose number changes by more than this since sent (m, quaternion)
MARKER_TYPES = {CUBE: Marker.CUBE, SPHERE: Marker.SPHERE, CYLINDER: Marker.CYLINDER}


class Changes:
    """Which rows of a table of numbers to send: those that differ by more than ``MOVED`` from
    what was last sent of them, or all of them at a full refresh (every ``full_period`` wall
    seconds, when asked, or when the rows' keys changed)."""

    def __init__(self, full_period: float):
        self.full_period = full_period
        self._keys: np.ndarray | None = None
        self._sent = np.zeros((0, 0))
        self._last_full = -np.inf

    def rows(self, keys: np.ndarray, values: np.ndarray, full: bool = False) -> np.ndarray:
        now = time.monotonic()
        if (full or self._keys is None or now - self._last_full >= self.full_period
                or not np.array_equal(self._keys, keys)):
            self._keys, self._sent, self._last_full = keys, values.copy(), now
            return np.arange(len(keys))
        rows = np.flatnonzero((np.abs(values - self._sent) > MOVED).any(axis=1))
        self._sent[rows] = values[rows]  # only what goes out: slow drift adds up until sent
        return rows

    @property
    def started(self) -> bool:
        """Has anything been sent yet?"""
        return self._keys is not None


class SceneVisualization:
    """The ``/tf`` and ``~/markers`` publishers of one ``sim_server`` node and their timer."""

    def __init__(self, node: Node, engine: MujocoEngine, lock: threading.RLock, gate, *,
                 rate: float, tf_links: list[str]):
        self.engine, self.lock, self.gate = engine, lock, gate
        self._tf_links = [re.compile(p) for p in tf_links if p]
        self.tf = node.create_publisher(TFMessage, "/tf", QUEUE)
        self.markers = node.create_publisher(MarkerArray, "~/markers", QUEUE)
        self._look: SceneLook | None = None  # made for the first marker subscriber
        self.tf_changes = Changes(TF_FULL_PERIOD_S)
        self.marker_changes = Changes(MARKERS_FULL_PERIOD_S)
        self._marker_subscribers = 0
        if rate > 0:
            node.create_timer(1.0 / rate, self.publish)

    def publish(self) -> None:
        """Publish what has subscribers; nothing at all without any."""
        want_tf = self.tf.get_subscription_count() > 0
        marker_subscribers = self.markers.get_subscription_count()
        want_markers = marker_subscribers > 0
        if not (want_tf or want_markers):
            self._marker_subscribers = 0
            return
        new_subscriber = marker_subscribers > self._marker_subscribers
        self._marker_subscribers = marker_subscribers
        outgoing = []
        with self.lock:
            stamp = time_msg(self.engine.time)
            frames = self._frames() if want_tf else None
            shapes = self._shapes() if want_markers else None
        if frames is not None:
            names, pose = frames
            rows = self.tf_changes.rows(np.asarray(names), pose)
            if len(rows):
                outgoing.append((self.tf, tf_message([names[i] for i in rows], pose[rows],
                                                     stamp)))
        if shapes is not None:
            array = self._marker_array(*shapes, stamp, new_subscriber)
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

    def _marker_array(self, shapes, recompiled: bool, stamp, full: bool) -> MarkerArray:
        """Markers of the shapes that moved or changed colour (all of them now and then)."""
        out = MarkerArray()
        if recompiled:
            out.markers.append(Marker(action=Marker.DELETEALL, ns=MARKER_NS))
        rows = self.marker_changes.rows(shapes.geom, np.concatenate([shapes.pose, shapes.rgba],
                                                                   axis=1), full or recompiled)
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
