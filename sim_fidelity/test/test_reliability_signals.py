"""Issue 20, point 4: clean-up always wins. SIGINT/SIGTERM reach a real fidelity_manager at random
moments of its start-up, ticking and restore; every object's levers are then read on the real
sim_server. A SIGKILLed manager's levers are restored by the server, and the next manager starts
from the world's originals. (The 100+ trials of docs/reliability.md: tools/probe_inputs.py.)"""
from __future__ import annotations

import random
import signal

import pytest
from reliability_trials import (
    changed_objects,
    run_trial,
    silent_simulator,
    start_manager,
    start_server,
)
from ros_processes import CLIENT_TIMEOUT_S, SHORT_LEASE, Probe, next_domain, stop, wait_for

from sim_fidelity.simulator.ros.client import RosSimulator

pytest.importorskip("sim_fidelity_interfaces.srv", reason="interface packages not built")

TRIALS = 8
LEASE_S = 60.0  # a SIGKILLed process leaves the DDS graph when its lease ends (SHORT_LEASE: 5 s)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("signals")
    domain = next_domain()
    proc = start_server(domain, tmp / "server.log")
    sim = RosSimulator(domain_id=domain, timeout=CLIENT_TIMEOUT_S)
    try:
        sim.wait_for_server(60.0)
        yield domain, sim, tmp
    finally:
        sim.close()
        stop(proc)


def test_signals_at_random_moments_leave_every_object_restored(server):
    domain, sim, tmp = server
    rng = random.Random(20)
    # every other trial signals once the manager has lowered something: on a loaded machine
    # its start-up alone can outlast every random delay
    trials = [run_trial(domain, sim, tmp / f"manager_{i}.log", rng, 4.0 if i % 2 else 1.0,
                        once_lowered=not i % 2) for i in range(TRIALS)]
    bad = [t for t in trials if not t.ok]
    assert not bad, bad
    assert any(t.lowered_at_signal > 0 for t in trials), "no trial caught the manager lowering"


def test_sigkill_is_undone_by_the_server_and_the_next_manager_starts_from_originals(server):
    domain, sim, tmp = server
    for round_ in range(2):
        killed = start_manager(domain, tmp / f"killed_{round_}.log", env=SHORT_LEASE)
        try:
            assert wait_for(lambda: changed_objects(sim) > 0, 60.0), "nothing was lowered"
        finally:
            killed.kill()
            killed.wait()
        if round_ == 0:  # the server sees the manager's client leave and restores its levers
            assert wait_for(lambda: changed_objects(sim) == 0, LEASE_S, period=0.5), \
                changed_objects(sim)
    # round 2: the next manager starts at once, whatever the server has restored by then
    from sim_fidelity_interfaces.msg import FidelitySummary
    log = tmp / "next.log"
    probe = Probe(domain)
    summaries = probe.capture(FidelitySummary, "/fidelity_manager/summary")
    following = start_manager(domain, log)
    try:
        # ticking, its start over (a signal within the start ends it before any restore)
        assert wait_for(lambda: summaries, 120.0), log.read_text()
    finally:
        probe.close()
        assert stop(following, signal.SIGINT) == 0, log.read_text()
    assert changed_objects(sim) == 0
    assert "0 objects differ from their start state" in log.read_text()


def test_a_paused_simulator_gets_one_clear_line(tmp_path):
    """No tick for ``timeout`` seconds: the manager says the simulator answers but its time does
    not advance. (A SIGKILLed simulator: tools/probe_inputs.py; its DDS lease takes 20 s.)"""
    said, log = silent_simulator(next_domain(), tmp_path, "paused", timeout=5.0)
    assert said, log
