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
of a separation across gravity is closed by speed alone (:func:`across_gravity_time`). numpy, and
the per-geom and per-pair bounds as compiled loops (:mod:`..jit`: the engine checks them after
every chunk of steps); imports nothing of MuJoCo.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..jit import kernel

Refine = Callable[[np.ndarray, np.ndarray, np.ndarray], None]

MIN_PAD = 0.001  # metres every unit's reach is grown by: contact margins and round-off
ROW_CHUNK = 256  # geoms per block of the all-pairs gap computation
GROWTH = 1.25  # speed bounds are this many times the speed now: the margin for acceleration


def geom_motion(xpos: np.ndarray, xmat: np.ndarray, cvel: np.ndarray, com: np.ndarray,
                geoms: np.ndarray, body: np.ndarray, root: np.ndarray, aabb: np.ndarray,
                radius: np.ndarray) -> tuple[np.ndarray, ...]:
    """For ``geoms`` of a model's data (``xpos`` ``(ngeom, 3)``, ``xmat`` ``(ngeom, 9)``, their
    bodies' ``cvel`` ``(nbody, 6)`` at the subtree centres of mass ``com`` of their ``root``
    bodies; local boxes ``aabb`` ``(g, 6)``, bounding ``radius``): the world-aligned boxes
    ``lo``, ``hi`` ``(g, 3)``, the geoms' ``xpos`` and ``xmat`` gathered, and a bound of the
    speed of every point of each geom ``(g,)``, :data:`GROWTH` times what it is now
    (``|v + w x arm| + |w| radius``, ``arm`` from the root's centre of mass to the geom's)."""
    n = len(geoms)
    lo, hi, pos, mat, speed = (np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
                               np.empty((n, 9)), np.empty(n))
    _geom_motion(xpos, xmat, cvel, com, geoms, body, root, aabb, radius, lo, hi, pos, mat, speed)
    return lo, hi, pos, mat, speed


@kernel
def _geom_motion(xpos, xmat, cvel, com, geoms, body, root, aabb, radius, lo, hi, pos, mat,
                 speed) -> None:
    """:func:`geom_motion`, one geom at a time."""
    for k in range(geoms.shape[0]):
        g, b, r = geoms[k], body[k], root[k]
        for j in range(9):
            mat[k, j] = xmat[g, j]
        for i in range(3):
            pos[k, i] = xpos[g, i]
            centre, half = xpos[g, i], 0.0
            for j in range(3):
                centre += xmat[g, 3 * i + j] * aabb[k, j]
                half += abs(xmat[g, 3 * i + j]) * aabb[k, 3 + j]
            lo[k, i], hi[k, i] = centre - half, centre + half
        wx, wy, wz = cvel[b, 0], cvel[b, 1], cvel[b, 2]
        ax, ay, az = xpos[g, 0] - com[r, 0], xpos[g, 1] - com[r, 1], xpos[g, 2] - com[r, 2]
        vx = cvel[b, 3] + wy * az - wz * ay
        vy = cvel[b, 4] + wz * ax - wx * az
        vz = cvel[b, 5] + wx * ay - wy * ax
        speed[k] = GROWTH * (math.sqrt(vx * vx + vy * vy + vz * vz)
                             + math.sqrt(wx * wx + wy * wy + wz * wz) * radius[k])


def gaps(lo_a: np.ndarray, hi_a: np.ndarray, centre_a: np.ndarray, radius_a: np.ndarray,
         lo_b: np.ndarray, hi_b: np.ndarray, centre_b: np.ndarray, radius_b: np.ndarray
         ) -> np.ndarray:
    """``(a, b)`` lower bounds of the distance between geoms ``a`` and ``b``: the larger of the
    gap between their world boxes (``lo``, ``hi``) and between their bounding spheres."""
    out = np.empty((len(lo_a), len(lo_b)))
    _gaps(lo_a, hi_a, centre_a, radius_a, lo_b, hi_b, centre_b, radius_b, out)
    return out


@kernel
def _gaps(lo_a, hi_a, c_a, r_a, lo_b, hi_b, c_b, r_b, out) -> None:
    """:func:`gaps`, one pair at a time."""
    for i in range(lo_a.shape[0]):
        for j in range(lo_b.shape[0]):
            boxes, between = 0.0, 0.0
            for k in range(3):
                sep = max(0.0, lo_a[i, k] - hi_b[j, k], lo_b[j, k] - hi_a[i, k])
                boxes += sep * sep
                d = c_a[i, k] - c_b[j, k]
                between += d * d
            out[i, j] = max(math.sqrt(boxes), math.sqrt(between) - r_a[i] - r_b[j], 0.0)


def across_gravity_time(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...],
                        speed: np.ndarray, down: np.ndarray) -> np.ndarray:
    """``(a, b)`` earliest times geoms ``a`` and ``b`` (each ``(lo, hi, centre, radius)``) could
    touch when only their speeds (``speed``: the pairs' summed speed bounds) close the part of
    their separation across gravity (``down``: its unit vector; zeros without gravity), the
    larger of that of their world boxes and of their bounding spheres: gravity cannot close it,
    so resting neighbours a few millimetres apart side by side are not expected to meet as soon
    as falling ones would. Another lower bound of the contact time beside
    :func:`time_to_contact`."""
    out = np.empty((len(a[0]), len(b[0])))
    _across_gravity_time(*a, *b, np.ascontiguousarray(speed), np.asarray(down, float), out)
    return out


@kernel
def _across(x: float, y: float, z: float, down: np.ndarray) -> float:
    """Length of the part of ``(x, y, z)`` across the unit vector ``down``."""
    along = x * down[0] + y * down[1] + z * down[2]
    return math.sqrt(max(x * x + y * y + z * z - along * along, 0.0))


@kernel
def _across_gravity_time(lo_a, hi_a, c_a, r_a, lo_b, hi_b, c_b, r_b, speed, down, out) -> None:
    """:func:`across_gravity_time`, one pair at a time."""
    for i in range(lo_a.shape[0]):
        for j in range(lo_b.shape[0]):
            sx = max(0.0, lo_a[i, 0] - hi_b[j, 0], lo_b[j, 0] - hi_a[i, 0])
            sy = max(0.0, lo_a[i, 1] - hi_b[j, 1], lo_b[j, 1] - hi_a[i, 1])
            sz = max(0.0, lo_a[i, 2] - hi_b[j, 2], lo_b[j, 2] - hi_a[i, 2])
            room = max(_across(sx, sy, sz, down),
                       _across(c_a[i, 0] - c_b[j, 0], c_a[i, 1] - c_b[j, 1],
                               c_a[i, 2] - c_b[j, 2], down) - r_a[i] - r_b[j]) - 2 * MIN_PAD
            if room <= 0:
                out[i, j] = 0.0
            elif speed[i, j] > 0:
                out[i, j] = room / speed[i, j]
            else:
                out[i, j] = math.inf


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
    bounds summed; the same shape) and each moved by :func:`reach`'s gravity term (0: may touch
    already)."""
    gaps, speed = np.ascontiguousarray(gaps, float), np.ascontiguousarray(speed, float)
    out = np.empty(gaps.shape)
    _time_to_contact(gaps.reshape(-1), speed.reshape(-1), float(gravity), out.reshape(-1))
    return out


@kernel
def time_to_contact_scalar(gap: float, speed: float, gravity: float) -> float:
    """:func:`time_to_contact` of one pair."""
    room = gap - 2 * MIN_PAD
    if room <= 0:
        return 0.0
    if gravity > 0:  # g T^2 + v T - room = 0
        return (-speed + math.sqrt(speed * speed + 4 * gravity * room)) / (2 * gravity)
    return room / speed if speed > 0 else math.inf


@kernel
def _time_to_contact(gaps, speed, gravity, out) -> None:
    """:func:`time_to_contact` over flat arrays."""
    for i in range(gaps.shape[0]):
        out[i] = time_to_contact_scalar(gaps[i], speed[i], gravity)


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
