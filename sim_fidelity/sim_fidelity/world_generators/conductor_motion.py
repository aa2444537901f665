"""The recorded arm motion of the model conductor's Table 1: a deterministic script that writes a
bag of ``sensor_msgs/JointState`` (topic ``/joint_states``, RATE Hz) in which the ``ur5e_hand3``
arm of ``worlds/conductor_arm.sdf`` grasps the cup, lifts it, carries it, tilts it and sets it
upright again.

The hand's path is given as Cartesian key poses of the grasp point (the cup's axis at GRASP_HEIGHT
above its floor) and turned into arm joint angles by damped-least-squares inverse kinematics on
the world's own MuJoCo model; the fingers open, close and hold by joint targets. Phases
(:data:`PHASES`): from the zero configuration to above the pre-grasp pose (joint space), down to
it, approach, close the hand, lift, carry, tilt, pour (hold tilted), back upright, hold.

    python -m sim_fidelity.world_generators.conductor_motion -o BAG_DIR [--storage mcap]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import mujoco
import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from ..reality_gap.messages import typestore
from ..simulator import poses as pose_math
from . import conductor_scene as scene
from . import ur5e_hand3 as arm
from .errors import WorldGenerationError

TOPIC = "/joint_states"
RATE = 100.0  # Hz
ARM = "arm"  # the arm's model name in the Table 1 worlds
GRASP_HEIGHT = 0.06  # m above the cup's floor
GRASP_GAP = 0.006  # m between the palm and the cup's wall
FINGER_CLOSED = (0.75, 0.9)  # rad: proximal, distal targets (past contact, so the hand squeezes)
APPROACH = np.array([0.0, 0.12, 0.02])  # pre-grasp offset of the grasp point (toward the robot)
ABOVE = 0.2  # m: the reach from the zero configuration ends this high above the pre-grasp pose
LIFT, CARRY, TILT = 0.15, 0.20, np.radians(92.0)  # m, m (along +x), rad about the approach axis
# (name, duration [s]): the phases in order
PHASES = (("reach", 2.0), ("descend", 1.0), ("approach", 1.5), ("close", 1.0), ("lift", 1.5),
          ("carry", 1.5), ("tilt", 1.5), ("pour", 1.0), ("upright", 1.5), ("hold", 1.0))
STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


def duration() -> float:
    """Length of the recording in seconds."""
    return sum(d for _, d in PHASES)


def _smooth(s: np.ndarray) -> np.ndarray:
    """Smoothstep: zero velocity at both ends of a phase."""
    s = np.clip(s, 0.0, 1.0)
    return s * s * (3 - 2 * s)


class ArmIK:
    """Damped-least-squares IK of the grasp point on a compiled Table 1 world."""

    def __init__(self):
        from ..simulator.engine import MujocoEngine

        self.engine = MujocoEngine.from_string(scene.arm_world_sdf("ik", np.zeros((0, 3))))
        m = self.engine.model
        joints = [f"{ARM}::{j}" for j in arm.ARM_JOINTS]
        self.qadr, self.dadr = self.engine.index.joint_addresses(m, joints)
        self.body = self.engine.index.body_id[f"{ARM}::palm"]
        _, rotation = arm.tool_frame()
        self.approach = rotation[:, 2]  # the approach axis at the zero configuration (model frame)
        reach = arm.COUPLING[1] + arm.PALM_DEPTH + GRASP_GAP + scene.CUP_RADIUS
        self.local = reach * self.approach  # the grasp point in the palm frame

    def solve(self, position: np.ndarray, tilt: float, seed: np.ndarray) -> np.ndarray:
        """Arm joint angles putting the grasp point at ``position`` with the hand in its zero
        orientation turned by ``tilt`` about the approach axis; starts from ``seed``."""
        m, d = self.engine.model, self.engine.data
        target_q = pose_math.rpy_to_quat(0.0, 0.0, 0.0)
        half = tilt / 2
        target_q = pose_math.quat_mul(np.concatenate([np.sin(half) * self.approach,
                                                      [np.cos(half)]]), target_q)
        q = seed.copy()
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        for _ in range(200):
            d.qpos[self.qadr] = q
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            rot = d.xmat[self.body].reshape(3, 3)
            point = d.xpos[self.body] + rot @ self.local
            current = pose_math.wxyz_to_xyzw(d.xquat[self.body])
            dq = pose_math.quat_mul(target_q, pose_math.quat_conj(current))
            if dq[3] < 0:
                dq = -dq
            err = np.concatenate([position - point, 2 * dq[:3]])
            if np.linalg.norm(err) < 1e-7:
                return q
            mujoco.mj_jac(m, d, jacp, jacr, point, self.body)
            j = np.vstack([jacp[:, self.dadr], jacr[:, self.dadr]])
            q = q + j.T @ np.linalg.solve(j @ j.T + 1e-4 * np.eye(6), err)
        raise WorldGenerationError(f"conductor motion: no IK solution for the grasp point at "
                                   f"{np.round(position, 3).tolist()} (tilt {tilt:.2f} rad)")


def _ik_seed() -> np.ndarray:
    """Elbow up, the hand toward -y: the configuration family every key pose is solved in."""
    return np.array([1.0, -1.2, 2.6, -1.4, 1.0, 0.0])


def trajectory() -> tuple[np.ndarray, list[str], np.ndarray]:
    """Sample times (n,), joint names (unscoped, :func:`ur5e_hand3.joint_names` order) and
    joint targets (n, joints) of the whole recording."""
    ik = ArmIK()
    grasp = np.array(scene.CUP_POSITION) + [0.0, 0.0, GRASP_HEIGHT]
    open_hand = np.tile([arm.FINGER_OPEN, 0.0], 3)
    closed = np.tile(FINGER_CLOSED, 3)
    # (grasp point, tilt, fingers) at the end of each phase; "reach" ends at the pre-grasp pose
    lifted = grasp + [0, 0, LIFT]
    carried = lifted + [CARRY, 0, 0]
    keys = {"reach": (grasp + APPROACH + [0, 0, ABOVE], 0.0, open_hand),
            "descend": (grasp + APPROACH, 0.0, open_hand), "approach": (grasp, 0.0, open_hand),
            "close": (grasp, 0.0, closed), "lift": (lifted, 0.0, closed),
            "carry": (carried, 0.0, closed), "tilt": (carried, TILT, closed),
            "pour": (carried, TILT, closed),
            "upright": (carried, 0.0, closed), "hold": (carried, 0.0, closed)}
    n = int(round(duration() * RATE)) + 1
    times = np.arange(n) / RATE
    out = np.zeros((n, len(arm.joint_names())))
    seed = _ik_seed()
    q_prev = np.zeros(6)
    fingers_prev = np.zeros(6)
    pose_prev = None
    start = 0.0
    for name, length in PHASES:
        position, tilt, fingers = keys[name]
        rows = np.flatnonzero((times >= start - 1e-9) & (times <= start + length + 1e-9))
        s = _smooth((times[rows] - start) / length)
        if name == "reach":  # joint space from the zero configuration
            q_end = ik.solve(position, tilt, seed)
            out[rows, :6] = q_prev + s[:, None] * (q_end - q_prev)
        else:  # a straight Cartesian line (and a tilt) between the key poses
            p0, t0 = pose_prev
            q = q_prev
            for r, sk in zip(rows, s):
                q = ik.solve(p0 + sk * (position - p0), t0 + sk * (tilt - t0), q)
                out[r, :6] = q
            q_end = q
        out[rows, 6:] = fingers_prev + s[:, None] * (fingers - fingers_prev)
        q_prev, fingers_prev, pose_prev = q_end, fingers, (position, tilt)
        start += length
    return times, arm.joint_names(), out


def write_bag(path: str | Path, times: np.ndarray, names: list[str], positions: np.ndarray,
              storage: str = "mcap") -> Path:
    """A new bag directory ``path`` with one JointState per row of ``positions`` on TOPIC."""
    store = typestore()
    msgtype = "sensor_msgs/msg/JointState"
    js = store.types[msgtype]
    header_t = store.types["std_msgs/msg/Header"]
    time_t = store.types["builtin_interfaces/msg/Time"]
    path = Path(path)
    with Writer(path, version=9, storage_plugin=STORAGES[storage]) as writer:
        conn = writer.add_connection(TOPIC, msgtype, typestore=store)
        for t, row in zip(times, positions):
            stamp = int(round(t * 1e9))
            header = header_t(stamp=time_t(sec=stamp // 10**9, nanosec=stamp % 10**9),
                              frame_id="")
            msg = js(header=header, name=list(names), position=np.asarray(row, float),
                     velocity=np.zeros(0), effort=np.zeros(0))
            writer.write(conn, stamp, store.serialize_cdr(msg, msgtype))
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True, help="bag directory to create")
    parser.add_argument("--storage", choices=sorted(STORAGES), default="mcap")
    args = parser.parse_args(argv)
    times, names, positions = trajectory()
    path = write_bag(args.output, times, names, positions, args.storage)
    print(f"{path}: {len(times)} JointState messages over {times[-1]:.2f} s on {TOPIC}")


if __name__ == "__main__":
    main()
