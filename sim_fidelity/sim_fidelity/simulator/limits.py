"""The physical limits of a state a client may set, in one place, and the check against them.

A pose or twist beyond these is refused before it touches the world (``set_states``, ``spawn``,
and every ``sim_server`` request that carries one): MuJoCo itself would accept it and then, a
step later, find the state diverged and reset the whole world. The limits are generous for any
scene this project simulates (a warehouse, a truck, a lab bench) and far below where MuJoCo's
own instability checks fire (1e10).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import InvalidPoseError

MAX_POSITION_M = 1e5  # each coordinate of a position: 100 km from the world origin
MAX_LINEAR_SPEED_M_S = 1e4  # length of a twist's linear velocity (orbital speed is ~8e3)
MAX_ANGULAR_SPEED_RAD_S = 1e4  # length of a twist's angular velocity (~1,600 turns a second)
QUATERNION_TOLERANCE = 1e-3  # a quaternion's length may differ from 1 by this much


def check_poses(poses: np.ndarray, names: Sequence[str], what: str = "pose") -> np.ndarray:
    """``poses`` ``(n, 7)`` with their quaternions normalised; InvalidPoseError naming the entity
    and the field of the first value that is not finite, beyond the limits or not a rotation."""
    pos, q = poses[:, :3], poses[:, 3:]
    _first_bad(~np.isfinite(pos).all(axis=1), names, f"{what} position is not finite", pos)
    _first_bad((np.abs(pos) > MAX_POSITION_M).any(axis=1), names,
               f"{what} position is beyond {MAX_POSITION_M:g} m of the origin", pos)
    norm = np.linalg.norm(q, axis=1) if np.isfinite(q).all() else np.full(len(q), np.nan)
    _first_bad(~(np.abs(norm - 1.0) <= QUATERNION_TOLERANCE), names,
               f"{what} orientation is not a unit quaternion (x y z w, length 1 +- "
               f"{QUATERNION_TOLERANCE:g})", q)
    out = poses.copy()
    out[:, 3:] = q / norm[:, None]
    return out


def check_twists(twists: np.ndarray, names: Sequence[str]) -> None:
    """InvalidPoseError naming the entity and the field of the first twist that is not finite
    or faster than the limits."""
    v, w = twists[:, :3], twists[:, 3:]
    for part, label, limit, unit in ((v, "linear", MAX_LINEAR_SPEED_M_S, "m/s"),
                                     (w, "angular", MAX_ANGULAR_SPEED_RAD_S, "rad/s")):
        _first_bad(~np.isfinite(part).all(axis=1), names, f"twist {label} is not finite", part)
        _first_bad(np.linalg.norm(part, axis=1) > limit, names,
                   f"twist {label} speed is beyond {limit:g} {unit}", part)


def _first_bad(bad: np.ndarray, names: Sequence[str], problem: str, values: np.ndarray) -> None:
    hits = np.flatnonzero(bad)
    if hits.size:
        i = int(hits[0])
        more = f" (and {hits.size - 1} more)" if hits.size > 1 else ""
        raise InvalidPoseError(f"'{names[i]}': {problem}: {values[i].tolist()}{more}")
