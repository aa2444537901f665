"""Generator of the PR2-class model (``models/pr2``) and the ``pr2`` and ``dual_pr2`` worlds.

Paper 002's single-complex-model scenario: a PR2 on a flat ground plane. The kinematic and
inertial values (link origins, masses, centres of mass, inertia tensors, joint types, axes, limits
and damping) are the PR2's published ones, as in Willow Garage's ``pr2_description`` URDF and the
Gazebo model converted from it; the collision geometry is ours: boxes, cylinders, capsules and
spheres roughly enclosing each link instead of the STL meshes. 48 links, 47 joints: Gazebo's model
adds 11 loop-closing joints (the torso's screw, per gripper two screws, two parallel-link tips
and the fingertip slider) that this project's SDF loader refuses (kinematic loops); see
``models/pr2/README.md``.

    python -m sim_fidelity.world_generators.pr2   # writes models/pr2 and worlds/{pr2,dual_pr2}.sdf
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..data import data_dir
from .sdf_text import physics_1ms_block

# name: (origin xyz in the model frame, mass, com xyz in the link frame,
#        inertia ixx ixy ixz iyy iyz izz)
_CASTER_I = (0.012412, -0.000712, 0.000503, 0.015218, -0.000004, 0.011764)
_WHEEL_R_I = (0.012412, 0.000712, 0.000503, 0.015218, 0.000004, 0.011764)
_FINGER_L_I = (0.000078, 0.000001, -0.000010, 0.000197, -0.000003, 0.000181)
_FINGER_R_I = (0.000077, -0.000002, -0.000008, 0.000198, 0.000002, 0.000181)
_TIP_L_I = (0.000008, 0.000006, 0.0, 0.000010, 0.0, 0.000015)
_TIP_R_I = (0.000008, -0.000006, 0.0, 0.000010, 0.0, 0.000015)
_SMALL_I = (0.001, 0.0, 0.0, 0.001, 0.0, 0.001)
_SCREW_I = (0.0001, 0.0, 0.0, 0.0001, 0.0, 0.0001)

Inertial = tuple[tuple[float, float, float], float, tuple[float, float, float], tuple]


def _links() -> dict[str, Inertial]:
    links: dict[str, Inertial] = {
        "base_footprint": ((0, 0, 0), 118.001, (-0.062421, 0, 0.201365),
                           (8.43173, -0.00972, 1.90157, 8.53305, -0.00738, 3.78747)),
    }
    for c, (x, y) in {"bl": (-1, 1), "br": (-1, -1), "fl": (1, 1), "fr": (1, -1)}.items():
        cx, cy = 0.2246 * x, 0.2246 * y
        links[f"{c}_caster_rotation_link"] = ((cx, cy, 0.0792), 3.47308, (0, 0, 0.07), _CASTER_I)
        links[f"{c}_caster_l_wheel_link"] = ((cx, cy + 0.049, 0.0792), 0.44036, (0, 0, 0),
                                             _CASTER_I)
        links[f"{c}_caster_r_wheel_link"] = ((cx, cy - 0.049, 0.0792), 0.44036, (0, 0, 0),
                                             _WHEEL_R_I if c == "bl" else _CASTER_I)
    links.update({
        "torso_lift_link": ((-0.05, 0, 0.790675), 36.449, (-0.099499, -0.000004, -0.086764),
                            (2.79233, 0.00428, -0.160631, 2.52106, 0.029689, 0.536551)),
        "torso_lift_motor_screw_link": ((-0.15, 0, 0.751), 1.0, (0, 0, 0), _SMALL_I),
        "head_pan_link": ((-0.06707, 0, 1.17213), 6.339, (0.010907, 0.031693, 0.090507),
                          (0.032498, 0.000636, 0.002585, 0.046546, -0.002453, 0.057653)),
        "head_tilt_link": ((0.00093, 0, 1.17213), 5.319, (-0.005151, -0.014635, 0.072819),
                           (0.126134, 0.000237, 0.011881, 0.165102, 0.001606, 0.166947)),
        "laser_tilt_mount_link": ((0.04893, 0, 1.01768), 0.592, (-0.001134, 0.001667, -0.007067),
                                  (0.001296, 0.000023, 0.000037, 0.001086, 0.000035, 0.000895)),
    })
    for side, s in (("l", 1.0), ("r", -1.0)):
        y = 0.188 * s
        arm = {
            "shoulder_pan_link": ((-0.05, y, 0.790675), 25.7993, (-0.001201, 0.024513, -0.098231),
                                  (0.866179, -0.060865, -0.121181, 0.874217, -0.058866, 0.273538)),
            "shoulder_lift_link": ((0.05, y, 0.790675), 2.74988, (0.02195, -0.02664, -0.03127),
                                   (0.021056, 0.004967, -0.001948, 0.021272, 0.001104, 0.019758)),
            "upper_arm_roll_link": ((0.05, y, 0.790675), 6.11769,
                                    (0.210551, 0.016309, -0.000561) if s > 0
                                    else (0.210482, -0.015945, -0.000197),
                                    (0.025306, -0.003393, 0.000608, 0.084737, -0.0002, 0.086016)
                                    if s > 0 else
                                    (0.025378, 0.003757, -0.000709, 0.084737, -0.000179,
                                     0.086088)),
            "elbow_flex_link": ((0.45, y, 0.790675), 1.90327, (0.01014, 0.00032, -0.01211),
                                (0.003465, 0.000041, 0.000432, 0.004416, -0.00004, 0.003592)),
            "forearm_roll_link": ((0.45, y, 0.790675), 2.68968, (0.180727, -0.000163, -0.008583),
                                  (0.014668, 0.000052, 0.000656, 0.026279, -0.000013, 0.027775)),
            "wrist_flex_link": ((0.771, y, 0.790675), 0.61402, (-0.00157, 0, -0.00075),
                                (0.000652, 0, 0.000003, 0.000198, 0, 0.000645)),
            "wrist_roll_link": ((0.771, y, 0.790675), 0.68107, (0.056408, 0.000451, -0.001014),
                                (0.011352, -0.000016, -0.000001, 0.011677, -0.000001, 0.011866)),
            "gripper_l_finger_link": ((0.84791, y + 0.01, 0.790675), 0.17126,
                                      (0.03598, 0.0173, -0.00164), _FINGER_L_I),
            "gripper_r_finger_link": ((0.84791, y - 0.01, 0.790675), 0.17389,
                                      (0.03576, -0.01736, -0.00095), _FINGER_R_I),
            "gripper_l_finger_tip_link": ((0.93928, y + 0.01495, 0.790675), 0.04419,
                                          (0.00423, 0.00284, 0), _TIP_L_I),
            "gripper_r_finger_tip_link": ((0.93928, y - 0.01495, 0.790675), 0.04419,
                                          (0.00423, -0.00284, 0), _TIP_R_I),
            "gripper_motor_slider_link": ((0.93928, y, 0.790675), 0.01, (0, 0, 0), _SMALL_I),
            "gripper_motor_screw_link": ((0.93928, y, 0.790675), 0.01, (0, 0, 0), _SCREW_I),
            "gripper_l_parallel_link": ((0.82991, y + 0.031, 0.790675), 0.17126,
                                        (0.03598, 0.0173, -0.00164), _FINGER_L_I),
            "gripper_r_parallel_link": ((0.82991, y - 0.031, 0.790675), 0.17389,
                                        (0.03576, -0.01736, -0.00095), _FINGER_R_I),
        }
        links.update({f"{side}_{k}": v for k, v in arm.items()})
    return links


# Collision shapes (ours): link -> [(kind, size, pose xyz rpy in the link frame)]
_Z = (0.0, 0.0, 0.0)
_ALONG_X = (0.0, 1.5708, 0.0)  # capsule/cylinder axis along the link's x
_ALONG_Y = (1.5708, 0.0, 0.0)


def _collisions() -> dict[str, list[tuple[str, tuple, tuple, tuple]]]:
    shapes: dict[str, list[tuple[str, tuple, tuple, tuple]]] = {
        "base_footprint": [("box", (0.65, 0.65, 0.2), (0, 0, 0.2), _Z),
                           ("box", (0.05, 0.37, 0.3), (-0.29, 0, 0.851), _Z)],
        "torso_lift_link": [("box", (0.3, 0.6, 0.35), (-0.1, 0, -0.1), _Z)],
        "head_pan_link": [("cylinder", (0.1, 0.12), (0.01, 0, 0.06), _Z)],
        "head_tilt_link": [("box", (0.18, 0.3, 0.14), (0, 0, 0.07), _Z)],
        "laser_tilt_mount_link": [("box", (0.06, 0.06, 0.08), (0, 0, 0), _Z)],
    }
    for c in ("bl", "br", "fl", "fr"):
        shapes[f"{c}_caster_rotation_link"] = [("box", (0.08, 0.08, 0.08), (0, 0, 0.07), _Z)]
        for w in ("l", "r"):
            shapes[f"{c}_caster_{w}_wheel_link"] = [("cylinder", (0.074792, 0.034), _Z, _ALONG_Y)]
    for side in ("l", "r"):
        shapes.update({
            f"{side}_shoulder_pan_link": [("cylinder", (0.11, 0.4), (0, 0, -0.12), _Z)],
            f"{side}_shoulder_lift_link": [("sphere", (0.09,), (0.02, 0, 0), _Z)],
            f"{side}_upper_arm_roll_link": [("capsule", (0.06, 0.26), (0.2, 0, 0), _ALONG_X)],
            f"{side}_elbow_flex_link": [("sphere", (0.06,), _Z, _Z)],
            f"{side}_forearm_roll_link": [("capsule", (0.05, 0.2), (0.16, 0, 0), _ALONG_X)],
            f"{side}_wrist_flex_link": [("sphere", (0.035,), _Z, _Z)],
            f"{side}_wrist_roll_link": [("box", (0.08, 0.09, 0.05), (0.04, 0, 0), _Z)],
            f"{side}_gripper_l_finger_link": [("box", (0.09, 0.012, 0.02), (0.045, 0.005, 0), _Z)],
            f"{side}_gripper_r_finger_link": [("box", (0.09, 0.012, 0.02), (0.045, -0.005, 0),
                                               _Z)],
            f"{side}_gripper_l_finger_tip_link": [("box", (0.03, 0.01, 0.02), (0.012, 0, 0), _Z)],
            f"{side}_gripper_r_finger_tip_link": [("box", (0.03, 0.01, 0.02), (0.012, 0, 0), _Z)],
        })
    return shapes


INF = None  # a continuous joint: no limits
# (name, type, parent, child, axis, (lower, upper) or INF, damping)
Joint = tuple[str, str, str, str, tuple[float, float, float], "tuple[float, float] | None", float]


def _joints() -> list[Joint]:
    joints: list[Joint] = []
    for c in ("bl", "br", "fl", "fr"):
        rot = f"{c}_caster_rotation_link"
        joints += [(f"{c}_caster_rotation_joint", "continuous", "base_footprint", rot,
                    (0, 0, 1), INF, 0.0),
                   (f"{c}_caster_l_wheel_joint", "continuous", rot, f"{c}_caster_l_wheel_link",
                    (0, 1, 0), INF, 0.0),
                   (f"{c}_caster_r_wheel_joint", "continuous", rot, f"{c}_caster_r_wheel_link",
                    (0, 1, 0), INF, 0.0)]
    joints += [
        ("torso_lift_joint", "prismatic", "base_footprint", "torso_lift_link", (0, 0, 1),
         (0.0, 0.33), 0.0),
        ("torso_lift_motor_screw_joint", "continuous", "base_footprint",
         "torso_lift_motor_screw_link", (0, 0, 1), INF, 0.0001),
        ("head_pan_joint", "revolute", "torso_lift_link", "head_pan_link", (0, 0, 1),
         (-3.006993, 3.006993), 2.0),
        ("head_tilt_joint", "revolute", "head_pan_link", "head_tilt_link", (0, 1, 0),
         (-0.471237, 1.39626), 10.0),
        ("laser_tilt_mount_joint", "revolute", "torso_lift_link", "laser_tilt_mount_link",
         (0, 1, 0), (-0.7854, 1.48353), 0.008),
    ]
    for side in ("l", "r"):
        n = f"{side}_{{}}".format
        pan = (-0.714602, 2.285404) if side == "l" else (-2.285404, 0.714602)
        roll = (-0.8, 3.900008) if side == "l" else (-3.900008, 0.8)
        joints += [
            (n("shoulder_pan_joint"), "revolute", "torso_lift_link", n("shoulder_pan_link"),
             (0, 0, 1), pan, 10.0),
            (n("shoulder_lift_joint"), "revolute", n("shoulder_pan_link"),
             n("shoulder_lift_link"), (0, 1, 0), (-0.523601, 1.3963), 10.0),
            (n("upper_arm_roll_joint"), "revolute", n("shoulder_lift_link"),
             n("upper_arm_roll_link"), (1, 0, 0), roll, 0.1),
            (n("elbow_flex_joint"), "revolute", n("upper_arm_roll_link"), n("elbow_flex_link"),
             (0, 1, 0), (-2.321305, 0.0), 1.0),
            (n("forearm_roll_joint"), "continuous", n("elbow_flex_link"), n("forearm_roll_link"),
             (1, 0, 0), INF, 0.1),
            (n("wrist_flex_joint"), "revolute", n("forearm_roll_link"), n("wrist_flex_link"),
             (0, 1, 0), (-2.180004, 0.0), 0.1),
            (n("wrist_roll_joint"), "continuous", n("wrist_flex_link"), n("wrist_roll_link"),
             (1, 0, 0), INF, 0.1),
            (n("gripper_l_finger_joint"), "revolute", n("wrist_roll_link"),
             n("gripper_l_finger_link"), (0, 0, 1), (0.0, 0.548), 0.02),
            (n("gripper_l_finger_tip_joint"), "revolute", n("gripper_l_finger_link"),
             n("gripper_l_finger_tip_link"), (0, 0, -1), (0.0, 0.548), 0.001),
            (n("gripper_r_finger_joint"), "revolute", n("wrist_roll_link"),
             n("gripper_r_finger_link"), (0, 0, -1), (0.0, 0.548), 0.02),
            (n("gripper_r_finger_tip_joint"), "revolute", n("gripper_r_finger_link"),
             n("gripper_r_finger_tip_link"), (0, 0, 1), (0.0, 0.548), 0.001),
            (n("gripper_motor_slider_joint"), "prismatic", n("wrist_roll_link"),
             n("gripper_motor_slider_link"), (1, 0, 0), (-0.1, 0.1), 0.0),
            (n("gripper_motor_screw_joint"), "continuous", n("gripper_motor_slider_link"),
             n("gripper_motor_screw_link"), (0, 1, 0), INF, 0.0001),
            # Gazebo's model roots the parallel links at the wrist (parent and child swapped
            # there, which the tree here cannot express): the same hinge, as a tree joint
            (n("gripper_l_parallel_root_joint"), "continuous", n("wrist_roll_link"),
             n("gripper_l_parallel_link"), (0, 0, -1), INF, 0.2),
            (n("gripper_r_parallel_root_joint"), "continuous", n("wrist_roll_link"),
             n("gripper_r_parallel_link"), (0, 0, 1), INF, 0.2),
        ]
    return joints


def _f(values) -> str:
    return " ".join(f"{v:.6g}" for v in values)


def _link_sdf(name: str, inertial: Inertial, shapes) -> str:
    origin, mass, com, (ixx, ixy, ixz, iyy, iyz, izz) = inertial
    out = [f'    <link name="{name}">',
           f"      <pose>{_f(origin)} 0 0 0</pose>",
           f"      <inertial><pose>{_f(com)} 0 0 0</pose><mass>{mass:.6g}</mass>",
           f"        <inertia><ixx>{ixx:.6g}</ixx><ixy>{ixy:.6g}</ixy><ixz>{ixz:.6g}</ixz>"
           f"<iyy>{iyy:.6g}</iyy><iyz>{iyz:.6g}</iyz><izz>{izz:.6g}</izz></inertia>",
           "      </inertial>"]
    for i, (kind, size, xyz, rpy) in enumerate(shapes):
        if kind == "box":
            geom = f"<box><size>{_f(size)}</size></box>"
        elif kind == "sphere":
            geom = f"<sphere><radius>{size[0]:.6g}</radius></sphere>"
        else:
            geom = (f"<{kind}><radius>{size[0]:.6g}</radius><length>{size[1]:.6g}</length>"
                    f"</{kind}>")
        pose = f"<pose>{_f(xyz)} {_f(rpy)}</pose>"
        for tag in ("collision", "visual"):
            out.append(f'      <{tag} name="{tag}_{i}">{pose}<geometry>{geom}</geometry></{tag}>')
    out.append("    </link>")
    return "\n".join(out)


def _joint_sdf(j: Joint) -> str:
    name, jtype, parent, child, axis, limits, damping = j
    limit = ""
    if limits is not None:
        limit = f"<limit><lower>{limits[0]:.6g}</lower><upper>{limits[1]:.6g}</upper></limit>"
    return (f'    <joint name="{name}" type="{jtype}"><parent>{parent}</parent>'
            f"<child>{child}</child>\n      <axis><xyz>{_f(axis)}</xyz>{limit}"
            f"<dynamics><damping>{damping:.6g}</damping></dynamics></axis>\n    </joint>")


def model_sdf() -> str:
    """SDF (1.7) text of the PR2-class model."""
    links, shapes = _links(), _collisions()
    body = "\n".join(_link_sdf(n, v, shapes.get(n, [])) for n, v in links.items())
    joints = "\n".join(_joint_sdf(j) for j in _joints())
    return f"""<?xml version="1.0"?>
<!-- Generated by sim_fidelity.world_generators.pr2; do not edit by hand. PR2 kinematic and
     inertial values as published (pr2_description); collision shapes our own primitives. -->
<sdf version="1.7">
  <model name="pr2">
{body}
{joints}
  </model>
</sdf>
"""


MODEL_CONFIG = """<?xml version="1.0"?>
<model>
  <name>pr2</name>
  <version>1.0</version>
  <sdf version="1.7">model.sdf</sdf>
  <author><name>sim_fidelity</name></author>
  <description>
    A PR2-class mobile manipulator: the PR2's published link origins, masses, centres of mass,
    inertias, joint axes, limits and damping; primitive collision shapes. 48 links, 47 joints
    (Gazebo's 11 loop-closing joints left out). See README.md. Generated by
    sim_fidelity.world_generators.pr2.
  </description>
</model>
"""


def world_sdf(name: str, placements: list[tuple[str, float, float]],
              island_threads: int = 0) -> str:
    """A world of PR2s at ``(name, x, y)`` on a ground plane, 1 ms step."""
    robots = "".join(f"""
    <include>
      <uri>model://pr2</uri>
      <name>{n}</name>
      <pose>{x:.6g} {y:.6g} 0 0 0 0</pose>
    </include>""" for n, x, y in placements)
    return f"""<?xml version="1.0"?>
<!-- Generated by sim_fidelity.world_generators.pr2; do not edit by hand. Paper 002's
     {name}.world: {len(placements)} PR2(s) on a flat ground plane, not interacting. -->
<sdf version="1.7">
  <world name="{name}">
{physics_1ms_block(island_threads=island_threads)}    <model name="ground_plane">
      <static>true</static>
      <link name="link">
        <collision name="collision">
          <geometry><plane><normal>0 0 1</normal><size>100 100</size></plane></geometry>
          <surface><friction><ode><mu>100</mu><mu2>50</mu2></ode></friction></surface>
        </collision>
      </link>
    </model>{robots}
  </world>
</sdf>
"""


WORLDS = {"pr2": [("pr2", 0.0, 0.0)],
          "dual_pr2": [("pr2", 0.0, -1.5), ("pr2_2", 0.0, 1.5)]}


def write(models_dir: Path, worlds_dir: Path) -> list[Path]:
    """Write the model folder and both worlds; returns the files written."""
    folder = models_dir / "pr2"
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "model.sdf", folder / "model.config"]
    written[0].write_text(model_sdf())
    written[1].write_text(MODEL_CONFIG)
    worlds_dir.mkdir(parents=True, exist_ok=True)
    for name, placements in WORLDS.items():
        path = worlds_dir / f"{name}.sdf"
        path.write_text(world_sdf(name, placements))
        written.append(path)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, default=data_dir("models"))
    ap.add_argument("--worlds", type=Path, default=data_dir("worlds"))
    args = ap.parse_args(argv)
    for p in write(args.models, args.worlds):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
