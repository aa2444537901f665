"""The fidelity_manager node with ``backend:=classic`` against sim_server serving ``gazebo_msgs``
without lever services, as Gazebo classic would: the ``backend`` parameter reaches the classic
client, which lowers boxes by static copies and gives every one back on SIGINT.

The world is stack_test with two of its boxes: a static copy is a delete and a spawn, each a
recompilation of sim_server's model, and the manager's restore has a budget of 2.5 s.
"""
import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for
from sdf_snippets import world_keeping

pytest.importorskip("gazebo_msgs.srv", reason="interface packages not built")
from gazebo_msgs.srv import GetModelProperties  # noqa: E402

from sim_fidelity.simulator.ros.classic.names import qualified  # noqa: E402
from sim_fidelity_interfaces.msg import FidelitySummary  # noqa: E402

WORLD = REPO / "worlds" / "stack_test.sdf"
CONFIG = REPO / "config" / "stack_test.yaml"
BOXES = ["box_0_0_0", "box_0_0_1"]


def static_boxes(probe: Probe, strict: bool = True) -> list[str]:
    """The boxes Gazebo classic's model properties call static (a lowered box's static copy);
    ``strict``: every box must be there (not between the delete and the spawn of a copy)."""
    client = probe.node.create_client(GetModelProperties, qualified("get_model_properties"))
    try:
        assert client.wait_for_service(timeout_sec=60.0)
        futures = {b: client.call_async(GetModelProperties.Request(model_name=b)) for b in BOXES}
        assert wait_for(lambda: all(f.done() for f in futures.values()), 60.0)
        answers = {b: f.result() for b, f in futures.items()}
    finally:
        probe.node.destroy_client(client)
    if strict:
        assert all(a.success for a in answers.values()), [b for b, a in answers.items()
                                                          if not a.success]
    return [b for b, a in answers.items() if a.success and a.is_static]


def test_classic_backend_lowers_and_restores(tmp_path):
    domain, world = next_domain(), world_keeping(WORLD, tmp_path / "stack_small.sdf", "box_", BOXES)
    server = start_node("sim_fidelity.simulator.ros.server",
                        {"world": world, "paused": False, "real_time_factor": 1.0,
                         "interfaces": "gazebo_msgs", "serve_levers": False}, domain,
                        tmp_path / "server.log")
    probe = Probe(domain)
    manager = None
    try:
        assert static_boxes(probe) == []
        summaries = probe.capture(FidelitySummary, "/fidelity_manager/summary")
        manager = start_node("sim_fidelity.fidelity_manager.node",
                             {"config": CONFIG, "preset": "adfi-3", "rate": 20.0,
                              "backend": "classic", "world_file": world, "timeout": 20.0,
                              "restore_budget": 60.0},  # static copies: slow under load
                             domain, tmp_path / "manager.log")
        log = tmp_path / "manager.log"
        assert wait_for(lambda: summaries and summaries[-1].low == len(BOXES), 60.0), \
            log.read_text()
        assert wait_for(lambda: static_boxes(probe, False) == BOXES, 60.0), log.read_text()

        assert stop(manager, timeout=60.0) == 0, log.read_text()
        assert "0 objects differ" in log.read_text()
        assert static_boxes(probe) == []
    finally:
        if manager is not None:
            stop(manager)
        probe.close()
        stop(server)
