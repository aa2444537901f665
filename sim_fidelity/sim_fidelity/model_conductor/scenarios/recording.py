"""Recordings of the Table 2 executions: what the robot publishes while it carries out a plan.

Each execution (:mod:`.plan`) becomes a motion: Cartesian key points of the hand's grasp point
turned into arm joint targets by damped-least-squares IK on the arm's own MuJoCo model, finger
targets that open and close, and the action annotations (``move_arm``, ``move_hand``,
``close_hand``, ``open_hand`` with arguments) at the start of each operation. A controller then
*executes* it on the embedded engine (the "real" robot): the position servos of the
``ur5e_hand3`` arm track the targets plus a smooth random deviation (the tracking noise of a
compliant controller), the fingers close on the real object. What is recorded is what the robot
measures: joint positions (plus sensor noise) and joint efforts (the servos' torques) of arm and
fingers, at :data:`RATE` Hz on ``/joint_states`` (``sensor_msgs/JointState``), and the
annotations on ``/action_sequence`` (``sim_fidelity_interfaces/ActionAnnotation``).

The "real" world differs from the simulations that replay it in one respect, on purpose: finger
contacts are soft patches (MuJoCo ``condim`` 6 with rubber's torsional and rolling friction on
the fingers' and the objects' geoms), as a rubber fingertip on a ball is, where the replays'
worlds keep the SDF's point contacts with Coulomb friction (what Gazebo's ODE gives). The
insertion's real world holds no SPU: the compliant controller's correction within the capture
tolerance is part of the plan (the probe is guided into the real socket), and the contact forces
of the insertion itself are not in the recording.

Files per execution in the output folder: ``NAME/`` (the bag, MCAP) and ``NAME.yaml`` (the
sidecar: scene as the replays get it, the robot's initial joint positions, the label, the plan,
and what happened in the "real" world, for reference only).
"""
from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import yaml

from ...simulator.protocol import Lever
from ...world_generators import conductor_scenarios as cs
from ...world_generators import ur5e_hand3 as arm
from ...world_generators.conductor_motion import ArmIK
from ..data_sources import DataMessage, action, joint_state, write_recording
from ..errors import ConductorError
from .plan import Execution, plan_executions
from .predicates import ball_in_container

RATE = 100.0  # Hz: the robot's telemetry rate
ROBOT = "arm"
JOINT_TOPIC, ACTION_TOPIC = "/joint_states", "/action_sequence"
FINGER_CLOSED = (0.75, 0.9)  # rad: proximal, distal targets (past contact: the hand squeezes)
HOME = np.array([-0.05, -0.02, 1.02])  # the grasp point's home position
APPROACH = np.array([0.0, 0.12, 0.03])  # pre-grasp offset of the grasp point
GRASP_GAP = 0.006  # m between the palm and the object
TRACKING_SIGMA, TRACKING_TAU = 5e-4, 0.15  # rad, s: the controller's smooth tracking deviation
POSITION_NOISE, EFFORT_NOISE = 2e-4, 0.01  # rad, N m: sensor noise
SOFT_TORSION, SOFT_ROLLING = 0.02, 0.002  # the real fingers' patch friction (m)
SIDECAR_KEYS = ("name", "kind", "variant", "scene", "label", "plan", "bag", "initial_joints",
                "duration")
INSERT_START = np.array([-0.12, -0.12, 1.02])
IK_SEED = np.array([1.0, -1.2, 2.6, -1.4, 1.0, 0.0])  # elbow up, the hand toward -y


def open_fingers() -> np.ndarray:
    return np.tile([arm.FINGER_OPEN, 0.0], 3)


def closed_fingers() -> np.ndarray:
    return np.tile(FINGER_CLOSED, 3)


@dataclass
class Segment:
    """One piece of a motion: ``duration`` s moving the grasp point in a line to ``point`` and
    the finger targets to ``fingers``; ``operation`` (with ``args``) is annotated at its start."""

    duration: float
    point: np.ndarray
    fingers: np.ndarray
    operation: str | None = None
    args: dict[str, str] = field(default_factory=dict)


@dataclass
class Motion:
    times: np.ndarray  # (n,) s
    targets: np.ndarray  # (n, 12) joint targets, arm.joint_names() order
    annotations: list[tuple[float, str, dict[str, str]]]


def _smooth(s: np.ndarray) -> np.ndarray:
    s = np.clip(s, 0.0, 1.0)
    return s * s * (3 - 2 * s)


def grasp_segments(ex: Execution) -> tuple[np.ndarray, list[Segment]]:
    """Start point and segments of a grasp-and-drop execution."""
    ball = np.array(ex.scene["ball"]["pose"][:3])
    release = np.array(ex.plan["release"])
    lifted = np.r_[ball[:2], release[2]]
    if ex.variant == "early":
        release = lifted + ex.plan["early_fraction"] * (release - lifted)
    o, c = open_fingers(), closed_fingers()
    hand = {"hand": ROBOT}
    return HOME, [
        Segment(1.5, ball + APPROACH, o, "move_arm", {"target": "stand"}),
        Segment(1.0, ball, o, "move_hand", hand),
        Segment(0.7, ball, c, "close_hand", hand),
        Segment(1.0, lifted, c, "move_arm", {"target": "container"}),
        Segment(1.5, release, c),
        Segment(0.5, release, o, "open_hand", hand),
        Segment(1.0, release + [0, 0, 0.06], o, "move_arm", {"target": "home"}),
        Segment(0.8, release + [0, 0, 0.06], o)]


def connection_point(spu_position: np.ndarray) -> np.ndarray:
    """Where the DIP's frame (the grasp point) is when fully inserted into an SPU there."""
    return np.asarray(spu_position[:3], float) + cs.spu_connection_offset()


def insertion_segments(ex: Execution, held: np.ndarray | None = None
                       ) -> tuple[np.ndarray, list[Segment]]:
    """Start point and segments of an insertion (the hand holds the DIP at the start, its frame
    ``held`` from the grasp point: the robot moves the DIP, not its hand, to the socket)."""
    held = np.zeros(3) if held is None else held
    believed = connection_point(np.array(ex.scene["spu"]["pose"][:3])) - held
    if ex.label["value"]:  # guided into the real socket
        final = connection_point(np.array(ex.plan["true_spu"])) - held
    else:  # stops on the SPU's top face at the believed position
        final = believed + [0.0, 0.0, cs.SOCKET_DEPTH]
    c, o = closed_fingers(), open_fingers()
    hand = {"hand": ROBOT}
    above = believed + [0.0, 0.0, 0.10]
    return INSERT_START, [
        Segment(0.4, INSERT_START, c, "close_hand", hand),
        Segment(1.5, above, c, "move_arm", {"target": "spu"}),
        Segment(1.2, final, c, "move_hand", {**hand, "target": "spu"}),
        Segment(0.5, final, o, "open_hand", hand),
        Segment(1.0, final + [0, 0, 0.10], o, "move_arm", {"target": "home"}),
        Segment(0.5, final + [0, 0, 0.10], o)]


class HandIK:
    """IK of the grasp point for an object of a given radius (the arm's own MuJoCo model)."""

    def __init__(self) -> None:
        self.ik = ArmIK()

    def solve(self, point: np.ndarray, radius: float, seed: np.ndarray) -> np.ndarray:
        reach = arm.COUPLING[1] + arm.PALM_DEPTH + GRASP_GAP + radius
        self.ik.local = reach * self.ik.approach
        return self.ik.solve(np.asarray(point, float), 0.0, seed)


def plan_motion(start: np.ndarray, segments: Sequence[Segment], radius: float, ik: HandIK,
                first_fingers: np.ndarray) -> Motion:
    """Joint targets at RATE along the segments (straight lines, smoothstep timing)."""
    q = ik.solve(start, radius, IK_SEED)
    rows, annotations = [np.r_[q, first_fingers]], []
    point, fingers, t = np.asarray(start, float), first_fingers, 0.0
    for seg in segments:
        if seg.operation:
            annotations.append((round(t, 6), seg.operation, dict(seg.args)))
        n = int(round(seg.duration * RATE))
        s = _smooth(np.arange(1, n + 1) / n)
        for sk in s:
            q = ik.solve(point + sk * (seg.point - point), radius, q)
            rows.append(np.r_[q, fingers + sk * (seg.fingers - fingers)])
        point, fingers, t = np.asarray(seg.point, float), seg.fingers, t + n / RATE
    targets = np.array(rows)
    return Motion(np.arange(len(targets)) / RATE, targets, annotations)


class RealRobot:
    """The "real" execution: the arm's servos track the targets in the embedded engine."""

    def __init__(self, scene: dict[str, dict[str, Any]], grasped: Sequence[str]):
        from ...simulator.engine import MujocoEngine

        self.engine = MujocoEngine.from_string(cs.scenario_world_sdf("real", scene))
        e, m = self.engine, self.engine.model
        self.joints = [f"{ROBOT}::{j}" for j in arm.joint_names()]
        self.qadr, self.dadr = e.index.joint_addresses(m, self.joints)
        self.actuators = [e.index.actuator_id[f"{ROBOT}::{c}"] for c in arm.controller_names()]
        soft = [m.body(f"{ROBOT}::{f}_{p}").id for f in arm.FINGERS
                for p in ("proximal", "distal")]
        soft += [m.body(f"{obj}::link").id for obj in grasped]
        geoms = np.flatnonzero(np.isin(m.geom_bodyid, soft) & e.index.collision_geom)
        m.geom_condim[geoms] = 6
        m.geom_friction[geoms, 1] = SOFT_TORSION
        m.geom_friction[geoms, 2] = SOFT_ROLLING

    def pose_robot(self, q: np.ndarray) -> None:
        d = self.engine.data
        d.qpos[self.qadr] = q
        d.qvel[self.dadr] = 0.0
        d.ctrl[self.actuators] = q
        mujoco.mj_forward(self.engine.model, d)

    def command(self, q: np.ndarray) -> None:
        self.engine.data.ctrl[self.actuators] = q

    def measure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = self.engine.data
        return (d.qpos[self.qadr].copy(), d.qvel[self.dadr].copy(),
                d.actuator_force[self.actuators].copy())


def _tracking_noise(n: int, joints: int, rng: np.random.Generator) -> np.ndarray:
    """A smooth random deviation (first-order filtered white noise, stationary std
    TRACKING_SIGMA) of the arm's joints; the fingers track exactly."""
    a = np.exp(-1.0 / (RATE * TRACKING_TAU))
    white = rng.normal(0.0, TRACKING_SIGMA * np.sqrt(1 - a * a), (n, joints))
    out = np.zeros((n, joints))
    out[0] = rng.normal(0.0, TRACKING_SIGMA, joints)
    for k in range(1, n):
        out[k] = a * out[k - 1] + white[k]
    return out


def execute(robot: RealRobot, motion: Motion, rng: np.random.Generator
            ) -> tuple[list[DataMessage], np.ndarray]:
    """Run the motion on the real robot; the recorded messages and the measured positions."""
    steps = int(round(1.0 / (RATE * robot.engine.step_size)))
    deviation = _tracking_noise(len(motion.times), 6, rng)
    names = arm.joint_names()
    messages, measured = [], []
    for k, t in enumerate(motion.times):
        if k:
            target = motion.targets[k].copy()
            target[:6] += deviation[k]
            robot.command(target)
            robot.engine.step(steps)
        q, v, effort = robot.measure()
        q_meas = q + rng.normal(0.0, POSITION_NOISE, q.size)
        messages.append(joint_state(float(t), names, q_meas, v,
                                    effort + rng.normal(0.0, EFFORT_NOISE, effort.size),
                                    JOINT_TOPIC))
        measured.append(q_meas)
    messages += [action(t, op, args, ACTION_TOPIC) for t, op, args in motion.annotations]
    return messages, np.array(measured)


def settle_grasp(robot: RealRobot, q_open: np.ndarray, obj: str, position: np.ndarray) -> None:
    """Before an insertion's recording: the hand closes on the DIP placed in it (gravity off
    while the fingers close, then on for the grasp to settle)."""
    e = robot.engine
    robot.pose_robot(q_open)
    e.set_states([obj], np.r_[position, 0.0, 0.0, 0.0, 1.0][None])
    e.set_lever([obj], Lever.GRAVITY, False)
    robot.command(np.r_[q_open[:6], closed_fingers()])
    e.run_for(0.6)
    e.set_lever([obj], Lever.GRAVITY, True)
    e.run_for(0.4)


def record_execution(ex: Execution, out: Path, seed: int, ik: HandIK) -> dict[str, Any]:
    """Execute one planned execution and write its bag and sidecar; the sidecar's content."""
    rng = np.random.default_rng(_name_seed(seed, ex.name))
    scene = {k: dict(v) for k, v in ex.scene.items()}
    if ex.kind == "grasp_drop":
        start, segments = grasp_segments(ex)
        motion = plan_motion(start, segments, cs.BALL_RADIUS, ik, open_fingers())
        robot = RealRobot(scene, ["ball"])
        robot.pose_robot(motion.targets[0])
        robot.engine.run_for(0.3)
    else:
        real_scene = {"dip": scene["dip"]}  # the real world of the recording holds no SPU
        robot = RealRobot(real_scene, ["dip"])
        q0 = ik.solve(INSERT_START, cs.HANDLE_RADIUS, IK_SEED)
        settle_grasp(robot, np.r_[q0, open_fingers()], "dip", INSERT_START)
        pose = robot.engine.get_states(["dip"])[0][0]
        start, segments = insertion_segments(ex, pose[:3] - INSERT_START)
        motion = plan_motion(start, segments, cs.HANDLE_RADIUS, ik, closed_fingers())
        scene["dip"] = {"type": "dip", "pose": [round(float(v), 6) for v in pose]}
    messages, measured = execute(robot, motion, rng)
    reality: dict[str, Any] = {}
    if ex.kind == "grasp_drop":
        robot.engine.run_for(0.5)
        ball = robot.engine.get_states(["ball"])[0][0]
        c = scene["container"]
        reality = {"ball": [round(float(v), 4) for v in ball[:3]],
                   "in_container": ball_in_container(ball, c["type"], np.array(c["pose"]))}
    bag = out / ex.name
    if (bag / "metadata.yaml").is_file():  # an earlier recording of this execution
        shutil.rmtree(bag)
    write_recording(bag, messages)
    sidecar = {**ex.to_dict(), "scene": scene, "bag": ex.name, "seed": seed, "rate": RATE,
               "initial_joints": {"name": arm.joint_names(),
                                  "position": [round(float(v), 6) for v in measured[0]]},
               "duration": float(motion.times[-1]), "reality": reality}
    (out / f"{ex.name}.yaml").write_text(yaml.safe_dump(sidecar, sort_keys=False))
    return sidecar


def _name_seed(seed: int, name: str) -> np.random.SeedSequence:
    """A seed per execution that depends only on the data set's seed and the name."""
    return np.random.SeedSequence([seed, *name.encode()])


def record_all(out: str | Path, seed: int = 0, grasps: int = 10, insertions: int = 5,
               only: Sequence[str] | None = None,
               progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Plan and record a data set into ``out`` (``only``: just these execution names); writes
    ``executions.yaml`` (the list of sidecars) and returns the sidecars."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ik = HandIK()
    executions = [ex for ex in plan_executions(seed, grasps, insertions)
                  if only is None or ex.name in only]
    sidecars = []
    for ex in executions:
        sidecars.append(record_execution(ex, out, seed, ik))
        if progress is not None:
            progress(f"recorded {ex.name} ({ex.kind}, {ex.variant})")
    (out / "executions.yaml").write_text(yaml.safe_dump(
        {"seed": seed, "executions": [s["name"] for s in sidecars]}, sort_keys=False))
    return sidecars


def load_sidecar(path: str | Path) -> dict[str, Any]:
    """A recording's sidecar YAML."""
    path = Path(path)
    if not path.is_file():
        raise ConductorError(f"recording sidecar '{path}' does not exist")
    data = yaml.safe_load(path.read_text())
    missing = [k for k in SIDECAR_KEYS if not isinstance(data, dict) or k not in data]
    if missing:
        raise ConductorError(f"recording sidecar '{path}': missing {', '.join(missing)}")
    return data


def load_data_set(folder: str | Path) -> list[dict[str, Any]]:
    """The sidecars of a data set written by :func:`record_all` (``executions.yaml`` lists them)."""
    folder = Path(folder)
    index = folder / "executions.yaml"
    if not index.is_file():
        raise ConductorError(f"'{folder}' holds no executions.yaml: record a data set there "
                             "with 'simfid example conductor record --out FOLDER'")
    names = (yaml.safe_load(index.read_text()) or {}).get("executions") or []
    return [load_sidecar(folder / f"{name}.yaml") for name in names]
