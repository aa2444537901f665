"""The unloading controller as a ROS node: sim_server (scenario A), fidelity_manager, controller.

Three real processes talk only over ROS: the controller reads joint states and packet poses,
commands the joints, announces ``extend`` to the fidelity manager (whose plunger trees go HIGH)
and grips packets by suction.
"""
from __future__ import annotations

import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for

# the nodes' timeout and the manager's restore budget: under load sim_server loads truck_A for
# seconds, and the restore of 459 trees against it ran out of the default 2.5 s (exit 3)
SIMULATOR_WAIT_S = 60.0


def _plunger_levels(probe) -> set[int] | None:
    """The levels of the manager's 45 plunger trees, or None while it does not answer."""
    from sim_fidelity_interfaces.srv import GetFidelity
    try:
        res = probe.call(GetFidelity, "/fidelity_manager/get_fidelity",
                         GetFidelity.Request(trees=["plungers/.*"]), timeout=10.0)
    except TimeoutError:  # still starting, or an answer late on a loaded machine: ask again
        return None
    return set(res.levels) if res.success and len(res.trees) == 45 else None


@pytest.fixture
def truck(tmp_path):
    """sim_server and the manager; the test starts the controller (the callable yielded) once
    its probe listens, and only when the manager answers: the controller announces 'extend' to
    the manager, which must be there to hear it (a loaded machine may start the manager seconds
    after the controller)."""
    domain = next_domain()
    world = REPO / "worlds" / "truck_A.sdf"
    procs = [
        start_node("sim_fidelity.simulator.ros.server",
                   {"world": str(world), "real_time_factor": 0.0, "sleep": True,
                    "sleep_tolerance": 0.01}, domain,
                   tmp_path / "server.log"),
        start_node("sim_fidelity.fidelity_manager.node",
                   {"config": str(REPO / "config" / "truck.yaml"), "preset": "adfi-3", "rate": 50.0,
                    "use_sim_time": True, "timeout": SIMULATOR_WAIT_S,
                    "restore_budget": SIMULATOR_WAIT_S}, domain, tmp_path / "manager.log"),
    ]
    probe = Probe(domain)
    try:
        assert wait_for(lambda: _plunger_levels(probe) is not None, 120.0, period=0.5), \
            (tmp_path / "manager.log").read_text()

        def start_controller() -> None:
            procs.append(start_node("sim_fidelity.truck.controller_node",
                                    {"world": "truck_A", "use_sim_time": True,
                                     "timeout": SIMULATOR_WAIT_S}, domain,
                                    tmp_path / "controller.log"))
        yield probe, procs, tmp_path, start_controller
    finally:
        probe.close()
        for p in reversed(procs):
            stop(p)


def test_controller_node_picks_through_ros(truck):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from sim_fidelity_interfaces.msg import FidelitySummary, SuctionState
    from sim_fidelity_interfaces.srv import SetFidelity
    probe, procs, tmp, start_controller = truck
    phases = probe.capture(String, "/unloading_controller/phase")
    joints = probe.capture(JointState, "/world/truck_A/model/unloader/joint_state")
    suction = probe.capture(SuctionState, "/model/unloader/suction/state")
    summary = probe.capture(FidelitySummary, "/fidelity_manager/summary")
    start_controller()

    def logs() -> str:
        return "\n".join(f"{p.name}:\n{p.read_text()[-1500:]}" for p in sorted(tmp.glob("*.log")))

    # the plunger trees' levels, read from the manager while the controller works
    plunger_levels: list[set[int]] = []

    def held_while_recording() -> bool:
        if (levels := _plunger_levels(probe)) is not None:
            plunger_levels.append(levels)
        return any(m.held for m in suction)

    assert wait_for(held_while_recording, 240.0, period=0.1), logs()
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
