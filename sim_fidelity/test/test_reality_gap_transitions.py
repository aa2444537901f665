"""Distance, node matching and the frequentist transition models."""
from __future__ import annotations

import numpy as np

from sim_fidelity.reality_gap import TransitionModel, common_states, distance, match_nodes


def test_weighted_l1_distance_broadcasts():
    w = np.array([1.0, 2.0, 0.5])
    assert distance([0, 0, 0], [1, -1, 4], w) == 1 + 2 + 2
    d = distance(np.zeros((4, 1, 3)), np.ones((1, 5, 3)), w)
    assert d.shape == (4, 5) and np.allclose(d, 3.5)


def test_states_within_eps_share_a_node_and_others_do_not():
    w = np.array([1.0, 10.0])
    eps = 0.1
    states = np.array([[0.0, 0.0], [0.03, 0.0], [0.0, 0.004],  # one node: c < eps
                       [0.0, 0.02],  # c = 0.2 from the first (the weight makes it far)
                       [5.0, 1.0], [5.05, 1.0]])
    nodes, ids = match_nodes(states, w, eps)
    assert ids[0] == ids[1] == ids[2]
    assert len({ids[0], ids[3], ids[4]}) == 3 and ids[4] == ids[5]
    assert len(nodes) == 3
    np.testing.assert_allclose(nodes.centres[ids[4]], [5.025, 1.0])  # centre: mean of members
    # every state is within eps of its node centre, and that centre is the nearest one
    to_all = distance(states[:, None, :], nodes.centres[None, :, :], w)
    np.testing.assert_array_equal(to_all.argmin(axis=1), ids)
    assert np.all(to_all[np.arange(len(states)), ids] < eps)


def test_matching_is_vectorised_over_many_states_and_order_free():
    rng = np.random.default_rng(3)
    centres = rng.uniform(-50, 50, size=(300, 3))
    states = np.repeat(centres, 20, axis=0) + rng.uniform(-0.01, 0.01, size=(6000, 3))
    nodes, ids = match_nodes(states, np.ones(3), 0.1)
    assert len(nodes) == 300
    assert np.all(ids.reshape(300, 20) == ids.reshape(300, 20)[:, :1])
    perm = rng.permutation(len(states))
    nodes2, ids2 = match_nodes(states[perm], np.ones(3), 0.1)
    np.testing.assert_allclose(nodes2.centres[ids2], nodes.centres[ids][perm])


def test_frequentist_estimates():
    # node 0: action 0 -> node 1 (3x) or node 2 (1x); action 1 -> node 2 (4x); node 1: a0 -> 0
    s = [0, 0, 0, 0, 0, 0, 0, 0, 1]
    a = [0, 0, 0, 0, 1, 1, 1, 1, 0]
    s2 = [1, 1, 1, 2, 2, 2, 2, 2, 0]
    m = TransitionModel.estimate(s, a, s2, n_nodes=4, n_actions=2)
    edges = {(int(i), int(j), int(k)): (t, p, q) for i, j, k, t, p, q in
             zip(m.src, m.act, m.dst, m.T, m.pi, m.P)}
    assert edges[(0, 0, 1)] == (0.75, 0.5, 0.375)  # T(1|0,a0) pi(a0|0) = P
    assert edges[(0, 0, 2)] == (0.25, 0.5, 0.125)
    assert edges[(0, 1, 2)] == (1.0, 0.5, 0.5)
    assert edges[(1, 0, 0)] == (1.0, 1.0, 1.0)
    np.testing.assert_array_equal(m.states(), [0, 1])
    dst, p = m.successors(0)  # SR(0): P(s'|s) summed over actions
    np.testing.assert_array_equal(dst, [1, 2])
    np.testing.assert_allclose(p, [0.375, 0.625])
    assert len(m.successors(3)[0]) == 0


def test_sampling_follows_P_and_stops_at_terminal_nodes():
    m = TransitionModel.estimate([0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [1, 1, 1, 2, 2], 3, 2)
    rng = np.random.default_rng(0)
    edges = m.sample(np.zeros(20000, dtype=int), rng)
    freq = np.bincount(m.dst[edges], minlength=3) / 20000
    np.testing.assert_allclose(freq, [0, 0.75, 0.25], atol=0.015)
    np.testing.assert_array_equal(m.sample(np.array([2, 1]), rng)[0], -1)
    assert m.dst[m.sample(np.array([1]), rng)[0]] == 2


def test_common_states_are_nodes_with_transitions_on_both_sides():
    sim = TransitionModel.estimate([0, 1, 2], [0, 0, 0], [1, 2, 3], 5, 1)
    phy = TransitionModel.estimate([1, 2, 4], [0, 0, 0], [2, 4, 0], 5, 1)
    np.testing.assert_array_equal(common_states(sim, phy), [1, 2])
