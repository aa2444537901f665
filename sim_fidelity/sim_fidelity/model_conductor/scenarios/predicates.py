"""The symbolic state after a replay (paper 003, Sec. 4.2: "we extract the resulting semantic
state"): the same geometric tests for every method, on the final poses it simulated."""
from __future__ import annotations

import numpy as np

from ...simulator import poses as pose_math
from ...world_generators import conductor_scenarios as cs

BELOW = 0.01  # m: how far below the ideal pose a cylinder reaches (a probe pushed too deep)


def _local(pose: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Position of ``pose`` in the frame ``frame`` (7,)."""
    frame = np.asarray(frame, float)
    q = frame[3:7] if frame.size == 7 else np.array([0.0, 0.0, 0.0, 1.0])
    return pose_math.quat_rotate(pose_math.quat_conj(q), np.asarray(pose, float)[:3] - frame[:3])


def ball_in_container(ball: np.ndarray, kind: str, container: np.ndarray) -> bool:
    """``in(container, ball)``: the ball's centre is inside the container's inner volume (within
    its walls, above its floor, below the rim plus one ball radius)."""
    c = cs.CONTAINERS[kind]
    p = _local(ball, container)
    inner = c.inner()
    if c.shape == "round":
        across = float(np.hypot(p[0], p[1])) <= inner[0]
    else:
        across = abs(p[0]) <= inner[0] and abs(p[1]) <= inner[1]
    return bool(across and cs.FLOOR <= p[2] <= c.height + cs.BALL_RADIUS)


def connection_error(dip: np.ndarray, spu: np.ndarray) -> tuple[float, float]:
    """Radial and axial distance (m) of the DIP's frame from the ideal connection pose of the
    SPU (axial > 0: not yet fully inserted)."""
    p = _local(dip, spu) - cs.spu_connection_offset()
    return float(np.hypot(p[0], p[1])), float(p[2])


def within_cylinder(dip: np.ndarray, spu: np.ndarray, radius: float, length: float) -> bool:
    """Is the DIP's frame inside the cylinder of ``radius`` around the connection axis, from the
    ideal pose up to ``length`` above it (or up to BELOW beneath it)?"""
    radial, axial = connection_error(dip, spu)
    return radial <= radius and -BELOW <= axial <= length
