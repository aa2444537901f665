"""How a replay drives the simulated robot from a recording's ``/joint_states``.

The arm's joints follow their recorded positions (the world's position servos get them as
targets). The fingers are driven in one of :data:`FINGER_DRIVES`:

* ``effort`` (the default): the recorded finger efforts are applied as joint torques, the finger
  servos switched off (ACTUATION lever), as Rollin' Justin's torque-controlled fingers are
  driven; a finger closes until it meets something and then presses with the recorded torque;
* ``position``: the recorded finger positions are the finger servos' targets (soft servos, the
  ``ur5e_hand3`` model's 4 N m/rad), the drive of every replay before the effort drive existed.

Every method of Table 2 (the ensemble and the three baselines) gets the same drive.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...simulator.engine import MujocoEngine
from ...simulator.protocol import Lever
from ...world_generators import ur5e_hand3 as arm
from ..model import Stepping
from ..simulation_model import SimulatorModel
from . import DEFAULT_FINGER_DRIVE, FINGER_DRIVES

ROBOT = "arm"


def check_finger_drive(drive: str) -> str:
    """``drive`` if it is one of :data:`FINGER_DRIVES`, else a ValueError naming them."""
    if drive not in FINGER_DRIVES:
        raise ValueError(f"finger drive must be one of {', '.join(FINGER_DRIVES)}; got {drive!r}")
    return drive


class ReplayWorld(SimulatorModel):
    """The main simulation of a replay, driving the robot's fingers by ``finger_drive``."""

    def __init__(self, name: str, simulator: MujocoEngine | None = None, *,
                 stepping: Stepping = Stepping.SERVICE, period: float | None = None,
                 finger_drive: str = DEFAULT_FINGER_DRIVE):
        super().__init__(name, simulator, stepping=stepping, period=period)
        self.finger_drive = check_finger_drive(finger_drive)
        self._fingers = arm.finger_joints()
        self._finger_dofs = np.zeros(0, int)
        if simulator is not None and self.finger_drive == "effort":
            self._torque_fingers()

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        loaded = self.sim is None
        super().initialise(parameters)
        if loaded and self.finger_drive == "effort":
            self._torque_fingers()

    def _torque_fingers(self) -> None:
        """Switch the finger servos off; the fingers take torques (within their limit)."""
        joints = [f"{ROBOT}::{j}" for j in self._fingers]
        self.sim.set_lever(joints, Lever.ACTUATION, False)
        self._finger_dofs = np.asarray(
            self.sim.index.joint_addresses(self.sim.model, joints)[1], int)

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        if self.finger_drive == "position" or "name" not in message:
            super().input(topic, message)
            return
        names = list(message["name"])
        fingers = [names.index(j) for j in self._fingers if j in names]
        others = [i for i, n in enumerate(names) if n not in self._fingers]
        positions = np.asarray(message.get("position", ()), float)
        if len(positions) == len(names):
            super().input(topic, {"name": [names[i] for i in others],
                                  "position": positions[others]})
        effort = np.asarray(message.get("effort", ()), float)
        if len(fingers) == len(self._fingers) and len(effort) == len(names):
            limit = arm.FINGER_GAINS[2]
            self.sim.data.qfrc_applied[self._finger_dofs] = np.clip(effort[fingers], -limit,
                                                                    limit)
