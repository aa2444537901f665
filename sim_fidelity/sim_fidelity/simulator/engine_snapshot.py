"""Take and restore :class:`~.snapshot.EngineSnapshot`: the embedded engine's full dynamic state.

A snapshot holds what :mod:`.undo` keeps for a transaction (MuJoCo's integration state: time,
qpos, qvel, act, warm start, controls, applied forces, constraint activations, mocap, plugin
state; static bodies' poses; every lever flag) and what else carries over from one step to the
next: the weld targets the scripts retarget (``EQ_FIELDS``), a copy of MuJoCo's whole ``MjData``
(the sleeping islands' state, the last contacts and solver results that scripts and the next step
read), and each script instance's attributes. Restoring one and stepping gives the trajectory
the engine had after the save, bit for bit. A restore on an engine whose entities differ from the
save's (a spawn or delete since) is refused before anything changes.
"""
from __future__ import annotations

import copy

import mujoco

from . import undo
from .errors import InvalidOperationError
from .snapshot import EngineSnapshot, Snapshot

EQ_FIELDS = ("eq_obj1id", "eq_obj2id", "eq_data")


def take(engine) -> EngineSnapshot:
    """The full dynamic state of ``engine``, copied."""
    core = undo.take(engine, structural=False)
    m, d = engine.model, engine.data
    core.model = core.data = None  # the live objects are not part of the saved state
    keep = {id(engine): engine, id(m): m, id(d): d}  # a script's references to them stay
    return EngineSnapshot(
        time=float(d.time), world=engine.world.name, entities=tuple(engine.index.info),
        core=core, eq=tuple(getattr(m, f).copy() for f in EQ_FIELDS), data=copy.copy(d),
        scripts=tuple(copy.deepcopy(vars(s), dict(keep)) for s in engine.scripts))


def check(engine, snap: Snapshot) -> EngineSnapshot:
    """``snap`` as an engine snapshot that fits ``engine``; InvalidOperationError otherwise."""
    if not isinstance(snap, EngineSnapshot):
        raise InvalidOperationError(f"a {type(snap).__name__} cannot be restored on the embedded "
                                    "engine: take it with the engine's snapshot()")
    if snap.world != engine.world.name or snap.entities != tuple(engine.index.info):
        now, then = set(engine.index.info), set(snap.entities)
        diff = sorted(now ^ then)[:4]
        raise InvalidOperationError(
            f"the snapshot of world '{snap.world}' at t = {snap.time:g} s does not fit world "
            f"'{engine.world.name}': the entities differ ({len(then)} then, {len(now)} now"
            + (f", e.g. {diff}" if diff else ", in another order") + "); a spawn or delete since "
            "the save is not undone by a restore")
    return snap


def restore(engine, snap: Snapshot) -> None:
    """Put ``engine`` back to ``snap`` exactly (checked first: a misfit changes nothing)."""
    snap = check(engine, snap)
    m, d = engine.model, engine.data
    for name, saved in zip(EQ_FIELDS, snap.eq):
        getattr(m, name)[:] = saved
    keep = {id(engine): engine, id(m): m, id(d): d}
    for script, saved in zip(engine.scripts, snap.scripts):
        state = vars(script)
        state.clear()
        state.update(copy.deepcopy(saved, dict(keep)))
    undo.restore(engine, snap.core)  # the levers' model parameters written again from the flags
    mujoco.mj_copyData(d, m, snap.data)  # then all of the data as it was (writing the levers
    # woke every body with a -0.0 velocity)
    engine._stale = False
