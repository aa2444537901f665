"""The SPU's connector model (paper 003, Sec. 4.4): does the DIP connect to the SPU?

It follows the DIP's pose (whoever holds it) and the SPU's (from the main simulation's output)
and compares the DIP's frame with the ideal connection pose (the DIP fully inserted into the
socket). Two cylinders around the connection axis, from the ideal pose upward:

* entering the **capture** cylinder (``capture_radius``, ``capture_length``) emits ``captured``:
  a trigger gives the connector the DIP's ``collision``, so the main physics no longer computes
  the tight fit's contacts; leaving it again (unconnected) emits ``escaped``;
* entering the **connect** cylinder (``connect_radius``, ``connect_length``) emits ``connected``:
  a trigger gives the connector the DIP's ``pose``, which it then holds at the ideal connection
  pose: the DIP is connected (output ``connected``) and stays when the hand lets go.

A DIP let go inside the capture cylinder but not connected is the connector's too (it computes
that DIP's contacts, so it keeps it where it was let go: resting in the socket's mouth, jammed,
``connected`` false); the physics never sees a DIP inside the SPU's geometry.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...simulator import poses as pose_math
from ...world_generators import conductor_scenarios as cs
from ..model import COLLISION, POSE, TWIST, Model, Requirement, RequirementKind, Stepping
from .predicates import within_cylinder

CAPTURE = (0.03, 0.08)  # m: radius, length of the collision cylinder
CONNECT = (0.006, 0.01)  # m: radius, length of the connection cylinder


class ConnectorModel(Model):
    """The SPU's connector; parameters ``spu``/``dip`` (entity names, default ``spu``, ``dip``),
    ``capture_radius``, ``capture_length``, ``connect_radius``, ``connect_length`` (m)."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None):
        super().__init__(name, stepping=stepping, period=period)
        self.spu, self.dip = "spu", "dip"
        self.capture, self.connect = CAPTURE, CONNECT
        self.spu_pose = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
        self.dip_pose = self.spu_pose.copy()
        self.captured = False  # inside the capture cylinder
        self.holds_collision = False
        self.connected = False  # holds the DIP's pose at the ideal pose
        self.resting: np.ndarray | None = None  # holds the DIP's pose where it was let go

    def requires(self) -> Mapping[str, Requirement]:
        optional = {k: Requirement(RequirementKind.VALUE, k, optional=True)
                    for k in ("capture_radius", "capture_length", "connect_radius",
                              "connect_length")}
        return {"spu_pose": Requirement(RequirementKind.POSE, "spu"),
                "dip_pose": Requirement(RequirementKind.POSE, "dip"), **optional}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        self.spu_pose = np.asarray(parameters["spu_pose"], float)
        self.dip_pose = np.asarray(parameters["dip_pose"], float)
        g = {k: parameters.get(k) for k in ("capture_radius", "capture_length",
                                             "connect_radius", "connect_length")}
        self.capture = (float(g["capture_radius"] or CAPTURE[0]),
                        float(g["capture_length"] or CAPTURE[1]))
        self.connect = (float(g["connect_radius"] or CONNECT[0]),
                        float(g["connect_length"] or CONNECT[1]))

    def represents(self) -> Mapping[str, frozenset[str]]:
        return {self.dip: frozenset((POSE, TWIST, COLLISION))}

    def ideal_pose(self) -> np.ndarray:
        """The DIP's pose when connected (fully inserted into the socket)."""
        return pose_math.compose(self.spu_pose, np.r_[cs.spu_connection_offset(), 0, 0, 0, 1.0])

    # --- time --------------------------------------------------------------------------------
    def read(self, model: str, output: Mapping[str, Any]) -> None:
        pose = (output.get("poses") or {}).get(self.spu)
        if pose is not None:
            self.spu_pose = np.asarray(pose, float)

    def step(self, dt: float) -> None:
        if self.connected or self.resting is not None:
            return
        captured = within_cylinder(self.dip_pose, self.spu_pose, *self.capture)
        if captured and not self.captured:
            self.emit("captured", {"entity": self.dip})
        elif self.captured and not captured:
            self.emit("escaped", {"entity": self.dip})
        self.captured = captured
        if captured and within_cylinder(self.dip_pose, self.spu_pose, *self.connect):
            self.emit("connected", {"entity": self.dip})

    # --- responsibility ----------------------------------------------------------------------
    def value(self, entity: str, attribute: str) -> Any:
        if entity != self.dip:
            return super().value(entity, attribute)
        if attribute == POSE:
            if self.connected:
                return self.ideal_pose()
            return (self.resting if self.resting is not None else self.dip_pose).copy()
        if attribute == TWIST:
            return np.zeros(6)
        return True  # the connector computes the DIP's contacts with the SPU (none escape)

    def follow(self, entity: str, attribute: str, value: Any) -> None:
        if entity == self.dip and attribute == POSE:
            self.dip_pose = np.asarray(value, float).copy()

    def take(self, entity: str, attribute: str, value: Any) -> None:
        if attribute == POSE:
            pose = np.asarray(value, float)
            self.connected = within_cylinder(pose, self.spu_pose, *self.connect)
            self.resting = None if self.connected else pose.copy()
        elif attribute == COLLISION:
            self.holds_collision = True

    def release(self, entity: str, attribute: str) -> None:
        if attribute == POSE:
            self.connected, self.resting = False, None
        elif attribute == COLLISION:
            self.holds_collision = False

    def output(self) -> Mapping[str, Any]:
        out: dict[str, Any] = {"connected": self.connected, "captured": self.captured,
                               "holds_collision": self.holds_collision}
        if self.connected or self.resting is not None:
            out["poses"] = {self.dip: self.value(self.dip, POSE)}
        return out
