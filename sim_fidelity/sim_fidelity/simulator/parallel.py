"""Island-parallel stepping: the embedded engine with independent parts of the scene stepped in
threads (paper 002's "threaded islands", on MuJoCo).

:class:`IslandParallelEngine` is a :class:`~.engine.MujocoEngine` whose physics steps run on
``threads`` threads: the caller's and ``threads - 1`` persistent workers. The scene's units
(top-level non-static models, :mod:`.islands`) are grouped by whether they may touch soon and
dealt out to at most ``threads`` *parts*; each part is a MuJoCo model of its units plus every
static model, compiled from the same spec, with its own ``MjData``. One part is no part: the whole
world then takes the serial engine's step.

Steps run in *chunks*: ``step()`` calls are deferred until a chunk is full or the world is read,
then every part runs the chunk's steps in one ``mj_step(m, d, nstep)`` call (the bindings release
the GIL for all of them). A chunk lasts until units of two parts could touch at the earliest (a
bound from their gaps and speeds, exact distances for the nearest pairs) and ends at the latest
at the next multiple of ``max_interval`` steps. After each chunk the parts are checked: a chunk
that let two parts' units come within contact distance, or in which a geom outran its speed
bound, is undone and run again (merged, or in shorter chunks). When units of two parts may meet
within the grouping horizon, or a group has parted and the parts are out of balance, the state is
gathered into the whole world's ``MjData``, the parts are rebuilt (compiled models are cached by
their set of units) and the state is scattered again, exactly (``qpos``, ``qvel``, ``act``,
controls and the solver's warm start are copied, not recomputed).

The rest of the project sees one world: the whole model and data stay the engine's ``model`` and
``data``; reading either runs the deferred steps and gathers the parts' state first, and the next
step scatters the world's state and its model parameters (lever flags, masses, friction, damping,
gains, gravity) to the parts. ``threads=0`` is the plain serial engine (the control). Step hooks,
when there are any, see the gathered world after every step.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
from dataclasses import dataclass, field
from typing import NamedTuple

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
REFINE_MAX = 64  # geom pairs whose exact distance is computed per check, at most
BALANCE_INTERVAL = 1000  # steps between checks of whether parted groups unbalance the parts
MAX_INTERVAL = 100  # steps a chunk may last at most (by default): chunks end at its multiples


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
    checked: Checked | None = None  # the geoms whose distance to other parts is checked
    start: Motion | None = None  # their motion where the next chunk begins (None: not known)


class Motion(NamedTuple):
    """Geoms' world boxes (``lo``, ``hi``), centres, bounding radii, speed bounds, orientations
    and ids in the whole model."""

    lo: np.ndarray
    hi: np.ndarray
    xpos: np.ndarray
    radius: np.ndarray
    speed: np.ndarray
    xmat: np.ndarray
    ids: np.ndarray


class Checked(NamedTuple):
    """A part's geoms whose distance to other parts is checked after every chunk (its units'
    colliding geoms), with what the check needs of the model, indexed once."""

    geoms: np.ndarray
    body: np.ndarray
    root: np.ndarray
    aabb: np.ndarray
    radius: np.ndarray
    ids: np.ndarray  # in the whole model
    unit: np.ndarray
    sphere: np.ndarray

    @classmethod
    def of(cls, m: mujoco.MjModel, geom_unit: np.ndarray, ids: np.ndarray) -> "Checked":
        geoms = np.flatnonzero(((m.geom_contype | m.geom_conaffinity) != 0) & (geom_unit >= 0))
        body = m.geom_bodyid[geoms]
        return cls(geoms, body, m.body_rootid[body], m.geom_aabb[geoms], m.geom_rbound[geoms],
                   ids[geoms], geom_unit[geoms],
                   m.geom_type[geoms] == int(mujoco.mjtGeom.mjGEOM_SPHERE))

    def motion(self, d: mujoco.MjData) -> Motion:
        """Where the geoms are in ``d`` (its last forward pass) and how fast they may move."""
        lo, hi, xpos, xmat, speed = islands.geom_motion(
            d.geom_xpos, d.geom_xmat, d.cvel, d.subtree_com, self.geoms, self.body, self.root,
            self.aabb, self.radius)
        return Motion(lo, hi, xpos, self.radius, speed, xmat, self.ids)


def _parts_apart_time(a: Motion, b: Motion, gravity: float) -> float:
    """A lower bound of the earliest time a geom of ``a`` could touch one of ``b``: the gap
    between the world boxes around all of each side's geoms, closed at the fastest speed bounds of
    both sides (:func:`.islands.time_to_contact`)."""
    sep = np.maximum(0.0, np.maximum(a.lo.min(axis=0) - b.hi.max(axis=0),
                                     b.lo.min(axis=0) - a.hi.max(axis=0)))
    return islands.time_to_contact_scalar(float(np.sqrt(sep @ sep)),
                                          float(a.speed.max() + b.speed.max()), gravity)


class _Worker:
    """A persistent thread that steps one part ``n`` times (one ``mj_step(m, d, n)`` call: the
    bindings release the GIL for all ``n``) whenever it is started; plain C locks hand it over."""

    def __init__(self):
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.part: Part | None = None
        self.n = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="island-worker")
        self.thread.start()

    def _run(self) -> None:
        go, done = self.go, self.done
        while True:
            go.acquire()
            part = self.part
            if part is None:  # told to stop
                done.release()
                return
            try:
                mujoco.mj_step(part.model, part.data, self.n)
            except BaseException as e:  # handed to the caller's thread
                self.error = e
            done.release()

    def start(self, part: Part | None, n: int) -> None:
        self.part, self.n = part, n
        self.go.release()

    def wait(self) -> BaseException | None:
        self.done.acquire()
        err, self.error = self.error, None
        return err


class IslandParallelEngine(MujocoEngine):
    """The embedded engine with independent islands stepped on ``threads`` threads (the caller's
    and ``threads - 1`` workers).

    ``threads=None`` takes the world's ``<physics><ode><solver><island_threads>``; 0 is serial.
    Units that may touch within ``horizon`` steps are grouped into one part; steps are run in
    chunks, each as long as no units of two parts can touch within it and ending at the latest
    at the next multiple of ``max_interval`` steps of the world's time.
    """

    def __init__(self, world, *, threads: int | None = None, horizon: int = 5,
                 max_interval: int = MAX_INTERVAL, **kwargs):
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
        self._parts: list[Part] = []  # empty: the whole world steps in the caller's thread
        self._built = False  # the layout (parts or whole) has been decided
        self._cache: dict[frozenset[int], mujoco.MjModel] = {}
        self._ahead = False  # parts have stepped since the world last gathered their state
        self._touched = True  # the world's model or data may have changed since the last scatter
        self._pending = 0  # steps asked for and not run yet (run at a chunk's end or any read)
        self._earlier = 0  # of those, the steps of calls that have returned (run first)
        self._room = 0  # steps that may be deferred without a look at the parts
        self._until_check = 0  # steps the parts may run before they must be checked again
        self._until_balance = 0  # steps before the groups' balance is checked again
        self._workers: list[_Worker] = []
        self._probe: mujoco.MjData | None = None  # scratch data of the whole model (distances)
        self.repartitions = 0  # times the layout was rebuilt
        self.rollbacks = 0  # chunks undone because units of two parts came within reach
        self._whole_steps = 0  # steps run on the whole world in the caller's thread
        super().__init__(world, **kwargs)

    # ------------------------------------------------------------------ the whole world's view
    @property
    def model(self) -> mujoco.MjModel:
        if self._parts:
            self._sync()
        return self._model

    @model.setter
    def model(self, value: mujoco.MjModel) -> None:  # a (re)compile: parts are rebuilt
        if self._parts:
            self._sync()
        self._model = value
        self._invalidate()

    @property
    def data(self) -> mujoco.MjData:
        if self._parts:
            self._sync()
        return self._data

    @data.setter
    def data(self, value: mujoco.MjData) -> None:
        if self._parts:
            self._sync()
        self._data = value
        self._invalidate()

    def _sync(self) -> None:
        """Run the deferred steps and gather the parts' state: the world is read (and may be
        written), so the next step scatters it."""
        self._flush()
        self._gather()
        self._touched = True

    @property
    def time(self) -> float:
        self._flush()
        if self._ahead and self._parts:
            return float(self._parts[0].data.time)
        return float(self._data.time)

    @property
    def parts(self) -> list[frozenset[str]]:
        """The names of the units stepped together in each part (one part, every unit, when
        the whole world steps in the caller's thread; empty when serial)."""
        self._flush()
        if not self._parts:
            return [frozenset(self._unit_names)] if self.threads and self._unit_names else []
        return [frozenset(self._unit_names[u] for u in p.units) for p in self._parts]

    def contact_count(self) -> int:
        """Contacts found in the last step: summed over the parts (each sees its own units)."""
        self._flush()
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
        if [p.units for p in self._parts] != units:
            self._parts = [self._part(u) for u in units] if len(units) > 1 else []
            self.repartitions += 1
        self._built = True
        self._ahead, self._touched = False, True  # the next step scatters the restored world

    def close(self) -> None:
        """Stop the worker threads (also done when the engine is garbage-collected); the steps
        still deferred are run first."""
        if self._parts:
            self._flush()
        for w in self._workers:
            w.start(None, 0)
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
        """Advance ``n`` steps. With parts, steps are deferred until a chunk is full (its end is
        the next check or the next multiple of ``max_interval`` steps) or the world is read:
        the caller's thread and the workers then step their parts a whole chunk at once."""
        if 0 <= n < self._room - self._pending and not self._touched and not self.hooks:
            self._pending += n  # the chunk is not full yet
            return
        if self._plain:
            super().step(n)
            return
        if n < 0:
            raise InvalidOperationError(f"cannot step a negative number of steps ({n})")
        self._earlier = self._pending
        if not self._built or (self._parts and self._touched):
            self._scatter()
        if not self._parts:
            self._step_whole(n)
        elif self.hooks:
            self._step_each(n)
        else:
            self._pending += n
            self._advance(final=False)
        self._stale = True

    def _step_whole(self, n: int) -> None:
        """The serial engine's step on the whole world; with more than one unit and thread,
        checked for groups that have parted (:meth:`_split_interval`)."""
        self._whole_steps += n
        every = self._split_interval()
        while n > 0:
            k = min(n, self._due(every))
            MujocoEngine.step(self, k)
            n -= k
            if self._due(every) == every:  # at a multiple of ``every`` steps
                self._regroup()
                if self._parts:  # split: the rest runs in parts
                    self._pending += n
                    self._advance(final=False)
                    return

    def _step_each(self, n: int) -> None:
        """Parts stepped one step at a time, the hooks seeing the gathered world after each."""
        for _ in range(n):
            if not self._parts:
                self._step_whole(1)  # the serial step runs the hooks
                continue
            whole = self._whole_steps
            self._pending += 1
            self._advance(final=True)
            if self._whole_steps != whole:  # merged on the way: the hooks have run
                continue
            self._gather(forward=True)
            for hook in self.hooks:
                hook(self)
            self._scatter()

    def _due(self, every: int | None = None) -> int:
        """Steps to the next multiple of ``every`` (``max_interval``) steps of the world's time."""
        every = every or self.max_interval
        t = self._parts[0].data.time if self._parts else self._data.time
        done = int(round(t / self._model.opt.timestep))
        return every - done % every

    def _split_interval(self) -> int:
        """Steps between the whole world's checks for groups that have parted: four times the
        grouping horizon, rounded up to a divisor of ``max_interval`` (chunks stay aligned)."""
        return next(k for k in range(min(4 * self.horizon, self.max_interval),
                                     self.max_interval + 1) if self.max_interval % k == 0)

    def run_deferred(self) -> None:
        """Run the steps still deferred (any read of the world does it too)."""
        self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._earlier = self._pending  # a read: every deferred step is of a returned call
            self._advance(final=True)

    def _advance(self, final: bool) -> None:
        """Run the deferred steps in chunks; with ``final`` all of them, else only whole chunks
        (the rest waits for more steps or a read)."""
        self._room = 0
        while self._pending:
            if not self._parts:  # merged into one: the rest steps serially
                n, self._pending = self._pending, 0
                earlier, self._earlier = min(self._earlier, n), 0
                if earlier:  # a divergence in this call's steps then goes back to its start
                    self._step_whole(earlier)
                self._step_whole(n - earlier)
                return
            k = min(self._until_check, self._due())
            if k > self._pending:
                if not final:
                    self._room = k  # steps that may wait before this chunk runs
                    return
                k = self._pending
            self._chunk(k)

    def _chunk(self, k: int) -> None:
        """Step the parts ``k`` times, then check them. A part that diverged puts the world
        back where the current call began (:meth:`_back_to_call`; counted, raised); units of
        two parts found within contact distance at the end undo the chunk, and are put into
        one part before it is run again."""
        parts = self._parts
        start = [undo.physics_state(p.model, p.data) for p in parts]
        for p in parts:
            clear_unstable(p.data)
            if p.start is None:
                mujoco.mj_kinematics(p.model, p.data)
                mujoco.mj_comPos(p.model, p.data)
                mujoco.mj_comVel(p.model, p.data)
                p.start = p.checked.motion(p.data)
        self._dispatch(k)
        self._pending = max(0, self._pending - k)
        problems = [unstable(p.model, p.data) for p in parts]
        if any(problems):
            self._pending = 0
            note, steps = self._back_to_call(start, k)
            self._diverged("; ".join(p for p in problems if p) + note, steps)
        self._earlier = max(0, self._earlier - k)
        self._until_check -= k
        self._until_balance -= k
        earliest, touching, rows = self._cross_check()
        strayed = k > 1 and self._strayed(rows, k)
        if touching or strayed:
            self._undo(start)
            self._pending += k
            self.rollbacks += 1
            if touching:  # regrouped from where the chunk began, the pairs forced together
                self._scatter(forced=touching)
            else:  # run again in shorter chunks, checked after each
                self._until_check = max(1, k // 4)
            return
        for p, mo in zip(parts, rows):
            p.start = mo
        steps = min(earliest / self._model.opt.timestep, 2.0 * self.max_interval)
        steps = int(steps) - 1  # the bounds are a step old
        if steps < self.horizon or self._until_balance <= 0:
            self._regroup()
        else:
            self._until_check = min(steps, self.max_interval)

    def _back_to_call(self, start: list[np.ndarray], k: int) -> tuple[str, int]:
        """After a chunk of ``k`` steps diverged: the parts back where the current call began
        (the chunk's start, then the steps of returned calls it held run again), as the serial
        engine's step leaves them. When those steps diverge themselves, the parts stay where the
        chunk began. Returns a note for the error and the number of steps undone."""
        self._undo(start)
        earlier = min(self._earlier, k)
        self._earlier = 0
        if not earlier:
            return "", k
        for p in self._parts:
            clear_unstable(p.data)
        self._dispatch(earlier)
        if not any(unstable(p.model, p.data) for p in self._parts):
            return "", k - earlier
        self._undo(start)
        return ", in steps deferred from calls that had returned", earlier

    def _strayed(self, rows: list[Motion], k: int) -> bool:
        """Did a checked geom move farther in the last ``k`` steps than its speed bound at the
        chunk's start allowed (it was pushed or pulled harder than the bound foresaw)?"""
        m = self._model
        t = k * m.opt.timestep
        gravity = float(np.linalg.norm(m.opt.gravity))
        for p, end in zip(self._parts, rows):
            moved = end.xpos - p.start.xpos
            allowed = islands.reach(p.start.speed, t, gravity)
            if np.any(np.einsum("gi,gi->g", moved, moved) > allowed * allowed):
                return True
        return False

    def _undo(self, start: list[np.ndarray]) -> None:
        for p, state in zip(self._parts, start):
            undo.set_physics_state(p.model, p.data, state)
        self._ahead = True

    def _dispatch(self, n: int) -> None:
        """Step every part ``n`` times: the first in this thread, the others in workers."""
        parts = self._parts
        while len(self._workers) < len(parts) - 1:
            self._workers.append(_Worker())
        workers = self._workers[:len(parts) - 1]
        for w, p in zip(workers, parts[1:]):
            w.start(p, n)
        error = None
        try:
            mujoco.mj_step(parts[0].model, parts[0].data, n)
        except BaseException as e:
            error = e
        for w in workers:
            error = w.wait() or error
        self._ahead = True
        if error is not None:
            raise error

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

    def _scatter(self, check: bool = True, forced: frozenset[tuple[int, int]] = frozenset()
                 ) -> None:
        """Copy the whole world's state and parameters to the parts; with ``check``, first
        regroup from the world's own state (it may have been teleported), with the unit pairs
        ``forced`` into one group."""
        self._gather()
        self._room = 0
        if check or not self._built:
            m, d = self._model, self._data
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_comVel(m, d)
            self._stale = False
            self._regroup(forced, from_world=True)
        self._copy_to_parts()

    def _copy_to_parts(self) -> None:
        m, d = self._model, self._data
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
            p.checked = Checked.of(pm, p.geom_unit, mp["geom"])
            p.start = None
        self._touched = False

    # ------------------------------------------------------------------ grouping
    def _invalidate(self) -> None:
        self._parts = []
        self._built = False
        self._cache.clear()
        self._ahead = False
        self._touched = True
        self._pending = 0
        self._room = 0
        self._probe = None
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
        # serial, one thread or one unit: never more than one part, the serial engine's step
        self._plain = self.threads <= 1 or len(tops) < 2
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

    def _motion(self, m: mujoco.MjModel, d: mujoco.MjData, geoms: np.ndarray,
                whole_ids: np.ndarray) -> Motion:
        """Where ``geoms`` are and how fast their points may move (from ``d``'s last forward
        pass); ``whole_ids`` are their ids in the whole model."""
        body = m.geom_bodyid[geoms]
        radius = m.geom_rbound[geoms]
        lo, hi, xpos, xmat, speed = islands.geom_motion(
            d.geom_xpos, d.geom_xmat, d.cvel, d.subtree_com, geoms, body, m.body_rootid[body],
            m.geom_aabb[geoms], radius)
        return Motion(lo, hi, xpos, radius, speed, xmat, whole_ids)

    def _refiner(self, mo: Motion, unit: np.ndarray, steps: int) -> islands.Refine:
        """Exact distances (MuJoCo's ``mj_geomDistance`` on the whole model) in place of the
        box and sphere bounds, for pairs of geoms of two units, nearest (earliest possible
        contact) first, while the bound says they could touch within ``steps`` steps or before
        the earliest contact found so far (at most ``REFINE_MAX`` per block; two spheres' bound
        is exact already)."""
        m = self._model
        if self._probe is None:
            self._probe = mujoco.MjData(m)
        probe = self._probe
        horizon = steps * m.opt.timestep
        gravity = float(np.linalg.norm(m.opt.gravity))
        sphere = m.geom_type[mo.ids] == int(mujoco.mjtGeom.mjGEOM_SPHERE)

        def refine(gap: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
            closing = mo.speed[rows, None] + mo.speed[None, cols]
            t = islands.time_to_contact(gap, closing, gravity)
            t[(unit[rows, None] == unit[None, cols]) | (sphere[rows, None] & sphere[None, cols])
              ] = np.inf
            flat = np.flatnonzero(t < np.inf)
            if not len(flat):
                return
            first = flat[np.argsort(t.flat[flat], kind="stable")[:REFINE_MAX]]
            best = np.inf
            for a, b in zip(*np.unravel_index(first, t.shape)):
                if t[a, b] >= max(horizon, best):
                    break
                ga, gb = mo.ids[rows[a]], mo.ids[cols[b]]
                for i, g in ((rows[a], ga), (cols[b], gb)):
                    probe.geom_xpos[g] = mo.xpos[i]
                    probe.geom_xmat[g] = mo.xmat[i]
                dist = mujoco.mj_geomDistance(m, probe, int(ga), int(gb), 1e3, None)
                gap[a, b] = max(gap[a, b], dist)
                best = min(best, islands.time_to_contact_scalar(float(gap[a, b]),
                                                                float(closing[a, b]), gravity))

        return refine

    def _unit_geometry(self, parts: list[Part] | None = None):
        """Slack and earliest contact time between units, and their centres, from the parts'
        data (or the whole world's, when ``parts`` is None)."""
        nunits = len(self._unit_names)
        sources = ([(p.model, p.data, p.geom_unit, p.maps["geom"]) for p in parts] if parts else
                   [(self._model, self._data, self._body_unit[self._model.geom_bodyid],
                     np.arange(self._model.ngeom))])
        rows, owners = [], []
        for m, d, gu, ids in sources:
            # geoms that collide with nothing (visuals, COLLISION lever off) bring no one closer
            geoms = np.flatnonzero(((m.geom_contype | m.geom_conaffinity) != 0) & (gu >= 0))
            rows.append(self._motion(m, d, geoms, ids[geoms]))
            owners.append(gu[geoms])
        mo = Motion(*(np.concatenate(c) for c in zip(*rows)))
        owner = np.concatenate(owners)
        dt = self._model.opt.timestep
        slack, ttc = islands.pair_bounds(
            mo.lo, mo.hi, mo.xpos, mo.radius, mo.speed, owner, nunits, (self.horizon + 1) * dt,
            float(np.linalg.norm(self._model.opt.gravity)),
            self._refiner(mo, owner, self.horizon + 1))
        middle = np.full((nunits, 3), np.nan)
        count = np.bincount(owner, minlength=nunits)
        total = np.zeros((nunits, 3))
        np.add.at(total, owner, (mo.lo + mo.hi) / 2)
        middle[count > 0] = total[count > 0] / count[count > 0, None]
        return slack, ttc, middle

    def _cross_check(self) -> tuple[float, frozenset[tuple[int, int]], list[Motion]]:
        """From the parts' last forward pass: the earliest time geoms of two parts could touch,
        the unit pairs of two parts already within contact distance (a missed contact), and
        the checked geoms' motion per part.
        Pairs are taken by their bounds, nearest first, and measured exactly (MuJoCo's
        ``mj_geomDistance``) until a bound is later than the earliest exact time found."""
        m = self._model
        if self._probe is None:
            self._probe = mujoco.MjData(m)
        probe = self._probe
        gravity = float(np.linalg.norm(m.opt.gravity))
        down = m.opt.gravity / gravity if gravity > 0 else np.zeros(3)
        checks = [p.checked for p in self._parts]
        rows = [c.motion(p.data) for c, p in zip(checks, self._parts)]
        for c, mo in zip(checks, rows):
            probe.geom_xpos[c.ids] = mo.xpos
            probe.geom_xmat[c.ids] = mo.xmat
        earliest, touching = np.inf, set()
        enough = (self.max_interval + 2) * m.opt.timestep  # no later time changes the next chunk
        for k in range(len(rows) - 1):
            a, ca = rows[k], checks[k]
            if len(rows) == 2:
                b, cb = rows[1], checks[1]
            else:
                b = Motion(*(np.concatenate(x) for x in zip(*rows[k + 1:])))
                cb = Checked(*(np.concatenate(x) for x in zip(*checks[k + 1:])))
            if not len(a.lo) or not len(b.lo):
                continue
            apart = _parts_apart_time(a, b, gravity)
            if apart >= enough:  # the parts' boxes alone rule out contact for long enough
                earliest = min(earliest, apart)
                continue
            gap = islands.gaps(a.lo, a.hi, a.xpos, a.radius, b.lo, b.hi, b.xpos, b.radius)
            closing = a.speed[:, None] + b.speed[None, :]
            across = islands.across_gravity_time((a.lo, a.hi, a.xpos, a.radius),
                                                 (b.lo, b.hi, b.xpos, b.radius), closing, down)
            t = np.maximum(islands.time_to_contact(gap, closing, gravity), across)
            exact = t.copy()
            t[ca.sphere[:, None] & cb.sphere[None, :]] = np.inf  # exact already: not refined
            order = np.argsort(t, axis=None)[:REFINE_MAX]
            best = min(earliest, enough)
            for i, j in zip(*np.unravel_index(order, t.shape)):
                if t[i, j] >= best:
                    break
                dist = mujoco.mj_geomDistance(m, probe, int(ca.ids[i]), int(cb.ids[j]), 1e3, None)
                gap[i, j] = max(gap[i, j], dist)
                exact[i, j] = max(across[i, j], islands.time_to_contact_scalar(
                    float(gap[i, j]), float(closing[i, j]), gravity))
                best = min(best, exact[i, j])
            t = exact
            earliest = min(earliest, float(t.min()))
            if earliest <= 0:
                for i, j in np.argwhere(gap <= 2 * islands.MIN_PAD):
                    touching.add((int(ca.unit[i]), int(cb.unit[j])))
        return earliest, frozenset(touching), rows

    def _schedule(self, ttc: np.ndarray) -> None:
        """Check again before units of two parts could touch (at most ``max_interval`` steps)."""
        if not self._parts:
            self._until_check = self.max_interval
            return
        part_of = self._part_index()
        cross = part_of[:, None] != part_of[None, :]
        earliest = float(ttc[cross].min()) if cross.any() else np.inf
        steps = np.floor(earliest / self._model.opt.timestep) - 1  # the bounds are a step old
        self._until_check = int(max(1, min(self.max_interval, steps)))

    def _part_index(self) -> np.ndarray:
        part_of = np.full(len(self._unit_names), -1, int)
        for k, p in enumerate(self._parts):
            part_of[list(p.units)] = k
        return part_of

    def _crosses(self, grps: list[frozenset[int]]) -> bool:
        """Does any group have units in more than one part."""
        part_of = self._part_index()
        return any(len({int(part_of[u]) for u in g}) > 1 for g in grps)

    def _regroup(self, forced: frozenset[tuple[int, int]] = frozenset(),
                 from_world: bool = False) -> None:
        """Regroup (from the parts' data, or the world's): rebuild the layout when units may
        meet across parts, when groups have parted and the parts are out of balance, or when
        the whole world stepping alone can be split; then schedule the next check."""
        parts = None if from_world or not self._parts else self._parts
        slack, ttc, centre = self._unit_geometry(parts)
        for a, b in forced:
            slack[a, b] = slack[b, a] = -np.inf
        grps = islands.groups(slack)
        usable = min(self.threads, len(grps))
        if not self._built:
            rebuild = True
        elif not self._parts:
            rebuild = usable > 1
        else:
            costs = np.array([self._unit_cost[list(p.units)].sum() for p in self._parts])
            rebuild = self._crosses(grps) or (usable > 1 and (
                len(self._parts) < usable or islands.imbalance(costs) > 1.5))
        if rebuild:
            self._gather()
            self._rebuild(grps, centre)
            if not from_world:
                self._copy_to_parts()
        self._built = True
        self._schedule(ttc)
        self._until_balance = BALANCE_INTERVAL

    def _rebuild(self, grps: list[frozenset[int]], centre: np.ndarray) -> None:
        """Deal the groups into parts and build them (models from the cache when possible); one
        part (or nothing dynamic) is the whole world, stepped in the caller's thread."""
        dealt = islands.deal(grps, self._unit_cost, centre, self.threads)
        self._room = 0
        self._parts = [self._part(units) for units in dealt] if len(dealt) > 1 else []
        self._ahead = False
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
