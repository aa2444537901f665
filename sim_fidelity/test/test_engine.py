"""The embedded MuJoCo engine: state access, every fidelity lever applied/observed/undone, edits."""
import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import (
    EntityKind,
    InvalidOperationError,
    InvalidPoseError,
    Lever,
    SimState,
    Simulator,
    UnknownEntityError,
)
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import UnsupportedFeatureError


@pytest.fixture
def engine():
    return MujocoEngine.from_string(world(
        "test", GROUND, box_model("resting", 0, 0, 0.2), box_model("floating", 2, 0, 1.0),
        box_model("stack_low", -2, 0, 0.2), box_model("stack_high", -2, 0, 0.6),
        box_model("wall", 5, 0, 0.5, static=True), servo_pendulum()))


def z_of(engine, name):
    return engine.get_states([name])[0][0, 2]


def test_is_a_simulator_and_lists_entities(engine):
    assert isinstance(engine, Simulator)
    models = engine.entities(EntityKind.MODEL)
    assert {"ground", "resting", "floating", "wall", "arm"} <= set(models)
    assert "resting::link" in engine.entities(EntityKind.LINK)
    assert engine.entities(EntityKind.JOINT, pattern="hinge") == ["arm::hinge"]
    assert engine.entity_info("wall").static
    assert engine.entity_info("arm::hinge").type == "revolute"
    with pytest.raises(UnknownEntityError, match="nosuch"):
        engine.entity_info("nosuch")


def test_get_and_set_states_round_trip(engine):
    pose = np.array([[1.0, 2.0, 3.0, 0, 0, np.sin(0.3), np.cos(0.3)]])
    twist = np.array([[0.5, 0, 0, 0, 0, 1.0]])
    engine.set_states(["floating"], pose, twist)
    p, t = engine.get_states(["floating", "floating::link"])
    np.testing.assert_allclose(p[0], pose[0], atol=1e-9)
    np.testing.assert_allclose(t[0], twist[0], atol=1e-9)
    # free flight: after 0.1 s the box moved 5 cm in x and fell g t^2 / 2
    engine.step(100)
    p, _ = engine.get_states(["floating"])
    assert p[0, 0] == pytest.approx(1.05, abs=1e-3)
    assert p[0, 2] == pytest.approx(3.0 - 9.81 * 0.01 / 2, abs=2e-3)


def test_bad_state_requests_raise_typed_errors(engine):
    with pytest.raises(InvalidPoseError):
        engine.set_states(["floating"], np.array([[np.nan, 0, 0, 0, 0, 0, 1]]))
    with pytest.raises(InvalidPoseError):
        engine.set_states(["floating"], np.array([[0, 0, 0, 0, 0, 0, 0]]))
    with pytest.raises(UnknownEntityError):
        engine.get_states(["nosuch"])
    with pytest.raises(InvalidOperationError, match="set the state of its model"):
        engine.set_states(["arm::rod"], np.array([[0, 0, 1, 0, 0, 0, 1.0]]))
    with pytest.raises(InvalidOperationError):
        engine.get_states(["arm::hinge"])


def test_static_model_can_be_moved(engine):
    engine.set_states(["wall"], np.array([[6, 1, 0.5, 0, 0, 0, 1.0]]))
    assert engine.get_states(["wall"])[0][0, :2] == pytest.approx([6, 1])


def test_dynamics_lever_holds_a_body_that_still_collides(engine):
    engine.set_lever(["floating"], Lever.DYNAMICS, False)
    engine.step(500)
    assert z_of(engine, "floating") == pytest.approx(1.0, abs=1e-6)
    # a held body still carries a dynamic one: drop a box onto the held lower box
    engine.set_lever(["stack_low"], Lever.DYNAMICS, False)
    engine.set_states(["stack_low", "stack_high"], np.array([[-2, 0, 1.0, 0, 0, 0, 1.0],
                                                             [-2, 0.05, 1.6, 0, 0, 0, 1.0]]))
    engine.step(1000)
    assert z_of(engine, "stack_low") == pytest.approx(1.0, abs=1e-3)
    assert z_of(engine, "stack_high") == pytest.approx(1.4, abs=5e-3)
    assert not engine.get_lever(["floating", "stack_low"], Lever.DYNAMICS).any()
    engine.set_lever(["floating", "stack_low"], Lever.DYNAMICS, True)
    assert engine.levers_at_originals()
    engine.step(300)
    assert z_of(engine, "floating") < 0.9  # falls again


def test_collision_lever_lets_a_body_fall_through(engine):
    engine.set_lever(["resting"], Lever.COLLISION, False)
    engine.step(600)
    assert z_of(engine, "resting") < -1.0
    engine.set_lever(["resting"], Lever.COLLISION, True)
    assert engine.levers_at_originals()
    assert engine.get_lever(["resting"], Lever.COLLISION).all()


def test_a_low_body_leaves_the_broad_phase_and_returns(engine):
    """Dynamics and collision off clear the body's own masks (MuJoCo's broad phase skips it)."""
    m, body = engine.model, engine.model.body("resting::link").id
    engine.set_lever(["resting"], Lever.DYNAMICS, False)
    assert m.body_contype[body] == 0 and m.body_conaffinity[body] != 0  # held: others hit it
    engine.set_lever(["resting"], Lever.COLLISION, False)
    assert m.body_contype[body] == 0 and m.body_conaffinity[body] == 0
    engine.set_lever(["resting"], Lever.DYNAMICS, True)
    engine.set_lever(["resting"], Lever.COLLISION, True)
    assert m.body_contype[body] != 0 and engine.levers_at_originals()
    engine.set_states(["resting"], np.array([[0, 0, 0.5, 0, 0, 0, 1.0]]))
    engine.step(500)
    assert z_of(engine, "resting") == pytest.approx(0.2, abs=0.01)  # lands on the ground again


def test_gravity_lever_keeps_velocity_constant(engine):
    engine.set_lever(["floating::link"], Lever.GRAVITY, False)
    engine.set_states(["floating"], twists=np.array([[0, 0, 0.1, 0, 0, 0]]))
    engine.step(500)
    _, t = engine.get_states(["floating"])
    assert t[0, 2] == pytest.approx(0.1, abs=1e-6)
    assert z_of(engine, "floating") == pytest.approx(1.05, abs=1e-4)
    engine.set_lever(["floating"], Lever.GRAVITY, True)
    assert engine.levers_at_originals()


def test_dynamics_and_gravity_levers_compose(engine):
    engine.set_lever(["floating"], Lever.GRAVITY, False)
    engine.set_lever(["floating"], Lever.DYNAMICS, False)
    engine.set_lever(["floating"], Lever.DYNAMICS, True)
    # gravity is still off: the box must not fall
    engine.step(300)
    assert z_of(engine, "floating") == pytest.approx(1.0, abs=1e-6)
    engine.set_lever(["floating"], Lever.GRAVITY, True)
    assert engine.levers_at_originals()


def test_actuation_lever_makes_the_joint_limp(engine):
    engine.step(2000)
    held = engine.joint_positions(["arm::hinge"])[0]
    assert held == pytest.approx(0.5, abs=0.02)
    engine.set_lever(["arm::hinge"], Lever.ACTUATION, False)
    engine.step(3000)
    assert abs(engine.joint_positions(["arm::hinge"])[0]) < 0.3  # swung down towards 0
    engine.set_lever(["arm::hinge"], Lever.ACTUATION, True)
    assert engine.levers_at_originals()
    engine.step(3000)
    assert engine.joint_positions(["arm::hinge"])[0] == pytest.approx(0.5, abs=0.02)


def test_script_lever_on_a_controller_plugin_and_sensor_flags(engine):
    plugin = engine.entities(EntityKind.PLUGIN, pattern="JointPositionController")[0]
    engine.set_lever([plugin], Lever.SCRIPT, False)
    assert not engine.script_enabled(plugin)
    assert not engine.get_lever(["arm::hinge"], Lever.ACTUATION)[0]
    engine.set_lever(["arm"], Lever.SCRIPT, True)
    assert engine.levers_at_originals()
    with pytest.raises(InvalidOperationError):
        engine.set_lever(["arm::hinge"], Lever.DYNAMICS, False)


def test_spawn_and_delete_keep_the_rest_of_the_state(engine):
    engine.set_lever(["floating"], Lever.DYNAMICS, False)
    engine.step(200)
    before, _ = engine.get_states(["stack_high", "floating"])
    name = engine.spawn("newbox", "<sdf version='1.9'>" + box_model("ignored", 0, 3, 3) + "</sdf>")
    assert name == "newbox" and "newbox::link" in engine.entities(EntityKind.LINK)
    after, _ = engine.get_states(["stack_high", "floating"])
    np.testing.assert_allclose(after, before, atol=1e-9)
    assert not engine.get_lever(["floating"], Lever.DYNAMICS)[0]  # levers survive the recompile
    engine.step(100)
    assert z_of(engine, "newbox") < 3.0
    engine.delete("newbox")
    assert "newbox" not in engine.entities()
    with pytest.raises(InvalidOperationError):
        engine.delete("arm::rod")


def test_reset_and_states(engine):
    engine.step(300)
    engine.set_sim_state(SimState.STOPPED)
    assert engine.time == 0.0
    assert z_of(engine, "floating") == pytest.approx(1.0)
    assert engine.sim_state() == SimState.STOPPED
    f = engine.features()
    assert f.levers == frozenset(Lever) and f.spawning and f.stepping


def test_divergence_is_undone_counted_and_raised(engine):
    from sim_fidelity.simulator.errors import SimulationDivergedError
    with pytest.raises(InvalidPoseError, match="'floating': twist linear speed is beyond"):
        engine.set_states(["floating"], twists=np.array([[1e30, 0, 0, 0, 0, 0]]))
    engine.step(7)
    for count in (1, 2):  # a state written behind the checks (the model's own data) diverges
        before = engine.get_states(["resting", "floating"])
        engine.data.qvel[engine.index.body_free_dof[engine.index.body_id["floating::link"]]] = 1e30
        with pytest.raises(SimulationDivergedError, match="bad .*'floating::link'.*t = 0.007"):
            engine.step(5)
        assert engine.divergences == count and engine.time == pytest.approx(0.007)
        np.testing.assert_array_equal(engine.get_states(["resting"])[0], before[0][:1])
        engine.set_states(["resting", "floating"], *before)
    engine.step(3)
    assert engine.time == pytest.approx(0.010)


def test_entity_index_is_rebuilt_per_compile(engine):
    before = engine.index
    names = ["resting", "floating"]
    start = engine.get_states(names)[0]  # caches the index arrays of this list
    engine.spawn("extra", "<sdf version='1.9'>" + box_model("extra", 0, -4, 1) + "</sdf>")
    assert engine.index is not before and "extra" not in before.info
    assert engine.entity_info("extra::link").parent == "extra"
    np.testing.assert_allclose(engine.get_states(names)[0], start, atol=1e-12)
    engine.delete("extra")
    assert not engine.has("extra")
    with pytest.raises(UnknownEntityError):
        engine.get_states(["extra"])  # the new index, not the cached arrays of the old one


def test_step_hooks_run_after_every_step_in_order(engine):
    calls = []

    def first(e):
        calls.append(("first", e.time))

    def second(e):
        calls.append(("second", e.time))

    engine.hooks.add(first)
    engine.hooks.add(second)
    engine.hooks.add(first)  # already there: still once per step
    engine.step(2)
    engine.hooks.remove(first)
    engine.step(1)
    assert [c[0] for c in calls] == ["first", "second", "first", "second", "second"]
    assert [c[1] for c in calls] == pytest.approx([0.001, 0.001, 0.002, 0.002, 0.003])


def test_bad_arguments_raise_typed_errors(engine):
    with pytest.raises(UnsupportedFeatureError, match="kinds"):
        engine.entities("shape")
    with pytest.raises(InvalidOperationError, match="regular expression"):
        engine.entities(pattern="([unclosed")
    with pytest.raises(InvalidOperationError, match="PLAYING, PAUSED or STOPPED"):
        engine.set_sim_state(17)
    with pytest.raises(InvalidOperationError, match="not a sensor"):
        engine.sensor_enabled("resting")
    with pytest.raises(InvalidPoseError, match=r"\(2, 7\)"):
        engine.set_states(["resting", "floating"], np.zeros(7))
