"""Giving back N static copies: one model after another against all at once, side by side in one
run, through each client flavour of the static-copy fallback.

sim_server plays nothing (paused) with stack_test.sdf's first ``--models`` boxes and serves
``--interfaces`` without lever services, as Gazebo would; the client lowers every box (DYNAMICS
off: each box swapped for a static copy), then gives them back, timed, in two ways:

* ``sequential``: ``set_lever([box], DYNAMICS, True)`` per box: per model a state read, a delete, a
  spawn and a state write, each waited for before the next is sent (the request pattern of the
  fallback before it batched);
* ``concurrent``: ``set_lever(boxes, DYNAMICS, True)`` once: one state read, every delete, then
  every spawn, ``client.IN_FLIGHT`` requests unanswered at a time, one state write.

After each restore every box must be back, not static, within 1 mm of where it was. Each way is
run ``--repeat`` times, alternating. Not a test.

    .venv/bin/python bench/static_copy_restore.py [--models 50] [--repeat 2]
        [--flavours gazebo_msgs,simulation_interfaces] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

import numpy as np  # noqa: E402

from sim_fidelity.ros_domains import next_domain  # noqa: E402
from sim_fidelity.simulator import EntityKind, Lever  # noqa: E402
from sim_fidelity.simulator.ros.classic.client import ClassicRosSimulator  # noqa: E402
from sim_fidelity.simulator.ros.client import IN_FLIGHT, RosSimulator  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[1] / "sim_fidelity"
WORLD = PACKAGE / "worlds" / "stack_test.sdf"
FLAVOURS = {"gazebo_msgs": ClassicRosSimulator, "simulation_interfaces": RosSimulator}


def boxes_world(count: int, path: Path) -> list[str]:
    """stack_test.sdf with its first ``count`` boxes written to ``path``; their names."""
    tree = ET.parse(WORLD)
    world = tree.getroot().find("world")
    boxes = [m for m in world.findall("model") if m.get("name").startswith("box_")]
    if count > len(boxes):
        raise SystemExit(f"--models {count}: stack_test.sdf has {len(boxes)} boxes")
    for model in boxes[count:]:
        world.remove(model)
    tree.write(path)
    return [m.get("name") for m in boxes[:count]]


def restored(sim, boxes: list[str], start: np.ndarray) -> bool:
    """Every box listed, not static, within 1 mm of ``start``."""
    listed = set(sim.entities(EntityKind.MODEL))
    if not set(boxes) <= listed or any(sim.entity_info(b).static for b in boxes):
        return False
    return bool(np.abs(sim.get_states(boxes)[0][:, :3] - start).max() < 1e-3)


def run_flavour(flavour: str, count: int, repeat: int, folder: Path) -> list[dict]:
    world = folder / "stack.sdf"
    boxes = boxes_world(count, world)
    domain = next_domain()
    params = {"world": world, "paused": "true", "serve_levers": "false", "interfaces": "both",
              "gazebo_namespace": "/gazebo"}  # both: the static flags come from gazebo_msgs
    args = [sys.executable, "-m", "sim_fidelity.simulator.ros.server", "--ros-args"]
    for k, v in params.items():
        args += ["-p", f"{k}:={v}"]
    server = subprocess.Popen(args, env=dict(os.environ, ROS_DOMAIN_ID=str(domain)), cwd=PACKAGE,
                              stdout=(folder / f"{flavour}.log").open("w"),
                              stderr=subprocess.STDOUT)
    extra = {"gazebo_namespace": "/gazebo"} if flavour == "gazebo_msgs" else {}
    rows = []
    try:
        with FLAVOURS[flavour](domain_id=domain, timeout=600.0, world_file=str(world),
                               **extra) as sim:
            sim.wait_for_server(120.0)
            static_of = (sim if flavour == "gazebo_msgs" else
                         ClassicRosSimulator(domain_id=domain, timeout=600.0,
                                             gazebo_namespace="/gazebo"))
            start = sim.get_states(boxes)[0][:, :3]
            for _ in range(repeat):
                for way in ("sequential", "concurrent"):
                    t0 = time.perf_counter()
                    sim.set_lever(boxes, Lever.DYNAMICS, False)
                    lowered_s = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    if way == "sequential":
                        for box in boxes:
                            sim.set_lever([box], Lever.DYNAMICS, True)
                    else:
                        sim.set_lever(boxes, Lever.DYNAMICS, True)
                    restore_s = time.perf_counter() - t0
                    rows.append({"flavour": flavour, "way": way, "models": count,
                                 "restore_s": restore_s, "lower_s": lowered_s,
                                 "ok": restored(static_of, boxes, start)})
                    print(f"[{flavour} {way}] {restore_s:.1f} s", file=sys.stderr, flush=True)
            if static_of is not sim:
                static_of.close()
    finally:
        server.terminate()
        server.wait(30)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--flavours", default=",".join(FLAVOURS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in args.flavours.split(","):
            rows += run_flavour(flavour, args.models, args.repeat, Path(tmp))
    if args.json:
        print(json.dumps({"machine": platform.node(), "load": [load_before, os.getloadavg()],
                          "in_flight": IN_FLIGHT, "rows": rows}, indent=1))
        return 0
    print(f"{args.models} static copies given back, {IN_FLIGHT} requests in flight, load "
          f"{load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"{'flavour':22s} {'way':11s} {'restore s':>9s} {'s/model':>8s} {'lower s':>8s} ok")
    for r in rows:
        print(f"{r['flavour']:22s} {r['way']:11s} {r['restore_s']:9.1f} "
              f"{r['restore_s'] / r['models']:8.3f} {r['lower_s']:8.1f} "
              f"{'yes' if r['ok'] else 'NO'}")
    for flavour in dict.fromkeys(r["flavour"] for r in rows):
        seq = np.median([r["restore_s"] for r in rows
                         if r["flavour"] == flavour and r["way"] == "sequential"])
        con = np.median([r["restore_s"] for r in rows
                         if r["flavour"] == flavour and r["way"] == "concurrent"])
        print(f"{flavour}: sequential / concurrent = {seq / con:.2f} (medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
