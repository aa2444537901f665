"""The single-simulation baselines of paper 003, Sec. 4.2, on the embedded engine.

1. **contact only**: the main simulation alone (a :class:`~.drive.ReplayWorld`) replays the
   recording (the arm by joint positions, the fingers as :mod:`.drive` says); the hand holds
   what its contacts hold.
2. **rigid binding on annotations**: :class:`BindingWorld` in mode ``annotation``: a
   ``close_hand`` annotation (through a trigger's ``bind`` event) welds the object nearest to the
   grasp point (within ``reach``) to the palm where it is; ``open_hand`` (``release``) frees it.
3. **force-based binding** (like the common Gazebo grasp plug-in): mode ``force``: binds when the
   thumb and at least one opposing finger press an object with at least ``force_threshold`` N for
   ``force_ticks`` ticks in a row, releases when that has not held for ``force_ticks`` ticks.

The weld is a MuJoCo weld equality between the palm and each graspable object, compiled into the
world inactive (:func:`binding_engine`) and switched on at run time with the relative pose of the
moment, so the object does not jump: a rigid (stiff, not kinematic) bond inside the one physics
simulation, as a fixed joint created at run time is in Gazebo.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from ...simulator.engine import MujocoEngine
from ...simulator.sdf import load_world_string
from ...world_generators import conductor_scenarios as cs
from ...world_generators import ur5e_hand3 as arm
from ..errors import ModelError
from ..model import Requirement, RequirementKind, Stepping
from . import DEFAULT_FINGER_DRIVE
from .drive import ReplayWorld
from .grasp import ROBOT

PALM = f"{ROBOT}::palm"
MODES = ("annotation", "force")
FORCE_THRESHOLD, FORCE_TICKS = 1.0, 5  # N, ticks
REACH = 0.14  # m from the palm's origin (the grasp point is about 0.11 m in front of it)


def binding_engine(scene: Mapping[str, Mapping[str, Any]], objects: Sequence[str],
                   name: str = "scenario") -> MujocoEngine:
    """The scenario's world with an inactive weld between the palm and each of ``objects``."""
    loaded = load_world_string(cs.scenario_world_sdf(name, scene))
    for obj in objects:
        if obj in scene:
            loaded.spec.add_equality(name=f"bind_{obj}", type=mujoco.mjtEq.mjEQ_WELD,
                                     objtype=mujoco.mjtObj.mjOBJ_BODY, name1=PALM,
                                     name2=f"{obj}::link", active=False)
    return MujocoEngine(loaded)


class BindingWorld(ReplayWorld):
    """The main simulation with a grasp binding (baselines 2 and 3). Parameters: ``mode``
    (``annotation`` or ``force``), ``objects`` (graspable entities), ``reach``,
    ``force_threshold``, ``force_ticks``. Output: the simulator's plus ``bound`` (the object
    welded to the palm, or None)."""

    def __init__(self, name: str, simulator: MujocoEngine | None = None, *,
                 stepping: Stepping = Stepping.SERVICE, period: float | None = None,
                 finger_drive: str = DEFAULT_FINGER_DRIVE):
        super().__init__(name, simulator, stepping=stepping, period=period,
                         finger_drive=finger_drive)
        self.mode = "annotation"
        self.reach, self.force_threshold, self.force_ticks = REACH, FORCE_THRESHOLD, FORCE_TICKS
        self.bound: str | None = None
        self.bindings: list[tuple[float, str, str]] = []  # (time, "bind"/"release", object)
        self._welds: dict[str, int] = {}
        self._streak = 0  # ticks the force condition has held (>0) or failed (<0)

    def requires(self) -> Mapping[str, Requirement]:
        extra = {k: Requirement(RequirementKind.VALUE, k, optional=True)
                 for k in ("mode", "reach", "force_threshold", "force_ticks")}
        return {**super().requires(), "objects": Requirement(RequirementKind.VALUE, "objects"),
                **extra}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        super().initialise(parameters)
        mode = parameters.get("mode") or "annotation"
        if mode not in MODES:
            raise ModelError(self.name, f"parameter 'mode' must be one of {', '.join(MODES)}; "
                             f"got {mode!r}")
        self.mode = mode
        for key in ("reach", "force_threshold"):
            if parameters.get(key) is not None:
                setattr(self, key, float(parameters[key]))
        if parameters.get("force_ticks") is not None:
            self.force_ticks = int(parameters["force_ticks"])
        m = self.sim.model
        for obj in parameters["objects"]:
            eq = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, f"bind_{obj}")
            if eq >= 0:
                self._welds[str(obj)] = eq
        if not self._welds:
            raise ModelError(self.name, "no weld to bind with: build the world with "
                             "binding_engine() and name its objects in 'objects'")
        self._palm = m.body(PALM).id
        self._finger_of = {m.body(f"{ROBOT}::{f}_{p}").id: i for i, f in enumerate(arm.FINGERS)
                           for p in ("proximal", "distal")}
        self._object_body = {obj: m.body(f"{obj}::link").id for obj in self._welds}

    # --- binding -----------------------------------------------------------------------------
    def bind(self, obj: str) -> None:
        """Weld ``obj`` to the palm where it is now."""
        m, d = self.sim.model, self.sim.data
        eq, body = self._welds[obj], self._object_body[obj]
        rp = d.xmat[self._palm].reshape(3, 3)
        inv = np.zeros(4)
        mujoco.mju_negQuat(inv, d.xquat[self._palm])
        rel = np.zeros(4)
        mujoco.mju_mulQuat(rel, inv, d.xquat[body])
        m.eq_data[eq, 0:3] = 0.0  # the anchor: the object's origin
        m.eq_data[eq, 3:6] = rp.T @ (d.xpos[body] - d.xpos[self._palm])
        m.eq_data[eq, 6:10] = rel
        m.eq_data[eq, 10] = 1.0  # torque scale
        d.eq_active[eq] = 1
        self.bound = obj
        self.bindings.append((self.sim.time, "bind", obj))
        self._read = None

    def unbind(self) -> None:
        if self.bound is None:
            return
        self.sim.data.eq_active[self._welds[self.bound]] = 0
        self.bindings.append((self.sim.time, "release", self.bound))
        self.bound = None

    def nearest(self) -> str | None:
        """The graspable object nearest to the palm, within ``reach``."""
        d = self.sim.data
        names = list(self._object_body)
        dist = np.linalg.norm(d.xpos[[self._object_body[n] for n in names]]
                              - d.xpos[self._palm], axis=1)
        best = int(dist.argmin())
        return names[best] if dist[best] <= self.reach else None

    def on_event(self, event: str, data: Mapping[str, Any]) -> None:
        if self.mode != "annotation":
            return
        if event == "bind" and self.bound is None:
            obj = self.nearest()
            if obj is not None:
                self.bind(obj)
        elif event == "release":
            self.unbind()

    def pressing(self) -> dict[str, set[int]]:
        """Object -> the fingers pressing it with at least ``force_threshold`` N."""
        m, d = self.sim.model, self.sim.data
        n = d.ncon
        out: dict[str, set[int]] = {}
        if not n:
            return out
        b1 = m.geom_bodyid[d.contact.geom1[:n]]
        b2 = m.geom_bodyid[d.contact.geom2[:n]]
        objects = {b: o for o, b in self._object_body.items()}
        force = np.zeros(6)
        totals: dict[tuple[str, int], float] = {}
        for i in range(n):
            pair = (int(b1[i]), int(b2[i]))
            for finger_body, obj_body in (pair, pair[::-1]):
                if finger_body in self._finger_of and obj_body in objects:
                    mujoco.mj_contactForce(m, d, i, force)
                    key = (objects[obj_body], self._finger_of[finger_body])
                    totals[key] = totals.get(key, 0.0) + abs(force[0])
        for (obj, finger), total in totals.items():
            if total >= self.force_threshold:
                out.setdefault(obj, set()).add(finger)
        return out

    def step(self, dt: float) -> None:
        super().step(dt)
        if self.mode != "force":
            return
        pressing = self.pressing()
        held = [o for o, fingers in pressing.items() if 0 in fingers and len(fingers) >= 2]
        if self.bound is None:
            self._streak = self._streak + 1 if held else 0
            if self._streak >= self.force_ticks:
                self.bind(held[0])
                self._streak = 0
        else:
            self._streak = self._streak + 1 if self.bound not in held else 0
            if self._streak >= self.force_ticks:
                self.unbind()
                self._streak = 0

    def output(self) -> Mapping[str, Any]:
        return {**super().output(), "bound": self.bound}
