"""``sim_server``'s topics: ``/clock``, ``~/performance``, ``~/divergence`` (one line per
divergence of the physics, latched), ``/model/<name>/odometry``, the world's settable sensor
values and the model topics (``model_topics.py``).

Every message goes out through one :class:`PublishGate`: once the server stops, nothing is
published again, so no publisher can run against a context that is going away. The gate's lock
is the innermost one: readings are taken under the engine lock, then published (the stepper and
service handlers publish while they hold the engine lock; nothing takes the engine lock while it
holds the gate).
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool, Float64, String

from sim_fidelity_interfaces.msg import Performance

from .. import poses
from ..engine import MujocoEngine
from ..protocol import EntityKind
from ..sensor_values import SensorValues
from .convert import pose_msg, time_msg, twist_msg
from .model_topics import ModelTopics
from .stepping import Stepper

QUEUE = 10
Outgoing = Iterable[tuple[Any, Any]]  # (publisher, message) pairs


class PublishGate:
    """Publishes until :meth:`close`; after close() returns no publish runs or starts."""

    def __init__(self, node: Node):
        self._context = node.context
        self._lock = threading.Lock()
        self._open = True

    def publish(self, outgoing: Outgoing) -> None:
        with self._lock:
            if not self._open:
                return
            if not self._context.ok():  # shut down underneath us (rclpy's own signal handler)
                self._open = False
                return
            for publisher, msg in outgoing:
                publisher.publish(msg)

    def close(self) -> None:
        with self._lock:
            self._open = False


class Publishers:
    """The publishers of one ``sim_server`` node and the timers that drive them."""

    def __init__(self, node: Node, engine: MujocoEngine, lock: threading.RLock,
                 stepper: Stepper, sensor_values: SensorValues, model_topics: ModelTopics, *,
                 publish_rate: float, odometry: list[str]):
        self.node, self.engine, self.lock, self.stepper = node, engine, lock, stepper
        self.sensor_values, self.model_topics = sensor_values, model_topics
        self.gate = PublishGate(node)
        self._clock = node.create_publisher(Clock, "/clock", QUEUE)
        self._performance = node.create_publisher(Performance, "~/performance", QUEUE)
        self._divergence = node.create_publisher(String, "~/divergence", QoSProfile(
            depth=QUEUE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        names = [n for n in engine.entities(EntityKind.MODEL)
                 if any(re.fullmatch(p, n) for p in odometry)]
        self._odometry = {n: node.create_publisher(Odometry, f"/model/{n}/odometry", QUEUE)
                          for n in names}
        self._sensors = [(node.create_publisher(Bool if s.kind == "bool" else Float64, s.topic,
                                                QUEUE), s.kind) for s in sensor_values.sensors]
        self._window_start = (time.perf_counter(), engine.time)
        node.create_timer(1.0, self._publish_performance)
        if publish_rate > 0:  # a spawned robot may bring topics, so the timer runs regardless
            node.create_timer(1.0 / publish_rate, self.publish_states)

    def close(self) -> None:
        """Publish nothing from now on (the timers may still fire: they find the gate shut)."""
        self.gate.close()

    def publish_clock(self) -> None:
        """``/clock`` at the engine's time (the caller holds the engine lock)."""
        self.gate.publish([(self._clock, Clock(clock=time_msg(self.engine.time)))])

    def publish_divergence(self, report: str) -> None:
        self.gate.publish([(self._divergence, String(data=report))])

    def publish_states(self) -> None:
        """Sensor values, odometry and model topics, each read under the lock."""
        if self._sensors:
            self.publish_sensor_values()
        if self._odometry:
            self._publish_odometry()
        with self.lock:
            outgoing = self.model_topics.messages()
        self.gate.publish(outgoing)

    def publish_sensor_values(self) -> None:
        with self.lock:
            values = self.sensor_values.values()
            enabled = [self.engine.sensor_enabled(n) for n in self.sensor_values.names]
        self.gate.publish(
            (pub, Bool(data=bool(v >= 0.5)) if kind == "bool" else Float64(data=float(v)))
            for (pub, kind), v, on in zip(self._sensors, values, enabled)
            if on)  # the SENSOR lever switches publishing off

    def _publish_odometry(self) -> None:
        names = list(self._odometry)
        with self.lock:
            pose, twist = self.engine.get_states(names)
            stamp = time_msg(self.engine.time)
        q_inv = poses.quat_conj(pose[:, 3:])
        body_twist = np.concatenate([poses.quat_rotate(q_inv, twist[:, :3]),
                                     poses.quat_rotate(q_inv, twist[:, 3:])], axis=1)
        outgoing = []
        for i, name in enumerate(names):
            msg = Odometry()
            msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, "world", name
            msg.pose.pose, msg.twist.twist = pose_msg(pose[i]), twist_msg(body_twist[i])
            outgoing.append((self._odometry[name], msg))
        self.gate.publish(outgoing)

    def _publish_performance(self) -> None:
        with self.lock:
            now, sim = time.perf_counter(), self.engine.time
            steps, busy = self.stepper.take_window()
        wall0, sim0 = self._window_start
        self._window_start = (now, sim)
        window = now - wall0
        msg = Performance(stamp=time_msg(sim), sim_time=sim, steps=steps,
                          real_time_factor=(sim - sim0) / window if window > 0 else 0.0,
                          step_time_ms=1e3 * busy / steps if steps else 0.0, window_s=window)
        self.gate.publish([(self._performance, msg)])
