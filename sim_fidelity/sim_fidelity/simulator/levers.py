"""Run-time fidelity levers on a compiled MuJoCo model, vectorised over bodies.

Each lever is a boolean "off" flag per body (or per actuator, sensor, plugin). The model parameters
the levers touch are derived from the flags and the originals of the compiled model, so any
combination of levers is undone exactly and survives a recompile (flags are kept by name).

Mechanisms (MuJoCo 4.0; `test_engine.py` checks each one applied, observed and undone):

Changed bodies are woken (sleeping islands must not see their parameters change).

* DYNAMICS off: the body's DoFs get a damping of HOLD_FACTOR times their inertia per step
  (integrated implicitly, so stable) and zero velocity, and gravity compensation; the body stays
  where it is but still collides with dynamic bodies. Two held bodies do not collide with each
  other (``contype = 0``), which removes their contact pairs from collision detection and the
  solver.
* COLLISION off: ``contype = conaffinity = 0`` on the body's geoms.
* GRAVITY off: ``body_gravcomp = 1`` (needs at least one gravity-compensated body at compile time:
  the engine adds an anchor body).
* CARRIED (not a fidelity lever: set by a gripper script for what it has welded to itself): the
  body's geoms get ``CARRIED_BIT`` added to their contype and as their only conaffinity. They
  still collide with everything whose affinity takes their contype, and with each other, but not
  with geoms of conaffinity 0 (a gripper's cups), which would otherwise press on a load the weld
  already carries: a stiff, redundant loop.
* ACTUATION off: the actuator's gain and bias parameters are zeroed.

The body-level masks (``body_contype``/``body_conaffinity``, the OR of the body's geoms) follow the
geoms: MuJoCo's broad phase skips a body whose two masks are 0, so a LOW body (dynamics and
collision off) costs nothing there (measured on truck B: 0.93 -> 0.47 ms/step with 1007 LOW
packets).
"""
from __future__ import annotations

import numpy as np

HOLD_FACTOR = 1000.0  # held DoF damping = HOLD_FACTOR * inertia / step: each step keeps 1/1001 of
# the velocity (implicit damping). A fixed huge value (1e9) diverged with MuJoCo's sleeping islands.
CARRIED_BIT = 2  # contact bit of carried bodies (models use bit 0, MuJoCo's default)


class BodyLevers:
    """DYNAMICS, COLLISION, GRAVITY and CARRIED flags per body and the parameters derived from
    them."""

    def __init__(self, model, previous: "BodyLevers | None" = None,
                 body_names: list[str] | None = None):
        m = model
        self.nbody = m.nbody
        self.orig_contype = m.geom_contype.copy()
        self.orig_conaffinity = m.geom_conaffinity.copy()
        self.orig_gravcomp = m.body_gravcomp.copy()
        self.orig_damping = m.dof_damping.copy()
        self.held_damping = HOLD_FACTOR * m.dof_M0 / m.opt.timestep
        self.geom_body = m.geom_bodyid.copy()
        self.dof_body = m.dof_bodyid.copy()
        self.geom_adr, self.geom_num = m.body_geomadr.copy(), m.body_geomnum.copy()
        self.dof_adr, self.dof_num = m.body_dofadr.copy(), m.body_dofnum.copy()
        self.dynamics_off = np.zeros(m.nbody, bool)
        self.collision_off = np.zeros(m.nbody, bool)
        self.gravity_off = np.zeros(m.nbody, bool)
        self.carried = np.zeros(m.nbody, bool)
        if previous is not None and body_names is not None:
            old = {n: i for i, n in enumerate(previous.body_names)}
            pairs = [(i, old[n]) for i, n in enumerate(body_names) if n in old]
            if pairs:
                new_i, old_i = np.array(pairs).T
                for flag in ("dynamics_off", "collision_off", "gravity_off", "carried"):
                    getattr(self, flag)[new_i] = getattr(previous, flag)[old_i]
        self.body_names = list(body_names or [])

    def flag(self, name: str) -> np.ndarray:
        return {"DYNAMICS": self.dynamics_off, "COLLISION": self.collision_off,
                "GRAVITY": self.gravity_off, "CARRIED": self.carried}[name]

    def set(self, model, data, name: str, bodies: np.ndarray, off: bool) -> None:
        """Set one lever for ``bodies`` and write the derived parameters of just those bodies."""
        self.set_many(model, data, [(name, bodies, off)])

    def set_many(self, model, data, changes: list[tuple[str, np.ndarray, bool]]) -> None:
        """Set levers ``(name, bodies, off)`` in order, then write the derived parameters once,
        for all the bodies they touch; bodies held after the batch whose DYNAMICS it switched off
        are stopped."""
        for name, bodies, off in changes:
            self.flag(name)[bodies] = off
        touched = np.concatenate([bodies for _, bodies, _ in changes])
        stopped = [bodies for name, bodies, off in changes if name == "DYNAMICS" and off]
        self.apply(model, data, touched, np.concatenate(stopped) if stopped else None)

    def apply(self, model, data, bodies: np.ndarray | None = None,
              stop: np.ndarray | None = None) -> None:
        """Write contype/conaffinity, gravcomp and damping for ``bodies`` (all when None); zero
        the velocity of the held ones among ``stop``."""
        m = model
        b = np.arange(self.nbody) if bodies is None else np.asarray(bodies, int)
        g = self._geoms(b)
        gb = self.geom_body[g]
        m.geom_contype[g], m.geom_conaffinity[g] = self._masks(g, self.collision_off[gb],
                                                               self.dynamics_off[gb])
        for body_field, geom_field in ((m.body_contype, m.geom_contype),
                                       (m.body_conaffinity, m.geom_conaffinity)):
            body_field[b] = 0
            np.bitwise_or.at(body_field, gb, geom_field[g])
        m.body_gravcomp[b] = np.where(self.gravity_off[b] | self.dynamics_off[b], 1.0,
                                      self.orig_gravcomp[b])
        d = self._dofs(b)
        held = self.dynamics_off[self.dof_body[d]]
        m.dof_damping[d] = np.where(held, self.held_damping[d], self.orig_damping[d])
        if stop is not None:
            s = self._dofs(np.asarray(stop, int))
            data.qvel[s[self.dynamics_off[self.dof_body[s]]]] = 0.0
        # Wake what changed: MuJoCo's sleeping islands assume a sleeping body's contacts and
        # parameters stay as they were (else "contact involves sleeping geom"). A -0.0 velocity
        # wakes a tree without moving it; held bodies fall asleep again on their own.
        still = d[data.qvel[d] == 0.0]
        data.qvel[still] = -0.0

    def _geoms(self, bodies: np.ndarray) -> np.ndarray:
        """The geoms of ``bodies`` (each body's are consecutive in a compiled model)."""
        return _ranges(self.geom_adr[bodies], self.geom_num[bodies])

    def _dofs(self, bodies: np.ndarray) -> np.ndarray:
        """The DoFs of ``bodies`` (each body's are consecutive)."""
        return _ranges(self.dof_adr[bodies], self.dof_num[bodies])

    def _masks(self, g: np.ndarray, col_off: np.ndarray, dyn_off: np.ndarray):
        """contype and conaffinity of geoms ``g`` from the flags of their bodies."""
        carried = self.carried[self.geom_body[g]] & ~col_off
        contype = np.where(col_off | dyn_off, 0, self.orig_contype[g])
        conaffinity = np.where(col_off, 0, self.orig_conaffinity[g])
        return (np.where(carried, contype | CARRIED_BIT, contype),
                np.where(carried, CARRIED_BIT, conaffinity))

    def at_originals(self, model) -> bool:
        """True when the fidelity levers' parameters equal the originals (what CARRIED sets
        belongs to the gripper that carries, and is expected)."""
        m = model
        no = np.zeros(m.ngeom, bool)
        contype, conaffinity = self._masks(np.arange(m.ngeom), no, no)
        body_masks = []
        for geom_field in (contype, conaffinity):
            field = np.zeros(m.nbody, geom_field.dtype)
            np.bitwise_or.at(field, self.geom_body, geom_field)
            body_masks.append(field)
        return (np.array_equal(m.geom_contype, contype)
                and np.array_equal(m.geom_conaffinity, conaffinity)
                and np.array_equal(m.body_contype, body_masks[0])
                and np.array_equal(m.body_conaffinity, body_masks[1])
                and np.array_equal(m.body_gravcomp, self.orig_gravcomp)
                and np.array_equal(m.dof_damping, self.orig_damping))


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``arange(s, s + c)`` for each ``(s, c)``, concatenated."""
    ends = np.cumsum(count)
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(start - (ends - count), count)


class ActuatorLevers:
    """ACTUATION flag per actuator: off zeroes gain and bias so the joint is passive."""

    def __init__(self, model, previous: "ActuatorLevers | None" = None,
                 names: list[str] | None = None):
        self.orig_gain = model.actuator_gainprm.copy()
        self.orig_bias = model.actuator_biasprm.copy()
        self.off = np.zeros(model.nu, bool)
        self.names = list(names or [])
        if previous is not None:
            old = {n: i for i, n in enumerate(previous.names)}
            for i, n in enumerate(self.names):
                if n in old:
                    self.off[i] = previous.off[old[n]]

    def set(self, model, actuators: np.ndarray, off: bool) -> None:
        self.off[actuators] = off
        self.apply(model, actuators)

    def apply(self, model, actuators: np.ndarray | None = None) -> None:
        a = np.arange(model.nu) if actuators is None else np.asarray(actuators, int)
        off = self.off[a][:, None]
        model.actuator_gainprm[a] = np.where(off, 0.0, self.orig_gain[a])
        model.actuator_biasprm[a] = np.where(off, 0.0, self.orig_bias[a])
