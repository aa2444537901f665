"""Generates ``models/ur5e_hand3`` (model.config + model.sdf): a six-joint arm with the kinematics
and link masses of the UR5e and a three-finger hand, for the model conductor's Table 1 scene
(paper 003, Sec. 4.1) and the grasping scenarios that reuse it.

Kinematics: the standard Denavit-Hartenberg table Universal Robots publishes for the UR5e
(:data:`DH`), masses and centres of mass from the same table (:data:`LINK_MASS`, :data:`LINK_COM`).
Every link frame sits at its joint with the model frame's orientation at the zero configuration
(the arm stretched horizontally along -x, the tool pointing along -y); each joint's axis is the DH
``z_{i-1}`` axis written in that frame. The outer shape is ours: capsules and cylinders around the
DH segments with UR5e-like radii (the inertia of each link is that of a solid cylinder of its
mass around its longest segment; UR does not publish inertia tensors).

The hand (our design, sized like commercial three-finger grippers) is fixed to the flange: a palm
(box) and three fingers of two phalanges each, a thumb on one side and two fingers stacked on the
other, all curling about the hand's ``up`` axis (the tool y axis). Open (-0.35 rad) it surrounds an
upright cup of 8 cm or a ball of 6-7 cm; closed it wraps around them.

Every joint is driven by a ``gz::sim::systems::JointPositionController`` plugin; links have gravity
off (the servos hold them, as a robot controller compensates gravity); ``self_collide`` is on for
every link, so the arm's many geoms are in collision detection with each other, the table and
what the hand holds.

    python -m sim_fidelity.world_generators.ur5e_hand3 [-o DIR]

(default output: the package's ``models/ur5e_hand3/``).
"""
from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path

import numpy as np

from ..data import data_dir
from ..simulator.poses import quat_to_rpy

MODEL = "ur5e_hand3"
# UR5e standard DH: a [m], d [m], alpha [rad] per joint (Universal Robots, "DH parameters for
# calculations of kinematics and dynamics").
DH = np.array([[0.0, 0.1625, np.pi / 2], [-0.425, 0.0, 0.0], [-0.3922, 0.0, 0.0],
               [0.0, 0.1333, np.pi / 2], [0.0, 0.0997, -np.pi / 2], [0.0, 0.0996, 0.0]])
LINK_MASS = np.array([3.761, 8.058, 2.846, 1.37, 1.3, 0.365])  # kg, same table
LINK_COM = np.array([[0.0, -0.02561, 0.00193], [0.2125, 0.0, 0.11336], [0.15, 0.0, 0.0265],
                     [0.0, -0.0018, 0.01634], [0.0, 0.0018, 0.01634],
                     [0.0, 0.0, -0.001159]])  # m, in each DH link frame
BASE_MASS = 4.0  # kg: the base housing (not in the DH table)
ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")
LINKS = ("base", "shoulder", "upper_arm", "forearm", "wrist_1_link", "wrist_2_link",
         "wrist_3_link")
# position servos: p_gain [N m/rad], d_gain [N m s/rad], torque limit [N m] (the UR5e's rated
# joint torques: 150 N m base, shoulder and elbow, 28 N m the wrists)
ARM_GAINS = [(3000.0, 150.0, 150.0)] * 3 + [(600.0, 25.0, 28.0)] * 3
ARM_LIMIT = 2 * np.pi

# the hand, in the tool frame (a = approach = tool z, u = up = tool y, v = u x a = tool x)
PALM_DEPTH, PALM_WIDTH, PALM_HEIGHT = 0.05, 0.13, 0.09  # along a, v, u
COUPLING = (0.035, 0.025)  # radius, length of the flange coupling
FINGER_ROOT_V = 0.055  # |v| of the finger roots on the palm's front face
FINGER_U = 0.03  # the two fingers sit at u = +-FINGER_U, the thumb at u = 0
PROXIMAL, DISTAL, PHALANX_RADIUS = 0.055, 0.045, 0.011
FINGER_MASS = (0.06, 0.04)  # kg: proximal, distal
PALM_MASS = 0.9  # kg (palm with coupling)
FINGER_GAINS = (4.0, 0.04, 1.5)  # p_gain, d_gain, torque limit
FINGER_LIMITS = (-0.6, 1.6)  # rad
FINGER_OPEN = -0.35  # rad: proximal joints spread, the hand surrounds an 8 cm cup
FINGERS = ("thumb", "finger_a", "finger_b")  # (v side, u offset) below
FINGER_LAYOUT = {"thumb": (-1.0, 0.0), "finger_a": (1.0, FINGER_U), "finger_b": (1.0, -FINGER_U)}
FINGER_MU = 1.2
FACETS, CAP_RINGS = 24, 4  # resolution of the convex link shells (about 200 vertices)
PIECE_LENGTH = 0.05  # m: link shells are cut into convex pieces no longer than this, the size
# a convex decomposition (V-HACD) of a link's non-convex mesh gives; each piece is a collision geom


def finger_joints() -> list[str]:
    return [f"{f}_{p}_joint" for f in FINGERS for p in ("proximal", "distal")]


def joint_names() -> list[str]:
    """Every actuated joint, arm first, in the order recordings list them."""
    return list(ARM_JOINTS) + finger_joints()


def controller_names() -> list[str]:
    """The joint-position-controller plugin of each joint, in :func:`joint_names` order."""
    return [f"{j}_controller" for j in joint_names()]


# --- kinematics at the zero configuration ---------------------------------------------------------
def dh_frames() -> list[np.ndarray]:
    """4x4 transforms of DH frames 0..6 in the model frame at zero joint angles."""
    frames = [np.eye(4)]
    for a, d, alpha in DH:
        ca, sa = np.cos(alpha), np.sin(alpha)
        step = np.array([[1, 0, 0, a], [0, ca, -sa, 0], [0, sa, ca, d], [0, 0, 0, 1.0]])
        frames.append(frames[-1] @ step)
    return frames


def tool_frame() -> tuple[np.ndarray, np.ndarray]:
    """Origin and rotation (columns v, u, a) of the flange at zero joint angles."""
    t = dh_frames()[6]
    return t[:3, 3], t[:3, :3]


# --- SDF text -------------------------------------------------------------------------------------
def _quat_z_to(d: np.ndarray) -> np.ndarray:
    """xyzw quaternion turning +z onto the direction ``d``."""
    d = d / np.linalg.norm(d)
    if d[2] < -1 + 1e-9:
        return np.array([1.0, 0, 0, 0])
    q = np.array([-d[1], d[0], 0.0, 1.0 + d[2]])
    return q / np.linalg.norm(q)


def _matrix_quat(r: np.ndarray) -> np.ndarray:
    """xyzw quaternion of a rotation matrix (proper, trace > -1 for the ones used here)."""
    w = np.sqrt(max(1e-12, 1.0 + np.trace(r))) / 2
    return np.array([(r[2, 1] - r[1, 2]) / (4 * w), (r[0, 2] - r[2, 0]) / (4 * w),
                     (r[1, 0] - r[0, 1]) / (4 * w), w])


def _pose(pos: np.ndarray, quat: np.ndarray) -> str:
    return " ".join(f"{v:.6g}" for v in (*pos, *quat_to_rpy(quat)))


def _geom(name: str, pose: str, shape: str, mu: float | None = None) -> str:
    surface = (f"<surface><friction><ode><mu>{mu:g}</mu></ode></friction></surface>"
               if mu is not None else "")
    return (f'<collision name="{name}"><pose>{pose}</pose><geometry>{shape}</geometry>{surface}'
            f'</collision><visual name="{name}"><pose>{pose}</pose><geometry>{shape}</geometry>'
            "</visual>")


def faceted(kind: str, radius: float, length: float) -> np.ndarray:
    """Vertices of a convex mesh along z, centred: a capsule (``length`` between the caps'
    centres) or a cylinder, with FACETS sides and CAP_RINGS rings per hemisphere."""
    phi = 2 * np.pi * np.arange(FACETS) / FACETS
    ring = np.stack([np.cos(phi), np.sin(phi), np.zeros(FACETS)], axis=1) * radius
    if kind == "cylinder":
        return np.concatenate([ring + [0, 0, -length / 2], ring + [0, 0, length / 2]])
    parts = []
    for sign in (-1.0, 1.0):
        for k in range(CAP_RINGS):
            theta = 0.5 * np.pi * k / CAP_RINGS  # 0 at the equator
            z = sign * (length / 2 + radius * np.sin(theta))
            parts.append(ring * np.cos(theta) + [0, 0, z])
        parts.append(np.array([[0, 0, sign * (length / 2 + radius)]]))
    return np.concatenate(parts)


def mesh_name(kind: str, radius: float, length: float) -> str:
    return f"{kind}_r{radius * 1000:.0f}_l{length * 1000:.0f}"


def segment(meshes: dict[str, np.ndarray], name: str, origin: np.ndarray, p: np.ndarray,
            q: np.ndarray, radius: float, kind: str = "capsule", mu: float | None = None) -> str:
    """Convex faceted capsules or cylinders from ``p`` to ``q`` (model frame), cut into pieces of
    at most PIECE_LENGTH, on a link whose frame is at ``origin`` with the model's orientation; the
    meshes go into ``meshes``."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    total = float(np.linalg.norm(q - p))
    pieces = max(1, int(np.ceil(total / PIECE_LENGTH - 1e-9)))
    length = round(total / pieces, 3)
    mesh = mesh_name(kind, radius, length)
    meshes.setdefault(mesh, faceted(kind, radius, length))
    shape = f"<mesh><uri>meshes/{mesh}.obj</uri></mesh>"
    quat = _quat_z_to(q - p)
    ends = p + np.linspace(0.0, 1.0, pieces + 1)[:, None] * (q - p)
    return "".join(_geom(f"{name}_{k}", _pose((ends[k] + ends[k + 1]) / 2 - origin, quat), shape,
                         mu) for k in range(pieces))


def box(name: str, origin: np.ndarray, centre: np.ndarray, rotation: np.ndarray,
        size: tuple[float, float, float]) -> str:
    """A box (``rotation``: its axes in the model frame) cut along its first axis into pieces
    of at most PIECE_LENGTH."""
    pieces = max(1, int(np.ceil(size[0] / PIECE_LENGTH - 1e-9)))
    dims = " ".join(f"{v:g}" for v in (size[0] / pieces, *size[1:]))
    offsets = (np.arange(pieces) + 0.5) / pieces * size[0] - size[0] / 2
    quat = _matrix_quat(rotation)
    return "".join(_geom(f"{name}_{k}", _pose(np.asarray(centre) + off * rotation[:, 0] - origin,
                                              quat), f"<box><size>{dims}</size></box>")
                   for k, off in enumerate(offsets))


def inertial(mass: float, com: np.ndarray, radius: float, length: float,
             axis: np.ndarray) -> str:
    """A solid cylinder's inertia (axis ``axis``) of ``mass`` at ``com`` (link frame)."""
    axial = 0.5 * mass * radius ** 2
    across = mass * (3 * radius ** 2 + length ** 2) / 12
    axis = np.abs(axis) / np.linalg.norm(axis)
    diag = across + (axial - across) * axis ** 2  # principal axes along the model axes
    c = " ".join(f"{v:.6g}" for v in com)
    return (f"<inertial><pose>{c} 0 0 0</pose><mass>{mass:g}</mass><inertia>"
            f"<ixx>{diag[0]:.6g}</ixx><iyy>{diag[1]:.6g}</iyy><izz>{diag[2]:.6g}</izz>"
            "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>")


def _link(name: str, origin: np.ndarray, body: str, inertia: str) -> str:
    o = " ".join(f"{v:.6g}" for v in origin)
    return (f'\n    <link name="{name}"><pose>{o} 0 0 0</pose><gravity>false</gravity>'
            f"<self_collide>true</self_collide>{inertia}{body}</link>")


def _joint(name: str, parent: str, child: str, axis: np.ndarray, limits: tuple[float, float],
           effort: float) -> str:
    xyz = " ".join(f"{v:.6g}" for v in axis)
    return (f'\n    <joint name="{name}" type="revolute"><parent>{parent}</parent>'
            f"<child>{child}</child><axis><xyz>{xyz}</xyz><limit><lower>{limits[0]:g}</lower>"
            f"<upper>{limits[1]:g}</upper><effort>{effort:g}</effort></limit>"
            "<dynamics><damping>0.05</damping></dynamics></axis></joint>")


def _controller(joint: str, gains: tuple[float, float, float]) -> str:
    p, d, limit = gains
    return (f'\n    <plugin filename="gz-sim-joint-position-controller-system" '
            f'name="{joint}_controller"><joint_name>{joint}</joint_name>'
            f"<p_gain>{p:g}</p_gain><d_gain>{d:g}</d_gain><cmd_max>{limit:g}</cmd_max>"
            f"<cmd_min>{-limit:g}</cmd_min></plugin>")


def _arm_links(meshes: dict[str, np.ndarray]) -> list[str]:
    """Base and the six arm links: housings at the joints, tubes along the DH segments."""
    seg = partial(segment, meshes)
    f = dh_frames()
    o = [t[:3, 3] for t in f]
    z = [t[:3, 2] for t in f]
    up = np.array([0.0, 0, 1])
    side = -z[1]  # the shoulder offset direction (+y at zero)
    links = []
    # base: housing on the table, frame at the model origin
    links.append(_link("base", o[0], seg("housing", o[0], o[0], o[0] + 0.09 * up, 0.075,
                                               "cylinder"),
                       inertial(BASE_MASS, np.array([0, 0, 0.045]), 0.075, 0.09, up)))
    # shoulder: column up to the shoulder-lift housing
    body = (seg("column", o[0], o[0] + 0.095 * up, o[1], 0.06, "cylinder")
            + seg("lift_housing", o[0], o[1] + 0.07 * side, o[1] - 0.07 * side, 0.062,
                      "cylinder"))
    links.append((o[0], body, 0, 0.16, up))
    # upper arm: offset tube from the shoulder to the elbow housing
    off = -0.135 * side
    body = (seg("shoulder_cap", o[1], o[1] - 0.07 * side, o[1] + off - 0.06 * side, 0.06,
                    "cylinder")
            + seg("tube", o[1], o[1] + off, o[2] + off, 0.054)
            + seg("elbow_housing", o[1], o[2] + off - 0.06 * side, o[2] + 0.05 * side, 0.055,
                      "cylinder"))
    links.append((o[1], body, 1, 0.425, o[2] - o[1]))
    # forearm: tube in the plane of the wrists, the wrist-1 housing at its end
    body = (seg("tube", o[2], o[2], o[3], 0.042)
            + seg("wrist_housing", o[2], o[3] + 0.09 * side, o[3] - 0.02 * side, 0.045,
                      "cylinder"))
    links.append((o[2], body, 2, 0.392, o[3] - o[2]))
    # wrist 1: along its axis to the wrist-2 housing (vertical at the zero configuration)
    body = (seg("housing", o[3], o[3] - 0.02 * side, o[3] + 0.09 * z[3], 0.045, "cylinder")
            + seg("wrist_2_housing", o[3], o[4] - 0.05 * z[4], o[4] + 0.03 * z[4], 0.045,
                      "cylinder"))
    links.append((o[3], body, 3, 0.12, z[3]))
    # wrist 2: down to the wrist-3 housing
    body = (seg("drop", o[4], o[4] + 0.03 * z[4], o[5], 0.04, "cylinder")
            + seg("wrist_3_housing", o[4], o[5] - 0.045 * z[5], o[5] + 0.045 * z[5], 0.045,
                      "cylinder"))
    links.append((o[4], body, 4, 0.1, z[4]))
    # wrist 3: the flange
    body = seg("flange", o[5], o[5] + 0.045 * z[5], o[6], 0.04, "cylinder")
    links.append((o[5], body, 5, 0.05, z[5]))
    out = [links[0]]
    for i, (origin, geoms, k, length, axis) in enumerate(links[1:]):
        com = f[k + 1][:3, :3] @ LINK_COM[k] + o[k + 1] - origin
        out.append(_link(LINKS[i + 1], origin, geoms,
                         inertial(LINK_MASS[k], com, 0.05, length, axis)))
    return out


def _hand(meshes: dict[str, np.ndarray]) -> tuple[list[str], list[str], list[str]]:
    """Links, joints and controllers of the palm and the three fingers."""
    seg = partial(segment, meshes)
    o6, r = tool_frame()
    v, u, a = r[:, 0], r[:, 1], r[:, 2]
    face = o6 + (COUPLING[1] + PALM_DEPTH) * a
    palm = (seg("coupling", o6, o6, o6 + COUPLING[1] * a, COUPLING[0], "cylinder")
            + box("palm", o6, o6 + (COUPLING[1] + PALM_DEPTH / 2) * a, r,
                  (PALM_WIDTH, PALM_HEIGHT, PALM_DEPTH)))
    links = [_link("palm", o6, palm, inertial(PALM_MASS, (COUPLING[1] + PALM_DEPTH / 2) * a,
                                              0.05, PALM_DEPTH, a))]
    joints = ['\n    <joint name="hand_mount" type="fixed"><parent>wrist_3_link</parent>'
              "<child>palm</child></joint>"]
    controllers = []
    for name, (side, du) in FINGER_LAYOUT.items():
        root = face + side * FINGER_ROOT_V * v + du * u
        axis = side * -u  # positive angles curl the finger toward the hand's centre line
        mid = root + PROXIMAL * a
        tip = mid + DISTAL * a
        parent = "palm"
        for part, (start, end, mass) in (("proximal", (root, mid, FINGER_MASS[0])),
                                         ("distal", (mid, tip, FINGER_MASS[1]))):
            link = f"{name}_{part}"
            length = float(np.linalg.norm(end - start))
            geom = seg("phalanx", start, start, end, PHALANX_RADIUS, mu=FINGER_MU)
            links.append(_link(link, start, geom,
                               inertial(mass, (end - start) / 2, PHALANX_RADIUS, length, a)))
            joints.append(_joint(f"{link}_joint", parent, link, axis, FINGER_LIMITS,
                                 FINGER_GAINS[2]))
            controllers.append(_controller(f"{link}_joint", FINGER_GAINS))
            parent = link
    return links, joints, controllers


def model_sdf() -> tuple[str, dict[str, np.ndarray]]:
    """The model's SDF text and its meshes (name -> vertices, written to ``meshes/NAME.obj``)."""
    f = dh_frames()
    meshes: dict[str, np.ndarray] = {}
    links = _arm_links(meshes)
    joints = ['\n    <joint name="mount" type="fixed"><parent>world</parent><child>base</child>'
              "</joint>"]
    for i, name in enumerate(ARM_JOINTS):
        joints.append(_joint(name, LINKS[i], LINKS[i + 1], f[i][:3, 2], (-ARM_LIMIT, ARM_LIMIT),
                             ARM_GAINS[i][2]))
    controllers = [_controller(n, g) for n, g in zip(ARM_JOINTS, ARM_GAINS)]
    hand_links, hand_joints, hand_controllers = _hand(meshes)
    text = f"""<?xml version="1.0"?>
<!-- Generated by sim_fidelity/world_generators/ur5e_hand3.py; do not edit. -->
<sdf version="1.9">
  <model name="{MODEL}">{''.join(links + hand_links)}{''.join(joints + hand_joints)}\
{''.join(controllers + hand_controllers)}
  </model>
</sdf>
"""
    return text, meshes


MODEL_CONFIG = f"""<?xml version="1.0"?>
<model>
  <name>{MODEL}</name>
  <version>1.0</version>
  <sdf version="1.9">model.sdf</sdf>
  <description>Six-joint arm with the UR5e's published DH kinematics and link masses, primitive
  collision shapes, and a three-finger hand; position-controlled joints. \
Generated by sim_fidelity/world_generators/ur5e_hand3.py.</description>
</model>
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output-dir", default=str(data_dir("models") / MODEL))
    args = parser.parse_args(argv)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    text, meshes = model_sdf()
    (out / "meshes").mkdir(exist_ok=True)
    for name, vertices in meshes.items():
        (out / "meshes" / f"{name}.obj").write_text(
            "".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in vertices))
    (out / "model.sdf").write_text(text)
    (out / "model.config").write_text(MODEL_CONFIG)


if __name__ == "__main__":
    main()
