"""Bag ingest: ROS 2 bags (MCAP or sqlite3) to histories H = {(s, a, r, s')} (paper eq. 4).

Each bag is one run. Every topic the spec names is sampled on a common grid at
``sampling.rate_hz`` from the latest first message to the earliest last message of the state
and action topics (bag receive time). State fields use ``sampling.interpolation`` (``hold``:
the latest message at or before the sample time; ``linear``: interpolate between the two
bracketing messages; bool fields are always held, angles and periodic fields are unwrapped
first). Actions are commands in force, so they are always held. The reward of transition k
is the sum (``mode: sum``) of the reward messages in (t_k, t_k+1], or the value held at t_k+1
(``mode: hold``).
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Sequence

import numpy as np
from rosbags.rosbag2 import Reader
from rosbags.rosbag2.errors import ReaderError

from ..simulator.poses import quat_to_rpy
from .errors import BagError
from .messages import typestore
from .spec import ANGLES, GEODETIC, Source, Spec


@dataclass
class History:
    """Transitions of one side (sim or phy); row k is (s[k], a[k], r[k], s2[k])."""

    s: np.ndarray  # (n, d) states
    u: np.ndarray  # (n, m) continuous actions in force at s
    a: np.ndarray  # (n,) discrete action ids
    r: np.ndarray  # (n,) rewards
    s2: np.ndarray  # (n, d) next states
    t: np.ndarray  # (n,) time of s in seconds since the run's first sample
    run: np.ndarray  # (n,) index of the bag the transition came from

    def __len__(self) -> int:
        return len(self.a)

    @classmethod
    def concatenate(cls, parts: Sequence["History"]) -> "History":
        return cls(*(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("s", "u", "a", "r", "s2", "t", "run")))

    def track(self, run: int) -> np.ndarray:
        """The sampled states of one run, ``(n + 1, d)``."""
        rows = self.run == run
        return np.vstack([self.s[rows], self.s2[rows][-1:]])


def read_histories(paths: Sequence[str | Path], spec: Spec) -> History:
    """Read several bags (one run each) into one history; raises BagError naming the bag."""
    if not paths:
        raise BagError("no bags given")
    parts = [read_history(p, spec) for p in paths]
    for i, part in enumerate(parts):
        part.run[:] = i
    return History.concatenate(parts)


def read_history(path: str | Path, spec: Spec) -> History:
    """Read one bag into a history of transitions between consecutive samples."""
    bag = str(path)
    series = _read_topics(Path(path), spec)
    core = [*spec.state, *spec.action]
    start = max(int(series[s.topic][0][0]) for s in core)
    stop = min(int(series[s.topic][0][-1]) for s in core)
    period = int(round(1e9 / spec.rate_hz))
    grid = np.arange(start, stop + 1, period, dtype=np.int64)
    if len(grid) < 2:
        raise BagError(f"the state and action topics overlap for {(stop - start) / 1e9:.3f} s, "
                       f"less than one sampling period ({period / 1e9:g} s)", bag=bag)
    states = np.stack([_sample(series[s.topic], s, grid, spec.interpolation) for s in spec.state],
                      axis=1)
    u = np.stack([_sample(series[s.topic], s, grid, "hold") for s in spec.action], axis=1)
    rewards = _rewards(series, spec, grid)
    n = len(grid) - 1
    return History(s=states[:-1], u=u[:-1], a=spec.discretise(u[:-1]), r=rewards,
                   s2=states[1:], t=(grid[:-1] - start) / 1e9, run=np.zeros(n, dtype=int))


def _read_topics(path: Path, spec: Spec) -> dict[str, tuple[np.ndarray, dict[Source, np.ndarray]]]:
    """Per topic: receive times (ns) and one value array per source read from it."""
    bag = str(path)
    sources = [*spec.state, *spec.action, *([spec.reward] if spec.reward else [])]
    by_topic: dict[str, list[Source]] = {}
    for src in sources:
        by_topic.setdefault(src.topic, []).append(src)
    store = typestore()
    try:
        reader = Reader(path)
        reader.open()
    except (ReaderError, OSError, ValueError) as exc:
        raise BagError(f"cannot open: {exc}", bag=bag) from exc
    try:
        if reader.message_count == 0:
            raise BagError("the bag is empty", bag=bag)
        conns = {}
        for topic, srcs in by_topic.items():
            found = [c for c in reader.connections if c.topic == topic]
            if not found:
                present = sorted({c.topic for c in reader.connections})
                raise BagError(f"topic missing (bag has {present})",
                               bag=bag, topic=topic, field=srcs[0].field)
            if found[0].msgtype != srcs[0].type:
                raise BagError(f"type mismatch: spec says {srcs[0].type}, bag has "
                               f"{found[0].msgtype}", bag=bag, topic=topic, field=srcs[0].field)
            conns[topic] = found
        times: dict[str, list[int]] = {t: [] for t in by_topic}
        values: dict[Source, list] = {s: [] for s in sources}
        getters = {s: _getter(s) for s in sources}
        wanted = [c for found in conns.values() for c in found]
        for conn, stamp, raw in reader.messages(connections=wanted):
            try:
                msg = store.deserialize_cdr(raw, conn.msgtype)
                extracted = [_scalar(getters[src](msg), src) for src in by_topic[conn.topic]]
            except Exception as exc:  # a message that does not match its declared type
                raise BagError(f"cannot decode a {conn.msgtype} message at t={stamp} ns: "
                               f"{exc}", bag=bag, topic=conn.topic,
                               field=by_topic[conn.topic][0].field) from exc
            times[conn.topic].append(stamp)
            for src, value in zip(by_topic[conn.topic], extracted):
                values[src].append(value)
    finally:
        reader.close()
    out = {}
    for topic, srcs in by_topic.items():
        stamps = np.asarray(times[topic], dtype=np.int64)
        empty_ok = spec.reward is not None and topic == spec.reward.topic and \
            spec.reward_mode == "sum" and all(s is spec.reward for s in srcs)
        if len(stamps) == 0 and not empty_ok:
            raise BagError("topic has no messages", bag=bag, topic=topic, field=srcs[0].field)
        order = np.argsort(stamps, kind="stable")
        out[topic] = (stamps[order], {s: _values(values[s], s)[order] for s in srcs})
    return out


def extract(msg, src: Source) -> float:
    """The value ``src`` reads from one message, as the ingest reads it (a ``rosbags`` message
    or a live ``rclpy`` one: both carry the same field names)."""
    return float(_values([_scalar(_getter(src)(msg), src)], src)[0])


def _getter(src: Source):
    """Reads ``src.field`` of a message; an empty field (a geodetic conversion) is the message."""
    return attrgetter(src.field) if src.field else (lambda msg: msg)


def _scalar(value, src: Source) -> float | tuple[float, ...]:
    """A numeric leaf as float; a quaternion as (x, y, z, w), a NavSatFix as (latitude,
    longitude, altitude), converted after reading."""
    if src.convert is None:
        return float(value)
    if src.convert in GEODETIC:
        return (value.latitude, value.longitude, value.altitude)
    return (value.x, value.y, value.z, value.w)


def _values(raw: list, src: Source) -> np.ndarray:
    if src.convert is None:
        return np.asarray(raw, dtype=float)
    if src.convert in GEODETIC:  # through the spec's named origin (pymap3d)
        from ..simulator.geodesy import geodetic_to_enu

        lla = np.asarray(raw, dtype=float).reshape(-1, 3)
        return geodetic_to_enu(*lla.T, src.origin)[GEODETIC.index(src.convert)]
    rpy = quat_to_rpy(np.asarray(raw, dtype=float).reshape(-1, 4))
    return rpy[:, ANGLES.index(src.convert)]


def _sample(topic_series, src: Source, grid: np.ndarray, interpolation: str) -> np.ndarray:
    stamps, values = topic_series[0], topic_series[1][src]
    if interpolation == "hold" or src.is_bool:
        return values[np.searchsorted(stamps, grid, side="right") - 1]
    ref = grid[0]
    if src.convert not in ANGLES and not src.periodic:
        return np.interp((grid - ref) / 1e9, (stamps - ref) / 1e9, values)
    unwrapped = np.interp((grid - ref) / 1e9, (stamps - ref) / 1e9, np.unwrap(values))
    return (unwrapped + np.pi) % (2 * np.pi) - np.pi


def _rewards(series, spec: Spec, grid: np.ndarray) -> np.ndarray:
    n = len(grid) - 1
    if spec.reward is None:
        return np.zeros(n)
    stamps, values = series[spec.reward.topic][0], series[spec.reward.topic][1][spec.reward]
    if spec.reward_mode == "hold":
        idx = np.searchsorted(stamps, grid[1:], side="right") - 1
        return np.where(idx >= 0, values[np.maximum(idx, 0)], 0.0)
    cumulative = np.concatenate([[0.0], np.cumsum(values)])
    upto = cumulative[np.searchsorted(stamps, grid, side="right")]
    return np.diff(upto)
