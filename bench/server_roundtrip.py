"""sim_server over ROS 2: service round trips and the cost of a client polling states.

Starts sim_server in a separate process (loopback only, its own DDS domain) and measures in one run:
* GetEntitiesStates of the 500 boxes of the lever wall (one batched call), and the same states
  through our flat-array ~/get_states,
* a batch lever change (SetLever) of 450 boxes, down and up,
* the server's real-time factor (its ~/performance topic) on the revolute-joint world running as
  fast as possible, alternating windows without and with a client polling the pendulum states at
  50 Hz.
Not a test.

    .venv/bin/python bench/server_roundtrip.py [--repeats 20] [--window 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

import numpy as np  # noqa: E402

from sim_fidelity.simulator import Lever, SimState  # noqa: E402
from sim_fidelity.simulator.ros.client import RosSimulator  # noqa: E402
from sim_fidelity.world_generators.box_wall import wall_sdf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def start_server(world: Path, domain: int, **params) -> subprocess.Popen:
    args = [sys.executable, "-m", "sim_fidelity.simulator.ros.server", "--ros-args",
            "-p", f"world:={world}"]
    for k, v in params.items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def timed(fn, repeats: int) -> np.ndarray:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return np.array(out) * 1e3


def round_trips(domain: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "box_wall.sdf"
        world.write_text(wall_sdf())
        proc = start_server(world, domain, paused=True)
        sim = RosSimulator(domain_id=domain, timeout=60.0)
        try:
            sim.wait_for_server(60.0)
            boxes = sim.entities(pattern=r"^box_[^:]*$")
            assert len(boxes) == 500, len(boxes)
            sim.get_states(boxes)  # warm up
            states_ms = timed(lambda: sim.get_states(boxes), repeats)
            standard = sim.request("get_entities_states")
            standard.filters.filter = r"^box_[^:]*$"
            standard_ms = timed(lambda: sim.call("get_entities_states", standard), repeats)
            lowered = boxes[:450]

            def toggle():
                sim.set_lever(lowered, Lever.DYNAMICS, False)
                sim.set_lever(lowered, Lever.DYNAMICS, True)
            lever_ms = timed(toggle, repeats) / 2
        finally:
            sim.close()
            proc.terminate()
            proc.wait(10)
    return {"get_entities_states_500_ms": float(np.median(standard_ms)),
            "get_entities_states_500_p90_ms": float(np.percentile(standard_ms, 90)),
            "get_states_flat_500_ms": float(np.median(states_ms)),
            "get_states_flat_500_p90_ms": float(np.percentile(states_ms, 90)),
            "set_lever_450_ms": float(np.median(lever_ms)),
            "set_lever_450_p90_ms": float(np.percentile(lever_ms, 90))}


def polling_cost(domain: int, window: float, rounds: int) -> dict:
    from sim_fidelity_interfaces.msg import Performance
    world = REPO / "sim_fidelity" / "worlds" / "revolute_joint_test.sdf"
    proc = start_server(world, domain, real_time_factor=0.0)
    sim = RosSimulator(domain_id=domain, timeout=30.0)
    perf = []
    sim._node.create_subscription(Performance, "/sim_server/performance",
                                  lambda m: perf.append((time.monotonic(), m.real_time_factor)), 10)
    try:
        sim.wait_for_server(60.0)
        names = sim.entities(pattern=r"::(upper|lower)_link$") + sim.entities(pattern=r"^[^:]+$")
        sim.set_sim_state(SimState.PLAYING)
        time.sleep(2.0)
        quiet, polled, polls = [], [], 0
        for _ in range(rounds):
            start = time.monotonic()
            time.sleep(window)
            quiet += [r for t, r in perf if start + 1.0 < t <= time.monotonic()]
            stop = threading.Event()

            def poll(stop: threading.Event) -> None:
                nonlocal polls
                while not stop.is_set():
                    t0 = time.monotonic()
                    sim.get_states(names)
                    polls += 1
                    stop.wait(max(0.0, 0.02 - (time.monotonic() - t0)))
            thread = threading.Thread(target=poll, args=(stop,))
            start = time.monotonic()
            thread.start()
            time.sleep(window)
            stop.set()
            thread.join()
            polled += [r for t, r in perf if start + 1.0 < t <= time.monotonic()]
    finally:
        sim.close()
        proc.terminate()
        proc.wait(10)
    return {"rtf_no_client": float(np.median(quiet)), "rtf_polling_50hz": float(np.median(polled)),
            "polling_ratio": float(np.median(polled) / np.median(quiet)),
            "polled_entities": len(names), "polls": polls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--window", type=float, default=5.0, help="seconds per RTF window")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    base = 150 + os.getpid() % 40
    result = {**round_trips(base, args.repeats), **polling_cost(base + 1, args.window, args.rounds),
              "machine": platform.machine(), "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for k, v in result.items():
            print(f"{k:34s} {v:.3f}" if isinstance(v, float) else f"{k:34s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
