"""Signalers observe, the application does not change (paper 000, R4): the plunger trees follow the
``plunger_extend`` command with no announcement, in process and through the nodes (sim_server, the
fidelity manager, the unloading controller with announcements off); decision points over ROS."""
from __future__ import annotations

import numpy as np
import pytest
from ros_processes import REPO, Probe, next_domain, start_node, stop, wait_for

from sim_fidelity.fidelity_manager import FidelityManager, Level
from sim_fidelity.truck.bench import CONFIG
from sim_fidelity.truck.robot import load_truck
from sim_fidelity.world_generators.truck import Section, layout_sections, packets_sdf, world_sdf

WORLD = "small_wall"
H, L = Level.HIGH, Level.LOW


def small_wall(folder) -> str:
    """A truck world with a wall of 20 packets 0.6 m behind the door and one of 10 at 6 m (out
    of the robot's box while it works at the first)."""
    lay = layout_sections((Section("wall", 20, 0.6), Section("wall", 10, 6.0)),
                          np.random.default_rng(1))
    path = folder / f"{WORLD}.sdf"
    path.write_text(world_sdf(WORLD, packets_sdf(lay)))
    return str(path)


def plunger_levels(manager: FidelityManager) -> set[Level]:
    return {level for level, _ in manager.get_fidelity("plungers/.*").values()}


def test_plunger_trees_follow_the_extend_command_in_process(tmp_path):
    sim, robot = load_truck(small_wall(tmp_path))
    with FidelityManager(sim, CONFIG, "adfi-3") as manager:
        plungers = manager.signalers["plungers"]
        manager.tick()
        assert plunger_levels(manager) == {L}
        robot.command({"plunger_extend": 0.15})
        manager.tick()
        assert plunger_levels(manager) == {H}
        robot.command({"plunger_extend": 0.005})  # at most 1 cm: retracted
        manager.tick()
        assert plunger_levels(manager) == {L}
        # announcements still work, and the last event wins: an announced extend with the
        # command down holds until the command crosses the threshold
        plungers.announce("extend")
        manager.tick()
        assert plunger_levels(manager) == {H}
        robot.command({"plunger_extend": 0.0})
        manager.tick()
        assert plunger_levels(manager) == {H}  # no crossing: the announcement holds
        robot.command({"plunger_extend": 0.1})
        manager.tick()
        plungers.announce("retract")
        manager.tick()
        assert plunger_levels(manager) == {L}


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    """sim_server on the small wall, the fidelity manager (config/truck.yaml, adfi-3) and the
    unloading controller with its defaults (no announcements)."""
    tmp = tmp_path_factory.mktemp("plungers_observed")
    domain = next_domain()
    procs = [
        start_node("sim_fidelity.simulator.ros.server",
                   {"world": small_wall(tmp), "real_time_factor": 0.0, "sleep": True,
                    "sleep_tolerance": 0.01}, domain, tmp / "server.log"),
        start_node("sim_fidelity.fidelity_manager.node",
                   {"config": str(REPO / "config" / "truck.yaml"), "preset": "adfi-3",
                    "rate": 50.0, "use_sim_time": True, "timeout": 120.0}, domain,
                   tmp / "manager.log"),
        start_node("sim_fidelity.truck.controller_node",
                   {"world": WORLD, "use_sim_time": True, "timeout": 120.0}, domain,
                   tmp / "controller.log"),
    ]
    probe = Probe(domain)
    yield probe, procs, tmp
    probe.close()
    for p in reversed(procs):
        stop(p)


def _logs(tmp) -> str:
    return "\n".join(f"{p.name}:\n{p.read_text()[-1500:]}" for p in sorted(tmp.glob("*.log")))


_clients: dict = {}  # probe -> its get_fidelity client, kept (a new client is discovered anew)


def _levels(probe, pattern: str) -> list[int]:
    """The manager's levels of the trees matching ``pattern`` ([] while it does not answer)."""
    from sim_fidelity_interfaces.srv import GetFidelity
    client = _clients.get(probe)
    if client is None:
        client = _clients[probe] = probe.node.create_client(
            GetFidelity, "/fidelity_manager/get_fidelity")
    if not client.wait_for_service(timeout_sec=5.0):
        return []
    future = client.call_async(GetFidelity.Request(trees=[pattern]))
    if not wait_for(future.done, 30.0):
        return []
    res = future.result()
    return list(res.levels) if res.success else []


def test_plunger_trees_follow_joint_commands_through_the_nodes(nodes):
    """LOW while the robot approaches (or once it retracted), HIGH once the controller commands
    the plungers out: only the command can raise them (LOW at start, nothing announced)."""
    from std_msgs.msg import Float64, String
    probe, procs, tmp = nodes
    actions = probe.capture(String, "/fidelity_manager/action")
    extend = probe.capture(Float64, "/model/unloader/joint/plunger_extend/cmd_pos")
    seen: list[set[int]] = []  # the plunger trees' levels, polled

    def low_and_high() -> bool:
        levels = _levels(probe, "plungers/.*")
        if len(levels) == 45:
            seen.append(set(levels))
        return {int(H)} in seen and {int(L)} in seen

    assert wait_for(low_and_high, 240.0, period=0.1), f"{seen[-3:]}\n" + _logs(tmp)
    assert all(p.poll() is None for p in procs), _logs(tmp)
    assert wait_for(lambda: any(m.data > 0.01 for m in extend), 60.0), "no extend command seen"
    assert not actions, [m.data for m in actions]
    log = (tmp / "manager.log").read_text()
    assert ("signaler 'packets': stillness counted in ticks, not physics steps: the simulator "
            "steps out of the manager's sight (over ROS, or no step hooks)") in log, log[-1500:]


def test_a_decision_point_over_ros_sets_every_packet_high(nodes):
    """A decision point with a settle longer than the test: every packet HIGH (the far wall too,
    never in the robot's box here), and still HIGH a sim second later (longer than the
    controller's own 0.1 s decision points or the interval refresh). The last test of the module:
    the refresh lasts."""
    from rosgraph_msgs.msg import Clock
    from std_msgs.msg import Float64
    probe, procs, tmp = nodes
    clock = probe.capture(Clock, "/clock")
    assert wait_for(lambda: set(_levels(probe, "packet_.*")) - {int(H)}, 120.0, period=0.1), (
        "no packet was lowered\n" + _logs(tmp))
    decision = probe.publisher(Float64, "/fidelity_manager/decision")

    def sim_time() -> float:
        return clock[-1].clock.sec + 1e-9 * clock[-1].clock.nanosec if clock else 0.0

    assert wait_for(lambda: bool(clock), 30.0), "no /clock"
    start = sim_time()

    def all_high() -> bool:
        decision.publish(Float64(data=1e4))  # again until heard: a new subscription may miss one
        return set(_levels(probe, "packet_.*")) == {int(H)}

    assert wait_for(all_high, 120.0, period=0.2), (
        f"not all HIGH after the decision point (sim time {start} .. {sim_time()})\n" + _logs(tmp))
    heard = sim_time()
    assert wait_for(lambda: sim_time() > heard + 1.0, 120.0), "sim time does not advance"
    levels = _levels(probe, "packet_.*")
    assert set(levels) == {int(H)}, (start, heard, sim_time(), levels)
