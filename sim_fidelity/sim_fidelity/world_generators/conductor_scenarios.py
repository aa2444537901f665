"""Worlds of the model conductor's scenarios (paper 003, Sec. 4.3-4.4, Table 2): the ``ur5e_hand3``
arm on the Table 1 table with

* **grasp and drop**: a ball (tennis-ball size) on a stand (a post with three pegs the ball rests
  on, like a golf tee) and one container of :data:`CONTAINERS` (open boxes and bowls of walls on a
  floor, static);
* **insertion**: the SPU (a heavy unit with a square socket on top) and the DIP (a probe: a
  cylindrical handle the hand holds and a square peg below it that fits the socket with
  :data:`SOCKET_CLEARANCE` each side).

Worlds are built from a scene description (object name -> type and pose), the form the sidecar
YAML of a recording keeps (:mod:`sim_fidelity.model_conductor.scenarios.recording`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .conductor_scene import ground_model, robot_include, table_model
from .errors import WorldGenerationError
from .sdf_text import world

STEP = 0.001  # s
BALL_RADIUS, BALL_MASS, BALL_MU = 0.0325, 0.058, 0.8  # tennis-ball size; felt
STAND_PEG_RADIUS, STAND_PEG_CIRCLE = 0.006, 0.022  # the three pegs the ball rests on
STAND_HEIGHT = 0.052  # m: the pegs' centres above the table
WALL, FLOOR = 0.006, 0.008  # m: container wall and floor thickness


@dataclass(frozen=True)
class Container:
    """An open container: ``shape`` ``round`` (radius = size[0]) or ``box`` (size = x, y extents),
    ``height`` of its walls; frame at the floor's centre."""

    shape: str
    size: tuple[float, ...]
    height: float

    def inner(self) -> tuple[float, ...]:
        """Inner half extents (round: radius)."""
        if self.shape == "round":
            return (self.size[0] - WALL,)
        return (self.size[0] / 2 - WALL, self.size[1] / 2 - WALL)


CONTAINERS: dict[str, Container] = {
    "bowl": Container("round", (0.09,), 0.06),
    "bin": Container("box", (0.16, 0.16), 0.10),
    "tall_can": Container("round", (0.065,), 0.14),
    "tray": Container("box", (0.26, 0.14), 0.045),
}
# the SPU: a unit of SPU_SIZE with a square socket of SOCKET_SIDE and SOCKET_DEPTH on top
SPU_SIZE = (0.12, 0.12, 0.15)
SPU_MASS = 8.0  # kg
SOCKET_SIDE, SOCKET_DEPTH = 0.022, 0.04
PEG_SIDE = 0.020
SOCKET_CLEARANCE = (SOCKET_SIDE - PEG_SIDE) / 2  # m each side
# the DIP: a handle (cylinder) and a peg below it; frame at the handle's centre
HANDLE_RADIUS, HANDLE_LENGTH = 0.025, 0.10
PEG_LENGTH = 0.05
DIP_MASS = 0.15
DIP_MU = 0.9


def _inertial(mass: float, ixx: float, iyy: float, izz: float, z: float = 0.0) -> str:
    return (f"<inertial><pose>0 0 {z:.5g} 0 0 0</pose><mass>{mass:g}</mass><inertia>"
            f"<ixx>{ixx:.6g}</ixx><iyy>{iyy:.6g}</iyy><izz>{izz:.6g}</izz><ixy>0</ixy>"
            "<ixz>0</ixz><iyz>0</iyz></inertia></inertial>")


def _shape(name: str, pose: str, geometry: str, mu: float = 0.8) -> str:
    return (f'<collision name="{name}"><pose>{pose}</pose><geometry>{geometry}</geometry>'
            f"<surface><friction><ode><mu>{mu:g}</mu></ode></friction></surface></collision>"
            f'<visual name="{name}"><pose>{pose}</pose><geometry>{geometry}</geometry></visual>')


def _box(name: str, centre: tuple[float, float, float], size: tuple[float, float, float],
         yaw: float = 0.0, mu: float = 0.8) -> str:
    c = " ".join(f"{v:.6f}" for v in centre)
    return _shape(name, f"{c} 0 0 {yaw:.6f}",
                  "<box><size>" + " ".join(f"{v:.6f}" for v in size) + "</size></box>", mu)


def _pose_text(pose: np.ndarray) -> str:
    from ..simulator.poses import quat_to_rpy

    p = np.asarray(pose, float)
    rpy = quat_to_rpy(p[3:7]) if p.size == 7 else np.zeros(3)
    return " ".join(f"{v:.6f}" for v in (*p[:3], *rpy))


def _static_model(name: str, pose: np.ndarray, shapes: str) -> str:
    return f"""
    <model name="{name}">
      <static>true</static>
      <pose>{_pose_text(pose)}</pose>
      <link name="link">{shapes}
      </link>
    </model>"""


def container_model(name: str, kind: str, pose: np.ndarray) -> str:
    """A static open container of kind ``kind`` (a key of :data:`CONTAINERS`)."""
    if kind not in CONTAINERS:
        raise WorldGenerationError(f"unknown container kind '{kind}' (kinds: "
                                   f"{', '.join(CONTAINERS)})")
    c = CONTAINERS[kind]
    h = c.height
    if c.shape == "round":
        r = c.size[0]
        walls = 20
        chord = 2 * r * np.tan(np.pi / walls) + 0.002
        shapes = [_shape("floor", f"0 0 {FLOOR / 2:g} 0 0 0",
                         f"<cylinder><radius>{r:g}</radius><length>{FLOOR:g}</length>"
                         "</cylinder>")]
        for k in range(walls):
            phi = 2 * np.pi * k / walls
            mid = r - WALL / 2
            shapes.append(_box(f"wall_{k:02d}", (mid * np.cos(phi), mid * np.sin(phi), h / 2),
                               (WALL, chord, h), phi))
    else:
        sx, sy = c.size
        shapes = [_box("floor", (0, 0, FLOOR / 2), (sx, sy, FLOOR))]
        for i, sign in enumerate((-1, 1)):
            shapes.append(_box(f"wall_x{i}", (sign * (sx - WALL) / 2, 0, h / 2), (WALL, sy, h)))
            shapes.append(_box(f"wall_y{i}", (0, sign * (sy - WALL) / 2, h / 2), (sx, WALL, h)))
    return _static_model(name, pose, "".join(shapes))


def stand_model(name: str, pose: np.ndarray) -> str:
    """A post and three pegs on which the ball rests; frame on the table under the post."""
    post = _shape("post", f"0 0 {STAND_HEIGHT / 2:g} 0 0 0",
                  f"<cylinder><radius>0.012</radius><length>{STAND_HEIGHT:g}</length></cylinder>")
    pegs = "".join(_shape(f"peg_{k}", f"{STAND_PEG_CIRCLE * np.cos(a):.6f} "
                          f"{STAND_PEG_CIRCLE * np.sin(a):.6f} {STAND_HEIGHT:g} 0 0 0",
                          f"<sphere><radius>{STAND_PEG_RADIUS:g}</radius></sphere>")
                   for k, a in enumerate(2 * np.pi * np.arange(3) / 3 + np.pi / 2))
    arms = "".join(_box(f"arm_{k}", (STAND_PEG_CIRCLE / 2 * np.cos(a),
                                     STAND_PEG_CIRCLE / 2 * np.sin(a), STAND_HEIGHT - 0.004),
                        (STAND_PEG_CIRCLE, 0.006, 0.006), a)
                   for k, a in enumerate(2 * np.pi * np.arange(3) / 3 + np.pi / 2))
    return _static_model(name, pose, post + pegs + arms)


def ball_rest_height() -> float:
    """Height of the ball's centre above the stand's frame when it rests on the pegs."""
    reach = BALL_RADIUS + STAND_PEG_RADIUS
    return STAND_HEIGHT + float(np.sqrt(reach ** 2 - STAND_PEG_CIRCLE ** 2))


def ball_model(name: str, pose: np.ndarray) -> str:
    i = 0.4 * BALL_MASS * BALL_RADIUS ** 2
    return f"""
    <model name="{name}">
      <pose>{_pose_text(pose)}</pose>
      <link name="link">{_inertial(BALL_MASS, i, i, i)}
        {_shape("sphere", "0 0 0 0 0 0",
                f"<sphere><radius>{BALL_RADIUS:g}</radius></sphere>", BALL_MU)}
      </link>
    </model>"""


def spu_model(name: str, pose: np.ndarray) -> str:
    """The SPU: a heavy unit (dynamic: it stands on the table) whose top has a square socket;
    frame on the table under the socket."""
    sx, sy, sz = SPU_SIZE
    base = sz - SOCKET_DEPTH
    shapes = [_box("body", (0, 0, base / 2), (sx, sy, base), mu=0.5)]
    side = (sx - SOCKET_SIDE) / 2  # the four blocks around the socket
    for k, sign in enumerate((-1, 1)):
        shapes.append(_box(f"rim_x{k}", (sign * (SOCKET_SIDE + side) / 2, 0,
                                         base + SOCKET_DEPTH / 2),
                           (side, sy, SOCKET_DEPTH), mu=0.5))
        shapes.append(_box(f"rim_y{k}", (0, sign * (SOCKET_SIDE + (sy - SOCKET_SIDE) / 2) / 2,
                                         base + SOCKET_DEPTH / 2),
                           (SOCKET_SIDE, (sy - SOCKET_SIDE) / 2, SOCKET_DEPTH), mu=0.5))
    ixx = SPU_MASS * (sy * sy + sz * sz) / 12
    izz = SPU_MASS * (sx * sx + sy * sy) / 12
    return f"""
    <model name="{name}">
      <pose>{_pose_text(pose)}</pose>
      <link name="link">{_inertial(SPU_MASS, ixx, ixx, izz, sz / 2)}{"".join(shapes)}
      </link>
    </model>"""


def spu_connection_offset() -> np.ndarray:
    """The DIP frame's position in the SPU frame when it is fully inserted (the ideal
    connection pose; same orientation)."""
    return np.array([0.0, 0.0, SPU_SIZE[2] - SOCKET_DEPTH + PEG_LENGTH + HANDLE_LENGTH / 2])


def dip_model(name: str, pose: np.ndarray) -> str:
    """The DIP: handle (frame at its centre) and the peg below it."""
    m_h = DIP_MASS * 0.8
    m_p = DIP_MASS - m_h
    ixx = m_h * (3 * HANDLE_RADIUS ** 2 + HANDLE_LENGTH ** 2) / 12 + m_p * 0.006
    izz = m_h * HANDLE_RADIUS ** 2 / 2
    handle = _shape("handle", "0 0 0 0 0 0",
                    f"<cylinder><radius>{HANDLE_RADIUS:g}</radius><length>{HANDLE_LENGTH:g}"
                    "</length></cylinder>", DIP_MU)
    peg = _box("peg", (0, 0, -(HANDLE_LENGTH + PEG_LENGTH) / 2), (PEG_SIDE, PEG_SIDE, PEG_LENGTH),
               mu=0.5)
    return f"""
    <model name="{name}">
      <pose>{_pose_text(pose)}</pose>
      <link name="link">{_inertial(DIP_MASS, ixx, ixx, izz, -0.012)}
        {handle}{peg}
      </link>
    </model>"""


BUILDERS = {"ball": ball_model, "stand": stand_model, "spu": spu_model, "dip": dip_model,
            **{kind: (lambda n, p, k=kind: container_model(n, k, p)) for kind in CONTAINERS}}


def scenario_world_sdf(name: str, scene: Mapping[str, Mapping], comment: str = "") -> str:
    """Ground, table, the arm and the scene's objects (name -> ``{"type", "pose"}``, pose
    x y z [qx qy qz qw])."""
    models = []
    for obj, spec in scene.items():
        kind = str(spec.get("type", ""))
        if kind not in BUILDERS:
            raise WorldGenerationError(f"scene object '{obj}': unknown type '{kind}' (types: "
                                       f"{', '.join(BUILDERS)})")
        pose = np.asarray(spec.get("pose", (0, 0, 0)), float)
        if pose.size not in (3, 7):
            raise WorldGenerationError(f"scene object '{obj}': pose needs 3 or 7 numbers, got "
                                       f"{pose.size}")
        models.append(BUILDERS[kind](obj, pose))
    return world(name, ground_model(), table_model(), robot_include(), *models, step=STEP,
                 comment=comment)
