"""What kernel generation (reality_gap/kernels.py, ``generate``) takes from the divergence test the
spec chooses: under the paper's rule, the probability gap differing states need (a branch both
models take with similar odds is no divergence); under the G-test, the nodes it tested and the
nodes it declared divergent, whatever the roll-outs then met. The surviving mutants of
``generate`` in docs/testing.md's mutation section."""
from __future__ import annotations

import numpy as np
from reality_gap_cases import history, spec_2d

from sim_fidelity.reality_gap import generate

A_RUN = [[0, 0], [1, 0], [2, 0], [3, 0]]  # from (0, 0) along x ...
B_RUN = [[0, 0], [0, 1], [0, 2], [0, 3]]  # ... or along y
A_STEP, B_STEP = A_RUN[:2], B_RUN[:2]  # one step: S_0 is (0, 0) alone, every roll-out starts there


def paper(gap: float):
    return spec_2d(divergence={"test": "paper", "min_probability_gap": gap})


def test_under_the_paper_rule_a_branch_both_sides_take_alike_is_no_divergence():
    """Both sides step from (0, 0) to A or B with equal odds: the pairs' states differ in about
    half the roll-outs, but the probabilities do not (gap 0)."""
    both = history(A_STEP, B_STEP, A_STEP, B_STEP)
    s = generate(both, both, paper(0.1), seed=4).summary
    assert (s.common_states, s.rollouts) == (1, 20)
    assert (s.divergences, s.divergent_nodes, s.kernels) == (0, 0, 0)


def test_under_the_paper_rule_only_a_gap_at_or_above_the_minimum_is_a_divergence():
    """The simulation steps from (0, 0) to A or B with equal odds, reality always to A: where a
    simulated B meets a real A, B's probabilities differ by 0.5. A minimum of 0.7 lets none
    through; 0.5 lets every such pair through, each found after (0, 0)."""
    sim, real = history(A_STEP, B_STEP, A_STEP, B_STEP), history(*[A_STEP] * 4)
    strict = generate(sim, real, paper(0.7), seed=4)
    assert (strict.summary.divergences, strict.summary.kernels) == (0, 0)
    loose = generate(sim, real, paper(0.5), seed=4)
    assert 0 < loose.summary.divergences < 20  # the pairs whose simulated step went to B
    assert loose.summary.divergent_nodes == 1
    np.testing.assert_array_equal(loose.nodes.centres[loose.divergent], [[0.0, 0.0]])


def test_the_g_test_reports_as_tested_only_nodes_with_an_action_seen_on_both_sides():
    """The same chain on both sides, driven with action 1 in the simulation and action 0 in
    reality: every node is in S_0 (transitions on both sides), none is tested."""
    chain = [[float(i), 0.0] for i in range(7)]
    g = generate(history(chain, chain, action=1), history(chain, chain, action=0), spec_2d(),
                 seed=0)
    assert g.summary.common_states == 6
    assert (g.summary.tested_nodes, int(g.tested.sum())) == (0, 0)
    assert g.tests is not None and not g.tests.tested.any()


def test_the_g_test_declares_the_divergent_nodes_whether_or_not_a_roll_out_meets_them():
    """Reality goes to B 70 % of the time where the simulation always goes to A: the G-test
    declares (0, 0) divergent; without roll-outs no divergence is met and no kernel made, but
    the generation still reports that node as divergent."""
    sim, real = history(*[A_RUN] * 10), history(*[A_RUN] * 3 + [B_RUN] * 7)
    g = generate(sim, real, spec_2d(), rollouts=0, seed=2)
    s = g.summary
    assert (s.rollouts, s.divergences, s.candidates, s.kernels) == (0, 0, 0, 0)
    assert s.divergent_nodes == 1
    np.testing.assert_array_equal(g.divergent, g.tests.divergent)
    np.testing.assert_array_equal(g.nodes.centres[g.divergent], [[0.0, 0.0]])
