"""``simfid serve``: the ``sim_server`` node (``simulation_interfaces`` over ROS 2) from the command
line, with options instead of ``--ros-args -p``."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..flag_types import number
from ..ranges import above, at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``serve`` to the ``simfid`` sub-commands."""
    p = subparsers.add_parser("serve", help="serve a world over simulation_interfaces (ROS 2)")
    p.add_argument("world", help="SDF world file")
    p.add_argument("--rtf", type=number(at_least(0)), default=1.0,
                   help="real-time factor; 0 = as fast as possible")
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument("--step-size", type=number(at_least(0)), default=0.0,
                   help="physics step override (s)")
    p.add_argument("--publish-rate", type=number(above(0)), default=50.0,
                   help="state topics rate (Hz)")
    p.add_argument("--odometry", nargs="*", default=[], help="models whose odometry is published")
    p.add_argument("--sleep", action="store_true", help="turn on MuJoCo's sleeping islands")
    p.add_argument("--gui", action="store_true",
                   help="open MuJoCo's viewer on the simulation (space plays/pauses)")
    p.add_argument("--viz-rate", type=number(at_least(0)), default=10.0,
                   help="rate of /tf and ~/markers while subscribed (Hz); 0 = never")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the ``sim_server`` node with the parameters the options give, until a signal."""
    from ..simulator.ros.server import run as run_server

    return run_server({"world": str(Path(args.world).resolve()), "real_time_factor": args.rtf,
                       "paused": args.paused, "step_size": args.step_size,
                       "publish_rate": args.publish_rate, "odometry": args.odometry or [""],
                       "sleep": args.sleep, "gui": args.gui, "viz_rate": args.viz_rate})
