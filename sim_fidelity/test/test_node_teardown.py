"""A node's teardown is bounded (ros_node.TEARDOWN_S): after its clean-up, a teardown that does
not end (as when Fast DDS deadlocks in it, docs/testing.md) ends the process with exit code 1 and
every thread's stack on stderr; a teardown that ends leaves no watchdog behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from ros_processes import next_domain, wait_for

pytest.importorskip("rclpy")

NODE = """
import sys, time
from sim_fidelity.ros_node import run_node

def start(node, values, stack):
    if {stuck}:
        stack.callback(time.sleep, 3600)  # a teardown that never ends
    print("started", flush=True)
    return lambda: 0

code = run_node("teardown_probe", {{}}, start, teardown_s=1.0)
print(f"run_node returned {{code}}", flush=True)
time.sleep(3.0)  # a watchdog left armed would end the process here, exit 1
sys.exit(code)
"""


def _run(stuck: bool, tmp_path) -> tuple[int, str, str]:
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    env = dict(os.environ, ROS_DOMAIN_ID=str(next_domain()))
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen([sys.executable, "-c", NODE.format(stuck=stuck)], env=env,
                                stdout=o, stderr=e)
        try:
            assert wait_for(lambda: "started" in out.read_text(), 60.0), err.read_text()
            proc.send_signal(signal.SIGINT)
            code = proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return code, out.read_text(), err.read_text()


def test_a_teardown_that_never_ends_is_cut_off_with_the_stacks(tmp_path):
    started = time.monotonic()
    code, out, err = _run(True, tmp_path)
    assert code == 1, (out, err)
    assert "run_node returned" not in out  # ended inside the teardown
    assert "interrupted by SIGINT: shutting down" in err  # the clean-up ran first
    assert "Timeout (0:00:01)!" in err, err  # then the stacks: the main thread in the unwinding
    assert "in _exit_wrapper" in err and "in run_node" in err, err
    assert time.monotonic() - started < 60.0


def test_a_teardown_that_ends_leaves_no_watchdog(tmp_path):
    code, out, err = _run(False, tmp_path)
    assert code == 0, (out, err)
    assert "run_node returned 0" in out and "Timeout" not in err
