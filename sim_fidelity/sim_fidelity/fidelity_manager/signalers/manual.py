"""Manual signaler: levels are whatever the last call to :meth:`ManualSignaler.set` said."""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..levels import Level, parse_level
from ..trees import Tree
from .base import Param, Signaler


class ManualSignaler(Signaler):
    """Holds a level per tree, changed only by :meth:`set` (thread-safe)."""

    PARAMS = {"initial": Param("level", Level.HIGH, "level before any call")}

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        self.levels = self._full(params["initial"])
        self.lock = threading.Lock()

    def set(self, level: Level | str | int, trees: str | Sequence[str] | None = None) -> int:
        """Signal ``level`` for the trees matching the regex(es) ``trees`` (all when None)."""
        level = parse_level(level)
        mask = self._select(trees)
        with self.lock:
            self.levels[mask] = level
        return int(mask.sum())

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        with self.lock:
            return self.levels.copy()
