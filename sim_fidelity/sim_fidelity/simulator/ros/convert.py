"""Conversions between the protocol's numpy arrays and ROS messages (server and client)."""
from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion, Twist, Vector3

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
