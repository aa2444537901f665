"""The divergence decision: a G-test per node on the two sides' transition counts, with the
Benjamini-Hochberg false-discovery control across nodes (reality_gap/divergence.py)."""
from __future__ import annotations

import numpy as np
import pytest
from reality_gap_cases import model

from sim_fidelity.reality_gap.divergence import benjamini_hochberg, chi2_sf, compare_nodes


def test_chi_square_tail_matches_known_values():
    p = chi2_sf(np.array([3.841459, 10.0, 100.0, 0.5, 0.0, 12.0]),
                np.array([1, 5, 50, 4, 3, 0]))
    np.testing.assert_allclose(p, [0.05, 0.0752352, 3.45493e-5, 0.973501, 1.0, 1.0],
                               rtol=1e-5)


def test_benjamini_hochberg_steps_up():
    p = np.array([0.01, 0.04, 0.03, 0.5, 0.001])  # sorted: .001 .01 .03 .04 .5
    np.testing.assert_array_equal(benjamini_hochberg(p, 0.05), [1, 1, 1, 0, 1])
    np.testing.assert_array_equal(benjamini_hochberg(p, 0.01), [0, 0, 0, 0, 1])
    assert benjamini_hochberg(np.zeros(0), 0.05).shape == (0,)


def test_same_distribution_with_few_samples_is_no_divergence():
    sim = model({(0, 0, 1): 3, (0, 0, 2): 2})
    phy = model({(0, 0, 1): 2, (0, 0, 2): 3})
    tests = compare_nodes(sim, phy, fdr=0.05)
    assert tests.tested[0] and not tests.divergent.any() and tests.p[0] > 0.5


def test_different_outcomes_seen_once_are_not_evidence_enough():
    tests = compare_nodes(model({(0, 0, 1): 1}), model({(0, 0, 2): 1}), fdr=0.05)
    assert tests.df[0] == 1 and not tests.divergent[0]


def test_clearly_different_with_many_samples_is_a_divergence():
    sim = model({(0, 0, 1): 40, (0, 0, 2): 10, (1, 0, 2): 30})
    phy = model({(0, 0, 1): 10, (0, 0, 2): 40, (1, 0, 2): 30})
    tests = compare_nodes(sim, phy, fdr=0.05)
    assert tests.p[0] < 1e-8 and tests.divergent.tolist() == [True, False, False, False]
    assert tests.tested.tolist() == [True, True, False, False]  # node 1: one outcome, p = 1


def test_actions_are_tested_apart_and_summed_per_node():
    """Per action the outcomes agree; pooled over actions they would not (the mix of actions
    differs, which is the policy, not the transition function)."""
    sim = model({(0, 0, 1): 45, (0, 1, 2): 5})
    phy = model({(0, 0, 1): 5, (0, 1, 2): 45})
    tests = compare_nodes(sim, phy, fdr=0.05)
    assert tests.df[0] == 0 and not tests.divergent[0]


def test_false_discoveries_stay_rare_over_many_null_nodes():
    """500 nodes where both sides draw 5-60 outcomes from the same 4-outcome distribution, 20
    where 40-80 outcomes come from reversed odds: the differing ones are found, the null ones
    (almost) never."""
    rng = np.random.default_rng(0)
    n_null, n_gap, n_out = 500, 20, 4
    n_nodes = n_null + n_gap + n_out
    sides = []
    for real in (False, True):
        counts = {}
        for node in range(n_null + n_gap):
            probs, size = [0.4, 0.3, 0.2, 0.1], rng.integers(5, 60)
            if node >= n_null:
                probs, size = (probs[::-1] if real else probs), rng.integers(40, 80)
            for j, c in enumerate(rng.multinomial(size, probs)):
                if c:
                    counts[(node, 0, n_null + n_gap + j)] = int(c)
        sides.append(model(counts, n_nodes, 1))
    tests = compare_nodes(*sides, fdr=0.05)
    found = tests.divergent[:n_null + n_gap]
    assert found[n_null:].mean() >= 0.8  # power on the planted nodes
    assert found[:n_null].sum() <= 2  # false discoveries among 500 null nodes
    assert found[:n_null].sum() / max(found.sum(), 1) <= 0.1


@pytest.mark.parametrize("fdr", [0.0, 1.0])
def test_the_rate_must_be_a_probability(fdr):
    from sim_fidelity.reality_gap import Spec, SpecError

    raw = {"state": [{"name": "x", "topic": "/odom", "type": "nav_msgs/msg/Odometry",
                      "field": "pose.pose.position.x"}],
           "action": [{"name": "v", "topic": "/cmd", "type": "geometry_msgs/msg/Twist",
                       "field": "linear.x", "values": [0.0, 1.0]}],
           "divergence": {"fdr": fdr}}
    with pytest.raises(SpecError, match="fdr"):
        Spec.from_dict(raw)
