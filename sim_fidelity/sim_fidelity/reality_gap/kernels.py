"""Kernel generation (paper Algorithm 1, GENKER).

From the two histories: shared nodes, P_sim and P_phy, S_0; N paired roll-outs from
s_0 ~ U(S_0), and where a pair's states differ, whether that is a divergence by the spec's
``divergence.test`` (``divergence.py``): *g-test*, the node before was declared divergent by a
per-node test (false discoveries controlled across nodes); *paper*, the differing states'
probabilities under the two models differ by at least ``min_probability_gap`` (the divergent
nodes are then the nodes divergences happened after). The divergent nodes form *regions*
(connected where node centres are within 2 eps_c); each region a divergence fell in becomes one
kernel, active around all of its nodes. Its transfer function is one regularised linear fit
over state and action, s' = W [s, u, 1], to every deployment transition that starts in the
region, pulled towards the same fit to the simulation's transitions there (itself pulled towards
the simulation's fit over all its data) where the deployment data does not determine it.
A region with fewer than ``min_samples`` deployment transitions is dropped and counted; so is
one whose fitted transfer moves the simulation's own prediction (the region's simulation fit)
by less than eps_c / 2 on average over its deployment data: the difference is real but too
small to matter at the resolution of the nodes, and such a kernel would change nothing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from tqdm import tqdm

from .bags import History
from .divergence import NodeTests, compare_nodes
from .rollouts import Divergence, paired_rollouts
from .spec import Spec
from .transitions import (
    Nodes,
    TransitionModel,
    common_states,
    component_difference,
    distance,
    match_nodes,
    unwrap_near,
    wrap_states,
)

LINK = 2.0  # divergent nodes whose centres are within LINK * eps_c belong to one region


@dataclass
class Kernel:
    """A state-space kernel: where it is active, how reality diverged there, what to do."""

    centre: np.ndarray  # (d,) the state before divergence most roll-outs diverged after
    members: np.ndarray  # (n, d) centres of the divergent nodes the kernel covers
    sigma: float  # e_k = N(0, sigma^2) over c_k(s) = min over members of c(member, s)
    divergence: tuple[float, float]  # (p_s, p_p) normalised
    support: int  # how many roll-outs diverged in the region
    transfer: np.ndarray  # (d, d + m + 1): f_k(s, u) = W [s, u, 1]
    samples: int  # deployment transitions fitted

    def predict(self, state: np.ndarray, action: np.ndarray,
                periodic: np.ndarray | None = None) -> np.ndarray:
        """f_k(s, u) for one state and continuous action (or rows of each). ``periodic`` marks
        the components that wrap at +-pi: they enter the map within pi of the centre's and
        leave it wrapped (the fit saw them so)."""
        s = unwrap_near(np.atleast_2d(state), self.centre, periodic)
        u = np.atleast_2d(action)
        out = wrap_states(np.hstack([s, u, np.ones((len(s), 1))]) @ self.transfer.T, periodic)
        return out if np.ndim(state) == 2 else out[0]


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
    common_states: int  # nodes in S_0 (with transitions on both sides)
    common_samples_sim: int  # sampled states s of the side's transitions whose node is in S_0
    common_samples_phy: int
    tested_nodes: int  # g-test: nodes with an action seen on both sides; paper: S_0
    divergent_nodes: int  # g-test: declared divergent; paper: a divergence happened after
    rollouts: int
    divergences: int  # divergent roll-out pairs, before merging by region
    candidates: int  # regions a divergence fell in
    kernels: int
    dropped: int  # candidates without enough deployment data to fit
    immaterial: int  # candidates whose fit moves the simulation by < eps_c / 2 on average

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


@dataclass
class Generation:
    kernels: list[Kernel]
    summary: Summary
    nodes: Nodes
    tested: np.ndarray  # (n_nodes,) bool: g-test: tested; paper: in S_0
    divergent: np.ndarray  # (n_nodes,) bool: the nodes the kernels' regions are made of
    tests: NodeTests | None  # the g-test's statistics (None under the paper's rule)


def fit_transfer(x: np.ndarray, y: np.ndarray, prior: np.ndarray, ridge: float,
                 scale: np.ndarray) -> np.ndarray:
    """W = [B, c] of y ≈ B x + c: least squares about the data's mean, with the slopes pulled
    towards the prior's by ``ridge`` ||(B - B_prior) diag(scale)||^2.

    ``x`` ``(n, p)`` inputs, ``y`` ``(n, d)`` outputs, ``prior`` ``(d, p + 1)``, ``scale``
    ``(p,)`` the typical size of each input (so ``ridge`` counts samples). The fit passes
    through the data's mean; slopes along directions the data does not vary in (a command
    never given there, too few samples) are the prior's.
    """
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - x_mean, y - y_mean
    penalty = ridge * np.diag(np.asarray(scale, float) ** 2)
    slopes = np.linalg.solve(xc.T @ xc + penalty, xc.T @ yc + penalty @ prior[:, :-1].T).T
    return np.c_[slopes, y_mean - slopes @ x_mean]


def divergent_regions(nodes: Nodes, divergent: np.ndarray) -> np.ndarray:
    """Region label per node (-1 where not divergent): connected components of the divergent
    nodes, two nodes connected when their centres are within ``LINK * eps_c``."""
    label = np.full(len(nodes), -1, dtype=np.int64)
    idx = np.flatnonzero(divergent)
    if len(idx) == 0:
        return label
    centres = nodes.centres[idx]
    step = max(1, (1 << 22) // len(idx))
    reach = LINK * nodes.eps_c
    links = [np.nonzero(distance(centres[i:i + step, None, :], centres[None, :, :],
                                 nodes.weights, nodes.periodic) < reach)
             for i in range(0, len(idx), step)]
    src = np.concatenate([a + i * step for i, (a, _) in enumerate(links)])
    dst = np.concatenate([b for _, b in links])
    comp = np.arange(len(idx))
    while True:  # propagate the smallest index over the links until stable
        spread = comp.copy()
        np.minimum.at(spread, src, comp[dst])
        spread = spread[spread]
        if np.array_equal(spread, comp):
            break
        comp = spread
    label[idx] = np.unique(comp, return_inverse=True)[1].ravel()
    return label


def generate(sim: History, phy: History, spec: Spec, rollouts: int | None = None,
             seed: int = 0, progress: bool = False) -> Generation:
    """Algorithm 1: kernels that move the simulation towards the real history."""
    def bar(desc: str):
        return (lambda it: tqdm(it, desc=desc, leave=False)) if progress else None

    n_rollouts = spec.rollouts if rollouts is None else rollouts
    pooled = np.vstack([sim.s, sim.s2, phy.s, phy.s2])
    periodic = spec.periodic
    nodes, ids = match_nodes(pooled, spec.weights, spec.eps_c, progress=bar("matching states"),
                             periodic=periodic)
    ns, npy = len(sim), len(phy)
    sim_src, phy_src = ids[:ns], ids[2 * ns:2 * ns + npy]
    p_sim = TransitionModel.estimate(sim_src, sim.a, ids[ns:2 * ns], len(nodes), spec.n_actions)
    p_phy = TransitionModel.estimate(phy_src, phy.a, ids[2 * ns + npy:], len(nodes),
                                     spec.n_actions)
    starts = common_states(p_sim, p_phy)
    in_s0 = np.isin(np.arange(len(nodes)), starts)
    tests = compare_nodes(p_sim, p_phy, spec.fdr) if spec.divergence_test == "g-test" else None
    rng = np.random.default_rng(seed)
    divergences: list[Divergence] = []
    if len(starts) and n_rollouts > 0:
        s0 = starts[rng.integers(len(starts), size=n_rollouts)]  # s_0 ~ U(S_0)
        _, divergences = paired_rollouts(p_sim, p_phy, nodes, s0, spec.max_steps,
                                         in_s0 if tests is None else tests.divergent, rng,
                                         bar("paired roll-outs"), spec.min_probability_gap)
    tested = in_s0 if tests is None else tests.tested
    divergent = tests.divergent if tests is not None else np.isin(
        np.arange(len(nodes)), [d.node for d in divergences])
    region = divergent_regions(nodes, divergent)
    groups: dict[int, list[Divergence]] = {}
    for div in divergences:
        groups.setdefault(int(region[div.node]), []).append(div)
    inputs = np.vstack([np.hstack([h.s, h.u]) for h in (sim, phy)])
    scale = inputs.std(axis=0) if len(inputs) else np.ones(inputs.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    identity = np.hstack([np.eye(len(spec.state)), np.zeros((len(spec.state),
                                                             len(spec.action) + 1))])
    everywhere = identity  # the simulation's response over all its data: the regions' prior
    if ns:
        everywhere = fit_transfer(np.hstack([sim.s, sim.u]), unwrap_near(sim.s2, sim.s, periodic),
                                  identity, spec.ridge, scale)
    kernels, immaterial = [], 0
    for label, group in groups.items():
        in_sim, in_phy = region[sim_src] == label, region[phy_src] == label
        if in_phy.sum() < spec.min_samples:
            continue
        at = np.bincount([d.node for d in group]).argmax()
        centre = nodes.centres[at]
        prior = everywhere
        if in_sim.any():
            prior = fit_transfer(*_fit_data(sim, in_sim, centre, periodic), everywhere,
                                 spec.ridge, scale)
        x, y = _fit_data(phy, in_phy, centre, periodic)
        transfer = fit_transfer(x, y, prior, spec.ridge, scale)
        design = np.hstack([x, np.ones((len(x), 1))])
        moved = component_difference(design @ transfer.T, design @ prior.T, periodic)
        if (moved @ spec.weights).mean() < spec.eps_c / 2:
            immaterial += 1
            continue
        kernels.append(Kernel(centre=centre.copy(),
                              members=nodes.centres[region == label].copy(), sigma=spec.sigma,
                              divergence=_mean_distribution(group), support=len(group),
                              transfer=transfer, samples=int(in_phy.sum())))
    kernels.sort(key=lambda k: -k.support)  # stable: ties keep discovery order
    summary = Summary(ns, npy, len(p_sim.src), len(p_phy.src), len(nodes),
                      p_sim.branching(), p_phy.branching(), len(starts),
                      int(np.isin(sim_src, starts).sum()), int(np.isin(phy_src, starts).sum()),
                      int(tested.sum()), int(divergent.sum()), n_rollouts if len(starts) else 0,
                      len(divergences), len(groups), len(kernels),
                      len(groups) - len(kernels) - immaterial, immaterial)
    return Generation(kernels, summary, nodes, tested, divergent, tests)


def _fit_data(h: History, rows: np.ndarray, centre: np.ndarray,
              periodic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inputs [s, u] and targets s' of ``rows`` for a kernel's fit, periodic components
    unwrapped about the kernel's centre (s) and about s (s'), so the linear fit sees no wrap."""
    s = unwrap_near(h.s[rows], centre, periodic)
    return np.hstack([s, h.u[rows]]), unwrap_near(h.s2[rows], s, periodic)


def _mean_distribution(group: list[Divergence]) -> tuple[float, float]:
    pairs = np.array([[d.p_sim, d.p_phy] for d in group])
    totals = pairs.sum(axis=1, keepdims=True)
    normalised = np.divide(pairs, totals, out=np.full_like(pairs, 0.5), where=totals > 0)
    mean = normalised.mean(axis=0)
    return float(mean[0]), float(mean[1])
