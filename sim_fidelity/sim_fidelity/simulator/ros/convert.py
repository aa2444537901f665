"""Conversions between the protocol's numpy arrays and ROS messages (server and client)."""
from __future__ import annotations

import math
import sys

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion, Twist, Vector3
from simulation_interfaces.msg import EntityState
from std_msgs.msg import Header

from sim_fidelity_interfaces.srv import ListEntities

from ..protocol import EntityKind

KIND_CODES = {EntityKind.MODEL: ListEntities.Request.KIND_MODEL,  # ~/list_entities' kind codes
              EntityKind.LINK: ListEntities.Request.KIND_LINK,
              EntityKind.JOINT: ListEntities.Request.KIND_JOINT,
              EntityKind.SENSOR: ListEntities.Request.KIND_SENSOR,
              EntityKind.PLUGIN: ListEntities.Request.KIND_PLUGIN}
KINDS_OF_CODES = {code: kind for kind, code in KIND_CODES.items()}


def time_msg(seconds: float) -> Time:
    sec = int(math.floor(seconds))
    return Time(sec=sec, nanosec=min(int(round((seconds - sec) * 1e9)), 999_999_999))


def time_seconds(msg: Time) -> float:
    return msg.sec + msg.nanosec * 1e-9


def pose_msg(p: np.ndarray) -> Pose:
    p = [float(v) for v in p]
    return Pose(position=Point(x=p[0], y=p[1], z=p[2]),
                orientation=Quaternion(x=p[3], y=p[4], z=p[5], w=p[6]))


def twist_msg(t: np.ndarray) -> Twist:
    t = [float(v) for v in t]
    return Twist(linear=Vector3(x=t[0], y=t[1], z=t[2]), angular=Vector3(x=t[3], y=t[4], z=t[5]))


def pose_array(msg: Pose) -> np.ndarray:
    p, q = msg.position, msg.orientation
    return np.array([p.x, p.y, p.z, q.x, q.y, q.z, q.w])


def twist_array(msg: Twist) -> np.ndarray:
    v, w = msg.linear, msg.angular
    return np.array([v.x, v.y, v.z, w.x, w.y, w.z])


def entity_states(poses: np.ndarray, twists: np.ndarray, stamp_s: float,
                  frame_id: str = "world") -> list[EntityState]:
    """``EntityState`` messages of (n, 7) poses and (n, 6) twists, built with the least Python.

    The leaves are written into each message's own default sub-messages from one ``tolist()``
    of each array (no per-entity ``Pose``/``Twist``/``Time`` objects, no per-value ``float()``),
    and every state shares one ``Header`` (same stamp and frame): read the list, don't mutate
    one header expecting the others to keep theirs.
    """
    poses, twists = _checked(poses, twists)
    header = Header(stamp=time_msg(stamp_s), frame_id=frame_id)
    states = [EntityState(header=header) for _ in range(len(poses))]
    _write_leaves(states, poses, twists)
    return states


class ReusedStates:
    """``entity_states`` that rewrites the previous answer's messages in place when it is for the
    same entities and no response holds it any more.

    A response holds its ``states`` list until rclpy has serialised and sent it and dropped the
    response: while the list has a reference beyond this cache's, a fresh list is built (two
    answers in flight never share messages). Callers serialise calls (``sim_server`` runs its
    handlers under the engine lock).
    """

    FREE_REFS = 2  # sys.getrefcount of a list only this cache holds: the attribute + the argument

    def __init__(self, frame_id: str = "world"):
        self.frame_id = frame_id
        self._names: tuple[str, ...] = ()
        self._states: list[EntityState] = []

    def states(self, names: list[str], poses: np.ndarray, twists: np.ndarray,
               stamp_s: float) -> list[EntityState]:
        """The states of ``names`` (the order of ``poses``/``twists``), reused where free."""
        key = tuple(names)
        if key != self._names or not key or sys.getrefcount(self._states) > self.FREE_REFS:
            self._names = key
            self._states = entity_states(poses, twists, stamp_s, self.frame_id)
            return self._states
        poses, twists = _checked(poses, twists)
        if len(poses) != len(key):
            raise ValueError(f"ReusedStates.states: {len(key)} names but {len(poses)} poses")
        self._states[0].header.stamp = time_msg(stamp_s)  # the header all of them share
        _write_leaves(self._states, poses, twists)
        return self._states


def _checked(poses: np.ndarray, twists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    poses, twists = np.asarray(poses, dtype=float), np.asarray(twists, dtype=float)
    if poses.ndim != 2 or poses.shape[1] != 7 or twists.shape != (len(poses), 6):
        raise ValueError(f"entity_states wants (n, 7) poses and (n, 6) twists, got "
                         f"{poses.shape} and {twists.shape}")
    return poses, twists


def _write_leaves(states: list[EntityState], poses: np.ndarray, twists: np.ndarray) -> None:
    for state, p, t in zip(states, poses.tolist(), twists.tolist()):
        pose, twist = state.pose, state.twist
        leaf = pose.position
        leaf.x, leaf.y, leaf.z = p[0], p[1], p[2]
        leaf = pose.orientation
        leaf.x, leaf.y, leaf.z, leaf.w = p[3], p[4], p[5], p[6]
        leaf = twist.linear
        leaf.x, leaf.y, leaf.z = t[0], t[1], t[2]
        leaf = twist.angular
        leaf.x, leaf.y, leaf.z = t[3], t[4], t[5]
