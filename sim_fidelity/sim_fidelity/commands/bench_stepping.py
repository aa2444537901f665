"""``simfid bench stepping``: service against clock stepping with a deliberately slow model
(:mod:`sim_fidelity.model_conductor.stepping_bench`)."""
from __future__ import annotations

import argparse
import json

from ..flag_types import number
from ..ranges import above, at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``stepping`` to the sub-commands of ``simfid bench``."""
    from ..model_conductor.stepping_bench import SETUPS

    p = subparsers.add_parser("stepping", help="model conductor: lock-step exactness and "
                              "real-time factor of service vs clock stepping (paper 003)")
    p.add_argument("--duration", type=number(above(0)), default=2.0,
                   help="simulated seconds per setup")
    p.add_argument("--step", type=number(above(0)), default=0.01,
                   help="the main model's tick, seconds")
    p.add_argument("--cost", type=number(at_least(0)), default=0.015,
                   help="wall seconds the slow model sleeps per step")
    p.add_argument("--setups", default=",".join(SETUPS),
                   help="comma-separated, of " + ",".join(SETUPS))
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..model_conductor.errors import ConductorError
    from ..model_conductor.stepping_bench import SETUPS
    from ..model_conductor.stepping_bench import run as run_bench

    setups = tuple(s.strip() for s in args.setups.split(",") if s.strip())
    unknown = [s for s in setups if s not in SETUPS]
    if unknown or not setups:
        raise ConductorError(f"unknown setups {', '.join(unknown) or '(none given)'}; "
                             f"setups: {', '.join(SETUPS)}")
    result = run_bench(args.duration, args.step, args.cost, setups)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"main tick {args.step} s, slow model sleeps {args.cost} s per step, "
          f"{args.duration} s simulated per setup")
    print(f"{'setup':<16} {'wall s':>7} {'RTF':>7} {'steps':>6} {'skips':>6} {'lag s':>7} "
          f"{'max error m':>12}")
    for r in result["setups"]:
        print(f"{r['setup']:<16} {r['wall']:>7.3f} {r['real_time_factor']:>7.2f} "
              f"{r['carrier_steps']:>6} {r['skips']:>6} {r['lag']:>7.3f} {r['max_error']:>12.2e}")
    for name, ratio in result["rtf_ratios"].items():
        print(f"RTF {name}: {ratio:.2f}x")
    gil = result["gil"]
    print(f"GIL: a Python loop ran {gil['loop_rate_during_mj_step']:.3g}/s while another thread "
          f"was inside mj_step ({gil['loop_rate_alone']:.3g}/s alone; 0 if mj_step held it)")
    return 0
