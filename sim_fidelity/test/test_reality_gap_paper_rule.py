"""The paper's divergence rule (paper 001, section III: states differ by more than eps_c *and*
have sufficiently different probabilities under the two transition functions), selected by the
spec's ``divergence: {test: paper, min_probability_gap: ...}``: the probabilities on hand-made
models, the rule in paired roll-outs, the spec's checks, and a planted gap the G-test misses."""
from __future__ import annotations

import numpy as np
import pytest
from reality_gap_cases import history, spec_2d

from sim_fidelity.reality_gap import SpecError, TransitionModel, generate
from sim_fidelity.reality_gap.divergence import outcome_probability, probability_gap
from sim_fidelity.reality_gap.rollouts import paired_rollouts
from sim_fidelity.reality_gap.transitions import Nodes


def model(edges: list[tuple[int, int, int, int]], n_nodes: int) -> TransitionModel:
    """A transition model from (source, action, destination, count) edges, two actions."""
    s, a, d = (np.repeat([e[i] for e in edges], [e[3] for e in edges]) for i in range(3))
    return TransitionModel.estimate(s, a, d, n_nodes, 2)


def line(*xs: float, eps: float = 0.5) -> Nodes:
    return Nodes(np.array(xs, float)[:, None], np.ones(1), eps)


# node:  0    1    2    3
# x:     0    1    2    2.3
NODES = line(0.0, 1.0, 2.0, 2.3)


def test_an_outcome_counts_every_node_that_does_not_differ_from_it_actions_pooled():
    """From node 0 reality goes to 2 (action 0, twice) or to 3 (action 1, once), 0.3 apart: for
    an outcome at 2 both count (c <= eps_c); node 1, 1 away, does not."""
    phy = model([(0, 0, 2, 2), (0, 1, 3, 1), (0, 0, 1, 1)], 4)
    at = np.zeros(3, dtype=int)
    np.testing.assert_allclose(outcome_probability(phy, NODES, at, np.array([2, 3, 1])),
                               [0.75, 0.75, 0.25])
    # a node without transitions: probability 0 for every outcome
    np.testing.assert_allclose(outcome_probability(phy, NODES, np.array([1]), np.array([2])), [0])


def test_the_gap_is_the_larger_of_the_two_differing_states_probability_differences():
    sim = model([(0, 0, 1, 3), (0, 0, 2, 1)], 4)  # P_sim: 1 -> 0.75, 2 -> 0.25
    phy = model([(0, 0, 1, 2), (0, 0, 2, 1), (0, 1, 3, 1)], 4)  # P_phy: 1 -> 0.5, near 2 -> 0.5
    gap = probability_gap(sim, phy, NODES, np.array([0]), np.array([1]), np.array([2]))
    np.testing.assert_allclose(gap, [0.25])  # |0.5 - 0.75| for node 1, |0.5 - 0.25| for 2
    same = probability_gap(sim, sim, NODES, np.array([0]), np.array([1]), np.array([2]))
    np.testing.assert_allclose(same, [0.0])


def rollout_models(sim_counts: tuple[int, int], phy_counts: tuple[int, int]):
    """From node 0 each side goes to node 1 or node 2 (1 apart) with the given counts; nodes
    1 and 2 end the roll-outs."""
    return (model([(0, 0, 1, sim_counts[0]), (0, 0, 2, sim_counts[1])], 4),
            model([(0, 0, 1, phy_counts[0]), (0, 0, 2, phy_counts[1])], 4))


def diverged(sim, phy, nodes, gap: float | None, divergent=None, n: int = 200) -> list:
    divergent = np.ones(4, bool) if divergent is None else divergent
    _, found = paired_rollouts(sim, phy, nodes, np.zeros(n, dtype=int), 3, divergent,
                               np.random.default_rng(0), min_probability_gap=gap)
    return found


def test_differing_states_with_a_gap_at_or_above_the_threshold_diverge():
    """P_sim(1) = 0.75, P_phy(1) = 0.25: every pair that parts (sim 1, real 2 or the other way)
    has a gap of 0.5; pairs that agree never diverge."""
    sim, phy = rollout_models((3, 1), (1, 3))
    found = diverged(sim, phy, NODES, 0.5)
    assert 40 < len(found) < 160  # about 0.75 * 0.75 + 0.25 * 0.25 of the pairs agree
    assert {(d.step, d.node) for d in found} == {(1, 0)}
    assert diverged(sim, phy, NODES, 0.51) == []


def test_differing_states_with_the_same_probabilities_do_not_diverge():
    """Both sides go to 1 or 2 half the time: half the pairs part, none with a gap."""
    sim, phy = rollout_models((1, 1), (1, 1))
    assert diverged(sim, phy, NODES, 0.01) == []
    assert len(diverged(sim, phy, NODES, None)) > 50  # without the gap, every parting diverges


def test_states_within_eps_c_do_not_differ_however_different_their_probabilities():
    """Sim always to node 2 (x 2), reality always to node 3 (x 2.3): 0.3 <= eps_c, no
    divergence even at the largest gap; with eps_c 0.25 they differ and diverge."""
    sim, phy = model([(0, 0, 2, 1)], 4), model([(0, 0, 3, 1)], 4)
    assert diverged(sim, phy, NODES, 1.0) == []
    narrow = line(0.0, 1.0, 2.0, 2.3, eps=0.25)
    assert len(diverged(sim, phy, narrow, 1.0, n=10)) == 10


def test_the_paper_rule_only_diverges_after_nodes_marked_in_s0():
    sim, phy = rollout_models((1, 0), (0, 1))
    assert len(diverged(sim, phy, NODES, 1.0, n=10)) == 10
    assert diverged(sim, phy, NODES, 1.0, divergent=np.zeros(4, bool), n=10) == []


# --- the spec --------------------------------------------------------------------------------
def test_the_spec_selects_the_test_and_keeps_only_its_parameter():
    default = spec_2d()
    assert (default.divergence_test, default.fdr, default.min_probability_gap) == (
        "g-test", 0.05, None)
    # the default test is left implicit: a spec from before the choice keeps its hash
    assert default.raw["divergence"] == {"fdr": 0.05}
    assert spec_2d(divergence={"test": "g-test", "fdr": 0.05}).hash == default.hash
    paper = spec_2d(divergence={"test": "paper", "min_probability_gap": 0.7})
    assert (paper.divergence_test, paper.fdr, paper.min_probability_gap) == ("paper", None, 0.7)
    assert paper.raw["divergence"] == {"test": "paper", "min_probability_gap": 0.7}
    assert paper.hash != default.hash
    assert spec_2d(divergence={"test": "paper", "min_probability_gap": 1}).min_probability_gap == 1


@pytest.mark.parametrize("divergence, message", [
    ({"test": "chi2"}, "divergence.test must be one of ('g-test', 'paper'), got 'chi2'"),
    ({"test": "paper"}, "divergence test 'paper' needs 'min_probability_gap' in (0, 1]"),
    ({"test": "paper", "min_probability_gap": 1.5},
     "divergence.min_probability_gap must be in (0, 1], got 1.5"),
    ({"test": "paper", "min_probability_gap": 0}, "'min_probability_gap' must be > 0, got 0"),
    ({"test": "paper", "min_probability_gap": "big"},
     "'min_probability_gap' must be a finite number, got 'big'"),
    ({"test": "paper", "min_probability_gap": 0.5, "fdr": 0.05},
     "divergence.fdr does not apply to test 'paper' (it takes 'min_probability_gap')"),
    ({"min_probability_gap": 0.5},
     "divergence.min_probability_gap does not apply to test 'g-test' (it takes 'fdr')"),
    ({"fdr": 1.0}, "divergence.fdr must be in (0, 1), got 1.0"),
    ({"threshold": 0.5}, "section 'divergence' has unknown key(s) ['threshold']"),
])
def test_a_bad_divergence_section_is_an_error_naming_the_value(divergence, message):
    with pytest.raises(SpecError) as err:
        spec_2d(divergence=divergence)
    assert message in str(err.value)


# --- a planted gap the G-test misses ---------------------------------------------------------
def planted(repeats: int):
    """Sim and real agree along a chain up to (5, 0); there reality goes to (5.5, 0.5) and on
    along y; each side flies it ``repeats`` times."""
    chain = [[float(i), 0.0] for i in range(6)]
    sim = chain + [[float(i), 0.0] for i in range(6, 10)]
    real = chain + [[5.5, 0.5 + i] for i in range(4)]
    return history(*[sim] * repeats), history(*[real] * repeats)


def test_a_planted_gap_seen_three_times_a_side_is_found_by_the_paper_rule_not_the_g_test():
    """Three against three outcomes at (5, 0), all different: the G-test's p (0.01) is above
    what Benjamini-Hochberg needs over the 6 tested nodes (0.0083); the paper's rule sees a
    simulated outcome reality never gave there (gap 1) and makes the kernel."""
    sim, real = planted(3)
    g = generate(sim, real, spec_2d(), seed=1)
    assert (g.summary.divergent_nodes, g.summary.kernels) == (0, 0)
    assert 0.0083 < g.tests.p.min() < 0.02
    paper = spec_2d(divergence={"test": "paper", "min_probability_gap": 0.7})
    g = generate(sim, real, paper, seed=1)
    s = g.summary
    assert (s.tested_nodes, s.divergent_nodes, s.divergences, s.kernels) == (6, 1, 20, 1)
    assert g.tests is None and g.tested.sum() == 6 and np.flatnonzero(g.divergent).size == 1
    (k,) = g.kernels
    np.testing.assert_allclose(k.centre, [5.0, 0.0])
    np.testing.assert_allclose(k.predict([5.0, 0.0], [1.0]), [5.5, 0.5], atol=1e-6)
    # the same data on both sides: no divergence, no kernel
    s = generate(sim, sim, paper, seed=1).summary
    assert (s.divergences, s.kernels) == (0, 0)
