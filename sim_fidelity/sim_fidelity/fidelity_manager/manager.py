"""The fidelity manager: signalers decide, helpers toggle, a simulator between (paper 000, Sec. 3).

``tick()`` reads every state the signalers need in one read, asks each signaler for its trees'
levels, and lets the helper bank apply the changes in batch. In process the read is incremental
(:mod:`..simulator.state_reader`: only the rows whose raw state changed since the last tick are
turned into poses and twists again; with MuJoCo's sleeping islands, the awake ones); over ROS,
and with ``incremental=False``, every row goes through ``get_states``. Both give the same levels.
A level can be held against the signalers (:meth:`FidelityManager.set_fidelity` with
``hold=True``) or set once; a set-once level stays until the tree's signalled level next changes
(helpers toggle only on a change of the signal). ``close()`` (also on leaving a ``with`` block, on
exceptions, and, with :func:`sim_fidelity.shutdown.raise_on_signals`, on SIGINT/SIGTERM) returns
every object to its start state.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from ..jit import kernel
from ..simulator.errors import InvalidOperationError
from ..simulator.protocol import Simulator
from ..simulator.state_reader import state_reader
from .config import FidelityConfig
from .errors import SettleError, UnknownNameError
from .helpers import HelperBank
from .levels import LEVEL_DTYPE, Level, parse_level
from .support import unsupported_mask, unsupported_trees

NOT_SIGNALLED = -1  # sentinel: the next signalled level counts as a change
LEVEL_NAMES = [(int(level), level.name.lower()) for level in Level]  # TickReport.counts' keys


@kernel
def merge_signals(signal: np.ndarray, signalled: np.ndarray, held: np.ndarray,
                  current: np.ndarray, target: np.ndarray) -> int:
    """The level each tree should have: the newly ``signal``-led one where it differs from the
    previous signal (``signalled``, then updated) and the tree is not ``held``, else its
    ``current`` one, into ``target``. Returns how many differ from ``current``."""
    changed = 0
    for i in range(signal.shape[0]):
        target[i] = signal[i] if signal[i] != signalled[i] and not held[i] else current[i]
        signalled[i] = signal[i]
        changed += target[i] != current[i]
    return changed


def _slice_if_contiguous(index: list[int]) -> slice | np.ndarray:
    """``index`` as a slice when it is a run of consecutive integers (a view, not a copy)."""
    if not index:
        return slice(0, 0)
    if index == list(range(index[0], index[0] + len(index))):
        return slice(index[0], index[-1] + 1)
    return np.array(index, np.intp)


@dataclass(frozen=True)
class TickReport:
    """What one tick did: sim time, trees per level, trees that changed, manager wall time."""

    time: float
    counts: dict[str, int]  # level name (lower case) -> number of trees
    changed: tuple[str, ...]
    wall: float  # seconds spent in the manager (reading states, signalling, toggling)


class FidelityManager:
    """Manages the fidelity of the trees of one scene through a :class:`Simulator`;
    ``incremental=False`` reads every state row at every tick (the reference the incremental read
    is tested against)."""

    def __init__(self, sim: Simulator, config: FidelityConfig | str | Path,
                 preset: str | None = None, incremental: bool = True):
        self.sim = sim
        self.config = config if isinstance(config, FidelityConfig) else FidelityConfig.load(config)
        self.preset = preset or self.config.default_preset
        self.enabled = self.config.preset(self.preset).enabled
        self.trees = self.config.build_trees(sim)
        n = len(self.trees)
        self.signalers = (self.config.build_signalers(sim, self.trees, self.preset)
                          if self.enabled else {})
        # trees the simulator cannot lower (reason -> names) stay HIGH, held against signalers
        self.unsupported = unsupported_trees(sim, self.config, self.trees) if self.enabled else {}
        self.fixed = unsupported_mask(self.trees, self.unsupported)
        self.helpers = HelperBank(sim, self.trees, ~self.fixed) if self.enabled else None
        row: dict[str, int] = {}
        self._plan = []  # (signaler, tree indices, state rows as a slice or index array)
        for sig in self.signalers.values():
            rows = [row.setdefault(e, len(row)) for e in sig.state_entities()]
            idx = [self.trees.index[t.name] for t in sig.trees]
            self._plan.append((sig, _slice_if_contiguous(idx), _slice_if_contiguous(rows)))
        self.state_names = list(row)
        self.reader = state_reader(sim, self.state_names, incremental)
        self.signalled = np.full(n, NOT_SIGNALLED, LEVEL_DTYPE)
        self.held = self.fixed.copy()
        self._target = np.empty(n, LEVEL_DTYPE)
        merge_signals(self.signalled[:0], self.signalled[:0], self.held[:0],  # load the compiled
                      self.signalled[:0], self._target[:0])  # loop now, not in the first tick
        self.closed = False

    # --- levels ----------------------------------------------------------------------------------
    @property
    def levels(self) -> np.ndarray:
        """Current level per tree (all HIGH when the manager is off)."""
        if self.helpers is None:
            return np.full(len(self.trees), Level.HIGH, LEVEL_DTYPE)
        return self.helpers.level

    def counts(self) -> dict[str, int]:
        c = np.bincount(self.levels, minlength=len(Level)).tolist()
        return {name: c[value] for value, name in LEVEL_NAMES}

    def tick(self) -> TickReport:
        """Ask the signalers and apply the levels that changed."""
        self._check_open()
        start = time.perf_counter()
        t = self.sim.time
        names: tuple[str, ...] = ()
        if self.helpers is not None:
            poses, twists, _ = self.reader.read()
            current = self.helpers.level
            signal = self.signalled.copy()
            for sig, idx, rows in self._plan:
                signal[idx] = sig.update(t, poses[rows], twists[rows], current[idx])
            if merge_signals(signal, self.signalled, self.held, current, self._target):
                names = tuple(self.trees.names[self.helpers.apply(self._target)].tolist())
        return TickReport(t, self.counts(), names, time.perf_counter() - start)

    def decision_point(self, settle: float) -> TickReport:
        """The application decides in ``settle`` seconds of sim time: every signaler with a
        refresh rule (paper 000: all packets HIGH at least once before every decision) applies it
        until then, starting with a tick now."""
        self._check_open()
        if isinstance(settle, bool) or not isinstance(settle, (int, float)) or not (
                0.0 <= settle < float("inf")):
            raise SettleError(f"decision_point: the settle must be a finite number of seconds "
                              f">= 0, got {settle!r}")
        t = self.sim.time
        for sig in self.signalers.values():
            sig.refresh(t, float(settle))
        return self.tick()

    def set_fidelity(self, patterns: str | Iterable[str], level: Level | str | int,
                     hold: bool = False) -> list[str]:
        """Put the trees matching ``patterns`` (full-match regexes) at ``level`` now.

        ``hold=True`` keeps them there against their signalers until :meth:`release`. Returns the
        tree names set, without those the simulator cannot lower (``unsupported``: they stay
        HIGH); KeyError when none matches.
        """
        self._check_open()
        if self.helpers is None:
            raise InvalidOperationError(f"the fidelity manager is off (preset '{self.preset}')")
        level = parse_level(level)
        idx = self._select(patterns)
        idx = idx[~self.fixed[idx]]
        target = self.helpers.level.copy()
        target[idx] = level
        self.helpers.apply(target)
        self.held[idx] = hold
        return self.trees.names[idx].tolist()

    def release(self, patterns: str | Iterable[str]) -> list[str]:
        """Return the matching trees to their signalers; the next tick applies the signalled
        level."""
        self._check_open()
        idx = self._select(patterns)
        self.held[idx] = self.fixed[idx]
        self.signalled[idx] = NOT_SIGNALLED
        return self.trees.names[idx].tolist()

    def get_fidelity(self, patterns: str | Iterable[str] = ".*") -> dict[str, tuple[Level, bool]]:
        """Level and held flag of each tree matching ``patterns``."""
        idx = self._select(patterns)
        levels = self.levels
        return {self.trees.names[i]: (Level(int(levels[i])), bool(self.held[i])) for i in idx}

    def _select(self, patterns: str | Iterable[str]) -> np.ndarray:
        idx = self.trees.select(patterns)
        if idx.size == 0:
            raise UnknownNameError(f"no tree matches {patterns!r}")
        return idx

    # --- the end ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Restore every object to its lever state at the start (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for sig in self.signalers.values():
            sig.close()
        if self.helpers is not None:
            self.helpers.restore_all()

    def mismatches(self) -> list[tuple[str, str]]:
        """(entity, lever name) pairs whose lever differs from the start state, read back now."""
        if self.helpers is None:
            return []
        return [(e, lever.name) for e, lever in self.helpers.mismatches()]

    def _check_open(self) -> None:
        if self.closed:
            raise InvalidOperationError("the fidelity manager is closed")

    def __enter__(self) -> "FidelityManager":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
