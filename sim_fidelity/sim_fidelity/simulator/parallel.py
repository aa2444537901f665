"""Island-parallel stepping: the embedded engine with independent parts of the scene stepped in
worker threads (paper 002's "threaded islands", on MuJoCo).

:class:`IslandParallelEngine` is a :class:`~.engine.MujocoEngine` whose physics steps run on
``threads`` worker threads. The scene's units (top-level non-static models, :mod:`.islands`) are
grouped by whether they may touch before the next check and dealt out to at most ``threads``
*parts*; each part is a MuJoCo model of its units plus every static model, compiled from the same
spec, with its own ``MjData``, stepped by its own thread (MuJoCo's ``mj_step`` releases the GIL).
Before units of two parts could touch (a bound from their gaps and speeds, :mod:`.islands`) the
groups are recomputed from the parts' geometry and speeds: when units of two parts may meet within
the grouping horizon, or a group has parted and the parts are out of balance, the state is
gathered into the whole world's ``MjData``, the parts are rebuilt (compiled models are cached by
their set of units) and the state is scattered again, exactly (``qpos``, ``qvel``, ``act``,
controls and the solver's warm start are copied, not recomputed).

The rest of the project sees one world: the whole model and data stay the engine's ``model`` and
``data``; reading either gathers the parts' state first, and the next step scatters the world's
state and its model parameters (lever flags, masses, friction, damping, gains, gravity) to the
parts. ``threads=0`` is the plain serial engine (the control). Step hooks, when there are any,
see the gathered world after every step.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
from dataclasses import dataclass, field

import mujoco
import numpy as np

from . import islands, undo
from .engine import MujocoEngine, clear_unstable, unstable
from .errors import InvalidOperationError
from .protocol import EntityKind, Features
from .snapshot import EngineSnapshot, Snapshot

# model fields scattered from the whole world to the parts, by the kind of element they index
PARAMS = {
    "body": ("gravcomp", "pos", "quat", "mass", "inertia", "ipos", "iquat"),
    "geom": ("contype", "conaffinity", "friction", "solref", "solimp", "margin", "gap"),
    "dof": ("damping", "armature", "frictionloss"),
    "jnt": ("stiffness", "range"),
    "actuator": ("gainprm", "biasprm", "ctrlrange"),
}
QPOS_SIZE = {int(mujoco.mjtJoint.mjJNT_FREE): 7, int(mujoco.mjtJoint.mjJNT_BALL): 4,
             int(mujoco.mjtJoint.mjJNT_SLIDE): 1, int(mujoco.mjtJoint.mjJNT_HINGE): 1}
DOF_SIZE = {int(mujoco.mjtJoint.mjJNT_FREE): 6, int(mujoco.mjtJoint.mjJNT_BALL): 3,
            int(mujoco.mjtJoint.mjJNT_SLIDE): 1, int(mujoco.mjtJoint.mjJNT_HINGE): 1}
MODEL_CACHE = 64  # compiled part models kept per engine


@dataclass
class Part:
    """One independently stepped piece of the world and where its elements sit in the whole."""

    units: frozenset[int]
    model: mujoco.MjModel
    data: mujoco.MjData
    maps: dict[str, np.ndarray]  # element kind -> ids in the whole model, "qpos"/"dof"/"actz"
    geom_unit: np.ndarray  # unit of each part geom, -1 for shared (static) or inert ones
    body_unit: np.ndarray
    own: dict[str, np.ndarray]  # "qpos", "dof", "actz": part indices whose state is the part's
    inert: dict[str, np.ndarray] = field(default_factory=dict)  # masked part: "body", "geom",
    # "dof" of other parts' units, held still and out of contact here


class _Worker:
    """A thread that steps one part ``n`` times whenever it is told to."""

    def __init__(self, done: threading.Semaphore):
        self.go = threading.Semaphore(0)
        self.done = done
        self.part: Part | None = None
        self.n = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="island-worker")
        self.thread.start()

    def _run(self) -> None:
        while True:
            self.go.acquire()
            part, n = self.part, self.n
            if part is None:  # told to stop
                return
            try:
                m, d = part.model, part.data
                for _ in range(n):
                    mujoco.mj_step(m, d)
            except BaseException as e:  # handed to the caller's thread
                self.error = e
            self.done.release()


class IslandParallelEngine(MujocoEngine):
    """The embedded engine with independent islands stepped on ``threads`` worker threads.

    ``threads=None`` takes the world's ``<physics><ode><solver><island_threads>``; 0 is serial.
    Units that may touch within ``horizon`` steps are grouped into one part; the parts are checked
    again before units of two parts could touch, at the latest after ``max_interval`` steps.
    """

    def __init__(self, world, *, threads: int | None = None, horizon: int = 10,
                 max_interval: int = 500, **kwargs):
        if threads is None:
            threads = int(world.physics.get("island_threads", 0))
        if threads < 0:
            raise InvalidOperationError(f"island threads must be >= 0, got {threads}")
        if not 1 <= horizon <= max_interval:
            raise InvalidOperationError(f"need 1 <= horizon <= max_interval, got {horizon}, "
                                        f"{max_interval}")
        self.threads = threads
        self.horizon = horizon
        self.max_interval = max_interval
        self._parts: list[Part] = []
        self._cache: dict[frozenset[int], mujoco.MjModel] = {}
        self._ahead = False  # parts have stepped since the world last gathered their state
        self._touched = True  # the world's model or data may have changed since the last scatter
        self._until_check = 0  # steps before the parts must be checked again
        self._done = threading.Semaphore(0)
        self._workers: list[_Worker] = []
        self.repartitions = 0  # times the parts were rebuilt
        super().__init__(world, **kwargs)

    # ------------------------------------------------------------------ the whole world's view
    @property
    def model(self) -> mujoco.MjModel:
        self._gather()
        self._touched = True
        return self._model

    @model.setter
    def model(self, value: mujoco.MjModel) -> None:  # a (re)compile: parts are rebuilt
        self._model = value
        self._invalidate()

    @property
    def data(self) -> mujoco.MjData:
        self._gather()
        self._touched = True
        return self._data

    @data.setter
    def data(self, value: mujoco.MjData) -> None:
        self._data = value
        self._invalidate()

    @property
    def time(self) -> float:
        if self._ahead and self._parts:
            return float(self._parts[0].data.time)
        return float(self._data.time)

    @property
    def parts(self) -> list[frozenset[str]]:
        """The names of the units stepped together in each part (empty when serial)."""
        return [frozenset(self._unit_names[u] for u in p.units) for p in self._parts]

    def contact_count(self) -> int:
        """Contacts found in the last step: summed over the parts (each sees its own units)."""
        if self._ahead and self._parts:
            return int(sum(p.data.ncon for p in self._parts))
        return int(self._data.ncon)

    def features(self) -> Features:
        f = super().features()
        f.extra["island_threads"] = self.threads
        return f

    def snapshot(self) -> EngineSnapshot:
        """The world's state (gathered from the parts) and which units each part steps: a
        restore steps the same parts, so the trajectory after it is the one after the save."""
        snap = super().snapshot()
        return dataclasses.replace(snap, partition=tuple(p.units for p in self._parts))

    def restore(self, snapshot: Snapshot) -> None:
        super().restore(snapshot)
        units = list(snapshot.partition)
        if units and [p.units for p in self._parts] != units:
            self._parts = [self._part(u) for u in units]
            self.repartitions += 1
        self._ahead, self._touched = False, True  # the next step scatters the restored world

    def close(self) -> None:
        """Stop the worker threads (also done when the engine is garbage-collected)."""
        for w in self._workers:
            w.part = None
            w.go.release()
        for w in self._workers:
            w.thread.join(timeout=5.0)
        self._workers = []

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    # ------------------------------------------------------------------ stepping
    def step(self, n: int = 1) -> None:
        if self.threads == 0:
            super().step(n)
            return
        if n < 0:
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        if self._touched or not self._parts:
            self._scatter()
        while n > 0:
            k = 1 if self.hooks else min(n, self._until_check)
            self._dispatch_checked(k)
            n -= k
            self._until_check -= k
            if self.hooks:
                self._gather(forward=True)
                for hook in self.hooks:
                    hook(self)
                self._scatter()
            elif self._until_check <= 0:
                self._regroup()
        self._stale = True

    def _dispatch_checked(self, n: int) -> None:
        """Step the parts ``n`` times; a part that diverged puts every part back where this
        began (the engine's contract: undone, counted, raised)."""
        start = [undo.physics_state(p.model, p.data) for p in self._parts]
        for p in self._parts:
            clear_unstable(p.data)
        self._dispatch(n)
        problems = [unstable(p.model, p.data) for p in self._parts]
        if any(problems):
            for p, state in zip(self._parts, start):
                undo.set_physics_state(p.model, p.data, state)
            self._ahead = True
            self._diverged("; ".join(p for p in problems if p), n)

    def _dispatch(self, n: int) -> None:
        parts = self._parts
        while len(self._workers) < len(parts):
            self._workers.append(_Worker(self._done))
        for w, p in zip(self._workers, parts):
            w.part, w.n = p, n
            w.go.release()
        for _ in parts:
            self._done.acquire()
        self._ahead = True
        for w in self._workers[:len(parts)]:
            if w.error is not None:
                err, w.error = w.error, None
                raise err

    # ------------------------------------------------------------------ gather and scatter
    def _gather(self, forward: bool = False) -> None:
        """Copy the parts' state into the whole world's data."""
        if not self._ahead:
            return
        self._ahead = False
        d = self._data
        for p in self._parts:
            pd, mp, q, v, a = p.data, p.maps, p.own["qpos"], p.own["dof"], p.own["actz"]
            d.qpos[mp["qpos"][q]] = pd.qpos[q]
            d.qvel[mp["dof"][v]] = pd.qvel[v]
            d.qacc_warmstart[mp["dof"][v]] = pd.qacc_warmstart[v]
            d.qacc[mp["dof"][v]] = pd.qacc[v]
            if a.size:
                d.act[mp["actz"][a]] = pd.act[a]
        d.time = self._parts[0].data.time
        if forward:
            mujoco.mj_forward(self._model, d)
            self._stale = False
        else:
            self._stale = True

    def _scatter(self, check: bool = True) -> None:
        """Copy the whole world's state and parameters to the parts; with ``check``, first
        regroup from the world's own state (it may have been teleported) and rebuild the parts
        when their grouping no longer holds."""
        self._gather()
        m, d = self._model, self._data
        if check or not self._parts:
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            self._stale = False
            slack, ttc, centre = self._unit_geometry(None)
            grps = islands.groups(slack)
            if not self._parts or self._crosses(grps):
                self._rebuild(grps, centre)
            self._schedule(ttc)
        for p in self._parts:
            pm, pd, mp = p.model, p.data, p.maps
            for kind, names in PARAMS.items():
                idx = mp[kind]
                for name in names:
                    getattr(pm, f"{kind}_{name}")[:] = getattr(m, f"{kind}_{name}")[idx]
            pm.opt.gravity[:] = m.opt.gravity
            pm.opt.timestep = m.opt.timestep
            pd.qpos[:] = d.qpos[mp["qpos"]]
            pd.qvel[:] = d.qvel[mp["dof"]]
            pd.qacc_warmstart[:] = d.qacc_warmstart[mp["dof"]]
            pd.ctrl[:] = d.ctrl[mp["actuator"]]
            pd.qfrc_applied[:] = d.qfrc_applied[mp["dof"]]
            pd.xfrc_applied[:] = d.xfrc_applied[mp["body"]]
            if pd.act.size:
                pd.act[:] = d.act[mp["actz"]]
            pd.time = d.time
            if p.inert:
                pm.geom_contype[p.inert["geom"]] = 0
                pm.geom_conaffinity[p.inert["geom"]] = 0
                pm.body_gravcomp[p.inert["body"]] = 1.0
                pd.qvel[p.inert["dof"]] = 0.0
        self._touched = False

    # ------------------------------------------------------------------ grouping
    def _invalidate(self) -> None:
        self._parts = []
        self._cache.clear()
        self._ahead = False
        self._touched = True
        if not hasattr(self, "_model") or not hasattr(self, "_data"):
            return
        self._index_units()

    def _index_units(self) -> None:
        """Unit (top-level non-static model) of every body of the whole model; -1 = shared."""
        m = self._model
        if self.threads and m.neq:
            raise InvalidOperationError(
                f"world '{self.world.name}' has {m.neq} equality constraint(s) (welds, "
                "suction): island threads do not support them yet; use threads=0")
        names = [m.body(b).name for b in range(m.nbody)]
        tops = {}
        for b, name in enumerate(names):
            top = name.split("::", 1)[0]
            info = self.world.models.get(top)
            if info is None or b == 0 or m.body_weldid[b] == 0:
                continue
            tops.setdefault(top, len(tops))
        self._unit_names = list(tops)
        unit = np.full(m.nbody, -1, int)
        for b, name in enumerate(names):
            top = name.split("::", 1)[0]
            if top in tops and m.body_weldid[b] != 0:
                unit[b] = tops[top]
        # bodies welded to the world inside a dynamic model move with nothing: shared
        self._body_unit = unit
        self._unit_cost = np.bincount(unit[unit >= 0], weights=m.body_dofnum[unit >= 0] + 1.0,
                                      minlength=len(tops))
        bodies_per_unit = np.bincount(unit[unit >= 0], minlength=len(tops))
        self._masked = bool(len(tops)) and m.nu == 0 and bool(np.all(bodies_per_unit == 1))

    def _unit_geometry(self, parts: list[Part] | None = None):
        """Slack and earliest contact time between units, and their centres, from the parts'
        data (or the whole world's, when ``parts`` is None)."""
        nunits = len(self._unit_names)
        sources = ([(p.model, p.data, p.geom_unit) for p in parts] if parts else
                   [(self._model, self._data, self._body_unit[self._model.geom_bodyid])])
        los, his, centres, radii, speeds, owner = [], [], [], [], [], []
        for m, d, gu in sources:
            lo, hi = islands.geom_boxes(d.geom_xpos, d.geom_xmat, m.geom_aabb)
            body = m.geom_bodyid
            vel = d.cvel[body]  # [angular, linear] at the subtree centre of the body's root
            arm = np.linalg.norm(d.geom_xpos - d.subtree_com[m.body_rootid[body]], axis=1)
            speeds.append(np.linalg.norm(vel[:, 3:], axis=1)
                          + np.linalg.norm(vel[:, :3], axis=1) * (arm + m.geom_rbound))
            los.append(lo)
            his.append(hi)
            centres.append(d.geom_xpos)
            radii.append(m.geom_rbound)
            # geoms that collide with nothing (visuals, COLLISION lever off) bring no one closer
            owner.append(np.where((m.geom_contype | m.geom_conaffinity) != 0, gu, -1))
        lo, hi, owner = np.concatenate(los), np.concatenate(his), np.concatenate(owner)
        slack, ttc = islands.pair_bounds(
            lo, hi, np.concatenate(centres), np.concatenate(radii), np.concatenate(speeds),
            owner, nunits, self.horizon * self._model.opt.timestep,
            float(np.linalg.norm(self._model.opt.gravity)))
        centre = np.full((nunits, 3), np.nan)
        own = owner >= 0
        total = np.zeros((nunits, 3))
        count = np.bincount(owner[own], minlength=nunits)
        np.add.at(total, owner[own], (lo[own] + hi[own]) / 2)
        centre[count > 0] = total[count > 0] / count[count > 0, None]
        return slack, ttc, centre

    def _schedule(self, ttc: np.ndarray) -> None:
        """Check again before units of two parts could touch (at most ``max_interval`` steps)."""
        part_of = self._part_index()
        cross = part_of[:, None] != part_of[None, :]
        earliest = float(ttc[cross].min()) if cross.any() else np.inf
        steps = earliest / self._model.opt.timestep
        self._until_check = int(max(1, min(self.max_interval, np.floor(steps))))

    def _part_index(self) -> np.ndarray:
        part_of = np.full(len(self._unit_names), -1, int)
        for k, p in enumerate(self._parts):
            part_of[list(p.units)] = k
        return part_of

    def _crosses(self, grps: list[frozenset[int]]) -> bool:
        """Does any group have units in more than one part."""
        part_of = self._part_index()
        return any(len({int(part_of[u]) for u in g}) > 1 for g in grps)

    def _regroup(self) -> None:
        """At each check: rebuild the parts when islands may meet across parts, or
        when they have parted and the parts are out of balance."""
        slack, ttc, centre = self._unit_geometry(self._parts)
        grps = islands.groups(slack)
        meet = self._crosses(grps)
        usable = min(self.threads, len(grps))
        costs = np.array([self._unit_cost[list(p.units)].sum() for p in self._parts])
        unbalanced = usable > 1 and (len(self._parts) < usable or islands.imbalance(costs) > 1.5)
        if meet or unbalanced:
            self._gather()
            self._rebuild(grps, centre)
            self._scatter(check=False)
        self._schedule(ttc)

    def _rebuild(self, grps: list[frozenset[int]], centre: np.ndarray) -> None:
        """Deal the groups into parts and build them (models from the cache when possible)."""
        dealt = islands.deal(grps, self._unit_cost, centre, self.threads)
        if not dealt:  # nothing dynamic: one part of the static scene
            dealt = [frozenset()]
        self._parts = [self._part(units) for units in dealt]
        self.repartitions += 1

    def _part(self, units: frozenset[int]) -> Part:
        """A part stepping ``units``: in a world of single free bodies, a copy of the whole model
        whose other units are inert (masked: no compile); otherwise a model of its own."""
        if self._masked:
            return self._masked_part(units)
        model = self._cache.get(units)
        if model is None:
            model = self._compile_part(units)
            if len(self._cache) >= MODEL_CACHE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[units] = model
        data = mujoco.MjData(model)
        maps = self._maps(model)
        body_unit = self._body_unit[maps["body"]]
        own = {k: np.arange(len(maps[k])) for k in ("qpos", "dof", "actz")}
        return Part(units, model, data, maps, body_unit[model.geom_bodyid], body_unit, own)

    def _masked_part(self, units: frozenset[int]) -> Part:
        m = self._model
        model = copy.copy(m)
        maps = {"body": np.arange(m.nbody), "geom": np.arange(m.ngeom), "jnt": np.arange(m.njnt),
                "dof": np.arange(m.nv), "qpos": np.arange(m.nq), "actuator": np.arange(m.nu),
                "actz": np.arange(m.na)}
        unit = self._body_unit
        inert_body = (unit >= 0) & ~np.isin(unit, list(units))
        body_unit = np.where(inert_body, -1, unit)
        inert_dof = inert_body[m.dof_bodyid]
        inert_qpos = np.zeros(m.nq, bool)
        for j in np.flatnonzero(inert_body[m.jnt_bodyid]):
            a = m.jnt_qposadr[j]
            inert_qpos[a:a + QPOS_SIZE[int(m.jnt_type[j])]] = True
        own = {"qpos": np.flatnonzero(~inert_qpos), "dof": np.flatnonzero(~inert_dof),
               "actz": np.arange(m.na)}
        inert = {"body": np.flatnonzero(inert_body),
                 "geom": np.flatnonzero(inert_body[m.geom_bodyid]),
                 "dof": np.flatnonzero(inert_dof)}
        return Part(units, model, mujoco.MjData(model), maps, body_unit[m.geom_bodyid],
                    body_unit, own, inert)

    def _compile_part(self, units: frozenset[int]) -> mujoco.MjModel:
        """The whole spec without the bodies (and what refers to them) of the other units."""
        foreign = {self._unit_names[u] for u in range(len(self._unit_names)) if u not in units}
        spec = self.world.spec.copy()

        def is_foreign(name: str | None) -> bool:
            return bool(name) and name.split("::", 1)[0] in foreign

        for kind, refs in (("actuators", ("target",)), ("sensors", ("objname", "refname")),
                           ("excludes", ("bodyname1", "bodyname2")),
                           ("equalities", ("name1", "name2"))):
            for el in list(getattr(spec, kind)):
                if any(is_foreign(getattr(el, r, "")) for r in refs):
                    spec.delete(el)
        for body in list(spec.worldbody.bodies):
            if is_foreign(body.name):
                spec.delete(body)
        return spec.compile()

    def _maps(self, pm: mujoco.MjModel) -> dict[str, np.ndarray]:
        """Ids in the whole model of the part's bodies, geoms, joints, dofs, qpos, actuators."""
        m = self._model
        body = np.array([m.body(pm.body(b).name).id for b in range(pm.nbody)], int)
        geom, jnt, dof, qpos = [], [], [], []
        for b, fb in enumerate(body):
            geom += range(m.body_geomadr[fb], m.body_geomadr[fb] + m.body_geomnum[fb])
            for j in range(pm.body_jntnum[b]):
                fj = m.body_jntadr[fb] + j
                jnt.append(fj)
                t = int(m.jnt_type[fj])
                qpos += range(m.jnt_qposadr[fj], m.jnt_qposadr[fj] + QPOS_SIZE[t])
                dof += range(m.jnt_dofadr[fj], m.jnt_dofadr[fj] + DOF_SIZE[t])
        act = np.array([m.actuator(pm.actuator(a).name).id for a in range(pm.nu)], int)
        actz = np.concatenate([np.arange(m.actuator_actadr[a], m.actuator_actadr[a]
                                         + m.actuator_actnum[a]) for a in act
                               if m.actuator_actnum[a] > 0] or [np.zeros(0, int)])
        return {"body": body, "geom": np.array(geom, int), "jnt": np.array(jnt, int),
                "dof": np.array(dof, int), "qpos": np.array(qpos, int), "actuator": act,
                "actz": actz.astype(int)}

    def part_of(self, name: str) -> int:
        """The part index stepping the top-level model ``name`` (-1 for a static one)."""
        info = self.entity_info(name)
        if info.kind != EntityKind.MODEL or info.parent:
            raise InvalidOperationError(f"'{name}' is not a top-level model")
        for k, p in enumerate(self.parts):
            if name in p:
                return k
        return -1
