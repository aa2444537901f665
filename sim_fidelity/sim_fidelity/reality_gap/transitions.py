"""Shared state nodes and the frequentist transition models P_sim, P_phy (paper eqs. 5-8).

States of both sides are matched into one set of *nodes*: a state joins the nearest node
leader within ``c(s, leader) < eps_c`` (eq. 8), otherwise it founds a new node (leader
clustering over the unique states in sorted order, so the result does not depend on which side
or bag came first). Every state then belongs to its nearest leader, and a node's centre is the
mean of its members. Transitions (s, a, s') become edges (node, action, node).

A state component the spec declares ``periodic`` is an angle in radians with period 2 pi: it is
wrapped into [-pi, pi), its difference in c(s, s') is the shorter way round the circle, and a
node's centre takes the circular mean of its members there.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable

import numpy as np

_BLOCK = 1 << 22  # elements per distance block (32 MB of float64)
TURN = 2.0 * np.pi  # the period of a periodic state component (an angle in radians)


def wrap_angle(x: np.ndarray) -> np.ndarray:
    """Angles in [-pi, pi)."""
    return (np.asarray(x, float) + np.pi) % TURN - np.pi


def periodic_mask(periodic: np.ndarray | None, d: int) -> np.ndarray:
    """``periodic`` as a boolean ``(d,)`` mask (None: no component is periodic)."""
    return np.zeros(d, dtype=bool) if periodic is None else np.asarray(periodic, dtype=bool)


def wrap_states(states: np.ndarray, periodic: np.ndarray | None) -> np.ndarray:
    """A copy of ``states`` (rows) with the periodic components wrapped into [-pi, pi)."""
    out = np.array(states, dtype=float)
    mask = periodic_mask(periodic, out.shape[-1])
    out[..., mask] = wrap_angle(out[..., mask])
    return out


def unwrap_near(states: np.ndarray, reference: np.ndarray,
                periodic: np.ndarray | None) -> np.ndarray:
    """``states`` with each periodic component moved by whole turns to within pi of
    ``reference``'s (reference + the shorter signed difference), so a linear map about the
    reference sees no jump at the wrap."""
    out = np.array(states, dtype=float)
    mask = periodic_mask(periodic, out.shape[-1])
    if mask.any():
        ref = np.broadcast_to(np.asarray(reference, float), out.shape)[..., mask]
        out[..., mask] = ref + wrap_angle(out[..., mask] - ref)
    return out


def component_difference(a: np.ndarray, b: np.ndarray,
                         periodic: np.ndarray | None = None) -> np.ndarray:
    """|s_i - s'_i| per component, the shorter way round for periodic ones."""
    diff = np.abs(np.asarray(a, float) - np.asarray(b, float))
    mask = periodic_mask(periodic, diff.shape[-1])
    if mask.any():
        turned = diff[..., mask] % TURN
        diff[..., mask] = np.minimum(turned, TURN - turned)
    return diff


def distance(a: np.ndarray, b: np.ndarray, weights: np.ndarray,
             periodic: np.ndarray | None = None) -> np.ndarray:
    """c(s, s') = sum_i w_i |s_i - s'_i|, broadcast over leading axes; periodic components
    count their difference the shorter way round."""
    return component_difference(a, b, periodic) @ weights


def _l1(points: np.ndarray, centre: np.ndarray, period: np.ndarray) -> np.ndarray:
    """L1 distance of ``points`` ``(n, d)`` to one ``centre`` ``(d,)`` in scaled units, where
    ``period`` (``(d,)``, 0 for a non-periodic component) is a periodic component's period."""
    diff = np.abs(points - centre)
    return np.where(period > 0, np.minimum(diff, period - diff), diff).sum(axis=1)


def _nearest(points: np.ndarray, centres: np.ndarray,
             period: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Index of, and L1 distance to, the nearest centre for each point (blocked over points).
    Points and centres are in scaled units, periodic components (``period`` > 0) wrapped into
    one period."""
    n, k = len(points), len(centres)
    idx, dist = np.zeros(n, dtype=np.int64), np.full(n, np.inf)
    if k == 0:
        return idx, dist
    period = np.zeros(points.shape[1]) if period is None else period
    step = max(1, _BLOCK // k)
    for start in range(0, n, step):
        block = points[start:start + step]
        d = np.zeros((len(block), k))
        for j in range(points.shape[1]):
            diff = np.abs(block[:, j, None] - centres[None, :, j])
            d += np.minimum(diff, period[j] - diff) if period[j] > 0 else diff
        idx[start:start + step] = d.argmin(axis=1)
        dist[start:start + step] = d[np.arange(len(block)), idx[start:start + step]]
    return idx, dist


@dataclass
class Nodes:
    """Node centres in state space and the distance that defines them."""

    centres: np.ndarray  # (K, d)
    weights: np.ndarray  # (d,)
    eps_c: float
    periodic: np.ndarray | None = None  # (d,) bool: components that wrap at +-pi

    def __post_init__(self) -> None:
        self.periodic = periodic_mask(self.periodic, len(self.weights))

    def __len__(self) -> int:
        return len(self.centres)


def _nearest_in_window(points: np.ndarray, centres: np.ndarray, axis: int | None,
                       period: np.ndarray, block: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`_nearest` for points and centres both sorted along ``axis`` (a non-periodic
    component), looking only at centres within 1 along ``axis`` of each block: exact wherever
    the nearest distance is < 1. ``axis`` None: every centre is looked at."""
    if axis is None:
        return _nearest(points, centres, period)
    n = len(points)
    idx, dist = np.zeros(n, dtype=np.int64), np.full(n, np.inf)
    keys = centres[:, axis]
    for start in range(0, n, block):
        chunk = points[start:start + block]
        lo = np.searchsorted(keys, chunk[0, axis] - 1.0, side="left")
        hi = np.searchsorted(keys, chunk[-1, axis] + 1.0, side="right")
        if hi > lo:
            i, d = _nearest(chunk, centres[lo:hi], period)
            idx[start:start + block], dist[start:start + block] = i + lo, d
    return idx, dist


def _centres(unique: np.ndarray, members: np.ndarray, counts: np.ndarray,
             periodic: np.ndarray) -> np.ndarray:
    """Each node's mean of its members; the circular mean in periodic components."""
    centres = np.zeros((len(counts), unique.shape[1]))
    np.add.at(centres, members, unique)
    centres /= counts[:, None]
    if periodic.any():
        angles = unique[:, periodic]
        sin, cos = (np.zeros((len(counts), int(periodic.sum()))) for _ in range(2))
        np.add.at(sin, members, np.sin(angles))
        np.add.at(cos, members, np.cos(angles))
        centres[:, periodic] = wrap_angle(np.arctan2(sin, cos))
    return centres


def match_nodes(states: np.ndarray, weights: np.ndarray, eps_c: float,
                progress: Callable[[Iterable], Iterable] | None = None,
                periodic: np.ndarray | None = None) -> tuple[Nodes, np.ndarray]:
    """Cluster ``states`` ``(n, d)`` into nodes; returns the nodes and each state's node id.

    Works in scaled units u = s w / eps_c, where c < eps_c is an L1 distance < 1. Unique states
    are visited sorted along the non-periodic axis of widest spread, so leaders come out sorted
    too and each block of states is compared only with the leaders within 1 along that axis
    (if every component is periodic, with all leaders). ``periodic`` (``(d,)`` bool) marks the
    components that wrap at +-pi. ``progress`` wraps the block iterator (e.g. ``tqdm``).
    """
    weights = np.asarray(weights, float)
    periodic = periodic_mask(periodic, len(weights))
    scale = weights / eps_c
    period = np.where(periodic, TURN * scale, 0.0)
    unique, inverse = np.unique(wrap_states(states, periodic), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    scaled = unique * scale
    spread = np.where(periodic, -np.inf, np.ptp(scaled, axis=0))
    axis = None if periodic.all() else int(spread.argmax())
    order = np.argsort(scaled[:, axis], kind="stable") if axis is not None \
        else np.arange(len(scaled))
    points = scaled[order]
    leaders = np.empty((0, points.shape[1]))
    block = 4096
    starts = range(0, len(points), block)
    for start in (progress(starts) if progress else starts):
        chunk = points[start:start + block]
        _, near = _nearest_in_window(chunk, leaders, axis, period)
        rest = chunk[near >= 1.0]
        fresh = []
        while len(rest):
            fresh.append(rest[0])
            rest = rest[_l1(rest, rest[0], period) >= 1.0]
        if fresh:
            leaders = np.vstack([leaders, fresh])
    members_sorted, _ = _nearest_in_window(points, leaders, axis, period)
    members = np.empty_like(members_sorted)
    members[order] = members_sorted
    counts = np.bincount(members, minlength=len(leaders))
    relabel = np.cumsum(counts > 0) - 1
    members = relabel[members]
    centres = _centres(unique, members, counts[counts > 0], periodic)
    return Nodes(centres, weights, float(eps_c), periodic), members[inverse]


@dataclass
class TransitionModel:
    """P(s'|s,a) = T(s'|s,a) pi(a|s) over nodes, as edges sorted by source node (CSR)."""

    n_nodes: int
    n_actions: int
    src: np.ndarray  # (E,) source node
    act: np.ndarray  # (E,) action id
    dst: np.ndarray  # (E,) destination node
    count: np.ndarray  # (E,) how often (s, a, s') was observed
    T: np.ndarray  # (E,) T(s'|s,a)
    pi: np.ndarray  # (E,) pi(a|s)
    offsets: np.ndarray  # (n_nodes + 1,) edges of node i are offsets[i]:offsets[i+1]

    @cached_property
    def P(self) -> np.ndarray:
        """P(s'|s,a) = T(s'|s,a) pi(a|s) per edge (eq. 5); sums to 1 over each node's edges."""
        return self.T * self.pi

    @classmethod
    def estimate(cls, s: np.ndarray, a: np.ndarray, s2: np.ndarray, n_nodes: int,
                 n_actions: int) -> "TransitionModel":
        """Frequentist estimate from node-level transitions (s, a, s')."""
        s, a, s2 = (np.asarray(x, dtype=np.int64) for x in (s, a, s2))
        keys, count = np.unique((s * n_actions + a) * n_nodes + s2, return_counts=True)
        src_act, dst = np.divmod(keys, n_nodes)
        src, act = np.divmod(src_act, n_actions)
        sa = np.unique(src_act, return_inverse=True)[1].ravel()
        n_sa = np.bincount(sa, weights=count)[sa]
        n_s = np.bincount(src, weights=count, minlength=n_nodes)[src]
        T, pi = count / n_sa, n_sa / n_s
        offsets = np.searchsorted(src, np.arange(n_nodes + 1))
        return cls(n_nodes, n_actions, src, act, dst, count, T, pi, offsets)

    @cached_property
    def _cumulative(self) -> np.ndarray:
        return np.cumsum(self.P)

    def states(self) -> np.ndarray:
        """Nodes with at least one outgoing transition: States(P)."""
        return np.flatnonzero(np.diff(self.offsets) > 0)

    def branching(self) -> float:
        """Mean number of distinct successor nodes of the nodes with transitions."""
        states = self.states()
        pairs = np.unique(self.src * self.n_nodes + self.dst)
        return round(len(pairs) / len(states), 3) if len(states) else 0.0

    def successors(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """SR(s) (eq. 6): reachable nodes and P(s'|s) = sum_a P(s'|s,a)."""
        lo, hi = self.offsets[node], self.offsets[node + 1]
        dst, inv = np.unique(self.dst[lo:hi], return_inverse=True)
        return dst, np.bincount(inv.ravel(), weights=self.P[lo:hi])

    def sample(self, nodes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One edge per node drawn with probability P(s', a | s); -1 where a node has no edges."""
        nodes = np.asarray(nodes, dtype=np.int64)
        lo, hi = self.offsets[nodes], self.offsets[nodes + 1]
        cum = self._cumulative
        base = np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)
        top = np.where(hi > 0, cum[np.maximum(hi - 1, 0)], 0.0)
        target = base + rng.random(len(nodes)) * (top - base)
        edge = np.clip(np.searchsorted(cum, target, side="right"), lo, np.maximum(hi - 1, lo))
        return np.where(hi > lo, edge, -1)


def common_states(sim: TransitionModel, phy: TransitionModel) -> np.ndarray:
    """S_0 = States(P_sim) ∩ States(P_phy)."""
    return np.intersect1d(sim.states(), phy.states())
