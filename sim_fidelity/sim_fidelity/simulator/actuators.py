"""Gazebo joint-controller plugins turned into MuJoCo actuators before the world is compiled.

``gz::sim::systems::JointPositionController`` becomes a position servo (``p_gain``, ``d_gain``,
``cmd_max``/``cmd_min`` as force limits, ``initial_position``);
``gz::sim::systems::JointController`` becomes a velocity servo (``p_gain`` when
``use_force_commands``, else a stiff default). The actuator is named after the plugin entity, so
the SCRIPT lever of the plugin and the ACTUATION lever of the joint both reach it.

``gz::sim::systems::AckermannSteering`` (``gz-sim-ackermann-steering-system``) becomes one
position servo per steering joint and one velocity servo per drive joint (``<left_joint>`` and
``<right_joint>`` may repeat: four-wheel drive), named ``<plugin>::<joint>`` and owned by the
plugin; :class:`AckermannDrive` turns a command (speed, steering angle) into their targets.
The drive wheels' collision geoms get MuJoCo priority -1, so a contact takes the surface's
friction: Gazebo combines two ``mu`` by taking the lower, MuJoCo by taking the higher, and the
tyres (rubber, ``mu`` 1) are the grippier side on every surface of the course.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np

from .errors import SdfError
from .sdf.records import LoadedWorld

POSITION_PLUGINS = ("JointPositionController", "joint-position-controller",
                    "joint_position_controller")
VELOCITY_PLUGINS = ("JointController", "joint-controller", "joint_controller")
ACKERMANN_PLUGINS = ("AckermannSteering", "ackermann-steering-system")
DEFAULT_VELOCITY_GAIN = 100.0
STEERING_GAIN, STEERING_DAMPING = 50.0, 0.5  # N m/rad, N m s/rad: a stiff hobby servo
SIM_FIDELITY = "{https://github.com/sim_fidelity/sdf}"  # custom elements Gazebo ignores


@dataclass
class ControllerRecord:
    plugin: str  # scoped plugin name == MuJoCo actuator name (<plugin>::<joint> for a drive's)
    joint: str  # scoped SDF joint name
    mode: str  # "position" or "velocity"
    initial: float = 0.0
    owner: str = ""  # the Ackermann plugin that commands this actuator, "" for a joint controller


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
    """Add the actuators of every joint-controller and Ackermann plugin to ``world.spec``;
    returns what was added."""
    spec = world.spec
    added = []
    for name, plugin in world.plugins.items():
        if only is not None and name not in only:
            continue
        if _is_ackermann(plugin.filename, plugin.xml[:200]):
            added += _add_ackermann(world, ackermann_drive(world, name))
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


# ---------------------------------------------------------------------- Ackermann steering
@dataclass(frozen=True)
class CommandMap:
    """A coarse map from commanded wheel speed to motor speed: piecewise constant (each command
    takes the motor value of the highest breakpoint at or below its magnitude), odd in the sign.
    Declared as ``<sim_fidelity:speed_map>c0 m0 c1 m1 ...</sim_fidelity:speed_map>``."""

    commands: np.ndarray  # (k,) ascending, the first 0
    motor: np.ndarray  # (k,)

    def __call__(self, speed: float) -> float:
        i = int(np.searchsorted(self.commands, abs(speed), side="right")) - 1
        return math.copysign(float(self.motor[max(i, 0)]), speed)


@dataclass(frozen=True)
class AckermannDrive:
    """One Ackermann steering plugin: its geometry, its actuators and its calibration.

    The command is the bicycle model's: ``speed`` (m/s) of the rear axle's middle and
    ``steering`` (rad), the angle of a virtual front wheel on the centre line. The steering
    linkage turns the inner wheel more than the outer one (both wheels' axes meet the rear
    axle's line at the turning centre, the steering pivots ``kingpin_width`` apart); each driven
    wheel spins at the speed of its own path round that centre.
    """

    plugin: str
    model: str
    wheel_base: float
    wheel_separation: float
    kingpin_width: float
    wheel_radius: float
    steering_limit: float
    min_velocity: float
    max_velocity: float
    left_steering: str  # actuator names
    right_steering: str
    wheels: tuple[str, ...]  # drive actuators
    wheel_side: np.ndarray  # (n,) +1 left, -1 right
    wheel_front: np.ndarray  # (n,) True for wheels on a steering knuckle
    wheel_gain: float  # velocity servo gain, N m s/rad
    steering_offset: float = 0.0  # rad added to every command (an uncalibrated linkage)
    speed_map: CommandMap | None = None  # None: the motor turns at the commanded speed
    twist_topic: str = ""  # Gazebo's <topic>: geometry_msgs/Twist commands
    odom_topic: str = ""  # Gazebo's <odom_topic>
    odom_frame: str = "odom"  # <frame_id>
    base_frame: str = "base_link"  # <child_frame_id>

    def steering_for_twist(self, speed: float, yaw_rate: float) -> float:
        """The bicycle steering angle that turns at ``yaw_rate`` at ``speed`` (0 when still)."""
        if abs(speed) < 1e-6:
            return 0.0
        return math.atan(self.wheel_base * yaw_rate / speed)

    def steering_angles(self, steering: float) -> tuple[float, float]:
        """(left, right) wheel angles for a bicycle steering angle, by Ackermann geometry."""
        delta = float(np.clip(steering + self.steering_offset, -self.steering_limit,
                              self.steering_limit))
        if abs(delta) < 1e-9:
            return 0.0, 0.0
        radius = self.wheel_base / math.tan(delta)  # signed: + turns left
        half = self.kingpin_width / 2
        return (math.atan(self.wheel_base / (radius - half)),
                math.atan(self.wheel_base / (radius + half)))

    def wheel_speeds(self, speed: float, steering: float) -> np.ndarray:
        """Angular velocities (rad/s) of the drive wheels."""
        speed = float(np.clip(speed, self.min_velocity, self.max_velocity))
        if self.speed_map is not None:
            speed = self.speed_map(speed)
        delta = float(np.clip(steering + self.steering_offset, -self.steering_limit,
                              self.steering_limit))
        scale = np.ones(len(self.wheels))
        if abs(delta) > 1e-9:
            radius = self.wheel_base / math.tan(delta)
            lateral = radius - self.wheel_side * self.wheel_separation / 2
            along = np.where(self.wheel_front, self.wheel_base, 0.0)
            scale = np.hypot(lateral, along) / abs(radius)
        return speed * scale / self.wheel_radius

    def targets(self, speed: float, steering: float) -> tuple[list[str], list[float]]:
        """Actuator names and targets for a command (for ``set_joint_commands``)."""
        if not (math.isfinite(speed) and math.isfinite(steering)):
            raise ValueError(f"{self.plugin}: command must be finite, got speed {speed}, "
                             f"steering {steering}")
        left, right = self.steering_angles(steering)
        return ([self.left_steering, self.right_steering, *self.wheels],
                [left, right, *self.wheel_speeds(speed, steering).tolist()])


def _is_ackermann(filename: str, name: str) -> bool:
    return any(p in f"{filename} {name}" for p in ACKERMANN_PLUGINS)


def ackermann_drives(world: LoadedWorld) -> dict[str, AckermannDrive]:
    """The Ackermann steering plugins of a loaded world, by plugin name."""
    return {name: ackermann_drive(world, name) for name, p in world.plugins.items()
            if _is_ackermann(p.filename, p.xml[:200])}


def ackermann_drive(world: LoadedWorld, name: str) -> AckermannDrive:
    """Read one Ackermann steering plugin; a missing or bad element raises SdfError."""
    plugin = world.plugins[name]
    root = ET.fromstring(_with_namespace(plugin.xml))
    model = plugin.parent

    def joint(tag: str, text: str) -> str:
        scoped = f"{model}::{text.strip()}" if model else text.strip()
        record = world.joints.get(scoped)
        if record is None or len(record.mj_joints) != 1:
            raise SdfError(f"plugin '{name}': <{tag}> names '{scoped}', which is not a joint of "
                           f"one degree of freedom in model '{model}'", element=tag)
        return scoped

    def joints(tag: str) -> list[str]:
        found = [joint(tag, e.text or "") for e in root.findall(tag)]
        if not found:
            raise SdfError(f"plugin '{name}' has no <{tag}>", element="plugin")
        return found

    def positive(tag: str, default: float) -> float:
        value = _value(root, tag, default, name)
        if value <= 0:
            raise SdfError(f"<{tag}> of plugin '{name}' must be positive, got {value}",
                           element=tag)
        return value

    left, right = joints("left_joint"), joints("right_joint")
    steer_l, steer_r = joints("left_steering_joint")[0], joints("right_steering_joint")[0]
    knuckles = {world.joints[steer_l].child, world.joints[steer_r].child}
    drive = left + right
    return AckermannDrive(
        plugin=name, model=model,
        wheel_base=positive("wheel_base", 1.0), wheel_separation=positive("wheel_separation", 1.0),
        kingpin_width=positive("kingpin_width", 0.8), wheel_radius=positive("wheel_radius", 0.2),
        steering_limit=positive("steering_limit", 0.5),
        min_velocity=_value(root, "min_velocity", -math.inf, name),
        max_velocity=_value(root, "max_velocity", math.inf, name),
        left_steering=f"{name}::{steer_l.split('::')[-1]}",
        right_steering=f"{name}::{steer_r.split('::')[-1]}",
        wheels=tuple(f"{name}::{j.split('::')[-1]}" for j in drive),
        wheel_side=np.array([1.0] * len(left) + [-1.0] * len(right)),
        wheel_front=np.array([world.joints[j].parent in knuckles for j in drive]),
        wheel_gain=positive(f"{SIM_FIDELITY}wheel_gain", DEFAULT_VELOCITY_GAIN),
        steering_offset=_value(root, f"{SIM_FIDELITY}steering_offset", 0.0, name),
        speed_map=_speed_map(root, name),
        twist_topic=_text(root, "topic", f"/model/{model}/cmd_vel"),
        odom_topic=_text(root, "odom_topic", f"/model/{model}/odometry"),
        odom_frame=_text(root, "frame_id", "odom"),
        base_frame=_text(root, "child_frame_id", "base_link"))


def _text(root: ET.Element, tag: str, default: str) -> str:
    return (root.findtext(tag) or "").strip() or default


def _with_namespace(xml: str) -> str:
    """The plugin's XML with the ``sim_fidelity`` prefix bound (it is declared on ``<sdf>``)."""
    if "sim_fidelity:" not in xml or "xmlns:sim_fidelity" in xml:
        return xml
    head, rest = xml.split(">", 1) if not xml.startswith("<?") else ("", xml)
    return f'{head} xmlns:sim_fidelity="{SIM_FIDELITY[1:-1]}">{rest}'


def _speed_map(root: ET.Element, name: str) -> CommandMap | None:
    el = root.find(f"{SIM_FIDELITY}speed_map")
    if el is None:
        return None
    try:
        pairs = np.array((el.text or "").split(), float).reshape(-1, 2)
    except ValueError:
        raise SdfError(f"<sim_fidelity:speed_map> of plugin '{name}' must be pairs of numbers "
                       f"'command motor ...', got {el.text!r}", element="speed_map") from None
    if len(pairs) < 2 or pairs[0, 0] != 0 or np.any(np.diff(pairs[:, 0]) <= 0):
        raise SdfError(f"<sim_fidelity:speed_map> of plugin '{name}' needs two or more pairs "
                       "with commands ascending from 0", element="speed_map")
    return CommandMap(pairs[:, 0].copy(), pairs[:, 1].copy())


def _add_ackermann(world: LoadedWorld, drive: AckermannDrive) -> list[ControllerRecord]:
    """One position servo per steering joint, one velocity servo per drive joint; each servo's
    force is limited by its joint's ``<effort>``."""
    model = f"{drive.model}::" if drive.model else ""
    added = []
    for actuator in (drive.left_steering, drive.right_steering, *drive.wheels):
        joint = model + actuator.rsplit("::", 1)[1]
        record = world.joints[joint]
        act = world.spec.add_actuator(name=actuator, target=record.mj_joints[0],
                                      trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        steering = actuator in (drive.left_steering, drive.right_steering)
        if steering:
            act.gainprm[0] = STEERING_GAIN
            act.biasprm[:3] = [0.0, -STEERING_GAIN, -STEERING_DAMPING]
        else:
            act.gainprm[0] = drive.wheel_gain
            act.biasprm[:3] = [0.0, 0.0, -drive.wheel_gain]
        if math.isfinite(record.effort) and record.effort > 0:
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-record.effort, record.effort]
        added.append(ControllerRecord(actuator, joint, "position" if steering else "velocity",
                                      owner=drive.plugin))
        if not steering:  # the surface's friction rules the tyre's contacts (see module doc)
            for geom in world.links[record.child].collisions:
                world.spec.geom(geom).priority = -1
    return added
