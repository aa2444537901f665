"""``simfid render``: a still (.png) or a clip (.mp4, .gif) of a world, rendered off-screen."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..flag_types import integer, number, output_file
from ..ranges import at_least, between


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``render`` to the ``simfid`` sub-commands."""
    p = subparsers.add_parser("render", help="render a world off-screen: a still or a clip")
    p.add_argument("world", help="SDF world file")
    p.add_argument("-o", "--output", type=output_file, required=True,
                   help="OUT.png (a still) or OUT.mp4 / OUT.gif (a clip)")
    p.add_argument("--duration", type=number(at_least(0)), default=None,
                   help="sim seconds: simulated before the still (default 0), or the clip's "
                        "length (default 4)")
    p.add_argument("--fps", type=number(between(1, 60)), default=25.0,
                   help="clip frames per second of sim time")
    p.add_argument("--camera", default="auto",
                   help="auto, a camera of the world, or x,y,z,distance,azimuth,elevation")
    p.add_argument("--width", type=integer(between(16, 4096)), default=640, help="pixels")
    p.add_argument("--height", type=integer(between(16, 4096)), default=480, help="pixels")
    p.add_argument("--levels", action="store_true",
                   help="colour links by fidelity level, with a legend (implied by "
                        "--fidelity-config)")
    p.add_argument("--fidelity-config", type=Path, default=None,
                   help="a fidelity-manager YAML: the manager runs and its levels are shown")
    p.add_argument("--preset", default=None, help="the config's preset (default: its own)")
    p.add_argument("--unloader", type=integer(at_least(0)), default=None, metavar="SEED",
                   help="truck worlds: run the unloading controller with this seed")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the world, run it as asked and write the still or clip."""
    from ..viz.errors import RenderError
    from ..viz.render import Filmer, View, output_kind, write_clip, write_still

    kind = output_kind(args.output)
    if args.preset and args.fidelity_config is None:
        raise RenderError("--preset needs --fidelity-config")
    duration = args.duration if args.duration is not None else (0.0 if kind == "still" else 4.0)
    engine, control, period = _load(args)
    manager = None
    if args.fidelity_config is not None:
        from ..fidelity_manager import FidelityManager
        manager = FidelityManager(engine, args.fidelity_config, args.preset)
    view = View(args.width, args.height, args.camera, args.levels)
    filmer = Filmer(engine, view, manager, control.tick if control else None, period)
    try:
        if kind == "still":
            filmer.run_to(engine.time + duration)
            write_still(args.output, filmer.frame())
            n = 1
        else:
            n = write_clip(args.output, filmer.frames(duration, args.fps), args.fps)
    finally:
        filmer.close()
        if manager is not None:
            manager.close()
    print(f"{args.output}: {n} frame{'s' * (n != 1)}, {args.width}x{args.height}, "
          f"sim time {engine.time:.2f} s", file=sys.stderr)
    return 0


def _load(args: argparse.Namespace):
    """The engine, and the unloading controller with its period when asked for."""
    if args.unloader is None:
        from ..simulator.engine import MujocoEngine
        return MujocoEngine.from_file(args.world), None, 0.0
    from ..truck.controller import CONTROL_PERIOD, UnloadingController
    from ..truck.robot import load_truck
    engine, robot = load_truck(args.world)
    return engine, UnloadingController(robot, seed=args.unloader), CONTROL_PERIOD
