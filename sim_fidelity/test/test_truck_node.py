"""The unloading controller as a ROS node: sim_server (scenario A), fidelity_manager, controller.

Three real processes talk only over ROS: the controller reads joint states and packet poses,
commands the joints, announces ``extend`` to the fidelity manager (whose plunger trees go HIGH)
and grips packets by suction.
"""
from __future__ import annotations

import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for


@pytest.fixture
def truck(tmp_path):
    domain = next_domain()
    world = REPO / "worlds" / "truck_A.sdf"
    procs = [
        start_node("sim_fidelity.simulator.ros.server",
                   {"world": str(world), "real_time_factor": 0.0, "sleep": True,
                    "sleep_tolerance": 0.01}, domain,
                   tmp_path / "server.log"),
        start_node("sim_fidelity.fidelity_manager.node",
                   {"config": str(REPO / "config" / "truck.yaml"), "preset": "adfi-3", "rate": 50.0,
                    "use_sim_time": True}, domain, tmp_path / "manager.log"),
        start_node("sim_fidelity.truck.controller_node",
                   {"world": "truck_A", "use_sim_time": True}, domain, tmp_path / "controller.log"),
    ]
    probe = Probe(domain)
    yield probe, procs, tmp_path
    probe.close()
    for p in reversed(procs):
        stop(p)


def test_controller_node_picks_through_ros(truck):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from sim_fidelity_interfaces.msg import FidelitySummary, SuctionState
    probe, procs, tmp = truck
    phases = probe.capture(String, "/unloading_controller/phase")
    joints = probe.capture(JointState, "/world/truck_A/model/unloader/joint_state")
    suction = probe.capture(SuctionState, "/model/unloader/suction/state")
    summary = probe.capture(FidelitySummary, "/fidelity_manager/summary")

    def logs() -> str:
        return "\n".join(f"{p.name}:\n{p.read_text()[-1500:]}" for p in sorted(tmp.glob("*.log")))

    assert wait_for(lambda: any(m.held for m in suction), 120.0), logs()
    assert all(p.poll() is None for p in procs), logs()
    seen = [m.data for m in phases]
    assert seen[0] == "approach" and "extend" in seen, seen
    reach = [dict(zip(m.name, m.position))["arm_reach"] for m in joints]
    assert max(reach) > 0.8, "the arm did not reach towards the wall"
    # the manager heard "extend": its plunger trees (45) went HIGH on top of the packets near the
    # tool
    assert wait_for(lambda: any(s.high >= 45 for s in summary), 30.0), [
        s.high for s in summary[-5:]]
    for p in procs[::-1]:
        assert stop(p) == 0, logs()
