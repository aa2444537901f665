"""A simulation-based planner over the unloading controller's actions (paper 000, Sec. 5.3, Fig. 8).

At each decision of the executed run, the options are picks at the controller's best candidates
and a sweep (:func:`~.actions.options`). Under a fixed wall-clock budget, the planner samples action
sequences from the decision's state (:meth:`~sim_fidelity.simulator.Simulator.snapshot`, restored
on a look-ahead engine of the same world): each begins with one of the options, in turn in the
controller's order, and goes on with random options up to ``depth`` actions; every sequence gets a
fresh controller noise (target jitter, dwell times: a particle of what the same commands may do)
and its value is the packets it removed per second of sim time. Every simulated action is a node.
The option with the best mean value is executed; options the budget left unexplored are not
chosen, so a budget of one node gives the controller's own choice. The first sequence always runs,
whatever the budget; a decision with one option (a sweep) is not planned. A sequence whose physics
diverged (:class:`~.actions.Outcome`) ends there and gives no value (its nodes count); when every
sequence of a decision diverged, the controller's own choice is taken. A divergence in the
executed run ends it there (:attr:`Strategy.diverged`), as it ends a ``simfid bench truck`` run.

The look-ahead runs in HiFi or with a fidelity manager (AdFi-1: one per simulated action, every
packet HIGH at its start); the executed actions always run in HiFi, on their own engine.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..fidelity_manager import FidelityConfig
from ..simulator.snapshot import Snapshot
from .actions import MAX_ACTION_S, Action, DirectedController, Outcome, Rollouts, options
from .errors import TruckError
from .robot import load_truck


@dataclass(frozen=True)
class Decision:
    """What one planning step explored and chose."""

    time: float  # sim time of the decision
    chosen: Action
    nodes: int  # simulated actions
    sequences: int
    wall: float
    values: dict[str, tuple[float, int]] = field(default_factory=dict)  # option: (mean, count)
    diverged: int = 0  # sequences whose physics diverged (no value)


class Planner:
    """Plans on a look-ahead engine of ``world`` in ``preset``, ``budget`` wall seconds per
    decision."""

    def __init__(self, world: str | Path, preset: str, config: FidelityConfig, budget: float,
                 depth: int = 2, max_picks: int = 3, seed: int = 0,
                 max_action: float = MAX_ACTION_S):
        if depth < 1 or max_picks < 1 or budget < 0:
            raise TruckError(f"planner: need depth >= 1, max_picks >= 1 and budget >= 0; got "
                             f"{depth}, {max_picks}, {budget}")
        engine, robot = load_truck(world)
        self.rollouts = Rollouts(engine, robot, config, preset, max_action)
        self.budget, self.depth, self.max_picks = budget, depth, max_picks
        self.rng = np.random.default_rng(seed)

    def decide(self, state: Snapshot, controller: DirectedController) -> Decision:
        """The option to take from ``state`` (a snapshot of the executed world at the decision
        ``controller`` is at); InvalidOperationError from the restore when the worlds differ."""
        roots = options(controller, self.max_picks)
        if not roots:
            raise TruckError("planner: no option at this decision (nothing in front of the robot)")
        if len(roots) == 1:  # no choice: nothing to plan
            return Decision(controller.robot.time, roots[0], 0, 0, 0.0)
        start = time.perf_counter()
        values: dict[Action, list[float]] = {a: [] for a in roots}
        nodes = sequences = diverged = 0
        while sequences == 0 or time.perf_counter() - start < self.budget:
            root = roots[sequences % len(roots)]
            done = self._sequence(state, controller, root, start)
            if done[-1].diverged:
                diverged += 1
            else:
                values[root].append(sum(o.removed for o in done)
                                    / max(sum(o.sim_time for o in done), 1e-9))
            nodes += len(done)
            sequences += 1
        explored = [a for a in roots if values[a]] or roots[:1]
        chosen = max(explored, key=lambda a: (np.mean(values[a] or [0.0]), -roots.index(a)))
        return Decision(controller.robot.time, chosen, nodes, sequences,
                        time.perf_counter() - start,
                        {str(a): (float(np.mean(v)), len(v)) for a, v in values.items() if v},
                        diverged)

    def _sequence(self, state: Snapshot, controller: DirectedController, root: Action,
                  start: float) -> list[Outcome]:
        """One sampled sequence beginning with ``root``: its actions' outcomes."""
        ahead = self.rollouts.fork(controller)
        ahead.rng = np.random.default_rng(self.rng.integers(2**63))
        done = [self.rollouts.run(ahead, root, state)]
        while (len(done) < self.depth and not done[-1].diverged
               and time.perf_counter() - start < self.budget):
            nxt = options(ahead, self.max_picks)
            if not nxt:
                break
            done.append(self.rollouts.run(ahead, nxt[self.rng.integers(len(nxt))]))
        return done


@dataclass(frozen=True)
class Strategy:
    """An executed run: its decisions and what it unloaded."""

    preset: str  # of the look-ahead
    decisions: list[Decision]
    sim_time: float
    unloaded: int
    removed: int
    wall: float
    diverged: str = ""  # where the executed run's physics diverged (the run ended there)

    @property
    def nodes(self) -> int:
        return sum(d.nodes for d in self.decisions)

    @property
    def rate_per_hour(self) -> float:
        return 3600.0 * self.unloaded / max(self.sim_time, 1e-9)


def execute(world: str | Path, planner: Planner, duration: float, config: FidelityConfig,
            seed: int = 0, progress=None) -> Strategy:
    """Run ``duration`` sim seconds of ``world`` in HiFi, every action chosen by ``planner``
    (an action under way when the time is up is finished)."""
    engine, robot = load_truck(world)
    executed = Rollouts(engine, robot, config, "hifi", planner.rollouts.max_action)
    controller = DirectedController(robot, seed)
    decisions: list[Decision] = []
    start = time.perf_counter()
    removed, diverged = 0, ""
    while engine.time < duration and not diverged:
        roots = options(controller, planner.max_picks)
        if not roots:
            break
        decision = planner.decide(engine.snapshot(), controller)
        decisions.append(decision)
        outcome = executed.run(controller, decision.chosen)
        removed, diverged = removed + outcome.removed, outcome.diverged
        if progress is not None:
            progress(decision, engine.time)
    return Strategy(planner.rollouts.preset, decisions, engine.time, robot.unloaded, removed,
                    time.perf_counter() - start, diverged)
