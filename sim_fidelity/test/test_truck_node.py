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
    from sim_fidelity_interfaces.srv import GetFidelity, SetFidelity
    probe, procs, tmp = truck
    phases = probe.capture(String, "/unloading_controller/phase")
    joints = probe.capture(JointState, "/world/truck_A/model/unloader/joint_state")
    suction = probe.capture(SuctionState, "/model/unloader/suction/state")
    summary = probe.capture(FidelitySummary, "/fidelity_manager/summary")

    def logs() -> str:
        return "\n".join(f"{p.name}:\n{p.read_text()[-1500:]}" for p in sorted(tmp.glob("*.log")))

    # the plunger trees' levels, read from the manager while the controller works
    plunger_levels: list[set[int]] = []

    def held_while_recording() -> bool:
        res = probe.call(GetFidelity, "/fidelity_manager/get_fidelity",
                         GetFidelity.Request(trees=["plungers/.*"]))
        if res.success and len(res.trees) == 45:
            plunger_levels.append(set(res.levels))
        return any(m.held for m in suction)

    assert wait_for(held_while_recording, 120.0, period=0.1), logs()
    assert all(p.poll() is None for p in procs), logs()
    seen = [m.data for m in phases]
    assert seen[0] == "approach" and "extend" in seen, seen
    reach = [dict(zip(m.name, m.position))["arm_reach"] for m in joints]
    assert max(reach) > 0.8, "the arm did not reach towards the wall"
    # the manager heard "extend": its 45 plunger trees, LOW while the robot approached (the
    # action signaler's initial level), went HIGH (a gripping cup is never LOW: its script is off)
    low, high = {SetFidelity.Request.LEVEL_LOW}, {SetFidelity.Request.LEVEL_HIGH}
    assert low in plunger_levels, plunger_levels[:5]
    assert high in plunger_levels[plunger_levels.index(low):], plunger_levels[-5:]
    assert summary and all(s.high + s.medium + s.low == summary[0].high + summary[0].medium
                           + summary[0].low for s in summary)
    for p in procs[::-1]:
        assert stop(p) == 0, logs()
