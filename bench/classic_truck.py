"""The fidelity manager on truck B over ROS 2: simulation_interfaces with sim_server's levers
against Gazebo classic's gazebo_msgs (the static-copy fallback), side by side in one run.

For each path sim_server plays truck_B.sdf as fast as it can (real_time_factor 0) in its own
process and DDS domain (taken through ``sim_fidelity.ros_domains``' lock files, as the tests take
theirs); the manager runs in this process, ticking whenever ``--tick`` seconds of
sim time have passed, for ``--duration`` seconds of sim time; the real-time factor is sim time over
wall time from the start of play. Paths:

* ``hifi``: the manager off (preset hifi), the server's own pace with a client attached;
* ``simulation_interfaces``: RosSimulator, levers through ``/sim_server/set_lever``;
* ``gazebo_msgs``: ClassicRosSimulator against ``interfaces:=gazebo_msgs``: DYNAMICS and COLLISION
  by swapping each packet for a static copy (delete + spawn).

The config is config/truck.yaml whole, its packet tree on the packets matching ``--packets``
(``shape``: MEDIUM turns DYNAMICS off, LOW DYNAMICS and COLLISION, which through Gazebo classic is
a static copy without collision elements). Its 45 plunger trees (links, joints, a sensor and a
script of the robot's model) are lowered through the lever services; through ``gazebo_msgs`` they
stay HIGH, whole (no ACTUATION, SENSOR, SCRIPT; static copies swap whole top-level models, not
links), and the manager's reason is printed. Every swap on the embedded engine recompiles the
world (about 3 s for truck B's 1007 packets on a loaded machine), so all packets would take
hours. No controller drives the robot (the plungers' signaler keeps them at its initial LOW).
After the run the manager is closed; every packet is checked back at full fidelity (no static
copy left, each lever read back as at the start: ``manager.mismatches()``).
Not a test.

    .venv/bin/python bench/classic_truck.py [--duration 4] [--packets 'packet_000\\d'] [--json]
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
from collections import Counter
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from sim_fidelity.fidelity_manager import FidelityManager, Level  # noqa: E402
from sim_fidelity.fidelity_manager.support import describe  # noqa: E402
from sim_fidelity.ros_domains import next_domain  # noqa: E402
from sim_fidelity.simulator import EntityKind, Lever, SimState  # noqa: E402
from sim_fidelity.simulator.ros.classic.client import ClassicRosSimulator  # noqa: E402
from sim_fidelity.simulator.ros.client import RosSimulator  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "sim_fidelity"
WORLD = PACKAGE / "worlds" / "truck_B.sdf"
CONFIG = PACKAGE / "config" / "truck.yaml"
PATHS = {  # path: (preset, sim_server parameters, client class)
    "hifi": ("hifi", {"interfaces": "simulation_interfaces"}, RosSimulator),
    "simulation_interfaces": ("adfi-3", {"interfaces": "simulation_interfaces"}, RosSimulator),
    "gazebo_msgs": ("adfi-3", {"interfaces": "gazebo_msgs", "serve_levers": False},
                    ClassicRosSimulator),
}


def truck_config(pattern: str, folder: Path) -> Path:
    """truck.yaml with its packet tree over the packets matching ``pattern``."""
    config = yaml.safe_load(CONFIG.read_text())
    config["trees"]["packets"]["objects"][0].update(pattern=f"({pattern})")
    config["trees"]["packets"]["anchor"] = "{key}"  # the packet model locates its tree
    path = folder / "truck_some_packets.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def start_server(domain: int, log: Path, **params) -> subprocess.Popen:
    args = [sys.executable, "-m", "sim_fidelity.simulator.ros.server", "--ros-args",
            "-p", f"world:={WORLD}", "-p", "paused:=true", "-p", "real_time_factor:=0.0"]
    for k, v in params.items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    return subprocess.Popen(args, env=env, cwd=PACKAGE, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)


def run_path(name: str, config: Path, domain: int, duration: float, tick: float,
             folder: Path) -> dict:
    preset, params, client = PATHS[name]
    server = start_server(domain, folder / f"{name}.log", **params)
    try:
        with client(domain_id=domain, timeout=600.0, world_file=str(WORLD)) as sim:
            sim.wait_for_server(120.0)
            manager = FidelityManager(sim, config, preset)
            is_packet = np.array([t.group == "packets" for t in manager.trees.trees])
            packets = sorted(manager.trees.entity[is_packet[manager.trees.tree]])
            ticks, lowest, manager_wall = 0, len(packets), 0.0
            sim.set_sim_state(SimState.PLAYING)
            start, next_tick = time.perf_counter(), 0.0
            while sim.time < duration:
                if sim.time < next_tick:
                    time.sleep(0.002)
                    continue
                report = manager.tick()
                ticks, manager_wall = ticks + 1, manager_wall + report.wall
                lowest = min(lowest, int((manager.levels[is_packet] == Level.HIGH).sum()))
                next_tick = sim.time + tick
            wall = time.perf_counter() - start
            reached = sim.time
            plungers = Counter(Level(int(v)).name for v in manager.levels[~is_packet])
            sim.set_sim_state(SimState.PAUSED)
            t0 = time.perf_counter()
            manager.close()
            close_wall = time.perf_counter() - t0
            differ = len(manager.mismatches())
            restored = all(sim.get_lever(packets, lever).all()
                           for lever in (Lever.DYNAMICS, Lever.COLLISION))
            static = [p for p in packets if sim.entity_info(p).static]
            models = len(sim.entities(EntityKind.MODEL))
    finally:
        server.terminate()
        server.wait(30)
    return {"path": name, "preset": preset, "packets": len(packets), "sim_time": reached,
            "wall": wall, "rtf": reached / wall, "ticks": ticks,
            "manager_ms_per_tick": 1e3 * manager_wall / max(ticks, 1),
            "fewest_high": lowest, "close_s": close_wall,
            "restored": bool(restored and not static and not differ), "differ": differ,
            "models_after": models, "plunger_levels": dict(plungers),
            "high_whole": describe(manager.unsupported)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=4.0, help="sim seconds per path")
    parser.add_argument("--tick", type=float, default=0.04, help="sim seconds between ticks")
    parser.add_argument("--packets", default=r"packet_000\d", help="regex of managed packets")
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        config = truck_config(args.packets, Path(tmp))
        for name in args.paths.split(","):
            results.append(run_path(name, config, next_domain(), args.duration, args.tick,
                                    Path(tmp)))
            print(f"[{name}] done", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"machine": platform.node(), "load": os.getloadavg(),
                          "results": results}, indent=1))
        return 0
    base = next((r["rtf"] for r in results if r["path"] == "hifi"), np.nan)
    print(f"truck B, {args.duration:g} s sim per path, manager tick {args.tick:g} s, packets "
          f"/{args.packets}/, load {os.getloadavg()[0]:.1f}")
    print(f"{'path':22s} {'RTF':>6s} {'x hifi':>7s} {'ticks':>6s} {'ms/tick':>8s} "
          f"{'min HIGH':>8s} {'close s':>8s} restored plungers")
    for r in results:
        print(f"{r['path']:22s} {r['rtf']:6.3f} {r['rtf'] / base:7.2f} {r['ticks']:6d} "
              f"{r['manager_ms_per_tick']:8.1f} {r['fewest_high']:5d}/{r['packets']:<2d} "
              f"{r['close_s']:8.1f} {'yes' if r['restored'] else 'NO':8s} "
              f"{' '.join(f'{n} {k}' for k, n in sorted(r['plunger_levels'].items()))}")
    for r in results:
        for line in r["high_whole"]:
            print(f"{r['path']}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
