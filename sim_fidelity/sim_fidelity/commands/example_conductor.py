"""``simfid example conductor``: paper 003's Table 2 (`model_conductor/scenarios/`).

``simfid example conductor record [--out DIR] [--seed N]`` records the executions (bags and
sidecar YAML files); ``simfid example conductor [--recordings DIR] [--seed N] [--finger-drive
impedance|effort|position] [--json] [--plots DIR]`` replays every recording through the
ensemble and the three baselines and prints Table 2 (without ``--recordings`` it records them
first, into a temporary folder).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from ..flag_types import integer, output_folder
from ..model_conductor.scenarios import DEFAULT_FINGER_DRIVE, FINGER_DRIVES
from ..ranges import at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``conductor`` (and ``conductor record``) to the sub-commands of ``simfid example``."""
    p = subparsers.add_parser("conductor", help="paper 003's Table 2: recorded grasp-and-drop "
                                                "and insertion executions interpreted by a "
                                                "model ensemble and three baselines")
    p.add_argument("--recordings", type=Path,
                   help="folder written by 'simfid example conductor record' (default: record "
                        "the data set now, into a temporary folder)")
    p.add_argument("--seed", type=integer(at_least(0)), default=0,
                   help="data set seed when recording (default 0)")
    p.add_argument("--finger-drive", choices=FINGER_DRIVES, default=DEFAULT_FINGER_DRIVE,
                   help="how every replay drives the fingers: 'impedance' applies the "
                        "recorded finger efforts as torques and servos toward the recorded "
                        "positions (a torque-controlled hand), 'effort' the torques alone, "
                        "'position' makes the recorded positions servo targets (default "
                        f"{DEFAULT_FINGER_DRIVE})")
    p.add_argument("--plots", type=output_folder, help="folder for the trajectory plots")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)
    sub = p.add_subparsers(dest="conductor_command")
    r = sub.add_parser("record", help="record the executions: MCAP bags and sidecar YAML")
    r.add_argument("--out", type=output_folder, default=Path("conductor_recordings"),
                   help="folder to write (default ./conductor_recordings)")
    r.add_argument("--seed", type=integer(at_least(0)), default=0,
                   help="data set seed (default 0)")
    r.set_defaults(func=record)


def record(args: argparse.Namespace) -> int:
    """Record the data set and list what was written."""
    from ..model_conductor.scenarios.recording import record_all

    for sidecar in record_all(args.out, args.seed, progress=_progress(args)):
        truth = f"{sidecar['label']['predicate']} = {sidecar['label']['value']}"
        print(f"{args.out / sidecar['bag']}: {sidecar['kind']} ({sidecar['variant']}), "
              f"{sidecar['duration']:.1f} s, {truth}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Replay every recording through every method; print Table 2 (or JSON)."""
    from ..model_conductor.scenarios.recording import load_data_set, record_all
    from ..model_conductor.scenarios.table2 import plot, replay_all, report, table

    with tempfile.TemporaryDirectory(prefix="simfid_conductor_") as scratch:
        folder = args.recordings
        if folder is None:
            folder = Path(scratch)
            record_all(folder, args.seed, progress=_progress(args))
        sidecars = load_data_set(folder)
        show = _progress(args)
        results = replay_all(folder, sidecars, finger_drive=args.finger_drive, progress=(
            (lambda r: show(f"{r.execution} {r.method}: {r.outcome} "
                            f"({'right' if r.correct else 'wrong'}), RTF "
                            f"{r.real_time_factor:.2f}")) if show else None))
        plots = [*plot(results, args.plots),
                 *_frames(folder, sidecars, args.plots, args.finger_drive)] \
            if args.plots else []
    rows = table(results)
    if args.json:
        json.dump({"table": rows, "replays": [r.to_dict() for r in results],
                   "plots": [str(p) for p in plots]}, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        print(report(rows))
        for r in results:
            if not r.correct:
                print(f"wrong: {r.execution} ({r.variant}, truth {r.label}) {r.method}: "
                      f"{r.outcome}")
        for path in plots:
            print(f"plot  {path}")
    return 0


def _frames(folder: Path, sidecars: list, out: Path, finger_drive: str) -> list[Path]:
    """A rendered frame of each scenario; none (with a note) where off-screen GL is missing."""
    from ..model_conductor.scenarios.frames import render_frames
    from ..viz.errors import RenderError

    try:
        return render_frames(folder, sidecars, out, finger_drive)
    except RenderError as e:
        print(f"no rendered frames: {e}", file=sys.stderr)
        return []


def _progress(args: argparse.Namespace):
    """A progress printer on stderr when it is a terminal and no JSON is asked for."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        return None
    return lambda text: print(text, file=sys.stderr)
