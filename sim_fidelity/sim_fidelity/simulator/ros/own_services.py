"""``sim_server``'s own services, beside the standard ones: ``~/set_lever``, ``~/get_levers``,
``~/list_entities``, ``~/get_states``, ``~/set_states`` (the fidelity levers and batch state, which
``simulation_interfaces`` lacks), ``~/save_snapshot``, ``~/restore_snapshot``, ``~/drop_snapshot``
(state snapshots, :mod:`.snapshot_store`) and ``~/set_sensor_values``.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from sim_fidelity_interfaces.srv import (
    DropSnapshot,
    GetLevers,
    GetStates,
    ListEntities,
    RestoreSnapshot,
    SaveSnapshot,
    SetLever,
    SetSensorValues,
    SetStates,
)

from ..engine import MujocoEngine
from ..errors import (
    InvalidOperationError,
    InvalidPoseError,
    UnknownEntityError,
    UnsupportedFeatureError,
)
from ..protocol import Lever
from ..sensor_values import SensorValues
from .convert import KIND_CODES, KINDS_OF_CODES
from .lever_guard import LeverGuard
from .publishers import Publishers
from .snapshot_store import MAX_SNAPSHOTS, SnapshotStore
from .stepping import Stepper

Handler = Callable[[Any, Any], None]


class OwnServices:
    """The handlers of our services; ``serve_levers=False`` leaves out all but the sensor values,
    so the server looks like Gazebo's to a client (no levers, no snapshots)."""

    def __init__(self, engine: MujocoEngine, stepper: Stepper, publishers: Publishers,
                 sensor_values: SensorValues, guard: LeverGuard,
                 max_snapshots: int = MAX_SNAPSHOTS):
        self.engine, self.stepper, self.publishers = engine, stepper, publishers
        self.sensor_values, self.guard = sensor_values, guard
        self.snapshots = SnapshotStore(engine, max_snapshots)

    def services(self, serve_levers: bool) -> dict[str, tuple[type, Handler]]:
        """Service name: (type, handler)."""
        out: dict[str, tuple[type, Handler]] = {}
        if serve_levers:
            out = {"~/set_lever": (SetLever, self.set_lever),
                   "~/get_levers": (GetLevers, self.get_levers),
                   "~/list_entities": (ListEntities, self.list_entities),
                   "~/get_states": (GetStates, self.get_states),
                   "~/set_states": (SetStates, self.set_states),
                   "~/save_snapshot": (SaveSnapshot, self.save_snapshot),
                   "~/restore_snapshot": (RestoreSnapshot, self.restore_snapshot),
                   "~/drop_snapshot": (DropSnapshot, self.drop_snapshot)}
        out["~/set_sensor_values"] = (SetSensorValues, self.set_sensor_values)
        return out

    def set_lever(self, req, res) -> None:
        lever, names = Lever.of(req.lever), list(req.entities)
        res.failed_entities = twice(names)
        if res.failed_entities:
            raise InvalidOperationError(f"entities: named more than once in one request: "
                                        f"{list(res.failed_entities)}")
        res.failed_entities = [n for n in names if not self.engine.has(n)]
        if res.failed_entities:
            raise UnknownEntityError(res.failed_entities[0], f"{len(res.failed_entities)} of the "
                                     f"{len(names)} entities are unknown")
        self.engine.set_lever(names, lever, req.enabled)
        self.guard.record(req.owner, names, lever, req.enabled)

    def get_levers(self, req, res) -> None:
        res.supported_levers = [int(lever) for lever in sorted(self.engine.features().levers)]
        if req.entities:
            res.enabled = self.engine.get_lever(list(req.entities), Lever.of(req.lever),
                                                original=req.original).tolist()

    def list_entities(self, req, res) -> None:
        unknown = [k for k in req.kinds if k not in KINDS_OF_CODES]
        if unknown:
            raise UnsupportedFeatureError(f"unknown kind codes {unknown}: use the KIND_ constants "
                                          "of ListEntities")
        kinds = {KINDS_OF_CODES[k] for k in req.kinds}
        names = self.engine.entities(pattern=req.filter or None)
        infos = [self.engine.entity_info(n) for n in names]
        infos = [i for i in infos if not kinds or i.kind in kinds]
        res.names = [i.name for i in infos]
        res.kinds = [KIND_CODES[i.kind] for i in infos]
        res.parents = [i.parent for i in infos]
        res.static_flags = [i.static for i in infos]
        res.types = [i.type for i in infos]

    def get_states(self, req, res) -> None:
        pose, twist = self.engine.get_states(list(req.entities))
        res.sim_time = self.engine.time
        res.poses, res.twists = pose.ravel(), twist.ravel()

    def set_states(self, req, res) -> None:
        names = list(req.entities)
        n = len(names)
        pose = np.asarray(req.poses, float) if len(req.poses) else None
        twist = np.asarray(req.twists, float) if len(req.twists) else None
        if (pose is not None and pose.size != 7 * n) or (twist is not None and twist.size != 6 * n):
            raise InvalidPoseError(f"{n} entities need {7 * n} pose and {6 * n} twist values, got "
                                   f"{len(req.poses)} and {len(req.twists)}")
        self.engine.set_states(names, poses=None if pose is None else pose.reshape(n, 7),
                               twists=None if twist is None else twist.reshape(n, 6))
        self.stepper.wake()

    def save_snapshot(self, req, res) -> None:
        store = self.snapshots
        res.id, snap = store.save()
        res.sim_time, res.held, res.capacity = snap.time, len(store), store.capacity

    def restore_snapshot(self, req, res) -> None:
        self.stepper.cancel_request("cancelled by a snapshot restore")  # as a reset does
        res.sim_time = self.snapshots.restore(req.id).time
        self.publishers.publish_clock()
        self.stepper.wake()

    def drop_snapshot(self, req, res) -> None:
        self.snapshots.drop(req.id)
        res.held = len(self.snapshots)

    def set_sensor_values(self, req, res) -> None:
        names, values = list(req.names), np.asarray(req.values, float)
        if twice(names):
            raise InvalidOperationError(f"names: named more than once in one request: "
                                        f"{twice(names)}")
        infinite = np.flatnonzero(np.isinf(values))
        if infinite.size:
            i = int(infinite[0])
            raise InvalidOperationError(f"values[{i}] ('{names[i] if i < len(names) else '?'}') "
                                        f"is {values[i]}: give a finite value, or NaN to release "
                                        "the override")
        self.sensor_values.set_sensor_values(names, values)
        self.publishers.publish_sensor_values()  # the new value goes out now, not at the next tick


def twice(names: list[str]) -> list[str]:
    """The names that appear more than once, sorted."""
    return sorted(n for n, count in Counter(names).items() if count > 1)
