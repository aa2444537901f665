"""Schedule signaler: levels from a time table (for tests and scripted scenarios)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..levels import Level
from ..trees import Tree
from .base import Param, Signaler


class ScheduleSignaler(Signaler):
    """From each entry's ``time`` on, the trees matching its ``trees`` regex are at its
    ``level``."""

    PARAMS = {
        "table": Param("schedule",
                       help="list of {time: s, level: name, trees: regex (default all)}"),
        "initial": Param("level", Level.HIGH, "level before the first entry"),
    }

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        self.levels = self._full(params["initial"])
        self.entries = [(t, level, self._select(pattern)) for t, level, pattern in params["table"]]
        self.next = 0

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        while self.next < len(self.entries) and self.entries[self.next][0] <= t:
            _, level, mask = self.entries[self.next]
            self.levels[mask] = level
            self.next += 1
        return self.levels.copy()
