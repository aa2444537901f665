"""The ensemble's log bag: every model output, responsibility change and event (MCAP or sqlite3).

Topics (message types of ``sim_fidelity_interfaces``, registered from their .msg text):

* ``/conductor/responsibility``: ``ResponsibilityChange``, the initial allocation included;
* ``/conductor/events``: ``ModelEvent`` (events models emitted and notifications triggers sent);
* ``/conductor/output/<model>``: ``ModelOutput`` of each model after each of its steps.

Bag time is the ensemble's simulated time. :func:`read_log` reads a log back.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer

from .errors import ConductorError
from .messages import MODEL_EVENT, MODEL_OUTPUT, RESPONSIBILITY_CHANGE, typestore
from .responsibility import Transfer

RESPONSIBILITY_TOPIC = "/conductor/responsibility"
EVENT_TOPIC = "/conductor/events"
OUTPUT_PREFIX = "/conductor/output/"
STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


def output_topic(model: str) -> str:
    """The log topic of a model's output (characters a topic cannot hold become ``_``)."""
    return OUTPUT_PREFIX + re.sub(r"[^A-Za-z0-9_/]", "_", model)


def to_json(value: Any) -> str:
    """JSON of a model's values; numpy arrays and scalars become lists and numbers."""
    def default(o: Any) -> Any:
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, (set, frozenset, tuple)):
            return list(o)
        return str(o)
    return json.dumps(value, default=default, sort_keys=True)


def split_output(output: Mapping[str, Any]) -> tuple[list[str], np.ndarray, np.ndarray,
                                                     dict[str, Any]]:
    """A model output as ModelOutput fields: entities, poses (n, 7), twists (n, 6) (zero where
    the model gives none) and the other values."""
    poses = dict(output.get("poses") or {})
    twists = dict(output.get("twists") or {})
    entities = list(poses)
    p = np.array([np.asarray(poses[e], float) for e in entities]).reshape(-1, 7)
    t = np.array([np.asarray(twists.get(e, np.zeros(6)), float)
                  for e in entities]).reshape(-1, 6)
    values = {k: v for k, v in output.items() if k not in ("poses", "twists")}
    return entities, p, t, values


class BagLog:
    """A conductor listener writing the log bag; use as a context manager or call close()."""

    def __init__(self, path: str | Path, storage: str = "mcap"):
        if storage not in STORAGES:
            raise ConductorError(f"log storage '{storage}' is not one of "
                                 f"{', '.join(STORAGES)}")
        self.path = Path(path)
        if self.path.exists():
            raise ConductorError(f"log bag '{self.path}' exists already: choose a new path")
        self.store = typestore()
        self._writer = Writer(self.path, version=9, storage_plugin=STORAGES[storage])
        self._writer.open()
        self._connections: dict[str, Any] = {}
        self.counts = {"outputs": 0, "transfers": 0, "events": 0}

    def __enter__(self) -> "BagLog":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # --- the Listener protocol -----------------------------------------------------------------
    def on_output(self, time: float, model: str, model_id: int,
                  output: Mapping[str, Any]) -> None:
        entities, poses, twists, values = split_output(output)
        T = self.store.types
        msg = T[MODEL_OUTPUT](
            stamp=self._stamp(time), model=model, model_id=int(model_id), entities=entities,
            poses=[T["geometry_msgs/msg/Pose"](
                position=T["geometry_msgs/msg/Point"](x=p[0], y=p[1], z=p[2]),
                orientation=T["geometry_msgs/msg/Quaternion"](x=p[3], y=p[4], z=p[5], w=p[6]))
                for p in poses.tolist()],
            twists=[T["geometry_msgs/msg/Twist"](
                linear=T["geometry_msgs/msg/Vector3"](x=v[0], y=v[1], z=v[2]),
                angular=T["geometry_msgs/msg/Vector3"](x=v[3], y=v[4], z=v[5]))
                for v in twists.tolist()],
            values_json=to_json(values))
        self._write(output_topic(model), MODEL_OUTPUT, time, msg)
        self.counts["outputs"] += 1

    def on_transfer(self, transfer: Transfer) -> None:
        msg = self.store.types[RESPONSIBILITY_CHANGE](
            stamp=self._stamp(transfer.time), entity=transfer.entity,
            attribute=transfer.attribute, from_model=transfer.from_model,
            to_model=transfer.to_model, cause=transfer.cause)
        self._write(RESPONSIBILITY_TOPIC, RESPONSIBILITY_CHANGE, transfer.time, msg)
        self.counts["transfers"] += 1

    def on_event(self, time: float, model: str, event: str, data: Mapping[str, Any]) -> None:
        msg = self.store.types[MODEL_EVENT](stamp=self._stamp(time), model=model, event=event,
                                            data_json=to_json(dict(data)))
        self._write(EVENT_TOPIC, MODEL_EVENT, time, msg)
        self.counts["events"] += 1

    # --- writing -----------------------------------------------------------------------------
    def _stamp(self, time: float) -> Any:
        ns = int(round(time * 1e9))
        return self.store.types["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000,
                                                               nanosec=ns % 1_000_000_000)

    def _write(self, topic: str, msgtype: str, time: float, msg: Any) -> None:
        if self._writer is None:
            raise ConductorError(f"log bag '{self.path}' is closed")
        conn = self._connections.get(topic)
        if conn is None:
            conn = self._writer.add_connection(topic, msgtype, typestore=self.store)
            self._connections[topic] = conn
        self._writer.write(conn, int(round(time * 1e9)),
                           self.store.serialize_cdr(msg, msgtype))


@dataclass
class LogContents:
    """A log bag read back."""

    transfers: list[Transfer] = field(default_factory=list)
    events: list[tuple[float, str, str, dict[str, Any]]] = field(default_factory=list)
    outputs: dict[str, list[tuple[float, dict[str, np.ndarray], dict[str, Any]]]] = field(
        default_factory=dict)  # model -> (time, entity -> pose, values)


def read_log(path: str | Path) -> LogContents:
    """Everything a :class:`BagLog` wrote, in time order."""
    path = Path(path)
    if not path.exists():
        raise ConductorError(f"log bag '{path}' does not exist")
    out = LogContents()
    with AnyReader([path], default_typestore=typestore()) as reader:
        for connection, _, data in reader.messages():
            msg = reader.deserialize(data, connection.msgtype)
            t = msg.stamp.sec + msg.stamp.nanosec * 1e-9
            if connection.msgtype == RESPONSIBILITY_CHANGE:
                out.transfers.append(Transfer(t, msg.entity, msg.attribute, msg.from_model,
                                              msg.to_model, msg.cause))
            elif connection.msgtype == MODEL_EVENT:
                out.events.append((t, msg.model, msg.event, json.loads(msg.data_json)))
            elif connection.msgtype == MODEL_OUTPUT:
                poses = {e: np.array([p.position.x, p.position.y, p.position.z,
                                      p.orientation.x, p.orientation.y, p.orientation.z,
                                      p.orientation.w]) for e, p in zip(msg.entities, msg.poses)}
                out.outputs.setdefault(msg.model, []).append((t, poses,
                                                              json.loads(msg.values_json)))
    return out
