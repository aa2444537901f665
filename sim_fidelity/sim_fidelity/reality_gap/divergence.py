"""When the two transition functions differ (paper 001, "sufficiently different probabilities"):
two rules, chosen by the spec's ``divergence.test``.

*g-test* (``compare_nodes``): a test per node before the roll-outs, false discoveries controlled
across nodes.

At a node s and action a, the two sides' outcome counts n_sim(s'|s,a) and n_phy(s'|s,a) form a
2 x K contingency table over the destination nodes seen from (s, a) on either side. Its G
statistic (likelihood ratio of "one T(.|s,a) for both" against "one each"), with Williams'
correction for small counts, is chi-square with K - 1 degrees of freedom when the two transition
functions agree. A node's statistic is the sum over the actions observed at it on both sides
(degrees of freedom add up), so one p-value per node. Nodes are then declared divergent by the
Benjamini-Hochberg procedure at false-discovery rate q over all nodes tested: of the nodes
declared divergent, at most a share q are expected to be nodes where the two agree.

*paper* (``probability_gap``): the paper's rule on a roll-out pair whose states differ after the
common state s. Each of the two differing states x (the simulated and the real roll-out's) has a
probability under each transition function, P(x~ | s) = sum_a P(s', a | s) over the outcomes s'
that do not differ from x (c(s', x) <= eps_c): the p of eq. 6-7 over an eps_c-neighbourhood, so
that the node grid's boundaries do not split one outcome. The pair diverges when, for either
state, the two probabilities differ by at least ``min_probability_gap``. No sample size enters:
a node seen once on each side can give a gap of 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .transitions import Nodes, TransitionModel, distance

_ITERATIONS = 300  # series / continued-fraction terms of the incomplete gamma function
_TINY = 1e-300


def chi2_sf(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(X > x) for X ~ chi-square(df), elementwise; 1 where df == 0 (vectorised, no scipy).

    The regularised upper incomplete gamma Q(df / 2, x / 2): its series below a + 1, Lentz's
    continued fraction above.
    """
    x, df = np.broadcast_arrays(np.asarray(x, float), np.asarray(df, float))
    out = np.ones(x.shape)
    live = (df > 0) & (x > 0)
    if not live.any():
        return out
    a, z = df[live] / 2.0, x[live] / 2.0
    log_front = a * np.log(z) - z - np.vectorize(math.lgamma)(a)
    # series: P(a, z) = front / a * sum z^n / ((a+1)...(a+n))
    term = 1.0 / a
    total = term.copy()
    for n in range(1, _ITERATIONS):
        term = term * z / (a + n)
        total += term
    lower = np.exp(log_front) * total
    # continued fraction for Q(a, z) (modified Lentz)
    b = z + 1.0 - a
    c = np.full_like(z, 1.0 / _TINY)
    d = 1.0 / np.where(np.abs(b) < _TINY, _TINY, b)
    h = d.copy()
    for i in range(1, _ITERATIONS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        h = h * d * c
    upper = np.exp(log_front) * h
    out[live] = np.clip(np.where(z < a + 1.0, 1.0 - lower, upper), 0.0, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray, q: float) -> np.ndarray:
    """Rejections of the Benjamini-Hochberg step-up procedure at false-discovery rate ``q``."""
    p = np.asarray(p, float)
    m = len(p)
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    below = p[order] <= q * np.arange(1, m + 1) / m
    reject = np.zeros(m, dtype=bool)
    if below.any():
        reject[order[:np.flatnonzero(below)[-1] + 1]] = True
    return reject


@dataclass
class NodeTests:
    """Per node: the G statistic, its degrees of freedom, the p-value and the decision."""

    g: np.ndarray  # (n_nodes,) summed over the actions seen on both sides
    df: np.ndarray  # (n_nodes,)
    p: np.ndarray  # (n_nodes,) 1 where not tested or no outcome differs
    tested: np.ndarray  # (n_nodes,) bool: at least one action observed on both sides
    divergent: np.ndarray  # (n_nodes,) bool: rejected by Benjamini-Hochberg
    fdr: float


def compare_nodes(sim: TransitionModel, phy: TransitionModel, fdr: float) -> NodeTests:
    """The G-test of homogeneity per (node, action), summed per node, then BH over nodes."""
    n_nodes, n_actions = sim.n_nodes, sim.n_actions
    side = np.r_[np.zeros(len(sim.src), dtype=np.int64), np.ones(len(phy.src), dtype=np.int64)]
    sa = np.r_[sim.src * n_actions + sim.act, phy.src * n_actions + phy.act]
    cell = sa * n_nodes + np.r_[sim.dst, phy.dst]
    count = np.r_[sim.count, phy.count].astype(float)
    cells, cell_of = np.unique(cell, return_inverse=True)
    cell_of = cell_of.ravel()
    table = np.zeros((len(cells), 2))
    np.add.at(table, (cell_of, side), count)  # rows: (s, a, s'); columns: sim, phy
    groups, group_of = np.unique(cells // n_nodes, return_inverse=True)  # (s, a) of each row
    group_of = group_of.ravel()
    rows = np.zeros((len(groups), 2))
    np.add.at(rows, group_of, table)  # n_sim(s, a), n_phy(s, a)
    both = (rows > 0).all(axis=1)
    column = table.sum(axis=1)  # C_j: both sides' count of the outcome
    total = rows.sum(axis=1)  # N per (s, a)
    expected = rows[group_of] * (column / total[group_of])[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(table > 0, table * np.log(table / expected), 0.0).sum(axis=1)
    g = 2.0 * np.bincount(group_of, weights=terms, minlength=len(groups))
    k = np.bincount(group_of, minlength=len(groups)).astype(float)  # outcomes per (s, a)
    inv_col = np.bincount(group_of, weights=1.0 / column, minlength=len(groups))
    with np.errstate(divide="ignore", invalid="ignore"):
        williams = 1.0 + (total * inv_col - 1.0) * (total * (1.0 / rows).sum(axis=1) - 1.0) / (
            6.0 * total * np.maximum(k - 1.0, 1.0))
    g = np.where(both & (k > 1), g / williams, 0.0)
    df = np.where(both, k - 1.0, 0.0)
    node = groups // n_actions
    g_node = np.bincount(node, weights=g, minlength=n_nodes)
    df_node = np.bincount(node, weights=df, minlength=n_nodes)
    tested_node = np.bincount(node, weights=both, minlength=n_nodes) > 0
    p = chi2_sf(g_node, df_node)
    divergent = np.zeros(n_nodes, dtype=bool)
    divergent[tested_node] = benjamini_hochberg(p[tested_node], fdr)
    return NodeTests(g_node, df_node, p, tested_node, divergent & (df_node > 0), fdr)


def outcome_probability(model: TransitionModel, nodes: Nodes, at: np.ndarray,
                        outcome: np.ndarray) -> np.ndarray:
    """P(x~ | s) per pair: the probability under ``model`` of a step from node ``at[i]`` to a
    node that does not differ from node ``outcome[i]`` (centres within eps_c), actions pooled
    (P(s'|s) of eq. 6); 0 where the model has no transitions at ``at[i]``."""
    at, outcome = np.asarray(at, dtype=np.int64), np.asarray(outcome, dtype=np.int64)
    lo, hi = model.offsets[at], model.offsets[at + 1]
    n = hi - lo
    pair = np.repeat(np.arange(len(at)), n)
    edge = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + np.repeat(lo, n)
    near = distance(nodes.centres[model.dst[edge]], nodes.centres[outcome[pair]],
                    nodes.weights, nodes.periodic) <= nodes.eps_c
    return np.bincount(pair, weights=model.P[edge] * near, minlength=len(at))


def probability_gap(sim: TransitionModel, phy: TransitionModel, nodes: Nodes, at: np.ndarray,
                    out_sim: np.ndarray, out_phy: np.ndarray) -> np.ndarray:
    """The paper's "sufficiently different probabilities" per pair: the larger, over the two
    differing states (``out_sim``, ``out_phy``), of |P_phy(x~ | s) - P_sim(x~ | s)| with s the
    common state ``at`` (``outcome_probability``)."""
    gaps = [np.abs(outcome_probability(phy, nodes, at, x) - outcome_probability(sim, nodes, at, x))
            for x in (out_sim, out_phy)]
    return np.maximum(*gaps)
