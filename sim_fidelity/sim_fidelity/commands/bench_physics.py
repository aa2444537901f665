"""``simfid bench physics``: physics step time against threads (paper 002's run_diagnostic).

Times every physics step of ``--world`` (a name in the package's ``worlds/`` or an SDF path) for
``--duration`` simulated seconds, ``--trials`` times per setting, for each mode and thread count;
prints per setting the box-plot statistics of the per-trial mean and minimum step time and the
median speed-up against 0 threads (the control). Without ``--threads`` the counts are 0 and the
world's ``<physics><ode><solver><island_threads>``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import mujoco

from ..flag_types import count, integer, number
from ..physics_bench.alternatives import rollout_throughput
from ..physics_bench.appendix import write_figures
from ..physics_bench.plots import speedup_curves, step_time_boxes
from ..physics_bench.stats import TimingError, summarise
from ..physics_bench.timing import MODES, run_trials, world_path
from ..ranges import above, at_least
from ..simulator.sdf import load_world


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``physics`` to the sub-commands of ``simfid bench``."""
    p = subparsers.add_parser("physics", help="physics step time against threads (paper 002)")
    p.add_argument("--world", default=None,
                   help="world name in the package's worlds/ (e.g. dual_pr2) or an SDF file")
    p.add_argument("--threads", default=None,
                   help="comma-separated thread counts, 0 = serial control (default: 0 and the "
                        "world's island_threads)")
    p.add_argument("--modes", default="islands",
                   help=f"comma-separated, of {','.join(MODES)} (default islands)")
    p.add_argument("--trials", type=count(), default=10, help="trials per setting (default 10)")
    p.add_argument("--duration", type=number(above(0)), default=10.0,
                   help="simulated seconds per trial (default 10)")
    p.add_argument("--batch", type=count(), default=1,
                   help="steps per timed engine.step call (default 1: every step timed alone)")
    p.add_argument("--rollout", type=integer(at_least(0)), default=0, metavar="WORLDS",
                   help="also measure mujoco.rollout throughput of this many copies of the world")
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON object")
    p.add_argument("--plots", type=Path, default=None, help="folder for the PNG figures")
    p.add_argument("--appendix", action="store_true",
                   help="run the Appendix's checks instead (a box starting 1 cm and 1 m inside "
                        "the ground, an impact) and plot them into --plots")
    p.set_defaults(func=run)


def thread_counts(text: str | None, world: Path) -> list[int]:
    """The thread counts to measure, control (0) first."""
    if text is None:
        from_sdf = int(load_world(world).physics.get("island_threads", 0))
        return sorted({0, from_sdf})
    try:
        counts = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise TimingError(f"--threads must be comma-separated integers, got '{text}'") from None
    if not counts or counts[0] < 0:
        raise TimingError(f"--threads needs counts >= 0, got '{text}'")
    return counts if counts[0] == 0 else [0, *counts]


def run_appendix(args: argparse.Namespace) -> int:
    """The Appendix's checks: energy gained and heights reached, per contact setting."""
    if args.plots is None:
        raise TimingError("--appendix writes figures: give --plots DIR")
    checks = write_figures(args.plots)
    rows = [{"check": name, "contact": r.label, "max_energy_gain_J_per_kg": float(
                r.energy()[1:].max() - max(r.energy()[0], 0.0)),
             "rebound_m": r.rebound(), "final_height_m": float(r.z[-1])}
            for name, runs in checks.items() for r in runs]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print(f"{r['check']:16} {r['contact']:44} energy gain {r['max_energy_gain_J_per_kg']:10.4f}"
              f" J/kg, rebound {r['rebound_m']:9.4f} m, final z {r['final_height_m']:7.4f} m")
    print(f"wrote {args.plots}/appendix_*.png")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.appendix:
        return run_appendix(args)
    if args.world is None:
        raise TimingError("give --world NAME (or --appendix)")
    world = world_path(args.world)
    threads = thread_counts(args.threads, world)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise TimingError(f"unknown mode(s) {bad}; modes: {', '.join(MODES)}")
    progress = None if args.json else (lambda s: print(s, file=sys.stderr, flush=True))
    trials, loads = run_trials(world, modes, threads, args.trials, args.duration, args.batch,
                               progress)
    summaries = {m: summarise(m, trials[m], control=0) for m in modes}
    result = {
        "world": world.stem, "file": str(world), "modes": modes, "threads": threads,
        "trials": args.trials, "duration": args.duration, "batch": args.batch,
        "machine": {"cpus": os.cpu_count(), "load_avg_1min": [min(loads), max(loads)],
                    "mujoco": mujoco.__version__},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "settings": [s.as_dict() for m in modes for s in summaries[m]],
    }
    if args.rollout:
        steps = int(round(min(args.duration, 1.0) / load_world(world).step_size))
        result["rollout"] = [r.as_dict() for r in
                             rollout_throughput(world, args.rollout, steps, threads)]
    if args.plots:
        args.plots.mkdir(parents=True, exist_ok=True)
        note = (f"{args.trials} trials x {args.duration:g} s, batch {args.batch}, "
                f"{os.cpu_count()} CPUs, load {min(loads):.1f}-{max(loads):.1f}, "
                f"MuJoCo {mujoco.__version__}")
        result["plots"] = [str(step_time_boxes(world.stem, summaries,
                                               args.plots / f"{world.stem}_step_time.png", note)),
                           str(speedup_curves(world.stem, summaries,
                                              args.plots / f"{world.stem}_speedup.png", note))]
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"world {world.stem}: {args.trials} trials x {args.duration:g} s per setting, "
          f"{os.cpu_count()} CPUs, 1-min load {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'mode':8} {'thr':>3} {'median mean':>12} {'q1-q3 mean':>19} {'median min':>11} "
          f"{'speed-up mean':>13} {'speed-up min':>12}")
    for m in modes:
        for s in summaries[m]:
            print(f"{m:8} {s.threads:3d} {s.mean.median * 1e3:9.4f} ms "
                  f"{s.mean.q1 * 1e3:8.4f}-{s.mean.q3 * 1e3:7.4f} ms {s.best.median * 1e3:8.4f} ms "
                  f"{s.speedup_mean:12.2f}x {s.speedup_min:11.2f}x")
    for r in result.get("rollout", []):
        print(f"rollout {r['worlds']} worlds, {r['threads']} threads: "
              f"{r['steps_per_second']:.0f} world-steps/s")
    for p in result.get("plots", []):
        print(f"wrote {p}")
    return 0
