"""Where a fidelity-manager tick of the truck goes (issue 23, item 2: the manager under 2 % of the
step time with sleep on).

One ``simfid bench truck`` run (``truck.bench.run_once``) with the tick's parts wrapped in
thread-CPU timers: the state read (``EngineStateReader.read``), each signaler's ``update`` (the
packet signaler's ``boxes`` and rule 3, ``_below_high``, also alone), the lever writes
(``HelperBank.apply``) and the tick as a whole; printed per tick, beside the step's CPU per tick
and the manager's share as the bench computes it. The timers add about a microsecond per part.
Not a test.

    .venv/bin/python bench/truck_tick_parts.py [--scenario B] [--mode adfi-3-sleep]
        [--duration 20] [--seed 0]
"""
from __future__ import annotations

import argparse
import collections
import os
import time

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from sim_fidelity.fidelity_manager.helpers import HelperBank  # noqa: E402
from sim_fidelity.fidelity_manager.manager import FidelityManager  # noqa: E402
from sim_fidelity.fidelity_manager.signalers.base import Signaler  # noqa: E402
from sim_fidelity.fidelity_manager.signalers.packet import PacketSignaler  # noqa: E402
from sim_fidelity.simulator.state_reader import EngineStateReader  # noqa: E402
from sim_fidelity.truck import bench  # noqa: E402

CPU: dict[str, float] = collections.defaultdict(float)


def timed(cls: type, name: str, label: str) -> None:
    """Wrap ``cls.name`` so that its thread CPU adds up under ``label``."""
    inner = getattr(cls, name)

    def wrapper(*args, **kwargs):
        start = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            CPU[label] += time.thread_time() - start
    setattr(cls, name, wrapper)


def signaler_classes() -> list[type]:
    """Every loaded Signaler subclass that defines its own ``update``."""
    found, todo = [], [Signaler]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls is not Signaler and "update" in vars(cls):
            found.append(cls)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="B")
    parser.add_argument("--mode", default="adfi-3-sleep", choices=bench.MODES)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    parts = [(FidelityManager, "tick", "tick (whole)"),
             (EngineStateReader, "read", "  state read"),
             *[(cls, "update", f"  {cls.__name__}.update") for cls in signaler_classes()],
             (PacketSignaler, "boxes", "    PacketSignaler.update: boxes"),
             (PacketSignaler, "_below_high", "    PacketSignaler.update: rule 3 (_below_high)"),
             (HelperBank, "apply", "  lever writes (HelperBank.apply)")]
    for cls, name, label in parts:
        timed(cls, name, label)
    result = bench.run_once(args.scenario, args.mode, args.seed, args.duration)
    ticks = result["ticks"]
    print(f"{args.scenario} {args.mode}, {args.duration:g} s, seed {args.seed}: {ticks} ticks, "
          f"step CPU {1e6 * result['cpu'] / ticks:.0f} us per tick, manager "
          f"{result['manager_cpu_pct']:.2f} % of the step CPU, "
          f"{result['lowered_per_s']:.0f} packets lowered per s")
    for _, _, label in parts:
        print(f"  {label:<50} {1e6 * CPU[label] / ticks:7.0f} us per tick")


if __name__ == "__main__":
    main()
