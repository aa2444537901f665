"""Kernel generation (Algorithm 1), the kernels file and the kernel manager core."""
from __future__ import annotations

import numpy as np
import pytest
import yaml
from reality_gap_cases import PUSH, SCALE, SHIFT, history, kernel, line_histories, spec_2d

from sim_fidelity.reality_gap import (
    History,
    KernelRunner,
    KernelSet,
    Spec,
    SpecError,
    generate,
    load_kernels,
    save_kernels,
)

M = np.array([[0.9, -0.2], [0.1, 0.8]])  # the real dynamics after the divergence point
B = np.array([0.5, 0.3])


def planted(repeats: int = 10) -> tuple[History, History]:
    """Sim and real agree along a chain up to (5, 0); there reality follows s' = M s + B.
    Each side flies the chain ``repeats`` times (the evidence the divergence test needs)."""
    chain = [[float(i), 0.0] for i in range(6)]
    sim = chain + [[float(i), 0.0] for i in range(6, 12)]
    real = list(chain)
    x = np.array(chain[-1])
    for _ in range(6):
        x = M @ x + B
        real.append(x.tolist())
    return history(*[sim] * repeats), history(*[real] * repeats)


def test_planted_divergence_gives_one_kernel_at_the_divergent_node():
    sim, real = planted()
    result = generate(sim, real, spec_2d(), seed=1)
    s = result.summary
    assert (s.common_states, s.rollouts, s.candidates, s.kernels, s.dropped) == (6, 20, 1, 1, 0)
    assert (s.tested_nodes, s.divergent_nodes) == (6, 1)
    assert s.divergences == 20  # every roll-out from the chain reaches the divergence
    (k,) = result.kernels
    np.testing.assert_allclose(k.centre, [5.0, 0.0])  # the state before divergence
    np.testing.assert_allclose(k.members, [[5.0, 0.0]])  # the divergent region: one node
    assert k.support == 20 and k.samples == 10  # merged by region; every real (5,0) -> ...
    np.testing.assert_allclose(k.predict([5.0, 0.0], [1.0]), M @ [5.0, 0.0] + B, atol=1e-9)
    assert k.divergence == (0.5, 0.5)  # both steps had probability 1: normalised (p_s, p_p)


def test_one_run_is_not_evidence_enough():
    """The same planted gap seen once per side: 1 against 1 outcome is no significant
    difference (the old fixed probability threshold made a kernel of it)."""
    sim, real = planted(repeats=1)
    s = generate(sim, real, spec_2d(), seed=1).summary
    assert (s.divergent_nodes, s.divergences, s.kernels) == (0, 0, 0)


def test_same_dynamics_give_no_kernel():
    sim, _ = planted()
    s = generate(sim, sim, spec_2d(), seed=0).summary
    assert (s.divergent_nodes, s.divergences, s.kernels) == (0, 0, 0)


def test_candidates_without_enough_data_are_dropped_and_counted():
    sim, real = planted()
    s = generate(sim, real, spec_2d(kernels={"min_samples": 11}), seed=1).summary
    assert (s.candidates, s.kernels, s.dropped) == (1, 0, 1)


def test_a_significant_but_immaterial_difference_makes_no_kernel():
    """One real run in five ends 0.1 off the simulated track after (5, 0): significant over 50
    runs a side, but a kernel would move the simulation by 0.02 on average (< eps_c / 2)."""
    chain = [[float(i), 0.0] for i in range(7)]
    off = chain[:6] + [[6.0, 0.1]]
    sim, real = history(*[chain] * 50), history(*[chain] * 40, *[off] * 10)
    s = generate(sim, real, spec_2d(), seed=1).summary
    assert (s.divergent_nodes, s.candidates, s.kernels, s.dropped, s.immaterial) == (
        1, 1, 0, 0, 1)


def test_a_branch_both_models_share_is_not_a_divergence():
    """Both sides go from (0,0) to A or B with equal odds: states differ, probabilities do not."""
    a_run, b_run = [[0, 0], [1, 0], [2, 0]], [[0, 0], [0, 1], [0, 2]]
    both = history(a_run, b_run, a_run, b_run)
    s = generate(both, both, spec_2d(), seed=4).summary
    assert s.common_states == 3 and s.divergences == 0


def test_the_evidence_decides_not_the_size_of_the_difference():
    """Reality goes to B 70% of the time where the simulation always goes to A: with 10 runs
    a side that is significant, with 3 real runs (B twice) it is not."""
    a_run, b_run = [[0, 0], [1, 0], [2, 0], [3, 0]], [[0, 0], [0, 1], [0, 2], [0, 3]]
    sim = history(*[a_run] * 10)
    many = generate(sim, history(*[a_run] * 3 + [b_run] * 7), spec_2d(), seed=2)
    few = generate(history(*[a_run] * 3), history(a_run, b_run, b_run), spec_2d(), seed=2)
    assert many.summary.kernels == 1 and few.summary.divergent_nodes == 0
    (k,) = many.kernels
    np.testing.assert_allclose(k.centre, [0, 0])
    np.testing.assert_allclose(k.members, [[0, 0]])


def test_generation_is_reproducible_from_the_seed():
    a_run, b_run = [[0, 0], [1, 0], [2, 0], [3, 0]], [[0, 0], [0, 1], [0, 2], [0, 3]]
    sim, real = history(*[a_run] * 10), history(*[a_run] * 3 + [b_run] * 7)
    one, two = (generate(sim, real, spec_2d(), seed=9).summary for _ in range(2))
    assert one == two


def test_kernels_file_round_trip(tmp_path):
    sim, real = planted()
    spec = spec_2d()
    result = generate(sim, real, spec, seed=1)
    path = save_kernels(tmp_path / "k.yaml", spec, result.kernels, result.summary.to_dict())
    text = path.read_text()
    assert text.startswith("format: sim_fidelity/kernels\nversion: 2\n")
    assert "transfer:\n  - [1.0, " in text  # one flow list per coefficient row
    loaded = load_kernels(path)
    assert loaded.spec.hash == spec.hash and loaded.summary == result.summary.to_dict()
    (k,) = loaded.kernels
    np.testing.assert_array_equal(k.transfer, result.kernels[0].transfer)  # exact floats
    np.testing.assert_array_equal(k.centre, result.kernels[0].centre)
    np.testing.assert_array_equal(k.members, result.kernels[0].members)
    assert (k.sigma, k.support, k.divergence, k.samples) == (spec.sigma, 20, (0.5, 0.5), 10)
    doc = yaml.safe_load(text)
    doc["spec"]["distance"]["eps_c"] = 0.5
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError, match="spec_hash"):
        load_kernels(path)
    doc = yaml.safe_load(text)
    doc["version"] = 99
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError, match="version 99"):
        load_kernels(path)


def test_activation_covers_every_member_and_the_first_active_kernel_wins():
    spec = spec_2d()  # activation_threshold 0.5: active within c < 0.1 sqrt(2 ln 2) = 0.118
    ks = KernelSet([kernel([[0, 0]], SHIFT), kernel([[0.05, 0], [0.2, 0]], SCALE),
                    kernel([[5, 5]], PUSH)], spec)
    np.testing.assert_allclose(ks.activation([0.03, 0.0]),
                               np.exp(-0.5 * (np.array([0.03, 0.02, 9.97]) / 0.1) ** 2))
    k, target = ks.lookup(np.array([0.03, 0.0]), [1.0])  # kernels 0 and 1: the first wins
    assert k == 0 and np.allclose(target, [2.03, 0.0])
    assert ks.lookup(np.array([0.12, 0.0]), [1.0])[0] == 1  # outside kernel 0, inside 1
    k, target = ks.lookup(np.array([0.3, 0.0]), [1.0])  # near kernel 1's second member
    assert k == 1 and np.allclose(target, [0.6, 0.0])
    k, target = ks.lookup(np.array([5.0, 5.1]), [-3.5])  # any command, not only seen ones
    assert k == 2 and np.allclose(target, [1.5, 5.1])
    assert ks.lookup(np.array([2.5, 2.5]), [1.0]) is None
    states = np.array([[0.03, 0.0], [0.12, 0.0], [0.3, 0.0], [5.0, 5.1], [2.5, 2.5]])
    np.testing.assert_array_equal(ks.active(states), [0, 1, 1, 2, -1])  # vectorised lookup


def shifted_in_the_region(x: float, u: float, real: bool) -> tuple[float, float]:
    """In [4, 6] reality moves x' = 0.9 x + 0.4 u + 0.5 where the simulation moves x' = x + u."""
    gap = real and 4.0 <= x <= 6.0
    return np.clip(0.9 * x + 0.4 * u + 0.5 if gap else x + u, 0, 10), u


def test_a_kernel_fitted_over_actions_predicts_an_unseen_command():
    sim, real = line_histories(60, 3, shifted_in_the_region)
    spec = spec_2d(distance={"eps_c": 0.1}, rollouts={"count": 400, "max_steps": 20},
                   kernels={"activation_threshold": 0.8})
    result = generate(sim, real, spec, seed=0)
    ks = KernelSet(result.kernels, spec)
    hit = ks.lookup(np.array([5.0, 0.0]), [2.0])  # u = 2 never occurred anywhere
    assert hit is not None
    np.testing.assert_allclose(hit[1], [0.9 * 5.0 + 0.4 * 2.0 + 0.5, 0.0], atol=0.05)
    x = np.linspace(0, 10, 1001)
    active = ks.active(np.c_[x, np.zeros_like(x)]) >= 0
    gap = (x >= 3.95) & (x <= 6.05)  # the region and half a node around it
    assert active[gap].mean() > 0.8  # recall: most of the region is covered
    assert active[gap].sum() / active.sum() > 0.85  # precision: the support is on the gap


def test_runner_coerces_a_mujoco_simulation(tmp_path):
    from sim_fidelity.simulator.engine import MujocoEngine

    sdf = """<?xml version="1.0"?>
<sdf version="1.7"><world name="w"><gravity>0 0 0</gravity>
  <model name="robot"><pose>1 2 0.5 0 0 0</pose><link name="body">
    <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
    </inertial>
    <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
  </link></model></world></sdf>"""
    engine = MujocoEngine.from_string(sdf)
    spec = spec_2d()  # apply: x -> robot pose.x, y -> robot pose.yaw
    path = save_kernels(tmp_path / "k.yaml", spec,
                        [kernel([1.0, 0.0], [[1, 0, 0.5, 0.05], [0, 0, 0, 0.3]])], {})
    runner = KernelRunner(engine, KernelSet.load(path))
    assert runner.apply(np.array([3.0, 0.0]), np.array([1.0])) is None  # no kernel there
    hit = runner.apply(np.array([1.0, 0.0]), np.array([0.9]))  # x' = x + 0.5 u + 0.05
    assert hit is not None and hit[0] == 0
    np.testing.assert_allclose(hit[1], [1.5, 0.3])
    pose, _ = engine.get_states(["robot"])
    np.testing.assert_allclose(pose[0, :3], [1.5, 2.0, 0.5], atol=1e-9)  # x moved, y/z kept
    yaw = np.arctan2(2 * (pose[0, 6] * pose[0, 5]), 1 - 2 * pose[0, 5] ** 2)
    assert abs(yaw - 0.3) < 1e-9
    engine.step(10)  # the simulation carries on from the coerced state
    assert abs(engine.get_states(["robot"])[0][0, 0] - 1.5) < 1e-6


def test_pairs_parted_by_a_shared_branch_are_coupled_and_still_find_the_divergence():
    """A 50/50 wobble both models share comes first; every pair still reaches the real
    divergence at (5, 0) because the simulated roll-out is coupled to the real one."""
    up, down = [[0, 0], [1, 0.2], [2, 0]], [[0, 0], [1, -0.2], [2, 0]]
    sim_tail = [[float(i), 0.0] for i in range(2, 10)]
    real_tail = [[float(i), 0.0] for i in range(2, 6)] + [[6.0, 1.0], [7.0, 2.0]]
    sim = history(*[up, down] * 10, *[sim_tail] * 10)
    real = history(*[up, down] * 10, *[real_tail] * 10)
    spec = spec_2d(rollouts={"count": 40})
    result = generate(sim, real, spec, seed=5)
    assert result.summary.divergences == 40  # all start at (0,0)..(4,0) and reach (5,0)
    (k,) = result.kernels
    np.testing.assert_allclose(k.centre, [5.0, 0.0])


def test_lookup_through_the_grid_agrees_with_the_full_comparison():
    """The grid index finds the same first active kernel as comparing with every member."""
    rng = np.random.default_rng(8)
    spec = spec_2d()
    kernels = [kernel(c + rng.normal(0, 0.05, (3, 2)), SHIFT * (i + 1),
                      sigma=rng.uniform(0.02, 0.1))
               for i, c in enumerate(rng.uniform(0, 2, (300, 2)))]
    ks = KernelSet(kernels, spec)
    states = rng.uniform(-0.2, 2.2, (3000, 2))
    first = ks.active(states)
    looked = [ks.lookup(s, [0.0]) for s in states]
    np.testing.assert_array_equal([-1 if h is None else h[0] for h in looked], first)
    assert 0.2 < (first >= 0).mean() < 1.0


def test_progress_bars_go_to_stderr_only_when_asked_and_are_cleared(capsys):
    sim, real = planted()
    quiet = generate(sim, real, spec_2d())
    assert capsys.readouterr().err == ""
    loud = generate(sim, real, spec_2d(), progress=True)
    err = capsys.readouterr().err
    assert "\rmatching states:" in err and "\rpaired roll-outs:" in err
    assert "\n" not in err and err.endswith(" \r")  # left as a cleared line
    assert loud.summary == quiet.summary


def test_the_summary_counts_what_the_run_saw_and_made():
    sim, real = planted()
    g = generate(sim, real, spec_2d())
    assert g.summary.to_dict() == {
        "transitions_sim": 110, "transitions_phy": 110, "edges_sim": 11, "edges_phy": 11,
        "nodes": 18, "branching_sim": 1.0, "branching_phy": 1.0, "common_states": 6,
        "common_samples_sim": 60, "common_samples_phy": 60, "tested_nodes": 6,
        "divergent_nodes": 1, "rollouts": 20, "divergences": 20,
        "candidates": 1, "kernels": 1, "dropped": 0, "immaterial": 0}
    assert len(g.nodes) == 18 and int(g.tests.divergent.sum()) == 1
    (k,) = g.kernels
    assert k.samples == 10  # the region's deployment transitions
    kept = generate(sim, real, spec_2d(kernels={"min_samples": 10})).summary
    assert (kept.kernels, kept.dropped) == (1, 0)


def test_the_seed_is_zero_unless_given_and_the_divergence_is_the_mean_normalised_pair():
    a_run, b_run = [[0, 0], [1, 0], [2, 0], [3, 0]], [[0, 0], [0, 1], [0, 2], [0, 3]]
    sim, real = history(*[a_run] * 10), history(*[a_run] * 3 + [b_run] * 7)
    default, zero = generate(sim, real, spec_2d()), generate(sim, real, spec_2d(), seed=0)
    assert default.summary == zero.summary and default.summary.divergences == 4
    assert generate(sim, real, spec_2d(), seed=1).summary.divergences == 6
    (k,) = default.kernels  # the simulation steps to A for sure, reality to B at 0.7
    np.testing.assert_allclose(k.divergence, (1 / 1.7, 0.7 / 1.7))


def test_the_roll_out_count_given_wins_and_no_common_state_means_no_roll_out():
    sim, real = planted()
    none = generate(sim, real, spec_2d(), rollouts=0).summary
    assert (none.rollouts, none.divergences, none.kernels) == (0, 0, 0)
    one = generate(sim, real, spec_2d(), rollouts=1).summary
    assert (one.rollouts, one.divergences, one.kernels) == (1, 1, 1)
    apart = generate(history([[0, 0], [1, 0]] * 3), history([[0, 5], [1, 5]] * 3), spec_2d())
    assert (apart.summary.common_states, apart.summary.rollouts, apart.kernels) == (0, 0, [])


def test_kernels_do_not_depend_on_the_units_of_the_state():
    """The same histories in centimetres (weights / 100): the same kernel, in centimetres. The
    real runs start their divergent step a little apart, so the fit is partly the data's and
    partly the prior's, as the inputs' spread weighs them."""
    sim, real = planted()
    at = np.flatnonzero(np.all(real.s == [5.0, 0.0], axis=1))
    jitter = np.random.default_rng(0).uniform(-0.01, 0.01, (len(at), 2))
    s, s2 = real.s.copy(), real.s2.copy()
    s[at] += jitter
    s2[at] = s[at] @ M.T + B
    real = History(s, real.u, real.a, real.r, s2, real.t, real.run)
    cm = [History(h.s * 100, h.u, h.a, h.r, h.s2 * 100, h.t, h.run) for h in (sim, real)]
    metres = generate(sim, real, spec_2d())
    raw = spec_2d().raw
    centi = generate(*cm, Spec.from_dict(
        {**raw, "state": [{**e, "weight": 0.01} for e in raw["state"]]}))
    (k,), (kc,) = metres.kernels, centi.kernels
    s, u = np.array([[5.0, 0.0], [4.0, 0.3]]), np.array([[1.0], [0.5]])
    np.testing.assert_allclose(kc.predict(s * 100, u), k.predict(s, u) * 100, rtol=1e-9)


def test_two_regions_are_sorted_by_support_and_a_dropped_one_does_not_stop_the_others():
    def planted_at(y0: float, repeats: int) -> tuple[list, list]:
        chain = [[float(i), y0] for i in range(6)]
        real, x = list(chain), np.array(chain[-1])
        for _ in range(6):
            x = M @ (x - [0, y0]) + B + [0, y0]
            real.append(x.tolist())
        return [chain + [[float(i), y0] for i in range(6, 12)]] * repeats, [real] * repeats
    (sa, ra), (sb, rb) = planted_at(0.0, 10), planted_at(10.0, 6)
    sim, real = history(*sa, *sb), history(*ra, *rb)
    both = generate(sim, real, spec_2d(), seed=0).kernels
    assert [k.support for k in both] == [14, 6] and both[0].centre.tolist() == [5.0, 10.0]
    for seed in range(4):  # the region at y = 10 has 6 deployment transitions: dropped
        g = generate(sim, real, spec_2d(kernels={"min_samples": 7}), seed=seed)
        assert [k.centre.tolist() for k in g.kernels] == [[5.0, 0.0]]
        assert (g.summary.candidates, g.summary.dropped) == (2, 1)


def test_a_difference_above_half_eps_c_on_average_makes_a_kernel_and_immaterial_ones_count():
    chain = [[float(i), 0.0] for i in range(7)]
    off = chain[:6] + [[6.0, 0.1]]  # 2 runs in 5 end 0.1 off: the fit moves it 0.04 > 0.025
    s = generate(history(*[chain] * 50), history(*[chain] * 30, *[off] * 20), spec_2d(),
                 seed=1).summary
    assert (s.kernels, s.immaterial) == (1, 0)
    far = [[x, y + 10.0] for x, y in chain]
    far_off = far[:6] + [[6.0, 10.1]]
    s = generate(history(*[chain] * 50, *[far] * 50),
                 history(*[chain] * 40, *[off] * 10, *[far] * 40, *[far_off] * 10), spec_2d(),
                 rollouts=200, seed=1).summary
    assert (s.candidates, s.kernels, s.immaterial) == (2, 0, 2)
