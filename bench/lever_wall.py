"""Step time of a 500-box wall, all dynamic vs 90% of the boxes switched to a low-fidelity lever.

Every mode runs in the same process, interleaved in rounds so that machine noise hits them alike;
the ratio against all-dynamic is what to read. Not a test.

    .venv/bin/python bench/lever_wall.py [--steps 500] [--rounds 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

from sim_fidelity.simulator import EntityKind, Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.sdf import load_world_string
from sim_fidelity.world_generators.box_wall import wall_sdf

# mode: (fraction of boxes lowered, levers switched off on them, MuJoCo sleeping)
MODES = {
    "all dynamic": (0.0, (), False),
    "all dynamic + engine sleep": (0.0, (), True),
    "90% medium (held, colliding)": (0.9, (Lever.DYNAMICS,), False),
    "90% low (held, no collision)": (0.9, (Lever.DYNAMICS, Lever.COLLISION), False),
    "90% low + engine sleep": (0.9, (Lever.DYNAMICS, Lever.COLLISION), True),
}


def lowered_boxes(engine: MujocoEngine, fraction: float) -> list[str]:
    """The boxes farthest from the front face (x = 0): what a robot at the front does not touch."""
    boxes = engine.entities(EntityKind.MODEL, pattern=r"^box_")
    x = engine.get_states(boxes)[0][:, 0]
    order = np.argsort(-x, kind="stable")
    return [boxes[i] for i in order[:int(round(fraction * len(boxes)))]]


def setup(sdf: str, fraction: float, levers: tuple, sleep: bool) -> tuple[MujocoEngine, float]:
    engine = MujocoEngine(load_world_string(sdf), sleep=sleep,
                          sleep_tolerance=0.01 if sleep else None)
    names = lowered_boxes(engine, fraction)
    t0 = time.perf_counter()
    for lever in levers:
        engine.set_lever(names, lever, False)
    switch = time.perf_counter() - t0
    engine.step(200)  # settle contacts and let sleeping islands form
    return engine, switch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="steps per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sdf = wall_sdf()
    engines, switch = {}, {}
    for mode, (fraction, levers, sleep) in MODES.items():
        engines[mode], switch[mode] = setup(sdf, fraction, levers, sleep)
    samples = {mode: [] for mode in MODES}
    for r in range(args.rounds):
        for mode, engine in engines.items():
            t0 = time.perf_counter()
            engine.step(args.steps)
            samples[mode].append((time.perf_counter() - t0) / args.steps)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    base = np.median(samples["all dynamic"])
    rows = []
    for mode, s in samples.items():
        med = float(np.median(s))
        dt = engines[mode].step_size
        rows.append({"mode": mode, "step_ms": med * 1e3, "spread_ms": float(np.ptp(s)) * 1e3,
                     "real_time_factor": dt / med, "speedup": base / med,
                     "switch_ms": switch[mode] * 1e3})
    meta = {"boxes": 500, "steps": args.steps, "rounds": args.rounds, "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=1))
        return 0
    print(f"500-box wall (5 x 10 x 10, 0.4 m), {args.steps} steps x {args.rounds} rounds, median")
    print(f"{'mode':32s} {'ms/step':>8s} {'spread':>8s} {'RTF':>7s} {'speed-up':>9s} "
          f"{'switch ms':>10s}")
    for r in rows:
        print(f"{r['mode']:32s} {r['step_ms']:8.3f} {r['spread_ms']:8.3f} "
              f"{r['real_time_factor']:7.2f} {r['speedup']:8.1f}x {r['switch_ms']:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
