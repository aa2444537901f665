"""The hand's models of paper 003, Sec. 4.2: an in-hand model (standing in for in-hand
localisation [Pfanne & Chalon 2017]) and a grasp monitor, both reading the robot's
``sensor_msgs/JointState`` (finger positions and efforts).

* :class:`InHandModel` (a simulation): from the finger joints' positions and efforts it predicts
  where a grasped object is in the hand and, while it holds the object's pose, drives it. For a
  sphere it finds the centre whose distance to every pressing finger's phalanges is the sphere's
  radius plus the phalanx radius (Gauss-Newton on the forward kinematics of the arm's own model);
  for another object (the DIP) it keeps the pose relative to the palm that the object had when the
  model took it (a known grasp). Until two fingers press the object, the object stays where it
  was (the hand has not got it yet); once they stop pressing it moves with the palm as last
  predicted (the release trigger hands it back to the physics).
* :class:`GraspMonitor` (an observer): is anything grasped? At least ``min_fingers`` fingers
  whose proximal joint's effort exceeds ``effort_threshold``; emits ``grasped`` and ``released``.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import mujoco
import numpy as np

from ...simulator import poses as pose_math
from ...world_generators import ur5e_hand3 as arm
from ...world_generators.sdf_text import world
from ..errors import ModelError
from ..model import POSE, TWIST, Model, Observer, Requirement, RequirementKind, Stepping
from ..simulation_model import twist_between

EFFORT_THRESHOLD = 0.2  # N m on a proximal finger joint: the finger presses something
ROBOT = "arm"


def proximal_joints() -> list[str]:
    return [f"{f}_proximal_joint" for f in arm.FINGERS]


@lru_cache(maxsize=4)
def _arm_model(base: tuple[float, ...]) -> mujoco.MjModel:
    """The ``ur5e_hand3`` arm alone at ``base`` (compiled once per base pose)."""
    from ...simulator.engine import MujocoEngine

    rpy = pose_math.quat_to_rpy(np.array(base[3:7])) if len(base) == 7 else np.zeros(3)
    pose = " ".join(f"{v:.9g}" for v in (*base[:3], *rpy))
    include = (f"<include><uri>model://ur5e_hand3</uri><name>{ROBOT}</name>"
               f"<pose>{pose}</pose></include>")
    return MujocoEngine.from_string(world("hand_kinematics", include)).model


class HandKinematics:
    """Forward kinematics of the ``ur5e_hand3`` arm placed at ``base`` (7,): the palm's pose and
    the phalanges' axis segments for given joint positions."""

    def __init__(self, base: np.ndarray):
        self.model = m = _arm_model(tuple(float(v) for v in np.asarray(base, float)))
        self.data = mujoco.MjData(m)
        joints = [m.joint(f"{ROBOT}::{j}") for j in arm.joint_names()]
        self.qadr = np.array([j.qposadr[0] for j in joints])
        self.palm = m.body(f"{ROBOT}::palm").id
        self.phalanges = np.array([[m.body(f"{ROBOT}::{f}_{p}").id for p in ("proximal",
                                                                              "distal")]
                                   for f in arm.FINGERS])
        self.lengths = np.array([arm.PROXIMAL, arm.DISTAL])
        self.axis = arm.tool_frame()[1][:, 2]  # the approach axis in each link's frame

    def update(self, positions: np.ndarray) -> None:
        """Joint positions in :func:`ur5e_hand3.joint_names` order."""
        self.data.qpos[self.qadr] = positions
        mujoco.mj_kinematics(self.model, self.data)

    def palm_frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The palm's position, rotation matrix and quaternion (w x y z)."""
        d = self.data
        return d.xpos[self.palm].copy(), d.xmat[self.palm].reshape(3, 3).copy(), \
            d.xquat[self.palm].copy()

    def segments(self) -> tuple[np.ndarray, np.ndarray]:
        """Start points and end points (3 fingers, 2 phalanges, 3) of the phalanx axes."""
        d = self.data
        start = d.xpos[self.phalanges]
        rot = d.xmat[self.phalanges].reshape(3, 2, 3, 3)
        return start, start + (rot @ self.axis) * self.lengths[None, :, None]


def _in_frame(frame: tuple[np.ndarray, np.ndarray, np.ndarray], pose: np.ndarray
              ) -> np.ndarray:
    """``pose`` (x y z qx qy qz qw, world) in the frame (position, rotation, wxyz quaternion)."""
    p, r, q = frame
    inv, rel = np.zeros(4), np.zeros(4)
    mujoco.mju_negQuat(inv, q)
    mujoco.mju_mulQuat(rel, inv, pose_math.xyzw_to_wxyz(pose[3:7]))
    return np.r_[r.T @ (pose[:3] - p), pose_math.wxyz_to_xyzw(rel)]


def _from_frame(frame: tuple[np.ndarray, np.ndarray, np.ndarray], relative: np.ndarray
                ) -> np.ndarray:
    """The world pose of ``relative`` (a pose in the frame)."""
    p, r, q = frame
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, q, pose_math.xyzw_to_wxyz(relative[3:7]))
    return np.r_[p + r @ relative[:3], pose_math.wxyz_to_xyzw(out)]


def sphere_centre(starts: np.ndarray, ends: np.ndarray, distance: float, guess: np.ndarray,
                  prior: float = 0.05, iterations: int = 40, max_step: float = 0.005
                  ) -> np.ndarray:
    """The point equally far from the nearest of each finger's segments, about ``distance``
    (the sphere's radius plus the phalanx radius; the common distance is estimated too, since a
    squeezed contact sinks in). Gauss-Newton with steps of at most ``max_step``; ``prior``
    weights staying near ``guess`` and the nominal distance, which settles what two fingers
    leave free. ``starts``/``ends``: (fingers, segments, 3)."""
    c = np.asarray(guess, float).copy()
    d = float(distance)
    seg = ends - starts
    rows = np.arange(len(starts))
    for _ in range(iterations):
        t = np.clip(np.einsum("fsk,fsk->fs", c - starts, seg)
                    / np.einsum("fsk,fsk->fs", seg, seg), 0.0, 1.0)
        diff = c - (starts + t[..., None] * seg)
        dist = np.linalg.norm(diff, axis=-1)
        pick = dist.argmin(axis=1)
        near = dist[rows, pick]
        g = diff[rows, pick] / np.maximum(near, 1e-9)[:, None]
        jac = np.zeros((len(rows) + 4, 4))
        jac[:len(rows), :3], jac[:len(rows), 3] = g, -1.0
        jac[len(rows):, :] = prior * np.eye(4)
        res = np.r_[near - d, prior * (c - guess), prior * (d - distance)]
        delta = np.linalg.lstsq(jac, -res, rcond=None)[0]
        size = np.linalg.norm(delta[:3])
        if size > max_step:
            delta *= max_step / size
        c, d = c + delta[:3], d + delta[3]
        if size < 1e-6:
            break
    return c


class _Held:
    """What the in-hand model knows of one object it holds."""

    def __init__(self, pose: np.ndarray):
        self.pose = np.asarray(pose, float).copy()
        self.previous = self.pose.copy()
        self.relative: np.ndarray | None = None  # pose in the palm frame, once in the hand
        self.interval = 0.0  # s between ``previous`` and ``pose``


class InHandModel(Model):
    """Predicts and drives the pose of grasped objects from finger positions and efforts.

    Config parameters: ``objects`` (name -> ``{shape: sphere, radius: R}`` or ``{shape:
    rigid}``), ``effort_threshold`` (N m), ``min_fingers``; the robot's pose (``arm``) is resolved
    from the main simulation.
    """

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None):
        super().__init__(name, stepping=stepping, period=period)
        self.objects: dict[str, dict[str, Any]] = {}
        self.effort_threshold = EFFORT_THRESHOLD
        self.min_fingers = 2
        self.kinematics: HandKinematics | None = None
        self.fingers_pressing = 0
        self._joints: np.ndarray | None = None
        self._efforts = np.zeros(len(arm.FINGERS))
        self._held: dict[str, _Held] = {}
        self._fresh = False  # joint data arrived since the last prediction
        self._since = 0.0  # s since the last prediction

    def requires(self) -> Mapping[str, Requirement]:
        return {"robot_pose": Requirement(RequirementKind.POSE, ROBOT),
                "objects": Requirement(RequirementKind.VALUE, "objects"),
                "effort_threshold": Requirement(RequirementKind.VALUE, "effort_threshold",
                                                optional=True),
                "min_fingers": Requirement(RequirementKind.VALUE, "min_fingers", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        objects = parameters["objects"]
        if not isinstance(objects, Mapping) or not objects:
            raise ModelError(self.name, f"parameter 'objects' must map object names to "
                             f"{{shape: sphere, radius: R}} or {{shape: rigid}}; got {objects!r}")
        for obj, spec in objects.items():
            shape = (spec or {}).get("shape")
            if shape not in ("sphere", "rigid") or (shape == "sphere"
                                                    and not float(spec.get("radius", 0)) > 0):
                raise ModelError(self.name, f"objects.{obj}: shape must be 'sphere' (with a "
                                 f"positive radius) or 'rigid'; got {spec!r}")
        self.objects = {str(k): dict(v) for k, v in objects.items()}
        if parameters.get("effort_threshold") is not None:
            self.effort_threshold = float(parameters["effort_threshold"])
        if parameters.get("min_fingers") is not None:
            self.min_fingers = int(parameters["min_fingers"])
        self.kinematics = HandKinematics(parameters["robot_pose"])

    def represents(self) -> Mapping[str, frozenset[str]]:
        return {obj: frozenset((POSE, TWIST)) for obj in self.objects}

    # --- data --------------------------------------------------------------------------------
    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        joints = joint_vectors(message)
        if joints is not None:
            self._joints, self._efforts = joints
            self._fresh = True

    def _update(self, obj: str, held: _Held) -> None:
        palm = self.kinematics.palm_frame()
        pressing = self._efforts > self.effort_threshold
        spec = self.objects[obj]
        if spec["shape"] == "rigid":
            if held.relative is None:
                held.relative = _in_frame(palm, held.pose)
        elif pressing.sum() >= self.min_fingers:
            starts, ends = self.kinematics.segments()
            guess = (_from_frame(palm, held.relative)[:3] if held.relative is not None
                     else held.pose[:3])
            centre = sphere_centre(starts[pressing], ends[pressing],
                                   float(spec["radius"]) + arm.PHALANX_RADIUS, guess)
            held.relative = _in_frame(palm, np.r_[centre, held.pose[3:]])
        if held.relative is not None:
            held.pose = _from_frame(palm, held.relative)

    # --- time --------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Predicts anew when new joint data has arrived since the last step."""
        self._since += dt
        if not self._fresh:
            return
        self._fresh = False
        self.kinematics.update(self._joints)
        self.fingers_pressing = int((self._efforts > self.effort_threshold).sum())
        for obj, held in self._held.items():
            held.previous, held.interval = held.pose.copy(), self._since
            self._update(obj, held)
        self._since = 0.0

    # --- responsibility ----------------------------------------------------------------------
    def value(self, entity: str, attribute: str) -> Any:
        held = self._held.get(entity)
        if held is None or attribute not in (POSE, TWIST):
            return super().value(entity, attribute)
        if attribute == POSE:
            return held.pose.copy()
        if held.interval <= 0:
            return np.zeros(6)
        return twist_between(held.previous, held.pose, held.interval)

    def take(self, entity: str, attribute: str, value: Any) -> None:
        if attribute == POSE:
            self._held[entity] = _Held(value)

    def release(self, entity: str, attribute: str) -> None:
        if attribute == POSE:
            self._held.pop(entity, None)

    def output(self) -> Mapping[str, Any]:
        return {"poses": {o: h.pose.copy() for o, h in self._held.items()},
                "holding": sorted(self._held), "fingers_pressing": self.fingers_pressing}


def joint_vectors(message: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Joint positions (:func:`ur5e_hand3.joint_names` order) and the proximal finger joints'
    efforts of a JointState message, or None if it is not one (or lacks a joint)."""
    if "name" not in message or "position" not in message:
        return None
    index = {n: i for i, n in enumerate(message["name"])}
    names = arm.joint_names()
    if any(n not in index for n in names):
        return None
    rows = [index[n] for n in names]
    positions = np.asarray(message["position"], float)[rows]
    effort = np.asarray(message.get("effort", ()), float)
    fingers = [index[j] for j in proximal_joints()]
    efforts = effort[fingers] if effort.size == len(index) else np.zeros(len(fingers))
    return positions, efforts


class GraspMonitor(Observer):
    """Is anything grasped? Output ``{"grasped": bool, "fingers": n}``; events ``grasped`` and
    ``released`` when that changes. Parameters ``effort_threshold`` (N m), ``min_fingers``."""

    def __init__(self, name: str, *, stepping: Stepping = Stepping.SERVICE,
                 period: float | None = None):
        super().__init__(name, stepping=stepping, period=period)
        self.effort_threshold = EFFORT_THRESHOLD
        self.min_fingers = 2
        self.fingers = 0
        self.grasped = False
        self._efforts: np.ndarray | None = None

    def requires(self) -> Mapping[str, Requirement]:
        return {"effort_threshold": Requirement(RequirementKind.VALUE, "effort_threshold",
                                                optional=True),
                "min_fingers": Requirement(RequirementKind.VALUE, "min_fingers", optional=True)}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        if parameters.get("effort_threshold") is not None:
            self.effort_threshold = float(parameters["effort_threshold"])
        if parameters.get("min_fingers") is not None:
            self.min_fingers = int(parameters["min_fingers"])

    def input(self, topic: str, message: Mapping[str, Any]) -> None:
        joints = joint_vectors(message)
        if joints is not None:
            self._efforts = joints[1]

    def step(self, dt: float) -> None:
        if self._efforts is None:
            return
        self.fingers = int((self._efforts > self.effort_threshold).sum())
        grasped = self.fingers >= self.min_fingers
        if grasped != self.grasped:
            self.emit("grasped" if grasped else "released", {"fingers": self.fingers})
        self.grasped = grasped

    def output(self) -> Mapping[str, Any]:
        return {"grasped": self.grasped, "fingers": self.fingers}

