"""Data sources of an ensemble (paper 003, section 3.4): robot telemetry and action annotations.

A source hands the conductor its messages in time order (:meth:`poll`); the conductor delivers
them to every model (:meth:`Model.input`) before the tick that reaches their time, and action
annotations to the triggers too.

* :class:`RecordedSource` plays back a bag (MCAP or sqlite3, read through rosbags):
  ``sensor_msgs/msg/JointState`` and ``sim_fidelity_interfaces/msg/ActionAnnotation`` topics,
  stamped by their header (``stamp``), else by the bag's receive time, on a time line starting at
  zero. Playback follows the conductor's simulated time, so in process it is paced to the slowest
  SERVICE model by construction (each tick waits for them); it ends with the recording.
* :class:`LiveSource` is fed by a ROS adapter (:meth:`LiveSource.push` from its subscriptions,
  any thread); it ends when closed.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader

from .errors import ConductorError
from .messages import ACTION_ANNOTATION, JOINT_STATE, typestore

JOINT_STATE_KIND, ACTION_KIND = "joint_state", "action"


@dataclass(frozen=True)
class DataMessage:
    time: float  # seconds on the ensemble's time line
    topic: str
    kind: str  # "joint_state" or "action"
    data: Mapping[str, Any]  # see Model.input


def joint_state(time: float, names: Sequence[str], positions: Sequence[float],
                velocities: Sequence[float] = (), efforts: Sequence[float] = (),
                topic: str = "/joint_states") -> DataMessage:
    """A JointState sample as the conductor delivers it."""
    return DataMessage(time, topic, JOINT_STATE_KIND, {
        "stamp": time, "name": list(names), "position": np.asarray(positions, float),
        "velocity": np.asarray(velocities, float), "effort": np.asarray(efforts, float)})


def action(time: float, operation: str, args: Mapping[str, str] | None = None,
           topic: str = "/action_sequence") -> DataMessage:
    """An action annotation as the conductor delivers it."""
    return DataMessage(time, topic, ACTION_KIND,
                       {"stamp": time, "operation": operation, "args": dict(args or {})})


class ListSource:
    """Messages given in advance, delivered in time order."""

    def __init__(self, messages: Iterable[DataMessage]):
        self.messages = sorted(messages, key=lambda m: m.time)
        self._next = 0

    @property
    def end_time(self) -> float:
        return self.messages[-1].time if self.messages else 0.0

    def poll(self, until: float) -> list[DataMessage]:
        start = self._next
        while self._next < len(self.messages) and self.messages[self._next].time <= until:
            self._next += 1
        return self.messages[start:self._next]

    def finished(self, now: float) -> bool:
        return self._next >= len(self.messages) and now >= self.end_time


class RecordedSource(ListSource):
    """A recorded bag played back from time zero."""

    def __init__(self, path: str | Path, topics: Sequence[str] | None = None):
        self.path = Path(path)
        super().__init__(read_bag(self.path, topics))


class LiveSource:
    """Messages pushed by a live adapter; never finished until :meth:`close`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[DataMessage] = []
        self._closed = False

    def push(self, message: DataMessage) -> None:
        with self._lock:
            self._queue.append(message)

    def close(self) -> None:
        self._closed = True

    def poll(self, until: float) -> list[DataMessage]:
        with self._lock:
            ready = [m for m in self._queue if m.time <= until]
            self._queue = [m for m in self._queue if m.time > until]
        return sorted(ready, key=lambda m: m.time)

    def finished(self, now: float) -> bool:
        return self._closed and not self._queue


def read_bag(path: Path, topics: Sequence[str] | None = None) -> list[DataMessage]:
    """JointState and ActionAnnotation messages of a bag, on a time line starting at zero."""
    if not path.exists():
        raise ConductorError(f"recording '{path}' does not exist")
    wanted = {JOINT_STATE, ACTION_ANNOTATION}
    raw: list[tuple[int, str, str, Any]] = []
    try:
        with AnyReader([path], default_typestore=typestore()) as reader:
            connections = [c for c in reader.connections if c.msgtype in wanted
                           and (topics is None or c.topic in topics)]
            if not connections:
                found = ", ".join(f"{c.topic} ({c.msgtype})" for c in reader.connections)
                raise ConductorError(f"recording '{path}' has no JointState or ActionAnnotation "
                                     f"topic{' of ' + ', '.join(topics) if topics else ''} "
                                     f"(topics: {found or 'none'})")
            for connection, t, data in reader.messages(connections=connections):
                msg = reader.deserialize(data, connection.msgtype)
                raw.append((_stamp_ns(msg, t), connection.topic, connection.msgtype, msg))
    except ConductorError:
        raise
    except Exception as e:  # rosbags' reader errors have no common base
        raise ConductorError(f"recording '{path}' cannot be read: {type(e).__name__}: "
                             f"{e}") from e
    if not raw:
        return []
    t0 = min(r[0] for r in raw)
    out = []
    for ns, topic, msgtype, msg in raw:
        t = (ns - t0) * 1e-9
        if msgtype == JOINT_STATE:
            out.append(joint_state(t, msg.name, msg.position, msg.velocity, msg.effort, topic))
        else:
            if len(msg.arg_names) != len(msg.arg_values):
                raise ConductorError(f"recording '{path}': action '{msg.operation}' at "
                                     f"{t:.3f} s has {len(msg.arg_names)} argument names and "
                                     f"{len(msg.arg_values)} values")
            out.append(action(t, msg.operation, dict(zip(msg.arg_names, msg.arg_values)), topic))
    return out


def write_recording(path: str | Path, messages: Iterable[DataMessage], storage: str = "mcap",
                    start_ns: int = 1_700_000_000 * 1_000_000_000) -> Path:
    """Write JointState and action-annotation messages as a bag that :class:`RecordedSource`
    plays back (stamps and bag time ``start_ns`` + the message time)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    path = Path(path)
    store = typestore()
    T = store.types
    plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        connections: dict[str, Any] = {}
        for m in sorted(messages, key=lambda m: m.time):
            ns = start_ns + int(round(m.time * 1e9))
            stamp = T["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000,
                                                     nanosec=ns % 1_000_000_000)
            if m.kind == JOINT_STATE_KIND:
                msgtype = JOINT_STATE
                msg = T[JOINT_STATE](
                    header=T["std_msgs/msg/Header"](stamp=stamp, frame_id=""),
                    name=list(m.data["name"]),
                    position=np.asarray(m.data["position"], np.float64),
                    velocity=np.asarray(m.data.get("velocity", ()), np.float64),
                    effort=np.asarray(m.data.get("effort", ()), np.float64))
            else:
                msgtype = ACTION_ANNOTATION
                args = dict(m.data.get("args", {}))
                msg = T[ACTION_ANNOTATION](stamp=stamp, operation=m.data["operation"],
                                           arg_names=list(args),
                                           arg_values=[str(v) for v in args.values()])
            if m.topic not in connections:
                connections[m.topic] = writer.add_connection(m.topic, msgtype, typestore=store)
            writer.write(connections[m.topic], ns, store.serialize_cdr(msg, msgtype))
    return path


def _stamp_ns(msg: Any, receive_ns: int) -> int:
    stamp = getattr(getattr(msg, "header", None), "stamp", None) or getattr(msg, "stamp", None)
    if stamp is None:
        return receive_ns
    ns = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
    return ns if ns > 0 else receive_ns
