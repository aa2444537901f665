"""``simfid record --preset NAME -o BAG``: record a preset's topics to an MCAP bag with rclpy
(for a machine without rosbag2; ``recording/live.py``)."""
from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``record`` to the ``simfid`` sub-commands."""
    p = subparsers.add_parser("record", help="record a preset's topics to a bag (MCAP) until "
                                             "Ctrl-C")
    p.add_argument("--preset", required=True,
                   help="preset name (config/recording/NAME.yaml, e.g. ugv) or a preset file")
    p.add_argument("-o", "--output", required=True, metavar="BAG",
                   help="the bag to write (a new directory, as rosbag2 makes it)")
    p.add_argument("--use-sim-time", action="store_true",
                   help="stamp messages with /clock time (as ros2 bag record --use-sim-time)")
    p.add_argument("--duration", type=float, default=0.0,
                   help="stop after this many seconds (default: only on SIGINT/SIGTERM)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Record until a signal (or ``--duration``); print what was written per topic."""
    from ..recording.live import record
    from ..recording.preset import load_preset

    preset = load_preset(args.preset)
    result = record(preset, args.output, use_sim_time=args.use_sim_time,
                    duration=args.duration, report=lambda line: print(line, flush=True))
    stopped = f" (stopped by {result.signal})" if result.signal else ""
    print(f"wrote {sum(result.counts.values())} messages in {result.seconds:.1f} s to "
          f"{result.path}{stopped}; {result.drained} taken after the stop")
    for topic, count in result.counts.items():
        print(f"  {topic}: {count}")
    sys.stdout.flush()
    return 0
