"""Write a run to a ROS 2 bag with real message types, laid out as a spec reads it.

At each sample time one message is written per state and action topic, with every field the
spec reads from that topic set (angles become quaternions; a NavSatFix read as east/north/up
of a named origin gets that ENU point's latitude, longitude and altitude, through pymap3d;
messages with a ``header`` get the sample time as stamp). Reward k (of the transition from
sample k to k+1) is written at time k+1, which both reward modes of the ingest read back as
reward k.
"""
from __future__ import annotations

from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from ..simulator.geodesy import enu_to_geodetic
from ..simulator.poses import rpy_to_quat
from .errors import RealityGapError
from .messages import default_message, typestore
from .spec import ANGLES, GEODETIC, Source, Spec

STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


def write_run(path: str | Path, spec: Spec, times: np.ndarray, states: np.ndarray,
              actions: np.ndarray, rewards: np.ndarray | None = None,
              storage: str = "mcap") -> Path:
    """Write ``states`` ``(n, d)`` and continuous ``actions`` ``(n, m)`` sampled at ``times``
    (seconds, increasing) and ``rewards`` ``(n - 1,)`` to a new bag directory ``path``."""
    times = np.asarray(times, dtype=float)
    states = np.atleast_2d(np.asarray(states, dtype=float))
    actions = np.atleast_2d(np.asarray(actions, dtype=float))
    n = len(times)
    if states.shape != (n, len(spec.state)) or actions.shape != (n, len(spec.action)):
        raise RealityGapError(f"expected states ({n}, {len(spec.state)}) and actions "
                              f"({n}, {len(spec.action)}), got {states.shape} and "
                              f"{actions.shape}", bag=str(path))
    stamps = np.round(times * 1e9).astype(np.int64)
    columns: list[tuple[Source, np.ndarray]] = [
        *zip(spec.state, states.T), *zip(spec.action, actions.T)]
    by_topic: dict[str, list[tuple[Source, np.ndarray]]] = {}
    for src, col in columns:
        by_topic.setdefault(src.topic, []).append((src, col))
    store = typestore()
    path = Path(path)
    with Writer(path, version=9, storage_plugin=STORAGES[storage]) as writer:
        conns = {topic: writer.add_connection(topic, cols[0][0].type, typestore=store)
                 for topic, cols in by_topic.items()}
        reward_conn = None
        if spec.reward is not None and rewards is not None:
            reward_conn = writer.add_connection(spec.reward.topic, spec.reward.type,
                                                typestore=store)
        for k in range(n):
            for topic, cols in by_topic.items():
                msg = _message(cols, k, int(stamps[k]))
                writer.write(conns[topic], int(stamps[k]),
                             store.serialize_cdr(msg, cols[0][0].type))
            if reward_conn is not None and k > 0:
                msg = default_message(spec.reward.type)
                _assign(msg, spec.reward.field, float(rewards[k - 1]))
                writer.write(reward_conn, int(stamps[k]),
                             store.serialize_cdr(msg, spec.reward.type))
    return path


def _message(cols: list[tuple[Source, np.ndarray]], k: int, stamp: int) -> Any:
    msg = default_message(cols[0][0].type)
    if hasattr(msg, "header"):
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
    angles: dict[str, np.ndarray] = {}
    enu: dict[str, tuple[Source, np.ndarray]] = {}  # per NavSatFix field: its origin, e, n, u
    for src, col in cols:
        if src.convert is None:
            _assign(msg, src.field, col[k])
        elif src.convert in GEODETIC:
            enu.setdefault(src.field, (src, np.zeros(3)))[1][GEODETIC.index(src.convert)] = col[k]
        else:
            angles.setdefault(src.field, np.zeros(3))[ANGLES.index(src.convert)] = col[k]
    for field, (roll, pitch, yaw) in angles.items():
        q = attrgetter(field)(msg)
        q.x, q.y, q.z, q.w = (float(v) for v in rpy_to_quat(roll, pitch, yaw))
    for field, (src, point) in enu.items():
        fix = attrgetter(field)(msg) if field else msg
        fix.latitude, fix.longitude, fix.altitude = (
            float(v) for v in enu_to_geodetic(*point, src.origin))
    return msg


def _assign(msg: Any, field: str, value: float) -> None:
    *parents, leaf = field.split(".")
    owner = attrgetter(".".join(parents))(msg) if parents else msg
    current = getattr(owner, leaf)
    setattr(owner, leaf, bool(value) if isinstance(current, bool) else
            int(round(value)) if isinstance(current, int) else float(value))
