"""Consecutive still physics steps of candidate entities, counted by an engine step hook.

Paper 000 (Sec. 4.3) lowers a packet once it has been outside the robot box with no linear or
angular velocity "for the period of two simulation steps". A signaler only runs at manager ticks
(tens of physics steps apart); :class:`StepStillness` sees every step in between: a step hook
reads the velocities of the *candidates* only (packets that a tick may lower) straight from the
engine's generalised velocities and counts, per candidate, the consecutive steps it was still.

It needs an in-process engine: step hooks (``sim.hooks``) and every entity carried by one free
body with no frame offset (its speeds are the body's). :func:`step_hook_unavailable` says why not
otherwise; a simulator behind ROS shows the manager its state only at ticks.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ...simulator.protocol import Simulator


def step_hook_unavailable(sim: Simulator, names: Sequence[str]) -> str:
    """Why :class:`StepStillness` cannot watch ``names`` in ``sim`` ("" when it can)."""
    if not hasattr(sim, "hooks") or not hasattr(sim, "index"):
        return "the simulator steps out of the manager's sight (over ROS, or no step hooks)"
    refs = sim.index.state_refs(list(names))
    if refs.free.size != len(names) or refs.offset:
        return "not every entity is one free body without a frame offset"
    return ""


class StepStillness:
    """Counts, per watched row of ``names``, the physics steps it has been still in a row."""

    def __init__(self, engine: Any, names: Sequence[str], linear: float, angular: float):
        self.engine, self.names = engine, list(names)
        self.linear2, self.angular2 = linear * linear, angular * angular
        self.rows = np.zeros(0, np.intp)  # watched rows
        self.count = np.zeros(0, np.int64)  # still steps in a row, per watched row
        self._index = None
        self.wall = 0.0  # seconds spent in the step hook
        self._bind()
        engine.hooks.add(self.on_step)

    def _bind(self) -> None:
        """qvel addresses of every entity for the engine's current compile."""
        self._index = self.engine.index
        self._dof_all = self._index.state_refs(self.names).didx  # (n, 6) [v world, w body]
        self._dof = self._dof_all[self.rows]

    def watch(self, rows: np.ndarray) -> None:
        """Watch ``rows`` (sorted) from now on; rows watched already keep their count, new ones
        start at 0."""
        rows = np.asarray(rows, np.intp)
        kept = np.zeros(len(rows), np.int64)
        if self.rows.size and rows.size:
            pos = np.searchsorted(self.rows, rows)
            hit = (pos < self.rows.size) & (self.rows[np.minimum(pos, self.rows.size - 1)] == rows)
            kept[hit] = self.count[pos[hit]]
        self.rows, self.count = rows, kept
        self._dof = self._dof_all[rows]

    def counts(self) -> np.ndarray:
        """Still steps in a row for every row of ``names`` (0 where not watched)."""
        out = np.zeros(len(self.names), np.int64)
        out[self.rows] = self.count
        return out

    def on_step(self, engine: Any) -> None:
        """The step hook: one gather of the watched rows' velocities, compared as squares."""
        if not self.rows.size:
            return
        start = time.perf_counter()
        if engine.index is not self._index:  # recompiled (spawn, delete): addresses moved
            self._bind()
        sq = engine.data.qvel[self._dof]
        sq *= sq
        still = ((sq[:, 0] + sq[:, 1] + sq[:, 2] < self.linear2)
                 & (sq[:, 3] + sq[:, 4] + sq[:, 5] < self.angular2))
        self.count = np.where(still, self.count + 1, 0)
        self.wall += time.perf_counter() - start

    def close(self) -> None:
        """Stop counting (removes the step hook)."""
        self.engine.hooks.remove(self.on_step)
