"""The message type store: ROS 2 Kilted types plus ``ackermann_msgs`` registered from .msg text.

Also builds default-valued messages of any registered type (used by the bag writer) and
walks dotted field paths through the type definitions (used by the spec validator).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from .errors import SpecError

ACKERMANN_DRIVE = """\
float32 steering_angle
float32 steering_angle_velocity
float32 speed
float32 acceleration
float32 jerk
"""
ACKERMANN_DRIVE_STAMPED = """\
std_msgs/Header header
AckermannDrive drive
"""

NUMERIC_TYPES = {"bool", "byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                 "int64", "uint64", "float32", "float64"}
QUATERNION = "geometry_msgs/msg/Quaternion"
_NODE_BASE, _NODE_NAME = 1, 2


@lru_cache(maxsize=1)
def typestore() -> Typestore:
    """The shared type store (Kilted definitions + ackermann_msgs)."""
    store = get_typestore(Stores.ROS2_KILTED)
    types = {}
    types.update(get_types_from_msg(ACKERMANN_DRIVE, "ackermann_msgs/msg/AckermannDrive"))
    types.update(get_types_from_msg(ACKERMANN_DRIVE_STAMPED,
                                    "ackermann_msgs/msg/AckermannDriveStamped"))
    store.register(types)
    return store


def field_type(msgtype: str, path: str) -> str:
    """Type of the dotted field ``path`` in ``msgtype``: a base type name or a message type.

    Raises SpecError naming the first path element that does not exist.
    """
    store = typestore()
    if msgtype not in store.fielddefs:
        raise SpecError(f"unknown message type '{msgtype}'")
    current = msgtype
    for part in path.split("."):
        if current not in store.fielddefs:
            raise SpecError(f"'{part}' follows the non-message field of type '{current}'")
        fields = dict(store.fielddefs[current][1])
        if part not in fields:
            raise SpecError(f"'{current}' has no field '{part}'")
        node, spec = fields[part]
        if node == _NODE_NAME:
            current = spec
        elif node == _NODE_BASE:
            current = spec[0]
        else:
            raise SpecError(f"'{part}' of '{current}' is an array; arrays are not supported")
    return current


def default_message(msgtype: str) -> Any:
    """A message of ``msgtype`` with every field zero/empty (quaternions are the identity)."""
    store = typestore()
    cls = store.types[msgtype]
    values = {}
    for name, (node, spec) in store.fielddefs[msgtype][1]:
        if node == _NODE_NAME:
            values[name] = default_message(spec)
        elif node == _NODE_BASE:
            base = spec[0]
            values[name] = ("" if base in ("string", "wstring") else False if base == "bool"
                            else 0.0 if base.startswith("float") else 0)
        else:  # array (3) or sequence (4)
            inner, length = spec
            if inner[0] == _NODE_BASE and inner[1][0] in NUMERIC_TYPES - {"bool", "char"}:
                values[name] = np.zeros(length if node == 3 else 0, dtype=inner[1][0])
            else:
                values[name] = [default_message(inner[1]) if inner[0] == _NODE_NAME else 0
                                for _ in range(length if node == 3 else 0)]
    if msgtype == QUATERNION:
        values["w"] = 1.0
    return cls(**values)
