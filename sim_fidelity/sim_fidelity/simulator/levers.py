"""Run-time fidelity levers on a compiled MuJoCo model, one compiled loop over the bodies changed.

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

from ..jit import kernel

HOLD_FACTOR = 1000.0  # held DoF damping = HOLD_FACTOR * inertia / step: each step keeps 1/1001 of
# the velocity (implicit damping). A fixed huge value (1e9) diverged with MuJoCo's sleeping islands.
CARRIED_BIT = 2  # contact bit of carried bodies (models use bit 0, MuJoCo's default)


@kernel
def write_body_params(bodies: np.ndarray, geom_adr: np.ndarray, geom_num: np.ndarray,
                      dof_adr: np.ndarray, dof_num: np.ndarray, collision_off: np.ndarray,
                      dynamics_off: np.ndarray, gravity_off: np.ndarray, carried: np.ndarray,
                      orig_contype: np.ndarray, orig_conaffinity: np.ndarray,
                      orig_gravcomp: np.ndarray, orig_damping: np.ndarray,
                      held_damping: np.ndarray, geom_contype: np.ndarray,
                      geom_conaffinity: np.ndarray, body_contype: np.ndarray,
                      body_conaffinity: np.ndarray, body_gravcomp: np.ndarray,
                      dof_damping: np.ndarray) -> None:
    """The parameters the flags of each of ``bodies`` give (each body's geoms and DoFs are
    consecutive): its geoms' contype/conaffinity (0 where collision is off; contype 0 where
    dynamics is off; carried: ``CARRIED_BIT`` added to contype and the only conaffinity), the
    body masks (the OR of its geoms'), gravity compensation (1 where gravity or dynamics is off),
    its DoFs' damping (the held one where dynamics is off); the originals otherwise."""
    for b in bodies:
        col, dyn = collision_off[b], dynamics_off[b]
        car = carried[b] and not col
        body_type, body_affinity = 0, 0
        for g in range(geom_adr[b], geom_adr[b] + geom_num[b]):
            contype = 0 if col or dyn else orig_contype[g]
            affinity = 0 if col else orig_conaffinity[g]
            if car:
                contype, affinity = contype | CARRIED_BIT, CARRIED_BIT
            geom_contype[g], geom_conaffinity[g] = contype, affinity
            body_type |= contype
            body_affinity |= affinity
        body_contype[b], body_conaffinity[b] = body_type, body_affinity
        body_gravcomp[b] = 1.0 if gravity_off[b] or dyn else orig_gravcomp[b]
        for d in range(dof_adr[b], dof_adr[b] + dof_num[b]):
            dof_damping[d] = held_damping[d] if dyn else orig_damping[d]


@kernel
def stop_and_wake(bodies: np.ndarray, stop: np.ndarray, dof_adr: np.ndarray,
                  dof_num: np.ndarray, dynamics_off: np.ndarray, qvel: np.ndarray) -> None:
    """Zero the velocity of the bodies of ``stop`` whose dynamics is off, then wake every one of
    ``bodies``: a DoF at rest gets velocity -0.0 (MuJoCo wakes a tree whose velocity is
    written, and -0.0 moves nothing)."""
    for b in stop:
        if dynamics_off[b]:
            for d in range(dof_adr[b], dof_adr[b] + dof_num[b]):
                qvel[d] = 0.0
    for b in bodies:
        for d in range(dof_adr[b], dof_adr[b] + dof_num[b]):
            if qvel[d] == 0.0:
                qvel[d] = -0.0


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
        self.geom_adr, self.geom_num = m.body_geomadr.copy(), m.body_geomnum.copy()
        self.dof_adr, self.dof_num = m.body_dofadr.copy(), m.body_dofnum.copy()
        self.dynamics_off = np.zeros(m.nbody, bool)
        self.collision_off = np.zeros(m.nbody, bool)
        self.gravity_off = np.zeros(m.nbody, bool)
        self.carried = np.zeros(m.nbody, bool)
        self._none = np.zeros(0, np.intp)
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
        the velocity of the held ones among ``stop``; wake what changed (MuJoCo's sleeping
        islands assume a sleeping body's contacts and parameters stay as they were, else
        "contact involves sleeping geom"; held bodies fall asleep again on their own)."""
        m = model
        b = np.arange(self.nbody) if bodies is None else np.asarray(bodies, np.intp)
        self._write(b, self.collision_off, self.dynamics_off, self.gravity_off, m.geom_contype,
                    m.geom_conaffinity, m.body_contype, m.body_conaffinity, m.body_gravcomp,
                    m.dof_damping)
        stop_and_wake(b, self._none if stop is None else np.asarray(stop, np.intp), self.dof_adr,
                      self.dof_num, self.dynamics_off, data.qvel)

    def _write(self, bodies: np.ndarray, collision_off: np.ndarray, dynamics_off: np.ndarray,
               gravity_off: np.ndarray, *out: np.ndarray) -> None:
        """:func:`write_body_params` of ``bodies`` under the given flags into ``out``."""
        write_body_params(bodies, self.geom_adr, self.geom_num, self.dof_adr, self.dof_num,
                          collision_off, dynamics_off, gravity_off, self.carried,
                          self.orig_contype, self.orig_conaffinity, self.orig_gravcomp,
                          self.orig_damping, self.held_damping, *out)

    def at_originals(self, model) -> bool:
        """True when the fidelity levers' parameters equal the originals (what CARRIED sets
        belongs to the gripper that carries, and is expected)."""
        m = model
        fields = (m.geom_contype, m.geom_conaffinity, m.body_contype, m.body_conaffinity,
                  m.body_gravcomp, m.dof_damping)
        want = [f.copy() for f in fields]
        no = np.zeros(m.nbody, bool)
        self._write(np.arange(m.nbody), no, no, no, *want)
        return all(np.array_equal(f, w) for f, w in zip(fields, want))


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
