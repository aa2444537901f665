"""The model conductor over ROS 2: what a model in another process costs per tick.

Runs, side by side in one run, the same ensembles with their models in the conductor's process
and in processes of their own (loopback DDS, a domain of its own):

* a trivial main model alone; plus a second trivial model in process; plus the same model in a
  ``model_node`` (``RemoteModel``: one ``~/step`` service round trip per tick);
* a small physics world (a ball falling onto the ground, 1 ms steps, 10 per tick) as the main
  model: an in-process ``SimulatorModel`` against ``RosSimulatorModel`` over ``sim_server``.

Prints wall milliseconds per tick and the real-time factor of each. Not a test.

    .venv/bin/python bench/conductor_remote.py [--duration 2] [--json]
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
from pathlib import Path

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before rclpy is imported
os.environ.setdefault("HOME", "/tmp")

from sim_fidelity.model_conductor.conductor import Conductor  # noqa: E402
from sim_fidelity.model_conductor.demo_models import Integrator  # noqa: E402
from sim_fidelity.model_conductor.model import Model  # noqa: E402
from sim_fidelity.model_conductor.simulation_model import SimulatorModel  # noqa: E402
from sim_fidelity.world_generators.sdf_text import box_model, ground_plane, world  # noqa: E402

REPO = Path(__file__).resolve().parents[1] / "sim_fidelity"
STEP = 0.01


def start(module: str, name: str, domain: int, **params) -> subprocess.Popen:
    args = [sys.executable, "-m", module, "--ros-args", "-r", f"__node:={name}"]
    for k, v in params.items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def run(main: Model, others: list[Model], duration: float, parameters: dict | None = None
        ) -> dict:
    """Wall time per tick of ``duration`` simulated seconds; ``parameters`` are the main model's
    config parameters."""
    conductor = Conductor(step=STEP)
    conductor.register(main, main=True, parameters=parameters)
    for model in others:
        conductor.register(model)
    conductor.initialise()
    conductor.start()
    conductor.tick()  # the first tick opens connections; not timed
    report = conductor.run(duration=duration)
    return {"ms_per_tick": report.wall / report.ticks * 1e3, "rtf": report.real_time_factor,
            "ticks": report.ticks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=2.0, help="simulated seconds per run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    domain = 200 + os.getpid() % 30
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    from sim_fidelity.model_conductor.ros.remote_model import RemoteModel
    from sim_fidelity.model_conductor.ros.simulator_model import RosSimulatorModel

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        sdf = Path(tmp) / "drop.sdf"
        sdf.write_text(world("drop", ground_plane("ground"), box_model("ball", 0, 0, 20, 0.1)))
        procs = [start("sim_fidelity.model_conductor.ros.model_node", "remote_integrator",
                       domain, model="integrator"),
                 start("sim_fidelity.simulator.ros.server", "sim_server", domain,
                       world=str(sdf), paused=True)]
        try:
            results["main alone"] = run(Integrator("main"), [], args.duration)
            results["+ model in process"] = run(Integrator("main"), [Integrator("other")],
                                                args.duration)
            remote = RemoteModel("other", node="/remote_integrator", timeout=30.0)
            results["+ model in a model_node"] = run(Integrator("main"), [remote],
                                                     args.duration)
            results["world in process"] = run(SimulatorModel("world"), [], args.duration,
                                              {"world": str(sdf)})
            results["world in sim_server"] = run(RosSimulatorModel("world"), [], args.duration,
                                                 {"timeout": 30.0})
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(10)
    per_remote = (results["+ model in a model_node"]["ms_per_tick"]
                  - results["main alone"]["ms_per_tick"])
    summary = {"remote_step_ms": per_remote,
               "world_rtf_ratio_process_over_ros": results["world in process"]["rtf"]
               / results["world in sim_server"]["rtf"],
               "machine": f"{platform.node()} {os.cpu_count()} cores, load average "
                          f"{os.getloadavg()[0]:.1f}",
               "date": time.strftime("%Y-%m-%d %H:%M")}
    if args.json:
        print(json.dumps({"runs": results, **summary}, indent=1))
        return 0
    print(f"{'ensemble':28s} {'ms/tick':>9s} {'RTF':>9s}")
    for name, r in results.items():
        print(f"{name:28s} {r['ms_per_tick']:9.3f} {r['rtf']:9.2f}")
    print(f"a remote step costs {per_remote:.2f} ms a tick; the world in process runs "
          f"{summary['world_rtf_ratio_process_over_ros']:.1f}x faster than over ROS")
    print(f"{summary['date']}, {summary['machine']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
