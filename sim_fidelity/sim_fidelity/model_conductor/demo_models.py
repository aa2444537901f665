"""Small Python models for examples, tests and ``simfid bench stepping``.

* :class:`Carrier`: a simulation that, while it holds an entity's pose, moves it at a constant
  velocity (a hand carrying an object, reduced to its kinematics), optionally slowly;
* :class:`Integrator`: a simulation with a deliberately slow step (it sleeps ``cost`` wall
  seconds, like a model waiting for its own computation elsewhere); its state is the time it
  has integrated, which shows whether it kept lock step;
* :class:`ProximityMonitor`: an observer reporting whether any entity is within ``distance`` of a
  reference entity (a grasp monitor's stand-in), and emitting ``near``/``far`` events.
"""
from __future__ import annotations

import time as _time
from collections.abc import Mapping
from typing import Any

import numpy as np

from .model import POSE, TWIST, Model, Observer, Requirement, RequirementKind, Stepping


class Carrier(Model):
    """Holds the pose and twist of ``entities`` when given them, moving each at ``velocity``;
    each step sleeps ``cost`` seconds (a deliberately slow model)."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, entities: tuple[str, ...] = (),
                 velocity: tuple[float, float, float] = (0.0, 0.0, 0.0), cost: float = 0.0):
        super().__init__(name, stepping=stepping, period=period)
        self.entities = tuple(entities)
        self.velocity = np.asarray(velocity, float)
        self.cost = cost
        self._pose: dict[str, np.ndarray] = {}
        self._held: set[str] = set()

    def requires(self) -> Mapping[str, Requirement]:
        return {"entities": Requirement(RequirementKind.VALUE, "entities", optional=True),
                "velocity": Requirement(RequirementKind.VALUE, "velocity", optional=True),
                "cost": Requirement(RequirementKind.VALUE, "cost", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        if parameters.get("entities"):
            self.entities = tuple(parameters["entities"])
        if parameters.get("velocity") is not None:
            self.velocity = np.asarray(parameters["velocity"], float).reshape(3)
        if parameters.get("cost") is not None:
            self.cost = float(parameters["cost"])
        self._pose = {e: np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0] for e in self.entities}

    def represents(self) -> Mapping[str, frozenset[str]]:
        return {e: frozenset((POSE, TWIST)) for e in self.entities}

    def step(self, dt: float) -> None:
        if self.cost > 0:
            _time.sleep(self.cost)
        for e in self._held:
            self._pose[e][:3] += self.velocity * dt

    def value(self, entity: str, attribute: str) -> Any:
        if attribute == POSE:
            return self._pose[entity].copy()
        if attribute == TWIST:
            return np.r_[self.velocity if entity in self._held else np.zeros(3), np.zeros(3)]
        return super().value(entity, attribute)

    def follow(self, entity: str, attribute: str, value: Any) -> None:
        if attribute == POSE:
            self._pose[entity] = np.asarray(value, float).copy()

    def take(self, entity: str, attribute: str, value: Any) -> None:
        if attribute == POSE:
            self._pose[entity] = np.asarray(value, float).copy()
            self._held.add(entity)

    def release(self, entity: str, attribute: str) -> None:
        if attribute == POSE:
            self._held.discard(entity)

    def output(self) -> Mapping[str, Any]:
        return {"poses": {e: self._pose[e].copy() for e in self._held},
                "carrying": sorted(self._held)}


class Integrator(Model):
    """A model whose step sleeps ``cost`` seconds of wall time (holding no lock other threads
    need); :attr:`integrated` is the simulated time it has stepped."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, cost: float = 0.0):
        super().__init__(name, stepping=stepping, period=period)
        self.cost = cost
        self.integrated = 0.0
        self.stamps: list[float] = []  # the latest data stamp it had seen at each step
        self._stamp = float("nan")

    def requires(self) -> Mapping[str, Requirement]:
        return {"cost": Requirement(RequirementKind.VALUE, "cost", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        if parameters.get("cost") is not None:
            self.cost = float(parameters["cost"])

    def step(self, dt: float) -> None:
        if self.cost > 0:
            _time.sleep(self.cost)
        self.integrated += dt
        self.stamps.append(self._stamp)

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        if "stamp" in message:
            self._stamp = float(message["stamp"])

    def output(self) -> Mapping[str, Any]:
        return {"integrated": self.integrated}


class ProximityMonitor(Observer):
    """Is any of ``candidates`` (default: every entity the ensemble knows) within ``distance``
    of ``reference``? Output ``{"near": bool, "object": name or None}``; emits ``near`` and
    ``far`` when that changes. Needs the poses: it reads the outputs of the other models."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None, reference: str = "", distance: float = 0.1):
        super().__init__(name, stepping=stepping, period=period)
        self.reference, self.distance = reference, distance
        self._poses: dict[str, np.ndarray] = {}
        self.near: str | None = None

    def requires(self) -> Mapping[str, Requirement]:
        return {"reference": Requirement(RequirementKind.VALUE, "reference", optional=True),
                "distance": Requirement(RequirementKind.VALUE, "distance", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        if parameters.get("reference"):
            self.reference = str(parameters["reference"])
        if parameters.get("distance") is not None:
            self.distance = float(parameters["distance"])

    def read(self, model: str, output: Mapping[str, Any]) -> None:
        for entity, pose in (output.get("poses") or {}).items():
            self._poses[entity] = np.asarray(pose, float)

    def step(self, dt: float) -> None:
        ref = self._poses.get(self.reference)
        found = None
        if ref is not None:
            others = [(e, p) for e, p in self._poses.items() if e != self.reference]
            if others:
                names, poses = zip(*others)
                d = np.linalg.norm(np.asarray(poses)[:, :3] - ref[:3], axis=1)
                if d.min() <= self.distance:
                    found = names[int(d.argmin())]
        if found != self.near:
            self.emit("near" if found else "far", {"object": found or self.near})
        self.near = found

    def output(self) -> Mapping[str, Any]:
        return {"near": self.near is not None, "object": self.near}
