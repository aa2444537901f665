"""Paired policy roll-outs (paper eq. 7) and roll-out divergence detection.

The N pairs run in lock step, vectorised over pairs: at each step every live roll-out draws
one edge (a, s') from P(s', a | s) of its model; a roll-out ends at a node without outgoing
transitions. While a pair is compared, its states at step j *differ* when
c(s_sim[j], s_phy[j]) > eps_c. Differing states are a *divergence* when the real roll-out's
node at j - 1 is one whose transition distributions the two models have been found to differ
at (``divergent``, the per-node test of ``divergence.py``); under the paper's rule
(``min_probability_gap`` given, ``divergent`` then marks S_0) when, in addition, the two
differing states' probabilities under the two models differ by at least that much
(``divergence.probability_gap``). Differing states that are no divergence are a branch both
models share; the pair is then coupled: the simulated roll-out
continues from the real roll-out's state (if the simulation has transitions there), so the
comparison goes on along the real trajectory. A pair is compared up to its first divergence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from .divergence import probability_gap
from .transitions import Nodes, TransitionModel, distance


@dataclass
class Rollouts:
    """Lock-step roll-outs: ``nodes[i, t]`` is the state at step t (-1 once ended);
    ``actions[i, t]``/``probs[i, t]`` describe the step t -> t+1 (-1 / 0 once ended)."""

    nodes: np.ndarray  # (N, L + 1)
    actions: np.ndarray  # (N, L)
    probs: np.ndarray  # (N, L)


@dataclass(frozen=True)
class Divergence:
    """A divergence after step ``step - 1`` of roll-out pair ``rollout`` (δ -> δ_s, δ_p)."""

    rollout: int
    step: int  # j: the step whose states differ
    node: int  # the real roll-out's node at j - 1: the state before divergence
    action: int  # the real roll-out's action at j - 1
    p_sim: float  # probability of the sim step into δ_s
    p_phy: float  # probability of the real step into δ_p


def paired_rollouts(sim: TransitionModel, phy: TransitionModel, nodes: Nodes,
                    starts: np.ndarray, steps: int, divergent: np.ndarray,
                    rng: np.random.Generator,
                    progress: Callable[[Iterable], Iterable] | None = None,
                    min_probability_gap: float | None = None
                    ) -> tuple[Rollouts, list[Divergence]]:
    """Roll out one pair from each start node; returns the real roll-outs (until each pair's
    comparison ends) and the divergences. ``divergent`` ``(n_nodes,)``: after which nodes
    differing states may be a divergence; ``min_probability_gap``: the paper's rule, the
    probability gap differing states need as well (None: ``divergent`` alone decides)."""
    n = len(starts)
    real = Rollouts(np.full((n, steps + 1), -1, dtype=np.int64),
                    np.full((n, steps), -1, dtype=np.int64), np.zeros((n, steps)))
    real.nodes[:, 0] = starts
    current = np.asarray(starts, dtype=np.int64).copy()  # the sim state; -1: not compared
    has_sim = np.diff(sim.offsets) > 0
    found: list[Divergence] = []
    iterator = range(steps)
    for t in (progress(iterator) if progress else iterator):
        live = np.flatnonzero((real.nodes[:, t] >= 0) & (current >= 0))
        if len(live) == 0:
            break
        edge = phy.sample(real.nodes[live, t], rng)
        live, edge = live[edge >= 0], edge[edge >= 0]
        real.nodes[live, t + 1], real.actions[live, t] = phy.dst[edge], phy.act[edge]
        real.probs[live, t] = phy.P[edge]
        pairs = np.flatnonzero(current >= 0)
        sim_edge = sim.sample(current[pairs], rng)
        out_p = real.nodes[pairs, t + 1]
        ended = (sim_edge < 0) | (out_p < 0)
        current[pairs[ended]] = -1
        pairs, sim_edge, out_p = pairs[~ended], sim_edge[~ended], out_p[~ended]
        out_s = sim.dst[sim_edge]
        differ = distance(nodes.centres[out_s], nodes.centres[out_p], nodes.weights,
                          nodes.periodic) > nodes.eps_c
        current[pairs[~differ]] = out_s[~differ]
        pairs, sim_edge, out_s, out_p = (x[differ] for x in (pairs, sim_edge, out_s, out_p))
        prev_p = real.nodes[pairs, t]
        hit = divergent[prev_p]
        if min_probability_gap is not None and hit.any():
            gap = probability_gap(sim, phy, nodes, prev_p[hit], out_s[hit], out_p[hit])
            hit[hit] = gap >= min_probability_gap
        for i, e, node in zip(pairs[hit], sim_edge[hit], prev_p[hit]):
            found.append(Divergence(int(i), t + 1, int(node), int(real.actions[i, t]),
                                    float(sim.P[e]), float(real.probs[i, t])))
        current[pairs[hit]] = -1
        # a shared branch: couple the pair on the real roll-out's state
        shared, out_shared = pairs[~hit], out_p[~hit]
        current[shared] = np.where(has_sim[out_shared], out_shared, -1)
    found.sort(key=lambda d: d.rollout)
    return real, found
