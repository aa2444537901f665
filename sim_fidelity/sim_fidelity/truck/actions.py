"""The unloading controller's actions one at a time, for looking ahead (paper 000, Sec. 5.3-5.4).

At each *decision* (the controller has finished an action and would plan the next) the options are a
pick at one of the packets the controller would pick (its ranking: highest, then nearest the centre
line) or a sweep of the floor in front of the wall (:func:`options`, from the controller's own
:meth:`~.controller.UnloadingController.options`). :class:`DirectedController` is the scripted
controller told which action to take next; it stops at the next decision. :class:`Rollouts` runs one
action from a saved state (:meth:`~sim_fidelity.simulator.Simulator.snapshot`) with its own fidelity
manager: a fresh one per action, started with every packet HIGH and closed (every lever back) when
the action ends, which is the paper's refresh before every decision; the HiFi preset runs no manager
at all.

An action's *outcome* counts the packets it removed (unloaded, or riding on the robot on their way
out) and the sim time it took. An action whose physics diverged ends there (the engine has put the
state back where that control period began, every lever is back) and its outcome says so: a
look-ahead drops it, the executed run stops.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from ..fidelity_manager import FidelityConfig, FidelityManager
from ..simulator.engine import MujocoEngine
from ..simulator.errors import SimulationDivergedError
from ..simulator.poses import box_aabbs
from ..simulator.snapshot import Snapshot
from ..world_generators import unloader as geo
from .controller import CONTROL_PERIOD, Move, UnloadingController
from .robot import Unloader

MAX_ACTION_S = 40.0  # s of sim time: an action still running then is cut off
MANAGER_TICK = 0.04  # s of sim time between manager ticks (as the truck benchmark)


@dataclass(frozen=True)
class Action:
    """``pick`` at packet row ``packet``, or ``sweep`` (``packet`` -1)."""

    kind: str
    packet: int = -1

    def __str__(self) -> str:
        return f"pick {self.packet}" if self.kind == "pick" else "sweep"


SWEEP = Action("sweep")


def options(controller: UnloadingController, max_picks: int = 3) -> list[Action]:
    """The actions open now (:meth:`.UnloadingController.options`): picks at the ``max_picks``
    best candidates, then the sweep (none when nothing is left in front of the robot)."""
    opts = controller.options()
    if opts.sweep is None:
        return []
    return [Action("pick", p.packet) for p in opts.picks[:max_picks]] + [SWEEP]


def removed(robot: Unloader) -> int:
    """Packets unloaded or on their way out: riding on the robot behind its base front, their
    bottom above half the belt's height (not those pushed aside onto the floor)."""
    rows = np.flatnonzero(robot.in_truck)
    lo, _ = box_aabbs(robot.packet_poses(rows), robot.packet_half[rows])
    riding = (lo[:, 0] < robot.model_x() + geo.BASE_FRONT) & (lo[:, 2] > geo.BELT_TOP / 2)
    return robot.unloaded + int(riding.sum())


def no_announcement(action: str) -> None:
    """The plungers' signaler observes the extend command: nothing to announce."""


class DirectedController(UnloadingController):
    """The unloading controller doing the action it is told, stopping at the next decision."""

    def __init__(self, robot: Unloader, seed: int = 0):
        super().__init__(robot, no_announcement, seed)
        self.next_action: Action | None = None
        self.at_decision = False

    def start(self, action: Action) -> None:
        """Do ``action`` from the next tick on."""
        self.next_action, self.at_decision = action, False
        self.queue, self.move = [], None

    def _plan(self) -> list[Move]:
        action, self.next_action = self.next_action, None
        if action is None:  # the action is done: a decision is due
            self.at_decision = True
            return [Move("decide", {}, timeout=0.0)]
        opts = self.options()
        if opts.sweep is None:
            return [Move("idle", {}, timeout=0.0, dwell=1.0)]
        if action.kind == "pick" and opts.picks:
            # the packet, or (no longer a candidate) the best one
            chosen = [p for p in opts.picks if p.packet == action.packet]
            return self._pick((chosen or opts.picks)[0])
        self.failed[:] = 0
        return self._sweep(opts.sweep)


@dataclass(frozen=True)
class Outcome:
    """What one action did: packets removed and unloaded meanwhile, sim and wall seconds."""

    action: Action
    removed: int
    unloaded: int
    sim_time: float
    wall: float
    diverged: str = ""  # the engine's message where the physics diverged (the action cut there)

    @property
    def rate(self) -> float:
        """Packets removed per second of sim time."""
        return self.removed / max(self.sim_time, 1e-9)


class Rollouts:
    """Runs actions on ``engine`` from saved states, each with a fresh fidelity manager of
    ``preset`` (``hifi``: none) and cut off after ``max_action`` sim seconds, and counts what
    they removed."""

    def __init__(self, engine: MujocoEngine, robot: Unloader, config: FidelityConfig,
                 preset: str, max_action: float = MAX_ACTION_S):
        self.engine, self.robot, self.config, self.preset = engine, robot, config, preset
        self.max_action = max_action
        self.enabled = config.preset(preset).enabled
        self.steps = max(1, int(round(CONTROL_PERIOD / engine.step_size)))
        self.tick_every = max(1, int(round(MANAGER_TICK / CONTROL_PERIOD)))
        self.sim_seconds = 0.0  # simulated by this object so far
        self.actions = 0

    def fork(self, controller: DirectedController) -> DirectedController:
        """A copy of ``controller`` (at a decision) that drives this object's robot."""
        return copy.deepcopy(controller, {id(controller.robot): self.robot})

    def run(self, controller: DirectedController, action: Action,
            start: Snapshot | None = None, limit: float | None = None) -> Outcome:
        """Restore ``start`` (if given), then do ``action`` until the next decision (at most
        ``max_action``, or ``limit`` if shorter); ``controller`` must drive this object's
        robot."""
        if start is not None:
            self.engine.restore(start)
        t0, wall0 = self.engine.time, time.perf_counter()
        removed0, unloaded0 = removed(self.robot), self.robot.unloaded
        cut = self.max_action if limit is None else min(limit, self.max_action)
        controller.start(action)
        manager = FidelityManager(self.engine, self.config, self.preset) if self.enabled else None
        diverged = ""
        try:
            ticks = 0
            while not controller.at_decision and self.engine.time - t0 < cut - 1e-9:
                controller.tick()
                if controller.at_decision:
                    break
                self.engine.step(self.steps)
                ticks += 1
                if manager is not None and ticks % self.tick_every == 0:
                    manager.tick()
        except SimulationDivergedError as err:
            diverged = str(err)
        finally:
            if manager is not None:
                manager.close()  # every lever back: the state at the next decision is all HIGH
        self.sim_seconds += self.engine.time - t0
        self.actions += 1
        return Outcome(action, removed(self.robot) - removed0, self.robot.unloaded - unloaded0,
                       self.engine.time - t0, time.perf_counter() - wall0, diverged)

    def run_for(self, controller: DirectedController, action: Action, horizon: float,
                start: Snapshot | None = None) -> Outcome:
        """``action``, then the controller's own choice (its first option) at every decision,
        until ``horizon`` sim seconds after the start (every action cut off there); the outcome
        counts what was removed by then, with the first action's own sim time. ``horizon`` 0:
        the action alone (:meth:`run`)."""
        first = self.run(controller, action, start, horizon or None)
        if not horizon or first.diverged:
            return first
        end = self.engine.time - first.sim_time + horizon
        got, unloaded, wall, diverged = first.removed, first.unloaded, first.wall, ""
        while self.engine.time < end - 1e-6 and not diverged:
            nxt = options(controller)
            if not nxt:
                break
            then = self.run(controller, nxt[0], limit=end - self.engine.time)
            got, unloaded, wall = got + then.removed, unloaded + then.unloaded, wall + then.wall
            diverged = then.diverged
        return Outcome(action, got, unloaded, first.sim_time, wall, diverged)
