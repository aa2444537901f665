"""Consecutive still physics steps of candidate entities, counted by an engine step hook.

Paper 000 (Sec. 4.3) lowers a packet once it has been outside the robot box with no linear or
angular velocity "for the period of two simulation steps". A signaler only runs at manager ticks
(tens of physics steps apart); :class:`StepStillness` sees every step in between: a step hook
reads the velocities of the *candidates* only (packets that a tick may lower) straight from the
engine's generalised velocities and counts, per candidate, the consecutive steps it was still (one
compiled loop over the candidates, :func:`count_still`).

It needs an in-process engine: step hooks (``sim.hooks``) and every entity carried by one free
body with no frame offset (its speeds are the body's). :func:`step_hook_unavailable` says why not
otherwise; a simulator behind ROS shows the manager its state only at ticks.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ...jit import kernel
from ...simulator.protocol import Simulator


def step_hook_unavailable(sim: Simulator, names: Sequence[str]) -> str:
    """Why :class:`StepStillness` cannot watch ``names`` in ``sim`` ("" when it can)."""
    if not hasattr(sim, "hooks") or not hasattr(sim, "index"):
        return "the simulator steps out of the manager's sight (over ROS, or no step hooks)"
    refs = sim.index.state_refs(list(names))
    if refs.free.size != len(names) or refs.offset:
        return "not every entity is one free body without a frame offset"
    return ""


@kernel
def count_still(qvel: np.ndarray, dof: np.ndarray, rows: np.ndarray, count: np.ndarray,
                linear2: float, angular2: float) -> None:
    """One more still step in ``count`` for every row of ``rows`` whose velocities
    ``qvel[dof[row]]`` (``[v, w]``) are below both squared speeds, 0 for the others."""
    for row in rows:
        v = dof[row]
        linear = qvel[v[0]] ** 2 + qvel[v[1]] ** 2 + qvel[v[2]] ** 2
        angular = qvel[v[3]] ** 2 + qvel[v[4]] ** 2 + qvel[v[5]] ** 2
        count[row] = count[row] + 1 if linear < linear2 and angular < angular2 else 0


@kernel
def keep_watched(mask: np.ndarray, count: np.ndarray, rows: np.ndarray) -> int:
    """The indices where ``mask`` is True into ``rows`` (returns how many); ``count`` 0 where it
    is False."""
    n = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            rows[n] = i
            n += 1
        else:
            count[i] = 0
    return n


class StepStillness:
    """Counts, per watched row of ``names``, the physics steps it has been still in a row."""

    def __init__(self, engine: Any, names: Sequence[str], linear: float, angular: float):
        self.engine, self.names = engine, list(names)
        self.linear2, self.angular2 = linear * linear, angular * angular
        self.rows = np.zeros(0, np.intp)  # watched rows
        self.count = np.zeros(len(self.names), np.int64)  # still steps in a row (0: not watched)
        self._rows = np.zeros(len(self.names), np.intp)  # what self.rows is a prefix of
        self._index = None
        self.wall = 0.0  # seconds spent in the step hook
        self._bind()
        count_still(engine.data.qvel, self._dof, self.rows, self.count, self.linear2,
                    self.angular2)  # load the compiled loops now (no row), not in a step
        keep_watched(np.zeros(0, bool), self.count, self._rows)
        engine.hooks.add(self.on_step)

    def _bind(self) -> None:
        """qvel addresses of every entity for the engine's current compile."""
        self._index = self.engine.index
        self._dof = self._index.state_refs(self.names).didx  # (n, 6) [v world, w body]

    def watch(self, mask: np.ndarray) -> None:
        """Watch the rows where ``mask`` is True from now on; rows watched already keep their
        count, new ones start at 0."""
        self.rows = self._rows[:keep_watched(np.asarray(mask, bool), self.count, self._rows)]

    def counts(self) -> np.ndarray:
        """Still steps in a row for every row of ``names`` (0 where not watched)."""
        return self.count.copy()

    def on_step(self, engine: Any) -> None:
        """The step hook: the watched rows' velocities, compared as squares."""
        if not self.rows.size:
            return
        start = time.perf_counter()
        if engine.index is not self._index:  # recompiled (spawn, delete): addresses moved
            self._bind()
        count_still(engine.data.qvel, self._dof, self.rows, self.count, self.linear2,
                    self.angular2)
        self.wall += time.perf_counter() - start

    def close(self) -> None:
        """Stop counting (removes the step hook)."""
        self.engine.hooks.remove(self.on_step)
