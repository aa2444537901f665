"""The kernel manager core: find the first active kernel and apply its transfer function.

Activation is the normal density of c_k(s) = c(centre_k, s) scaled to peak 1,
e_k(c) = exp(-c^2 / (2 sigma_k^2)), so ``activation_threshold`` is a fraction in (0, 1) and a
kernel is active within c < sigma_k sqrt(-2 ln threshold) of its centre. A kernel applies to
action a only if it has a fit for a (f_k is the superposition of its per-action fits).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..simulator.poses import quat_to_rpy, rpy_to_quat
from ..simulator.protocol import Simulator
from .errors import RealityGapError
from .kernel_file import load_kernels
from .kernels import Kernel
from .spec import POSE_COMPONENTS, SENSOR_VALUE, TWIST_COMPONENTS, Spec

if TYPE_CHECKING:
    from ..simulator.sensor_values import SensorValueSetter


class KernelSet:
    """All kernels of a file as arrays, for vectorised lookup."""

    def __init__(self, kernels: list[Kernel], spec: Spec):
        d, n_actions = len(spec.state), spec.n_actions
        self.spec = spec
        self.kernels = kernels
        self.weights = spec.weights
        self.threshold = spec.activation_threshold
        self.centres = np.array([k.centre for k in kernels]).reshape(len(kernels), d)
        self.sigma = np.array([k.sigma for k in kernels], dtype=float)
        self.coef = np.zeros((len(kernels), n_actions, d, d + 1))
        self.has_fit = np.zeros((len(kernels), n_actions), dtype=bool)
        for i, k in enumerate(kernels):
            for a, w in k.fits.items():
                self.coef[i, a], self.has_fit[i, a] = w, True

    @classmethod
    def load(cls, path: str | Path) -> "KernelSet":
        loaded = load_kernels(path)
        return cls(loaded.kernels, loaded.spec)

    def __len__(self) -> int:
        return len(self.kernels)

    def activation(self, state: np.ndarray) -> np.ndarray:
        """e_k(c_k(s)) for every kernel, ``(K,)``."""
        c = np.abs(self.centres - np.asarray(state, float)) @ self.weights
        return np.exp(-0.5 * (c / self.sigma) ** 2)

    def lookup(self, state: np.ndarray, action: int) -> tuple[int, np.ndarray] | None:
        """(k, f_k(s, a)) for the first kernel active at ``state`` with a fit for ``action``."""
        active = (self.activation(state) > self.threshold) & self.has_fit[:, action]
        if not active.any():
            return None
        k = int(active.argmax())
        return k, self.coef[k, action] @ np.append(np.asarray(state, float), 1.0)


class KernelRunner:
    """Applies kernels to a :class:`Simulator` through the spec's ``apply:`` mapping.

    f_k(s, a) is the state one sampling period after (s, a). Called right after the simulation
    has advanced one period from (s, a), ``apply(s, a)`` replaces the state the simulation
    produced by the one the kernel predicts (the paper: the simulation "returns f_k(s, a)").
    ``value`` targets are written to settable sensors through ``sensors`` (default: the
    simulator, e.g. ``RosSimulator``; in process: a ``SensorValues`` table); the overrides hold
    while kernels fire and are released at the first call on which none is active.
    """

    def __init__(self, simulator: Simulator, kernels: KernelSet,
                 sensors: SensorValueSetter | None = None):
        self.sim = simulator
        self.kernels = kernels
        values = [t for t in kernels.spec.apply if t.component == SENSOR_VALUE]
        self.sensor_names = [t.entity for t in values]
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

    def apply(self, state: np.ndarray, action: np.ndarray) -> tuple[int, np.ndarray] | None:
        """Look up (s, a); if a kernel is active, write f_k(s, a) into the simulator.

        ``action`` is the continuous command, discretised by the spec. Returns (k, f_k(s, a))
        or None when no kernel is active.
        """
        hit = self.kernels.lookup(state, int(self.kernels.spec.discretise(action)))
        if hit is None:
            self.release()
            return None
        target = hit[1]
        if self.sensor_names:
            self.sensors.set_sensor_values(self.sensor_names, target[self._value_index])
            self._overriding = True
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
