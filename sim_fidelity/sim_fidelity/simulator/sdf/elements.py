"""Reading SDF elements: which children each element may have, numbers, booleans, names, poses."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..poses import IDENTITY, quat_to_rpy, rpy_to_quat
from .xmltree import Node

# --- which children each element may have -------------------------------------------------------
# handled: read by the loader; ignored: cosmetic or without a MuJoCo meaning we need;
# anything else (without an XML namespace prefix) is an error.
KNOWN_CHILDREN = {
    "world": ({"physics", "gravity", "model", "include", "plugin", "frame"},
              {"audio", "wind", "magnetic_field", "atmosphere", "gui", "scene", "light",
               "spherical_coordinates", "road"}),
    "model": ({"static", "pose", "link", "joint", "model", "include", "frame", "plugin",
               "canonical_link"},
              {"self_collide", "allow_auto_disable", "enable_wind", "gripper"}),
    "link": ({"pose", "inertial", "collision", "visual", "sensor", "gravity", "kinematic", "plugin",
              "self_collide", "velocity_decay"},
             {"enable_wind", "must_be_base_link", "projector", "audio_sink", "audio_source",
              "battery", "light", "particle_emitter", "frame"}),
    "joint": ({"parent", "child", "pose", "axis", "axis2", "sensor"},
              {"physics", "gearbox_ratio", "gearbox_reference_body", "thread_pitch",
               "screw_thread_pitch"}),
    "axis": ({"xyz", "use_parent_model_frame", "dynamics", "limit"}, {"initial_position"}),
    "inertial": ({"mass", "pose", "inertia"}, set()),
    "collision": ({"pose", "geometry", "surface"}, {"laser_retro", "max_contacts"}),
    "physics": ({"max_step_size", "real_time_factor", "real_time_update_rate", "max_contacts",
                 "gravity", "ode"},
                {"magnetic_field", "bullet", "simbody", "dart"}),
    "frame": ({"pose"}, set()),
}
REJECTED = {
    "actor": "actors (animated models) are not supported",
    "population": "<population> is not supported: write the models out",
    "state": "a saved world <state> is not supported",
    "fluid_added_mass": "added mass is not supported",
    "joint@world": "joints at world level are not supported: put them in a model",
}
SHAPES = {"box", "sphere", "cylinder", "capsule", "ellipsoid", "plane", "mesh", "empty"}
REJECTED_SHAPES = {"heightmap", "polyline", "image"}
JOINT_TYPES = {"revolute", "continuous", "prismatic", "ball", "fixed", "universal"}


def check_children(node: Node, kind: str | None = None) -> None:
    handled, ignored = KNOWN_CHILDREN[kind or node.tag]
    for c in node.children:
        if c.tag in handled or c.tag in ignored or ":" in c.tag:
            continue
        why = REJECTED.get(f"{c.tag}@{node.tag}") or REJECTED.get(c.tag)
        raise c.error(why or f"unknown or unsupported element <{c.tag}> in <{node.tag}>")


# --- scalar parsing -------------------------------------------------------------------------------
def numbers(node: Node, count: int | None = None, text: str | None = None) -> list[float]:
    text = node.text if text is None else text
    try:
        vals = [float(t) for t in text.split()]
    except ValueError:
        raise node.error(f"expected numbers, got '{text}'") from None
    if count is not None and len(vals) != count:
        raise node.error(f"expected {count} numbers, got '{text}'")
    if not all(math.isfinite(v) for v in vals):
        raise node.error(f"numbers must be finite, got '{text}'")
    return vals


def float_of(parent: Node, tag: str, default: float) -> float:
    c = parent.find(tag)
    if c is None:
        return default
    return numbers(c, 1)[0]


def bool_text(node: Node, text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise node.error(f"expected true/false, got '{text}'")


def bool_of(parent: Node, tag: str, default: bool) -> bool:
    c = parent.find(tag)
    return default if c is None else bool_text(c, c.text)


def required(parent: Node, tag: str) -> Node:
    c = parent.find(tag)
    if c is None:
        raise parent.error(f"missing required element <{tag}>")
    return c


def name_of(node: Node) -> str:
    n = node.get("name")
    if not n:
        raise node.error(f"<{node.tag}> needs a name attribute")
    if "::" in n:
        raise node.error(f"name '{n}' must not contain '::'")
    return n


@dataclass
class ParsedPose:
    value: np.ndarray  # (7,) xyzw
    relative_to: str | None = None
    node: Node | None = None


def parse_pose(node: Node | None) -> ParsedPose:
    if node is None:
        return ParsedPose(IDENTITY.copy())
    rel = node.get("relative_to") or node.get("frame") or None
    fmt = node.get("rotation_format", "euler_rpy")
    vals = numbers(node)
    if not vals:
        return ParsedPose(IDENTITY.copy(), rel, node)
    if fmt == "euler_rpy":
        if len(vals) != 6:
            raise node.error(f"expected 6 numbers (x y z roll pitch yaw), got '{node.text}'")
        rpy = vals[3:]
        if bool_text(node, node.get("degrees", "false")):
            rpy = [math.radians(a) for a in rpy]
        q = rpy_to_quat(*rpy)
    elif fmt == "quat_xyzw":
        if len(vals) != 7:
            raise node.error(f"expected 7 numbers (x y z qx qy qz qw), got '{node.text}'")
        q = np.array(vals[3:])
        n = np.linalg.norm(q)
        if n < 1e-9:
            raise node.error("quaternion has zero length")
        q = q / n
    else:
        raise node.error(f"unknown rotation_format '{fmt}' (euler_rpy or quat_xyzw)")
    return ParsedPose(np.concatenate([vals[:3], q]), rel, node)


def pose_text(p: np.ndarray) -> str:
    rpy = quat_to_rpy(p[3:])
    return " ".join(f"{v:.12g}" for v in [*p[:3], *rpy])
