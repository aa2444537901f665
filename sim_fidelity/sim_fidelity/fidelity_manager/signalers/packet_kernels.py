"""The packet signaler's passes over every packet, each one compiled loop (:mod:`...jit`).

Boxes are axis-aligned, ``lo`` and ``hi`` corners ``(n, 3)``. Two boxes *overlap* when they
share interior on every axis (``lo < other hi`` and ``hi > other lo``, strictly: touching faces
do not overlap); a box lies *inside* another when ``lo >= other lo`` and ``hi <= other hi``.
:mod:`.packet` says what the rules mean; here is only how they are computed.
"""
from __future__ import annotations

import numpy as np

from ...jit import kernel
from ..levels import Level

HIGH, MEDIUM, LOW = int(Level.HIGH), int(Level.MEDIUM), int(Level.LOW)  # constants when compiled


@kernel
def overlaps(lo: np.ndarray, hi: np.ndarray, i: int, box_lo: np.ndarray,
             box_hi: np.ndarray) -> bool:
    """Box ``i`` of ``lo``/``hi`` overlaps the box ``box_lo``-``box_hi``."""
    for a in range(3):
        if not (lo[i, a] < box_hi[a] and hi[i, a] > box_lo[a]):
            return False
    return True


@kernel
def refresh_boxes(poses: np.ndarray, seen: np.ndarray, half: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, robot: int, pad: float, box: np.ndarray) -> int:
    """The AABB ``lo``/``hi`` of every oriented box (pose ``[p, quat xyzw]``, half extents
    ``half``) whose pose differs from ``seen`` (NaN: never seen), then ``box`` ``(2, 3)``: the
    union of the first ``robot`` AABBs grown by ``pad``. Returns how many AABBs were turned."""
    turned = 0
    for i in range(poses.shape[0]):
        same = True
        for j in range(7):
            if poses[i, j] != seen[i, j]:
                same = False
                break
        if same:
            continue
        for j in range(7):
            seen[i, j] = poses[i, j]
        x, y, z, w = poses[i, 3], poses[i, 4], poses[i, 5], poses[i, 6]
        hx, hy, hz = half[i, 0], half[i, 1], half[i, 2]
        # |R| h, R the rotation matrix of the unit quaternion
        ex = (abs(1.0 - 2.0 * (y * y + z * z)) * hx + abs(2.0 * (x * y - z * w)) * hy
              + abs(2.0 * (x * z + y * w)) * hz)
        ey = (abs(2.0 * (x * y + z * w)) * hx + abs(1.0 - 2.0 * (x * x + z * z)) * hy
              + abs(2.0 * (y * z - x * w)) * hz)
        ez = (abs(2.0 * (x * z - y * w)) * hx + abs(2.0 * (y * z + x * w)) * hy
              + abs(1.0 - 2.0 * (x * x + y * y)) * hz)
        lo[i, 0], lo[i, 1], lo[i, 2] = poses[i, 0] - ex, poses[i, 1] - ey, poses[i, 2] - ez
        hi[i, 0], hi[i, 1], hi[i, 2] = poses[i, 0] + ex, poses[i, 1] + ey, poses[i, 2] + ez
        turned += 1
    for a in range(3):
        box[0, a], box[1, a] = np.inf, -np.inf
        for i in range(robot):
            box[0, a] = min(box[0, a], lo[i, a])
            box[1, a] = max(box[1, a], hi[i, a])
        box[0, a] -= pad
        box[1, a] += pad
    return turned


@kernel
def box_rules(lo: np.ndarray, hi: np.ndarray, box_lo: np.ndarray, box_hi: np.ndarray,
              current: np.ndarray, still: np.ndarray, still_now: np.ndarray, ticks: bool,
              still_steps: int, touching: np.ndarray, high: np.ndarray, reaching: np.ndarray,
              watch: np.ndarray) -> int:
    """Rules 1 and 2 per packet: ``touching`` (its AABB overlaps the robot box), the still
    count (in place: with ``ticks``, one more tick where ``still_now`` and not touching, else
    0; without, the step counts given in ``still``, 0 where touching), ``high`` (touching, or
    HIGH now and still for fewer than ``still_steps``), ``reaching`` (HIGH after this tick or
    now, and not inside the robot box) and ``watch`` (HIGH after this tick or now, and not
    touching: whose stillness counts toward the next tick). Returns how many reach out."""
    out = 0
    for i in range(lo.shape[0]):
        touch = overlaps(lo, hi, i, box_lo, box_hi)
        inside = True
        for a in range(3):
            if not (lo[i, a] >= box_lo[a] and hi[i, a] <= box_hi[a]):
                inside = False
        if touch:
            still[i] = 0
        elif ticks:
            still[i] = still[i] + 1 if still_now[i] else 0
        is_high = current[i] == HIGH
        touching[i] = touch
        high[i] = touch or (is_high and still[i] < still_steps)
        reaching[i] = (high[i] or is_high) and not inside
        watch[i] = (high[i] or is_high) and not touch
        out += reaching[i]
    return out


@kernel
def near_levels(lo: np.ndarray, hi: np.ndarray, twists: np.ndarray, radius: np.ndarray,
                out: np.ndarray, travel: float, margin: float, box_lo: np.ndarray,
                box_hi: np.ndarray, max_pairwise: int, levels: np.ndarray) -> None:
    """Rule 3, ``medium: near``: MEDIUM in ``levels`` for every packet whose AABB overlaps the
    reach of one of the packets ``out`` (its AABB grown by ``margin`` plus ``travel`` times
    ``|v| + |w| radius``) or the robot box grown by ``margin``; LOW for the others. Above
    ``max_pairwise`` packets in ``out``, the union of all the reaches (a superset) decides."""
    k = out.shape[0]
    reach_lo, reach_hi = np.empty((k + 1, 3)), np.empty((k + 1, 3))
    for r in range(k):
        p = out[r]
        speed = (np.sqrt(twists[p, 0] ** 2 + twists[p, 1] ** 2 + twists[p, 2] ** 2)
                 + np.sqrt(twists[p, 3] ** 2 + twists[p, 4] ** 2 + twists[p, 5] ** 2) * radius[p])
        grow = margin + travel * speed
        for a in range(3):
            reach_lo[r, a], reach_hi[r, a] = lo[p, a] - grow, hi[p, a] + grow
    for a in range(3):
        reach_lo[k, a], reach_hi[k, a] = box_lo[a] - margin, box_hi[a] + margin
    union_lo, union_hi = np.empty(3), np.empty(3)
    for a in range(3):
        union_lo[a], union_hi[a] = reach_lo[:, a].min(), reach_hi[:, a].max()
    for i in range(lo.shape[0]):
        levels[i] = LOW
        if not overlaps(lo, hi, i, union_lo, union_hi):
            continue
        if k > max_pairwise:
            levels[i] = MEDIUM
            continue
        for r in range(k + 1):
            if overlaps(lo, hi, i, reach_lo[r], reach_hi[r]):
                levels[i] = MEDIUM
                break
