"""What a MuJoCo user would try before island threads: many copies of a world stepped at once.

``mujoco.rollout`` steps a batch of independent worlds (same model, own states) on a thread pool
of its own. It does not make *one* world faster; it raises throughput when many are wanted
(parameter sweeps, reality-gap roll-outs). Measured here as world-steps per second against a plain
Python loop over the same copies, on the same model and initial state.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import mujoco
import numpy as np
from mujoco import rollout

from ..simulator.engine import MujocoEngine
from ..simulator.sdf import load_world
from .stats import TimingError


@dataclass(frozen=True)
class Throughput:
    """World-steps per second for ``worlds`` copies stepped ``steps`` times on ``threads``."""

    threads: int  # 0: a serial Python loop of mj_step
    worlds: int
    steps: int
    seconds: float
    steps_per_second: float

    def as_dict(self) -> dict:
        return asdict(self)


def rollout_throughput(world: Path, worlds: int, steps: int,
                       threads: list[int]) -> list[Throughput]:
    """World-steps per second of ``worlds`` copies of ``world`` for each thread count (0 = a
    serial loop; k >= 1: ``mujoco.rollout`` with k threads)."""
    if worlds < 1 or steps < 1:
        raise TimingError(f"need worlds >= 1 and steps >= 1, got {worlds}, {steps}")
    engine = MujocoEngine(load_world(world))
    m = engine.model
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, engine.data, state0, spec)
    initial = np.tile(state0, (worlds, 1))
    out = []
    for k in threads:
        if k == 0:
            datas = [mujoco.MjData(m) for _ in range(worlds)]
            for d in datas:
                mujoco.mj_setState(m, d, state0, spec)
            t0 = time.perf_counter()
            for d in datas:
                for _ in range(steps):
                    mujoco.mj_step(m, d)
            dt = time.perf_counter() - t0
        else:
            datas = [mujoco.MjData(m) for _ in range(k)]
            with rollout.Rollout(nthread=k) as runner:
                t0 = time.perf_counter()
                runner.rollout(m, datas, initial, nstep=steps)
                dt = time.perf_counter() - t0
        out.append(Throughput(k, worlds, steps, dt, worlds * steps / dt))
    return out
