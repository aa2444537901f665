"""The action signaler of paper 000, Sec. 4.3 (plungers): levels follow announced robot actions.

The planner announces actions (``extend`` before a pick, ``retract`` after it); each action maps to
a level for the trees it concerns. In-process callers call :meth:`ActionSignaler.announce`; the ROS
node forwards a topic or service to it. Announcements may come from another thread.
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator
from ..levels import Level
from ..trees import Tree
from .base import Param, Signaler


class ActionSignaler(Signaler):
    """Trees go to the level mapped to the last action announced for them."""

    PARAMS = {
        "actions": Param("level_map", {"extend": Level.HIGH, "retract": Level.LOW},
                         "action name -> level"),
        "initial": Param("level", Level.LOW, "level before any action is announced"),
    }

    def __init__(self, trees: Sequence[Tree], params: dict[str, Any], sim: Simulator):
        super().__init__(trees, params, sim)
        self.levels = self._full(params["initial"])
        self.lock = threading.Lock()

    def announce(self, action: str, trees: str | Sequence[str] | None = None) -> int:
        """Apply ``action`` to the trees matching the regex(es) ``trees`` (all when None).

        Returns the number of trees concerned; raises KeyError for an unknown action.
        """
        try:
            level = self.params["actions"][action]
        except KeyError:
            known = ", ".join(sorted(self.params["actions"]))
            raise KeyError(f"unknown action '{action}' (known: {known})") from None
        mask = self._select(trees)
        with self.lock:
            self.levels[mask] = level
        return int(mask.sum())

    def update(self, t: float, poses: np.ndarray, twists: np.ndarray,
               current: np.ndarray) -> np.ndarray:
        with self.lock:
            return self.levels.copy()
