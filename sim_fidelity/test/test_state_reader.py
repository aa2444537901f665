"""The incremental state read of the fidelity manager: what it returns equals ``get_states``
after steps, a teleport of a sleeping body, a reset and a spawn, and rows whose state did not
change (asleep) are not read again."""
from __future__ import annotations

import numpy as np

from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.state_reader import EngineStateReader, state_reader
from sim_fidelity.world_generators.sdf_text import box_model
from sim_fidelity.world_generators.stack_test import stack_sdf

NAMES = ["ground_plane", "box_0_0_0", "box_1_0_0", "box_2_0_0"]  # static (kinematics), 3 free


def read_equals_get_states(reader, sim) -> set[int]:
    """The rows the reader read again; asserts its poses and twists equal ``get_states``."""
    poses, twists, rows = reader.read()
    want_poses, want_twists = sim.get_states(reader.names)
    np.testing.assert_array_equal(poses, want_poses)
    np.testing.assert_array_equal(twists, want_twists)
    return set(rows.tolist())


def test_the_read_equals_get_states_and_skips_sleeping_rows():
    sim = MujocoEngine.from_string(stack_sdf(3, 1, 1), sleep=True)
    reader = state_reader(sim, NAMES)
    assert isinstance(reader, EngineStateReader)
    assert read_equals_get_states(reader, sim) == {0, 1, 2, 3}
    sim.step(500)  # the boxes settle and fall asleep
    assert read_equals_get_states(reader, sim) == {0, 1, 2, 3}
    assert sim.data.ntree_awake == 0
    sim.step(100)
    assert read_equals_get_states(reader, sim) == {0}  # the static model only: read every time
    pose = sim.get_states(["box_1_0_0"])[0]
    pose[0, 2] += 1.0
    sim.set_states(["box_1_0_0"], poses=pose)  # a teleport with no twist does not wake it
    assert read_equals_get_states(reader, sim) == {0, 2}
    sim.set_states(["box_2_0_0"], twists=np.array([[0.0, 0.0, 0.5, 0.0, 0.0, 0.0]]))
    assert read_equals_get_states(reader, sim) == {0, 3}
    sim.step(50)
    read_equals_get_states(reader, sim)
    sim.reset()
    read_equals_get_states(reader, sim)
    sim.spawn("box_9", box_model("box_9", 3.0, 0.0, 1.0, 0.2))  # recompiled: addresses move
    assert read_equals_get_states(reader, sim) == {0, 1, 2, 3}
    sim.step(20)
    read_equals_get_states(reader, sim)
