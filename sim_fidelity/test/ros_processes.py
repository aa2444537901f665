"""Start project nodes as real processes for process-level tests, each in its own DDS domain."""
from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_domains = itertools.count(101 + (os.getpid() % 40) * 3)


def next_domain() -> int:
    """A DDS domain no other server of this test run uses."""
    return next(_domains) % 230


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
                    params: dict | None = None, group: bool = False) -> subprocess.Popen:
    """Start a console script the way launch_ros' ``Node(name=executable, ...)`` does:
    ``--ros-args -r __node:=NAME -r __ns:=/ --params-file FILE ... -p k:=v ...``.
    ``group``: in a process group of its own (for signalling it as a terminal does)."""
    module, function = console_scripts()[executable].split(":")
    args = [sys.executable, "-c", f"import sys; from {module} import {function}; "
            f"sys.exit({function}())", "--ros-args", "-r", f"__node:={executable}", "-r", "__ns:=/"]
    for f in params_files:
        args += ["--params-file", str(f)]
    for k, v in (params or {}).items():
        args += ["-p", f"{k}:={str(v).lower() if isinstance(v, bool) else v}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               PYTHONUNBUFFERED="1")
    return subprocess.Popen(args, env=env, cwd=REPO, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=group)


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def wait_for(predicate, timeout: float = 10.0, period: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(period)
    return predicate()


class Probe:
    """A test-side rclpy node in its own context and domain: service calls and topic capture."""

    def __init__(self, domain: int, name: str = "test_probe"):
        import threading

        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
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
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise TimeoutError(f"service {name} not available")
            future = client.call_async(request)
            if not wait_for(future.done, timeout):
                raise TimeoutError(f"service {name} did not answer")
            return future.result()
        finally:
            self.node.destroy_client(client)

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
