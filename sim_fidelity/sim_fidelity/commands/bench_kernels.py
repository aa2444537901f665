"""``simfid bench kernels``: precision and recall of the reality-gap kernels on planted gaps, and
the lookup time (:mod:`sim_fidelity.reality_gap.bench`)."""
from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``kernels`` to the sub-commands of ``simfid bench``."""
    p = subparsers.add_parser("kernels", help="reality-gap kernels on planted gaps: precision, "
                                              "recall, lookup time (issue 17)")
    p.add_argument("--quick", action="store_true",
                   help="only the 1-D cases at full size and noise 0.03 m")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every case and the lookup timing; print the tables (or JSON)."""
    from tqdm import tqdm

    from ..reality_gap.bench import (
        FULL,
        default_cases,
        lookup_spec,
        lookup_timing,
        report,
        run_cases,
    )

    cases = default_cases()
    if args.quick:
        cases = [c for c in cases if c.dims == 1 and c.noise == 0.03 and c.transitions == FULL]
    show = sys.stderr.isatty() and not args.json
    scores = run_cases(cases, (lambda it: tqdm(it, desc="cases", leave=False)) if show
                       else (lambda it: it))
    spec = lookup_spec()
    timing = lookup_timing(spec) + lookup_timing(spec, counts=(1000,), members=5)
    if args.json:
        json.dump({"cases": [s.to_dict() for s in scores], "lookup": timing}, sys.stdout,
                  indent=1)
        sys.stdout.write("\n")
    else:
        print(report(scores, timing))
    return 0
