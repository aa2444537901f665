"""``simfid sweep SPEC.yaml`` runs a sweep on Ray; ``simfid sweep report TABLE`` summarises one
(:mod:`sim_fidelity.sweep`, docs/sweeps.md)."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from ..flag_types import count, output_folder

SWEEP_ONLY = ("grid", "address", "out", "workers")
REPORT_ONLY = ("baseline", "plots", "json", "metrics")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``sweep`` (and its ``report`` form) to the ``simfid`` sub-commands."""
    p = subparsers.add_parser(
        "sweep", help="run a sweep function over a grid on Ray; 'sweep report TABLE' summarises",
        description="simfid sweep SPEC.yaml [--grid key=v1,v2 ...] [--out TABLE] [--workers N] "
                    "[--address HOST:PORT]  |  simfid sweep report TABLE [--baseline "
                    "param=value] [--plots DIR] [--json]")
    p.add_argument("spec", metavar="SPEC.yaml|report", help="the sweep spec, or 'report'")
    p.add_argument("table", nargs="?", metavar="TABLE", help="(report) the table to summarise")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="grid values replacing the spec's (repeatable)")
    p.add_argument("--out", type=Path, help="the table (default: the spec's out, or SPEC.jsonl)")
    p.add_argument("--workers", type=count(),
                   help="runs at once (default: the spec's, or one per core / the cluster's CPUs)")
    p.add_argument("--address", help="a Ray cluster's address (default: a local Ray on loopback)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--baseline", metavar="PARAM=VALUE",
                   help="(report) ratios against the group with this value, per replicate pair")
    p.add_argument("--metrics", help="(report) comma-separated result keys (default: headline)")
    p.add_argument("--plots", type=output_folder, help="(report) folder for the PNG figures")
    p.add_argument("--json", action="store_true", help="(report) print the report as JSON")
    p.set_defaults(func=run)


def _reject(args: argparse.Namespace, names: tuple[str, ...], form: str) -> None:
    given = [n for n in names if getattr(args, n) not in (None, False, [])]
    if given:
        from ..sweep.errors import SweepError
        raise SweepError(f"{form} takes no {', '.join('--' + n for n in given)}")


def stoppable() -> None:
    """SIGINT stops the sweep (KeyboardInterrupt: the finished rows kept) even when the process
    started with it ignored, as a command started with ``&`` from a non-interactive shell does."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def lower_autogroup(autogroup: Path = Path("/proc/self/autogroup")) -> int | None:
    """A sweep started in a session of its own under ``nice`` (``setsid nice -n 19 simfid
    sweep``) lowers its session's scheduler autogroup to the same nice value, so that it yields
    to work of other sessions as ``nice`` promises (docs/sweeps.md, "A sweep in the
    background"); its Ray workers are in the same session. Returns the nice value set, or None
    where nothing was done: not niced, not a session leader (lowering a shared session's group
    would lower everything started from it) or no autogroup in effect (the kernel shows none for a
    process still in its default group, e.g. of a session that dates from boot)."""
    value = os.nice(0)
    if value <= 0 or os.getsid(0) != os.getpid() or not autogroup.exists():
        return None
    try:
        if not autogroup.read_text().strip():  # the default group: nothing to lower
            return None
        autogroup.write_text(str(value))
    except OSError:
        return None
    return value


def run(args: argparse.Namespace) -> int:
    if args.spec == "report":
        return run_report(args)
    from ..sweep.errors import SweepError
    from ..sweep.runner import run_sweep
    from ..sweep.spec import load_spec

    _reject(args, REPORT_ONLY, "simfid sweep SPEC.yaml")
    stoppable()
    lowered = lower_autogroup()
    if lowered is not None:
        print(f"simfid sweep: this session's scheduler autogroup lowered to nice {lowered}",
              file=sys.stderr)
    if args.table is not None:
        raise SweepError(f"simfid sweep {args.spec}: unexpected argument {args.table!r}")
    spec = load_spec(args.spec, args.grid)
    out = args.out or spec.out
    runs = spec.runs()
    outcome = run_sweep(spec.function, runs, out, args.workers or spec.workers,
                        args.address or spec.address, progress=not args.no_progress)
    print(f"sweep {spec.path}: {len(runs)} runs of '{spec.function.name}': {outcome.done} done, "
          f"{outcome.failed} failed, {outcome.skipped} already in the table"
          + (f" ({outcome.workers} workers)" if outcome.workers else ""))
    print(f"table {out}")
    return 1 if outcome.failed else 0


def run_report(args: argparse.Namespace) -> int:
    from ..sweep.errors import SweepError
    from ..sweep.plots import plot_report
    from ..sweep.report import as_json, as_text, summarise
    from ..sweep.table import read_rows

    _reject(args, SWEEP_ONLY, "simfid sweep report")
    if args.table is None:
        raise SweepError("simfid sweep report: give the TABLE to summarise")
    if not Path(args.table).is_file():
        raise SweepError(f"simfid sweep report: no table {args.table}")
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    report = summarise(read_rows(args.table), args.baseline, metrics)
    plots = plot_report(report, args.plots) if args.plots else []
    if args.json:
        json.dump({**as_json(report), "table": args.table, "plots": [str(p) for p in plots]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(as_text(report, args.table))
    for path in plots:
        print(f"plot {path}")
    return 0
