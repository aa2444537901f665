"""Generates ``models/unloader`` (model.config + model.sdf): paper 000's truck-unloading robot.

The robot (x forward, z up, model frame on the floor under the base centre):

* **base**: a 2.0 x 1.3 m chassis on a prismatic ``drive`` joint along x (its wheels are not
  modelled); the ``body_conveyor`` belt on top (z = 0.50 m, 1.2 m wide) carries
  packets to the rear (x = -1.0 m), where they count as unloaded.
* **arm** (6 active joints): ``arm_lift`` (z), ``arm_reach`` (x), ``arm_shift`` (y),
  ``wrist_pitch``, ``wrist_yaw``, ``plunger_extend`` (x, pushes the plunger plate forward).
  The tool carries 45 plungers (5 rows x 9 columns, 0.1 m pitch); plunger ``pNN`` is four links
  (``pNN_tube``, ``pNN_gimbal_a``, ``pNN_gimbal_b``, ``pNN_cup``) on four passive spring-damper
  joints (``pNN_slide`` along x, ``pNN_tilt_y``, ``pNN_tilt_z``, ``pNN_bellows`` along x), a
  ``proximity`` ray sensor on the cup and a ``suction`` script plugin (``sim_fidelity_suction``,
  implemented by :mod:`sim_fidelity.truck.suction`). Only the cups collide.
* **nose** (4 active joints): ``nose_reach`` (x), ``nose_pitch`` (lowers the ramp onto the floor),
  ``sweep_left``/``sweep_right`` (paddles ``sweeper_*`` at the tip that swing inward). The ramp is
  a belt (``nose::belt``) carrying packets up onto the body conveyor. A third belt, the
  ``nose_mount::bridge`` behind the hinge, slides out with ``nose_reach`` and spans the gap it opens
  between the ramp and the body conveyor (without it, packets shorter than the gap fell through
  onto the floor under the robot).

Every active joint is driven by a ``gz::sim::systems::JointPositionController`` plugin (the same
file works in Gazebo); the belts are emulated by the ``sim_fidelity_conveyor`` plugin
(:mod:`sim_fidelity.truck.conveyor`). Robot links have gravity off (the servos hold them).

    python -m sim_fidelity.world_generators.unloader [-o DIR]

(default output: the package's ``models/unloader/``).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..data import data_dir

ROWS, COLS, PITCH = 5, 9, 0.10  # plunger grid on the plate (z rows, y columns)
CUP_RADIUS, CUP_LENGTH = 0.04, 0.02
TUBE_LENGTH = 0.12  # plate -> gimbals
CUP_OFFSET = 0.03  # gimbals -> cup centre
PLATE_X = 0.03  # plate frame ahead of the tool frame
BELT_TOP = 0.50  # m, top of the body conveyor
BELT_REAR = -1.0  # m, rear end of the body conveyor (model frame)
BELT_WIDTH = 1.2  # m: wider than the tool (0.9 m of cups), so what it releases lands on the belt
BASE_FRONT = 1.0
TOOL_HOME = (0.70, 0.0, 1.0)  # tool frame at zero arm joints
NOSE_HINGE = (1.02, 0.0, 0.49)
NOSE_LENGTH, NOSE_WIDTH, NOSE_THICKNESS = 1.1, 2.2, 0.01
NOSE_TIP_Z = 0.004  # m, height of the ramp's lower edge at nose_pitch = 0 (a thin scoop)
BRIDGE_LENGTH = 0.45  # m behind the hinge: spans the gap at full nose_reach (0.4 m + 0.02 m)
BRIDGE_TOP = BELT_TOP - 0.003  # m: just below the body belt, which it slides under
SENSOR_RANGE = 0.10  # m
SENSOR_RATE = 50.0  # Hz


def nose_slope() -> float:
    """Angle [rad] of the ramp below horizontal at ``nose_pitch = 0``."""
    drop = NOSE_HINGE[2] - NOSE_TIP_Z - NOSE_THICKNESS / 2
    return math.asin(drop / NOSE_LENGTH)


# (name, type, parent, child, axis, lower, upper, p_gain, d_gain, force limit)
ACTIVE_JOINTS = [
    ("arm_lift", "prismatic", "base", "carriage", "0 0 1", -0.45, 1.45, 4e4, 4e3, 3000),
    ("arm_reach", "prismatic", "carriage", "boom", "1 0 0", -1.3, 1.6, 3e4, 3e3, 4000),
    ("arm_shift", "prismatic", "boom", "slider", "0 1 0", -0.7, 0.7, 2e4, 2e3, 1500),
    ("wrist_pitch", "revolute", "slider", "wrist", "0 1 0", -0.6, 0.6, 4e4, 4e3, 4000),
    ("wrist_yaw", "revolute", "wrist", "tool", "0 0 1", -0.5, 0.5, 4e4, 4e3, 4000),
    ("plunger_extend", "prismatic", "tool", "plate", "1 0 0", 0.0, 0.25, 2e4, 2e3, 3000),
    ("nose_reach", "prismatic", "base", "nose_mount", "1 0 0", 0.0, 0.4, 5e4, 5e3, 4000),
    ("nose_pitch", "revolute", "nose_mount", "nose", "0 1 0", -0.6, 0.05, 3e4, 3e3, 6000),
    ("sweep_left", "revolute", "nose", "sweeper_left", "0 0 1", -1.2, 0.0, 2e3, 2e2, 400),
    ("sweep_right", "revolute", "nose", "sweeper_right", "0 0 1", 0.0, 1.2, 2e3, 2e2, 400),
]
DRIVE = ("drive", 2e5, 4e4, 4000)  # the base: p_gain, d_gain, force limit [N]


def plunger_names() -> list[str]:
    return [f"p{i:02d}" for i in range(ROWS * COLS)]


def plunger_offsets() -> list[tuple[float, float]]:
    """(y, z) of every plunger on the plate, row-major from the top-left."""
    return [(PITCH * (c - (COLS - 1) / 2), PITCH * ((ROWS - 1) / 2 - r))
            for r in range(ROWS) for c in range(COLS)]


def _inertial(mass: float, ixx: float, iyy: float | None = None, izz: float | None = None) -> str:
    iyy = ixx if iyy is None else iyy
    izz = ixx if izz is None else izz
    return (f"<inertial><mass>{mass:g}</mass><inertia><ixx>{ixx:g}</ixx><iyy>{iyy:g}</iyy>"
            f"<izz>{izz:g}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>")


def _box(name: str, size: tuple[float, float, float], pose: str = "0 0 0 0 0 0",
         collide: bool = True, mu: float | None = None) -> str:
    dims = " ".join(f"{v:g}" for v in size)
    geo = f"<geometry><box><size>{dims}</size></box></geometry>"
    out = f'<visual name="{name}"><pose>{pose}</pose>{geo}</visual>'
    if collide:
        surface = (f"<surface><friction><ode><mu>{mu:g}</mu></ode></friction></surface>"
                   if mu is not None else "")
        out += f'<collision name="{name}"><pose>{pose}</pose>{geo}{surface}</collision>'
    return out


def _link(name: str, pose: tuple[float, ...], body: str, inertial: str, extra: str = "") -> str:
    p = " ".join(f"{v:.6g}" for v in pose)
    return (f'\n    <link name="{name}"><pose>{p}</pose><gravity>false</gravity>'
            f"{inertial}{body}{extra}</link>")


def _joint(name: str, jtype: str, parent: str, child: str, axis: str, lower: float, upper: float,
           pose: str = "0 0 0 0 0 0", spring: tuple[float, float] | None = None,
           effort: float | None = None) -> str:
    dyn = (f"<dynamics><damping>{spring[1]:g}</damping><spring_stiffness>{spring[0]:g}"
           f"</spring_stiffness><spring_reference>0</spring_reference></dynamics>"
           if spring else "")
    eff = f"<effort>{effort:g}</effort>" if effort else ""
    return (f'\n    <joint name="{name}" type="{jtype}"><pose>{pose}</pose>'
            f"<parent>{parent}</parent><child>{child}</child><axis><xyz>{axis}</xyz><limit><lower>{lower:g}</lower>"
            f"<upper>{upper:g}</upper>{eff}</limit>{dyn}</axis></joint>")


def _controller(joint: str, p: float, d: float, limit: float) -> str:
    return (f'\n    <plugin filename="gz-sim-joint-position-controller-system" '
            f'name="gz::sim::systems::JointPositionController"><joint_name>{joint}</joint_name>'
            f"<p_gain>{p:g}</p_gain><d_gain>{d:g}</d_gain><cmd_max>{limit:g}</cmd_max>"
            f"<cmd_min>{-limit:g}</cmd_min></plugin>")


def _plungers() -> str:
    tx, ty, tz = TOOL_HOME
    out = []
    soft = (60.0, 4.0)  # N/m, N*s/m: the plunger slide
    tilt = (6.0, 0.3)  # N*m/rad, N*m*s/rad: the gimbals
    bellows = (400.0, 8.0)
    small = _inertial(0.1, 4e-4)
    # gimbals and cup: 0.1 kg each, with a rotational inertia about ten times a solid part's.
    # With 4e-4 the tilt joints had ~1e-3 kg m^2 against stiff cup contacts at a 2 ms step and a
    # tool pressed into a wall diverged (truck B at 91 s, C at 544 s); with 0.01 kg m^2 on each
    # tilt joint the same state ran on (this gives them 0.010-0.015).
    swivel = _inertial(0.1, 5e-3)
    for name, (y, z) in zip(plunger_names(), plunger_offsets()):
        x0 = tx + PLATE_X
        tube = _box("tube", (TUBE_LENGTH, 0.02, 0.02), f"{TUBE_LENGTH / 2:g} 0 0 0 0 0",
                    collide=False)
        out.append(_link(f"{name}_tube", (x0, ty + y, tz + z, 0, 0, 0), tube, small))
        out.append(_joint(f"{name}_slide", "prismatic", "plate", f"{name}_tube", "1 0 0",
                          -0.08, 0.0, spring=soft))
        gx = x0 + TUBE_LENGTH
        out.append(_link(f"{name}_gimbal_a", (gx, ty + y, tz + z, 0, 0, 0), "", swivel))
        out.append(_joint(f"{name}_tilt_y", "revolute", f"{name}_tube", f"{name}_gimbal_a", "0 1 0",
                          -0.3, 0.3, spring=tilt))
        out.append(_link(f"{name}_gimbal_b", (gx, ty + y, tz + z, 0, 0, 0), "", swivel))
        out.append(_joint(f"{name}_tilt_z", "revolute", f"{name}_gimbal_a", f"{name}_gimbal_b",
                          "0 0 1", -0.3, 0.3, spring=tilt))
        cup_geo = (f"<geometry><cylinder><radius>{CUP_RADIUS:g}</radius><length>{CUP_LENGTH:g}"
                   f"</length></cylinder></geometry>")
        cup = (f'<collision name="cup"><pose>0 0 0 0 1.5707963 0</pose>{cup_geo}'
               f"<surface><friction><ode><mu>1.0</mu></ode></friction></surface></collision>"
               f'<visual name="cup"><pose>0 0 0 0 1.5707963 0</pose>{cup_geo}</visual>')
        sensor = (f'<sensor name="proximity" type="ray"><pose>{CUP_LENGTH / 2:g} 0 0 0 0 0</pose>'
                  f"<update_rate>{SENSOR_RATE:g}</update_rate><ray><scan><horizontal><samples>1"
                  f"</samples><min_angle>0</min_angle><max_angle>0</max_angle></horizontal></scan>"
                  f"<range><min>0.0</min><max>{SENSOR_RANGE:g}</max></range></ray></sensor>")
        script = ('<plugin filename="sim_fidelity_suction" name="suction">'
                  "<sensor>proximity</sensor><grip_distance>0.01</grip_distance></plugin>")
        out.append(_link(f"{name}_cup", (gx + CUP_OFFSET, ty + y, tz + z, 0, 0, 0), cup,
                         swivel, sensor + script))
        out.append(_joint(f"{name}_bellows", "prismatic", f"{name}_gimbal_b", f"{name}_cup",
                          "1 0 0", -0.015, 0.0, spring=bellows))
    return "".join(out)


def model_sdf() -> str:
    tx, ty, tz = TOOL_HOME
    hx, hy, hz = NOSE_HINGE
    slope = nose_slope()
    links = [
        _link("base", (0, 0, 0.27, 0, 0, 0),
              _box("chassis", (2.0, BELT_WIDTH + 0.1, 0.42)), _inertial(800, 100, 300, 300)),
        _link("body_conveyor", (0.0, 0, BELT_TOP - 0.01, 0, 0, 0),
              _box("belt", (2.0, BELT_WIDTH, 0.02), mu=0.8)
              + _box("rail_left", (1.9, 0.03, 0.12), f"0 {BELT_WIDTH / 2 + 0.03:g} 0.06 0 0 0",
                     collide=False)
              + _box("rail_right", (1.9, 0.03, 0.12), f"0 {-BELT_WIDTH / 2 - 0.03:g} 0.06 0 0 0",
                     collide=False),
              _inertial(50, 5)),
        _link("carriage", (tx, ty, tz, 0, 0, 0),
              _box("column", (0.12, 0.12, 1.0), "-0.2 0 -0.3 0 0 0", collide=False),
              _inertial(30, 2)),
        _link("boom", (tx, ty, tz, 0, 0, 0),
              _box("beam", (0.8, 0.1, 0.1), "-0.45 0 0.35 0 0 0", collide=False), _inertial(20, 1)),
        _link("slider", (tx, ty, tz, 0, 0, 0), "", _inertial(10, 0.5)),
        _link("wrist", (tx, ty, tz, 0, 0, 0), "", _inertial(5, 0.2)),
        _link("tool", (tx, ty, tz, 0, 0, 0), _box("frame", (0.05, 1.0, 0.6)), _inertial(15, 1)),
        _link("plate", (tx + PLATE_X, ty, tz, 0, 0, 0),
              _box("plate", (0.01, 0.95, 0.55), collide=False), _inertial(5, 0.3)),
        _link("nose_mount", (hx, hy, hz, 0, 0, 0),
              _box("bridge", (BRIDGE_LENGTH, BELT_WIDTH, 0.02),
                   f"{-BRIDGE_LENGTH / 2:g} 0 {BRIDGE_TOP - 0.01 - hz:g} 0 0 0", mu=0.8),
              _inertial(20, 1)),
        _link("nose", (hx, hy, hz, 0, 0, 0),
              _box("belt", (NOSE_LENGTH, NOSE_WIDTH, NOSE_THICKNESS),
                   f"{NOSE_LENGTH / 2 * math.cos(slope):.6g} 0 "
                   f"{-NOSE_LENGTH / 2 * math.sin(slope):.6g} 0 {slope:.6g} 0", mu=0.8),
              _inertial(60, 5)),
    ]
    tip_x = hx + NOSE_LENGTH * math.cos(slope)
    for side, sign in (("left", 1), ("right", -1)):
        paddle = _box("paddle", (0.45, 0.04, 0.2), "0.2 0 0.1 0 0 0")
        pose = (tip_x - 0.45, sign * (NOSE_WIDTH / 2 + 0.03), NOSE_TIP_Z + 0.01, 0, 0, 0)
        links.append(_link(f"sweeper_{side}", pose, paddle, _inertial(5, 0.2)))
    joints = [_joint("drive", "prismatic", "world", "base", "1 0 0", -5.0, 20.0, effort=DRIVE[3]),
              _joint("body_conveyor_mount", "fixed", "base", "body_conveyor", "1 0 0", 0, 0)]
    joints += [_joint(n, t, p, c, a, lo, hi, effort=f)
               for n, t, p, c, a, lo, hi, _, _, f in ACTIVE_JOINTS]
    controllers = [_controller(*DRIVE)]
    controllers += [_controller(n, kp, kd, f) for n, _, _, _, _, _, _, kp, kd, f in ACTIVE_JOINTS]
    conveyor = ('\n    <plugin filename="sim_fidelity_conveyor" name="conveyor">'
                "<belt><link>body_conveyor</link><collision>belt</collision><speed>0.8</speed>"
                "<direction>-1 0 0</direction></belt>"
                "<belt><link>nose_mount</link><collision>bridge</collision><speed>0.8</speed>"
                "<direction>-1 0 0</direction></belt>"
                "<belt><link>nose</link><collision>belt</collision><speed>1.2</speed>"
                f"<direction>-{math.cos(slope):.6f} 0 {math.sin(slope):.6f}</direction></belt>"
                f"<unload_x>{BELT_REAR - 0.05:g}</unload_x></plugin>")
    return f"""<?xml version="1.0"?>
<!-- Generated by sim_fidelity/world_generators/unloader.py; do not edit. -->
<sdf version="1.9">
  <model name="unloader">{''.join(links)}{_plungers()}{''.join(joints)}\
{''.join(controllers)}{conveyor}
  </model>
</sdf>
"""


MODEL_CONFIG = """<?xml version="1.0"?>
<model>
  <name>unloader</name>
  <version>1.0</version>
  <sdf version="1.9">model.sdf</sdf>
  <description>Truck-unloading robot (paper 000, Sec. 4): mobile base with conveyors, an arm with
  a 45-plunger suction tool and a sweeping nose. \
Generated by sim_fidelity/world_generators/unloader.py.</description>
</model>
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output-dir", default=str(data_dir("models") / "unloader"))
    args = parser.parse_args(argv)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.sdf").write_text(model_sdf())
    (out / "model.config").write_text(MODEL_CONFIG)


if __name__ == "__main__":
    main()
