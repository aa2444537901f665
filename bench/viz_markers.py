"""sim_server's /tf and ~/markers at 10 Hz on truck B: the real-time factor with and without them.

Starts sim_server on worlds/truck_B.sdf (1201 links, 1157 shown geoms) running as fast as
possible in a separate process (loopback only, its own DDS domain), and alternates windows with
no subscriber (nothing is built) and with a subscriber to both /tf and /sim_server/markers
(viz_rate 10 Hz: every model's transform each time, the markers that moved or changed colour,
all of them every 2 s). Reports the median of the server's own 1 s real-time-factor windows
(~/performance) per condition, their ratio, and what was received. Then, in process, the wall
time of the publishing callback itself on the same world (the first, complete, call and the
median of later ones while the world steps 0.1 s of sim time between calls), which a loaded
machine distorts less than a ratio of real-time factors. Not a test.

    .venv/bin/python bench/viz_markers.py [--window 10] [--rounds 2] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
WORLD = REPO / "sim_fidelity" / "worlds" / "truck_B.sdf"


def measure(domain: int, window: float, rounds: int) -> dict:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    from sim_fidelity_interfaces.msg import Performance
    args = [sys.executable, "-m", "sim_fidelity.simulator.ros.server", "--ros-args",
            "-p", f"world:={WORLD}", "-p", "real_time_factor:=0.0", "-p", "viz_rate:=10.0"]
    proc = subprocess.Popen(args, env=dict(os.environ, ROS_DOMAIN_ID=str(domain)), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("viz_bench", context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    perf: list[tuple[float, float]] = []
    got = {"markers": 0, "marker_arrays": 0, "tf": 0}
    node.create_subscription(Performance, "/sim_server/performance",
                             lambda m: perf.append((time.monotonic(), m.real_time_factor)), 10)

    def spin_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)

    def on_markers(m) -> None:
        got["marker_arrays"] += 1
        got["markers"] += len(m.markers)

    def on_tf(_m) -> None:
        got["tf"] += 1
    try:
        deadline = time.monotonic() + 120
        while not perf and time.monotonic() < deadline:
            spin_for(0.5)
        spin_for(3.0)  # the packets settle
        none, viz = [], []
        for _ in range(rounds):
            start = time.monotonic()
            spin_for(window)
            none += [r for t, r in perf if start + 1.5 < t]
            perf.clear()
            subs = [node.create_subscription(MarkerArray, "/sim_server/markers", on_markers, 10),
                    node.create_subscription(TFMessage, "/tf", on_tf, 10)]
            start = time.monotonic()
            spin_for(window)
            viz += [r for t, r in perf if start + 1.5 < t]
            perf.clear()
            for s in subs:
                node.destroy_subscription(s)
    finally:
        proc.terminate()
        proc.wait(30)
        executor.shutdown()
        node.destroy_node()
        ctx.try_shutdown()
    return {"rtf_none": float(np.median(none)), "rtf_tf_and_markers_10hz": float(np.median(viz)),
            "ratio": float(np.median(viz) / np.median(none)), "windows_none": len(none),
            "windows_viz": len(viz), **got}


def publish_cost(domain: int, calls: int) -> dict:
    """Wall time of SceneVisualization.publish on truck B with a subscriber to both topics."""
    import threading

    import rclpy
    from tf2_msgs.msg import TFMessage
    from visualization_msgs.msg import MarkerArray

    from sim_fidelity.simulator.engine import MujocoEngine
    from sim_fidelity.simulator.ros.publishers import PublishGate
    from sim_fidelity.simulator.ros.visualization import SceneVisualization
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("viz_cost", context=ctx)
    try:
        engine = MujocoEngine.from_file(WORLD)
        viz = SceneVisualization(node, engine, threading.RLock(), PublishGate(node), rate=0.0,
                                 tf_links=[])
        node.create_subscription(MarkerArray, "/viz_cost/markers", lambda m: None, 10)
        node.create_subscription(TFMessage, "/tf", lambda m: None, 10)
        deadline = time.monotonic() + 60
        while (viz.markers.get_subscription_count() == 0 or viz.tf.get_subscription_count() == 0) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        later, step = [], []
        t0 = time.perf_counter()
        viz.publish()
        first = time.perf_counter() - t0
        for _ in range(calls):
            t0 = time.perf_counter()
            engine.run_for(0.1)
            step.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            viz.publish()
            later.append(time.perf_counter() - t0)
    finally:
        node.destroy_node()
        ctx.try_shutdown()
    return {"publish_first_ms": 1e3 * first, "publish_later_median_ms": 1e3 * np.median(later),
            "publish_later_p90_ms": 1e3 * np.percentile(later, 90),
            "step_0.1s_sim_median_ms": 1e3 * np.median(step)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=10.0, help="seconds per condition")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=50, help="in-process publish calls")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    domain = 170 + os.getpid() % 40
    result = {**measure(domain, args.window, args.rounds),
              **publish_cost(domain + 1, args.calls),
              "machine": platform.machine(), "cpus": os.cpu_count(),
              "load_average_1min": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for k, v in result.items():
            print(f"{k:26s} {v:.3f}" if isinstance(v, float) else f"{k:26s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
