"""``get_states`` against MuJoCo's own answer: every pose equals the body's ``xpos``/``xquat`` and
every twist ``mj_objectVelocity`` in the world frame, for free bodies (read from ``qpos``/``qvel``)
and for links of articulated models (read from the kinematics), in flight and spinning. The
incremental reader and ``get_states`` share their formulas, so this is what checks both."""
from __future__ import annotations

import mujoco
import numpy as np
from sdf_snippets import GROUND, box_model, servo_pendulum, world

from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.simulator.state_reader import EngineStateReader


def mujoco_states(sim: MujocoEngine, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Poses ``[p, quat xyzw]`` and world twists ``[v, w]`` of the names' bodies from MuJoCo's
    forward pass of the current state."""
    m, d = sim.model, sim.data
    mujoco.mj_forward(m, d)
    bids = sim.index.state_refs(names).bids
    poses, twists = np.empty((len(names), 7)), np.empty((len(names), 6))
    res = np.empty(6)
    for row, b in enumerate(bids):
        poses[row, :3] = d.xpos[b]
        poses[row, 3:] = d.xquat[b][[1, 2, 3, 0]]
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, int(b), res, 0)
        twists[row] = np.r_[res[3:], res[:3]]  # MuJoCo gives [angular, linear]
    return poses, twists


def test_free_bodies_and_links_match_mujoco_in_flight():
    sim = MujocoEngine.from_string(world("reference", GROUND, box_model("thrown", 0, 0, 2.0),
                                         box_model("resting", 3, 0, 0.2), servo_pendulum()))
    sim.set_states(["thrown"], twists=np.array([[1.0, -0.5, 3.0, 2.0, -4.0, 7.0]]))
    names = ["thrown", "resting", "arm::rod", "arm::post"]  # the rod swings to its servo's target
    refs = sim.index.state_refs(names)
    assert refs.free.tolist() == [0, 1] and refs.other.tolist() == [2, 3]
    reader = EngineStateReader(sim, names)
    for _ in range(3):
        sim.step(37)
        want_poses, want_twists = mujoco_states(sim, names)
        poses, twists = sim.get_states(names)
        np.testing.assert_allclose(poses, want_poses, rtol=0, atol=1e-12)
        np.testing.assert_allclose(twists, want_twists, rtol=0, atol=1e-10)
        read_poses, read_twists, _ = reader.read()
        np.testing.assert_array_equal(read_poses, poses)
        np.testing.assert_array_equal(read_twists, twists)
    assert np.abs(twists[0, 3:]).max() > 1.0 and np.abs(twists[2, 3:]).max() > 0.1  # spinning
