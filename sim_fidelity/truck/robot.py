"""The unloader robot in the embedded engine: its scripts as step hooks, joint commands by name.

:func:`load_truck` loads a truck world (``worlds/truck_*.sdf``), allocates the suction welds,
compiles the engine, keeps the robot awake under MuJoCo sleeping, and wires the robot's scripts
(:class:`~.suction.Suction`, :class:`~.conveyor.Conveyor`) into ``engine.step_hooks``.
"""
from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np

from ..data import data_dir
from ..simulator.engine import MujocoEngine
from ..simulator.protocol import EntityKind
from ..simulator.sdf import load_world
from .conveyor import Conveyor
from .suction import Suction, add_suction_welds

PACKET_PATTERN = re.compile(r"packet_\d+")
SOLVER_ITERATIONS = 20  # MuJoCo's default 100 only adds cost when the tool pushes into a wall
LINESEARCH_ITERATIONS = 10


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
        packet_bodies = np.array([m.body(f"{p}::link").id for p in self.packets], int)
        self.suction = Suction(engine, packet_bodies)
        drive = m.joint(f"{name}::drive")
        self.conveyor = Conveyor(engine, name, self.packets, int(m.jnt_dofadr[drive.id]))
        engine.step_hooks += [self.suction, self.conveyor]
        trees = np.unique(m.body_treeid[[b for b in range(m.nbody)
                                         if m.body(b).name.startswith(name + "::")]])
        m.tree_sleep_policy[trees[trees >= 0]] = int(mujoco.mjtSleepPolicy.mjSLEEP_NEVER)
        self.packet_half = np.array(
            [m.geom_size[np.flatnonzero((m.geom_bodyid == b) & (m.geom_contype > 0))[0]]
             for b in packet_bodies])

    def command(self, targets: dict[str, float]) -> None:
        """Position targets of active joints by short name (``arm_lift``, ``drive``, ...)."""
        self.engine.set_joint_commands([self.plugin_of[j] for j in targets], list(targets.values()))

    def positions(self, joints: list[str]) -> np.ndarray:
        return self.engine.joint_positions([f"{self.name}::{j}" for j in joints])

    def suction_on(self, on: bool) -> None:
        self.suction.command(self.engine, on)

    @property
    def unloaded(self) -> int:
        return self.conveyor.unloaded


def load_truck(world: str | Path, sleep: bool = False) -> tuple[MujocoEngine, Unloader]:
    """Engine and robot for a truck world file, or a scenario letter ('A', 'B', 'C')."""
    path = world_path(str(world)) if str(world) in ("A", "B", "C") else Path(world)
    loaded = load_world(path)
    add_suction_welds(loaded)
    engine = MujocoEngine(loaded, sleep=sleep, sleep_tolerance=0.01 if sleep else None)
    engine.model.opt.iterations = SOLVER_ITERATIONS
    engine.model.opt.ls_iterations = LINESEARCH_ITERATIONS
    return engine, Unloader(engine)
