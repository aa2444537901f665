"""The fidelity_manager node on config/truck.yaml whole through Gazebo classic's interface:
sim_server serves ``gazebo_msgs`` without lever services (as Gazebo classic), the manager
(``backend:=classic``) lowers the packets by static copies and keeps the 45 plunger trees HIGH,
whole, saying why in one line (no lever ACTUATION, SCRIPT, SENSOR; DYNAMICS/COLLISION only by
static copies of whole top-level models, not of the robot's links). On SIGINT every packet is
given back.

The world is truck_A with the trailer, the robot and PACKETS only (each static copy recompiles
sim_server's world). One process pair for the module.
"""
from __future__ import annotations

import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for
from sdf_snippets import world_keeping

pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
from gazebo_msgs.srv import GetModelProperties  # noqa: E402

from sim_fidelity.fidelity_manager import Level  # noqa: E402
from sim_fidelity.simulator.ros.classic.names import qualified  # noqa: E402
from sim_fidelity_interfaces.msg import FidelitySummary  # noqa: E402
from sim_fidelity_interfaces.srv import GetFidelity  # noqa: E402

WORLD = REPO / "worlds" / "truck_A.sdf"
CONFIG = REPO / "config" / "truck.yaml"
PACKETS = ["packet_0000", "packet_0001", "packet_0002"]  # the bottom row at the trailer's back
PLUNGER_TREES = 45
WAIT_S = 120.0  # sim_server loads the robot's model again for each static copy; under load


@pytest.fixture(scope="module")
def truck(tmp_path_factory):
    """sim_server (gazebo_msgs, no levers) and the manager on truck.yaml with backend:=classic;
    yields the probe, the manager's process and its log."""
    folder = tmp_path_factory.mktemp("classic_truck")
    domain = next_domain()
    world = world_keeping(WORLD, folder / "truck_small.sdf", "packet_", PACKETS)
    server = start_node("sim_fidelity.simulator.ros.server",
                        {"world": world, "paused": False, "real_time_factor": 1.0,
                         "interfaces": "gazebo_msgs", "serve_levers": False}, domain,
                        folder / "server.log")
    probe = Probe(domain)
    log = folder / "manager.log"
    manager = start_node("sim_fidelity.fidelity_manager.node",
                         {"config": CONFIG, "preset": "adfi-3", "rate": 10.0,
                          "backend": "classic", "world_file": world, "timeout": WAIT_S,
                          "restore_budget": WAIT_S}, domain, log)
    try:
        yield probe, manager, log
    finally:
        stop(manager, timeout=WAIT_S)
        probe.close()
        stop(server)


def static_packets(probe: Probe) -> list[str] | None:
    """The packets the model properties call static; None while one is missing (between the
    delete and the spawn of its copy)."""
    client = probe.node.create_client(GetModelProperties, qualified("get_model_properties"))
    try:
        assert client.wait_for_service(timeout_sec=WAIT_S)
        futures = {p: client.call_async(GetModelProperties.Request(model_name=p))
                   for p in PACKETS + ["unloader"]}
        assert wait_for(lambda: all(f.done() for f in futures.values()), WAIT_S)
    finally:
        probe.node.destroy_client(client)
    answers = {p: f.result() for p, f in futures.items()}
    assert answers["unloader"].success and not answers["unloader"].is_static
    if not all(a.success for a in answers.values()):
        return None
    return [p for p in PACKETS if answers[p].is_static]


def levels(probe: Probe, pattern: str) -> dict[str, tuple[int, bool]]:
    res = probe.call(GetFidelity, "/fidelity_manager/get_fidelity",
                     GetFidelity.Request(trees=[pattern]), timeout=WAIT_S)
    assert res.success, res.message
    return {t: (level, held) for t, level, held in zip(res.trees, res.levels, res.held)}


def test_packets_lowered_plungers_stay_high_whole(truck):
    probe, manager, log = truck
    summaries = probe.capture(FidelitySummary, "/fidelity_manager/summary")
    assert wait_for(lambda: summaries and summaries[-1].low == len(PACKETS), WAIT_S, 0.2), \
        log.read_text()
    assert wait_for(lambda: static_packets(probe) == PACKETS, WAIT_S, 0.5), log.read_text()
    text = log.read_text()
    said = [line for line in text.splitlines() if "trees stay HIGH" in line]
    assert len(said) == 1, text  # one reason: every plunger tree lacks the same features
    assert f"{PLUNGER_TREES} trees stay HIGH (plungers/p" in said[0]
    assert "the simulator has no lever ACTUATION, SCRIPT, SENSOR" in said[0]
    assert "static copies of whole top-level models, not of a link" in said[0]
    plungers = levels(probe, "plungers/.*")
    assert len(plungers) == PLUNGER_TREES
    assert set(plungers.values()) == {(Level.HIGH, True)}  # held against the signaler
    assert set(levels(probe, "packet_.*").values()) == {(Level.LOW, False)}  # as signalled


def test_sigint_gives_every_packet_back(truck):
    probe, manager, log = truck
    assert wait_for(lambda: static_packets(probe) == PACKETS, WAIT_S, 0.5), log.read_text()
    assert stop(manager, timeout=WAIT_S) == 0, log.read_text()
    assert "0 objects differ" in log.read_text()
    assert static_packets(probe) == []
