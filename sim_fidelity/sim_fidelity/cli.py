"""``simfid``: the command line of sim_fidelity. Each feature registers its own subcommands."""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

from .simulator.errors import SimulatorError

# Modules that provide ``register(subparsers)``; a module missing here is skipped.
FEATURE_MODULES = (
    "sim_fidelity.simulator.ros.server",
    "sim_fidelity.fidelity_manager.cli",
    "sim_fidelity.reality_gap.cli",
    "sim_fidelity.oned.example",
)
# Subcommand groups whose members register themselves: simfid <group> <member> ...
GROUPS = {
    "bench": ("benchmarks: every mode side by side in one run", ("sim_fidelity.truck.bench",)),
}


def _sim(args: argparse.Namespace) -> int:
    from .simulator.engine import MujocoEngine
    from .simulator.protocol import EntityKind

    engine = MujocoEngine.from_file(args.world, sleep=args.sleep, step_size=args.step_size)
    steps = int(round(args.duration / engine.step_size))
    wall = engine.run_for(args.duration)
    rtf = engine.time / wall if wall > 0 else float("inf")
    summary = {"world": str(args.world), "sim_time": engine.time, "wall_time": wall,
               "real_time_factor": rtf, "steps": steps, "step_size": engine.step_size,
               "divergences": engine.divergences}
    if args.json:
        names = engine.entities(EntityKind.MODEL) + engine.entities(EntityKind.LINK)
        pose, twist = engine.get_states(names)
        summary["entities"] = {n: {"pose": p.tolist(), "twist": t.tolist()}
                               for n, p, t in zip(names, pose, twist)}
        json.dump(summary, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"world            {args.world}\n"
              f"sim time         {engine.time:.3f} s ({steps} steps of {engine.step_size * 1e3:g} ms)\n"
              f"wall time        {wall:.3f} s\n"
              f"real-time factor {rtf:.2f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="simfid", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("sim", help="simulate a world headless as fast as possible")
    p.add_argument("world", help="SDF world file")
    p.add_argument("--duration", type=float, default=10.0, help="seconds of simulated time")
    p.add_argument("--json", action="store_true", help="print every model and link state as JSON")
    p.add_argument("--sleep", action="store_true", help="turn on MuJoCo's sleeping islands")
    p.add_argument("--step-size", type=float, default=None, help="override the world's step (s)")
    p.set_defaults(func=_sim)
    for name in FEATURE_MODULES:
        _register(name, sub)
    for group, (help_text, modules) in GROUPS.items():
        members = sub.add_parser(group, help=help_text).add_subparsers(dest=f"{group}_command",
                                                                      required=True)
        for name in modules:
            _register(name, members)
    return parser


def _register(module_name: str, subparsers) -> None:
    """Let a feature module add its subcommands; a module not there yet is skipped."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            return
        raise
    module.register(subparsers)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    try:
        return args.func(args) or 0
    except (SimulatorError, FileNotFoundError, ValueError) as e:
        print(f"simfid {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"simfid {args.command}: interrupted after {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
