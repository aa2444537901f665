"""The divergence rules' values, computed apart by hand (reality_gap/divergence.py; the survivors
of its mutation run in docs/testing.md): the Williams-corrected G statistic and what an untested
node reports, no numpy warnings on nodes seen on one side only, Benjamini-Hochberg's rejections
as a mask, and the paper rule's outcome probability (its own node's edges only, eps_c inclusive,
angles the short way round)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from reality_gap_cases import model

from sim_fidelity.reality_gap.divergence import (
    benjamini_hochberg,
    chi2_sf,
    compare_nodes,
    outcome_probability,
)
from sim_fidelity.reality_gap.transitions import Nodes

# node 0, action 0: the two sides' counts of each outcome (a count of 1 in either column)
SIM0 = {(0, 0, 1): 5, (0, 0, 2): 1}
PHY0 = {(0, 0, 1): 2, (0, 0, 2): 4, (0, 0, 3): 1}
SIM1 = {(1, 0, 2): 3, (1, 0, 3): 2}  # node 1: simulated only
SIM2 = {(2, 0, 3): 2}  # node 2: simulated only, one outcome


def williams_g(sim: list[int], phy: list[int]) -> float:
    """G = 2 sum O ln(O / E) over a 2 x K table, divided by Williams' q (written out apart)."""
    n_sim, n_phy = sum(sim), sum(phy)
    n = n_sim + n_phy
    g = 0.0
    for o_sim, o_phy in zip(sim, phy):
        col = o_sim + o_phy
        for o, side in ((o_sim, n_sim), (o_phy, n_phy)):
            if o:
                g += 2.0 * o * math.log(o / (side * col / n))
    k = len(sim)
    q = 1.0 + ((n * sum(1.0 / (s + p) for s, p in zip(sim, phy)) - 1.0)
               * (n * (1.0 / n_sim + 1.0 / n_phy) - 1.0) / (6.0 * n * (k - 1)))
    return g / q


def test_the_g_statistic_is_williams_corrected_and_an_untested_node_reports_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nodes seen on one side only: 1/0 and 0 * inf inside
        tests = compare_nodes(model({**SIM0, **SIM1, **SIM2}), model(PHY0), fdr=0.05)
    g0 = williams_g([5, 1, 0], [2, 4, 1])
    assert tests.g[0] == pytest.approx(g0, rel=1e-12)
    assert tests.df.tolist() == [2.0, 0.0, 0.0, 0.0]
    assert tests.p[0] == pytest.approx(math.exp(-g0 / 2.0), rel=1e-9)  # chi-square, 2 df
    assert tests.tested.tolist() == [True, False, False, False]
    assert tests.g[1:].tolist() == [0.0] * 3 and tests.p[1:].tolist() == [1.0] * 3
    assert not tests.divergent.any() and tests.fdr == 0.05


def test_a_statistic_far_below_its_degrees_of_freedom_has_a_tail_near_one():
    """Where the series is the method (x / 2 < df / 2 + 1): with one degree of freedom the tail is
    erfc(sqrt(x / 2)); with 100 and x = 1 it is 1 to double precision."""
    x = np.array([1e-6, 0.3, 1.0])
    assert chi2_sf(x, np.array([1.0, 1.0, 100.0])) == pytest.approx(
        [math.erfc(math.sqrt(1e-6 / 2)), math.erfc(math.sqrt(0.3 / 2)), 1.0], rel=1e-12)


def test_benjamini_hochberg_rejections_select_the_rejected_p_values():
    p = np.array([0.01, 0.04, 0.03, 0.5, 0.001])
    assert p[benjamini_hochberg(p, 0.05)].tolist() == [0.01, 0.04, 0.03, 0.001]
    assert np.zeros(0)[benjamini_hochberg(np.zeros(0), 0.05)].size == 0


def line(*xs: float, periodic: bool = False) -> Nodes:
    return Nodes(np.array(xs, float)[:, None], np.ones(1), 0.5, np.array([periodic]))


def test_an_outcome_probability_counts_only_the_edges_of_its_own_node():
    """Node 0 steps to node 1 only; node 1 steps to node 2: seen from node 0, node 2 has
    probability 0 (the next node's edges are not node 0's)."""
    nodes = line(0.0, 1.0, 2.0, 3.0)
    m = model({(0, 0, 1): 2, (1, 0, 2): 1})
    assert outcome_probability(m, nodes, [0, 0, 1], [2, 1, 2]).tolist() == [0.0, 1.0, 1.0]


def test_an_outcome_exactly_eps_c_away_does_not_differ():
    """The paper: states differ when c(s', x) > eps_c; at exactly eps_c (0.5) they do not."""
    nodes = line(0.0, 1.0, 1.5)
    m = model({(0, 0, 2): 1}, n_nodes=3)
    assert outcome_probability(m, nodes, [0], [1]).tolist() == [1.0]


def test_an_angle_outcome_is_near_the_short_way_round():
    """Centres at 3.0 and -3.0 rad are 0.28 apart across +-pi (within eps_c 0.5), 6 apart the
    long way: on a periodic axis node 2 does not differ from node 1, on a plain one it does."""
    m = model({(0, 0, 1): 1}, n_nodes=3)
    for periodic, expected in ((True, 1.0), (False, 0.0)):
        nodes = line(0.0, 3.0, -3.0, periodic=periodic)
        assert outcome_probability(m, nodes, [0], [2]).tolist() == [expected]
