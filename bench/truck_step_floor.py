"""Where a physics step of truck B goes, and the floor under it (issue 23): the robot alone
against B in ``hifi-sleep`` and ``adfi-3-sleep``, in one process.

1. **The robot alone**: truck B's world without its packets (ground, trailer, robot), the
   controller driving, sleep off and on: what no fidelity rule can take away.
2. **Per window**: each mode run from t = 0 with the manager ticked as ``simfid bench truck``
   ticks it; per 2 s of sim time the mean thread CPU of one control period (10 physics steps)
   beside MuJoCo's counts (trees and DoFs awake, contacts, constraint rows).
3. **At rest**: each mode run to ``--rest`` s (robot still, nothing touching), then ``--steps``
   steps three ways: ``MujocoEngine.step(10)`` (hooks and the divergence guard included), the
   same without the step hooks, and bare ``mj_step``.

Thread CPU time (``time.thread_time``); ratios within one run only. Not a test.

    .venv/bin/python bench/truck_step_floor.py [--duration 20] [--rest 4] [--steps 3000]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from sim_fidelity.fidelity_manager import FidelityManager  # noqa: E402
from sim_fidelity.truck.bench import TICK_PERIOD, ManagerMeter, truck_config  # noqa: E402
from sim_fidelity.truck.controller import CONTROL_PERIOD, DECISION_SETTLE, UnloadingController  # noqa: E402
from sim_fidelity.truck.robot import load_truck  # noqa: E402
from sim_fidelity.world_generators.truck import world_sdf  # noqa: E402

MODES = ("hifi-sleep", "adfi-3-sleep")


def robot_alone(duration: float) -> None:
    """Thread CPU per control period of the robot in B's world without packets."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "robot_alone.sdf"
        path.write_text(world_sdf("robot_alone", ""))
        for sleep in (False, True):
            sim, robot = load_truck(path, sleep=sleep)
            controller = UnloadingController(robot, seed=0)
            steps = max(1, round(CONTROL_PERIOD / sim.step_size))
            cpu, periods = 0.0, 0
            while sim.time < duration - 1e-9:
                controller.tick()
                c0 = time.thread_time()
                sim.step(steps)
                cpu += time.thread_time() - c0
                periods += 1
            print(f"robot alone, sleep {'on ' if sleep else 'off'}: nv {sim.model.nv}, "
                  f"{1e3 * cpu / periods:.2f} ms CPU per control period ({steps} steps)")


class Run:
    """B in one mode, its manager ticked every TICK_PERIOD as the truck bench does."""

    def __init__(self, mode: str):
        preset, sleep = mode.removesuffix("-sleep"), mode.endswith("-sleep")
        self.sim, robot = load_truck("B", sleep=sleep)
        self.manager = FidelityManager(self.sim, truck_config(), preset)
        self.meter = ManagerMeter(self.manager)
        self.controller = UnloadingController(robot, seed=0, decide=self.meter.decision_point,
                                              settle=DECISION_SETTLE)
        self.steps = max(1, round(CONTROL_PERIOD / self.sim.step_size))
        self.tick_every = max(1, round(TICK_PERIOD / CONTROL_PERIOD))

    def until(self, t_end: float) -> np.ndarray:
        """Run to ``t_end``; rows (time, ms CPU of the period's steps, trees awake, nv awake,
        ncon, nefc)."""
        d, rows, periods = self.sim.data, [], 0
        while self.sim.time < t_end - 1e-9:
            self.controller.tick()
            c0 = time.thread_time()
            self.sim.step(self.steps)
            cpu = time.thread_time() - c0
            periods += 1
            if periods % self.tick_every == 0:
                self.meter.tick()
            rows.append((self.sim.time, 1e3 * cpu, d.ntree_awake, d.nv_awake, d.ncon, d.nefc))
        return np.array(rows)


def windows(mode: str, duration: float) -> None:
    run = Run(mode)
    with run.manager:
        rows = run.until(duration)
    print(f"\n{mode}: per 2 s of sim time, means per control period")
    print("   window   ms CPU  trees awake  nv awake   ncon   nefc")
    for lo in np.arange(0.0, duration, 2.0):
        w = rows[(rows[:, 0] > lo) & (rows[:, 0] <= lo + 2.0 + 1e-9)]
        if len(w):
            print(f"  {lo:4.0f}-{lo + 2:<4.0f} {w[:, 1].mean():7.2f} {w[:, 2].mean():12.1f} "
                  f"{w[:, 3].mean():9.1f} {w[:, 4].mean():6.1f} {w[:, 5].mean():6.1f}")
    print(f"  whole run {rows[:, 1].mean():6.2f} ms CPU per control period")


def at_rest(mode: str, rest: float, steps: int) -> None:
    run = Run(mode)
    sim = run.sim
    m, d = sim.model, sim.data
    with run.manager:
        run.until(rest)
        results = {}
        for way in ("engine", "engine, no hooks", "mj_step"):
            hooks = list(sim.hooks)
            if way == "engine, no hooks":
                for hook in hooks:
                    sim.hooks.remove(hook)
            c0 = time.thread_time()
            if way == "mj_step":
                for _ in range(steps):
                    mujoco.mj_step(m, d)
            else:
                for _ in range(steps // 10):
                    sim.step(10)
            results[way] = 1e3 * (time.thread_time() - c0) / steps
            for hook in hooks:
                sim.hooks.add(hook)
        print(f"{mode} at rest (t = {rest:g} s, trees awake {d.ntree_awake}, ncon {d.ncon}): "
              + ", ".join(f"{way} {ms:.3f}" for way, ms in results.items()) + " ms CPU per step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="sim seconds per run")
    parser.add_argument("--rest", type=float, default=4.0, help="sim time of the at-rest state")
    parser.add_argument("--steps", type=int, default=3000, help="steps timed at rest")
    args = parser.parse_args()
    robot_alone(args.duration)
    for mode in MODES:
        windows(mode, args.duration)
    print()
    for mode in MODES:
        at_rest(mode, args.rest, args.steps)


if __name__ == "__main__":
    main()
