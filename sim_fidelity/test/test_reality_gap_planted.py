"""The planted-gap generator and the precision/recall measure (reality_gap/planted.py), small:
real bags through write_run / read_histories, real kernel generation, asserted bounds."""
from __future__ import annotations

import json

import numpy as np
import pytest

from sim_fidelity.reality_gap.planted import Case, case_spec, drive, gap_size, run_case, step


def test_the_gap_is_where_the_deployment_moves_differently():
    spec = case_spec(1)
    x = np.array([[2.0], [3.7], [5.0], [6.3], [8.0]])
    slow = gap_size(Case(1, "slow", 0.0, 400), x, spec)
    assert slow[0] < 1e-9 and slow[-1] < 1e-9  # far from [4, 6] (rounding only)
    assert slow[2] == pytest.approx(2 / 3 * 0.5)  # inside at full command: 1/3 of 0.5 m
    assert 0 < slow[1] < slow[2] and 0 < slow[3] < slow[2]  # steps that reach into the region
    stuck = gap_size(Case(1, "stuck", 0.0, 400), x, spec)
    np.testing.assert_allclose(stuck, [0, 0, 0.5, 0, 0])  # only steps that start inside
    assert not gap_size(Case(1, "none", 0.0, 400), x, spec).any()
    drift = step(Case(2, "drift", 0.0, 400), np.array([[5.0, 5.0]]), np.zeros((1, 2)), True)
    np.testing.assert_allclose(drift, [[5.0 + 0.4 * 0.5, 5.0]])  # pushed along +x


def test_sides_differ_only_in_the_region():
    case = Case(1, "slow", 0.0, 800, seed=4)
    sim, _ = drive(case, False, np.random.default_rng(1))
    real, _ = drive(case, True, np.random.default_rng(1))
    steps = np.diff(real[..., 0], axis=1)
    sim_steps = np.diff(sim[..., 0], axis=1)
    outside = (real[:, :-1, 0] < 3.4) | (real[:, :-1, 0] > 6.6)
    assert np.abs(steps[outside]).max() <= 0.5 + 1e-9 and np.abs(sim_steps).max() <= 0.5 + 1e-9
    inside = (real[:, :-1, 0] > 4.5) & (real[:, :-1, 0] < 5.5)  # a step cannot leave
    assert inside.sum() > 50 and np.abs(steps[inside]).max() <= 0.5 / 3 + 1e-9  # 1/3 speed


@pytest.mark.parametrize("shape", ["slow", "stuck"])
def test_kernels_find_the_planted_gap_and_only_it(tmp_path, shape):
    score = run_case(Case(1, shape, 0.03, 6_000, seed=1), tmp_path)
    assert score.kernels >= 1
    assert score.precision >= 0.9 and score.recall >= 0.8
    assert json.loads(json.dumps(score.to_dict()))["case"].startswith("1-D " + shape)
    assert len(list((tmp_path / "real").iterdir())) == 15  # 6,000 transitions, 400 per bag


def test_no_gap_no_kernel(tmp_path):
    score = run_case(Case(1, "none", 0.1, 6_000, seed=2), tmp_path)
    assert (score.kernels, score.divergent_nodes, score.precision, score.recall) == (
        0, 0, None, None)
    assert score.tested_nodes > 50
