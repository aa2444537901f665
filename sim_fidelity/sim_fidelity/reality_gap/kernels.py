"""Kernel generation (paper Algorithm 1, GENKER).

From the two histories: shared nodes, P_sim and P_phy, S_0; N paired roll-outs from
s_0 ~ U(S_0); one kernel candidate per divergence. Candidates with the same state before
divergence are duplicates: they are merged (their fit data pooled, their divergence
distributions averaged). Each kernel's transfer function f_k is one affine least-squares fit
per action, s' = W_a [s, 1], to the transitions of the real roll-out from the state before
divergence and ``successors`` steps after it. An action needs ``min_samples`` distinct
transitions to be fitted; a candidate with no fitted action is dropped and counted.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from tqdm import tqdm

from .bags import History
from .rollouts import Divergence, Rollouts, paired_rollouts
from .spec import Spec
from .transitions import Nodes, TransitionModel, common_states, match_nodes


@dataclass
class Kernel:
    """A state-space kernel: where it is active, how reality diverged there, what to do."""

    centre: np.ndarray  # (d,) the state before divergence (a node centre)
    sigma: float  # e_k = N(0, sigma^2) over c(centre, s)
    divergence: tuple[float, float]  # (p_s, p_p) normalised
    support: int  # how many roll-outs diverged here
    fits: dict[int, np.ndarray] = field(default_factory=dict)  # action -> (d, d + 1) W_a
    samples: dict[int, int] = field(default_factory=dict)  # action -> transitions fitted


@dataclass
class Summary:
    """What a generation run saw and made."""

    transitions_sim: int
    transitions_phy: int
    edges_sim: int  # distinct (s, a, s') of P_sim
    edges_phy: int
    nodes: int
    branching_sim: float  # mean distinct successors per node with transitions
    branching_phy: float
    common_states: int
    rollouts: int
    divergences: int  # divergent roll-out pairs, before merging duplicates
    candidates: int  # distinct states before divergence
    kernels: int
    dropped: int  # candidates without enough data to fit any action

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


@dataclass
class Generation:
    kernels: list[Kernel]
    summary: Summary
    nodes: Nodes


def fit_affine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares W with y ≈ W [x, 1]; x ``(n, d)``, y ``(n, d')`` -> W ``(d', d + 1)``."""
    design = np.hstack([x, np.ones((len(x), 1))])
    return np.linalg.lstsq(design, y, rcond=None)[0].T


def generate(sim: History, phy: History, spec: Spec, rollouts: int | None = None,
             seed: int = 0, progress: bool = False) -> Generation:
    """Algorithm 1: kernels that move the simulation towards the real history."""
    def bar(desc: str):
        return (lambda it: tqdm(it, desc=desc, leave=False)) if progress else None

    n_rollouts = spec.rollouts if rollouts is None else rollouts
    pooled = np.vstack([sim.s, sim.s2, phy.s, phy.s2])
    nodes, ids = match_nodes(pooled, spec.weights, spec.eps_c, progress=bar("matching states"))
    ns, npy = len(sim), len(phy)
    models = []
    for offset, h in ((0, sim), (2 * ns, phy)):
        s_ids, s2_ids = ids[offset:offset + len(h)], ids[offset + len(h):offset + 2 * len(h)]
        models.append(TransitionModel.estimate(s_ids, h.a, s2_ids, len(nodes), spec.n_actions))
    p_sim, p_phy = models
    starts = common_states(p_sim, p_phy)
    rng = np.random.default_rng(seed)
    divergences: list[Divergence] = []
    phy_r = None
    if len(starts) and n_rollouts > 0:
        s0 = starts[rng.integers(len(starts), size=n_rollouts)]  # s_0 ~ U(S_0)
        phy_r, divergences = paired_rollouts(p_sim, p_phy, nodes, s0, spec.max_steps,
                                             spec.successors, spec.probability_threshold, rng,
                                             bar("paired roll-outs"))
    kernels, candidates = _build(divergences, phy_r, nodes, spec)
    summary = Summary(ns, npy, len(p_sim.src), len(p_phy.src), len(nodes),
                      p_sim.branching(), p_phy.branching(), len(starts),
                      n_rollouts if len(starts) else 0, len(divergences), candidates,
                      len(kernels), candidates - len(kernels))
    return Generation(kernels, summary, nodes)


def _build(divergences: list[Divergence], phy_r: Rollouts | None, nodes: Nodes,
           spec: Spec) -> tuple[list[Kernel], int]:
    """Merge divergences by the state before divergence, fit, drop what cannot be fitted."""
    groups: dict[int, list[Divergence]] = {}
    for div in divergences:
        groups.setdefault(div.node, []).append(div)
    kernels = []
    for node, group in groups.items():
        triples = set()
        for div in group:
            path, acts = phy_r.nodes[div.rollout], phy_r.actions[div.rollout]
            for t in range(div.step - 1, div.step + spec.successors):
                if t >= len(acts) or path[t + 1] < 0:
                    break
                triples.add((int(path[t]), int(acts[t]), int(path[t + 1])))
        data = np.array(sorted(triples), dtype=np.int64)
        kernel = Kernel(centre=nodes.centres[node].copy(), sigma=spec.sigma,
                        divergence=_mean_distribution(group), support=len(group))
        for action in np.unique(data[:, 1]):
            rows = data[data[:, 1] == action]
            if len(rows) >= spec.min_samples:
                kernel.fits[int(action)] = fit_affine(nodes.centres[rows[:, 0]],
                                                      nodes.centres[rows[:, 2]])
                kernel.samples[int(action)] = len(rows)
        if kernel.fits:
            kernels.append(kernel)
    kernels.sort(key=lambda k: -k.support)  # stable: ties keep discovery order
    return kernels, len(groups)


def _mean_distribution(group: list[Divergence]) -> tuple[float, float]:
    pairs = np.array([[d.p_sim, d.p_phy] for d in group])
    totals = pairs.sum(axis=1, keepdims=True)
    normalised = np.divide(pairs, totals, out=np.full_like(pairs, 0.5), where=totals > 0)
    mean = normalised.mean(axis=0)
    return float(mean[0]), float(mean[1])
