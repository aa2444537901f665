"""The helper bank on a simulator without the in-process ``set_levers`` batch (a ``RosSimulator``
over ROS): one ``set_lever`` per (lever, enabled) pair, with the entities whose lever changes to
that value, ending where the batch path ends; and the managed-tree mask: the bank reads and
writes only the managed trees' objects. The simulator is the real engine seen through a thin
wrapper that has no ``set_levers`` and records the lever calls."""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.fidelity_manager import FidelityConfig, Level
from sim_fidelity.fidelity_manager.helpers import HelperBank
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.protocol import Lever
from sim_fidelity.world_generators.sdf_text import box_model, world

BOXES = [f"box_{i}" for i in range(4)]
CONFIG = {"signalers": {"hand": {"type": "manual"}},
          "trees": {"boxes": {"signaler": "hand", "name": "{key}",
                              "objects": [{"type": "shape", "pattern": r"(box_\d)"}]}},
          "presets": {"on": {}}, "default_preset": "on"}
BODY_LEVERS = (Lever.DYNAMICS, Lever.COLLISION, Lever.GRAVITY)


class WithoutBatch:
    """The engine without its ``set_levers`` attribute; records every ``set_lever`` and
    ``get_lever`` call (names, lever, value) and passes it on."""

    def __init__(self, engine: MujocoEngine):
        self.engine = engine
        self.sets: list[tuple[list[str], Lever, bool]] = []
        self.gets: list[tuple[list[str], Lever]] = []

    def __getattr__(self, name):
        if name == "set_levers":
            raise AttributeError(name)
        return getattr(self.engine, name)

    def set_lever(self, names, lever, enabled):
        self.sets.append((list(names), Lever(lever), enabled))
        self.engine.set_lever(names, lever, enabled)

    def get_lever(self, names, lever, *, original=False):
        self.gets.append((list(names), Lever(lever)))
        return self.engine.get_lever(names, lever, original=original)


class Batching(MujocoEngine):
    """The real engine, recording its ``set_levers`` batches."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.batches: list[list[tuple[list[str], Lever, bool]]] = []

    def set_levers(self, changes):
        changes = [(list(n), Lever(v), bool(on)) for n, v, on in changes]
        self.batches.append(changes)
        super().set_levers(changes)


def _engine(cls=MujocoEngine) -> MujocoEngine:
    sdf = world("boxes", *(box_model(b, 0.5 * i, 0.0, 0.1, 0.2) for i, b in enumerate(BOXES)))
    return cls.from_string(sdf)


def _bank(sim, managed=None) -> HelperBank:
    trees = FidelityConfig.from_dict(CONFIG, "fallback.yaml").build_trees(sim)
    return HelperBank(sim, trees, managed)


def _state(engine: MujocoEngine) -> dict:
    return {lever: engine.get_lever(BOXES, lever).tolist() for lever in BODY_LEVERS}


def _leftovers(engine: MujocoEngine) -> None:
    """What a manager that died would leave behind: box_1 and box_3 not colliding."""
    engine.set_lever(["box_1", "box_3"], Lever.COLLISION, False)


def test_without_set_levers_each_change_is_one_set_lever_and_ends_as_the_batch_does():
    engine, batched = _engine(), _engine(Batching)
    sim = WithoutBatch(engine)
    slow, fast = _bank(sim), _bank(batched)
    assert sim.sets == [] and batched.batches == []  # the world's originals: nothing to revert
    target = np.array([Level.LOW, Level.HIGH, Level.LOW, Level.MEDIUM])
    assert slow.apply(target).tolist() == fast.apply(target).tolist() == [0, 2, 3]
    # one set_lever per (lever, enabled) pair, as the batch's changes, in the same order
    assert sim.sets == batched.batches[0]
    assert all(isinstance(on, bool) for _, _, on in sim.sets)
    # LOW shapes: no dynamics, no collision; MEDIUM: static but colliding
    assert sim.sets == [(["box_0", "box_2", "box_3"], Lever.DYNAMICS, False),
                        (["box_0", "box_2"], Lever.COLLISION, False)]
    assert _state(engine) == _state(batched)
    assert _state(engine)[Lever.DYNAMICS] == [False, True, False, False]
    assert _state(engine)[Lever.COLLISION] == [False, True, False, True]
    sim.sets.clear()
    assert slow.apply(np.full(4, Level.HIGH)).tolist() == [0, 2, 3]
    fast.apply(np.full(4, Level.HIGH))
    assert sim.sets == batched.batches[1] and all(on for _, _, on in sim.sets)
    assert _state(engine) == _state(batched) == _state(_engine())
    sim.sets.clear()
    assert slow.apply(np.full(4, Level.HIGH)).size == 0 and sim.sets == []


def test_the_start_is_written_back_with_set_lever_where_it_differs():
    engine = _engine()
    _leftovers(engine)
    sim = WithoutBatch(engine)
    bank = _bank(sim)
    assert bank.reverted == 2
    assert sim.sets == [(["box_1", "box_3"], Lever.COLLISION, True)]
    assert _state(engine) == _state(_engine())


def test_unmanaged_trees_objects_are_neither_read_nor_written():
    """box_3's tree is not managed (unsupported): its leftover stays, its levers are never read,
    and lowering every tree leaves it alone."""
    engine = _engine()
    _leftovers(engine)
    sim = WithoutBatch(engine)
    bank = _bank(sim, np.array([True, True, True, False]))
    assert bank.reverted == 1
    assert sim.sets == [(["box_1"], Lever.COLLISION, True)]
    assert all("box_3" not in names for names, _ in sim.gets)
    assert engine.get_lever(["box_3"], Lever.COLLISION).tolist() == [False]
    sim.sets.clear()
    bank.apply(np.full(4, Level.LOW))
    assert sim.sets and all(names == BOXES[:3] for names, _, _ in sim.sets)
    assert engine.get_lever(["box_3"], Lever.DYNAMICS).tolist() == [True]
    bank.restore_all()
    assert all("box_3" not in names for names, _ in sim.gets)
    assert bank.mismatches() == []
    assert engine.get_lever(["box_3"], Lever.COLLISION).tolist() == [False]


@pytest.mark.parametrize("managed", [None, np.ones(4, bool)])
def test_every_tree_is_managed_by_default_or_by_an_all_true_mask(managed):
    engine = _engine()
    _leftovers(engine)
    sim = WithoutBatch(engine)
    bank = _bank(sim, managed)
    assert bank.reverted == 2 and bank.mismatches() == []
    assert {n for names, _ in sim.gets for n in names} == set(BOXES)
