"""Transactions of the embedded engine: every mutation completes or leaves the engine as it was.

:func:`transaction` takes a :class:`Snapshot` of what a mutation may change before it runs and
puts it back when the mutation raises:

* always: the physics state (``mj_getState``'s integration state: time, qpos, qvel, controls,
  warm start, applied forces, active constraints), static bodies' poses in the model, and every
  lever flag (the model parameters the levers derive are written again from the flags);
* for scene edits (``structural``: spawn, delete), also a copy of the spec, the SDF records
  (models, links, joints, sensors, plugins), the controllers, the compiled model and data, the
  entity index, the lever tables, the initial state and the step hooks; script instances are told
  of the model they are back on (``recompiled`` with the map from the new bodies to the old).

Scripts are the one part restored only as far as their ``recompiled`` contract reaches: a script
whose own ``recompiled`` raised keeps what it did before raising.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

import mujoco
import numpy as np

STATE = mujoco.mjtState.mjSTATE_INTEGRATION
TABLES = ("models", "links", "joints", "sensors", "plugins")
BODY_FLAGS = ("dynamics_off", "collision_off", "gravity_off", "carried")


def physics_state(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """The integration state of ``data`` (time included), as ``mj_setState`` takes it back."""
    state = np.empty(mujoco.mj_stateSize(model, STATE))
    mujoco.mj_getState(model, data, state, STATE)
    return state


def set_physics_state(model: mujoco.MjModel, data: mujoco.MjData, state: np.ndarray) -> None:
    mujoco.mj_setState(model, data, state, STATE)


@dataclass
class Snapshot:
    """What one engine mutation may change, taken before it runs."""

    model: Any
    data: Any
    state: np.ndarray
    body_pos: np.ndarray
    body_quat: np.ndarray
    body_flags: dict[str, np.ndarray]
    actuator_off: np.ndarray
    sensor_on: dict[str, bool]
    plugin_on: dict[str, bool]
    scene: dict[str, Any] | None = None  # structural edits only


def take(engine, structural: bool) -> Snapshot:
    m, d = engine.model, engine.data
    levers = engine._body_levers
    snap = Snapshot(m, d, physics_state(m, d), m.body_pos.copy(), m.body_quat.copy(),
                    {f: getattr(levers, f).copy() for f in BODY_FLAGS},
                    engine._actuator_levers.off.copy(), dict(engine._sensor_on),
                    dict(engine._plugin_on))
    if structural:
        w = engine.world
        snap.scene = {
            "spec": w.spec.copy(), "tables": {t: dict(getattr(w, t)) for t in TABLES},
            "controllers": dict(engine.controllers), "index": engine.index,
            "body_levers": levers, "actuator_levers": engine._actuator_levers,
            "initial": (engine._initial_body_pos, engine._initial_body_quat,
                        engine._initial_qpos),
            "hooks": list(engine.hooks)}
    return snap


def restore(engine, snap: Snapshot) -> None:
    """Put ``engine`` back to ``snap``."""
    if snap.scene is not None:
        _restore_scene(engine, snap)
    m, d = engine.model, engine.data
    set_physics_state(m, d, snap.state)
    m.body_pos[:], m.body_quat[:] = snap.body_pos, snap.body_quat
    levers = engine._body_levers
    for flag, values in snap.body_flags.items():
        getattr(levers, flag)[:] = values
    engine._actuator_levers.off[:] = snap.actuator_off
    levers.apply(m, d)
    engine._actuator_levers.apply(m)
    engine._sensor_on, engine._plugin_on = dict(snap.sensor_on), dict(snap.plugin_on)
    mujoco.mj_forward(m, d)
    engine._stale = False


def _restore_scene(engine, snap: Snapshot) -> None:
    scene, w = snap.scene, engine.world
    recompiled = engine.index is not scene["index"]
    new_bodies = engine.index.body_names
    w.spec = scene["spec"]
    for name, saved in scene["tables"].items():
        table = getattr(w, name)
        table.clear()
        table.update(saved)
    engine.controllers.clear()
    engine.controllers.update(scene["controllers"])
    engine.model, engine.data = snap.model, snap.data
    engine.index = scene["index"]
    engine._body_levers, engine._actuator_levers = scene["body_levers"], scene["actuator_levers"]
    (engine._initial_body_pos, engine._initial_body_quat,
     engine._initial_qpos) = scene["initial"]
    engine.scripts.discard_pending()
    if recompiled:  # scripts saw the new model: map them back (new body id -> old id)
        old_id = engine.index.body_id
        engine.scripts.recompiled(engine, np.array([old_id.get(n, -1) for n in new_bodies], int))
    for hook in list(engine.hooks):
        engine.hooks.remove(hook)
    for hook in scene["hooks"]:
        engine.hooks.add(hook)


@contextlib.contextmanager
def transaction(engine, structural: bool = False) -> Iterator[Snapshot]:
    """Run the body as one mutation of ``engine``: if it raises, the engine is put back."""
    snap = take(engine, structural)
    try:
        yield snap
    except BaseException:
        restore(engine, snap)
        raise
