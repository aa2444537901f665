"""Timing the physics step of a world under each threading setting (paper 002, section 4.2).

A *mode* says what the threads do: ``islands`` is :class:`IslandParallelEngine`
(independent islands on worker threads; 0 threads = the serial engine, the control), ``pool`` is
MuJoCo's own engine thread pool (``mju_threadpool``: collision detection and the constraint solver
across islands within one ``mj_step``; 0 = no pool). Only the step is timed (``engine.step``, the
``UpdatePhysics`` equivalent), never loading or reading state. Trials run interleaved (trial 1 of
every setting, then trial 2, ...) so that a change in the machine's load spreads over all settings.
One trial of one setting is the sweep function ``physics`` (:func:`trial`): ``simfid bench
physics`` runs the trials here in turn, ``simfid sweep`` runs them on Ray.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import mujoco
import numpy as np

from ..data import data_dir
from ..simulator.engine import MujocoEngine
from ..simulator.parallel import MAX_INTERVAL, IslandParallelEngine
from ..simulator.sdf import load_world
from .stats import TimingError, TrialTimes, trial_times

MODES = ("islands", "pool")


def world_path(name: str) -> Path:
    """``name`` as a file, or ``worlds/<name>.sdf`` of the package."""
    path = Path(name)
    if path.suffix in (".sdf", ".world") or path.exists():
        if not path.is_file():
            raise TimingError(f"no world file '{name}'")
        return path
    path = data_dir("worlds") / f"{name}.sdf"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in data_dir("worlds").glob("*.sdf")))
        raise TimingError(f"no world '{name}' in {path.parent}; worlds: {known}")
    return path


def make_engine(world: Path, mode: str, threads: int) -> MujocoEngine:
    """A fresh engine on ``world`` for one setting, its parts built (not timed)."""
    if threads < 0:
        raise TimingError(f"thread counts must be >= 0, got {threads}")
    if mode == "islands":
        engine = IslandParallelEngine(load_world(world), threads=threads)
        engine.step(0)  # builds the parts
        return engine
    if mode == "pool":
        engine = MujocoEngine(load_world(world))
        if threads:
            mujoco.mju_threadpool(engine.data, threads)
        return engine
    raise TimingError(f"unknown mode '{mode}'; modes: {', '.join(MODES)}")


def time_steps(engine: MujocoEngine, steps: int, batch: int = 1) -> np.ndarray:
    """Seconds per physics step, one value per call of ``engine.step(batch)`` (elapsed / batch).
    Steps the island engine still defers after the last call are run and timed into the last
    call's value."""
    if steps < 1 or batch < 1:
        raise TimingError(f"need steps >= 1 and batch >= 1, got {steps}, {batch}")
    calls = max(1, steps // batch)
    out = np.empty(calls)
    clock = time.perf_counter_ns
    step = engine.step
    for i in range(calls):
        t0 = clock()
        step(batch)
        out[i] = clock() - t0
    if isinstance(engine, IslandParallelEngine):
        t0 = clock()
        engine.run_deferred()
        out[-1] += clock() - t0
    return out * (1e-9 / batch)


def window_calls(batch: int) -> int:
    """Timed calls of ``batch`` steps per statistics window: the island engine's longest chunk
    (``MAX_INTERVAL`` steps), at least one call."""
    return max(1, MAX_INTERVAL // batch)


def trial(world: str | Path, mode: str, threads: int, trial: int, duration: float,
          batch: int = 1) -> dict[str, float]:
    """The sweep function ``physics``: one trial of one setting; the per-trial step-time
    statistics (seconds) and the 1-minute load average before it (``trial`` only numbers it)."""
    engine = make_engine(world_path(str(world)), mode, threads)
    steps = int(round(duration / engine.step_size))
    load = os.getloadavg()[0]
    series = time_steps(engine, steps, batch)
    if isinstance(engine, IslandParallelEngine):
        engine.close()
    return {**asdict(trial_times(series, window_calls(batch))), "load_avg_1min": load}


def run_trials(world: Path, modes: list[str], threads: list[int], trials: int, duration: float,
               batch: int = 1, progress: Callable[[str], None] | None = None
               ) -> tuple[dict[str, dict[int, list[TrialTimes]]], list[float]]:
    """Per mode and thread count, the per-trial statistics; and the 1-minute load average seen
    before each trial (the machine is shared)."""
    if trials < 1 or duration <= 0:
        raise TimingError(f"need trials >= 1 and duration > 0, got {trials}, {duration}")
    from ..sweep.functions import call

    out: dict[str, dict[int, list[TrialTimes]]] = {m: {k: [] for k in threads} for m in modes}
    loads = []
    for n in range(trials):
        for mode in modes:
            for k in threads:
                row = call("physics", {"world": str(world), "mode": mode, "threads": k,
                                       "trial": n, "duration": duration, "batch": batch})
                loads.append(row.pop("load_avg_1min"))
                out[mode][k].append(TrialTimes(**row))
                if progress:
                    progress(f"trial {n + 1}/{trials} {mode} {k} threads: mean "
                             f"{row['mean'] * 1e3:.4f} ms, min {row['min'] * 1e3:.4f} ms")
    return out, loads
