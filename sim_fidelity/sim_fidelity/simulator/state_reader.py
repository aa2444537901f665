"""The same entities' states read again and again, re-reading only the rows that changed.

A fidelity manager reads the poses and twists of the same ~1000 entities every tick, and with
MuJoCo's sleeping islands most of them have not moved since the last tick.
:class:`EngineStateReader` keeps the last poses and twists in its own arrays and, for entities
carried by one free body without a frame offset, compares the raw generalised coordinates and
velocities with those of its last read: only the rows whose values differ are turned into poses
and twists again, whatever changed them (a step, a teleport, a script, a reset, a restore). That
pass is one compiled loop over the rows (:func:`read_free_rows`). The other rows (links of
articulated models) go through ``get_states`` every time.
:class:`FullStateReader` reads every row through any simulator's ``get_states`` (over ROS).
Both return exactly what ``get_states`` returns for the same names.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

from ..jit import kernel
from . import poses as pose_math
from .protocol import Simulator
from .state_kernels import free_state


class StateReader(Protocol):
    """Reads the states of a fixed list of entities."""

    names: list[str]

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Poses ``(n, 7)`` and twists ``(n, 6)`` of every name now (read-only: the next read
        may write into them), and the rows read again (the others are as the previous read
        returned them)."""


def state_reader(sim: Simulator, names: Sequence[str], incremental: bool = True) -> StateReader:
    """The incremental reader where ``sim`` is an in-process engine (and ``incremental``), the
    full one otherwise."""
    if incremental and hasattr(sim, "index") and hasattr(sim, "data"):
        return EngineStateReader(sim, names)
    return FullStateReader(sim, names)


class FullStateReader:
    """Every row through ``sim.get_states``, every read."""

    def __init__(self, sim: Simulator, names: Sequence[str]):
        self.sim, self.names = sim, list(names)
        self._all = np.arange(len(self.names))

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.names:
            return np.zeros((0, 7)), np.zeros((0, 6)), self._all
        poses, twists = self.sim.get_states(self.names)
        return poses, twists, self._all


@kernel
def read_free_rows(qpos: np.ndarray, qvel: np.ndarray, qidx: np.ndarray, didx: np.ndarray,
                   last_q: np.ndarray, last_dq: np.ndarray, rows: np.ndarray, poses: np.ndarray,
                   twists: np.ndarray, read: np.ndarray) -> int:
    """For each free row ``k`` whose ``qpos[qidx[k]]`` or ``qvel[didx[k]]`` differs from
    ``last_q[k]``/``last_dq[k]`` (NaN: never read): keep the new values and write row ``rows[k]``
    of ``poses`` and ``twists`` (:func:`~.state_kernels.free_state`, as ``get_states`` does). The
    rows written go to ``read``; returns their number."""
    count = 0
    for k in range(rows.shape[0]):
        same = True
        for j in range(7):
            if qpos[qidx[k, j]] != last_q[k, j]:
                same = False
                break
        if same:
            for j in range(6):
                if qvel[didx[k, j]] != last_dq[k, j]:
                    same = False
                    break
        if same:
            continue
        for j in range(7):
            last_q[k, j] = qpos[qidx[k, j]]
        for j in range(6):
            last_dq[k, j] = qvel[didx[k, j]]
        free_state(qpos, qvel, qidx[k], didx[k], poses[rows[k]], twists[rows[k]])
        read[count] = rows[k]
        count += 1
    return count


class EngineStateReader:
    """Rows of free bodies re-read when their ``qpos``/``qvel`` changed; the others every time."""

    def __init__(self, engine: Any, names: Sequence[str]):
        self.engine, self.names = engine, list(names)
        self.poses = np.zeros((len(self.names), 7))
        self.twists = np.zeros((len(self.names), 6))
        self._bind()
        # load the compiled loop now (from Numba's cache: ~0.5 s once a process), not in a tick
        read_free_rows(engine.data.qpos, engine.data.qvel, self._qidx, self._didx, self._q,
                       self._dq, self._fast[:0], self.poses, self.twists, self._read)

    def _bind(self) -> None:
        """Addresses for the engine's current compile; every row is read next."""
        index = self.engine.index
        refs = index.state_refs(self.names)
        plain = np.abs(refs.offsets - pose_math.IDENTITY).max(axis=1, initial=0.0) <= 1e-12
        k = np.flatnonzero(plain[refs.free])  # free rows without an offset: read from qpos/qvel
        self._fast = refs.free[k]
        self._qidx, self._didx = refs.qxyzw[k], refs.didx[k]
        self._q = np.full((len(k), 7), np.nan)  # raw values of the last read (NaN: never read)
        self._dq = np.full((len(k), 6), np.nan)
        self._read = np.empty(len(k), np.intp)
        self._slow = np.setdiff1d(np.arange(len(self.names)), self._fast)
        self._slow_names = [self.names[i] for i in self._slow]
        self._index = index

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        engine = self.engine
        d = engine.data
        if engine.index is not self._index:  # (re)compiled: addresses moved
            self._bind()
        count = read_free_rows(d.qpos, d.qvel, self._qidx, self._didx, self._q, self._dq,
                               self._fast, self.poses, self.twists, self._read)
        rows = self._read[:count].copy()
        if self._slow.size:
            self.poses[self._slow], self.twists[self._slow] = engine.get_states(self._slow_names)
            rows = np.concatenate([rows, self._slow])
        return self.poses, self.twists, rows
