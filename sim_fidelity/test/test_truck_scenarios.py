"""Truck scenarios: packet counts, determinism, no initial overlap, and settled world files."""
from __future__ import annotations

import re

import numpy as np
import pytest

from sim_fidelity.simulator.engine import MujocoEngine
from sim_fidelity.truck.robot import world_path
from sim_fidelity.world_generators.errors import WorldGenerationError
from sim_fidelity.world_generators.truck import (
    SCENARIOS,
    TRAILER_HEIGHT,
    TRAILER_LENGTH,
    TRAILER_WIDTH,
    layout,
    packet_names,
)

COUNTS = {"A": 491, "B": 1007, "C": 539}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_layout_counts_fit_and_do_not_overlap(scenario):
    lay = layout(scenario, seed=0)
    assert len(lay) == COUNTS[scenario]
    lo, hi = lay.aabbs()
    assert lo[:, 0].min() > 0 and hi[:, 0].max() < TRAILER_LENGTH
    assert np.abs(np.concatenate([lo[:, 1], hi[:, 1]])).max() < TRAILER_WIDTH / 2
    assert lo[:, 2].min() >= 0 and hi[:, 2].max() < TRAILER_HEIGHT
    overlap = ((lo[:, None] < hi[None] - 1e-9) & (hi[:, None] > lo[None] + 1e-9)).all(axis=2)
    np.fill_diagonal(overlap, False)
    assert not overlap.any()
    assert (lay.masses >= 0.3).all() and (lay.masses <= 30).all()


def test_layout_is_deterministic_per_seed():
    a, b, c = layout("C", 3), layout("C", 3), layout("C", 4)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.masses, b.masses)
    assert not np.array_equal(a.centres, c.centres)


def test_unknown_scenario_is_named():
    with pytest.raises(WorldGenerationError, match="'D'"):
        layout("D")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_world_files_hold_the_scenario(scenario):
    text = world_path(scenario).read_text()
    assert len(re.findall(r'<model name="packet_\d{4}">', text)) == COUNTS[scenario]
    assert "model://unloader" in text


@pytest.mark.parametrize("scenario", ["A", "C"])  # a wall, and the messy pile
def test_world_starts_settled(scenario):
    sim = MujocoEngine.from_file(world_path(scenario))
    names = packet_names(COUNTS[scenario])
    mujoco_dist = sim.data.contact.dist[:sim.data.ncon]
    assert mujoco_dist.min() > -0.005  # resting contacts only: nothing starts interpenetrated
    start = sim.get_states(names)[0]
    sim.run_for(1.0)
    pose, twist = sim.get_states(names)
    assert np.linalg.norm(twist[:, :3], axis=1).max() < 0.05
    assert np.linalg.norm(pose[:, :3] - start[:, :3], axis=1).max() < 0.02
