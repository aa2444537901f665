"""Distance signaler: HIGH near reference entities, MEDIUM a bit further, LOW beyond; hysteresis."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..errors import ParamError
from ..levels import LEVEL_DTYPE, Level
from ..trees import Tree
from .base import Param, Signaler, match_entities


class DistanceSignaler(Signaler):
    """Level from the distance of each tree's anchor to the nearest reference entity.

    A tree rises as soon as it is within ``r_high`` (HIGH) or ``r_medium`` (MEDIUM); it falls only
    once it is further than the radius plus ``hysteresis``.
    """

    PARAMS = {
        "references": Param("patterns", help="regex(es) of the reference model/link entities"),
        "r_high": Param("nonneg", help="HIGH within this distance [m]"),
        "r_medium": Param("nonneg", help="MEDIUM within this distance [m] (>= r_high)"),
        "hysteresis": Param("nonneg", 0.1, "extra distance [m] before a tree is lowered"),
    }

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        if params["r_medium"] < params["r_high"]:
            raise ParamError("r_medium", f"must be >= r_high ({params['r_high']})")
        self.references = match_entities(sim, params["references"], "references")
        self.anchors = self._anchors()

    def state_entities(self) -> list[str]:
        return self.references + self.anchors

    def _level(self, d: np.ndarray, pad: float) -> np.ndarray:
        p = self.params
        return np.where(d <= p["r_high"] + pad, Level.HIGH,
                        np.where(d <= p["r_medium"] + pad, Level.MEDIUM, Level.LOW))

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        nref = len(self.references)
        ref, pos = poses[:nref, :3], poses[nref:, :3]
        d = np.sqrt(((pos[:, None, :] - ref[None, :, :]) ** 2).sum(-1)).min(axis=1)
        enter, stay = self._level(d, 0.0), self._level(d, self.params["hysteresis"])
        return np.maximum(enter, np.minimum(current, stay)).astype(LEVEL_DTYPE)
