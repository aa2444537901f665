"""``simfid example oned``: paper 001's 1-D example end to end (`oned/example.py`)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``oned`` to the sub-commands of ``simfid example``."""
    p = subparsers.add_parser("oned", help="paper 001's 1-D example: design, deploy, kernels, "
                                           "redesign")
    p.add_argument("--missions", type=int, default=1000, help="missions per phase (default 1000)")
    p.add_argument("--episodes", type=int, help="SARSA training missions (default: missions)")
    p.add_argument("--plots", type=Path, help="folder for oned_fig4.png and oned_fig6.png")
    p.add_argument("--bags", type=Path, help="keep the bags and kernels file here")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the five phases; print the report (or JSON) and the plots written."""
    from ..oned.example import plot, report, run_example

    outcome = run_example(args.missions, args.seed, args.episodes, args.bags,
                          progress=sys.stderr.isatty() and not args.json)
    plots = plot(outcome, args.plots) if args.plots else []
    if args.json:
        json.dump({**outcome.to_dict(), "plots": [str(p) for p in plots]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(report(outcome))
        for path in plots:
            print(f"plot       {path}")
    return 0
