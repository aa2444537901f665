"""How a replay drives the simulated robot from a recording's ``/joint_states``.

The arm's joints follow their recorded positions (the world's position servos get them as
targets). The fingers are driven in one of :data:`FINGER_DRIVES`:

* ``impedance`` (the default): the recorded finger efforts are applied as joint torques (feed
  forward) and the finger servos (the ``ur5e_hand3`` model's 4 N m/rad) pull toward the recorded
  positions, as a torque-controlled hand (Rollin' Justin's) plays a trajectory back: where the
  finger is where it was recorded, it presses with the recorded torque; where it is not (the
  object elsewhere, the free hand drifting), the servo corrects. Each part keeps the finger's
  1.5 N m limit, so together they can reach 3 N m;
* ``effort``: the recorded efforts alone, open loop (finger servos off, ACTUATION lever): a finger
  closes until it meets something and presses with the recorded torque, but nothing brings it
  back onto the recorded path (a hand may not open fully where the recording's did);
* ``position``: the recorded finger positions are the finger servos' targets (the drive of every
  replay before the others existed): the servo recreates only part of a squeeze, since a
  recorded angle is the squeezed one.

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
from .grasp import ROBOT


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
        if simulator is not None and self.finger_drive != "position":
            self._take_finger_torques()

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        loaded = self.sim is None
        super().initialise(parameters)
        if loaded and self.finger_drive != "position":
            self._take_finger_torques()

    def _take_finger_torques(self) -> None:
        """The fingers take the recorded torques (within their limit); ``effort`` switches
        their servos off (open loop)."""
        joints = [f"{ROBOT}::{j}" for j in self._fingers]
        if self.finger_drive == "effort":
            self.sim.set_lever(joints, Lever.ACTUATION, False)
        self._finger_dofs = np.asarray(
            self.sim.index.joint_addresses(self.sim.model, joints)[1], int)

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        if self.finger_drive == "position" or "name" not in message:
            super().input(topic, message)
            return
        names = list(message["name"])
        fingers = [names.index(j) for j in self._fingers if j in names]
        servoed = [i for i, n in enumerate(names)
                   if n not in self._fingers or self.finger_drive == "impedance"]
        positions = np.asarray(message.get("position", ()), float)
        if len(positions) == len(names):
            super().input(topic, {"name": [names[i] for i in servoed],
                                  "position": positions[servoed]})
        effort = np.asarray(message.get("effort", ()), float)
        if len(fingers) == len(self._fingers) and len(effort) == len(names):
            limit = arm.FINGER_GAINS[2]
            self.sim.data.qfrc_applied[self._finger_dofs] = np.clip(effort[fingers], -limit,
                                                                    limit)
