"""Replaying a recording through one method (the ensemble or a baseline) and reading the symbolic
outcome from what it simulated (paper 003, Sec. 4.3-4.4).

Every method runs through the :class:`Conductor` with the recording as its data source
(:class:`RecordedSource`): the main simulation is built from the sidecar's scene, the robot posed
at the recording's first joint positions; the arm's recorded positions drive its position servos,
the fingers are driven by their recorded efforts (torques) or positions (:mod:`.drive`), the same
for every method. The ensemble's and baselines' YAML files are in
``config/conductor/scenario_*.yaml``.
"""
from __future__ import annotations

import time as _time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from ...data import data_dir
from ...simulator.engine import MujocoEngine
from ...world_generators import conductor_scenarios as cs
from ...world_generators import ur5e_hand3 as arm
from ..conductor import Conductor
from ..config import load_config
from ..data_sources import RecordedSource
from ..errors import ModelError
from ..responsibility import Transfer
from ..simulation_model import SimulatorModel
from . import DEFAULT_FINGER_DRIVE
from .baselines import BindingWorld, binding_engine
from .drive import ReplayWorld, check_finger_drive
from .insertion import CONNECT
from .predicates import ball_in_container, within_cylinder
from .recording import ROBOT, connection_point

METHODS = ("ensemble", "baseline_1", "baseline_2", "baseline_3")
OBJECT = {"grasp_drop": "ball", "insertion": "dip"}
MAX_SPEED = 6.0  # m/s: faster than anything falls here: the physics blew up


def config_path(method: str, kind: str) -> Path:
    """The YAML file of a method (the ensemble has one per scenario)."""
    if method not in METHODS:
        raise ValueError(f"unknown method '{method}' (methods: {', '.join(METHODS)})")
    name = (f"scenario_ensemble_{'grasp' if kind == 'grasp_drop' else 'insertion'}.yaml"
            if method == "ensemble" else f"scenario_{method}.yaml")
    return data_dir("config") / "conductor" / name


def pose_robot(engine: MujocoEngine, positions: np.ndarray) -> None:
    """Put the arm at ``positions`` (:func:`ur5e_hand3.joint_names` order), at rest, with its
    servos' targets there."""
    m, d = engine.model, engine.data
    qadr, dadr = engine.index.joint_addresses(m, [f"{ROBOT}::{j}" for j in arm.joint_names()])
    actuators = [engine.index.actuator_id[f"{ROBOT}::{c}"] for c in arm.controller_names()]
    d.qpos[qadr] = positions
    d.qvel[dadr] = 0.0
    d.ctrl[actuators] = positions
    mujoco.mj_forward(m, d)


class Tracker:
    """A conductor listener keeping the tracked object's pose (from whichever model holds it) and
    the transfers."""

    def __init__(self, entity: str):
        self.entity = entity
        self.poses: dict[float, np.ndarray] = {}
        self.transfers: list[Transfer] = []

    def on_output(self, time: float, model: str, model_id: int,
                  output: Mapping[str, Any]) -> None:
        pose = (output.get("poses") or {}).get(self.entity)
        if pose is not None:
            self.poses[round(time, 9)] = np.asarray(pose, float)

    def on_transfer(self, transfer: Transfer) -> None:
        self.transfers.append(transfer)

    def on_event(self, time: float, model: str, event: str, data: Mapping[str, Any]) -> None:
        """Events are not needed: the transfers they cause are."""

    def trajectory(self) -> tuple[np.ndarray, np.ndarray]:
        times = np.array(sorted(self.poses))
        return times, (np.array([self.poses[t][:3] for t in times]) if len(times)
                       else np.zeros((0, 3)))


@dataclass
class ReplayResult:
    execution: str
    kind: str
    variant: str
    method: str
    finger_drive: str
    label: bool
    predicted: bool | None  # None: the replay did not finish (the physics blew up)
    outcome: str  # one word or two: what the method simulated
    real_time_factor: float
    sim_time: float
    wall: float
    transfers: list[dict[str, Any]] = field(default_factory=list)
    bindings: list[tuple[float, str, str]] = field(default_factory=list)
    error: str | None = None
    times: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)), repr=False)

    @property
    def correct(self) -> bool:
        return self.predicted is not None and self.predicted == self.label

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("times")
        out.pop("positions")
        out["correct"] = self.correct
        return out


def build_world(method: str, scene: Mapping[str, Any], obj: str,
                finger_drive: str = DEFAULT_FINGER_DRIVE) -> SimulatorModel:
    """The main simulation of a method (with the palm welds for baselines 2 and 3)."""
    if method in ("baseline_2", "baseline_3"):
        return BindingWorld("world", binding_engine(scene, [obj]), finger_drive=finger_drive)
    return ReplayWorld("world", MujocoEngine.from_string(cs.scenario_world_sdf("scenario", scene)),
                       finger_drive=finger_drive)


def prepare(folder: str | Path, sidecar: Mapping[str, Any], method: str,
            finger_drive: str = DEFAULT_FINGER_DRIVE
            ) -> tuple[Conductor, SimulatorModel, RecordedSource, Tracker]:
    """The conductor of a method, initialised for a recording, its main simulation, the
    recording as a data source and a tracker of the scenario's object (listening)."""
    kind = sidecar["kind"]
    obj = OBJECT[kind]
    world = build_world(method, sidecar["scene"], obj, check_finger_drive(finger_drive))
    pose_robot(world.sim, np.asarray(sidecar["initial_joints"]["position"], float))
    config = load_config(config_path(method, kind))
    conductor = config.build({"world": world})
    config.initialise(conductor)
    tracker = Tracker(obj)
    conductor.add_listener(tracker)
    return conductor, world, RecordedSource(Path(folder) / sidecar["bag"]), tracker


def replay(folder: str | Path, sidecar: Mapping[str, Any], method: str,
           finger_drive: str = DEFAULT_FINGER_DRIVE) -> ReplayResult:
    """Replay one recording (its sidecar's content; the bag in ``folder``) through a method,
    the fingers driven by ``finger_drive`` (:data:`.drive.FINGER_DRIVES`)."""
    kind = sidecar["kind"]
    obj = OBJECT[kind]
    scene = sidecar["scene"]
    conductor, world, source, tracker = prepare(folder, sidecar, method, finger_drive)
    error = None
    wall0 = _time.perf_counter()
    try:
        report = conductor.run(source=source)
        sim_time, wall = report.time, report.wall
    except ModelError as e:  # a diverged physics stops the run
        error = str(e)
        sim_time, wall = conductor.time, _time.perf_counter() - wall0
    times, positions = tracker.trajectory()
    final = conductor.pose(obj)
    if kind == "grasp_drop":
        c = scene["container"]
        predicted = ball_in_container(final, c["type"], np.asarray(c["pose"], float))
    elif method == "ensemble":
        predicted = bool(conductor.output("connector")["connected"])
    else:
        predicted = within_cylinder(final, conductor.pose("spu"), *CONNECT)
    if error is not None:
        predicted = None
    result = ReplayResult(
        sidecar["name"], kind, sidecar["variant"], method, finger_drive,
        bool(sidecar["label"]["value"]),
        predicted, "", sim_time / wall if wall > 0 else float("inf"), sim_time, wall,
        [{"time": round(t.time, 4), "entity": t.entity, "attribute": t.attribute,
          "from": t.from_model, "to": t.to_model, "cause": t.cause}
         for t in tracker.transfers if t.from_model],
        list(getattr(world, "bindings", [])), error, times, positions)
    opened = next((m.time for m in source.messages
                   if m.kind == "action" and m.data["operation"] == "open_hand"), None)
    result.outcome = outcome(result, sidecar, opened)
    return result


def outcome(result: ReplayResult, sidecar: Mapping[str, Any], opened: float | None) -> str:
    """What the method simulated, in a word or two (the failure mode when it is wrong);
    ``opened``: the time of the recording's ``open_hand`` annotation."""
    t, p = result.times, result.positions
    if result.error is not None:
        return "unstable"
    if len(t) > 1:
        speed = np.linalg.norm(np.diff(p, axis=0), axis=1) / np.diff(t)
        if speed.max() > MAX_SPEED:
            return "unstable"
    if result.predicted:
        return "in container" if result.kind == "grasp_drop" else "connected"
    start = p[0] if len(p) else np.zeros(3)
    if result.kind == "grasp_drop":
        if len(p) == 0 or p[:, 2].max() < start[2] + 0.04:
            moved = len(p) and np.linalg.norm(p[-1, :2] - start[:2]) > 0.03
            return "rolled out" if moved else "not grasped"
        k = min(int(np.searchsorted(t, opened if opened is not None else t[-1])), len(t) - 1)
        low = p[k, 2] < float(sidecar["plan"]["release"][2]) - 0.05
        return "dropped early" if low else "missed"
    expected = connection_point(np.asarray(sidecar["scene"]["spu"]["pose"], float))[2]
    if len(p) and p[-1, 2] < expected - 0.05:
        return "fell out"
    return "jammed"

