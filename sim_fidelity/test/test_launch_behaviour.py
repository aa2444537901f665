"""Nodes under launch: started with the arguments launch_ros passes, stopped as launch stops them.

``launch_ros``' ``Node(name=N, parameters=[file, {...}])`` runs the executable with
``--ros-args -r __node:=N -r __ns:=/ --params-file FILE ...`` (a dict becomes a ``/**`` parameter
file); launch stops all processes with SIGINT at the same moment, a terminal's Ctrl-C reaches
each process twice (the process group, then launch), and SIGTERM follows when they linger.
Each node must then exit 0 within SHUTDOWN_S of its signal handler (as it logs at exit; the
process must be gone within WALL_EXIT_S, a loaded machine's scheduling included), without a
stack trace.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from ros_processes import (
    REPO,
    WALL_EXIT_S,
    Probe,
    exits_within,
    next_domain,
    seconds_to_exit,
    start_as_launch,
    wait_for,
)

pytest.importorskip("sim_fidelity_interfaces.msg", reason="interface packages not built")

SHUTDOWN_S = 5.0  # from a node's signal handler to its exit (the manager restores in 2.5 s)
WORLD = REPO / "worlds" / "truck_A.sdf"


def launch_parameters(path: Path, parameters: dict) -> Path:
    """The parameter file launch_ros writes for a Node's dict of parameters."""
    path.write_text(yaml.dump({"/**": {"ros__parameters": parameters}}))
    return path


def logs(tmp: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-2500:]}" for p in sorted(tmp.glob("*.log")))


def stopped(procs: dict[str, subprocess.Popen], tmp: Path) -> dict[str, int]:
    """Exit codes, once every process has exited; fails for one still running WALL_EXIT_S after
    the signal (it is killed) or one that took longer than SHUTDOWN_S after its signal handler."""
    for name, proc in procs.items():
        if not exits_within(proc, WALL_EXIT_S):
            for p in procs.values():
                p.kill()
            pytest.fail(f"{name} still running {WALL_EXIT_S:g} s after the signal\n{logs(tmp)}")
    for name in procs:
        took = seconds_to_exit(tmp / f"{name}.log")
        assert took < SHUTDOWN_S, f"{name} exited {took:.2f} s after its signal handler ran"
    return {name: proc.returncode for name, proc in procs.items()}


def assert_clean(tmp: Path) -> None:
    """No stack trace, no abort, no callback error left for the garbage collector to print."""
    text = logs(tmp)
    for sign in ("Traceback", "terminate called", "never retrieved"):
        assert sign not in text, text


@pytest.fixture
def truck(tmp_path):
    """truck.launch.py's three nodes on scenario A, each in a process group of its own, running:
    the controller has started its first move and the manager has lowered trees."""
    from std_msgs.msg import String

    from sim_fidelity_interfaces.msg import FidelitySummary
    domain = next_domain()
    server = launch_parameters(tmp_path / "server.yaml", {
        "world": str(WORLD), "real_time_factor": 1, "sleep": True, "sleep_tolerance": 0.01})
    manager = launch_parameters(tmp_path / "manager.yaml", {
        "config": str(REPO / "config" / "truck.yaml"), "preset": "adfi-3", "rate": 50,
        "world_file": str(WORLD), "use_sim_time": True})
    controller = launch_parameters(tmp_path / "controller.yaml", {
        "world": "truck_A", "seed": 0, "action_topic": "/fidelity_manager/action",
        "use_sim_time": True, "timeout": 60.0})  # sim_server loads truck_A for seconds
    procs = {
        "sim_server": start_as_launch("sim_server", domain, tmp_path / "sim_server.log", group=True,
                                      params_files=(REPO / "config" / "sim_server.yaml", server)),
        "fidelity_manager": start_as_launch("fidelity_manager", domain,
                                            tmp_path / "fidelity_manager.log", group=True,
                                            params_files=(manager,), params={"timeout": 60}),
        "unloading_controller": start_as_launch("unloading_controller", domain,
                                                tmp_path / "unloading_controller.log", group=True,
                                                params_files=(controller,)),
    }
    probe = Probe(domain)
    try:
        phases = probe.capture(String, "/unloading_controller/phase")
        summaries = probe.capture(FidelitySummary, "/fidelity_manager/summary")

        def running() -> bool:
            return bool(phases and summaries and summaries[-1].low > 0)
        # the controller logs each stage of its start (connect, list, subscribe): a loaded
        # machine has taken over 90 s for them; the log says which one a failure stopped in
        started = tmp_path / "unloading_controller.log"
        assert wait_for(lambda: "waiting for joint states" in started.read_text(), 150.0), \
            logs(tmp_path)
        assert wait_for(running, 90.0), logs(tmp_path)
        yield procs, probe, tmp_path
    finally:
        probe.close()
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_one_node_per_name_and_sigint_to_all_at_once(truck):
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import GetParameters, ListParameters
    procs, probe, tmp = truck
    expected = ["fidelity_manager", "fidelity_manager_sim_client", "sim_server",
                "unloading_controller", "unloading_controller_sim_client"]

    def graph() -> list[str]:
        return sorted(n for n, _ns in probe.node.get_node_names_and_namespaces()
                      if n != probe.node.get_name())
    assert wait_for(lambda: set(graph()) >= set(expected), 60.0), graph()  # discovery done
    assert graph() == expected  # each name once, nothing else
    listed = probe.call(ListParameters, "/fidelity_manager/list_parameters",
                        ListParameters.Request()).result.names
    assert {"config", "preset", "rate", "world_file"} <= set(listed), listed
    rate = probe.call(GetParameters, "/fidelity_manager/get_parameters",
                      GetParameters.Request(names=["rate"])).values[0]
    assert (rate.type, rate.double_value) == (ParameterType.PARAMETER_DOUBLE, 50.0)  # given 50
    listed = probe.call(ListParameters, "/unloading_controller/list_parameters",
                        ListParameters.Request()).result.names
    assert {"world", "seed", "action_topic"} <= set(listed), listed

    for proc in procs.values():
        proc.send_signal(signal.SIGINT)
    assert stopped(procs, tmp) == dict.fromkeys(procs, 0), logs(tmp)
    assert_clean(tmp)


def test_ctrl_c_twice_to_every_process_group(truck):
    procs, _probe, tmp = truck
    for _ in range(2):
        for proc in procs.values():
            os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)
    assert stopped(procs, tmp) == dict.fromkeys(procs, 0), logs(tmp)
    assert_clean(tmp)


def test_simulator_gone_then_sigterm(truck):
    """The server goes first (SIGTERM); the manager then reports in one line what it could not
    restore, and it and the controller (whose sim-time timers no longer fire) exit 0 on SIGTERM."""
    procs, _probe, tmp = truck
    server = procs.pop("sim_server")
    server.send_signal(signal.SIGTERM)
    assert stopped({"sim_server": server}, tmp) == {"sim_server": 0}, logs(tmp)
    for proc in procs.values():
        proc.send_signal(signal.SIGTERM)
    assert stopped(procs, tmp) == dict.fromkeys(procs, 0), logs(tmp)
    report = [line for line in (tmp / "fidelity_manager.log").read_text().splitlines()
              if "could not restore" in line]
    # what is below HIGH then: the plungers (LOW from the start), and packets once still
    assert len(report) == 1, logs(tmp)
    assert re.search(r"could not restore \d+ trees below HIGH \((packet_\d+|plungers/p\d+)",
                     report[0]), report[0]
    assert_clean(tmp)


def test_bad_parameters_and_a_missing_simulator_exit_2(tmp_path):
    """Each fails at start with one line naming what is wrong, exit code 2, no stack trace."""
    domain = next_domain()  # no simulator in this domain
    truck = str(REPO / "config" / "truck.yaml")
    cases = {  # name: (executable, parameters, what the error line says)
        "preset": ("fidelity_manager", {"config": truck, "preset": "adfi-9"},
                   "unknown preset 'adfi-9' (known: adfi-1, adfi-2, adfi-3, hifi)"),
        "rate": ("fidelity_manager", {"config": truck, "rate": "fast"},
                 "fidelity_manager: parameter 'rate' must be a number, got 'fast'"),
        "seed": ("unloading_controller", {"world": "truck_A", "seed": 1.5},
                 "unloading_controller: parameter 'seed' must be an integer, got 1.5"),
        "paused": ("sim_server", {"world": str(WORLD), "paused": 1},
                   "sim_server: parameter 'paused' must be a boolean, got 1"),
        "kernel_rate": ("kernel_manager", {"kernels": "k.yaml", "rate": "often"},
                        "kernel_manager: parameter 'rate' must be a number, got 'often'"),
        "no_simulator": ("unloading_controller", {"world": "truck_A", "timeout": 1},
                         "no simulator found after 1 s: neither /get_entities"),
    }
    procs = {name: start_as_launch(exe, domain, tmp_path / f"{name}.log", params=params)
             for name, (exe, params, _) in cases.items()}
    for proc in procs.values():
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    for name, (_, _, says) in cases.items():
        text = (tmp_path / f"{name}.log").read_text()
        errors = [line for line in text.splitlines() if "[ERROR]" in line]
        assert procs[name].returncode == 2 and len(errors) == 1 and says in errors[0], (name, text)
    assert_clean(tmp_path)


def test_a_signal_while_the_nodes_load_stops_them_cleanly(tmp_path):
    """SIGINT as soon as each entry point has run its first line, while the node still loads rclpy
    and MuJoCo (a launch stopped right after it started): exit 0 within the deadline, no stack
    trace. Without the entry points'
    early signal capture, Python's default SIGINT ends a loading node with a KeyboardInterrupt
    trace."""
    domain = next_domain()
    truck = str(REPO / "config" / "truck.yaml")
    nodes = {"sim_server": {"world": str(WORLD)},
             "fidelity_manager": {"config": truck, "preset": "adfi-3"},
             "unloading_controller": {"world": "truck_A"},
             "kernel_manager": {"kernels": "k.yaml"}}
    procs = {exe: start_as_launch(exe, domain, tmp_path / f"{exe}.log", params=params)
             for exe, params in nodes.items()}
    for exe, proc in procs.items():
        catching_sigterm(exe, proc, tmp_path)
    for proc in procs.values():
        proc.send_signal(signal.SIGINT)
    codes = stopped(procs, tmp_path)
    assert codes == dict.fromkeys(nodes, 0), logs(tmp_path)
    assert_clean(tmp_path)


def catching_sigterm(name: str, proc: subprocess.Popen, tmp: Path,
                     deadline_s: float = 60.0) -> None:
    """Wait until ``proc`` catches SIGTERM (/proc/PID/status SigCgt): the entry point's first line
    has run and rclpy and MuJoCo are still to load. Python catches SIGINT but not SIGTERM from its
    own start, so this is the earliest moment the entry point answers for, under any load."""
    bit = 1 << (signal.SIGTERM - 1)
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None:
        status = Path(f"/proc/{proc.pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines()
                          if line.startswith("SigCgt:")), 16)
        if caught & bit:
            return
        time.sleep(0.005)
    pytest.fail(f"{name} never installed its SIGTERM handler (exit code {proc.poll()})\n"
                f"{logs(tmp)}")
