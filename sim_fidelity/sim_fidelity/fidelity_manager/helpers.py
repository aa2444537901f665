"""Fidelity helpers: toggle trees between levels through the simulator's levers, in batch.

Paper 000, Sec. 3 and Fig. 2b: a helper toggles its tree only when the signalled level changes;
going down from HIGH it caches the objects' high-fidelity state and applies the type's common
state; going back up it re-applies the cache; at the end it returns the tree to its state at the
start. Here the helpers of all trees are one vectorised bank (row ``i`` is tree ``i``'s helper):
every tree that changes level in one call costs one ``set_lever`` per (lever, enabled) pair (in
process all of them one ``set_levers`` batch: one undo snapshot, one write of the model
parameters) and one ``get_lever`` per lever to cache, whatever the number of trees.

The start state is the world's original lever state as the simulator reports it
(``get_lever(..., original=True)``), not whatever a manager that died before left behind: a bank
first writes the originals back where the simulator differs from them. The restore does not trust
its own bookkeeping either (a tick cut short by a signal or a failed call may have written part of
a change): it reads every lever back and writes the originals where they differ.
"""
from __future__ import annotations

import numpy as np

from ..simulator.protocol import Lever, Simulator
from .levels import LEVEL_DTYPE, Level
from .objects import off_table
from .trees import TreeSet


class HelperBank:
    """The helpers of all trees of a :class:`TreeSet`. Trees start at HIGH: the world's original
    lever state, written back first where the simulator differs (``reverted`` counts those).
    ``managed``: per tree, whether the bank touches its objects at all (default: every tree)."""

    def __init__(self, sim: Simulator, trees: TreeSet, managed: np.ndarray | None = None):
        self.sim, self.trees = sim, trees
        self._set_levers = getattr(sim, "set_levers", None)  # the batch of the in-process engine
        self.off = off_table(trees.types)  # (type, level, lever)
        handled = self.off.any(axis=1)  # (type, lever): does the type ever touch the lever
        self.handles = handled[trees.type]  # (object, lever)
        if managed is not None:
            self.handles &= np.asarray(managed, bool)[trees.tree, None]
        self.levers = [lever for lever in Lever if self.handles[:, lever].any()]
        self.start = np.zeros((len(trees.entity), len(Lever)), bool)
        for lever in self.levers:
            objs = np.flatnonzero(self.handles[:, lever])
            self.start[objs, lever] = sim.get_lever(trees.entity[objs].tolist(), lever,
                                                    original=True)
        self.cache = self.start.copy()  # high-fidelity lever state per object
        self.level = np.full(len(trees), Level.HIGH, LEVEL_DTYPE)
        self.reverted = self._write_back_start()

    def lever_state(self, objs: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Boolean ``(len(objs), n_levers)``: the lever values of ``objs`` at per-object
        ``levels``."""
        return self.cache[objs] & ~self.off[self.trees.type[objs], levels]

    def apply(self, target: np.ndarray) -> np.ndarray:
        """Bring every tree to ``target`` level; returns the indices of the trees that changed."""
        target = np.asarray(target, LEVEL_DTYPE)
        changed = np.flatnonzero(target != self.level)
        if changed.size == 0:
            return changed
        in_changed = np.zeros(len(self.level), bool)
        in_changed[changed] = True
        objs = np.flatnonzero(in_changed[self.trees.tree])
        old = self.level[self.trees.tree[objs]]
        new = target[self.trees.tree[objs]]
        leaving_high = objs[(old == Level.HIGH) & (new != Level.HIGH)]
        for lever in self.levers:  # cache the high-fidelity state before lowering
            sel = leaving_high[self.handles[leaving_high, lever]]
            if sel.size:
                self.cache[sel, lever] = self.sim.get_lever(self.trees.entity[sel].tolist(), lever)
        self._write(objs, self.lever_state(objs, old), self.lever_state(objs, new))
        self.level[changed] = target[changed]
        return changed

    def restore_all(self) -> None:
        """Return every object to its lever state at the start, as read back from the simulator;
        all trees are HIGH afterwards."""
        self.level[:] = Level.HIGH
        self.cache[:] = self.start
        self._write_back_start()

    def _now(self) -> np.ndarray:
        """The levers of every object as the simulator has them now (unhandled ones = start)."""
        now = self.start.copy()
        for lever in self.levers:
            objs = np.flatnonzero(self.handles[:, lever])
            now[objs, lever] = self.sim.get_lever(self.trees.entity[objs].tolist(), lever)
        return now

    def _write_back_start(self) -> int:
        """Write the start state wherever the simulator differs from it; the number of objects
        that differed."""
        objs = np.arange(len(self.trees.entity))
        now = self._now()
        self._write(objs, now, self.start)
        return int((now != self.start).any(axis=1).sum())

    def mismatches(self) -> list[tuple[str, Lever]]:
        """(entity, lever) pairs whose lever in the simulator differs from the start state."""
        obj, lever = np.nonzero(self._now() != self.start)
        return [(e, Lever(int(v))) for e, v in zip(self.trees.entity[obj], lever)]

    def _write(self, objs: np.ndarray, before: np.ndarray, after: np.ndarray) -> None:
        """One change per (lever, enabled) pair for the objects whose lever value changes, all in
        one ``set_levers`` call where the simulator has it (in process), else one ``set_lever``
        each."""
        changes = []
        for lever in self.levers:
            diff = self.handles[objs, lever] & (before[:, lever] != after[:, lever])
            for enabled in (False, True):
                sel = objs[diff & (after[:, lever] == enabled)]
                if sel.size:
                    changes.append((self.trees.entity[sel].tolist(), lever, enabled))
        if self._set_levers is not None and changes:
            self._set_levers(changes)
        else:
            for names, lever, enabled in changes:
                self.sim.set_lever(names, lever, enabled)
