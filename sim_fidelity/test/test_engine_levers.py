"""Engine levers beyond the basics of test_engine.py: ACTUATION off leaves no force at all,
every lever survives a recompile, and a lever change wakes a sleeping island."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import EntityKind, Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.levers import CARRIED_BIT, HOLD_FACTOR

SENSED = box_model("sensed", 3, 0, 0.2).replace(
    "</link>", "<sensor name='imu' type='imu'><update_rate>100</update_rate></sensor></link>")
WORLD = world("levers", GROUND, box_model("resting", 0, 0, 0.2), box_model("floating", 2, 0, 1.0),
              SENSED, servo_pendulum(),
              servo_pendulum("arm2").replace("<pose>0 3 2", "<pose>0 6 2"))
NEW_BOX = "<sdf version='1.9'>" + box_model("newbox", 0, -3, 0.2) + "</sdf>"


@pytest.fixture
def engine() -> MujocoEngine:
    return MujocoEngine.from_string(WORLD)


def hinge(engine: MujocoEngine) -> tuple[int, int]:
    """(actuator id, dof address) of the servo pendulum's hinge."""
    m = engine.model
    joint = m.joint("arm::hinge").id
    (actuator,) = np.flatnonzero(m.actuator_trnid[:, 0] == joint)
    return int(actuator), int(m.jnt_dofadr[joint])


def test_actuation_off_applies_no_force_gain_nor_bias(engine):
    """The servo holds 0.5 rad; off, its position actuator (force = gain * ctrl + bias, the bias
    being -kp q - kd qdot) must add nothing while the rod swings through positions and speeds."""
    actuator, dof = hinge(engine)
    engine.step(1000)
    assert abs(engine.data.qfrc_actuator[dof]) > 1.0  # holding the rod against gravity
    engine.set_lever(["arm::hinge"], Lever.ACTUATION, False)
    swing = []
    for _ in range(100):
        engine.step(10)
        swing.append(engine.joint_positions(["arm::hinge"])[0])
        assert engine.data.actuator_force[actuator] == 0.0, engine.data.actuator_force
        assert engine.data.qfrc_actuator[dof] == 0.0
    assert min(swing) < 0.0 < 0.4 < max(swing)  # it swings freely through the bottom
    engine.set_lever(["arm::hinge"], Lever.ACTUATION, True)
    engine.step(1)
    assert engine.data.actuator_force[actuator] != 0.0 and engine.levers_at_originals()


def _plugin(engine: MujocoEngine) -> str:
    (plugin,) = engine.entities(EntityKind.PLUGIN, pattern="arm::.*JointPositionController")
    return plugin


def _held(engine: MujocoEngine, body: str) -> bool:
    """Held as levers.py says: damping HOLD_FACTOR * inertia / step on every DoF, gravity
    compensated."""
    m = engine.model
    dofs = np.flatnonzero(m.dof_bodyid == m.body(body).id)
    hold = HOLD_FACTOR * m.dof_M0[dofs] / m.opt.timestep
    return bool(dofs.size) and bool(np.allclose(m.dof_damping[dofs], hold, rtol=1e-12)
                                    and m.body_gravcomp[m.body(body).id] == 1.0)


def _no_contact(engine: MujocoEngine, body: str) -> bool:
    m = engine.model
    geoms = np.flatnonzero(m.geom_bodyid == m.body(body).id)
    return bool(geoms.size) and not m.geom_contype[geoms].any() \
        and not m.geom_conaffinity[geoms].any()


def _weightless(engine: MujocoEngine, body: str) -> bool:
    return engine.model.body_gravcomp[engine.model.body(body).id] == 1.0


def _limp(engine: MujocoEngine) -> bool:
    actuator, _ = hinge(engine)
    m = engine.model
    return not m.actuator_gainprm[actuator].any() and not m.actuator_biasprm[actuator].any()


# lever, entity switched, what the model shows while it is off
LEVERS = {
    Lever.DYNAMICS: ("floating", lambda e: _held(e, "floating::link")),
    Lever.COLLISION: ("resting", lambda e: _no_contact(e, "resting::link")),
    Lever.GRAVITY: ("floating::link", lambda e: _weightless(e, "floating::link")),
    Lever.ACTUATION: ("arm::hinge", _limp),
    Lever.SENSOR: ("sensed::link::imu", lambda e: not e.sensor_enabled("sensed::link::imu")),
    Lever.SCRIPT: (None, lambda e: not e.script_enabled(_plugin(e)) and _limp(e)),
}


@pytest.mark.parametrize("lever", list(Lever), ids=[lever.name for lever in Lever])
def test_every_lever_survives_a_recompile(engine, lever):
    entity, shows_off = LEVERS[lever]
    entity = entity or _plugin(engine)
    assert not shows_off(engine)
    engine.set_lever([entity], lever, False)
    assert shows_off(engine) and not engine.levers_at_originals()
    model = engine.model
    engine.spawn("newbox", NEW_BOX)  # compiles a new model
    assert engine.model is not model
    assert not engine.get_lever([entity], lever)[0] and shows_off(engine), "lost by the spawn"
    engine.delete("newbox")  # and again
    assert not engine.get_lever([entity], lever)[0] and shows_off(engine), "lost by the delete"
    engine.set_lever([entity], lever, True)
    assert not shows_off(engine) and engine.levers_at_originals()


def test_levers_of_the_new_model_start_on(engine):
    engine.set_lever(["resting"], Lever.COLLISION, False)
    engine.spawn("newbox", NEW_BOX)
    assert engine.get_lever(["newbox", "resting"], Lever.COLLISION).tolist() == [True, False]


# ---------------------------------------------------------------------- sleeping islands
def asleep_engine() -> MujocoEngine:
    engine = MujocoEngine.from_string(WORLD, sleep=True, sleep_tolerance=0.01)
    for _ in range(20):  # the boxes come to rest within a second or two of sim time
        engine.step(250)
        if is_asleep(engine, "resting") and is_asleep(engine, "floating"):
            return engine
    pytest.fail(f"the resting boxes never fell asleep: tree_asleep {engine.data.tree_asleep}")


def tree_of(engine: MujocoEngine, model: str) -> int:
    return int(engine.model.body_treeid[engine.model.body(f"{model}::link").id])


def is_asleep(engine: MujocoEngine, model: str) -> bool:
    return engine.data.tree_asleep[tree_of(engine, model)] >= 0


@pytest.mark.parametrize("lever, entity", [(Lever.COLLISION, "resting"),
                                           (Lever.DYNAMICS, "resting"),
                                           (Lever.GRAVITY, "resting::link")],
                         ids=["COLLISION", "DYNAMICS", "GRAVITY"])
def test_a_lever_change_wakes_a_sleeping_island(lever, entity):
    engine = asleep_engine()
    engine.set_lever([entity], lever, False)
    engine.step(1)
    assert not is_asleep(engine, "resting"), f"{lever.name} off left the island asleep"
    assert is_asleep(engine, "floating")  # the untouched island sleeps on


def test_a_sleeping_box_falls_through_once_collision_is_off():
    engine = asleep_engine()
    z0 = engine.get_states(["resting"])[0][0, 2]
    engine.set_lever(["resting"], Lever.COLLISION, False)
    engine.step(500)
    assert engine.get_states(["resting"])[0][0, 2] < z0 - 0.5


def test_actuation_off_touches_only_the_joints_named(engine):
    other = engine.model.actuator_gainprm.copy(), engine.model.actuator_biasprm.copy()
    actuator, _ = hinge(engine)
    engine.set_lever(["arm::hinge"], Lever.ACTUATION, False)
    rest = np.arange(engine.model.nu) != actuator
    assert rest.sum() == 1  # arm2's servo
    np.testing.assert_array_equal(engine.model.actuator_gainprm[rest], other[0][rest])
    np.testing.assert_array_equal(engine.model.actuator_biasprm[rest], other[1][rest])
    assert engine.get_lever(["arm::hinge", "arm2::hinge"], Lever.ACTUATION).tolist() == [False,
                                                                                        True]


def test_only_dynamics_off_stops_a_moving_body_and_only_that_body(engine):
    twist = np.array([[0.3, 0.2, 0.5, 0.1, 0.0, 0.2]])
    engine.set_states(["floating"], twists=twist)
    engine.set_states(["resting"], twists=twist)
    for lever, entity in ((Lever.COLLISION, "floating"), (Lever.GRAVITY, "floating::link")):
        engine.set_lever([entity], lever, False)
        np.testing.assert_array_equal(engine.get_states(["floating"])[1], twist)
    engine.set_lever(["floating"], Lever.DYNAMICS, False)
    np.testing.assert_array_equal(engine.get_states(["floating"])[1], 0.0)
    np.testing.assert_array_equal(engine.get_states(["resting"])[1], twist)  # untouched
    engine.set_lever(["floating"], Lever.DYNAMICS, True)  # back on: nothing is set moving
    np.testing.assert_array_equal(engine.get_states(["floating"])[1], 0.0)


def test_a_carried_body_meets_all_but_conaffinity_0_and_is_no_lever_change(engine):
    m = engine.model
    body = m.body("floating::link").id
    geoms = np.flatnonzero(m.geom_bodyid == body)
    contype, conaffinity = m.geom_contype[geoms].copy(), m.geom_conaffinity[geoms].copy()
    engine.set_carried([body], True)
    np.testing.assert_array_equal(m.geom_contype[geoms], contype | CARRIED_BIT)
    np.testing.assert_array_equal(m.geom_conaffinity[geoms], CARRIED_BIT)
    assert m.body_contype[body] == contype[0] | CARRIED_BIT
    assert m.body_conaffinity[body] == CARRIED_BIT
    assert engine.levers_at_originals()  # the gripper's business, not a lever left changed
    engine.set_lever(["floating"], Lever.COLLISION, False)  # collision off wins over carried
    assert not m.geom_contype[geoms].any() and not m.geom_conaffinity[geoms].any()
    engine.set_lever(["floating"], Lever.COLLISION, True)
    engine.set_carried([body], False)
    np.testing.assert_array_equal(m.geom_contype[geoms], contype)
    np.testing.assert_array_equal(m.geom_conaffinity[geoms], conaffinity)
    assert engine.levers_at_originals()


def test_lever_calls_over_a_mix_of_one_and_many_body_entities_match_one_name_at_a_time(engine):
    """A batch of names answers as each name alone would, whether each has one body (the fast
    look-up) or a model of several sits among them; a name at fault is named, nothing changed."""
    names = ["resting", "arm", "floating::link", "arm::rod", "sensed"]
    engine.set_lever(["arm::post", "floating"], Lever.DYNAMICS, False)
    alone = [bool(engine.get_lever([n], Lever.DYNAMICS)[0]) for n in names]
    assert alone == [True, False, False, True, True]  # the arm is off where one link is
    assert engine.get_lever(names, Lever.DYNAMICS).tolist() == alone
    assert engine.get_lever(names[2:], Lever.DYNAMICS).tolist() == alone[2:]
    before = engine.model.geom_contype.copy()
    with pytest.raises(Exception, match="'arm::hinge'"):
        engine.set_levers([(["resting", "floating"], Lever.COLLISION, False),
                           (["sensed", "arm::hinge"], Lever.COLLISION, False)])
    with pytest.raises(Exception, match="'nowhere'"):
        engine.set_lever(["resting", "nowhere"], Lever.COLLISION, False)
    assert np.array_equal(engine.model.geom_contype, before)
    assert engine.get_lever(["resting", "floating", "sensed"], Lever.COLLISION).all()
