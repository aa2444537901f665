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
