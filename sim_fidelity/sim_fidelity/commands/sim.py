"""``simfid sim``: simulate a world headless in the embedded engine, as fast as possible."""
from __future__ import annotations

import argparse
import json
import sys

from ..flag_types import number
from ..ranges import above, at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``sim`` to the ``simfid`` sub-commands."""
    p = subparsers.add_parser("sim", help="simulate a world headless as fast as possible")
    p.add_argument("world", help="SDF world file")
    p.add_argument("--duration", type=number(at_least(0)), default=10.0,
                   help="seconds of simulated time")
    p.add_argument("--json", action="store_true", help="print every model and link state as JSON")
    p.add_argument("--sleep", action="store_true", help="turn on MuJoCo's sleeping islands")
    p.add_argument("--step-size", type=number(above(0)), default=None,
                   help="override the world's step (s)")
    p.add_argument("--gui", action="store_true",
                   help="watch in MuJoCo's viewer, at real time (space pauses); needs a display")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Step the world for ``args.duration`` of sim time; print the real-time factor (or JSON)."""
    from ..simulator.engine import MujocoEngine
    from ..simulator.protocol import EntityKind

    engine = MujocoEngine.from_file(args.world, sleep=args.sleep, step_size=args.step_size)
    steps = round(args.duration / engine.step_size)
    wall = watch(engine, args.duration) if args.gui else engine.run_for(args.duration)
    rtf = engine.time / wall if wall > 0 else float("inf")
    summary = {"world": str(args.world), "sim_time": engine.time, "wall_time": wall,
               "real_time_factor": rtf, "steps": steps, "step_size": engine.step_size,
               "divergences": engine.divergences}
    if args.json:
        names = engine.entities(EntityKind.MODEL) + engine.entities(EntityKind.LINK)
        pose, twist = engine.get_states(names)
        summary["entities"] = {n: {"pose": p.tolist(), "twist": t.tolist()}
                               for n, p, t in zip(names, pose, twist)}
        json.dump(summary, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(f"world            {args.world}\n"
              f"sim time         {engine.time:.3f} s "
              f"({steps} steps of {engine.step_size * 1e3:g} ms)\n"
              f"wall time        {wall:.3f} s\n"
              f"real-time factor {rtf:.2f}")
    return 0



def watch(engine, duration: float) -> float:
    """Step at real time in MuJoCo's viewer until ``duration`` or the window closes; returns the
    wall time it took."""
    import threading
    import time

    from ..simulator.protocol import SimState
    from ..viz.viewer import LiveViewer

    lock = threading.RLock()

    def pause(playing: bool) -> None:
        with lock:
            engine.set_sim_state(SimState.PAUSED if playing else SimState.PLAYING)
    viewer = LiveViewer(engine, lock, pause).start()
    chunk = max(1, round(0.01 / engine.step_size))  # 10 ms of sim time per lock
    started = anchor = (time.monotonic(), engine.time)
    try:
        while engine.time < duration - 1e-9 and viewer.running:
            if engine.sim_state() != SimState.PLAYING:
                time.sleep(0.02)
                anchor = (time.monotonic(), engine.time)
                continue
            with lock:
                engine.step(min(chunk, max(1, round((duration - engine.time) / engine.step_size))))
            ahead = (engine.time - anchor[1]) - (time.monotonic() - anchor[0])
            if ahead > 0:
                time.sleep(ahead)
    finally:
        viewer.close()
    if viewer.error:
        from ..viz.errors import RenderError
        raise RenderError(viewer.error)
    return time.monotonic() - started[0]
