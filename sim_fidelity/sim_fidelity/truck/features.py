"""State features of a truck-unloading decision (the pick-or-sweep classifier, paper 000 Table 1).

From what the controller perceives (:meth:`~.controller.UnloadingController.options`): the trailer's
width split into :data:`LANES` lanes, and for the packets within :data:`DEPTH` metres ahead of the
robot's base front, per lane the highest top, the count and the gap to the nearest; then the packets
lying on the floor within the nose's reach, the pick candidates, and the gaps to the standing wall
and to the nearest packet in the nose's lane.
"""
from __future__ import annotations

import numpy as np

from ..world_generators import unloader as geo
from ..world_generators.truck import TRAILER_WIDTH
from .controller import CORRIDOR_TOP, NOSE_REACH_MAX, SWEEP_DEPTH, UnloadingController

LANES = 5
DEPTH = 2.5  # m ahead of the base front
FEATURES = ([f"lane{i}_top" for i in range(LANES)] + [f"lane{i}_count" for i in range(LANES)]
            + [f"lane{i}_gap" for i in range(LANES)]
            + ["floor_in_reach", "pick_candidates", "wall_gap", "block_gap"])


def state_features(controller: UnloadingController) -> np.ndarray:
    """The features (:data:`FEATURES`, in that order) of the state the controller sees now."""
    f = controller.options()
    x0 = controller.robot.model_x() + geo.BASE_FRONT
    gap = f.lo[:, 0] - x0
    near = gap < DEPTH
    centre_y = 0.5 * (f.lo[near, 1] + f.hi[near, 1])
    lane = np.clip(((centre_y + TRAILER_WIDTH / 2) / (TRAILER_WIDTH / LANES)).astype(int), 0,
                   LANES - 1)
    top = np.zeros(LANES)
    np.maximum.at(top, lane, f.hi[near, 2])
    count = np.bincount(lane, minlength=LANES).astype(float)
    nearest = np.full(LANES, DEPTH)
    np.minimum.at(nearest, lane, np.maximum(gap[near], 0.0))
    reach = x0 - geo.BASE_FRONT + NOSE_REACH_MAX + SWEEP_DEPTH
    floor = float(((f.hi[:, 2] < CORRIDOR_TOP) & (f.lo[:, 0] < reach)).sum())
    far = 2 * DEPTH
    return np.concatenate([top, count, nearest,
                           [floor, float(len(f.picks)), min(max(f.wall - x0, 0.0), far),
                            min(max(f.block - x0, 0.0), far)]])
