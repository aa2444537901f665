"""Paper 002's worlds: each loads with its stated body and joint counts, the generators are
deterministic and the checked-in files are their output, and each world simulates sanely."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_fidelity.simulator import EntityKind
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators import drop_test, joint_tree, pr2
from sim_fidelity.world_generators.errors import WorldGenerationError

REPO = Path(__file__).resolve().parents[1]
WORLDS = REPO / "worlds"


def _counts(engine: MujocoEngine) -> tuple[int, int, int]:
    """Dynamic (non-static) links, joints and top-level non-static models."""
    links = [n for n in engine.entities(EntityKind.LINK) if not engine.entity_info(n).static]
    models = [n for n in engine.entities(EntityKind.MODEL)
              if not engine.entity_info(n).static and not engine.entity_info(n).parent]
    return len(links), len(engine.entities(EntityKind.JOINT)), len(models)


@pytest.mark.parametrize("world, links, joints, models", [
    ("revolute_joint_test", 24, 16, 8),
    ("pr2", 48, 47, 1),
    ("dual_pr2", 96, 94, 2),
    ("drop_test", 100, 0, 100),
    ("joint_tree_7x4", 7 * 15, 7 * 15, 7),
    ("joint_tree_1x4", 15, 15, 1),
])
def test_world_counts(world, links, joints, models):
    engine = MujocoEngine.from_file(WORLDS / f"{world}.sdf")
    assert _counts(engine) == (links, joints, models)
    assert engine.step_size == 0.001


def test_pr2_files_are_the_generator_output(tmp_path):
    written = pr2.write(tmp_path / "models", tmp_path / "worlds")
    for path in written:
        rel = path.relative_to(tmp_path)
        assert (REPO / rel).read_text() == path.read_text(), rel
    assert (REPO / "models" / "pr2" / "README.md").is_file()


def test_pr2_joint_types_and_limits():
    engine = MujocoEngine.from_file(WORLDS / "pr2.sdf")
    types = [engine.entity_info(j).type for j in engine.entities(EntityKind.JOINT)]
    assert (types.count("revolute"), types.count("continuous"), types.count("prismatic")) == \
        (21, 23, 3)
    lo, hi = engine.model.joint("pr2::l_shoulder_lift_joint").range
    assert (lo, hi) == pytest.approx((-0.523601, 1.3963))
    assert engine.model.body("pr2::torso_lift_link").mass[0] == pytest.approx(36.449)


def test_pr2_stands_on_its_wheels_and_arms_fall_to_their_limits():
    engine = MujocoEngine.from_file(WORLDS / "pr2.sdf")
    engine.step(1500)
    assert engine.divergences == 0
    pose, twist = engine.get_states(["pr2"])
    assert abs(pose[0, 2]) < 0.01  # the base stays on the ground (wheels touching it)
    assert abs(pose[0, 3]) < 0.01 and abs(pose[0, 4]) < 0.01  # upright
    lift = engine.joint_positions(["pr2::l_shoulder_lift_joint", "pr2::r_shoulder_lift_joint"])
    assert np.all(lift > 1.2)  # fell down onto the upper limit (1.3963 rad)


def test_dual_pr2_robots_never_interact():
    engine = MujocoEngine.from_file(WORLDS / "dual_pr2.sdf")
    engine.step(500)
    m, d = engine.model, engine.data
    bodies = [m.geom_bodyid[d.contact.geom[:d.ncon]]]
    ground = m.body("ground_plane::link").id
    assert np.all((bodies[0] == ground).any(axis=1))  # every contact is with the ground
    assert d.nisland == 2


def test_joint_tree_generator_is_deterministic_and_checked_in():
    assert joint_tree.generate(3, 3) == joint_tree.generate(3, 3)
    assert joint_tree.generate(3, 3) != joint_tree.generate(3, 4)
    for t, lay in ((7, 4), (1, 4)):
        assert (WORLDS / f"joint_tree_{t}x{lay}.sdf").read_text() == joint_tree.generate(t, lay)
    assert joint_tree.link_count(5) == 31
    with pytest.raises(WorldGenerationError, match="layers"):
        joint_tree.generate(2, 0)


def test_joint_trees_swing_without_touching():
    engine = MujocoEngine.from_file(WORLDS / "joint_tree_7x4.sdf")
    engine.step(800)
    assert engine.divergences == 0 and engine.data.ncon == 0
    speeds = np.abs(engine.data.qvel).max()
    assert speeds > 0.1  # they move
    trees = [engine.model.body(n).id for n in engine.entities(EntityKind.LINK, "^tree_")]
    assert engine.data.xpos[trees, 2].min() > 0.0  # never near the ground


@pytest.mark.parametrize("n", [10, 1000])
def test_drop_test_n_is_a_parameter(n):
    text = drop_test.generate(n, seed=3)
    assert text.count("<model name=\"sphere_") == n
    assert text == drop_test.generate(n, seed=3)
