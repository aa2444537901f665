"""The engine's batch of lever changes (``set_levers``, what the fidelity manager's helpers send
in one tick): the same model parameters and states as the same ``set_lever`` calls one by one,
and a bad name anywhere in the batch changes nothing."""
from __future__ import annotations

import numpy as np
import pytest
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator import Lever
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.errors import UnknownEntityError, UnsupportedLeverError

WORLD = world("batch", GROUND, box_model("a", 0, 0, 0.2), box_model("b", 2, 0, 1.0),
              box_model("c", 4, 0, 0.2), servo_pendulum())
FIELDS = ("geom_contype", "geom_conaffinity", "body_contype", "body_conaffinity",
          "body_gravcomp", "dof_damping", "actuator_gainprm", "actuator_biasprm")
BATCHES = [
    [(["a", "b"], Lever.DYNAMICS, False), (["b", "c"], Lever.COLLISION, False),
     (["c::link"], Lever.GRAVITY, False), (["arm::hinge"], Lever.ACTUATION, False)],
    [(["a"], Lever.DYNAMICS, True), (["b"], Lever.COLLISION, True), (["a"], Lever.COLLISION,
                                                                      False)],
    [(["b"], Lever.DYNAMICS, True), (["b"], Lever.DYNAMICS, False)],  # later wins, b stopped
]


def moving() -> MujocoEngine:
    engine = MujocoEngine.from_string(WORLD, sleep=True)
    engine.set_states(["a", "b", "c"], twists=np.tile([0.3, 0.2, 0.5, 0.1, 0.0, 0.2], (3, 1)))
    return engine


def observed(engine: MujocoEngine) -> list[np.ndarray]:
    return [getattr(engine.model, f).copy() for f in FIELDS] + [engine.data.qvel.copy()] + [
        engine.get_lever(["a", "b", "c"], lever) for lever in (Lever.DYNAMICS, Lever.COLLISION)]


def test_a_batch_equals_its_calls_one_by_one():
    batched, single = moving(), moving()
    for batch in BATCHES:
        batched.step(5)
        single.step(5)
        batched.set_levers(batch)
        for names, lever, enabled in batch:
            single.set_lever(names, lever, enabled)
        for got, want in zip(observed(batched), observed(single)):
            np.testing.assert_array_equal(got, want)
    assert not batched.get_lever(["b"], Lever.DYNAMICS)[0]
    assert not batched.get_states(["b"])[1].any()  # switched off last: stopped


@pytest.mark.parametrize("bad, error", [
    ((["nobody"], Lever.COLLISION, False), UnknownEntityError),
    ((["arm::hinge"], Lever.DYNAMICS, False), UnsupportedLeverError)])
def test_a_bad_change_anywhere_in_the_batch_changes_nothing(bad, error):
    engine = moving()
    before = observed(engine)
    with pytest.raises(error):
        engine.set_levers([(["a"], Lever.DYNAMICS, False), (["b"], Lever.COLLISION, False), bad])
    for got, want in zip(observed(engine), before):
        np.testing.assert_array_equal(got, want)


def test_only_dynamics_switched_off_stops_a_body():
    """A held body given a twist keeps it when a batch switches its COLLISION off: only the
    DYNAMICS lever switched off in the batch stops what it holds."""
    engine = moving()
    engine.set_lever(["a"], Lever.DYNAMICS, False)
    twist = np.array([[0.3, 0.2, 0.5, 0.1, 0.0, 0.2]])
    engine.set_states(["a"], twists=twist)
    engine.set_levers([(["a"], Lever.COLLISION, False), (["c"], Lever.GRAVITY, False)])
    np.testing.assert_array_equal(engine.get_states(["a"])[1], twist)
    engine.set_levers([(["a"], Lever.DYNAMICS, False)])
    assert not engine.get_states(["a"])[1].any()


@pytest.mark.parametrize("lever", [Lever.COLLISION, Lever.DYNAMICS, Lever.GRAVITY])
def test_an_empty_name_list_changes_nothing(lever):
    engine = moving()
    before = observed(engine)
    engine.set_lever([], lever, False)
    engine.set_levers([([], lever, False)])
    for got, want in zip(observed(engine), before):
        np.testing.assert_array_equal(got, want)
