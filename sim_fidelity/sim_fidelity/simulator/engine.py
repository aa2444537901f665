"""The embedded default simulator: the Simulator protocol implemented in-process on MuJoCo."""
from __future__ import annotations

import time as _time
from pathlib import Path
from typing import Sequence

import mujoco
import numpy as np

from . import engine_snapshot, undo
from . import poses as pose_math
from .actuators import ControllerRecord, add_controller_actuators
from .entity_index import EntityIndex
from .errors import (
    EntityExistsError,
    InvalidNameError,
    InvalidOperationError,
    InvalidPoseError,
    SdfError,
    SimulationDivergedError,
    SimulatorError,
    UnknownEntityError,
    UnsupportedLeverError,
)
from .hooks import StepHooks
from .levers import ActuatorLevers, BodyLevers
from .limits import check_poses, check_twists
from .protocol import EntityInfo, EntityKind, Features, Lever, SimState, select_entities
from .scripts import Scripts
from .sdf import add_models, load_world, load_world_string
from .sdf.records import LoadedWorld
from .snapshot import EngineSnapshot, Snapshot
from .state_kernels import body_states, free_states

GRAVCOMP_ANCHOR = "__sim_fidelity__::gravcomp_anchor"
BODY_LEVERS = {Lever.DYNAMICS: "DYNAMICS", Lever.COLLISION: "COLLISION", Lever.GRAVITY: "GRAVITY"}
UNSTABLE = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
            mujoco.mjtWarning.mjWARN_BADQACC)  # MuJoCo resets the state after each of these
BOX_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)


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
        self.hooks = StepHooks()  # run after every physics step (scripts add themselves)
        self.divergences = 0  # times the physics diverged (each undone and raised)
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
            self.data.ctrl[self.index.actuator_id[name]] = c.initial

    def _reindex(self) -> None:
        """A new entity index after every compile; lever flags carry over by name."""
        m = self.model
        self.index = index = EntityIndex(self.world, m)
        self._body_levers = BodyLevers(m, self._body_levers, index.body_names)
        self._actuator_levers = ActuatorLevers(m, self._actuator_levers, index.actuator_names)
        self._body_levers.apply(m, self.data)
        self._actuator_levers.apply(m)
        for name in self.world.sensors:
            self._sensor_on.setdefault(name, True)
        for name in self.world.plugins:
            self._plugin_on.setdefault(name, True)
        self._stale = False

    # ------------------------------------------------------------------ the scene
    def entities(self, kind: EntityKind | None = None, pattern: str | None = None) -> list[str]:
        return select_entities(self.index.info, kind, pattern)

    def has(self, name: str) -> bool:
        return name in self.index.info

    def entity_info(self, name: str) -> EntityInfo:
        return self.index.entity_info(name)

    def _require(self, names: Sequence[str], kinds: tuple[EntityKind, ...], lever: Lever) -> None:
        """Raise unless every name is an entity the lever applies to (one of ``kinds``): one
        look-up per name, then the first name at fault is found and named."""
        if set(map(self.index.kind.get, names)) <= set(kinds):
            return
        for n in names:
            info = self.entity_info(n)
            if info.kind not in kinds:
                needed = " or ".join(k.value for k in kinds)
                raise UnsupportedLeverError(lever, n, f"needs a {needed}; "
                                            f"it is a {info.kind.value}")

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
        return np.concatenate([d.xpos[bids], pose_math.wxyz_to_xyzw(d.xquat[bids])], axis=1)

    def get_states(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Poses and twists; free bodies are read straight from qpos/qvel, others via kinematics."""
        names = list(names)
        if not names:
            return np.zeros((0, 7)), np.zeros((0, 6))
        d = self.data
        r = self.index.state_refs(names)
        x_wb, twist = np.empty((len(names), 7)), np.empty((len(names), 6))
        if r.free.size:
            free_states(d.qpos, d.qvel, r.qxyzw, r.didx, r.free, x_wb, twist)
        if r.other.size:
            self._refresh()
            body_states(d.xpos, d.xquat, d.cvel, d.subtree_com, self.model.body_rootid, r.bids,
                        r.other, x_wb, twist)
        if not r.offset:
            return x_wb, twist
        pose = pose_math.compose(x_wb, r.offsets)
        v, w = twist[:, :3], twist[:, 3:]
        v = v + pose_math.cross(w, pose[:, :3] - x_wb[:, :3])
        return pose, np.concatenate([v, w], axis=1)

    def set_states(self, names: Sequence[str], poses: np.ndarray | None = None,
                   twists: np.ndarray | None = None) -> None:
        names = list(names)
        if not names or (poses is None and twists is None):
            return
        if len(set(names)) < len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise InvalidOperationError(f"entities named more than once in one batch: {twice}")
        if poses is not None:
            poses = check_poses(_rows(poses, names, 7, "poses"), names)
        if twists is not None:
            twists = _rows(twists, names, 6, "twists")
            check_twists(twists, names)
        with undo.transaction(self):
            self._write_states(names, poses, twists)

    def _write_states(self, names: list[str], poses: np.ndarray | None,
                      twists: np.ndarray | None) -> None:
        current, current_twist = self.get_states(names)
        target = poses if poses is not None else current
        target_twist = twists if twists is not None else current_twist
        m, d = self.model, self.data
        r = self.index.state_refs(names)
        if r.simple:  # one free body per entity: write qpos/qvel for all at once
            x_wb = pose_math.compose(target, pose_math.inverse(r.offsets)) if r.offset else target
            v, w = target_twist[:, :3], target_twist[:, 3:]
            if r.offset:
                v = v + pose_math.cross(w, x_wb[:, :3] - target[:, :3])
            d.qpos[r.qidx] = np.concatenate([x_wb[:, :3], pose_math.xyzw_to_wxyz(x_wb[:, 3:])],
                                            axis=1)
            d.qvel[r.didx] = np.concatenate(
                [v, pose_math.quat_rotate(pose_math.quat_conj(x_wb[:, 3:]), w)], axis=1)
            self._stale = True
            return
        roots_of = self.index.roots_of
        jointed = next((n for n in names if not roots_of.get(n)), None)
        if jointed is not None:
            raise InvalidOperationError(f"'{jointed}' is attached to its model by a joint: set the "
                                        "state of its model instead")
        self._refresh()
        for i, name in enumerate(names):
            roots = roots_of[name]
            # Move every root body rigidly with the entity frame.
            x_rel = pose_math.compose(pose_math.inverse(current[i]),
                                  self._body_pose(np.array([b for b, _ in roots])))
            x_new = pose_math.compose(target[i], x_rel)
            for (bid, link), xb in zip(roots, x_new):
                if link is None:  # a static body: move it in the model
                    m.body_pos[bid] = xb[:3]
                    m.body_quat[bid] = pose_math.xyzw_to_wxyz(xb[3:])
                    continue
                qa, da = self.index.body_free_qpos[bid], self.index.body_free_dof[bid]
                d.qpos[qa:qa + 3] = xb[:3]
                d.qpos[qa + 3:qa + 7] = pose_math.xyzw_to_wxyz(xb[3:])
                v, w = target_twist[i, :3], target_twist[i, 3:]
                d.qvel[da:da + 3] = v + pose_math.cross(w, xb[:3] - target[i, :3])
                d.qvel[da + 3:da + 6] = pose_math.quat_rotate(pose_math.quat_conj(xb[3:]), w)
        self._stale = True

    # ------------------------------------------------------------------ time
    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps. When the physics diverges on the way (MuJoCo would silently
        reset the world to its initial state and time), the state goes back to where this call
        began, the divergence is counted and SimulationDivergedError raised."""
        if n < 0:
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        m, d = self.model, self.data
        start = undo.physics_state(m, d)
        clear_unstable(d)
        if self.hooks:
            for _ in range(n):
                mujoco.mj_step(m, d)
                for hook in self.hooks:
                    hook(self)
        else:
            for _ in range(n):
                mujoco.mj_step(m, d)
        self._stale = True
        problem = unstable(m, d)
        if problem:
            undo.set_physics_state(m, d, start)
            self._diverged(problem, n)

    def _diverged(self, problem: str, n: int) -> None:
        """Count a divergence whose state has been put back, and raise it."""
        mujoco.mj_forward(self.model, self.data)
        self._stale = False
        self.divergences += 1
        raise SimulationDivergedError(
            f"world '{self.world.name}': the simulation diverged ({problem}) within {n} step(s); "
            f"the state is back where they began, t = {self.time:.6g} s (divergence "
            f"{self.divergences} of this engine)")

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
        if state not in (SimState.PLAYING, SimState.PAUSED, SimState.STOPPED):
            name = state.name if isinstance(state, SimState) else repr(state)
            raise InvalidOperationError(f"cannot switch to {name}: PLAYING, PAUSED or STOPPED")
        state = SimState(state)
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
        self.reset_levers()
        mujoco.mj_forward(m, d)
        self._stale = False
        self.scripts.reset(self)

    def reset_levers(self) -> None:
        """Every fidelity lever of every entity back to the world's original: enabled (what a
        gripper script carries stays carried; the script's own reset lets go)."""
        m, d = self.model, self.data
        levers = self._body_levers
        for flag in ("dynamics_off", "collision_off", "gravity_off"):
            getattr(levers, flag)[:] = False
        levers.apply(m, d)
        self._actuator_levers.off[:] = False
        self._actuator_levers.apply(m)
        self._sensor_on = dict.fromkeys(self._sensor_on, True)
        self._plugin_on = dict.fromkeys(self._plugin_on, True)

    def snapshot(self) -> EngineSnapshot:
        """The full dynamic state, copied (:mod:`.engine_snapshot`)."""
        return engine_snapshot.take(self)

    def restore(self, snapshot: Snapshot) -> None:
        """Back to ``snapshot`` exactly; refused, changing nothing, when it does not fit."""
        engine_snapshot.restore(self, snapshot)

    # ------------------------------------------------------------------ scene edits
    def spawn(self, name: str, sdf: str, pose: np.ndarray | None = None,
              source: str = "<string>") -> str:
        """Add the model in ``sdf``; ``source`` (a file path) resolves its relative URIs."""
        if pose is not None:
            pose = check_poses(_rows(pose, [name or "spawned model"], 7, "spawn pose"),
                               [name or "spawned model"], "spawn pose")[0]
        if name and name in self.world.models:
            raise EntityExistsError(f"an entity named '{name}' exists in world "
                                    f"'{self.world.name}'")
        if name and "::" in name:
            raise InvalidNameError(f"'{name}' is not a valid model name: '::' separates scopes")
        with undo.transaction(self, structural=True):  # a failure leaves no trace of the model
            try:
                return self._add(name, sdf, pose, source)
            except ValueError as e:  # MuJoCo's own checks
                if isinstance(e, SimulatorError):
                    raise
                raise SdfError(f"MuJoCo rejected the model: {e}", file=source,
                               element="model") from None

    def _add(self, name: str, sdf: str, pose: np.ndarray | None, source: str) -> str:
        added = add_models(self.world, sdf, name=name or None, pose=pose, source=source)
        new_plugins = {p for p, r in self.world.plugins.items()
                       if any(r.parent == a or r.parent.startswith(a + "::") for a in added)}
        self.controllers.update({c.plugin: c for c in
                                 add_controller_actuators(self.world, only=new_plugins)})
        self.scripts.prepare(self.world, [p for p in self.world.plugins if p in new_plugins])
        self._recompile()
        for plugin in new_plugins & set(self.controllers):
            self.data.ctrl[self.index.actuator_id[plugin]] = self.controllers[plugin].initial
        self.scripts.attach(self)
        return added[0]

    def delete(self, name: str) -> None:
        info = self.entity_info(name)
        if info.kind != EntityKind.MODEL or info.parent:
            raise InvalidOperationError(f"only top-level models can be deleted; '{name}' is a "
                                        f"{'nested ' if info.parent else ''}{info.kind.value}")
        with undo.transaction(self, structural=True):
            self._remove_model(name)
            self._recompile()

    def _remove_model(self, name: str) -> None:
        """Take a top-level model out of the spec, the records and the controllers (the compiled
        model keeps it until the next recompile)."""
        w = self.world
        doomed_models = [n for n in w.models if self.index.belongs(n, name)]
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

    def _recompile(self) -> None:
        """Recompile the spec keeping the state of everything that stays."""
        old_ids = self.index.body_id
        moved = {n: (self.model.body_pos[i].copy(), self.model.body_quat[i].copy())
                 for n, i in old_ids.items()}
        initial = {n: (self._initial_body_pos[i], self._initial_body_quat[i])
                   for n, i in old_ids.items()}
        self.model, self.data = self.world.spec.recompile(self.model, self.data)
        self._reindex()
        m = self.model
        body_map = np.full(len(old_ids), -1, int)
        for n, i in old_ids.items():
            body_map[i] = self.index.body_id.get(n, -1)
        self._initial_body_pos = m.body_pos.copy()
        self._initial_body_quat = m.body_quat.copy()
        for n, i in self.index.body_id.items():
            if n in moved:
                m.body_pos[i], m.body_quat[i] = moved[n]
                self._initial_body_pos[i], self._initial_body_quat[i] = initial[n]
        self._initial_qpos = m.qpos0.copy()  # spawned bodies start where they were spawned
        mujoco.mj_forward(m, self.data)
        self.scripts.recompiled(self, body_map)

    # ------------------------------------------------------------------ fidelity levers
    def _bodies_of(self, names: Sequence[str]) -> np.ndarray:
        """Body ids of models and links (checked before)."""
        return self.index.body_ids(names)[0]

    def _lever_actuators(self, names: Sequence[str]) -> np.ndarray:
        """Actuators driving the named joints, or all joints of the named models."""
        self._require(names, (EntityKind.JOINT, EntityKind.MODEL, EntityKind.PLUGIN),
                      Lever.ACTUATION)
        wanted = set()
        for n in names:
            kind = self.index.info[n].kind
            if kind == EntityKind.JOINT:
                wanted.add(n)
            elif kind == EntityKind.PLUGIN:
                if n in self.controllers:
                    wanted.add(self.controllers[n].joint)
            else:
                wanted.update(j for j, r in self.world.joints.items()
                              if self.index.belongs(r.model, n))
        return np.array([self.index.actuator_id[p] for p, c in self.controllers.items()
                         if c.joint in wanted], int)

    def _flag_entities(self, names: Sequence[str], lever: Lever) -> list[str]:
        """Sensors or plugins addressed directly or through an owning model/link."""
        kind, table = ((EntityKind.SENSOR, self._sensor_on) if lever == Lever.SENSOR
                       else (EntityKind.PLUGIN, self._plugin_on))
        self._require(names, (kind, EntityKind.MODEL, EntityKind.LINK), lever)
        out = []
        for n in names:
            if self.index.info[n].kind == kind:
                out.append(n)
            else:
                out.extend(e for e in table if e.startswith(n + "::"))
        return out

    def set_lever(self, names: Sequence[str], lever: Lever, enabled: bool) -> None:
        lever = Lever.of(lever)
        names = list(names)
        self._lever_targets(names, lever)  # every name checked before anything changes
        with undo.transaction(self):
            self._set_lever(names, lever, enabled)

    def set_levers(self, changes: Sequence[tuple[Sequence[str], Lever, bool]]) -> None:
        """Several :meth:`set_lever` calls ``(names, lever, enabled)`` as one: every name of every
        change checked before anything changes, one undo transaction, and the model parameters
        of the body levers written once for all the bodies the changes touch (what a fidelity
        manager's level changes of one tick need)."""
        changes = [(list(names), Lever.of(lever), bool(enabled))
                   for names, lever, enabled in changes]
        for names, lever, _ in changes:
            self._lever_targets(names, lever)
        with undo.transaction(self):
            body = [(BODY_LEVERS[lever], self._bodies_of(names), not enabled)
                    for names, lever, enabled in changes if lever in BODY_LEVERS]
            if body:
                self._body_levers.set_many(self.model, self.data, body)
            for names, lever, enabled in changes:
                if lever not in BODY_LEVERS:
                    self._set_lever(names, lever, enabled)

    def _lever_targets(self, names: list[str], lever: Lever) -> None:
        """Raise unless the lever applies to every one of ``names``."""
        if lever in BODY_LEVERS:
            self._require(names, (EntityKind.MODEL, EntityKind.LINK), lever)
        elif lever == Lever.ACTUATION:
            self._lever_actuators(names)
        else:
            self._flag_entities(names, lever)

    def _set_lever(self, names: list[str], lever: Lever, enabled: bool) -> None:
        if lever in BODY_LEVERS:  # names checked by the caller
            bodies = self._bodies_of(names)
            self._body_levers.set(self.model, self.data, BODY_LEVERS[lever], bodies, not enabled)
        elif lever == Lever.ACTUATION:
            self._actuator_levers.set(self.model, self._lever_actuators(names), not enabled)
        else:
            flags = self._sensor_on if lever == Lever.SENSOR else self._plugin_on
            targets = self._flag_entities(names, lever)
            for n in targets:
                flags[n] = bool(enabled)
            if lever == Lever.SCRIPT:  # a controller plugin switched off leaves its joint passive
                acts = [self.index.actuator_id[p] for p in targets if p in self.controllers]
                self._actuator_levers.set(self.model, np.array(acts, int), not enabled)

    def get_lever(self, names: Sequence[str], lever: Lever, *,
                  original: bool = False) -> np.ndarray:
        """Is the lever enabled for each entity; with ``original``, as the world file or the
        spawn gave it: enabled, since SDF holds no lever state (a link's own ``<gravity>false``
        is its physics, which the GRAVITY lever leaves alone)."""
        lever = Lever.of(lever)
        names = list(names)
        if original:
            self._lever_targets(names, lever)
            return np.ones(len(names), bool)
        if lever in BODY_LEVERS:
            self._require(names, (EntityKind.MODEL, EntityKind.LINK), lever)
            ids, sizes = self.index.body_ids(names)
            off = self._body_levers.flag(BODY_LEVERS[lever])[ids]
            if sizes is None:  # one body each
                return ~off
            if not len(sizes):
                return np.ones(0, bool)
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
                        state_setting=True, resetting=True, snapshots=True, free_running=False,
                        spawn_formats=("sdf",),
                        extra={"engine": f"mujoco {mujoco.__version__}", "sleep": self.sleep})

    # ------------------------------------------------------------------ control and sensing
    def set_joint_commands(self, controllers: Sequence[str], values: Sequence[float]) -> None:
        """Targets for joint-controller plugins (position or velocity, by plugin type)."""
        for name, value in zip(controllers, values):
            if name not in self.controllers:
                raise UnknownEntityError(name, "no joint-controller plugin of that name")
            self.data.ctrl[self.index.actuator_id[name]] = value

    def joint_positions(self, joints: Sequence[str]) -> np.ndarray:
        """Positions of one-degree-of-freedom joints (rad or m)."""
        qadr, _ = self.index.joint_addresses(self.model, joints)
        return self.data.qpos[qadr]

    def joint_states(self, joints: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of one-degree-of-freedom joints."""
        qadr, dadr = self.index.joint_addresses(self.model, joints)
        return self.data.qpos[qadr], self.data.qvel[dadr]

    def bounds(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners ``(n, 3)`` of the axis-aligned box around each model's or
        link's collision geometry, in the entity's own frame; NaN rows for entities without any."""
        names = list(names)
        lo, hi = np.full((len(names), 3), np.nan), np.full((len(names), 3), np.nan)
        if not names:
            return lo, hi
        m, d, index = self.model, self.data, self.index
        for n in names:
            kind = index.entity_info(n).kind
            if kind not in (EntityKind.MODEL, EntityKind.LINK):
                raise InvalidOperationError(f"'{n}' is a {kind.value}: only models and links have "
                                            "bounds")
        geoms = [np.array([m.geom(g).id for link in index.links_of(n)
                           for g in self.world.links[link].collisions], int) for n in names]
        frames = self.get_states(names)[0]
        self._refresh()
        for i, g in enumerate(geoms):
            if not g.size:
                continue
            aabb = m.geom_aabb[g]  # centre and half extents in the geom frame
            local = aabb[:, None, :3] + BOX_CORNERS[None] * aabb[:, None, 3:]
            world = np.einsum("gij,gkj->gki", d.geom_xmat[g].reshape(-1, 3, 3), local)
            world += d.geom_xpos[g][:, None]
            points = pose_math.quat_rotate(pose_math.quat_conj(frames[i, 3:]),
                                       world.reshape(-1, 3) - frames[i, :3])
            lo[i], hi[i] = points.min(axis=0), points.max(axis=0)
        return lo, hi

    def sensor_enabled(self, name: str) -> bool:
        """Is the sensor's SENSOR lever on."""
        return self._flag(name, EntityKind.SENSOR, self._sensor_on)

    def script_enabled(self, name: str) -> bool:
        """Is the plugin's SCRIPT lever on."""
        return self._flag(name, EntityKind.PLUGIN, self._plugin_on)

    def _flag(self, name: str, kind: EntityKind, flags: dict[str, bool]) -> bool:
        found = self.entity_info(name).kind
        if found != kind:
            raise InvalidOperationError(f"'{name}' is a {found.value}, not a {kind.value}")
        return flags[name]


def clear_unstable(data: mujoco.MjData) -> None:
    """Zero the counters of MuJoCo's instability warnings."""
    for w in UNSTABLE:
        data.warning[w].number = 0


def unstable(model: mujoco.MjModel, data: mujoco.MjData) -> str:
    """What MuJoCo found unstable since the counters were cleared, naming the body ('' when
    nothing was)."""
    found = []
    for w, what in zip(UNSTABLE, ("position", "velocity", "acceleration")):
        if data.warning[w].number:
            i = int(data.warning[w].lastinfo)
            body = (model.jnt_bodyid[np.searchsorted(model.jnt_qposadr, i, "right") - 1]
                    if what == "position" else model.dof_bodyid[i]) if i >= 0 else -1
            where = f" of '{model.body(int(body)).name}'" if body >= 0 else ""
            found.append(f"bad {what}{where}")
    return ", ".join(found)


def _rows(values, names: list[str], width: int, what: str) -> np.ndarray:
    """``values`` as a fresh ``(len(names), width)`` float array; InvalidPoseError otherwise."""
    try:
        return np.array(values, float).reshape(len(names), width)
    except (TypeError, ValueError):
        shape = np.shape(values) if not isinstance(values, str) else "text"
        raise InvalidPoseError(f"{what} for {len(names)} entities must be ({len(names)}, {width}) "
                               f"numbers; got {shape}") from None
