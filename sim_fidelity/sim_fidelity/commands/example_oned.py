"""``simfid example oned``: paper 001's 1-D example end to end (`oned/example.py`)."""
from __future__ import annotations

import argparse
import json
import sys

from ..flag_types import count, integer, output_folder
from ..ranges import at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``oned`` to the sub-commands of ``simfid example``."""
    p = subparsers.add_parser("oned", help="paper 001's 1-D example: design, deploy, kernels, "
                                           "redesign")
    p.add_argument("--missions", type=count(), default=1000,
                   help="missions per phase (default 1000)")
    p.add_argument("--episodes", type=count(), help="SARSA training missions (default: missions)")
    p.add_argument("--plots", type=output_folder, help="folder for oned_fig4.png and oned_fig6.png")
    p.add_argument("--bags", type=output_folder, help="keep the bags and kernels file here")
    p.add_argument("--seed", type=integer(at_least(0)), default=0)
    p.add_argument("--seeds", type=count(), default=1,
                   help="run seeds seed .. seed + N - 1 and report the spread (default 1)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the five phases (per seed); print the report (or JSON) and the plots written."""
    from ..oned.example import plot, report, report_spread, run_example, spread

    outcomes = [run_example(args.missions, seed, args.episodes,
                            args.bags / f"seed_{seed}" if args.bags and args.seeds > 1
                            else args.bags, progress=sys.stderr.isatty() and not args.json)
                for seed in range(args.seed, args.seed + args.seeds)]
    plots = plot(outcomes[0], args.plots) if args.plots else []
    if args.json:
        doc = {**outcomes[0].to_dict(), "plots": [str(p) for p in plots]}
        if args.seeds > 1:
            doc = {"runs": [o.to_dict() for o in outcomes], "spread": spread(outcomes),
                   "plots": doc["plots"]}
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for outcome in outcomes:
            print(report(outcome), end="\n\n")
        if args.seeds > 1:
            print(report_spread(outcomes))
        for path in plots:
            print(f"plot       {path} (seed {args.seed})")
    return 0
