"""The stack scene: managed runs end where the HIGH-only run ends, when the robot cannot reach far.

Each run drives the robot along the same path in the real engine, once with the manager off
(``hifi``) and once managed; the final poses of all boxes are compared.
"""
from __future__ import annotations

import numpy as np
import pytest

from sim_fidelity.fidelity_manager import FidelityManager
from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.world_generators.stack_test import RobotPath, stack_sdf

SDF = stack_sdf(5, 3, 2)  # 30 boxes from x = 1.0 to 2.0
CONFIG = "config/stack_test.yaml"
PASS_BY = RobotPath(start=0.4, turn=0.7, speed=0.4)  # robot face stops 10 cm short of the stack
PUSH = RobotPath(start=0.5, turn=0.83, speed=0.3)  # pushes the middle row 3 cm deep
SETTLE = 0.3  # s after the robot is back


def run(preset: str, path: RobotPath) -> tuple[np.ndarray, dict]:
    """Final box positions and the most trees seen per level during the run."""
    sim = MujocoEngine.from_string(SDF)
    boxes = sim.entities(pattern=r"^box_\d+_\d+_\d+$")
    seen = {"low": 0, "medium": 0, "high": 0}
    with FidelityManager(sim, CONFIG, preset) as manager:
        while sim.time < path.duration + SETTLE:
            path.drive(sim)
            sim.step()
            counts = manager.tick().counts
            seen = {k: max(v, counts[k]) for k, v in seen.items()}
    return sim.get_states(boxes)[0][:, :3], seen


@pytest.fixture(scope="module")
def reference():
    return {"pass_by": run("hifi", PASS_BY)[0], "push": run("hifi", PUSH)[0]}


def test_pass_by_toggles_levels_without_moving_anything(reference):
    final, seen = run("adfi-3", PASS_BY)
    assert seen["low"] == 30 and seen["high"] == 30  # everything was lowered and raised again
    assert np.abs(final - reference["pass_by"]).max() < 5e-4


def test_push_matches_high_only_when_the_pushed_chain_is_inside_the_box(reference):
    start = MujocoEngine.from_string(SDF).get_states(
        [f"box_{i}_1_{k}" for i in range(5) for k in range(2)])[0][:, :3]
    moved = reference["push"][[6 * i + 2 + k for i in range(5) for k in range(2)]] - start
    assert np.all(moved[:, 0] > 0.015)  # the whole middle row slid by about 2 cm in HIGH
    final, seen = run("adfi-1", PUSH)
    assert np.abs(final - reference["push"]).max() < 2e-3
    assert seen["medium"] > 0  # the far column was not at HIGH all the time


def test_push_with_a_tight_box_blocks_the_chain(reference):
    """AdFi-3 (1 cm inflation) holds the far end of the row static: the result shifts
    (paper 5.2)."""
    final, _ = run("adfi-3", PUSH)
    assert np.abs(final - reference["push"]).max() > 4e-3
