"""Signal trials of issue 20 (point 4): a real fidelity_manager process against a real sim_server,
stopped by SIGINT or SIGTERM at a random moment of its start-up, its ticking or its restore; the
levers of every object are then read on the server. Used by test_reliability_signals.py (a dozen
trials) and tools/probe_inputs.py (the hundred and more of docs/reliability.md)."""
from __future__ import annotations

import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ros_processes import CLIENT_TIMEOUT_S, REPO, start_as_launch, start_node, stop, wait_for

from sim_fidelity.simulator import EntityKind, Lever

WORLD = REPO / "worlds" / "stack_test.sdf"
CONFIG = REPO / "config" / "stack_test.yaml"
SERVER = "sim_fidelity.simulator.ros.server"
LEVERS = (Lever.DYNAMICS, Lever.COLLISION)  # what the shape type lowers
SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_WAIT_S = 60.0
RESTORE_BUDGET_S = 30.0  # the manager's restore_budget: 50 boxes on a loaded machine
LOWERING_WAIT_S = 120.0


@dataclass
class Trial:
    """One signal trial: when and what was sent, how the manager ended, what the server has."""

    delay: float  # seconds after the manager's start
    signum: int
    phase: str  # start-up | ticking | restore (a second signal during the restore)
    lowered_at_signal: int  # objects with a lever off on the server just before the signal
    exit_code: int | None  # None: still running EXIT_WAIT_S after the signal (a hang)
    reported: int | None  # "N objects differ" of the manager's last line; None if not said
    left_changed: int  # objects with a lever off on the server after the exit
    log_tail: str = ""

    @property
    def interpreter_start(self) -> bool:
        """Ended by the signal while the Python interpreter itself started (site packages, the
        ROS wheels' re-exec), before the entry point's first line: Python's default (death by
        SIGTERM/SIGINT, or a KeyboardInterrupt traceback from importlib), nothing changed yet."""
        return (self.phase == "start-up" and self.lowered_at_signal == 0
                and (self.exit_code is not None and self.exit_code < 0
                     or self.exit_code == 1 and "sim_fidelity" not in self.log_tail))

    @property
    def ok(self) -> bool:
        """Nothing left changed, nothing misreported, a clean exit (0, or Python's own at the
        interpreter's start)."""
        clean = self.exit_code == 0 or self.interpreter_start
        return self.left_changed == 0 and clean and self.reported in (0, None)


def start_server(domain: int, log: Path):
    """sim_server on stack_test, playing at real time (the boxes settle and get lowered)."""
    return start_node(SERVER, {"world": WORLD, "real_time_factor": 1.0}, domain, log)


def start_manager(domain: int, log: Path, preset: str = "adfi-2", env: dict | None = None):
    """The ``fidelity_manager`` console script, started as launch_ros starts it (``env``: more
    environment, e.g. ``ros_processes.SHORT_LEASE`` for one to be killed)."""
    return start_as_launch("fidelity_manager", domain, log, env=env,
                           params={"config": CONFIG, "preset": preset, "rate": 50.0,
                                   "restore_budget": RESTORE_BUDGET_S})


def changed_objects(sim) -> int:
    """Boxes with any shape lever off, read on the server."""
    boxes = sim.entities(EntityKind.MODEL, pattern=r"^box_")
    off = np.zeros(len(boxes), bool)
    for lever in LEVERS:
        off |= ~np.asarray(sim.get_lever(boxes, lever), bool)
    return int(off.sum())


def run_trial(domain: int, sim, log: Path, rng: random.Random, max_delay: float = 4.0, *,
              once_lowered: bool = False) -> Trial:
    """Start a manager, signal it after a random delay (sometimes twice, the second during its
    restore), wait for its exit and count the objects left changed on the server. With
    ``once_lowered`` the delay counts from the moment the server has an object lowered (a loaded
    machine takes seconds longer to get there), so the signal lands in the ticking."""
    delay = rng.uniform(0.0, max_delay)
    signum = rng.choice(SIGNALS)
    twice = rng.random() < 0.3
    proc = start_manager(domain, log)
    try:
        if once_lowered and not wait_for(lambda: changed_objects(sim) > 0, LOWERING_WAIT_S):
            raise AssertionError(f"the manager lowered nothing in {LOWERING_WAIT_S:g} s:\n"
                                 f"{log.read_text()[-2000:]}")
        time.sleep(delay)
        started = "preset '" in log.read_text()
        lowered = changed_objects(sim)
        proc.send_signal(signum)
        if twice:
            time.sleep(rng.uniform(0.0, 0.1))
            if proc.poll() is None:
                proc.send_signal(rng.choice(SIGNALS))
        try:
            code = proc.wait(EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    said = re.findall(r"(\d+) objects differ from their start state", text)
    phase = "restore" if twice and started else ("ticking" if started else "start-up")
    return Trial(delay, signum, phase, lowered, code, int(said[-1]) if said else None,
                 changed_objects(sim), text[-600:])


SILENT_WORDS = {"paused": ("answers (PAUSED) but its time does not advance",),
                # a tick in flight fails and ends the node, or no tick comes and it says why
                "killed": ("did not answer within", "the simulator does not answer")}


def silent_simulator(domain: int, tmp: Path, how: str, timeout: float = 2.0) -> tuple[bool, str]:
    """A ticking manager whose simulator is paused or SIGKILLed: did the manager say so in one
    line within ``timeout`` + 60 s? Returns that and the manager's log."""
    from sim_fidelity.simulator.ros.client import RosSimulator
    server = start_as_launch("sim_server", domain, tmp / f"silent_{how}_server.log",
                             params={"world": WORLD, "paused": how == "paused"})
    log = tmp / f"silent_{how}.log"
    manager = None
    try:
        with RosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S) as sim:
            sim.wait_for_server(60.0)
        manager = start_as_launch("fidelity_manager", domain, log, params={
            "config": CONFIG, "preset": "adfi-2", "rate": 50.0, "timeout": timeout})
        wait_for(lambda: "preset '" in log.read_text(), 60.0)
        if how == "killed":
            server.kill()
            server.wait()
        said = wait_for(lambda: any(w in log.read_text() for w in SILENT_WORDS[how]),
                        timeout + 60.0)
    finally:
        if manager is not None:
            stop(manager)
        stop(server)
    text = log.read_text()
    return said and text.count("no tick for") <= 1 and "Traceback" not in text, text
