"""Gazebo joint-controller plugins turned into MuJoCo actuators before the world is compiled.

``gz::sim::systems::JointPositionController`` becomes a position servo (``p_gain``, ``d_gain``,
``cmd_max``/``cmd_min`` as force limits, ``initial_position``);
``gz::sim::systems::JointController`` becomes a velocity servo (``p_gain`` when
``use_force_commands``, else a stiff default). The actuator is named after the plugin entity, so
the SCRIPT lever of the plugin and the ACTUATION lever of the joint both reach it.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco

from .errors import SdfError
from .sdf.records import LoadedWorld

POSITION_PLUGINS = ("JointPositionController", "joint-position-controller",
                    "joint_position_controller")
VELOCITY_PLUGINS = ("JointController", "joint-controller", "joint_controller")
DEFAULT_VELOCITY_GAIN = 100.0


@dataclass
class ControllerRecord:
    plugin: str  # scoped plugin name == MuJoCo actuator name
    joint: str  # scoped SDF joint name
    mode: str  # "position" or "velocity"
    initial: float = 0.0


def _kind(filename: str, name: str) -> str | None:
    text = f"{filename} {name}"
    if any(p in text for p in POSITION_PLUGINS):
        return "position"
    if any(p in text for p in VELOCITY_PLUGINS):
        return "velocity"
    return None


def _value(root: ET.Element, tag: str, default: float, plugin: str) -> float:
    el = root.find(tag)
    if el is None or not (el.text or "").strip():
        return default
    try:
        return float(el.text)
    except ValueError:
        raise SdfError(f"<{tag}> of plugin '{plugin}' is not a number: {el.text!r}",
                       element="plugin") from None


def add_controller_actuators(world: LoadedWorld,
                             only: set[str] | None = None) -> list[ControllerRecord]:
    """Add one actuator per joint-controller plugin to ``world.spec``; returns what was added."""
    spec = world.spec
    added = []
    for name, plugin in world.plugins.items():
        if only is not None and name not in only:
            continue
        kind = _kind(plugin.filename, plugin.xml[:200])
        if kind is None:
            continue
        root = ET.fromstring(plugin.xml)
        joint_tag = root.find("joint_name")
        if joint_tag is None or not (joint_tag.text or "").strip():
            raise SdfError(f"plugin '{name}' has no <joint_name>", element="plugin")
        model = plugin.parent
        joint = f"{model}::{joint_tag.text.strip()}" if model else joint_tag.text.strip()
        record = world.joints.get(joint)
        if record is None or len(record.mj_joints) != 1:
            raise SdfError(f"plugin '{name}' names joint '{joint}', which is not a joint of one "
                           f"degree of freedom in model '{model}'", element="joint_name")
        act = spec.add_actuator(name=name, target=record.mj_joints[0],
                                trntype=mujoco.mjtTrn.mjTRN_JOINT)
        if kind == "position":
            kp = _value(root, "p_gain", 1.0, name)
            kd = _value(root, "d_gain", 0.0, name)
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.gainprm[0] = kp
            act.biasprm[:3] = [0.0, -kp, -kd]
            initial = _value(root, "initial_position", 0.0, name)
        else:
            use_force = (root.findtext("use_force_commands") or "").strip().lower() in ("1", "true")
            kv = (_value(root, "p_gain", DEFAULT_VELOCITY_GAIN, name) if use_force
                  else DEFAULT_VELOCITY_GAIN)
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.gainprm[0] = kv
            act.biasprm[:3] = [0.0, 0.0, -kv]
            initial = _value(root, "initial_velocity", 0.0, name)
        cmd_max = _value(root, "cmd_max", 0.0, name)
        cmd_min = _value(root, "cmd_min", -cmd_max, name)
        if cmd_max > 0:
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [cmd_min, cmd_max]
        added.append(ControllerRecord(name, joint, kind, initial))
    return added
