"""The unloader robot in small worlds: model structure, joints, suction, conveyor and unloading."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.simulator.protocol import EntityKind, Lever
from sim_fidelity.truck.robot import load_truck
from sim_fidelity.world_generators.sdf_text import box_model
from sim_fidelity.world_generators.truck import ROBOT_START_X, packet_model, world_sdf
from sim_fidelity.world_generators.unloader import (
    ACTIVE_JOINTS,
    CUP_RADIUS,
    NOSE_HINGE,
    nose_slope,
    plunger_names,
)

IDENTITY = np.array([0, 0, 0, 0, 0, 0, 1.0])
# A packet on a static pedestal, its face where the cups arrive with arm_reach 1.2 and the
# plungers extended 0.15 m (cups then press 3 cm into it).
PEDESTAL = box_model("pedestal", 0.15, 0.0, 0.4, (0.6, 0.8, 0.8), static=True)
PACKET_FACE_X = ROBOT_START_X + 0.7 + 1.2 + 0.19 + 0.15 - 0.03


def _world(tmp_path, *models: str, name: str = "robot_test"):
    path = tmp_path / f"{name}.sdf"
    path.write_text(world_sdf(name, "".join(models)))
    return load_truck(path)


def _packet(name: str, x: float, y: float, z: float, size=(0.4, 0.4, 0.4),
            mass: float = 4.0) -> str:
    return packet_model(name, np.array([x, y, z, 0, 0, 0, 1.0]), np.array(size), mass)


def _settle_to(sim, robot, targets: dict[str, float], seconds: float) -> None:
    robot.command(targets)
    sim.run_for(seconds)


def test_model_structure(tmp_path):
    sim, robot = _world(tmp_path)
    assert len(robot.joints) == 11 and "drive" in robot.joints  # 10 arm/nose joints + the base
    assert {j[0] for j in ACTIVE_JOINTS} == set(robot.joints) - {"drive"}
    links = sim.entities(EntityKind.LINK, r"unloader::p\d\d_")
    joints = sim.entities(EntityKind.JOINT, r"unloader::p\d\d_")
    assert len(links) == 180 and len(joints) == 180 and len(plunger_names()) == 45
    sensors = sim.entities(EntityKind.SENSOR, r"proximity")
    assert len(sensors) == 45 and all(sim.entity_info(s).type == "ray" for s in sensors)
    assert len(robot.suction) == 45


def test_each_active_joint_moves(tmp_path):
    sim, robot = _world(tmp_path)
    targets = {n: (hi if abs(hi) > abs(lo) else lo) * 0.5
               for n, _, _, _, _, lo, hi, *_ in ACTIVE_JOINTS}
    targets["nose_pitch"] = -0.4
    targets["drive"] = 0.3
    start = robot.positions(list(targets))
    _settle_to(sim, robot, targets, 2.0)
    moved = robot.positions(list(targets)) - start
    wanted = np.array(list(targets.values())) - start
    assert (np.abs(moved - wanted) < 0.25 * np.abs(wanted)).all(), dict(zip(targets, moved))


def _reach_packet(sim, robot) -> None:
    _settle_to(sim, robot, {"arm_reach": 1.2, "nose_pitch": 0.0}, 2.0)
    robot.suction_on(True)
    _settle_to(sim, robot, {"plunger_extend": 0.15}, 1.0)


def _cup_contacts(sim, robot, body: int) -> int:
    geoms = sim.data.contact.geom[:sim.data.ncon]
    on_cup = np.isin(geoms, robot.suction.cup_geom)
    other = sim.model.geom_bodyid[geoms[:, ::-1]]
    return int((on_cup & (other == body)).sum())


def test_suction_grips_lifts_and_releases(tmp_path):
    z0 = 0.8 + 0.2 + 0.001
    sim, robot = _world(tmp_path, PEDESTAL, _packet("packet_0000", PACKET_FACE_X + 0.2, 0.0, z0))
    packet = sim.model.body("packet_0000::link").id
    geom = np.flatnonzero(sim.model.geom_bodyid == packet)
    masks = sim.model.geom_conaffinity[geom].copy()
    _reach_packet(sim, robot)
    assert robot.suction.held_bodies().size == 1
    assert 8 <= (robot.suction.held >= 0).sum() <= 25  # cups over the 0.4 x 0.4 face (of 45)
    assert np.isfinite(robot.suction.readings).sum() >= 8
    # carried: the cups no longer press on it, it still rests on nothing else here
    assert _cup_contacts(sim, robot, packet) == 0 and list(robot.suction.carried) == [packet]
    assert sim.levers_at_originals()
    _settle_to(sim, robot, {"arm_lift": 0.3}, 1.5)
    lifted = sim.get_states(["packet_0000"])[0][0, 2]
    assert lifted > z0 + 0.25
    robot.suction_on(False)
    assert robot.suction.held_bodies().size == 0
    sim.run_for(1.0)
    assert sim.get_states(["packet_0000"])[0][0, 2] < lifted - 0.2  # it fell
    # the lowest cups still reach into it; once they are withdrawn it is carried no more
    assert list(robot.suction.carried) == [packet]
    _settle_to(sim, robot, {"plunger_extend": 0.0, "arm_reach": 0.9}, 1.0)
    assert robot.suction.carried.size == 0
    assert np.array_equal(sim.model.geom_conaffinity[geom], masks)


def test_hold_keeps_the_load_and_seizes_nothing_more(tmp_path):
    sim, robot = _world(tmp_path, PEDESTAL, _packet("packet_0000", PACKET_FACE_X + 0.2, 0.0, 1.001))
    _settle_to(sim, robot, {"arm_reach": 1.2, "nose_pitch": 0.0}, 2.0)
    robot.suction_on(True)
    robot.suction_hold()  # nothing held yet: every valve closes
    robot.command({"plunger_extend": 0.15})
    touched = 0
    for _ in range(20):  # the cups press the face, yet seize nothing
        sim.run_for(0.05)
        touched = max(touched, int(np.isfinite(robot.suction.readings).sum()))
    assert touched >= 8 and robot.suction.held_bodies().size == 0
    sim, robot = _world(tmp_path, PEDESTAL, _packet("packet_0000", PACKET_FACE_X + 0.2, 0.0, 1.001))
    _reach_packet(sim, robot)
    sealed = robot.suction.held >= 0
    assert robot.suction.held_bodies().size == 1 and sealed.sum() >= 8
    robot.suction_hold()
    assert np.array_equal(robot.suction.valve_open, sealed)
    _settle_to(sim, robot, {"arm_lift": 0.3}, 1.5)
    assert robot.suction.held_bodies().size == 1
    robot.suction_on(False)
    robot.suction_on(True)
    assert robot.suction.valve_open.all()  # switching on again opens every valve


def test_suction_honours_the_script_and_sensor_levers(tmp_path):
    sim, robot = _world(tmp_path, PEDESTAL, _packet("packet_0000", PACKET_FACE_X + 0.2, 0.0, 1.001))
    scripts = sim.entities(EntityKind.PLUGIN, r".*::suction")
    sensors = sim.entities(EntityKind.SENSOR, r".*::proximity")
    sim.set_lever(scripts[:20], Lever.SCRIPT, False)
    sim.set_lever(sensors[20:], Lever.SENSOR, False)
    _reach_packet(sim, robot)
    assert robot.suction.held_bodies().size == 0
    assert not np.isfinite(robot.suction.readings).any()


def test_conveyor_carries_a_packet_off_the_rear_and_counts_it(tmp_path):
    x = ROBOT_START_X - 0.2
    sim, robot = _world(tmp_path,
                        _packet("packet_0000", x, 0.1, 0.5 + 0.15 + 0.002, (0.3, 0.3, 0.3)),
                        _packet("packet_0001", 3.0, 0.0, 0.2))
    sim.run_for(0.5)
    pose, twist = sim.get_states(["packet_0000"])
    assert twist[0, 0] == pytest.approx(-0.8, abs=0.05)  # the belt's speed, towards the rear
    assert abs(pose[0, 1]) < 0.1  # pulled towards the centre line
    assert robot.unloaded == 0
    sim.run_for(2.5)
    assert robot.unloaded == 1 and robot.conveyor.in_truck.tolist() == [False, True]
    assert sim.get_states(["packet_0000"])[0][0, 0] < -25  # in the storage yard
    assert not sim.get_lever(["packet_0000"], Lever.DYNAMICS)[0]
    assert not sim.get_lever(["packet_0000"], Lever.COLLISION)[0]
    assert sim.get_lever(["packet_0001"], Lever.DYNAMICS)[0]


def test_a_short_packet_crosses_from_the_extended_nose_to_the_body_belt(tmp_path):
    """At full nose_reach the hinge stands 0.42 m ahead of the body conveyor; the bridge belt
    spans that gap, so a packet shorter than it rides from the ramp to the rear and counts."""
    slope = nose_slope()
    along = 0.45  # m down the ramp from the hinge
    x = ROBOT_START_X + NOSE_HINGE[0] + 0.4 + along * np.cos(slope)
    z = NOSE_HINGE[2] - along * np.sin(slope) + 0.12
    sim, robot = _world(tmp_path, _packet("packet_0000", x, 0.0, z, (0.2, 0.2, 0.16), 2.0))
    # the nose out and down, the arm up and back as the controller's sweep has them
    _settle_to(sim, robot, {"nose_reach": 0.4, "nose_pitch": 0.0, "arm_lift": 1.2,
                            "arm_reach": -0.8}, 5.0)
    pose = sim.get_states(["packet_0000"])[0][0]
    assert robot.unloaded == 1, f"packet at {pose[:3].round(2)}, not carried off the rear"


def test_cups_are_small_and_only_cups_collide_on_plungers(tmp_path):
    sim, _ = _world(tmp_path)
    m = sim.model
    colliding = {m.body(m.geom_bodyid[g]).name for g in range(m.ngeom)
                 if m.geom_contype[g] and m.body(m.geom_bodyid[g]).name.startswith("unloader::p")}
    assert colliding == {f"unloader::{p}_cup" for p in plunger_names()}
    assert CUP_RADIUS < 0.05  # neighbouring cups (0.1 m pitch) never touch


def test_scripts_rebind_after_a_spawn_while_plungers_and_packets_are_low(tmp_path):
    """A recompile (spawn) with LOW plungers and packets (contype 0): suction and conveyor still
    find their cup and packet geoms, and work once the trees are HIGH again."""
    from sim_fidelity.fidelity_manager import FidelityManager
    from sim_fidelity.truck.bench import CONFIG
    sim, robot = _world(tmp_path, PEDESTAL, _packet("packet_0000", PACKET_FACE_X + 0.2, 0.0, 1.001),
                        _packet("packet_0001", ROBOT_START_X - 0.2, 0.1, 0.652, (0.3, 0.3, 0.3)))
    with FidelityManager(sim, CONFIG, "adfi-3") as manager:
        sim.set_lever(["packet_0001"], Lever.DYNAMICS, False)
        sim.set_lever(["packet_0001"], Lever.COLLISION, False)
        manager.tick()
        assert manager.counts()["low"] >= 45  # the plunger trees
        sim.spawn("extra_box", box_model("extra_box", 5.0, 0.0, 0.2))
        sim.set_lever(["packet_0001"], Lever.COLLISION, True)
        sim.set_lever(["packet_0001"], Lever.DYNAMICS, True)
        manager.signalers.get("plungers").announce("extend")
        manager.tick()
        _reach_packet(sim, robot)
        assert robot.suction.held_bodies().size == 1
        sim.run_for(3.0)
        assert robot.unloaded == 1  # the belt moved packet_0001 off the rear


def test_conveyor_skips_a_packet_replaced_by_its_static_copy(tmp_path):
    """A client without lever services lowers a packet by a static copy without collisions: the
    conveyor neither carries nor counts it, and takes it up again once the original is back."""
    from sim_fidelity.simulator.ros.client import static_copy
    x = ROBOT_START_X - 0.2
    sim, robot = _world(tmp_path,
                        _packet("packet_0000", x, 0.1, 0.5 + 0.15 + 0.002, (0.3, 0.3, 0.3)))
    original = sim.world.models["packet_0000"].sdf
    pose, _ = sim.get_states(["packet_0000"])
    for strip in (True, False):  # COLLISION lowered, then DYNAMICS only (collisions kept)
        sim.delete("packet_0000")
        sim.spawn("packet_0000", static_copy(original, strip), pose[0])
        sim.run_for(3.0)
        assert robot.unloaded == 0 and robot.conveyor.in_truck.tolist() == [True]
        np.testing.assert_allclose(sim.get_states(["packet_0000"])[0], pose, atol=1e-9)
    sim.delete("packet_0000")
    sim.spawn("packet_0000", original, pose[0])
    sim.run_for(3.0)
    assert robot.unloaded == 1 and robot.conveyor.in_truck.tolist() == [False]
