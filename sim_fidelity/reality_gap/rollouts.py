"""Paired policy roll-outs (paper eq. 7) and roll-out divergence detection.

Roll-outs run in lock step, vectorised over all roll-outs: at each step every live roll-out
draws one edge (a, s') from P(s', a | s) of its model; a roll-out ends at a node without
outgoing transitions. A pair *diverges* at the first step j whose states differ,
c(s_sim[j], s_phy[j]) > eps_c, if the two models also disagree on how probable the outcomes
are: with q_M(x) = sum of P_M(s'|s[j-1]) over s' within eps_c of x, the pair diverges when
max(|q_sim(s_phy[j]) - q_phy(s_phy[j])|, |q_sim(s_sim[j]) - q_phy(s_sim[j])|) exceeds the
probability threshold. Pairs whose states part with equal probabilities (a branch both models
share) are not compared further.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

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
    step: int  # j: first step whose states differ
    node: int  # the real roll-out's node at j - 1: the state before divergence
    action: int  # the real roll-out's action at j - 1
    p_sim: float  # probability of the sim step into δ_s
    p_phy: float  # probability of the real step into δ_p
    gap: float  # the probability difference that made it a divergence


def roll(model: TransitionModel, starts: np.ndarray, steps: int, rng: np.random.Generator,
         progress: Callable[[Iterable], Iterable] | None = None) -> Rollouts:
    """Roll out ``steps`` steps from each start node, all roll-outs at once."""
    n = len(starts)
    nodes = np.full((n, steps + 1), -1, dtype=np.int64)
    actions = np.full((n, steps), -1, dtype=np.int64)
    probs = np.zeros((n, steps))
    nodes[:, 0] = starts
    P = model.P
    iterator = range(steps)
    for t in (progress(iterator) if progress else iterator):
        live = np.flatnonzero(nodes[:, t] >= 0)
        if len(live) == 0:
            break
        edge = model.sample(nodes[live, t], rng)
        ok = edge >= 0
        live, edge = live[ok], edge[ok]
        nodes[live, t + 1] = model.dst[edge]
        actions[live, t] = model.act[edge]
        probs[live, t] = P[edge]
    return Rollouts(nodes, actions, probs)


def _mass_near(model: TransitionModel, nodes: Nodes, source: int, target: int) -> float:
    """Probability under ``model`` of moving from ``source`` to within eps_c of ``target``."""
    dst, p = model.successors(source)
    if len(dst) == 0:
        return 0.0
    near = distance(nodes.centres[dst], nodes.centres[target], nodes.weights) <= nodes.eps_c
    return float(p[near].sum())


def find_divergences(sim_r: Rollouts, phy_r: Rollouts, sim: TransitionModel,
                     phy: TransitionModel, nodes: Nodes, threshold: float) -> list[Divergence]:
    """The divergence of each roll-out pair, where there is one."""
    steps = min(sim_r.nodes.shape[1], phy_r.nodes.shape[1])
    ns, nph = sim_r.nodes[:, :steps], phy_r.nodes[:, :steps]
    valid = (ns >= 0) & (nph >= 0)
    gaps = distance(nodes.centres[np.maximum(ns, 0)], nodes.centres[np.maximum(nph, 0)],
                    nodes.weights)
    differ = valid & (gaps > nodes.eps_c)
    found = []
    for i in np.flatnonzero(differ.any(axis=1)):
        j = int(differ[i].argmax())
        prev_s, prev_p, out_s, out_p = ns[i, j - 1], nph[i, j - 1], ns[i, j], nph[i, j]
        gap = max(abs(_mass_near(sim, nodes, prev_s, t) - _mass_near(phy, nodes, prev_p, t))
                  for t in (out_p, out_s))
        if gap > threshold:
            found.append(Divergence(int(i), j, int(prev_p), int(phy_r.actions[i, j - 1]),
                                    float(sim_r.probs[i, j - 1]), float(phy_r.probs[i, j - 1]),
                                    gap))
    return found
