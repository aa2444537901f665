"""Benchmark: the fidelity manager on a stack of boxes, HIGH-only and managed, side by side.

The robot drives into the front of an ``nx x ny x nz`` stack and back (the same path in every
run); each preset of ``config/stack_test.yaml`` runs in the embedded engine in this one process.
Prints wall time, real-time factor, speed-up over ``hifi`` (manager off), the manager's time per
tick, and the largest final box displacement from the ``hifi`` run. Then measures the manager's
time per tick on a settled scene of ``--overhead-boxes`` trees, split into the one
``get_states`` call (the simulator) and the rest (signaler + helpers).

    .venv/bin/python bench/fidelity_stack.py [--nx 10 --ny 10 --nz 3] [--presets hifi adfi-1 ...]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from sim_fidelity.fidelity_manager import FidelityManager
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import RobotPath, stack_sdf

CONFIG = str(Path(__file__).resolve().parents[1] / "sim_fidelity" / "config" / "stack_test.yaml")


def run(sdf: str, preset: str, path: RobotPath, settle: float, sleep: bool) -> dict:
    sim = MujocoEngine.from_string(sdf, sleep=sleep)
    boxes = sim.entities(pattern=r"^box_\d+_\d+_\d+$")
    manager_wall, ticks, high = 0.0, 0, []
    with FidelityManager(sim, CONFIG, preset) as manager:
        start = time.perf_counter()
        while sim.time < path.duration + settle:
            path.drive(sim)
            sim.step()
            report = manager.tick()
            manager_wall += report.wall
            ticks += 1
            high.append(report.counts["high"])
        wall = time.perf_counter() - start
    return {"preset": preset, "wall": wall, "rtf": sim.time / wall, "ticks": ticks,
            "manager_us": 1e6 * manager_wall / ticks, "mean_high": float(np.mean(high)),
            "final": sim.get_states(boxes)[0][:, :3]}


def overhead(n_side: int, repeats: int = 200) -> dict:
    """Manager time per tick on an ``n_side^3`` stack, split into get_states and the rest, and the
    time of switching every tree at once (one batch of lever calls)."""
    sim = MujocoEngine.from_string(stack_sdf(n_side, n_side, n_side))
    manager = FidelityManager(sim, CONFIG, "adfi-2")
    for _ in range(300):  # let the stack settle so that most trees are lowered
        sim.step()
        if manager.tick().counts["high"] == 0:
            break
    read, rest = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sim.get_states(manager.state_names)
        t1 = time.perf_counter()
        manager.tick()
        t2 = time.perf_counter()
        read.append(t1 - t0)
        rest.append((t2 - t1) - (t1 - t0))
    counts = manager.counts()
    t0 = time.perf_counter()
    manager.set_fidelity(".*", "high")
    t1 = time.perf_counter()
    manager.set_fidelity(".*", "low")
    t2 = time.perf_counter()
    manager.close()
    return {"trees": len(manager.trees), "get_states_us": 1e6 * float(np.median(read)),
            "own_us": 1e6 * float(np.median(rest)), "counts": counts,
            "raise_all_ms": 1e3 * (t1 - t0), "lower_all_ms": 1e3 * (t2 - t1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=10)
    parser.add_argument("--ny", type=int, default=10)
    parser.add_argument("--nz", type=int, default=3)
    parser.add_argument("--presets", nargs="*", default=["hifi", "adfi-1", "adfi-2", "adfi-3"])
    parser.add_argument("--settle", type=float, default=0.5, help="s after the robot is back")
    parser.add_argument("--sleep", action="store_true", help="MuJoCo sleeping islands in every run")
    parser.add_argument("--overhead-boxes", type=int, default=1000, help="0 skips; rounded to n^3")
    args = parser.parse_args()

    sdf = stack_sdf(args.nx, args.ny, args.nz)
    path = RobotPath(start=0.5, turn=0.83, speed=0.3)
    print(f"stack {args.nx} x {args.ny} x {args.nz} = {args.nx * args.ny * args.nz} boxes, "
          f"robot path {path.duration + args.settle:.2f} s sim time, sleep={args.sleep}")
    results = [run(sdf, p, path, args.settle, args.sleep) for p in args.presets]
    if results:
        print_runs(results)
    if args.overhead_boxes:
        n = max(1, round(args.overhead_boxes ** (1 / 3)))
        o = overhead(n)
        print(f"manager per tick with {o['trees']} trees {o['counts']}: get_states (simulator) "
              f"{o['get_states_us']:.0f} us + signaler/helpers {o['own_us']:.0f} us; switching all "
              f"{o['trees']} trees at once: to HIGH {o['raise_all_ms']:.2f} ms, to LOW "
              f"{o['lower_all_ms']:.2f} ms")


def print_runs(results: list[dict]) -> None:
    """One line per preset, speed-up and displacement relative to hifi (or the first run)."""
    base = next((r for r in results if r["preset"] == "hifi"), results[0])
    print(f"{'preset':8} {'wall s':>8} {'RTF':>7} {'speed-up':>9} {'mgr us/tick':>12} "
          f"{'mean HIGH':>10} {'max |dx| vs ' + base['preset'] + ' [mm]':>24}")
    for r in results:
        dx = 1e3 * np.linalg.norm(r["final"] - base["final"], axis=1).max()
        print(f"{r['preset']:8} {r['wall']:8.2f} {r['rtf']:7.2f} {base['wall'] / r['wall']:8.2f}x "
              f"{r['manager_us']:12.1f} {r['mean_high']:10.1f} {dx:24.3f}")


if __name__ == "__main__":
    main()
