"""Which parts of a scene can be integrated independently, and how to share them among threads.

A *unit* is a top-level non-static model: its bodies are joined by joints (and its links may
touch each other), so it is never split. Static models are shared by every part. The distance
between two units is the smallest gap between the world-aligned boxes of their collision geoms;
two units belong to one *group* while that gap is within what both can move in the grouping
horizon (``|v| T + |g| T^2 / 2`` each, ``v`` bounding the speed of each geom's points): only then
can they touch, so groups are the islands that may form within the horizon (a conservative
superset of MuJoCo's constraint islands). Groups are dealt out to parts, contiguous along the axis
of widest spread, so that groups that may meet next are likely in one part already. The same
bound gives the time until units of different parts could touch at the earliest: the engine
checks again before then. Speed bounds are :data:`GROWTH` times the speed of a geom's fastest
point now; gap bounds may be raised to exact distances by the caller (``refine``), and the part
of a separation across gravity is closed by speed alone (:func:`across_gravity_time`). Pure
numpy; imports nothing of MuJoCo.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

Refine = Callable[[np.ndarray, np.ndarray, np.ndarray], None]

MIN_PAD = 0.001  # metres every unit's reach is grown by: contact margins and round-off
ROW_CHUNK = 256  # geoms per block of the all-pairs gap computation
GROWTH = 1.25  # speed bounds are this many times the speed now: the margin for acceleration
_NEXT, _LAST = [1, 2, 0], [2, 0, 1]  # axis orders of a cross product


def geom_boxes(xpos: np.ndarray, xmat: np.ndarray, aabb: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """World-aligned boxes ``(g, 3)`` lower and upper around geoms with local boxes ``aabb``
    ``(g, 6)`` (centre, half sizes; MuJoCo's ``geom_aabb``) at ``xpos`` ``(g, 3)``, ``xmat``
    ``(g, 9)``."""
    rot = xmat.reshape(-1, 3, 3)
    centre = xpos + np.einsum("gij,gj->gi", rot, aabb[:, :3])
    half = np.einsum("gij,gj->gi", np.abs(rot), aabb[:, 3:])
    return centre - half, centre + half


def point_speeds(cvel: np.ndarray, arm: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """A bound of the speed of every point of each geom ``(g,)``, :data:`GROWTH` times what it
    is now: ``cvel`` ``(g, 6)`` is the geom body's velocity (angular, linear) at a reference point
    (MuJoCo's ``cvel``: its root's subtree centre of mass), ``arm`` ``(g, 3)`` the geom centre
    from that point, ``radius`` the geom's bounding radius."""
    w, v = cvel[:, :3], cvel[:, 3:]
    at_centre = v + w[:, _NEXT] * arm[:, _LAST] - w[:, _LAST] * arm[:, _NEXT]  # v + w x arm
    spin = np.sqrt(np.einsum("gi,gi->g", w, w))
    return GROWTH * (np.sqrt(np.einsum("gi,gi->g", at_centre, at_centre)) + spin * radius)


def gaps(lo_a: np.ndarray, hi_a: np.ndarray, centre_a: np.ndarray, radius_a: np.ndarray,
         lo_b: np.ndarray, hi_b: np.ndarray, centre_b: np.ndarray, radius_b: np.ndarray
         ) -> np.ndarray:
    """``(a, b)`` lower bounds of the distance between geoms ``a`` and ``b``: the larger of the
    gap between their world boxes (``lo``, ``hi``) and between their bounding spheres."""
    sep = np.maximum(0.0, np.maximum(lo_a[:, None, :] - hi_b[None, :, :],
                                     lo_b[None, :, :] - hi_a[:, None, :]))
    boxes = np.sqrt(np.einsum("ijk,ijk->ij", sep, sep))
    between = centre_a[:, None, :] - centre_b[None, :, :]
    spheres = (np.sqrt(np.einsum("ijk,ijk->ij", between, between))
               - radius_a[:, None] - radius_b[None, :])
    return np.maximum(boxes, np.maximum(spheres, 0.0))


def across_gravity_time(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...],
                        speed: np.ndarray, down: np.ndarray) -> np.ndarray:
    """``(a, b)`` earliest times geoms ``a`` and ``b`` (each ``(lo, hi, centre, radius)``) could
    touch when only their speeds (``speed``: the pairs' summed speed bounds) close the part of
    their separation across gravity (``down``: its unit vector; zeros without gravity), the
    larger of that of their world boxes and of their bounding spheres: gravity cannot close it,
    so resting neighbours a few millimetres apart side by side are not expected to meet as soon
    as falling ones would. Another lower bound of the contact time beside
    :func:`time_to_contact`."""
    (lo_a, hi_a, c_a, r_a), (lo_b, hi_b, c_b, r_b) = a, b
    sep = np.maximum(0.0, np.maximum(lo_a[:, None, :] - hi_b[None, :, :],
                                     lo_b[None, :, :] - hi_a[:, None, :]))
    between = c_a[:, None, :] - c_b[None, :, :]
    room = np.maximum(_across(sep, down),
                      _across(between, down) - r_a[:, None] - r_b[None, :]) - 2 * MIN_PAD
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(speed > 0, np.maximum(room, 0.0) / speed, np.inf)
    return np.where(room <= 0, 0.0, t)


def _across(v: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Length of the part of vectors ``v`` (..., 3) across the unit vector ``down``."""
    along = v @ down
    return np.sqrt(np.maximum(np.einsum("...k,...k->...", v, v) - along * along, 0.0))


def pair_bounds(lo: np.ndarray, hi: np.ndarray, centre: np.ndarray, radius: np.ndarray,
                speed: np.ndarray, unit: np.ndarray, nunits: int, horizon: float,
                gravity: float, refine: Refine | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of units ``(nunits, nunits)``: the *slack* (smallest gap between two of their geoms
    minus what both geoms can move within ``horizon``; <= 0: they may touch) and the earliest
    time two of their geoms could touch (:func:`gaps`, :func:`time_to_contact`). ``speed`` bounds
    each geom's speed; ``unit`` owns each geom (-1: none). Pairs without geoms, and the diagonal,
    are inf. ``refine(gap, rows, cols)`` may raise the gaps of a block of geom pairs (``rows``,
    ``cols``: indices into the arguments) in place to better lower bounds (exact distances)."""
    slack = np.full((nunits, nunits), np.inf)
    ttc = np.full((nunits, nunits), np.inf)
    own = np.flatnonzero(unit >= 0)
    own = own[np.argsort(unit[own], kind="stable")]  # geoms grouped by unit
    lo, hi, centre, radius = lo[own], hi[own], centre[own], radius[own]
    speed, unit = speed[own], unit[own]
    if not len(own):
        return slack, ttc
    move = reach(speed, horizon, gravity)
    starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])  # first geom of each unit
    units = unit[starts]
    ends = np.r_[starts[1:], len(own)]
    first = 0
    while first < len(starts):  # blocks of whole units, about ROW_CHUNK geoms each
        last = max(first + 1, int(np.searchsorted(starts, starts[first] + ROW_CHUNK)))
        last = min(last, len(starts))
        rows = slice(starts[first], ends[last - 1])
        gap = gaps(lo[rows], hi[rows], centre[rows], radius[rows], lo, hi, centre, radius)
        if refine is not None:
            refine(gap, own[rows], own)
        local = starts[first:last] - starts[first]
        block = np.ix_(units[first:last], units)
        for out, value in ((slack, gap - move[rows, None] - move[None, :]),
                           (ttc, time_to_contact(gap, speed[rows, None] + speed[None, :],
                                                 gravity))):
            per_unit = np.minimum.reduceat(np.minimum.reduceat(value, starts, axis=1), local,
                                           axis=0)
            out[block] = per_unit
        first = last
    np.fill_diagonal(slack, np.inf)
    np.fill_diagonal(ttc, np.inf)
    return np.minimum(slack, slack.T), np.minimum(ttc, ttc.T)


def reach(speed: np.ndarray, horizon: float, gravity: float) -> np.ndarray:
    """How far each geom can move in ``horizon`` seconds at most (plus ``MIN_PAD``)."""
    return speed * horizon + 0.5 * gravity * horizon ** 2 + MIN_PAD


def time_to_contact(gaps: np.ndarray, speed: np.ndarray, gravity: float) -> np.ndarray:
    """Earliest time two geoms ``gaps`` apart can touch, closing at up to ``speed`` (their speed
    bounds summed) and each moved by :func:`reach`'s gravity term (0: may touch already)."""
    room = gaps - 2 * MIN_PAD
    with np.errstate(divide="ignore", invalid="ignore"):
        if gravity > 0:  # g T^2 + v T - room = 0
            t = (-speed + np.sqrt(speed * speed + 4 * gravity * np.maximum(room, 0.0))) / (
                2 * gravity)
        else:
            t = np.where(speed > 0, np.maximum(room, 0.0) / speed, np.inf)
    return np.where(room <= 0, 0.0, t)


def time_to_contact_scalar(gap: float, speed: float, gravity: float) -> float:
    """:func:`time_to_contact` of one pair, without numpy's per-call cost."""
    room = gap - 2 * MIN_PAD
    if room <= 0:
        return 0.0
    if gravity > 0:
        return (-speed + math.sqrt(speed * speed + 4 * gravity * room)) / (2 * gravity)
    return room / speed if speed > 0 else math.inf


def components(n: int, pairs: np.ndarray) -> np.ndarray:
    """Connected-component label of each of ``n`` nodes joined by ``pairs`` ``(k, 2)`` (labels are
    the smallest member of each component)."""
    parent = np.arange(n)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        ra, rb = root(int(a)), root(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(i) for i in range(n)], int)


def groups(slack: np.ndarray) -> list[frozenset[int]]:
    """Units that may touch (slack <= 0, :func:`pair_bounds`), joined transitively."""
    n = len(slack)
    if n == 0:
        return []
    near = slack <= 0
    np.fill_diagonal(near, False)
    label = components(n, np.argwhere(np.triu(near)))
    return [frozenset(np.flatnonzero(label == k).tolist()) for k in np.unique(label)]


def deal(group_list: list[frozenset[int]], cost: np.ndarray, centre: np.ndarray,
         nparts: int) -> list[frozenset[int]]:
    """Groups dealt into at most ``nparts`` parts (sets of units) of similar total ``cost``:
    sorted along the axis of widest spread of the unit ``centre``s and cut into contiguous runs,
    so neighbours share a part. No part is empty; a group is never split."""
    if not group_list:
        return []
    nparts = max(1, min(nparts, len(group_list)))
    gcost = np.array([cost[list(g)].sum() for g in group_list], float)
    gcentre = np.array([np.nanmean(centre[list(g)], axis=0) if np.isfinite(centre[list(g)]).any()
                        else np.full(3, np.nan) for g in group_list])
    finite = np.all(np.isfinite(gcentre), axis=1)
    spread = np.ptp(gcentre[finite], axis=0) if finite.any() else np.zeros(3)
    key = np.where(finite, gcentre[:, int(np.argmax(spread))], np.inf)
    order = np.argsort(key, kind="stable")
    target = gcost.sum() / nparts
    parts: list[set[int]] = [set()]
    acc = 0.0
    for i, gi in enumerate(order):
        groups_left = len(order) - i
        if len(parts) < nparts and parts[-1] and (
                acc + gcost[gi] / 2 > target * len(parts)
                or groups_left <= nparts - len(parts)):
            parts.append(set())
        parts[-1].update(group_list[gi])
        acc += gcost[gi]
    return [frozenset(p) for p in parts]


def imbalance(part_costs: np.ndarray) -> float:
    """Largest part cost over the mean part cost (1.0 = perfectly balanced)."""
    mean = float(np.mean(part_costs)) if len(part_costs) else 0.0
    return float(np.max(part_costs)) / mean if mean > 0 else 1.0
