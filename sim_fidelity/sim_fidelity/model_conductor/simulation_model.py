"""Any :class:`~sim_fidelity.simulator.protocol.Simulator` as a simulation of an ensemble.

The model represents ``pose``, ``twist`` and ``collision`` of the top-level, non-static models of
its world (optionally only those matching a pattern). How it honours the allocation:

* holding ``pose``: the body is simulated (DYNAMICS lever on);
* following ``pose``: the body is not integrated (DYNAMICS lever off: kinematic, still colliding
  while this model holds ``collision``) and is set to the holder's pose at every :meth:`follow`.
  Its velocity is estimated from successive followed poses unless the holder's ``twist`` is
  followed too;
* taking ``pose`` back: DYNAMICS on, continuing from the given pose with the last velocity;
* not holding ``collision``: COLLISION lever off (the holder's geometry makes the contacts).

The states of the represented entities are read from the simulator once per step (one
``get_states`` for every pose, twist and the output) and kept until the model's time or state
changes through it.

It also drives the simulated robot from the data source: ``sensor_msgs/JointState`` positions go
to the world's joint position controllers (``set_joint_commands``), matched by joint name or by a
``joints`` mapping (JointState name -> controller plugin).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..simulator import poses as pose_math
from ..simulator.protocol import EntityKind, Lever, Simulator
from .errors import ModelError
from .model import COLLISION, POSE, TWIST, Model, Requirement, RequirementKind, Stepping

SOLVERS = ("PGS", "CG", "Newton")  # the config's names of MuJoCo's constraint solvers


def twist_between(a: np.ndarray, b: np.ndarray, dt: float) -> np.ndarray:
    """The constant world twist ``(6,)`` that moves pose ``a`` to pose ``b`` in ``dt``."""
    v = (b[:3] - a[:3]) / dt
    dq = pose_math.quat_mul(b[3:], pose_math.quat_conj(a[3:]))
    if dq[3] < 0:
        dq = -dq
    s = np.linalg.norm(dq[:3])
    angle = 2.0 * np.arctan2(s, dq[3])
    w = dq[:3] / s * angle / dt if s > 0 else np.zeros(3)
    return np.concatenate([v, w])


class SimulatorModel(Model):
    """A simulator (in-process :class:`~sim_fidelity.simulator.engine.MujocoEngine` or a
    :class:`~sim_fidelity.simulator.ros.client.RosSimulator`) as a model.

    Given no ``simulator``, it needs the config parameter ``world`` (an SDF file) and loads it in
    an in-process engine at initialisation (optional parameters: ``step_size``, ``entities``, a
    regex of the models it represents, ``joints``, and what SDF cannot state: MuJoCo's constraint
    ``solver`` (one of :data:`SOLVERS`), its ``tolerance`` and ``midphase``, false to test every
    geom pair of two bodies whose bounding boxes overlap instead of walking their geoms' bounding
    volume trees).
    """

    def __init__(self, name: str, simulator: Simulator | None = None, *,
                 stepping: Stepping = Stepping.SERVICE, period: float | None = None,
                 entities: str | None = None, joints: Mapping[str, str] | None = None):
        super().__init__(name, stepping=stepping, period=period)
        self.sim = simulator
        self._pattern = entities
        self._joints = dict(joints) if joints else None
        self._entities: list[str] = []
        self._following: dict[str, tuple[float, np.ndarray]] = {}  # entity -> last followed
        self._twist: dict[str, np.ndarray] = {}  # entity -> velocity while its pose is followed
        self._twist_followed: set[str] = set()
        self._controllers: dict[str, str] | None = None  # JointState name -> controller plugin
        self._rows: dict[str, int] = {}  # entity -> its row in the read states
        self._read: tuple[float, np.ndarray, np.ndarray] | None = None  # time, poses, twists
        self._lowered: set[tuple[str, Lever]] = set()  # levers release() switched off
        if simulator is not None:
            self._index()

    # --- initialisation ----------------------------------------------------------------------
    def requires(self) -> Mapping[str, Requirement]:
        if self.sim is not None:
            return {}
        return {"world": Requirement(RequirementKind.PATH, "world"),
                "step_size": Requirement(RequirementKind.VALUE, "step_size", optional=True),
                "entities": Requirement(RequirementKind.VALUE, "entities", optional=True),
                "joints": Requirement(RequirementKind.VALUE, "joints", optional=True),
                "solver": Requirement(RequirementKind.VALUE, "solver", optional=True),
                "tolerance": Requirement(RequirementKind.VALUE, "tolerance", optional=True),
                "midphase": Requirement(RequirementKind.VALUE, "midphase", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        if self.sim is not None:
            return
        from ..simulator.engine import MujocoEngine

        world = Path(parameters["world"])
        if not world.is_file():
            raise ModelError(self.name, f"world file '{world}' does not exist")
        step = parameters.get("step_size")
        self.sim = MujocoEngine.from_file(world, step_size=float(step) if step else None)
        self._solver_options(parameters.get("solver"), parameters.get("tolerance"),
                             parameters.get("midphase"))
        if parameters.get("entities"):
            self._pattern = str(parameters["entities"])
        if parameters.get("joints"):
            joints = parameters["joints"]
            if not isinstance(joints, Mapping):
                raise ModelError(self.name, "parameter 'joints' must map JointState names to "
                                 f"controller plugins; got {joints!r}")
            self._joints = {str(k): str(v) for k, v in joints.items()}
        self._index()

    def _solver_options(self, solver: Any, tolerance: Any, midphase: Any) -> None:
        """MuJoCo's constraint solver, its tolerance and the collision midphase from the config
        (None: the engine's)."""
        import mujoco

        options = self.sim.model.opt
        if solver is not None:
            if str(solver) not in SOLVERS:
                raise ModelError(self.name, f"parameter 'solver' must be one of "
                                 f"{', '.join(SOLVERS)}; got {solver!r}")
            options.solver = getattr(mujoco.mjtSolver, f"mjSOL_{str(solver).upper()}")
        if tolerance is not None:
            try:
                value = float(tolerance)
            except (TypeError, ValueError):
                value = -1.0
            if not 0 <= value < 1:
                raise ModelError(self.name, "parameter 'tolerance' must be a number in [0, 1) "
                                 f"(MuJoCo's relative-improvement stop); got {tolerance!r}")
            options.tolerance = value
        if midphase is not None:
            if not isinstance(midphase, bool):
                raise ModelError(self.name, "parameter 'midphase' must be true or false; got "
                                 f"{midphase!r}")
            flag = int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)
            options.disableflags = (options.disableflags & ~flag) | (0 if midphase else flag)

    def _index(self) -> None:
        sim = self.sim
        try:
            rx = re.compile(self._pattern) if self._pattern else None
        except re.error as e:
            raise ModelError(self.name, f"entities pattern {self._pattern!r}: {e}") from None
        self._entities = [n for n in sim.entities(EntityKind.MODEL)
                          if not (info := sim.entity_info(n)).parent and not info.static
                          and (rx is None or rx.search(n))]
        self._rows = {n: i for i, n in enumerate(self._entities)}
        self._read = None

    def _states(self) -> tuple[np.ndarray, np.ndarray]:
        """Poses and twists of every represented entity, read once per simulated time (every
        change of state through this model clears them)."""
        now = self.sim.time
        if self._read is None or self._read[0] != now:
            self._read = (now, *self.sim.get_states(self._entities))
        return self._read[1], self._read[2]

    # --- time --------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        self._read = None
        self.sim.step(max(1, int(round(dt / self.sim.step_size))))

    @property
    def time(self) -> float:
        return self.sim.time

    # --- responsibility ----------------------------------------------------------------------
    def represents(self) -> Mapping[str, frozenset[str]]:
        attributes = frozenset((POSE, TWIST, COLLISION))
        return {e: attributes for e in self._entities}

    def value(self, entity: str, attribute: str) -> Any:
        """Also the pose or twist of any other model or link of the world (read only)."""
        if entity not in self._entities and attribute in (POSE, TWIST):
            pose, twist = self.sim.get_states([entity])  # UnknownEntityError is a KeyError
            return pose[0] if attribute == POSE else twist[0]
        self._check(entity, attribute)
        if attribute == COLLISION:
            return bool(self.sim.get_lever([entity], Lever.COLLISION)[0])
        if attribute == TWIST and entity in self._following:
            return self._twist[entity].copy()
        poses, twists = self._states()
        return (poses if attribute == POSE else twists)[self._rows[entity]].copy()

    def follow(self, entity: str, attribute: str, value: Any) -> None:
        self.follow_all([(entity, attribute, value)])

    def follow_all(self, values: Sequence[tuple[str, str, Any]]) -> None:
        """Followed twists are kept; followed poses are set together, with one ``set_states``."""
        names, poses = [], []
        now = self.sim.time
        for entity, attribute, value in values:
            if attribute == POSE:
                pose = np.array(value, float)
                last = self._following.get(entity)
                if last is not None and now > last[0] and entity not in self._twist_followed:
                    self._twist[entity] = twist_between(last[1], pose, now - last[0])
                self._following[entity] = (now, pose)
                names.append(entity)
                poses.append(pose)
            elif attribute == TWIST:
                self._twist[entity] = np.array(value, float)
                self._twist_followed.add(entity)
        if names:
            self.sim.set_states(names, np.array(poses))
            self._read = None

    def take(self, entity: str, attribute: str, value: Any) -> None:
        self._check(entity, attribute)
        if attribute == POSE:
            pose = np.asarray(value, float)
            following = entity in self._following
            twist = self.value(entity, TWIST)
            self._following.pop(entity, None)
            self._twist.pop(entity, None)
            self.sim.set_lever([entity], Lever.DYNAMICS, True)
            self._lowered.discard((entity, Lever.DYNAMICS))
            if following or not np.allclose(pose, self.sim.get_states([entity])[0][0],
                                             rtol=0, atol=1e-12):
                # (a robot welded to the world can only keep its own pose)
                self.sim.set_states([entity], pose[None], twist[None])
        elif attribute == TWIST:
            self._twist_followed.discard(entity)
            twist = np.asarray(value, float)
            if entity in self._following:
                self._twist[entity] = twist.copy()
            elif not np.allclose(twist, self.sim.get_states([entity])[1][0], rtol=0, atol=1e-12):
                self.sim.set_states([entity], twists=twist[None])
        elif attribute == COLLISION:
            self.sim.set_lever([entity], Lever.COLLISION, True)
            self._lowered.discard((entity, Lever.COLLISION))
        self._read = None

    def release(self, entity: str, attribute: str) -> None:
        self._check(entity, attribute)
        if attribute == POSE:
            pose, twist = self.sim.get_states([entity])
            self._following[entity] = (self.sim.time, pose[0])
            self._twist[entity] = twist[0]
            self._lowered.add((entity, Lever.DYNAMICS))  # before the call: it may land and fail
            self.sim.set_lever([entity], Lever.DYNAMICS, False)
        elif attribute == TWIST:
            self._twist_followed.add(entity)
        elif attribute == COLLISION:
            self._lowered.add((entity, Lever.COLLISION))
            self.sim.set_lever([entity], Lever.COLLISION, False)
        self._read = None

    def stop(self) -> None:
        """Switch back on every lever :meth:`release` switched off (``_lowered``; subclasses add
        theirs): a simulator shared with others (a sim_server) is left as the run found it."""
        for lever in sorted({v for _, v in self._lowered}):
            self.sim.set_lever(sorted(e for e, v in self._lowered if v == lever), lever, True)
        self._lowered.clear()

    def _check(self, entity: str, attribute: str) -> None:
        if entity not in self._entities or attribute not in (POSE, TWIST, COLLISION):
            raise KeyError(f"{self.name} does not represent {attribute} of {entity}")

    # --- communication -----------------------------------------------------------------------
    def output(self) -> Mapping[str, Any]:
        poses, twists = self._states()
        held = [(e, i) for e, i in self._rows.items() if e not in self._following]
        return {"poses": {e: poses[i].copy() for e, i in held},
                "twists": {e: twists[i].copy() for e, i in held}, "time": self.sim.time}

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        if "name" not in message or "position" not in message:
            return
        names = list(message["name"])
        positions = np.asarray(message["position"], float)
        if len(positions) != len(names):
            return  # a JointState without positions (velocity or effort only)
        controllers = self._joint_controllers()
        pairs = [(controllers[n], p) for n, p in zip(names, positions) if n in controllers]
        if pairs:
            plugins, values = zip(*pairs)
            self.sim.set_joint_commands(list(plugins), list(values))

    def _joint_controllers(self) -> dict[str, str]:
        """JointState joint name -> position-controller plugin (from ``joints`` or by name)."""
        if self._controllers is not None:
            return self._controllers
        records = getattr(self.sim, "controllers", None)
        if records is None:
            if self._joints:
                raise ModelError(self.name, f"{type(self.sim).__name__} takes no joint commands")
            self._controllers = {}
            return self._controllers
        if self._joints:
            unknown = sorted(set(self._joints.values()) - set(records))
            if unknown:
                raise ModelError(self.name, f"joints mapping names no controller plugin: "
                                 f"{', '.join(unknown)} (plugins: {', '.join(sorted(records))})")
            self._controllers = dict(self._joints)
        else:
            self._controllers = {}
            for plugin, record in records.items():
                if record.mode == "position":
                    self._controllers.setdefault(record.joint, plugin)
                    self._controllers.setdefault(record.joint.rsplit("::", 1)[-1], plugin)
        return self._controllers
