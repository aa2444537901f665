"""Every mutation of the embedded engine completes or leaves it exactly as it was (issue 20,
point 1): the reported corruption, then a hypothesis state machine that drives random sequences
of valid and invalid spawns, deletes, lever changes, state sets, steps and resets against
MujocoEngine and the island-parallel engine, and checks the engine after every one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_cases import BAD_MODELS, assert_consistent, sdf
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import EntityKind, Lever, SimulatorError
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.parallel import IslandParallelEngine

WORLDS = Path(__file__).resolve().parents[1] / "worlds"
WORLD = world("transactions", GROUND, box_model("resting", 0, 0, 0.2),
              box_model("floating", 2, 0, 1.0), box_model("wall", 5, 0, 0.5, static=True),
              servo_pendulum())


def fingerprint(engine: MujocoEngine) -> dict:
    """Everything a mutation may change, as plain values."""
    models = engine.entities(EntityKind.MODEL)
    links = engine.entities(EntityKind.LINK)
    m, d = engine.model, engine.data
    return {
        "entities": engine.entities(),
        "records": {t: sorted(getattr(engine.world, t)) for t in
                    ("models", "links", "joints", "sensors", "plugins")},
        "bodies": [m.body(i).name for i in range(m.nbody)],
        "spec_bodies": len(engine.world.spec.bodies),
        "time": engine.time,
        "qpos": d.qpos.copy(), "qvel": d.qvel.copy(), "ctrl": d.ctrl.copy(),
        "body_pos": m.body_pos.copy(),
        "levers": {lever: engine.get_lever(models + links, lever).tolist()
                   for lever in (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY)},
        "params": (m.geom_contype.copy(), m.body_gravcomp.copy(), m.dof_damping.copy(),
                   m.actuator_gainprm.copy()),
    }


def assert_same(now: dict, then: dict) -> None:
    for key, value in then.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(now[key], value, err_msg=key)
        elif isinstance(value, tuple):
            for a, b in zip(now[key], value):
                np.testing.assert_array_equal(a, b, err_msg=key)
        else:
            assert now[key] == value, key


# ---------------------------------------------------------------------- the reported corruption
def test_a_rejected_spawn_leaves_drop_test_able_to_spawn_delete_and_reset():
    engine = MujocoEngine.from_file(WORLDS / "drop_test.sdf")
    engine.step(20)
    before = fingerprint(engine)
    with pytest.raises(SimulatorError, match="radius"):
        engine.spawn("", BAD_MODELS["zero sphere"])
    assert_same(fingerprint(engine), before)
    assert engine.spawn("", sdf(box_model("box1", 0, -3, 1))) == "box1"
    assert_consistent(engine)
    engine.delete("box1")
    engine.reset()
    assert engine.time == 0.0
    assert_consistent(engine)


@pytest.mark.parametrize("bad", ["zero sphere", "missing mesh", "joint loop"])
def test_the_loader_keeps_no_record_of_a_model_it_refused(bad):
    from sim_fidelity.simulator.sdf import add_models, load_world_string
    loaded = load_world_string(WORLD)
    tables = ("models", "links", "joints", "sensors", "plugins")
    before = {t: sorted(getattr(loaded, t)) for t in tables}
    bodies = len(loaded.spec.bodies)
    with pytest.raises(SimulatorError):
        add_models(loaded, BAD_MODELS[bad], name="refused")
    assert {t: sorted(getattr(loaded, t)) for t in tables} == before
    assert len(loaded.spec.bodies) == bodies


@pytest.mark.parametrize("bad", sorted(BAD_MODELS))
def test_every_refused_spawn_leaves_no_trace(bad):
    engine = MujocoEngine.from_string(WORLD)
    engine.set_lever(["floating"], Lever.GRAVITY, False)
    engine.step(10)
    before = fingerprint(engine)
    with pytest.raises(SimulatorError):
        engine.spawn("", BAD_MODELS[bad])
    assert_same(fingerprint(engine), before)
    assert_consistent(engine)
    assert engine.spawn("after", sdf(box_model("x", 0, -3, 1))) == "after"
    engine.step(5)
    engine.delete("after")
    assert_consistent(engine)


def test_a_failure_late_in_a_delete_restores_the_model(monkeypatch):
    engine = MujocoEngine.from_string(WORLD)
    engine.step(10)
    before = fingerprint(engine)

    def broken():
        raise RuntimeError("index gone")
    monkeypatch.setattr(engine, "_reindex", broken)  # after the spec compiled without the model
    with pytest.raises(RuntimeError, match="index gone"):
        engine.delete("floating")
    monkeypatch.undo()
    assert_same(fingerprint(engine), before)
    assert_consistent(engine)
    engine.delete("floating")
    assert "floating" not in engine.entities()


def test_bad_batches_change_nothing():
    engine = MujocoEngine.from_string(WORLD)
    engine.step(10)
    before = fingerprint(engine)
    good = np.array([0, 0, 1, 0, 0, 0, 1.0])
    for names, poses, twists in (
            (["resting", "resting"], [good, good], None),  # a name twice
            (["resting", "nosuch"], [good, good], None),
            (["resting", "arm::hinge"], [good, good], None),
            (["resting", "floating"], [good, [0, 0, 1e300, 0, 0, 0, 1]], None),
            (["resting", "floating"], [good, [0, 0, 1, 0, 0, 0, 0]], None),
            (["resting", "floating"], None, [[0] * 6, [1e12, 0, 0, 0, 0, 0]]),
            (["resting", "floating"], None, [[0] * 6, [0, 0, 0, np.nan, 0, 0]])):
        with pytest.raises(SimulatorError):
            engine.set_states(names, poses=poses, twists=twists)
        assert_same(fingerprint(engine), before)
    for names, lever in ((["resting", "nosuch"], Lever.COLLISION),
                         (["resting", "arm::hinge"], Lever.GRAVITY), (["resting"], 99)):
        with pytest.raises(SimulatorError):
            engine.set_lever(names, lever, False)
        assert_same(fingerprint(engine), before)


def test_reset_restores_every_lever_to_the_original():
    engine = MujocoEngine.from_string(WORLD)
    for lever, target in ((Lever.DYNAMICS, "floating"), (Lever.COLLISION, "resting"),
                          (Lever.ACTUATION, "arm::hinge"), (Lever.SCRIPT, "arm")):
        engine.set_lever([target], lever, False)
        assert engine.get_lever([target], lever).tolist() == [False]
        assert engine.get_lever([target], lever, original=True).tolist() == [True]
    assert not engine.levers_at_originals()
    engine.reset()
    assert engine.levers_at_originals()
    with pytest.raises(SimulatorError):
        engine.get_lever(["arm::hinge"], Lever.COLLISION, original=True)


@pytest.mark.parametrize("engine_class", [MujocoEngine, IslandParallelEngine])
def test_a_divergence_is_undone_counted_and_raised_by_both_engines(engine_class):
    from sim_fidelity.simulator.errors import SimulationDivergedError
    kwargs = {"threads": 2} if engine_class is IslandParallelEngine else {}
    engine = engine_class.from_string(WORLD, **kwargs)
    try:
        engine.step(7)
        before = engine.get_states(["resting", "floating"])
        for count in (1, 2):  # written behind the checks: the model's own data
            dof = engine.index.body_free_dof[engine.index.body_id["floating::link"]]
            engine.data.qvel[dof] = 1e30
            with pytest.raises(SimulationDivergedError, match="'floating::link'"):
                engine.step(5)
            assert engine.divergences == count and engine.time == pytest.approx(0.007)
            np.testing.assert_array_equal(engine.get_states(["resting"])[0], before[0][:1])
            engine.set_states(["resting", "floating"], *before)
        engine.step(3)
        assert engine.time == pytest.approx(0.010) and engine.divergences == 2
    finally:
        if isinstance(engine, IslandParallelEngine):
            engine.close()


# ---------------------------------------------------------------------- random sequences
NAMES = ["resting", "floating", "wall", "arm", "arm::hinge", "arm::rod", "s1", "s2", "nosuch"]
FINITE = st.floats(-3, 3, allow_nan=False)
WILD = st.one_of(FINITE, st.sampled_from([np.nan, np.inf, -np.inf, 1e300, 1e12]))


class EngineMachine(RuleBasedStateMachine):
    """Random valid and invalid operations; a refused one must change nothing."""

    engine_class: type[MujocoEngine] = MujocoEngine

    @initialize()
    def load(self) -> None:
        kwargs = {"threads": 2} if self.engine_class is IslandParallelEngine else {}
        self.engine = self.engine_class.from_string(WORLD, **kwargs)

    def teardown(self) -> None:
        if isinstance(getattr(self, "engine", None), IslandParallelEngine):
            self.engine.close()

    def attempt(self, operation) -> None:
        """Run ``operation``; when it raises, the engine must be exactly as before."""
        before = fingerprint(self.engine)
        try:
            operation()
        except SimulatorError:
            assert_same(fingerprint(self.engine), before)

    @rule(name=st.sampled_from(["s1", "s2", "resting", ""]), bad=st.sampled_from([None]
                                                                             + sorted(BAD_MODELS)),
          z=st.sampled_from([1.0, np.nan, 1e300]))
    def spawn(self, name, bad, z) -> None:
        text = BAD_MODELS[bad] if bad else sdf(box_model("box", 0, -3, 1))
        self.attempt(lambda: self.engine.spawn(name, text, np.array([0, -3, z, 0, 0, 0, 1])))

    @rule(name=st.sampled_from(NAMES))
    def delete(self, name) -> None:
        self.attempt(lambda: self.engine.delete(name))

    @rule(names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3),
          lever=st.sampled_from([*Lever, 99]), enabled=st.booleans())
    def set_lever(self, names, lever, enabled) -> None:
        self.attempt(lambda: self.engine.set_lever(names, lever, enabled))

    @rule(names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), data=st.data())
    def set_states(self, names, data) -> None:
        n = len(names)
        poses = np.array(data.draw(st.lists(st.tuples(FINITE, FINITE, WILD, WILD, WILD, WILD,
                                                      st.just(1.0)), min_size=n, max_size=n)))
        twists = np.array(data.draw(st.lists(st.tuples(*[WILD] * 6), min_size=n, max_size=n)))
        self.attempt(lambda: self.engine.set_states(names, poses=poses, twists=twists))

    @rule(n=st.integers(1, 20))
    def step(self, n) -> None:
        self.attempt(lambda: self.engine.step(n))

    @rule()
    def reset(self) -> None:
        self.engine.reset()
        assert self.engine.time == 0.0 and self.engine.levers_at_originals()

    @invariant()
    def consistent(self) -> None:
        if hasattr(self, "engine"):
            assert_consistent(self.engine)


class ParallelMachine(EngineMachine):
    engine_class = IslandParallelEngine


BOUNDED = settings(max_examples=12, stateful_step_count=10, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck))
TestEngineTransactions = EngineMachine.TestCase
TestEngineTransactions.settings = BOUNDED
TestParallelEngineTransactions = ParallelMachine.TestCase
TestParallelEngineTransactions.settings = settings(BOUNDED, max_examples=6)
