"""The kernel manager core: find the first active kernel and apply its transfer function.

A kernel covers a region of nodes (its ``members``); c_k(s) is the distance from s to the
nearest member and its activation the normal density of c_k scaled to peak 1,
e_k(c) = exp(-c^2 / (2 sigma_k^2)), so ``activation_threshold`` is a fraction in (0, 1) and a
kernel is active within c < sigma_k sqrt(-2 ln threshold) of any of its members. f_k is one
linear map of state and continuous action, so it applies to every command.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..simulator.poses import quat_to_rpy, rpy_to_quat
from ..simulator.protocol import Simulator
from .errors import RealityGapError
from .kernel_file import load_kernels
from .kernels import Kernel
from .spec import HOLD_PERIOD, POSE_COMPONENTS, SENSOR_VALUE, TWIST_COMPONENTS, Spec
from .transitions import TURN, component_difference, unwrap_near, wrap_angle, wrap_states

if TYPE_CHECKING:
    from ..simulator.sensor_values import SensorValueSetter

_BLOCK = 1 << 22  # elements per distance block in :meth:`KernelSet.active`


class KernelSet:
    """All kernels of a file as arrays, for vectorised lookup.

    The members of all kernels are stacked in kernel order, so the first member within reach
    belongs to the first active kernel. A grid over the weighted state components, cells as
    wide as the longest reach, lists for each cell the members within reach of any state in
    it: a lookup computes distances to those only. Along a periodic component (an angle that
    wraps at +-pi) the grid has a whole number of cells round the circle, at least as wide as
    the reach, and the cells on either side of the wrap are neighbours; with fewer than three
    such cells the component is not gridded (one cell round the circle).
    """

    def __init__(self, kernels: list[Kernel], spec: Spec):
        d, m = len(spec.state), len(spec.action)
        self.spec = spec
        self.kernels = kernels
        self.weights = spec.weights
        self.periodic = spec.periodic
        self.threshold = spec.activation_threshold
        sizes = np.array([len(k.members) for k in kernels], dtype=np.int64)
        self.members = np.vstack([k.members for k in kernels]).reshape(-1, d) if kernels \
            else np.zeros((0, d))
        self.owner = np.repeat(np.arange(len(kernels)), sizes)
        self.first = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
        self.sigma = np.array([k.sigma for k in kernels], dtype=float)
        # active <=> exp(-c^2 / 2 sigma^2) > threshold <=> c < sigma sqrt(-2 ln threshold)
        self.reach = (self.sigma * np.sqrt(-2.0 * np.log(self.threshold)))[self.owner]
        self.coef = np.array([k.transfer for k in kernels]).reshape(len(kernels), d, d + m + 1)
        self._axes = np.flatnonzero(self.weights > 0)
        reach = float(self.reach.max()) if len(self.reach) else 1.0
        cell = reach / self.weights[self._axes]
        # cells round a periodic axis: as many as fit at least a reach wide; < 3 -> one
        turns = np.where(self.periodic[self._axes], np.floor(TURN / cell), 0).astype(np.int64)
        self._turns = np.where(turns >= 3, turns, np.where(self.periodic[self._axes], 1, 0))
        self._cell = np.where(self._turns > 0, TURN / np.maximum(self._turns, 1), cell)
        self._key = [(int(a), 1.0 / c, int(n)) for a, c, n in
                     zip(self._axes, self._cell, self._turns)]
        self._index = self._grid()
        self._input = np.ones(d + m + 1)  # [s, u, 1], filled per lookup
        self._any_periodic = bool(self.periodic.any())

    def _grid(self) -> dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Cell key -> (centres, reaches, owning kernels) of the members in that cell or a
        neighbouring one, in member order."""
        if not len(self.members):
            return {}
        home = self._cells(self.members[:, self._axes])
        offsets = np.stack(np.meshgrid(*[[-1, 0, 1]] * len(self._axes), indexing="ij"),
                           axis=-1).reshape(-1, len(self._axes))
        cells = (home[:, None, :] + offsets[None]).reshape(-1, len(self._axes))
        turns = self._turns
        cells = np.where(turns > 0, cells % np.maximum(turns, 1), cells)
        member = np.repeat(np.arange(len(self.members)), len(offsets))
        # (cell, member) pairs once each: round a periodic axis two offsets may meet
        pairs = np.unique(np.c_[cells, member], axis=0)
        cells, member = pairs[:, :-1], pairs[:, -1]
        keys, inverse = np.unique(cells, axis=0, return_inverse=True)
        order = np.lexsort((member, inverse.ravel()))  # members ascending within a cell
        bounds = np.searchsorted(inverse.ravel()[order], np.arange(len(keys) + 1))
        index = {}
        for i in range(len(keys)):
            near = member[order[bounds[i]:bounds[i + 1]]]
            index[tuple(keys[i].tolist())] = (self.members[near], self.reach[near],
                                              self.owner[near])
        return index

    def _cells(self, values: np.ndarray) -> np.ndarray:
        """Grid cells of the gridded components ``values`` ``(n, len(axes))``."""
        wrapped = np.where(self._turns > 0, wrap_angle(values) + np.pi, values)
        cells = np.floor(wrapped / self._cell).astype(np.int64)
        return np.where(self._turns > 0, cells % np.maximum(self._turns, 1), cells)

    @classmethod
    def load(cls, path: str | Path) -> "KernelSet":
        loaded = load_kernels(path)
        return cls(loaded.kernels, loaded.spec)

    def __len__(self) -> int:
        return len(self.kernels)

    def activation(self, state: np.ndarray) -> np.ndarray:
        """e_k(c_k(s)) for every kernel, ``(K,)``."""
        if not len(self.kernels):
            return np.zeros(0)
        c = component_difference(self.members, np.asarray(state, float), self.periodic) \
            @ self.weights
        return np.exp(-0.5 * (np.minimum.reduceat(c, self.first) / self.sigma) ** 2)

    def lookup(self, state: np.ndarray, action: np.ndarray) -> tuple[int, np.ndarray] | None:
        """(k, f_k(s, u)) for the first kernel active at ``state``; ``action`` continuous."""
        s = np.asarray(state, float)
        values = s.tolist()
        near = self._index.get(tuple(
            math.floor(values[a] * inv) if not n else
            math.floor(((values[a] + math.pi) % TURN) * inv) % n for a, inv, n in self._key))
        if near is None:
            return None
        centres, reach, owner = near
        diff = component_difference(centres, s, self.periodic) if self._any_periodic \
            else np.abs(centres - s)  # the hot path stays one subtraction without angles
        within = diff @ self.weights < reach
        i = int(within.argmax())
        if not within[i]:
            return None
        k = int(owner[i])
        x = self._input
        x[:len(values)], x[len(values):-1] = s, np.ravel(action)
        if self._any_periodic:
            x[:len(values)] = unwrap_near(s, self.kernels[k].centre, self.periodic)
            return k, wrap_states(self.coef[k] @ x, self.periodic)
        return k, self.coef[k] @ x

    def active(self, states: np.ndarray) -> np.ndarray:
        """The first active kernel at each of ``states`` ``(n, d)``, -1 where none (vectorised
        over states and kernels, in blocks)."""
        states = np.atleast_2d(np.asarray(states, float))
        out = np.full(len(states), -1, dtype=np.int64)
        if not len(self.kernels):
            return out
        step = max(1, _BLOCK // max(1, self.members.size))
        for start in range(0, len(states), step):
            block = states[start:start + step]
            within = component_difference(block[:, None, :], self.members[None],
                                          self.periodic) @ self.weights < self.reach
            first = within.argmax(axis=1)
            out[start:start + step] = np.where(within[np.arange(len(block)), first],
                                               self.owner[first], -1)
        return out


class KernelRunner:
    """Applies kernels to a :class:`Simulator` through the spec's ``apply:`` mapping.

    f_k(s, a) is the state one sampling period after (s, a). Called right after the simulation
    has advanced one period from (s, a), ``apply(s, a)`` replaces the state the simulation
    produced by the one the kernel predicts (the paper: the simulation "returns f_k(s, a)").
    ``value`` targets are written to settable sensors through ``sensors`` (default: the
    simulator, e.g. ``RosSimulator``; in process: a ``SensorValues`` table); the overrides hold
    while kernels fire and are released at the first call on which none is active, or, for
    targets with ``hold: period``, by :meth:`expire`, which the manager calls before it reads
    the state of its next look.
    """

    def __init__(self, simulator: Simulator, kernels: KernelSet,
                 sensors: SensorValueSetter | None = None):
        self.sim = simulator
        self.kernels = kernels
        values = [t for t in kernels.spec.apply if t.component == SENSOR_VALUE]
        self.sensor_names = [t.entity for t in values]
        self.expiring = [t.entity for t in values if t.hold == HOLD_PERIOD]
        self._value_index = np.array([t.index for t in values], dtype=int)
        self.sensors = sensors if sensors is not None or not values else simulator
        if values and not hasattr(self.sensors, "set_sensor_values"):
            raise RealityGapError(f"the spec sets sensor values {self.sensor_names}: give a "
                                  "sensors= table (the simulator has no set_sensor_values)")
        self._overriding = False
        targets = [t for t in kernels.spec.apply if t.component != SENSOR_VALUE]
        self.entities = list(dict.fromkeys(t.entity for t in targets))
        ent = np.array([self.entities.index(t.entity) for t in targets], dtype=int)
        part = np.array([t.component.split(".")[0] for t in targets])
        comp = [t.component.split(".")[1] for t in targets]
        index = np.array([t.index for t in targets], dtype=int)
        linear = np.array([c in ("x", "y", "z") for c in comp], dtype=bool)
        angle = (part == "pose") & ~linear
        twist = part == "twist"
        self._pos = (ent[linear], np.array([POSE_COMPONENTS.index(c) for c, m in
                                            zip(comp, linear) if m], dtype=int), index[linear])
        self._rpy = (ent[angle], np.array([POSE_COMPONENTS.index(c) - 3 for c, m in
                                           zip(comp, angle) if m], dtype=int), index[angle])
        self._twist = (ent[twist], np.array([TWIST_COMPONENTS.index(c) for c, m in
                                             zip(comp, twist) if m], dtype=int), index[twist])

    def release(self) -> None:
        """Give the sensor values back to the simulation, if this runner overrides them."""
        if self._overriding:
            self.sensors.set_sensor_values(self.sensor_names,
                                           np.full(len(self.sensor_names), np.nan))
            self._overriding = False

    def expire(self) -> None:
        """Release the overrides held for one sampling period (``hold: period``): f_k(s, a) is
        the state one period on, so they end before the manager reads its next state."""
        if self._overriding and self.expiring:
            self.sensors.set_sensor_values(self.expiring, np.full(len(self.expiring), np.nan))
            self._overriding = len(self.expiring) < len(self.sensor_names)

    def apply(self, state: np.ndarray, action: np.ndarray) -> tuple[int, np.ndarray] | None:
        """Look up (s, a); if a kernel is active, write f_k(s, a) into the simulator.

        ``action`` is the continuous command. Returns (k, f_k(s, u)) or None when no kernel
        is active.
        """
        hit = self.kernels.lookup(state, action)
        if hit is None:
            self.release()
            return None
        target = hit[1]
        if self.sensor_names:
            self._overriding = True  # before the call: a call that fails may still have landed
            self.sensors.set_sensor_values(self.sensor_names, target[self._value_index])
        if not self.entities:
            return hit
        poses, twists = self.sim.get_states(self.entities)
        poses, twists = np.array(poses, float), np.array(twists, float)
        ent, col, idx = self._pos
        poses[ent, col] = target[idx]
        ent, col, idx = self._rpy
        if len(ent):
            rows = np.unique(ent)
            rpy = quat_to_rpy(poses[:, 3:])
            rpy[ent, col] = target[idx]
            poses[rows, 3:] = rpy_to_quat(rpy[rows, 0], rpy[rows, 1], rpy[rows, 2]).T
        ent, col, idx = self._twist
        twists[ent, col] = target[idx]
        has_pose = len(self._pos[0]) + len(self._rpy[0]) > 0
        self.sim.set_states(self.entities, poses if has_pose else None,
                            twists if len(ent) else None)
        return hit
