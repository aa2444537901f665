"""``simfid fidelity``: run a world in the embedded engine under the fidelity manager.

Prints the real-time factor, the number of trees per level over time and the manager's overhead;
progress lines go to stderr, the summary to stdout (one JSON object with ``--json``). SIGINT and
SIGTERM stop the run cleanly: every object is restored and read back (``mismatches`` counts the
levers not at their start state), and the exit code is 128 + the signal number.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ..flag_types import count, number
from ..ranges import above
from ..shutdown import Interrupted, raise_on_signals


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``fidelity`` sub-command; its handler is ``args.func(args) -> exit code``."""
    p = subparsers.add_parser("fidelity", help="run a world under the fidelity manager",
                              description=__doc__.splitlines()[0])
    p.add_argument("world", help="SDF world file")
    p.add_argument("--config", required=True, help="fidelity configuration (YAML)")
    p.add_argument("--preset", default=None, help="preset of the config (hifi = manager off)")
    p.add_argument("--duration", type=number(above(0)), default=10.0, help="sim time to run [s]")
    p.add_argument("--tick-every", type=count(), default=1, help="physics steps per manager tick")
    p.add_argument("--report-every", type=number(above(0)), default=0.5,
                   help="sim seconds between samples")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--sleep", action="store_true", help="enable MuJoCo sleeping islands")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the world; returns the process exit code."""
    from ..fidelity_manager.manager import FidelityManager
    from ..simulator.engine import MujocoEngine

    summary: dict[str, Any] = {"world": args.world, "config": args.config, "samples": []}
    code = 0
    with raise_on_signals():
        sim = MujocoEngine.from_file(args.world, sleep=args.sleep)
        manager = FidelityManager(sim, args.config, args.preset)
        summary.update(preset=manager.preset, enabled=manager.enabled, trees=len(manager.trees))
        try:
            _loop(sim, manager, args, summary)
        except Interrupted as e:
            summary["interrupted"] = e.args[0].split()[-1]
            summary["counts_at_interrupt"] = manager.counts()
            code = e.exit_code
        finally:
            manager.close()
            summary["mismatches"] = len(manager.mismatches())
            summary["restored"] = summary["mismatches"] == 0
    _print_summary(summary, args.json)
    return code


def _loop(sim, manager, args: argparse.Namespace, summary: dict) -> None:
    """Step and tick until ``args.duration``; records samples and totals into ``summary``."""
    wall0 = time.perf_counter()
    manager_wall, ticks = 0.0, 0
    next_sample, window = args.report_every, (sim.time, wall0)
    summary["counts_at_start"] = manager.counts()
    while sim.time < args.duration - 1e-9:
        sim.step(args.tick_every)
        report = manager.tick()
        manager_wall += report.wall
        ticks += 1
        if sim.time >= next_sample - 1e-9:
            now = time.perf_counter()
            rtf = (sim.time - window[0]) / max(now - window[1], 1e-9)
            sample = {"time": round(sim.time, 6), "rtf": rtf, **report.counts}
            summary["samples"].append(sample)
            print(f"t={sim.time:7.3f}s  rtf={rtf:7.2f}  high={sample['high']} "
                  f"medium={sample['medium']} low={sample['low']}", file=sys.stderr, flush=True)
            next_sample += args.report_every
            window = (sim.time, now)
        summary.update(sim_time=sim.time, wall=time.perf_counter() - wall0, ticks=ticks,
                       manager_wall=manager_wall)


def _print_summary(s: dict, as_json: bool) -> None:
    wall, ticks = s.get("wall", 0.0), s.get("ticks", 0)
    s["rtf"] = s.get("sim_time", 0.0) / wall if wall else 0.0
    s["manager_fraction"] = s.get("manager_wall", 0.0) / wall if wall else 0.0
    s["manager_us_per_tick"] = 1e6 * s.get("manager_wall", 0.0) / ticks if ticks else 0.0
    if as_json:
        print(json.dumps(s))
        return
    print(f"preset {s['preset']} ({'manager on' if s['enabled'] else 'manager off'}), "
          f"{s['trees']} trees")
    print(f"sim time {s.get('sim_time', 0.0):.3f} s in {wall:.3f} s wall: real-time factor "
          f"{s['rtf']:.2f}")
    print(f"manager: {s['manager_us_per_tick']:.1f} us/tick, {100 * s['manager_fraction']:.2f}% "
          f"of wall time over {ticks} ticks")
    if "interrupted" in s:
        print(f"interrupted by {s['interrupted']} with levels {s['counts_at_interrupt']}")
    print(f"restored: {'yes' if s['restored'] else 'NO'} ({s['mismatches']} lever mismatches "
          f"read back)")

