"""The pick-or-sweep classifier of paper 000 (Sec. 5.4, Table 1), trained from simulation.

Data: at each decision of a run (:mod:`.actions`), the state is saved, a pick is run (the
controller's best candidate) and the packets removed counted, the state is restored, a sweep is run
and counted; the state's :mod:`features <.features>` are labelled with the action that removed more
(a tie goes to the one whose own action took less sim time). A count is taken ``horizon`` sim
seconds after the decision, the action followed by the controller's own choices (0: at the action's
end). The run goes on from the better branch's end (its end state is kept as a snapshot while the
other runs). Decisions where no pick is possible are swept without a sample. Collection stops at a
wall-clock budget. A branch whose physics diverged gives no label: the run goes on from the other
branch (the decision counted in :attr:`Collection.diverged`), or stops when both diverged or the
run itself did. A run whose last ``STALL_SAMPLES`` decisions removed nothing in either branch is
stuck (the controller repeats a state neither action changes; its repeats would fill the set with
copies of one tie): collection goes on with a fresh run of the world, the controller's seed the
next one (:attr:`Collection.stalled` counts those). Several worlds (:func:`collect_worlds`, the
test set) share the budget, one after the other.

Model: a binary logistic regression (scikit-learn, standardised features). Labels of one class train
nothing (:class:`OneClass`): there is no decision to learn. Collected in HiFi and in AdFi-1 (the
look-ahead runs with the fidelity manager, one per action), tested on labels collected in HiFi on
another world.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..fidelity_manager import FidelityConfig
from .actions import MAX_ACTION_S, SWEEP, DirectedController, Outcome, Rollouts, options
from .errors import TruckError
from .features import FEATURES, state_features
from .robot import load_truck

PICK, SWEEP_LABEL = 1, 0
LABELS = {PICK: "pick", SWEEP_LABEL: "sweep"}
HORIZON_S = 0.0  # s of sim time after a decision at which the packets removed are counted
STALL_SAMPLES = 3  # decisions in a row removing nothing in either branch: the run is stuck


class OneClass(TruckError):
    """Every label of a collection is the same action: no classifier can be trained."""

    def __init__(self, collection: "Collection"):
        self.label = LABELS[int(collection.y[0])]
        super().__init__(f"all {len(collection.samples)} labels of {collection.preset} on "
                         f"{collection.world} are '{self.label}': one class, no classifier")


@dataclass(frozen=True)
class Sample:
    """One labelled decision: features, label, both outcomes, and when it was ready (wall
    seconds since its collection began)."""

    features: np.ndarray
    label: int
    pick: Outcome
    sweep: Outcome
    ready: float

    @property
    def tie(self) -> bool:
        """Both actions removed as many packets: the label only says which was quicker."""
        return self.pick.removed == self.sweep.removed

    @property
    def idle(self) -> bool:
        """Neither action removed anything."""
        return self.pick.removed == 0 and self.sweep.removed == 0


@dataclass(frozen=True)
class Collection:
    """The samples of one run and what it cost."""

    preset: str
    world: str
    samples: list[Sample]
    wall: float  # seconds of collection
    sim_time: float  # seconds simulated (both branches of every decision)
    horizon: float = HORIZON_S
    diverged: int = 0  # decisions where the physics of a branch (or of the run) diverged
    stalled: int = 0  # runs found stuck (STALL_SAMPLES decisions removing nothing), each
    # followed by a fresh run

    @property
    def x(self) -> np.ndarray:
        return np.array([s.features for s in self.samples]).reshape(-1, len(FEATURES))

    @property
    def y(self) -> np.ndarray:
        return np.array([s.label for s in self.samples], int)

    def until(self, wall: float) -> "Collection":
        """The samples ready within ``wall`` seconds of collection."""
        return dataclasses.replace(self, samples=[s for s in self.samples if s.ready <= wall],
                                   wall=min(wall, self.wall))

    def decisive(self) -> "Collection":
        """The samples whose actions removed different numbers of packets (ties left out)."""
        return dataclasses.replace(self, samples=[s for s in self.samples if not s.tie])

    @property
    def one_class(self) -> str | None:
        """The label of every sample when there is only one (None: both, or no sample)."""
        labels = np.unique(self.y)
        return LABELS[int(labels[0])] if labels.size == 1 else None


def label(pick: Outcome, sweep: Outcome) -> int:
    """The better action: more packets removed; on a tie, the quicker."""
    if pick.removed != sweep.removed:
        return PICK if pick.removed > sweep.removed else SWEEP_LABEL
    return PICK if pick.sim_time < sweep.sim_time else SWEEP_LABEL


def collect(world: str | Path, preset: str, config: FidelityConfig, budget: float, seed: int = 0,
            max_samples: int | None = None, max_action: float = MAX_ACTION_S,
            horizon: float = HORIZON_S,
            progress: Callable[[Sample], None] | None = None) -> Collection:
    """Label decisions on ``world`` with look-ahead in ``preset`` until ``budget`` wall seconds
    have passed (a decision that has begun is finished) or ``max_samples`` are collected; each
    action's count is taken ``horizon`` sim seconds after the decision (0: at its end)."""
    def fresh_run(controller_seed: int):
        engine, robot = load_truck(world)
        return engine, Rollouts(engine, robot, config, preset, max_action), \
            DirectedController(robot, controller_seed)

    engine, rollouts, controller = fresh_run(seed)
    simulated = 0.0  # by the runs before this one
    samples: list[Sample] = []
    first = 0  # this run's first sample
    diverged = stalled = 0
    start = time.perf_counter()
    while time.perf_counter() - start < budget and len(samples) < (max_samples or np.inf):
        opts = options(controller)
        if not opts:
            break
        if opts[0] == SWEEP:  # nothing to pick: no choice to learn from
            if rollouts.run(controller, SWEEP).diverged:
                diverged += 1
                break
            continue
        x, saved = state_features(controller), engine.snapshot()
        picker = rollouts.fork(controller)
        pick = rollouts.run_for(picker, opts[0], horizon)
        after_pick = engine.snapshot()
        sweeper = rollouts.fork(controller)
        sweep = rollouts.run_for(sweeper, SWEEP, horizon, saved)
        held = [o for o in (pick, sweep) if not o.diverged]
        if len(held) < 2:  # no label
            diverged += 1
            if not held:
                break
        y = label(pick, sweep) if len(held) == 2 else PICK if held[0] is pick else SWEEP_LABEL
        if y == PICK:  # go on from the better action's end (or the one that held)
            engine.restore(after_pick)
            controller = picker
        else:
            controller = sweeper
        if len(held) < 2:
            continue
        samples.append(Sample(x, y, pick, sweep, time.perf_counter() - start))
        if progress is not None:
            progress(samples[-1])
        if len(samples) - first >= STALL_SAMPLES and all(
                s.idle for s in samples[-STALL_SAMPLES:]):  # stuck: a fresh run, the next seed
            stalled, first = stalled + 1, len(samples)
            simulated += rollouts.sim_seconds
            engine, rollouts, controller = fresh_run(seed + stalled)
    return Collection(preset, str(world), samples, time.perf_counter() - start,
                      simulated + rollouts.sim_seconds, horizon, diverged, stalled)


def collect_worlds(worlds: list[str | Path], preset: str, config: FidelityConfig, budget: float,
                   seed: int = 0, **options) -> Collection:
    """One collection over several worlds, one after the other, each with an equal share of what
    is left of ``budget`` (a world that stops early leaves its rest to the next ones; one that
    overruns, finishing a decision begun, takes it from them); ``options`` as :func:`collect`'s,
    for each world. Sample times count from the first world's start."""
    if not worlds:
        raise TruckError("collect_worlds: no world to collect on")
    parts: list[Collection] = []
    samples: list[Sample] = []
    spent = 0.0
    for i, world in enumerate(worlds):
        share = (budget - spent) / (len(worlds) - i)
        part = collect(world, preset, config, share, seed, **options)
        samples += [dataclasses.replace(s, ready=s.ready + spent) for s in part.samples]
        spent += part.wall
        parts.append(part)
    return Collection(preset, ", ".join(str(w) for w in worlds), samples, spent,
                      sum(p.sim_time for p in parts), parts[0].horizon,
                      sum(p.diverged for p in parts), sum(p.stalled for p in parts))


def train(collection: Collection):
    """A fitted classifier of the collection's samples (see the module docstring); TruckError
    without samples, :class:`OneClass` when they all have the same label."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = collection.x, collection.y
    if not len(y):
        raise TruckError(f"no samples collected in {collection.preset} on {collection.world}: "
                         "give a larger budget")
    if collection.one_class:
        raise OneClass(collection)
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(x, y)


def accuracy(model, collection: Collection) -> float:
    """Share of the collection's labels the model predicts (NaN without samples)."""
    if not collection.samples:
        return float("nan")
    return float(np.mean(model.predict(collection.x) == collection.y))
