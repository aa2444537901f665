"""``simfid bench truck``: the truck-unloading benchmark (:mod:`sim_fidelity.truck.bench`)."""
from __future__ import annotations

import argparse

from ..flag_types import count, integer, number, output_folder
from ..ranges import above, at_least
from ..truck.bench import MODES, TICK_PERIOD


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``truck`` to the sub-commands of ``simfid bench``."""
    p = subparsers.add_parser("truck", help="truck-unloading benchmark (paper 000, Fig. 4, 6, 7)")
    p.add_argument("--scenario", choices=("A", "B", "C"), default="B")
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated, of " + ",".join(MODES))
    p.add_argument("--duration", type=number(above(0)), default=60.0, help="sim seconds per run")
    p.add_argument("--repeats", type=count(), default=3,
                   help="seeds 0..N-1, the same for every mode")
    p.add_argument("--first-seed", type=integer(at_least(0)), default=0,
                   help="seed of the first repeat (repeats use consecutive seeds)")
    p.add_argument("--still", default="",
                   help="steps,ticks: the packet signaler's stillness clock(s); each manager mode "
                        "runs once per clock (default: config/truck.yaml's)")
    p.add_argument("--medium", default="",
                   help="all,near: the packet signaler's rule 3 (which packets stay MEDIUM while a "
                        "HIGH one reaches out of the robot box); each manager mode runs once per "
                        "rule (default: config/truck.yaml's)")
    p.add_argument("--tick-period", type=number(above(0)), default=TICK_PERIOD,
                   help="sim seconds between fidelity-manager ticks (multiple of 0.02)")
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON object")
    p.add_argument("--plots", type=output_folder, default=None, help="folder for the PNG figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every mode on the same seeds; print the table (or JSON) and the plots written."""
    from ..truck.bench import run as run_bench

    return run_bench(args)
