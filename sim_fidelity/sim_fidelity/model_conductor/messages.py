"""The bag type store of the conductor: ROS 2 Kilted types plus the conductor's messages of
``sim_fidelity_interfaces``, registered from their .msg text (found in the source tree or in an
installed ``share/sim_fidelity_interfaces/msg``)."""
from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from .errors import ConductorError

PACKAGE = "sim_fidelity_interfaces"
MESSAGES = ("ActionAnnotation", "ModelOutput", "ModelEvent", "ResponsibilityChange")
JOINT_STATE = "sensor_msgs/msg/JointState"
ACTION_ANNOTATION = f"{PACKAGE}/msg/ActionAnnotation"
MODEL_OUTPUT = f"{PACKAGE}/msg/ModelOutput"
MODEL_EVENT = f"{PACKAGE}/msg/ModelEvent"
RESPONSIBILITY_CHANGE = f"{PACKAGE}/msg/ResponsibilityChange"


def msg_folders() -> list[Path]:
    """Where the .msg files may be: the repository's source tree, then installed prefixes."""
    folders = [Path(__file__).resolve().parents[3] / PACKAGE / "msg"]
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    prefixes.append(sys.prefix)
    folders += [Path(p) / "share" / PACKAGE / "msg" for p in prefixes]
    return folders


def msg_text(name: str) -> str:
    """The .msg definition of ``sim_fidelity_interfaces/msg/<name>``."""
    for folder in msg_folders():
        path = folder / f"{name}.msg"
        if path.is_file():
            return path.read_text()
    raise ConductorError(f"{PACKAGE}/msg/{name}.msg not found (looked in "
                         f"{', '.join(map(str, msg_folders()))})")


@lru_cache(maxsize=1)
def typestore() -> Typestore:
    """Kilted types and the conductor's messages."""
    store = get_typestore(Stores.ROS2_KILTED)
    types = {}
    for name in MESSAGES:
        types.update(get_types_from_msg(msg_text(name), f"{PACKAGE}/msg/{name}"))
    store.register(types)
    return store
