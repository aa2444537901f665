"""The unloader robot in the embedded engine: joint commands by name, its scripts' state.

:func:`load_truck` loads a truck world (``worlds/truck_*.sdf``); the engine runs the robot's
scripts itself (:mod:`~sim_fidelity.simulator.scripts`: :class:`~.suction.Suction`,
:class:`~.conveyor.Conveyor`), and :class:`Unloader` reads and drives them in process.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..data import data_dir
from ..simulator.engine import MujocoEngine
from ..simulator.protocol import EntityKind
from .conveyor import CONVEYOR_FILENAME, Conveyor
from .suction import SUCTION_FILENAME, Suction

PACKET_PATTERN = re.compile(r"packet_\d+")
SLEEP_TOLERANCE = 0.01  # m/s: resting walls do fall asleep


def world_path(scenario: str) -> Path:
    """``worlds/truck_<scenario>.sdf`` of the repository (or an installed share folder)."""
    return data_dir("worlds") / f"truck_{scenario}.sdf"


class Unloader:
    """Joint commands, joint readings, suction and unload counts of the ``unloader`` model."""

    def __init__(self, engine: MujocoEngine, name: str = "unloader"):
        m = engine.model
        self.engine, self.name = engine, name
        self.plugin_of = {c.joint.split("::")[-1]: p for p, c in engine.controllers.items()
                          if c.joint.startswith(name + "::")}
        self.joints = list(self.plugin_of)
        self.packets = sorted(e for e in engine.entities(EntityKind.MODEL)
                              if PACKET_PATTERN.fullmatch(e))
        self.suction: Suction = engine.scripts.get(name, SUCTION_FILENAME)
        self.conveyor: Conveyor = engine.scripts.get(name, CONVEYOR_FILENAME)
        row = {p: i for i, p in enumerate(self.conveyor.packets)}
        self._rows = np.array([row[p] for p in self.packets], int)  # packets -> conveyor rows
        self.packet_half = np.array(
            [m.geom_size[np.flatnonzero((m.geom_bodyid == b) & engine.index.collision_geom)[0]]
             for b in self.conveyor.packet_body[self._rows]]).reshape(-1, 3)

    def command(self, targets: dict[str, float]) -> None:
        """Position targets of active joints by short name (``arm_lift``, ``drive``, ...)."""
        self.engine.set_joint_commands([self.plugin_of[j] for j in targets], list(targets.values()))

    def positions(self, joints: list[str]) -> np.ndarray:
        return self.engine.joint_positions([f"{self.name}::{j}" for j in joints])

    def suction_on(self, on: bool) -> None:
        self.suction.command(self.engine, on)

    def suction_hold(self) -> None:
        """Close the valves of the cups that hold nothing (see :meth:`.Suction.hold`)."""
        self.suction.hold()

    def held_packets(self) -> np.ndarray:
        """Rows of ``packets`` held by the suction now."""
        return np.flatnonzero(np.isin(self.conveyor.packet_body[self._rows],
                                      self.suction.held_bodies()))

    @property
    def in_truck(self) -> np.ndarray:
        """Per row of ``packets``: not unloaded yet (a read-only copy of the conveyor's mask)."""
        mask = self.conveyor.in_truck[self._rows]
        mask.flags.writeable = False
        return mask

    @property
    def unloaded(self) -> int:
        return self.conveyor.unloaded

    @property
    def time(self) -> float:
        return self.engine.time

    def packet_poses(self, rows: np.ndarray) -> np.ndarray:
        """(n, 7) poses ``x y z qx qy qz qw`` of the packets in ``rows``."""
        return self.engine.get_states([self.packets[i] for i in rows])[0]

    def model_x(self) -> float:
        """x of the robot's model frame in the world."""
        return float(self.engine.get_states([self.name])[0][0, 0])


def load_truck(world: str | Path, sleep: bool = False) -> tuple[MujocoEngine, Unloader]:
    """Engine and robot for a truck world file, or a scenario letter ('A', 'B', 'C')."""
    path = world_path(str(world)) if str(world) in ("A", "B", "C") else Path(world)
    engine = MujocoEngine.from_file(path, sleep=sleep,
                                    sleep_tolerance=SLEEP_TOLERANCE if sleep else None)
    return engine, Unloader(engine)
