"""Issue 20's probes, re-run: bad CLI flags and node parameters, bad requests to sim_server,
signals to the fidelity manager at random moments, a load of requests. Every outcome is
classified (clear error / tolerated / poor message / silent / traceback / hang / corruption) and the
table of docs/reliability.md printed (``--json``: everything as one JSON object).

    .venv/bin/python tools/probe_inputs.py [--signal-trials 100] [--load-seconds 20]
        [--only cli,params,requests,signals,load]

Real processes throughout (``simfid``, the nodes, sim_server), each group in its own DDS domain,
discovery on localhost only.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "sim_fidelity"
sys.path.insert(0, str(PKG / "test"))  # ros_processes, reliability_trials
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("HOME", "/tmp")

from reliability_trials import (  # noqa: E402
    CONFIG,
    WORLD,
    changed_objects,
    run_trial,
    silent_simulator,
    start_manager,
    start_server,
)
from ros_processes import next_domain, start_as_launch, stop, wait_for  # noqa: E402

CLEAR, TOLERATED, POOR = "clear error", "tolerated", "poor message"
SILENT, TRACEBACK, HANG, CORRUPTION = "silent", "traceback", "hang", "corruption"
OUTCOMES = (CLEAR, TOLERATED, POOR, SILENT, TRACEBACK, HANG, CORRUPTION)
CLI_TIMEOUT_S = 120.0
NODE_ACCEPTS_S = 30.0  # a node still running this long after start took the parameter


@dataclass
class Probe:
    category: str
    input: str
    outcome: str
    detail: str = ""


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# --- CLI flags -----------------------------------------------------------------------------------
def cli_probes(tmp: Path) -> list[Probe]:
    world, config = str(WORLD), str(CONFIG)
    inf_cfg = tmp / "inf_extents.yaml"
    inf_cfg.write_text(CONFIG.read_text().replace("robot_half_extents: [0.2, 0.2, 0.2]",
                                                  "robot_half_extents: [.inf, 0.2, 0.2]"))
    still_cfg = tmp / "still.yaml"
    still_cfg.write_text(CONFIG.read_text().replace("still_steps: 2", "still_steps: -3"))
    spec = PKG / "config" / "reality_gap" / "one_d_track.yaml"
    inf_spec = tmp / "inf_rate.yaml"
    inf_spec.write_text(spec.read_text().replace("rate_hz: 1.0", "rate_hz: .inf"))
    gen = ["kernels", "generate", "--sim", "none.mcap", "--real", "none.mcap", "--spec", str(spec)]
    fid = ["fidelity", world, "--config", config]
    errors = [
        fid + ["--tick-every", "0"], fid + ["--duration", "inf"], fid + ["--duration", "-1"],
        fid + ["--duration", "nan"], fid + ["--report-every", "0"], fid + ["--preset", "nope"],
        ["fidelity", world, "--config", "missing.yaml"], ["fidelity", "missing.sdf", "--config",
                                                          config],
        ["fidelity", world, "--config", str(inf_cfg)], ["fidelity", world, "--config",
                                                        str(still_cfg)],
        gen + ["-o", str(tmp)], gen + ["-o", "k.yaml", "--rollouts", "0"],
        gen + ["-o", "k.yaml", "--seed", "-1"], gen + ["-o", "missing_dir/k.yaml"],
        gen + ["-o", str(tmp / "k.yaml")],
        ["kernels", "generate", "--sim", "a", "--real", "b", "--spec", str(inf_spec), "-o",
         str(tmp / "k.yaml")],
        ["kernels", "show", "missing.yaml"],
        ["bench", "truck", "--duration", "-1"], ["bench", "truck", "--repeats", "0"],
        ["bench", "truck", "--tick-period", "0"], ["bench", "truck", "--modes", "nope"],
        ["bench", "truck", "--scenario", "Z"], ["bench", "truck", "--plots", str(inf_cfg)],
        ["bench", "conductor", "--repeats", "0"], ["bench", "conductor", "--particles", "x"],
        ["bench", "conductor", "--duration", "0"], ["bench", "conductor", "--tick", "0"],
        ["bench", "stepping", "--duration", "0"], ["bench", "stepping", "--cost", "-1"],
        ["bench", "stepping", "--setups", "nope"],
        ["bench", "physics", "--trials", "0"], ["bench", "physics", "--batch", "0"],
        ["bench", "physics", "--duration", "-1"], ["bench", "physics", "--world", "nope"],
        ["sim", world, "--duration", "-1"], ["sim", world, "--step-size", "0"],
        ["sim", world, "--step-size", "nan"], ["sim", "missing.sdf"],
        ["serve", world, "--rtf", "-1"], ["serve", world, "--rtf", "nan"],
        ["serve", world, "--step-size", "-0.001"], ["serve", world, "--publish-rate", "0"],
        ["example", "oned", "--missions", "0"], ["example", "oned", "--seeds", "0"],
        ["example", "oned", "--seed", "-1"], ["example", "oned", "--plots", str(inf_cfg)],
        ["conduct", "missing.yaml"],
        ["conduct", str(PKG / "config" / "conductor" / "handover.yaml"), "--duration", "-1"],
        ["nope"], ["fidelity"],
    ]
    tolerated = [["sim", world, "--duration", "0.01"],
                 fid + ["--duration", "0.05", "--tick-every", "1"]]
    out = []
    for argv, expect_error in [(a, True) for a in errors] + [(a, False) for a in tolerated]:
        out.append(_run_cli(argv, expect_error, tmp))
    return out


def _run_cli(argv: list[str], expect_error: bool, cwd: Path) -> Probe:
    shown = "simfid " + " ".join(Path(a).name if "/" in a else a for a in argv)
    try:
        run = subprocess.run([sys.executable, "-m", "sim_fidelity.cli", *argv], cwd=cwd,
                             capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Probe("CLI flags", shown, HANG, f"no exit within {CLI_TIMEOUT_S:g} s")
    text = run.stdout + run.stderr
    err = lines(run.stderr)
    if "Traceback" in text:
        return Probe("CLI flags", shown, TRACEBACK, err[-1] if err else "")
    if not expect_error:
        return Probe("CLI flags", shown, TOLERATED if run.returncode == 0 else POOR,
                     (err or lines(run.stdout) or [""])[-1])
    if run.returncode == 0:
        return Probe("CLI flags", shown, SILENT, "exit 0")
    clear = run.returncode == 2 and len(err) == 1 and "error" in err[0]
    return Probe("CLI flags", shown, CLEAR if clear else POOR,
                 f"exit {run.returncode}: {err[-1] if err else ''}")


# --- node parameters -----------------------------------------------------------------------------
def param_probes(tmp: Path) -> list[Probe]:
    world, config = str(WORLD), str(CONFIG)
    kernels = tmp / "missing_kernels.yaml"
    server = {"world": world}
    manager = {"config": config}
    errors = [
        ("sim_server", {**server, "step_size": -0.001}), ("sim_server", {**server,
                                                                         "real_time_factor": -1}),
        ("sim_server", {**server, "real_time_factor": ".nan"}),
        ("sim_server", {**server, "real_time_factor": ".inf"}),
        ("sim_server", {**server, "publish_rate": 0}), ("sim_server", {**server,
                                                                       "odometry": "['(']"}),
        ("sim_server", {**server, "sleep_tolerance": -1}),
        ("sim_server", {**server, "solver_iterations": -5}),
        ("sim_server", {**server, "max_steps_per_request": 0}),
        ("sim_server", {**server, "paused": "maybe"}), ("sim_server", {"world": "missing.sdf"}),
        ("sim_server", {"world": ""}), ("sim_server", {**server, "interfaces": "nope"}),
        ("fidelity_manager", {**manager, "rate": 0}), ("fidelity_manager", {**manager,
                                                                            "rate": -1}),
        ("fidelity_manager", {**manager, "rate": "fast"}),
        ("fidelity_manager", {**manager, "timeout": 0}),
        ("fidelity_manager", {"config": "missing.yaml"}),
        ("fidelity_manager", {**manager, "preset": "nope"}), ("fidelity_manager", {}),
        ("kernel_manager", {"kernels": str(kernels)}),
        ("kernel_manager", {"kernels": str(kernels), "rate": -1}),
        ("kernel_manager", {"kernels": str(kernels), "timeout": 0}),
        ("unloading_controller", {"packets": "'('"}),
        ("unloading_controller", {"timeout": -1}),
        ("model_conductor", {"duration": -1}), ("model_conductor", {"timeout": 0}),
        ("model_conductor", {"config": "missing.yaml"}),
    ]
    tolerated = [("sim_server", {**server, "real_time_factor": 0}),
                 ("sim_server", {**server, "step_size": 0.002})]
    out = []
    for executable, params, expect_error in ([(e, p, True) for e, p in errors]
                                             + [(e, p, False) for e, p in tolerated]):
        out.append(_run_node(executable, params, expect_error, tmp))
    return out


def _run_node(executable: str, params: dict, expect_error: bool, tmp: Path) -> Probe:
    shown = f"{executable} " + " ".join(f"{k}:={Path(str(v)).name if '/' in str(v) else v}"
                                        for k, v in params.items())
    log = tmp / f"node_{abs(hash(shown))}.log"
    proc = start_as_launch(executable, next_domain(), log, params=params)
    try:
        code = proc.wait(NODE_ACCEPTS_S)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop(proc, signal.SIGINT)
    text = log.read_text()
    errors = [line for line in lines(text)  # rcl's own "[rcl]: Failed to parse" not counted
              if ("[ERROR]" in line or "error" in line.lower()) and "[rcl]" not in line]
    if "Traceback" in text:
        return Probe("node parameters", shown, TRACEBACK, lines(text)[-1])
    if code is None:
        return Probe("node parameters", shown, TOLERATED if not expect_error else SILENT,
                     f"still running after {NODE_ACCEPTS_S:g} s")
    if not expect_error:
        return Probe("node parameters", shown, POOR, f"exit {code}: {(lines(text) or [''])[-1]}")
    clear = code == 2 and len(errors) == 1
    return Probe("node parameters", shown, CLEAR if clear else (SILENT if code == 0 else POOR),
                 f"exit {code}: {errors[-1] if errors else (lines(text) or [''])[-1]}")


# --- requests to sim_server ----------------------------------------------------------------------
def request_probes(tmp: Path) -> list[Probe]:
    from geometry_msgs.msg import Pose, Twist
    from ros_processes import Probe as RosProbe
    from simulation_interfaces import msg as sm
    from simulation_interfaces import srv as ss

    from sim_fidelity.simulator.ros.client import RosSimulator
    from sim_fidelity_interfaces import srv as ours

    domain = next_domain()
    server = start_server(domain, tmp / "requests_server.log")
    sim = RosSimulator(domain_id=domain, timeout=20.0)
    ros = RosProbe(domain, "probe_requests")
    sim.wait_for_server(60.0)
    box = ("<sdf version='1.9'><model name='m'><link name='l'><collision name='c'><geometry>"
           "{}</geometry></collision><inertial><mass>1</mass></inertial></link></model></sdf>")

    def spawn(name: str, geometry: str = "<box><size>0.1 0.1 0.1</size></box>", **extra):
        req = ss.SpawnEntity.Request(name=name, resource_string=box.format(geometry), **extra)
        req.initial_pose.header.frame_id = "world"
        req.initial_pose.pose.position.z = 5.0
        req.initial_pose.pose.orientation.w = 1.0
        return ss.SpawnEntity, "/spawn_entity", req

    def set_state(entity: str, x=0.0, vx=0.0, qw=1.0, qx=0.0):
        req = ss.SetEntityState.Request(entity=entity)
        req.state.header.frame_id = "world"
        req.state.pose = Pose()
        req.state.pose.position.x, req.state.pose.position.z = x, 3.0
        req.state.pose.orientation.w, req.state.pose.orientation.x = qw, qx
        req.state.twist = Twist()
        req.state.twist.linear.x = vx
        return ss.SetEntityState, "/set_entity_state", req

    def reset(scope: int):
        return ss.ResetSimulation, "/reset_simulation", ss.ResetSimulation.Request(scope=scope)

    def sim_state(state: int):
        req = ss.SetSimulationState.Request()
        req.state.state = state
        return ss.SetSimulationState, "/set_simulation_state", req

    def states(pattern: str):
        req = ss.GetEntitiesStates.Request()
        req.filters.filter = pattern
        return ss.GetEntitiesStates, "/get_entities_states", req

    def lever(names, value: int, enabled=False):
        return (ours.SetLever, "/sim_server/set_lever",
                ours.SetLever.Request(entities=names, lever=value, enabled=enabled))

    box0 = sim.entities(pattern=r"^box_")[0]
    bad = [
        ("SpawnEntity sphere radius 0", spawn("r0", "<sphere><radius>0</radius></sphere>")),
        ("SpawnEntity mesh that does not exist",
         spawn("mesh", "<mesh><uri>file:///nope.stl</uri></mesh>")),
        ("SpawnEntity entity_namespace", spawn("ns", entity_namespace="other")),
        ("SpawnEntity name taken", spawn(box0)),
        ("SpawnEntity empty resource", (ss.SpawnEntity, "/spawn_entity",
                                        ss.SpawnEntity.Request(name="empty"))),
        ("SpawnEntity broken XML", (ss.SpawnEntity, "/spawn_entity",
                                    ss.SpawnEntity.Request(name="x", resource_string="<sdf><mo"))),
        ("SetEntityState velocity 1e12 m/s", set_state(box0, vx=1e12)),
        ("SetEntityState position 1e300", set_state(box0, x=1e300)),
        ("SetEntityState position NaN", set_state(box0, x=math.nan)),
        ("SetEntityState quaternion 0", set_state(box0, qw=0.0)),
        ("SetEntityState quaternion NaN", set_state(box0, qx=math.nan)),
        ("SetEntityState unknown entity", set_state("nope")),
        ("DeleteEntity unknown", (ss.DeleteEntity, "/delete_entity",
                                  ss.DeleteEntity.Request(entity="nope"))),
        ("ResetSimulation unknown scope bits", reset(64)),
        ("SetSimulationState 99", sim_state(99)),
        ("GetEntitiesStates bad regex", states("(")),
        ("SetLever lever 99", lever([box0], 99)),
        ("SetLever unknown entity", lever(["nope"], 0)),
        ("SetLever duplicate names", lever([box0, box0], 0)),
        ("GetLevers lever 99", (ours.GetLevers, "/sim_server/get_levers",
                                ours.GetLevers.Request(entities=[box0], lever=99))),
        ("GetEntityBounds unknown", (ss.GetEntityBounds, "/get_entity_bounds",
                                     ss.GetEntityBounds.Request(entity="nope"))),
        ("StepSimulation while playing", (ss.StepSimulation, "/step_simulation",
                                          ss.StepSimulation.Request(steps=10))),
    ]
    out = []
    try:
        for name, (kind, service, req) in bad:
            out.append(_request(ros, sim, name, kind, service, req))
            print(f"request {name}: {out[-1].outcome}", file=sys.stderr, flush=True)
        out.append(_long_step(ros, sim, ss))
        kind, service, req = sim_state(sm.SimulationState.STATE_QUITTING)
        res = ros.call(kind, service, req, timeout=20.0).result
        quit_ = res.result == res.RESULT_OK and wait_for(lambda: server.poll() is not None, 10.0)
        out.append(Probe("server requests", "SetSimulationState QUITTING",
                         TOLERATED if quit_ else CLEAR if res.error_message else POOR,
                         "the server quit, as asked" if quit_
                         else f"{res.result}: {res.error_message}"))
    finally:
        ros.close()
        sim.close()
        stop(server)
    return out


def _healthy(sim) -> str:
    """'' when the server answers every kind of query and edit, else what failed."""
    import numpy as np
    before = sim.time
    try:
        names = sim.entities()
        sim.get_states([n for n in names if "::" not in n][:5])
        sim.spawn("probe_health", "<sdf version='1.9'><model name='h'><link name='l'>"
                  "<inertial><mass>1</mass></inertial></link></model></sdf>",
                  np.array([0, 0, 9, 0, 0, 0, 1.0]))
        sim.delete("probe_health")
        if sim.time + 1e-9 < before:
            return f"sim time ran backwards ({before} -> {sim.time})"
    except Exception as e:  # noqa: BLE001 - any failure here is the finding
        return f"{type(e).__name__}: {e}"
    return ""


def _request(ros, sim, name: str, kind, service: str, req) -> Probe:
    try:
        res = ros.call(kind, service, req, timeout=20.0)
    except TimeoutError as e:
        return Probe("server requests", name, HANG, str(e))
    broken = _healthy(sim)
    if broken:
        return Probe("server requests", name, CORRUPTION, broken)
    result = res.result
    if result.result == result.RESULT_OK:
        return Probe("server requests", name, SILENT if name != "SetLever duplicate names"
                     else TOLERATED, "RESULT_OK")
    return Probe("server requests", name, CLEAR if result.error_message else POOR,
                 f"{result.result}: {result.error_message}")


def _long_step(ros, sim, ss) -> Probe:
    """StepSimulation of 1e9 steps while paused: other services keep answering, PAUSED stops
    it."""
    from sim_fidelity.simulator.protocol import SimState
    sim.set_sim_state(SimState.PAUSED)
    client = ros.node.create_client(ss.StepSimulation, "/step_simulation")
    client.wait_for_service(timeout_sec=10.0)
    future = client.call_async(ss.StepSimulation.Request(steps=10**9))
    time.sleep(1.0)
    started = time.monotonic()
    try:
        sim.entities()
        answered = time.monotonic() - started
        sim.set_sim_state(SimState.PAUSED)  # asks the step in flight to stop
    except Exception as e:  # noqa: BLE001
        return Probe("server requests", "StepSimulation 1e9 steps", HANG, str(e))
    done = wait_for(future.done, 10.0)
    sim.set_sim_state(SimState.PLAYING)
    if not done:
        return Probe("server requests", "StepSimulation 1e9 steps", HANG,
                     "not stopped by PAUSED within 10 s")
    res = future.result().result
    return Probe("server requests", "StepSimulation 1e9 steps", CLEAR,
                 f"other services answered in {answered * 1e3:.0f} ms during it; "
                 f"PAUSED ended it: {res.result}: {res.error_message}")


# --- signals -------------------------------------------------------------------------------------
def signal_probes(tmp: Path, trials: int) -> tuple[list[Probe], dict]:
    from sim_fidelity.simulator.ros.client import RosSimulator

    domain = next_domain()
    server = start_server(domain, tmp / "signals_server.log")
    sim = RosSimulator(domain_id=domain, timeout=20.0)
    sim.wait_for_server(60.0)
    rng = random.Random(2026)
    results, out = [], []
    try:
        for i in range(trials):
            t = run_trial(domain, sim, tmp / f"trial_{i}.log", rng)
            results.append(t)
            print(f"trial {i + 1}/{trials}: {t.phase:<8} {signal.Signals(t.signum).name:<7} "
                  f"at {t.delay:.2f} s, lowered {t.lowered_at_signal:>2}, exit {t.exit_code}, "
                  f"left changed {t.left_changed}", file=sys.stderr, flush=True)
        killed = _sigkill(domain, sim, tmp)
    finally:
        sim.close()
        stop(server)
    summary = {
        "trials": len(results), "bad": sum(not t.ok for t in results),
        "objects_left_changed": sum(t.left_changed for t in results),
        "by_phase": dict(Counter(t.phase for t in results)),
        "caught_lowering": sum(t.lowered_at_signal > 0 for t in results),
        "exit_codes": dict(Counter(str(t.exit_code) for t in results)),
        "interpreter_start": sum(t.interpreter_start for t in results),
        "misreported": sum(t.reported not in (0, None) for t in results), **killed}
    for t in results:
        if not t.ok:
            outcome = (HANG if t.exit_code is None else CORRUPTION if t.left_changed
                       else TRACEBACK if "Traceback" in t.log_tail else POOR)
            out.append(Probe("manager signals", f"{signal.Signals(t.signum).name} at "
                             f"{t.delay:.2f} s ({t.phase})", outcome, str(asdict(t))))
    out += _silent_simulator(tmp)
    return out, summary


def _sigkill(domain: int, sim, tmp: Path) -> dict:
    killed = start_manager(domain, tmp / "killed.log")
    wait_for(lambda: changed_objects(sim) > 0, 60.0)
    lowered = changed_objects(sim)
    killed.kill()
    killed.wait()
    started = time.monotonic()
    restored = wait_for(lambda: changed_objects(sim) == 0, 60.0, period=0.25)
    return {"sigkill_lowered": lowered, "sigkill_restored_by_server": restored,
            "sigkill_restore_s": round(time.monotonic() - started, 1)}


def _silent_simulator(tmp: Path) -> list[Probe]:
    """The manager's one line when no tick comes: server paused, server killed."""
    out = []
    for how in ("paused", "killed"):
        said, text = silent_simulator(next_domain(), tmp, how, timeout=5.0)
        line = next((x for x in lines(text) if "answer" in x or "advance" in x), "")
        out.append(Probe("manager signals", f"simulator {how} under a ticking manager",
                         CLEAR if said else SILENT, line[-160:]))
    return out


# --- load ----------------------------------------------------------------------------------------
def load_probe(tmp: Path, seconds: float, threads: int = 4) -> dict:
    import numpy as np

    from sim_fidelity.simulator import EntityKind, Lever
    from sim_fidelity.simulator.ros.client import RosSimulator

    domain = next_domain()
    server = start_server(domain, tmp / "load_server.log")
    clients = [RosSimulator(domain_id=domain, timeout=20.0, node_name=f"load_{i}")
               for i in range(threads)]
    clients[0].wait_for_server(60.0)
    boxes = clients[0].entities(EntityKind.MODEL, pattern=r"^box_")
    counts, failures = Counter(), []
    end = time.monotonic() + seconds

    def work(i: int, sim) -> None:
        rng = np.random.default_rng(i)
        mine = boxes[i::threads]
        while time.monotonic() < end:
            try:
                sim.get_states(mine)
                names = list(rng.choice(mine, 3, replace=False))
                sim.set_lever(names, Lever.GRAVITY, False)
                if sim.get_lever(names, Lever.GRAVITY).any():
                    failures.append(f"client {i}: a lever set was not read back")
                sim.set_lever(names, Lever.GRAVITY, True)
                sim.entities()
                counts[i] += 5
            except Exception as e:  # noqa: BLE001 - a lost request is the finding
                failures.append(f"client {i}: {type(e).__name__}: {e}")

    rss = [_rss_kb(server.pid)]
    workers = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(clients)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    rss.append(_rss_kb(server.pid))
    left = int((~clients[0].get_lever(boxes, Lever.GRAVITY)).sum())
    for c in clients:
        c.close()
    stop(server)
    return {"threads": threads, "seconds": seconds, "requests": sum(counts.values()),
            "failures": len(failures), "first_failures": failures[:3],
            "levers_left_off": left, "server_rss_kb": rss}


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# --- report --------------------------------------------------------------------------------------
def table(probes: list[Probe]) -> str:
    cats = list(dict.fromkeys(p.category for p in probes))
    head = "| category | inputs | " + " | ".join(OUTCOMES) + " |"
    rows = [head, "|" + "---|" * (len(OUTCOMES) + 2)]
    for cat in cats:
        c = Counter(p.outcome for p in probes if p.category == cat)
        rows.append(f"| {cat} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in OUTCOMES)
                    + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signal-trials", type=int, default=100)
    parser.add_argument("--load-seconds", type=float, default=20.0)
    parser.add_argument("--only", default="cli,params,requests,signals,load")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    probes: list[Probe] = []
    result: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="probe_inputs_"))  # kept: the logs of every probe
    print(f"logs in {tmp}", file=sys.stderr, flush=True)
    if "cli" in parts:
        probes += cli_probes(tmp)
    if "params" in parts:
        probes += param_probes(tmp)
    if "requests" in parts:
        probes += request_probes(tmp)
    if "signals" in parts:
        found, result["signals"] = signal_probes(tmp, args.signal_trials)
        probes += found
    if "load" in parts:
        result["load"] = load_probe(tmp, args.load_seconds)
    result["probes"] = [asdict(p) for p in probes]
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(table(probes))
    for p in probes:
        if p.outcome not in (CLEAR, TOLERATED):
            print(f"- {p.outcome}: [{p.category}] {p.input}: {p.detail}")
    for key in ("signals", "load"):
        if key in result:
            print(f"{key}: {json.dumps(result[key])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
