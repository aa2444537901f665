"""``simfid conduct``: run a model ensemble (paper 003) in process, for scripts and tests."""
from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``conduct`` to the sub-commands of ``simfid``."""
    p = subparsers.add_parser("conduct", help="run a model ensemble from its YAML config "
                              "(paper 003)")
    p.add_argument("config", help="the ensemble's YAML file")
    p.add_argument("--bag", default=None,
                   help="a recording (MCAP or sqlite3) of JointState and ActionAnnotation "
                        "topics to play back; the run ends with it")
    p.add_argument("--duration", type=float, default=None,
                   help="simulated seconds to run (with --bag: at most)")
    p.add_argument("--log", default=None, help="write every output, event and responsibility "
                   "change to this new bag")
    p.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap",
                   help="storage of the --log bag")
    p.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build, run and report the ensemble; exit 2 for a bad config or recording."""
    from ..model_conductor.config import build_conductor
    from ..model_conductor.data_sources import RecordedSource
    from ..model_conductor.errors import ConductorError
    from ..model_conductor.log import BagLog

    if args.bag is None and args.duration is None:
        raise ConductorError("give --duration, --bag or both: the run must end")
    if args.duration is not None and not args.duration > 0:
        raise ConductorError(f"--duration must be positive; got {args.duration}")
    source = RecordedSource(args.bag) if args.bag else None
    conductor, _ = build_conductor(args.config)
    log = BagLog(args.log, args.storage) if args.log else None
    try:
        if log is not None:
            conductor.add_listener(log)
        report = conductor.run(duration=args.duration, source=source)
    finally:
        if log is not None:
            log.close()
    history = conductor.handler.history if conductor.handler is not None else []
    result = report.as_dict()
    result["triggers"] = [{"time": a.time, "trigger": a.trigger, "fired": a.fired,
                           "reason": a.reason} for a in history]
    result["variables"] = conductor.variables
    if log is not None:
        result["log"] = {"path": str(log.path), **log.counts}
    if args.json:
        json.dump(result, sys.stdout, default=str)
        print()
        return 0
    print(f"ran {report.time:.3f} s simulated in {report.wall:.3f} s wall "
          f"(real-time factor {report.real_time_factor:.2f}), {report.ticks} ticks, "
          f"{report.messages} data messages, {report.events} events")
    print(f"{'model':<20} {'id':>3} {'stepping':<8} {'steps':>7} {'skips':>6} {'lag s':>8}")
    for m in report.models:
        print(f"{m.name + (' (main)' if m.main else ''):<20} {m.id:>3} {m.stepping:<8} "
              f"{m.steps:>7} {m.skips:>6} {m.lag:>8.3f}")
    moves = [t for t in report.transfers if t.cause != "config"]
    print(f"{len(moves)} responsibility transfers")
    for t in moves:
        print(f"  {t.time:8.3f} s  {t.attribute} of {t.entity}: {t.from_model} -> {t.to_model} "
              f"({t.cause})")
    fired = [a for a in history if a.fired]
    print(f"{len(fired)} trigger activations ({len(history) - len(fired)} stopped by a "
          "precondition)")
    if log is not None:
        print(f"log: {log.path} ({log.counts['outputs']} outputs, {log.counts['transfers']} "
              f"transfers, {log.counts['events']} events)")
    return 0
