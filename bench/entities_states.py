"""GetEntitiesStates of the lever wall's 500 boxes: what a plain rclpy client waits, and where
the time goes.

One run, one command:
* round trip: sim_server in a separate process (loopback only, its own DDS domain), a plain
  rclpy client (``create_client`` + ``call_async``, nothing of ours) calling the standard
  ``/get_entities_states`` for the 500 boxes; median and p90 of ``--repeats`` calls;
* its parts, measured side by side in this process on the same 500 states (alternating, best of
  ``--repeats``): the server's build of the response (per entity as before, batched fresh, and
  rewritten in place as the handler does when no response holds the last answer),
  rclpy's serialisation of it (server side) and deserialisation (client side);
* the profile of the client's deserialisation: which Python calls it makes per entity (the
  floor no server change removes).
Not a test.

    .venv/bin/python bench/entities_states.py [--repeats 20] [--json]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from simulation_interfaces.msg import EntityState  # noqa: E402
from simulation_interfaces.srv import GetEntitiesStates  # noqa: E402

from sim_fidelity.simulator.engine import MujocoEngine  # noqa: E402
from sim_fidelity.simulator.ros.convert import (  # noqa: E402
    ReusedStates,
    entity_states,
    pose_msg,
    time_msg,
    twist_msg,
)
from sim_fidelity.world_generators.box_wall import wall_sdf  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BOXES = r"^box_[^:]*$"


def per_entity(poses: np.ndarray, twists: np.ndarray, stamp_s: float) -> list[EntityState]:
    """The handler's build before the batched one: one message tree per entity from scratch."""
    out = []
    for p, t in zip(poses, twists):
        state = EntityState()
        state.header.stamp, state.header.frame_id = time_msg(stamp_s), "world"
        state.pose, state.twist = pose_msg(p), twist_msg(t)
        out.append(state)
    return out


def parts(world: str, repeats: int) -> dict:
    """Build (before/batched/reused), serialise, deserialise of the response, in this process."""
    engine = MujocoEngine.from_string(world)
    engine.step(50)
    names = engine.entities(pattern=BOXES)
    poses, twists = engine.get_states(names)
    res = GetEntitiesStates.Response()
    res.entities = names
    res.states = entity_states(poses, twists, engine.time)
    wire = serialize_message(res)
    reused = ReusedStates()
    reused.states(names, poses, twists, engine.time)
    steps = {"build_per_entity": lambda: per_entity(poses, twists, engine.time),
             "build_batched": lambda: entity_states(poses, twists, engine.time),
             "build_reused": lambda: reused.states(names, poses, twists, engine.time),
             "serialize": lambda: serialize_message(res),
             "deserialize": lambda: deserialize_message(wire, GetEntitiesStates.Response)}
    best = {k: np.inf for k in steps}
    for _ in range(repeats):  # alternating: the machine's load falls on every part alike
        for k, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    out = {f"{k}_ms": v * 1e3 for k, v in best.items()}
    out["entities"], out["wire_bytes"] = len(names), len(wire)
    out["build_speedup_batched"] = best["build_per_entity"] / best["build_batched"]
    out["build_speedup_reused"] = best["build_per_entity"] / best["build_reused"]
    return out


def deserialize_profile(world: str, top: int = 8) -> list[str]:
    """The Python calls of one client-side deserialisation of the 500 states, most time first."""
    engine = MujocoEngine.from_string(world)
    names = engine.entities(pattern=BOXES)
    res = GetEntitiesStates.Response()
    res.entities = names
    res.states = entity_states(*engine.get_states(names), engine.time)
    wire = serialize_message(res)
    prof = cProfile.Profile()
    prof.enable()
    deserialize_message(wire, GetEntitiesStates.Response)
    prof.disable()
    stats = pstats.Stats(prof)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][3])[:top]  # by cumulative time
    return [f"{calls:6d} calls {cum * 1e3:7.2f} ms cum  {Path(f).parent.name}/{Path(f).name}:"
            f"{line} {fn}" for (f, line, fn), (_, calls, _, cum, _) in rows]


def round_trip(world: Path, domain: int, repeats: int) -> dict:
    """A plain rclpy client's view of the standard service against sim_server in its process."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    proc = subprocess.Popen([sys.executable, "-m", "sim_fidelity.simulator.ros.server",
                             "--ros-args", "-p", f"world:={world}", "-p", "paused:=true"],
                            env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node("entities_states_bench", context=ctx)
    client = node.create_client(GetEntitiesStates, "/get_entities_states")
    executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    req = GetEntitiesStates.Request()
    req.filters.filter = BOXES

    def call() -> GetEntitiesStates.Response:
        future = client.call_async(req)
        executor.spin_until_future_complete(future, timeout_sec=60.0)
        if not future.done():
            raise TimeoutError("/get_entities_states did not answer within 60 s")
        return future.result()
    try:
        if not client.wait_for_service(timeout_sec=120.0):
            raise TimeoutError("sim_server's /get_entities_states did not appear within 120 s")
        count = len(call().states)  # warm up (discovery, first allocation)
        ms = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            ms.append((time.perf_counter() - t0) * 1e3)
    finally:
        executor.shutdown()
        node.destroy_node()
        ctx.try_shutdown()
        proc.terminate()
        proc.wait(20)
    return {"round_trip_ms": float(np.median(ms)),
            "round_trip_p90_ms": float(np.percentile(ms, 90)), "round_trip_entities": count}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    text = wall_sdf()
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "box_wall.sdf"
        world.write_text(text)
        result = round_trip(world, 190 + os.getpid() % 40, args.repeats)
    result.update(parts(text, args.repeats))
    result.update(load_average=os.getloadavg()[0], machine=platform.machine(), cpus=os.cpu_count())
    profile = deserialize_profile(text)
    if args.json:
        print(json.dumps({**result, "deserialize_profile": profile}, indent=1))
        return 0
    for k, v in result.items():
        print(f"{k:26s} {v:.3f}" if isinstance(v, float) else f"{k:26s} {v}")
    print("client-side deserialisation of the 500 states (cProfile, by cumulative time):")
    print("\n".join(profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
