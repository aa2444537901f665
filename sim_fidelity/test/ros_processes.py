"""Start project nodes as real processes for process-level tests, each in its own DDS domain."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from sim_fidelity.ros_domains import next_domain  # noqa: F401 (the tests take it here)

REPO = Path(__file__).resolve().parents[1]
_LEASE_PROFILE = str(Path(__file__).parent / "data" / "dds" / "short_lease.xml")
# For a process a test kills with SIGKILL: the graph drops it after 5 s instead of DDS's 20 s.
SHORT_LEASE = {"FASTDDS_DEFAULT_PROFILES_FILE": _LEASE_PROFILE}


def start_node(module: str, params: dict, domain: int, log: Path) -> subprocess.Popen:
    """``python -m module --ros-args -p k:=v ...`` in ``domain``, output to ``log``."""
    args = [sys.executable, "-m", module, "--ros-args"]
    for k, v in params.items():
        value = str(v).lower() if isinstance(v, bool) else str(v)
        args += ["-p", f"{k}:={value}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=log.open("w"), stderr=subprocess.STDOUT)


def console_scripts() -> dict[str, str]:
    """setup.py's console scripts: executable name -> ``module:function``."""
    import ast
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    pairs = (ast.literal_eval(e).split("=") for e in value.elts)
                    return {name.strip(): target.strip() for name, target in pairs}
    return {}


def start_as_launch(executable: str, domain: int, log: Path, *, params_files: tuple = (),
                    params: dict | None = None, group: bool = False,
                    env: dict | None = None) -> subprocess.Popen:
    """Start a console script the way launch_ros' ``Node(name=executable, ...)`` does:
    ``--ros-args -r __node:=NAME -r __ns:=/ --params-file FILE ... -p k:=v ...``.
    ``group``: in a process group of its own (for signalling it as a terminal does); ``env``:
    more environment (``SHORT_LEASE``)."""
    module, function = console_scripts()[executable].split(":")
    args = [sys.executable, "-c", f"import sys; from {module} import {function}; "
            f"sys.exit({function}())", "--ros-args", "-r", f"__node:={executable}", "-r", "__ns:=/"]
    for f in params_files:
        args += ["--params-file", str(f)]
    for k, v in (params or {}).items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1", **(env or {}))
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=group)


CLIENT_TIMEOUT_S = 60.0  # a test's RosSimulator: for a service to appear and for each answer
WALL_EXIT_S = 30.0  # for a signalled node to be gone, the scheduling of a loaded machine included
STACK_DUMP_S = 5.0  # for a node that would not stop to write its stacks on SIGABRT
_EXIT_LINE = re.compile(r"exit (\d+\.\d+) s after SIG\w+ reached its handler")


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = WALL_EXIT_S) -> int:
    """Signal ``proc`` and wait for it (``exits_within``); its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        exits_within(proc, timeout, signal.Signals(sig).name)
    return proc.returncode


def exits_within(proc: subprocess.Popen, timeout: float, after: str = "the signal") -> bool:
    """Whether ``proc`` ends within ``timeout`` seconds. If not, SIGABRT makes it write every
    thread's stack to its log (conftest sets ``PYTHONFAULTHANDLER`` for every process a test
    starts), then it is killed (exit code -6 or -9)."""
    try:
        proc.wait(timeout)
        return True
    except subprocess.TimeoutExpired:
        print(f"pid {proc.pid} still running {timeout:g} s after {after}: SIGABRT for its "
              "stacks (in its log), then SIGKILL", flush=True)
        proc.send_signal(signal.SIGABRT)
        try:
            proc.wait(STACK_DUMP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return False


def seconds_to_exit(log: Path) -> float:
    """How long after its signal handler ran a node exited, as its last line says
    (``sim_fidelity.shutdown.report_exit``): the part of a shutdown the node controls; the wall
    time from ``send_signal`` adds the scheduling delays of a loaded machine."""
    text = log.read_text()
    said = _EXIT_LINE.findall(text)
    assert said, f"{log.name} does not say when it exited after the signal:\n{text[-2500:]}"
    return float(said[-1])


def wait_for(predicate, timeout: float = 30.0, period: float = 0.02) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes; whether it held."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(period)
    return predicate()


def settles(read, quiet_s: float = 1.0, timeout: float = 60.0) -> bool:
    """Whether ``read()`` (a count of messages, a clock) stays the same for ``quiet_s`` within
    ``timeout``. What was sent before a stop but delivered late (a loaded machine) passes
    first, so a check that nothing comes after the stop does not race it."""
    end = time.monotonic() + timeout
    last, since = read(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.02)
        if (now := read()) != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return True
    return False


@contextlib.contextmanager
def paused_sim_server(world: Path, folder: Path, ready: str = "set_lever", **params
                      ) -> Iterator[tuple]:
    """A paused sim_server on ``world`` (``real_time_factor`` 0: it steps as fast as asked; more
    parameters in ``params``) in a domain of its own, its log ``folder/sim_server.log``, and a
    RosSimulator (``CLIENT_TIMEOUT_S``) once the server offers ``ready``. Yields
    ``(sim, proc, log)``; on leaving, the server must still be running, then it is stopped."""
    from sim_fidelity.simulator.ros.client import RosSimulator
    domain = next_domain()
    log = folder / "sim_server.log"
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world, "paused": True, "real_time_factor": 0.0, **params},
                      domain, log)
    sim = RosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S, world_file=str(world))
    try:
        sim.wait_for_server(60.0)
        assert wait_for(lambda: sim.has_service(ready), 60.0), f"sim_server offers no {ready}"
        yield sim, proc, log
        assert proc.poll() is None, f"sim_server died during the tests:\n{log.read_text()[-2500:]}"
    finally:
        sim.close()
        stop(proc)


class Probe:
    """A test-side rclpy node in its own context and domain: service calls and topic capture."""

    def __init__(self, domain: int, name: str = "test_probe"):
        import threading

        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self._clients: dict = {}  # (type, service) -> a client whose reply path is proven
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:
            pass

    def call(self, srv_type, name: str, request, timeout: float = 20.0):
        """``request``'s answer from ``name``; its first call proves the reply path through
        the serving node's ``get_parameters`` (``sim_fidelity.service_handshake``)."""
        client = self._clients.get((srv_type, name))
        if client is None:
            from rcl_interfaces.srv import GetParameters

            from sim_fidelity.service_handshake import polled, prove_reply_path
            client = self.node.create_client(srv_type, name)
            if not client.wait_for_service(timeout_sec=timeout):
                self.node.destroy_client(client)
                raise TimeoutError(f"service {name} not available")
            server = self._server_of(name, timeout)
            if not prove_reply_path(self.node, GetParameters, f"{server}/get_parameters",
                                    timeout, polled):
                self.node.destroy_client(client)
                raise TimeoutError(f"{server} does not answer")
            self._clients[(srv_type, name)] = client
        future = client.call_async(request)
        if not wait_for(future.done, timeout):
            client.remove_pending_request(future)
            raise TimeoutError(f"service {name} did not answer")
        return future.result()

    def _server_of(self, service: str, timeout: float) -> str:
        """The full name of the node serving ``service``, as the graph tells."""
        found: list[str] = []

        def look() -> bool:
            for name, ns in self.node.get_node_names_and_namespaces():
                served = self.node.get_service_names_and_types_by_node(name, ns)
                if any(s == service for s, _ in served):
                    found.append(f"{ns.rstrip('/')}/{name}")
                    return True
            return False
        if not wait_for(look, timeout, period=0.1):
            raise TimeoutError(f"no node in the graph serves {service}")
        return found[0]

    def capture(self, msg_type, topic: str) -> list:
        received: list = []
        self.node.create_subscription(msg_type, topic, received.append, 50)
        return received

    def publisher(self, msg_type, topic: str):
        return self.node.create_publisher(msg_type, topic, 10)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=2.0)
        self.node.destroy_node()
        self.context.try_shutdown()
