"""Script plugins (suction, conveyor) in the engine and over sim_server's topics and services.

In process: every engine built from a world runs the scripts its plugins name, and keeps them
right through spawn, delete and reset. Over ROS: sim_server in its own process with the unloader
and one packet on a pedestal in reach; joints commanded and read on Gazebo-style topics, suction
switched and read, entity bounds asked for.
"""
from __future__ import annotations

import numpy as np
import pytest
from ros_processes import Probe, next_domain, start_node, stop, wait_for

from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.scripts import registry
from sim_fidelity.truck.conveyor import Conveyor
from sim_fidelity.truck.robot import Unloader, load_truck
from sim_fidelity.truck.suction import Suction
from sim_fidelity.world_generators.sdf_text import box_model
from sim_fidelity.world_generators.truck import ROBOT_START_X, packet_model, world_sdf

WORLD_NAME = "scripts_test"
PEDESTAL = box_model("pedestal", 0.15, 0.0, 0.4, (0.6, 0.8, 0.8), static=True)
# The packet's face where the cups arrive with arm_reach 1.2 and the plungers extended 0.15 m.
PACKET_FACE_X = ROBOT_START_X + 0.7 + 1.2 + 0.19 + 0.15 - 0.03
PACKET = packet_model("packet_0000", np.array([PACKET_FACE_X + 0.2, 0.0, 1.001, 0, 0, 0, 1.0]),
                      np.array([0.4, 0.4, 0.4]), 4.0)
REACH = {"arm_reach": 1.2, "nose_pitch": 0.0, "arm_shift": 0.0}


@pytest.fixture(scope="module")
def world_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("world") / f"{WORLD_NAME}.sdf"
    path.write_text(world_sdf(WORLD_NAME, PEDESTAL + PACKET))
    return path


# ---------------------------------------------------------------------- in process
def test_scripts_are_registered_and_built_for_every_engine(world_file):
    assert {"sim_fidelity_suction", "sim_fidelity_conveyor"} <= set(registry())
    engine = MujocoEngine.from_file(world_file)
    scripts = list(engine.scripts)
    assert [type(s) for s in scripts] == [Suction, Conveyor]  # the conveyor sees this step's grips
    assert list(engine.hooks) == [engine.scripts]
    assert len(scripts[0]) == 45 and scripts[1].packets == ["packet_0000"]
    plain = MujocoEngine.from_string(world_sdf("plain", PEDESTAL + PACKET, robot=False))
    assert len(plain.scripts) == 0 and not plain.hooks


def _reach(sim, robot: Unloader) -> None:
    robot.command(REACH)
    sim.run_for(2.0)
    robot.suction_on(True)
    robot.command({"plunger_extend": 0.15})
    sim.run_for(1.0)


def test_load_truck_wires_the_scripts_and_the_unloader_reads_them(world_file):
    sim, robot = load_truck(world_file)
    assert robot.suction is sim.scripts.get("unloader", "sim_fidelity_suction")
    assert robot.packets == ["packet_0000"] and robot.held_packets().size == 0
    _reach(sim, robot)
    assert robot.held_packets().tolist() == [0]
    assert robot.in_truck.tolist() == [True]
    with pytest.raises(ValueError):
        robot.in_truck[0] = False  # read-only
    robot.suction_on(False)
    assert robot.held_packets().size == 0


def test_a_grip_survives_spawn_and_delete_and_reset_starts_over(world_file):
    sim, robot = load_truck(world_file)
    _reach(sim, robot)
    box = packet_model("packet_0001", np.array([3.0, 0, 0.2, 0, 0, 0, 1.0]), np.full(3, 0.3), 2.0)
    sim.spawn("", f"<sdf version='1.9'>{box}</sdf>")  # recompiles the model
    assert robot.conveyor.packets == ["packet_0000", "packet_0001"]
    z0 = sim.get_states(["packet_0000"])[0][0, 2]
    robot.command({"arm_lift": 0.3})
    sim.run_for(1.5)
    assert sim.get_states(["packet_0000"])[0][0, 2] > z0 + 0.25  # still welded to the plate
    sim.delete("packet_0001")
    assert robot.suction.held_models(sim) == ["packet_0000"]
    assert robot.conveyor.in_truck.tolist() == [True, False]  # deleted: out, not counted
    sim.reset()
    assert not robot.suction.on and robot.held_packets().size == 0 and robot.unloaded == 0
    assert not sim.data.eq_active.any()
    sim.delete("unloader")
    assert len(sim.scripts) == 0 and not sim.hooks
    sim.step(10)


# ---------------------------------------------------------------------- over ROS
@pytest.fixture(scope="module")
def served(world_file, tmp_path_factory):
    """A playing sim_server (twice real time) and a probe node in its domain."""
    domain = next_domain()
    log = tmp_path_factory.mktemp("logs") / "sim_server.log"
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": world_file, "real_time_factor": 2.0, "publish_rate": 20.0},
                      domain, log)
    probe = Probe(domain)
    try:
        yield probe, proc, log
    finally:
        probe.close()
        stop(proc)


@pytest.fixture
def probe(served):
    probe, proc, log = served
    yield probe
    assert proc.poll() is None, log.read_text()


def _keep_sending(publisher, msg, condition, timeout: float = 60.0) -> bool:
    """Publish ``msg`` again every half second until ``condition`` (DDS matching may drop the
    first ones); the commands are targets, so repeats are harmless."""
    def sent_and_done() -> bool:
        publisher.publish(msg)
        return wait_for(condition, 0.5)
    return wait_for(sent_and_done, timeout, period=0.0)


class Joints:
    """Commands on ``/model/unloader/joint/<joint>/cmd_pos``, readings on the joint_state topic."""

    def __init__(self, probe: Probe):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64
        self.probe, self.Float64 = probe, Float64
        self.states = probe.capture(JointState, f"/world/{WORLD_NAME}/model/unloader/joint_state")
        self.pubs: dict = {}

    def position(self, joint: str) -> float:
        if not self.states:
            return float("nan")
        last = self.states[-1]
        return last.position[list(last.name).index(joint)]

    def move(self, targets: dict[str, float], tolerance: float = 0.02) -> bool:
        done = True
        for joint, target in targets.items():
            pub = self.pubs.setdefault(joint, self.probe.publisher(
                self.Float64, f"/model/unloader/joint/{joint}/cmd_pos"))
            done &= _keep_sending(pub, self.Float64(data=target),
                                  lambda j=joint, t=target: abs(self.position(j) - t) < tolerance)
        return done


def _seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def test_cmd_pos_moves_the_joint_seen_on_joint_state(probe):
    from rosgraph_msgs.msg import Clock
    clock = probe.capture(Clock, "/clock")
    joints = Joints(probe)
    assert wait_for(lambda: joints.states and clock, 60.0), "no joint_state or no /clock"
    before = _seconds(clock[-1].clock)
    state = joints.states[-1]
    assert {"arm_lift", "drive", "p00_bellows"} <= set(state.name)
    assert not any("::" in n for n in state.name)
    assert len(state.position) == len(state.velocity) == len(state.name)
    start = joints.position("arm_shift")
    assert joints.move({"arm_shift": 0.3})
    assert joints.position("arm_shift") > start + 0.25
    stamp = _seconds(joints.states[-1].header.stamp)
    assert wait_for(lambda: _seconds(clock[-1].clock) >= stamp, 60.0), \
        f"/clock never reached the joint_state stamp {stamp:.3f} s"
    # sim time: between two /clock readings taken around it (wall time is ~1.7e9 s)
    assert before <= stamp <= _seconds(clock[-1].clock), (before, stamp)


def test_suction_holds_the_packet_the_cups_press_and_releases_it(probe):
    from std_msgs.msg import Bool, Empty, UInt32

    from sim_fidelity_interfaces.msg import SuctionState
    joints = Joints(probe)
    suction = probe.capture(SuctionState, "/model/unloader/suction/state")
    unloaded = probe.capture(UInt32, "/model/unloader/unloaded")
    command = probe.publisher(Bool, "/model/unloader/suction/cmd")
    assert wait_for(lambda: suction and unloaded and joints.states, 60.0), \
        "no suction state, unloaded count or joint state"
    assert not suction[-1].on and list(suction[-1].held) == [] and unloaded[-1].data == 0
    assert joints.move(REACH)
    assert _keep_sending(command, Bool(data=True), lambda: suction[-1].on)
    # hold with nothing held closes every valve: the cups press the packet and seize nothing
    hold = probe.publisher(Empty, "/model/unloader/suction/hold")
    assert wait_for(lambda: hold.get_subscription_count() == 1, 60.0), "nobody hears hold"
    hold.publish(Empty())
    assert joints.move({"plunger_extend": 0.15}, tolerance=0.05)
    pressed = len(suction)
    assert wait_for(lambda: len(suction) >= pressed + 40, 60.0), "suction state stopped"
    assert all(list(m.held) == [] for m in suction[pressed:]), "hold did not close the valves"
    # off and on again opens the valves: the pressed packet is seized
    assert _keep_sending(command, Bool(data=False), lambda: not suction[-1].on)
    assert _keep_sending(command, Bool(data=True), lambda: suction[-1].on)
    assert wait_for(lambda: list(suction[-1].held) == ["packet_0000"], 60.0), suction[-1]
    hold.publish(Empty())
    assert joints.move({"arm_lift": 0.2}, tolerance=0.05)
    assert list(suction[-1].held) == ["packet_0000"]  # hold keeps the load
    assert _keep_sending(command, Bool(data=False), lambda: not suction[-1].on)
    assert list(suction[-1].held) == []


def test_get_entity_bounds(probe):
    from simulation_interfaces.msg import Bounds, Result
    from simulation_interfaces.srv import GetEntityBounds

    def bounds(entity: str):
        return probe.call(GetEntityBounds, "/get_entity_bounds",
                          GetEntityBounds.Request(entity=entity))
    for entity in ("packet_0000", "packet_0000::link"):
        res = bounds(entity)
        assert res.result.result == Result.RESULT_OK and res.bounds.type == Bounds.TYPE_BOX
        lo, hi = ([p.x, p.y, p.z] for p in res.bounds.points)
        np.testing.assert_allclose(lo, [-0.2] * 3, atol=1e-9)  # the 0.4 m box, in its own frame
        np.testing.assert_allclose(hi, [0.2] * 3, atol=1e-9)
    res = bounds("nosuch")
    assert res.result.result == Result.RESULT_NOT_FOUND and "nosuch" in res.result.error_message
    assert bounds("unloader::arm_lift").result.result == Result.RESULT_INCORRECT_STATE  # a joint
