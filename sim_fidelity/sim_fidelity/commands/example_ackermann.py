"""``simfid example ackermann``: paper 001's field test (sections V-VI) end to end
(``ugv/pipeline.py``)."""
from __future__ import annotations

import argparse
import json
import sys

from ..flag_types import count, integer, output_folder
from ..ranges import at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``ackermann`` to the sub-commands of ``simfid example``."""
    p = subparsers.add_parser("ackermann", help="paper 001's waypoint course: design, deploy, "
                                                "kernels, redesign, redeploy")
    p.add_argument("--missions", type=count(), default=50, help="missions per phase (default 50)")
    p.add_argument("--plots", type=output_folder, help="folder for the track, ATR and kernel plots")
    p.add_argument("--bags", type=output_folder, help="keep the bags and the kernels file here")
    p.add_argument("--seed", type=integer(at_least(0)), default=0)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the five phases; print the report (or JSON) and the plots written."""
    from ..ugv.pipeline import plot, report, run_pipeline

    outcome = run_pipeline(args.missions, args.seed, args.bags,
                           progress=sys.stderr.isatty() and not args.json)
    plots = plot(outcome, args.plots) if args.plots else []
    if args.json:
        json.dump({**outcome.to_dict(), "plots": [str(p) for p in plots]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(report(outcome))
        for path in plots:
            print(f"plot         {path}")
    return 0
