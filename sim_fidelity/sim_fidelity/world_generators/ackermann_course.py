"""The two fields of paper 001's waypoint course (section V): design and deployment.

* ``worlds/ackermann_design.sdf``: flat open ground, the three waypoints marked by visual-only
  posts, the UGV (``models/traxxas_stampede``, included as ``ugv``) at the first waypoint facing
  north;
* ``worlds/ackermann_deploy.sdf``: the same course standing in for the real field: a steep ramp
  across the leg from (5, 15) to (-5, 15), grass (lower friction, small bumps scattered over the
  course) and the uncalibrated actuation of the real platform (a coarse map from commanded to
  motor speed and a steering offset, as ``sim_fidelity:`` elements of the vehicle's Ackermann
  plugin, which Gazebo ignores). The vehicle is written inline so that those elements sit in its
  plugin; the design field knows none of this.

Both worlds carry the course's GPS origin as ``<spherical_coordinates>`` and Gazebo's IMU and
NavSat systems, so Gazebo loads them too. Regenerate the checked-in worlds with::

    python -m sim_fidelity.world_generators.ackermann_course
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data import data_dir
from ..ugv.course import MODEL, ORIGIN, WAYPOINTS, WORLD_FILES
from .errors import WorldGenerationError

STEP_SIZE = 0.002  # s; the vehicle's contacts are stable at this step (test_ugv_vehicle.py)
START_YAW = math.pi / 2  # facing north, along the first leg
START_HEIGHT = 0.08  # m: the wheels' axle height (0.0725) and a few mm to settle
DESIGN_MU = 1.0  # short mown grass / packed ground, rubber tyres
GRASS_MU = 0.6


@dataclass(frozen=True)
class Ramp:
    """A trapezoid ramp across the x axis: up, flat top, down; ``centre_x`` is the top's middle."""

    centre_x: float = 0.0
    centre_y: float = WAYPOINTS[1][1]
    height: float = 0.25  # m
    slope: float = math.radians(22.0)
    top: float = 0.6  # m, length of the flat top along x
    width: float = 4.0  # m, across the course (along y)


ESC_STEPS = (0.5, 1.0, 1.5, 2.0)  # m/s the throttle table's PWM steps were measured to give
ESC_DEADBAND = 0.02  # m/s: commands below it are neutral PWM (a stop)
BATTERY_GAIN = 7.4 / 8.4  # a 2S LiPo at nominal voltage against the full charge of the table


def _esc_map(steps: tuple[float, ...], gain: float, deadband: float
             ) -> tuple[tuple[float, float], ...]:
    """The Arduino's throttle table as a command -> motor map: any command past the deadband
    takes at least the lowest PWM step (the lowest that moved the vehicle when the table was
    made), else the nearest step; the motor gives ``gain`` times the step's tabled speed."""
    edges = (deadband,) + tuple((a + b) / 2 for a, b in zip(steps, steps[1:]))
    return ((0.0, 0.0),) + tuple((round(e, 6), round(gain * m, 6))
                                 for e, m in zip(edges, steps))


@dataclass(frozen=True)
class Actuation:
    """The deployed vehicle's uncalibrated actuation (paper 001, section V-B: the map from
    PWM to the software's speed and steering "established empirically and very coarsely"):
    a throttle table of four PWM steps, measured once on a fully charged battery (so the motor
    turns slower by the battery's voltage ratio in use), and a steering trim off centre."""

    speed_map: tuple[tuple[float, float], ...] = _esc_map(ESC_STEPS, BATTERY_GAIN, ESC_DEADBAND)
    steering_offset: float = 0.05  # rad (about 3 degrees), a linkage trimmed off centre


def _spherical() -> str:
    return f"""
    <spherical_coordinates>
      <surface_model>EARTH_WGS84</surface_model>
      <world_frame_orientation>ENU</world_frame_orientation>
      <latitude_deg>{ORIGIN.latitude}</latitude_deg>
      <longitude_deg>{ORIGIN.longitude}</longitude_deg>
      <elevation>{ORIGIN.altitude}</elevation>
      <heading_deg>0</heading_deg>
    </spherical_coordinates>"""


def _systems() -> str:
    """Gazebo's systems the worlds need there (our engine keeps them as plugin records)."""
    return "".join(f'\n    <plugin filename="gz-sim-{f}-system" name="gz::sim::systems::{n}"/>'
                   for f, n in (("physics", "Physics"), ("user-commands", "UserCommands"),
                                ("scene-broadcaster", "SceneBroadcaster"), ("imu", "Imu"),
                                ("navsat", "NavSat")))


def _ground(mu: float) -> str:
    return f"""
    <model name="ground_plane">
      <static>true</static>
      <link name="link">
        <collision name="collision">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <surface><friction><ode><mu>{mu:g}</mu><mu2>{mu:g}</mu2></ode></friction></surface>
        </collision>
        <visual name="visual">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <material><diffuse>0.3 0.6 0.25 1</diffuse></material>
        </visual>
      </link>
    </model>"""


def _markers() -> str:
    """One static model per waypoint: a flat disc and a post, visual only (nothing to hit)."""
    out = ""
    for i, (x, y) in enumerate(WAYPOINTS):
        out += f"""
    <model name="waypoint_{i}">
      <static>true</static>
      <pose>{x:g} {y:g} 0 0 0 0</pose>
      <link name="link">
        <visual name="disc">
          <pose>0 0 0.002 0 0 0</pose>
          <geometry><cylinder><radius>0.3</radius><length>0.004</length></cylinder></geometry>
          <material><diffuse>1 0.9 0 1</diffuse></material>
        </visual>
        <visual name="post">
          <pose>0 0 0.5 0 0 0</pose>
          <geometry><cylinder><radius>0.02</radius><length>1</length></cylinder></geometry>
          <material><diffuse>1 0.5 0 1</diffuse></material>
        </visual>
      </link>
    </model>"""
    return out


def _box(name: str, x: float, z: float, pitch: float, size: tuple[float, float, float],
         mu: float) -> str:
    sx, sy, sz = size
    geometry = f"<geometry><box><size>{sx:.6g} {sy:.6g} {sz:.6g}</size></box></geometry>"
    return f"""
        <collision name="{name}">
          <pose>{x:.6g} 0 {z:.6g} 0 {pitch:.6g} 0</pose>{geometry}
          <surface><friction><ode><mu>{mu:g}</mu><mu2>{mu:g}</mu2></ode></friction></surface>
        </collision>
        <visual name="{name}">
          <pose>{x:.6g} 0 {z:.6g} 0 {pitch:.6g} 0</pose>{geometry}
          <material><diffuse>0.55 0.45 0.3 1</diffuse></material>
        </visual>"""


def _ramp(ramp: Ramp, mu: float) -> str:
    """Two slabs whose top faces are the slopes and a box for the flat top, in one static model
    centred at ``(centre_x, centre_y)``; the slabs reach below the ground."""
    run = ramp.height / math.tan(ramp.slope)
    length = math.hypot(run, ramp.height)
    thick = 0.1
    half_top = ramp.top / 2
    parts = _box("top", 0.0, ramp.height / 2, 0.0, (ramp.top, ramp.width, ramp.height), mu)
    for name, sign in (("east_slope", 1.0), ("west_slope", -1.0)):
        # the slope's top face runs from (sign * (half_top + run), 0) to (sign * half_top, h)
        mid = np.array([sign * (half_top + run / 2), ramp.height / 2])
        normal = np.array([sign * math.sin(ramp.slope), math.cos(ramp.slope)])
        centre = mid - normal * thick / 2
        parts += _box(name, centre[0], centre[1], sign * ramp.slope,
                      (length, ramp.width, thick), mu)
    return f"""
    <model name="ramp">
      <static>true</static>
      <pose>{ramp.centre_x:g} {ramp.centre_y:g} 0 0 0 0</pose>
      <link name="link">{parts}
      </link>
    </model>"""


def _bumps(seed: int, count: int, mu: float) -> str:
    """Small bumps (sphere caps 1-2.5 cm high) over the course's area, one static model."""
    rng = np.random.default_rng(seed)
    xy = np.column_stack([rng.uniform(-8.0, 8.0, count), rng.uniform(-3.0, 19.0, count)])
    radius = rng.uniform(0.06, 0.12, count)
    height = rng.uniform(0.01, 0.025, count)
    parts = "".join(f"""
        <collision name="bump_{i}">
          <pose>{x:.4f} {y:.4f} {h - r:.4f} 0 0 0</pose>
          <geometry><sphere><radius>{r:.4f}</radius></sphere></geometry>
          <surface><friction><ode><mu>{mu:g}</mu><mu2>{mu:g}</mu2></ode></friction></surface>
        </collision>""" for i, ((x, y), r, h) in enumerate(zip(xy, radius, height)))
    return f"""
    <model name="grass_bumps">
      <static>true</static>
      <link name="link">{parts}
      </link>
    </model>"""


def _vehicle_inline(actuation: Actuation) -> str:
    """The UGV model written out with the deployment's calibration in its Ackermann plugin."""
    text = (data_dir("models") / "traxxas_stampede" / "model.sdf").read_text()
    match = re.search(r"<model name=\"traxxas_stampede\">(.*)</model>", text, re.S)
    if match is None or "</plugin>" not in match.group(1):
        raise WorldGenerationError("ackermann_course: models/traxxas_stampede/model.sdf has no "
                                   "<model> with an Ackermann <plugin>")
    pairs = "  ".join(f"{c:g} {m:g}" for c, m in actuation.speed_map)
    calibration = (f"  <sim_fidelity:speed_map>{pairs}</sim_fidelity:speed_map>\n"
                   f"      <sim_fidelity:steering_offset>{actuation.steering_offset:g}"
                   "</sim_fidelity:steering_offset>\n    </plugin>")
    body = textwrap.indent(match.group(1).replace("</plugin>", calibration, 1).rstrip(), "  ")
    return f'\n    <model name="{MODEL}">\n      <pose>{_start_pose()}</pose>{body}\n    </model>'


def _start_pose() -> str:
    x, y = WAYPOINTS[0]
    return f"{x:g} {y:g} {START_HEIGHT:g} 0 0 {START_YAW:.6f}"


def course_world(deploy: bool, seed: int = 0, bumps: int = 150, ramp: Ramp = Ramp(),
                 actuation: Actuation = Actuation()) -> str:
    """The SDF text of the design (``deploy=False``) or the deployment field."""
    if bumps < 0:
        raise WorldGenerationError(f"ackermann_course: bumps must be >= 0, got {bumps}")
    name = "ackermann_deploy" if deploy else "ackermann_design"
    if deploy:
        what = (f"deployment field: ramp {ramp.height:g} m high at {math.degrees(ramp.slope):g} "
                f"deg across x = {ramp.centre_x:g}, grass mu {GRASS_MU:g} with {bumps} bumps "
                f"(seed {seed}), uncalibrated actuation")
        scene = (_ground(GRASS_MU) + _ramp(ramp, GRASS_MU) + _bumps(seed, bumps, GRASS_MU)
                 + _markers() + _vehicle_inline(actuation))
    else:
        what = "design field: flat, open, mu 1"
        scene = _ground(DESIGN_MU) + _markers() + f"""
    <include>
      <uri>model://traxxas_stampede</uri>
      <name>{MODEL}</name>
      <pose>{_start_pose()}</pose>
    </include>"""
    return f"""<?xml version="1.0"?>
<!-- Generated by sim_fidelity.world_generators.ackermann_course: the {what}. -->
<sdf version="1.9" xmlns:sim_fidelity="https://github.com/sim_fidelity/sdf">
  <world name="{name}">
    <physics name="2ms" type="ode">
      <max_step_size>{STEP_SIZE}</max_step_size>
      <real_time_factor>1</real_time_factor>
      <real_time_update_rate>{round(1 / STEP_SIZE)}</real_time_update_rate>
    </physics>
    <gravity>0 0 -9.8</gravity>{_spherical()}{_systems()}{scene}
  </world>
</sdf>
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0, help="seed of the deployment field's bumps")
    p.add_argument("-o", "--output-dir", type=Path, default=data_dir("worlds"))
    args = p.parse_args(argv)
    for field, deploy in (("design", False), ("deploy", True)):
        out = args.output_dir / WORLD_FILES[field]
        out.write_text(course_world(deploy, seed=args.seed))
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
