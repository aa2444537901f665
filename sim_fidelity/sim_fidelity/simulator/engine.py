"""The embedded default simulator: the Simulator protocol implemented in-process on MuJoCo."""
from __future__ import annotations

import re
import time as _time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import mujoco
import numpy as np

from . import poses
from .actuators import ControllerRecord, add_controller_actuators
from .errors import (InvalidOperationError, InvalidPoseError, UnknownEntityError,
                     UnsupportedLeverError)
from .levers import ActuatorLevers, BodyLevers
from .protocol import EntityInfo, EntityKind, Features, Lever, SimState
from .scripts import Scripts
from .sdf import add_models, load_world, load_world_string
from .sdf.records import FREE_JOINT_SUFFIX, LoadedWorld

GRAVCOMP_ANCHOR = "__sim_fidelity__::gravcomp_anchor"
XYZW_ORDER = np.array([0, 1, 2, 4, 5, 6, 3])  # a free joint's qpos [p, quat wxyz] as [p, quat xyzw]


@dataclass(frozen=True)
class _Refs:
    """Where the states of a list of entities live: reference bodies and entity-frame offsets."""

    bids: np.ndarray
    offsets: np.ndarray  # (n, 7) entity frame in the reference body frame
    free: np.ndarray  # rows whose reference body has a free joint (state read from qpos/qvel)
    other: np.ndarray  # the other rows (state from kinematics)
    qidx: np.ndarray  # (n_free, 7) qpos indices [p, quat wxyz] of those free joints
    qxyzw: np.ndarray  # the same as a pose [p, quat xyzw]
    didx: np.ndarray  # (n_free, 6) qvel indices [v world, w body]
    offset: bool  # any offset differs from identity
    simple: bool  # every entity is carried by exactly its free reference body (vectorised set)


BODY_LEVERS = {Lever.DYNAMICS: "DYNAMICS", Lever.COLLISION: "COLLISION", Lever.GRAVITY: "GRAVITY"}
StepHook = Callable[["MujocoEngine"], None]
UNSTABLE = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQACC)  # MuJoCo resets the state after each of these


class MujocoEngine:
    """A world loaded from SDF and simulated by MuJoCo, addressed by scoped SDF entity names.

    ``sleep`` turns on MuJoCo's sleeping islands (bodies at rest stop being simulated until
    touched); ``sleep_tolerance`` sets the velocity below which they fall asleep.
    ``solver_iterations`` caps the constraint solver's iterations (line search: half as many;
    MuJoCo's defaults are 100 and 50).
    """

    def __init__(self, world: LoadedWorld, *, sleep: bool = False,
                 sleep_tolerance: float | None = None, step_size: float | None = None,
                 solver_iterations: int | None = None):
        self.world = world
        self.sleep = sleep
        spec = world.spec
        if step_size:
            spec.option.timestep = step_size
        if solver_iterations:
            spec.option.iterations = solver_iterations
            spec.option.ls_iterations = max(1, solver_iterations // 2)
        if sleep:
            spec.option.enableflags |= int(mujoco.mjtEnableBit.mjENBL_SLEEP)
            if sleep_tolerance is not None:
                spec.option.sleep_tolerance = sleep_tolerance
        anchor = spec.worldbody.add_body(name=GRAVCOMP_ANCHOR, gravcomp=1.0)
        anchor.mass = 1e-6
        anchor.inertia = [1e-9, 1e-9, 1e-9]
        anchor.explicitinertial = True
        self.controllers: dict[str, ControllerRecord] = {
            c.plugin: c for c in add_controller_actuators(world)}
        self.scripts = Scripts()
        self.scripts.prepare(world, world.plugins)
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self._body_levers: BodyLevers | None = None
        self._actuator_levers: ActuatorLevers | None = None
        self._sensor_on: dict[str, bool] = {}
        self._plugin_on: dict[str, bool] = {}
        self._state = SimState.PLAYING
        self.step_hooks: list[StepHook] = []
        self.divergences = 0  # times MuJoCo found the state unstable and reset it
        self._reindex()
        self._init_controls()
        mujoco.mj_forward(self.model, self.data)
        self._capture_initial()
        self.scripts.attach(self)

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> "MujocoEngine":
        return cls(load_world(path), **kwargs)

    @classmethod
    def from_string(cls, sdf: str, **kwargs) -> "MujocoEngine":
        return cls(load_world_string(sdf), **kwargs)

    def _capture_initial(self) -> None:
        self._initial_body_pos = self.model.body_pos.copy()
        self._initial_body_quat = self.model.body_quat.copy()
        self._initial_qpos = self.data.qpos.copy()

    def _init_controls(self) -> None:
        """Controller commands back to their plugins' initial values."""
        self.data.ctrl[:] = 0.0
        for name, c in self.controllers.items():
            self.data.ctrl[self._actuator_id[name]] = c.initial

    def _reindex(self) -> None:
        """Build name -> index arrays after every compile; carry lever flags over by name."""
        m, w = self.model, self.world
        body_names = [m.body(i).name for i in range(m.nbody)]
        self._body_id = {n: i for i, n in enumerate(body_names)}
        self._body_levers = BodyLevers(m, self._body_levers, body_names)
        act_names = [m.actuator(i).name for i in range(m.nu)]
        self._actuator_id = {n: i for i, n in enumerate(act_names)}
        self._actuator_levers = ActuatorLevers(m, self._actuator_levers, act_names)
        self._body_levers.apply(m, self.data)
        self._actuator_levers.apply(m)
        self.collision_geom = np.zeros(m.ngeom, bool)  # per geom: SDF <collision>, whatever the
        # levers did to its contype (scripts bind to their geoms after every compile)
        self.collision_geom[[m.geom(g).id for rec in w.links.values() for g in rec.collisions]] = True

        self._info: dict[str, EntityInfo] = {}
        model_bodies: dict[str, list[int]] = {}
        for name, rec in w.models.items():
            self._info[name] = EntityInfo(name, EntityKind.MODEL, rec.parent, rec.static)
        for name, rec in w.links.items():
            self._info[name] = EntityInfo(name, EntityKind.LINK, rec.model, w.models[rec.model].static)
            bid = self._body_id[name]
            model = rec.model
            while model:  # a link belongs to its model and to every enclosing model
                model_bodies.setdefault(model, []).append(bid)
                model = w.models[model].parent
        for name, rec in w.joints.items():
            self._info[name] = EntityInfo(name, EntityKind.JOINT, rec.model, type=rec.type)
        for name, rec in w.sensors.items():
            self._info[name] = EntityInfo(name, EntityKind.SENSOR, rec.parent, type=rec.type)
            self._sensor_on.setdefault(name, True)
        for name, rec in w.plugins.items():
            self._info[name] = EntityInfo(name, EntityKind.PLUGIN, rec.parent, type=rec.filename)
            self._plugin_on.setdefault(name, True)
        self._bodies = {n: np.array(sorted(b), int) for n, b in model_bodies.items()}
        self._bodies.update({n: np.array([self._body_id[n]]) for n in w.links})

        # State addressing: each model/link -> (reference body, offset of the entity frame in it)
        self._ref_body: dict[str, int] = {}
        self._ref_offset: dict[str, np.ndarray] = {}
        at_load = mujoco.MjData(m)  # offsets hold in the configuration the records describe
        mujoco.mj_kinematics(m, at_load)
        for name in w.links:
            self._ref_body[name] = self._body_id[name]
            self._ref_offset[name] = poses.IDENTITY
        for name, rec in w.models.items():
            canonical = rec.canonical_link or (self._first_link(name) or "")
            if not canonical:
                continue
            bid = self._body_id[canonical]
            self._ref_body[name] = bid
            x_wl = np.concatenate([at_load.xpos[bid], poses.wxyz_to_xyzw(at_load.xquat[bid])])
            self._ref_offset[name] = poses.compose(poses.inverse(x_wl), rec.pose)
        self._free_qpos = {}
        self._free_dof = {}
        for name, rec in w.links.items():
            if rec.free:
                j = m.joint(name + FREE_JOINT_SUFFIX)
                self._free_qpos[name] = m.jnt_qposadr[j.id]
                self._free_dof[name] = m.jnt_dofadr[j.id]
        # The bodies that carry each model's/link's pose: free root links, or static root bodies.
        self._roots_of: dict[str, list[tuple[int, str | None]]] = {}
        for name, rec in w.links.items():
            bid = self._body_id[name]
            if rec.free:
                root = (bid, name)
            elif w.models[rec.model].static and m.body_parentid[bid] == 0:
                root = (bid, None)  # moved through the model's body_pos/body_quat
            else:
                continue
            self._roots_of.setdefault(name, []).append(root)
            model = rec.model
            while model:
                self._roots_of.setdefault(model, []).append(root)
                model = w.models[model].parent
        self._body_free_qpos = {self._body_id[n]: a for n, a in self._free_qpos.items()}
        self._body_free_dof = {self._body_id[n]: a for n, a in self._free_dof.items()}
        self._refs_cache: dict[tuple, _Refs] = {}
        self._joint_cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._stale = False

    def _first_link(self, model: str) -> str | None:
        rec = self.world.models[model]
        if rec.links:
            return rec.links[0]
        for child in rec.models:
            link = self._first_link(child)
            if link:
                return link
        return None

    # ------------------------------------------------------------------ the scene
    def entities(self, kind: EntityKind | None = None, pattern: str | None = None) -> list[str]:
        kind = EntityKind(kind) if kind is not None else None
        rx = re.compile(pattern) if pattern else None
        return [n for n, info in self._info.items()
                if (kind is None or info.kind == kind) and (rx is None or rx.search(n))]

    def has(self, name: str) -> bool:
        return name in self._info

    def entity_info(self, name: str) -> EntityInfo:
        try:
            return self._info[name]
        except KeyError:
            raise UnknownEntityError(name, f"world '{self.world.name}'") from None

    def _require(self, names: Sequence[str], kinds: tuple[EntityKind, ...], lever: Lever) -> None:
        """Raise unless every name is an entity the lever applies to (one of ``kinds``)."""
        for n in names:
            info = self.entity_info(n)
            if info.kind not in kinds:
                raise UnsupportedLeverError(lever, n, f"needs a {' or '.join(k.value for k in kinds)}"
                                            f"; it is a {info.kind.value}")

    # ------------------------------------------------------------------ state
    def _refresh(self) -> None:
        if self._stale:
            m, d = self.model, self.data
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            self._stale = False

    def _body_pose(self, bids: np.ndarray) -> np.ndarray:
        d = self.data
        return np.concatenate([d.xpos[bids], poses.wxyz_to_xyzw(d.xquat[bids])], axis=1)

    def _refs(self, names: Sequence[str]) -> "_Refs":
        """Index arrays addressing the states of ``names`` (cached for a repeated list)."""
        key = tuple(names)
        refs = self._refs_cache.get(key)
        if refs is None:
            try:
                bids = np.fromiter((self._ref_body[n] for n in names), int, len(names))
            except KeyError as e:
                name = e.args[0]
                if name in self._info:
                    raise InvalidOperationError(f"'{name}' is a {self._info[name].kind.value}: "
                                                "only models and links have a state") from None
                raise UnknownEntityError(name, f"world '{self.world.name}'") from None
            offsets = np.array([self._ref_offset[n] for n in names]).reshape(len(names), 7)
            qadr = np.array([self._body_free_qpos.get(b, -1) for b in bids], int)
            dadr = np.array([self._body_free_dof.get(b, -1) for b in bids], int)
            free = qadr >= 0
            simple = all(len(rs) == 1 and rs[0] == (b, rs[0][1]) and rs[0][1] is not None
                         for rs, b in zip((self._roots_of.get(n, ()) for n in names), bids))
            refs = _Refs(bids, offsets, np.flatnonzero(free), np.flatnonzero(~free),
                         qadr[free, None] + np.arange(7), qadr[free, None] + XYZW_ORDER,
                         dadr[free, None] + np.arange(6),
                         not np.allclose(offsets, poses.IDENTITY, rtol=0.0, atol=1e-12), simple)
            if len(self._refs_cache) > 64:
                self._refs_cache.clear()
            self._refs_cache[key] = refs
        return refs

    def get_states(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Poses and twists; free bodies are read straight from qpos/qvel, others via kinematics."""
        names = list(names)
        if not names:
            return np.zeros((0, 7)), np.zeros((0, 6))
        d, m = self.data, self.model
        r = self._refs(names)
        x_wb = np.empty((len(names), 7))
        v = np.empty((len(names), 3))
        w = np.empty((len(names), 3))
        free, other = r.free, r.other
        if free.size:  # free joint: qpos = [p, quat wxyz], qvel = [v world, w body frame]
            q, dq = d.qpos[r.qxyzw], d.qvel[r.didx]
            x_wb[free], v[free] = q, dq[:, :3]
            w[free] = poses.quat_rotate(q[:, 3:], dq[:, 3:])
        if other.size:
            self._refresh()
            b = r.bids[other]
            x_wb[other] = self._body_pose(b)
            w[other] = d.cvel[b, :3]
            com = d.subtree_com[m.body_rootid[b]]
            v[other] = d.cvel[b, 3:] + poses.cross(w[other], d.xpos[b] - com)
        if not r.offset:
            return x_wb, np.concatenate([v, w], axis=1)
        pose = poses.compose(x_wb, r.offsets)
        v = v + poses.cross(w, pose[:, :3] - x_wb[:, :3])
        return pose, np.concatenate([v, w], axis=1)

    def set_states(self, names: Sequence[str], poses_: np.ndarray | None = None,
                   twists: np.ndarray | None = None) -> None:
        names = list(names)
        if not names or (poses_ is None and twists is None):
            return
        n = len(names)
        if poses_ is not None:
            poses_ = np.asarray(poses_, float).reshape(n, 7)
            try:
                poses_[:, 3:] = poses.normalized_or_raise(poses_[:, 3:])
            except ValueError as e:
                raise InvalidPoseError(f"invalid pose for {names}: {e}") from None
            if not np.all(np.isfinite(poses_[:, :3])):
                raise InvalidPoseError(f"pose position is not finite for {names}")
        if twists is not None:
            twists = np.asarray(twists, float).reshape(n, 6)
            if not np.all(np.isfinite(twists)):
                raise InvalidPoseError(f"twist is not finite for {names}")
        current, current_twist = self.get_states(names)
        target = poses_ if poses_ is not None else current
        target_twist = twists if twists is not None else current_twist
        m, d = self.model, self.data
        r = self._refs(names)
        if r.simple:  # one free body per entity: write qpos/qvel for all at once
            x_wb = poses.compose(target, poses.inverse(r.offsets)) if r.offset else target
            v, w = target_twist[:, :3], target_twist[:, 3:]
            if r.offset:
                v = v + poses.cross(w, x_wb[:, :3] - target[:, :3])
            d.qpos[r.qidx] = np.concatenate([x_wb[:, :3], poses.xyzw_to_wxyz(x_wb[:, 3:])], axis=1)
            d.qvel[r.didx] = np.concatenate(
                [v, poses.quat_rotate(poses.quat_conj(x_wb[:, 3:]), w)], axis=1)
            self._stale = True
            return
        self._refresh()
        for i, name in enumerate(names):
            roots = self._roots_of.get(name, [])
            if not roots:
                raise InvalidOperationError(f"'{name}' is attached to its model by a joint: set the "
                                            "state of its model instead")
            # Move every root body rigidly with the entity frame.
            x_rel = poses.compose(poses.inverse(current[i]),
                                  self._body_pose(np.array([b for b, _ in roots])))
            x_new = poses.compose(target[i], x_rel)
            for (bid, link), xb in zip(roots, x_new):
                if link is None:  # a static body: move it in the model
                    m.body_pos[bid] = xb[:3]
                    m.body_quat[bid] = poses.xyzw_to_wxyz(xb[3:])
                    continue
                qa, da = self._free_qpos[link], self._free_dof[link]
                d.qpos[qa:qa + 3] = xb[:3]
                d.qpos[qa + 3:qa + 7] = poses.xyzw_to_wxyz(xb[3:])
                v, w = target_twist[i, :3], target_twist[i, 3:]
                d.qvel[da:da + 3] = v + poses.cross(w, xb[:3] - target[i, :3])
                d.qvel[da + 3:da + 6] = poses.quat_rotate(poses.quat_conj(xb[3:]), w)
        self._stale = True

    def _belongs(self, model: str, ancestor: str) -> bool:
        while model:
            if model == ancestor:
                return True
            model = self.world.models[model].parent
        return False

    # ------------------------------------------------------------------ time
    def step(self, n: int = 1) -> None:
        if n < 0:
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        m, d = self.model, self.data
        if self.step_hooks:
            for _ in range(n):
                mujoco.mj_step(m, d)
                for hook in self.step_hooks:
                    hook(self)
        else:
            for _ in range(n):
                mujoco.mj_step(m, d)
        self._stale = True
        diverged = int(sum(d.warning[w].number for w in UNSTABLE))
        if diverged > self.divergences:
            self.divergences = diverged
            warnings.warn(f"world '{self.world.name}': the simulation diverged (NaN or huge "
                          f"acceleration) at t = {d.time:.4f} s and MuJoCo reset its state; "
                          f"{diverged} time(s) so far", RuntimeWarning, stacklevel=2)

    def run_for(self, seconds: float) -> float:
        """Step for ``seconds`` of sim time; returns the wall time it took."""
        t0 = _time.perf_counter()
        self.step(int(round(seconds / self.step_size)))
        return _time.perf_counter() - t0

    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def step_size(self) -> float:
        return float(self.model.opt.timestep)

    def sim_state(self) -> SimState:
        return self._state

    def set_sim_state(self, state: SimState) -> None:
        state = SimState(state)
        if state not in (SimState.PLAYING, SimState.PAUSED, SimState.STOPPED):
            raise InvalidOperationError(f"cannot switch to {state.name}")
        if state == SimState.STOPPED:
            self.reset()
        self._state = state

    def reset(self) -> None:
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        m.body_pos[:] = self._initial_body_pos
        m.body_quat[:] = self._initial_body_quat
        d.qpos[:] = self._initial_qpos
        self._init_controls()
        mujoco.mj_forward(m, d)
        self._stale = False
        self.scripts.reset(self)

    # ------------------------------------------------------------------ scene edits
    def spawn(self, name: str, sdf: str, pose: np.ndarray | None = None,
              source: str = "<string>") -> str:
        """Add the model in ``sdf``; ``source`` (a file path) resolves its relative URIs."""
        if pose is not None:
            pose = np.asarray(pose, float).reshape(7)
            if not np.all(np.isfinite(pose)):
                raise InvalidPoseError(f"spawn pose of '{name}' is not finite")
        added = add_models(self.world, sdf, name=name or None, pose=pose, source=source)
        new_plugins = {p for p, r in self.world.plugins.items()
                       if any(r.parent == a or r.parent.startswith(a + "::") for a in added)}
        self.controllers.update({c.plugin: c for c in
                                 add_controller_actuators(self.world, only=new_plugins)})
        self.scripts.prepare(self.world, [p for p in self.world.plugins if p in new_plugins])
        self._recompile()
        for plugin in new_plugins & set(self.controllers):
            self.data.ctrl[self._actuator_id[plugin]] = self.controllers[plugin].initial
        self.scripts.attach(self)
        return added[0]

    def delete(self, name: str) -> None:
        info = self.entity_info(name)
        if info.kind != EntityKind.MODEL or info.parent:
            raise InvalidOperationError(f"only top-level models can be deleted; '{name}' is a "
                                        f"{'nested ' if info.parent else ''}{info.kind.value}")
        w = self.world
        doomed_models = [n for n in w.models if self._belongs(n, name)]
        for link in [n for n, r in w.links.items() if r.model in doomed_models]:
            body = w.spec.body(link)
            if body is not None and body.parent.name == "world":
                w.spec.delete(body)
        for plugin in [p for p, r in w.plugins.items() if r.parent == name or
                       r.parent.startswith(name + "::")]:
            act = w.spec.actuator(plugin)
            if act is not None:
                w.spec.delete(act)
            self.controllers.pop(plugin, None)
        for table in (w.links, w.joints, w.sensors, w.plugins):
            for key in [k for k in table if k.startswith(name + "::")]:
                del table[key]
        for n in doomed_models:
            del w.models[n]
        self._recompile()

    def _recompile(self) -> None:
        """Recompile the spec keeping the state of everything that stays."""
        moved = {n: (self.model.body_pos[i].copy(), self.model.body_quat[i].copy())
                 for n, i in self._body_id.items()}
        initial = {n: (self._initial_body_pos[i], self._initial_body_quat[i])
                   for n, i in self._body_id.items()}
        old_ids = self._body_id
        self.model, self.data = self.world.spec.recompile(self.model, self.data)
        self._reindex()
        m = self.model
        body_map = np.full(len(old_ids), -1, int)
        for n, i in old_ids.items():
            body_map[i] = self._body_id.get(n, -1)
        self._initial_body_pos = m.body_pos.copy()
        self._initial_body_quat = m.body_quat.copy()
        for n, i in self._body_id.items():
            if n in moved:
                m.body_pos[i], m.body_quat[i] = moved[n]
                self._initial_body_pos[i], self._initial_body_quat[i] = initial[n]
        self._initial_qpos = m.qpos0.copy()  # spawned bodies start where they were spawned
        mujoco.mj_forward(m, self.data)
        self.scripts.recompiled(self, body_map)

    # ------------------------------------------------------------------ fidelity levers
    def _lever_bodies(self, names: Sequence[str], lever: Lever) -> np.ndarray:
        self._require(names, (EntityKind.MODEL, EntityKind.LINK), lever)
        parts = [self._bodies.get(n) for n in names]
        return np.concatenate([p for p in parts if p is not None] or [np.zeros(0, int)])

    def _lever_actuators(self, names: Sequence[str]) -> np.ndarray:
        """Actuators driving the named joints, or all joints of the named models."""
        self._require(names, (EntityKind.JOINT, EntityKind.MODEL, EntityKind.PLUGIN), Lever.ACTUATION)
        wanted = set()
        for n in names:
            kind = self._info[n].kind
            if kind == EntityKind.JOINT:
                wanted.add(n)
            elif kind == EntityKind.PLUGIN:
                if n in self.controllers:
                    wanted.add(self.controllers[n].joint)
            else:
                wanted.update(j for j, r in self.world.joints.items() if self._belongs(r.model, n))
        return np.array([self._actuator_id[p] for p, c in self.controllers.items()
                         if c.joint in wanted], int)

    def _flag_entities(self, names: Sequence[str], lever: Lever) -> list[str]:
        """Sensors or plugins addressed directly or through an owning model/link."""
        kind, table = ((EntityKind.SENSOR, self._sensor_on) if lever == Lever.SENSOR
                       else (EntityKind.PLUGIN, self._plugin_on))
        self._require(names, (kind, EntityKind.MODEL, EntityKind.LINK), lever)
        out = []
        for n in names:
            if self._info[n].kind == kind:
                out.append(n)
            else:
                out.extend(e for e in table if e.startswith(n + "::"))
        return out

    def set_lever(self, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        lever = Lever(lever)
        names = list(names)
        if lever in BODY_LEVERS:
            bodies = self._lever_bodies(names, lever)
            self._body_levers.set(self.model, self.data, BODY_LEVERS[lever], bodies, not enabled)
        elif lever == Lever.ACTUATION:
            self._actuator_levers.set(self.model, self._lever_actuators(names), not enabled)
        else:
            flags = self._sensor_on if lever == Lever.SENSOR else self._plugin_on
            targets = self._flag_entities(names, lever)
            for n in targets:
                flags[n] = bool(enabled)
            if lever == Lever.SCRIPT:  # a controller plugin switched off leaves its joint passive
                acts = [self._actuator_id[p] for p in targets if p in self.controllers]
                self._actuator_levers.set(self.model, np.array(acts, int), not enabled)

    def get_lever(self, names: Sequence[str], lever: Lever) -> np.ndarray:
        lever = Lever(lever)
        names = list(names)
        if lever in BODY_LEVERS:
            self._require(names, (EntityKind.MODEL, EntityKind.LINK), lever)
            parts = [self._bodies.get(n, np.zeros(0, int)) for n in names]
            sizes = np.fromiter((len(p) for p in parts), int, len(parts))
            if not len(parts):
                return np.ones(0, bool)
            off = self._body_levers.flag(BODY_LEVERS[lever])[np.concatenate(parts)]
            counts = np.add.reduceat(np.append(off, False).astype(int),
                                     np.concatenate([[0], np.cumsum(sizes)[:-1]]))
            return np.where(sizes > 0, counts == 0, True)
        out = np.ones(len(names), bool)
        for i, n in enumerate(names):
            if lever == Lever.ACTUATION:
                out[i] = not self._actuator_levers.off[self._lever_actuators([n])].any()
            else:
                flags = self._sensor_on if lever == Lever.SENSOR else self._plugin_on
                out[i] = all(flags[e] for e in self._flag_entities([n], lever))
        return out

    def set_carried(self, bodies: np.ndarray, carried: bool) -> None:
        """Mark ``bodies`` (ids) as carried by a gripper, or no longer (see :mod:`.levers`)."""
        self._body_levers.set(self.model, self.data, "CARRIED", np.asarray(bodies, int), carried)

    def levers_at_originals(self) -> bool:
        """True when every lever parameter of the model equals the compiled original."""
        m = self.model
        return (self._body_levers.at_originals(m)
                and np.array_equal(m.actuator_gainprm, self._actuator_levers.orig_gain)
                and np.array_equal(m.actuator_biasprm, self._actuator_levers.orig_bias)
                and all(self._sensor_on.values()) and all(self._plugin_on.values()))

    def features(self) -> Features:
        return Features(levers=frozenset(Lever), spawning=True, deleting=True, stepping=True,
                        state_setting=True, resetting=True, spawn_formats=("sdf",),
                        extra={"engine": f"mujoco {mujoco.__version__}", "sleep": self.sleep})

    # ------------------------------------------------------------------ control and sensing
    def set_joint_commands(self, controllers: Sequence[str], values: Sequence[float]) -> None:
        """Targets for joint-controller plugins (position or velocity, by plugin type)."""
        for name, value in zip(controllers, values):
            if name not in self.controllers:
                raise UnknownEntityError(name, "no joint-controller plugin of that name")
            self.data.ctrl[self._actuator_id[name]] = value

    def joint_positions(self, joints: Sequence[str]) -> np.ndarray:
        """Positions of one-degree-of-freedom joints (rad or m)."""
        qadr, _ = self._joint_addresses(joints)
        return self.data.qpos[qadr]

    def joint_states(self, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of one-degree-of-freedom joints."""
        qadr, dadr = self._joint_addresses(joints)
        return self.data.qpos[qadr], self.data.qvel[dadr]

    def _joint_addresses(self, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """qpos and qvel indices of one-DoF joints (cached per list of names)."""
        key = tuple(joints)
        found = self._joint_cache.get(key)
        if found is None:
            m = self.model
            ids = np.empty(len(key), int)
            for i, name in enumerate(key):
                rec = self.world.joints.get(name)
                if rec is None:
                    raise UnknownEntityError(name, "not a joint")
                if len(rec.mj_joints) != 1 or rec.type == "ball":
                    raise InvalidOperationError(f"joint '{name}' ({rec.type}) has no single position")
                ids[i] = m.joint(rec.mj_joints[0]).id
            found = m.jnt_qposadr[ids], m.jnt_dofadr[ids]
            if len(self._joint_cache) > 64:
                self._joint_cache.clear()
            self._joint_cache[key] = found
        return found

    def entity_bounds(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Lower and upper corner of the axis-aligned box around the collision geometry of a
        model or link, in the entity's own frame; None when it has none."""
        info = self.entity_info(name)
        if info.kind == EntityKind.LINK:
            links = [name]
        elif info.kind == EntityKind.MODEL:
            links = [n for n, r in self.world.links.items() if self._belongs(r.model, name)]
        else:
            raise InvalidOperationError(f"'{name}' is a {info.kind.value}: only models and links "
                                        "have bounds")
        geoms = np.array([self.model.geom(g).id for n in links
                          for g in self.world.links[n].collisions], int)
        if not geoms.size:
            return None
        self._refresh()
        m, d = self.model, self.data
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
        aabb = m.geom_aabb[geoms]  # centre and half extents in the geom frame
        local = aabb[:, None, :3] + corners[None] * aabb[:, None, 3:]
        world = np.einsum("gij,gkj->gki", d.geom_xmat[geoms].reshape(-1, 3, 3), local)
        world += d.geom_xpos[geoms][:, None]
        frame = self.get_states([name])[0][0]
        points = poses.quat_rotate(poses.quat_conj(frame[3:]), world.reshape(-1, 3) - frame[:3])
        return points.min(axis=0), points.max(axis=0)

    def sensor_enabled(self, name: str) -> bool:
        self.entity_info(name)
        return self._sensor_on[name]

    def script_enabled(self, name: str) -> bool:
        self.entity_info(name)
        return self._plugin_on[name]
