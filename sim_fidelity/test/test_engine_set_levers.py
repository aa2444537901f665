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
