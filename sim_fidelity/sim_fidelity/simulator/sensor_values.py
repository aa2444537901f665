"""Settable scalar sensor values: sensors a world declares, the simulation computes, and a
manager (the reality-gap kernel manager) may override.

A world declares one as a ``custom`` sensor on a link with a ``<sim_fidelity:value>`` element::

    <sensor name="terrain" type="custom">
      <topic>/robot/terrain</topic>
      <sim_fidelity:value type="bool" default="0">
        <region value="1">2 -1 -1 3 1 1</region>   <!-- min xyz, max xyz in the world frame -->
      </sim_fidelity:value>
    </sensor>

The computed value is the ``value`` of the first region that holds the sensor's origin (its link
pose composed with the sensor ``<pose>``), else ``default``; without regions it is a constant.
``type`` is ``bool`` (published as ``std_msgs/Bool``) or ``double`` (``std_msgs/Float64``).
An override holds until it is replaced or released (NaN): the value in force is the override
where there is one, the computed value elsewhere. Gazebo ignores a ``custom`` sensor it has no
plugin for, so the same world still loads there.

The table also takes the settable values of the world's IMUs (``<imu sensor>/pitch``,
:mod:`.vehicle_sensors`) when given their sensors, so one request (``sim_server``'s
``~/set_sensor_values``) sets either kind.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from . import poses
from .errors import InvalidOperationError, SdfError, UnknownEntityError
from .sdf.records import LoadedWorld
from .sdf.xmltree import parse

ELEMENT = "sim_fidelity:value"
KINDS = ("bool", "double")


class SensorValueSetter(Protocol):
    """Anything that overrides sensor values: :class:`SensorValues`, ``RosSimulator``."""

    def set_sensor_values(self, names: Sequence[str], values: Sequence[float]) -> None:
        """Override each named sensor's value; NaN releases the override."""


@dataclass(frozen=True)
class ValueSensor:
    """One declared scalar sensor."""

    name: str  # scoped: model::link::sensor
    link: str  # scoped link the sensor is on
    pose: np.ndarray  # (7,) sensor frame in the link frame, xyzw
    topic: str
    kind: str  # bool | double
    default: float
    lo: np.ndarray  # (k, 3) region minimum corners, world frame
    hi: np.ndarray  # (k, 3) region maximum corners
    inside: np.ndarray  # (k,) value inside each region


def value_sensors(world: LoadedWorld) -> list[ValueSensor]:
    """The value sensors a loaded world declares; a malformed declaration raises SdfError."""
    found = []
    for name, rec in world.sensors.items():
        if rec.type != "custom" or ELEMENT not in rec.xml:
            continue
        decl = parse(rec.xml, world.source).find(ELEMENT)
        if decl is None:
            continue

        def fail(msg: str, sensor: str = name) -> SdfError:
            return SdfError(f"sensor '{sensor}': {msg}", file=world.source, element=ELEMENT)

        kind = decl.get("type", "double")
        if kind not in KINDS:
            raise fail(f"type must be one of {KINDS}, got '{kind}'")
        if any(c.tag != "region" for c in decl.children):
            raise fail("only <region> elements are allowed")
        try:
            default = float(decl.get("default", "0"))
            regions = [(np.array(r.text.split(), float), float(r.get("value", "1")))
                       for r in decl.findall("region")]
        except ValueError as e:
            raise fail(f"not a number: {e}") from None
        bad = [i for i, (box, _) in enumerate(regions)
               if box.shape != (6,) or np.any(box[:3] > box[3:])]
        if bad:
            raise fail(f"region {bad[0]} must be 'xmin ymin zmin xmax ymax zmax' with min <= max")
        boxes = np.array([b for b, _ in regions], float).reshape(-1, 6)
        found.append(ValueSensor(name, rec.parent, np.asarray(rec.pose, float),
                                 rec.topic or "/" + name.replace("::", "/"), kind, default,
                                 boxes[:, :3], boxes[:, 3:],
                                 np.array([v for _, v in regions], float)))
    return found


class SensorValues:
    """The value table of one engine: computed values, overrides, the values in force.

    ``engine`` is anything with ``world`` (a LoadedWorld) and ``get_states(links)`` — the
    in-process MuJoCo engine. ``vehicle`` returns the engine's current
    :class:`~.vehicle_sensors.VehicleSensors` (the server replaces it when sensors come and go),
    whose settable IMU values :meth:`set_sensor_values` also takes.
    """

    def __init__(self, engine, vehicle: Callable[[], object] | None = None):
        self.engine = engine
        self.vehicle = vehicle
        self.sensors = value_sensors(engine.world)
        self.names = [s.name for s in self.sensors]
        self._index = {n: i for i, n in enumerate(self.names)}
        self._links = list(dict.fromkeys(s.link for s in self.sensors))
        self._link_of = np.array([self._links.index(s.link) for s in self.sensors], int)
        self._pose = np.array([s.pose for s in self.sensors], float).reshape(-1, 7)
        self.overrides = np.full(len(self.sensors), np.nan)
        # all regions of all sensors, for one vectorised test
        self._owner = np.concatenate([np.full(len(s.inside), i) for i, s in
                                      enumerate(self.sensors)] or [np.zeros(0)]).astype(int)
        self._lo = np.concatenate([s.lo for s in self.sensors] or [np.zeros((0, 3))])
        self._hi = np.concatenate([s.hi for s in self.sensors] or [np.zeros((0, 3))])
        self._inside = np.concatenate([s.inside for s in self.sensors] or [np.zeros(0)])
        self._default = np.array([s.default for s in self.sensors], float)

    def __len__(self) -> int:
        return len(self.sensors)

    def positions(self) -> np.ndarray:
        """World positions of the sensor origins, ``(n, 3)``."""
        if not self.sensors:
            return np.zeros((0, 3))
        link_pose = self.engine.get_states(self._links)[0][self._link_of]
        return poses.compose(link_pose, self._pose)[:, :3]

    def computed(self) -> np.ndarray:
        """The values the simulation computes now, ignoring overrides, ``(n,)``."""
        return self.computed_at(self.positions())

    def computed_at(self, positions: np.ndarray) -> np.ndarray:
        """The values computed for sensor origins at ``positions`` ``(n, 3)`` (a step hook
        that already knows where the sensors are skips the pose query)."""
        p = np.asarray(positions, float)[self._owner]
        hit = np.flatnonzero(((p >= self._lo) & (p <= self._hi)).all(axis=1))[::-1]
        out = self._default.copy()
        out[self._owner[hit]] = self._inside[hit]  # reversed: the first region holding it wins
        return out

    def values(self) -> np.ndarray:
        """The values in force: the override where there is one, else the computed value."""
        return self.values_at(self.positions())

    def values_at(self, positions: np.ndarray) -> np.ndarray:
        """The values in force for sensor origins at ``positions`` ``(n, 3)``."""
        return np.where(np.isnan(self.overrides), self.computed_at(positions), self.overrides)

    def value(self, name: str) -> float:
        return float(self.values()[self.index(name)])

    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise UnknownEntityError(name, f"not a value sensor (declared: {self.names})") from None

    def set_sensor_values(self, names: Sequence[str], values: Sequence[float]) -> None:
        """Override the named sensors (bool sensors store 0/1); NaN releases an override. An
        unknown name or a count mismatch changes nothing."""
        names, values = list(names), np.asarray(values, float).reshape(-1)
        if len(names) != len(values):
            raise InvalidOperationError(f"{len(names)} names but {len(values)} values")
        vehicle = self.vehicle() if self.vehicle is not None else None
        settable = vehicle.settable if vehicle is not None else []
        for n in names:
            if n not in self._index and n not in settable:
                raise UnknownEntityError(n, f"not a value sensor or a settable IMU value (value "
                                         f"sensors: {self.names}; IMU values: {settable})")
        theirs = [k for k, n in enumerate(names) if n not in self._index]
        if theirs:
            vehicle.set_sensor_values([names[k] for k in theirs], values[theirs])
        for n, v in zip(names, values):
            if n in self._index:
                i = self._index[n]
                self.overrides[i] = v if math.isnan(v) or self.sensors[i].kind == "double" \
                    else float(v >= 0.5)

    def release_all(self) -> None:
        self.overrides[:] = np.nan
