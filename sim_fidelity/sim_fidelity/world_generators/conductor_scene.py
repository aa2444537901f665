"""Generates the worlds of the model conductor's Table 1 (paper 003, Sec. 4.1): a cup of spherical
particles (a "fluid") on a table in front of the ``ur5e_hand3`` arm.

* ``conductor_arm.sdf``: ground, table, the arm (``model://ur5e_hand3``) and the empty cup: Table 1
  setup 1, and the main model of the split setups 3-5;
* ``conductor_arm_particles_50.sdf``: the same with 50 particles in the cup (setup 2, one
  simulation);
* ``conductor_particles_{50,100}.sdf``: ground, table, cup and particles, no arm: the particle
  model of setups 3-5, whose cup follows the main model's cup.

The cup (``cup``) is an open container of primitives: a disc and a ring of CUP_WALLS boxes; its
frame is the centre of its floor. The particles ``particle_NNN`` start in a jittered column above
the floor (deterministic per seed) and :func:`settle` lets them come to rest in the cup alone, so
every world holding particles starts from the same settled poses.

    python -m sim_fidelity.world_generators.conductor_scene [--seed 0] [-o DIR]

(default output: the package's ``worlds/``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..data import data_dir
from .errors import WorldGenerationError
from .sdf_text import world

STEP = 0.001  # s: physics step of every Table 1 world
TABLE_TOP = 0.75  # m
TABLE_SIZE = (1.0, 1.0, 0.04)
ROBOT_POSITION = (0.0, 0.35, TABLE_TOP)  # the arm's base on the table
CUP_POSITION = (0.0, -0.25, TABLE_TOP)  # the cup's floor centre on the table
CUP_RADIUS, CUP_WALL, CUP_HEIGHT, CUP_FLOOR = 0.04, 0.006, 0.11, 0.008  # m (outer radius)
CUP_WALLS = 16  # boxes in the ring
WALL_LIFT = 0.002  # m: the walls end above the floor's underside, so the cup stands on its floor
CUP_MASS = 0.2  # kg
CUP_MU = 0.9
PARTICLE_RADIUS = 0.007  # m
PARTICLE_MASS = 0.0015  # kg (about water's density)
PARTICLE_MU = 0.3
PARTICLE_COUNTS = (50, 100)


def cup_inner_radius() -> float:
    return CUP_RADIUS - CUP_WALL


def particle_names(n: int) -> list[str]:
    return [f"particle_{i:03d}" for i in range(n)]


def _inertia(mass: float, ixx: float, iyy: float, izz: float) -> str:
    return (f"<inertial><mass>{mass:g}</mass><inertia><ixx>{ixx:.6g}</ixx><iyy>{iyy:.6g}</iyy>"
            f"<izz>{izz:.6g}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia></inertial>")


def _shape(name: str, pose: str, geometry: str, mu: float) -> str:
    return (f'<collision name="{name}"><pose>{pose}</pose><geometry>{geometry}</geometry>'
            f"<surface><friction><ode><mu>{mu:g}</mu></ode></friction></surface></collision>"
            f'<visual name="{name}"><pose>{pose}</pose><geometry>{geometry}</geometry></visual>')


def cup_model() -> str:
    """The open cup: a floor disc and a ring of wall boxes, frame at the floor's centre."""
    mid = CUP_RADIUS - CUP_WALL / 2
    chord = 2 * CUP_RADIUS * np.tan(np.pi / CUP_WALLS) + 0.002  # neighbouring boxes overlap
    shapes = [_shape("floor", f"0 0 {CUP_FLOOR / 2:g} 0 0 0",
                     f"<cylinder><radius>{CUP_RADIUS:g}</radius><length>{CUP_FLOOR:g}</length>"
                     "</cylinder>", CUP_MU)]
    for k in range(CUP_WALLS):
        phi = 2 * np.pi * k / CUP_WALLS
        pose = (f"{mid * np.cos(phi):.6f} {mid * np.sin(phi):.6f} "
                f"{(CUP_HEIGHT + WALL_LIFT) / 2:g} 0 0 {phi:.6f}")
        size = f"{CUP_WALL:g} {chord:.6f} {CUP_HEIGHT - WALL_LIFT:g}"
        shapes.append(_shape(f"wall_{k:02d}", pose, f"<box><size>{size}</size></box>", CUP_MU))
    r, h = CUP_RADIUS, CUP_HEIGHT
    side = CUP_MASS * (3 * r * r + h * h) / 12
    x, y, z = CUP_POSITION
    return f"""
    <model name="cup">
      <pose>{x:g} {y:g} {z:g} 0 0 0</pose>
      <link name="link">
        <inertial><pose>0 0 {h / 3:.4f} 0 0 0</pose><mass>{CUP_MASS:g}</mass><inertia>\
<ixx>{side:.6g}</ixx><iyy>{side:.6g}</iyy><izz>{CUP_MASS * r * r:.6g}</izz><ixy>0</ixy><ixz>0</ixz>\
<iyz>0</iyz></inertia></inertial>
        {''.join(shapes)}
      </link>
    </model>"""


def table_model() -> str:
    sx, sy, sz = TABLE_SIZE
    leg = TABLE_TOP - sz
    legs = "".join(
        _shape(f"leg_{i}", f"{cx * (sx / 2 - 0.05):g} {cy * (sy / 2 - 0.05):g} {leg / 2:g} 0 0 0",
               f"<box><size>0.05 0.05 {leg:g}</size></box>", 0.6)
        for i, (cx, cy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))))
    top = _shape("top", f"0 0 {TABLE_TOP - sz / 2:g} 0 0 0",
                 f"<box><size>{sx:g} {sy:g} {sz:g}</size></box>", 0.6)
    return f"""
    <model name="table">
      <static>true</static>
      <link name="link">{top}{legs}
      </link>
    </model>"""


def ground_model() -> str:
    return """
    <model name="ground_plane">
      <static>true</static>
      <link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal>\
<size>20 20</size></plane></geometry></collision>
      </link>
    </model>"""


def robot_include() -> str:
    x, y, z = ROBOT_POSITION
    return f"""
    <include>
      <uri>model://ur5e_hand3</uri>
      <name>arm</name>
      <pose>{x:g} {y:g} {z:g} 0 0 0</pose>
    </include>"""


def particle_model(name: str, pose: np.ndarray) -> str:
    """One particle: a sphere; ``pose`` xyz (particles start without rotation)."""
    i = 0.4 * PARTICLE_MASS * PARTICLE_RADIUS ** 2
    x, y, z = pose[:3]
    return f"""
    <model name="{name}">
      <pose>{x:.6f} {y:.6f} {z:.6f} 0 0 0</pose>
      <link name="link">{_inertia(PARTICLE_MASS, i, i, i)}
        {_shape("sphere", "0 0 0 0 0 0",
                f"<sphere><radius>{PARTICLE_RADIUS:g}</radius></sphere>", PARTICLE_MU)}
      </link>
    </model>"""


def initial_particles(n: int, seed: int = 0) -> np.ndarray:
    """World positions (n, 3) of particles in a jittered column in the cup, layer by layer."""
    if n < 0:
        raise WorldGenerationError(f"conductor scene: particle count must be >= 0, got {n}")
    rng = np.random.default_rng(seed)
    pitch = 2 * PARTICLE_RADIUS + 0.002
    reach = cup_inner_radius() - PARTICLE_RADIUS - 0.001
    grid = np.arange(-reach, reach + 1e-9, pitch)
    gx, gy = np.meshgrid(grid, grid)
    layer = np.stack([gx.ravel(), gy.ravel()], axis=1)
    layer = layer[np.linalg.norm(layer, axis=1) <= reach]
    layers = -(-n // len(layer))
    top = CUP_FLOOR + PARTICLE_RADIUS + 0.001 + pitch * (layers - 1)
    if top + PARTICLE_RADIUS > CUP_HEIGHT + 0.3:
        raise WorldGenerationError(f"conductor scene: {n} particles do not fit above the cup")
    out = []
    for k in range(layers):
        jitter = rng.uniform(-0.0008, 0.0008, size=layer.shape)
        z = CUP_FLOOR + PARTICLE_RADIUS + 0.001 + pitch * k
        out.extend(np.column_stack([layer + jitter, np.full(len(layer), z)]))
    return np.array(out[:n]) + np.array(CUP_POSITION)


def particles_sdf(positions: np.ndarray) -> str:
    return "".join(particle_model(name, p)
                   for name, p in zip(particle_names(len(positions)), positions))


def particle_world_sdf(name: str, positions: np.ndarray, comment: str = "") -> str:
    """Ground, table, cup and particles (no arm)."""
    return world(name, ground_model(), table_model(), cup_model(), particles_sdf(positions),
                 step=STEP, comment=comment)


def arm_world_sdf(name: str, positions: np.ndarray, comment: str = "") -> str:
    """Ground, table, the arm, the cup and particles (none when ``positions`` is empty)."""
    return world(name, ground_model(), table_model(), robot_include(), cup_model(),
                 particles_sdf(positions), step=STEP, comment=comment)


def settle(n: int, seed: int = 0, seconds: float = 1.5) -> tuple[np.ndarray, float]:
    """Particle positions (n, 3) after resting in the cup alone, and their max speed then."""
    from ..simulator.engine import MujocoEngine

    sim = MujocoEngine.from_string(particle_world_sdf("settle", initial_particles(n, seed)))
    names = particle_names(n)
    sim.run_for(seconds)
    poses, twists = sim.get_states(names)
    return poses[:, :3], float(np.linalg.norm(twists[:, :3], axis=1).max())


def generate(seed: int = 0) -> dict[str, str]:
    """File name -> SDF text of every Table 1 world."""
    out = {"conductor_arm.sdf": arm_world_sdf(
        "conductor_arm", np.zeros((0, 3)),
        "Generated by sim_fidelity/world_generators/conductor_scene.py; do not edit.")}
    for n in PARTICLE_COUNTS:
        positions, speed = settle(n, seed)
        note = (f"Generated by sim_fidelity/world_generators/conductor_scene.py: {n} particles, "
                f"seed {seed}, settled in the cup (max speed {speed:.4f} m/s); do not edit.")
        out[f"conductor_particles_{n}.sdf"] = particle_world_sdf(f"conductor_particles_{n}",
                                                                 positions, note)
        if n == PARTICLE_COUNTS[0]:
            out[f"conductor_arm_particles_{n}.sdf"] = arm_world_sdf(
                f"conductor_arm_particles_{n}", positions, note)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output-dir", default=str(data_dir("worlds")))
    args = parser.parse_args(argv)
    for name, text in generate(args.seed).items():
        path = Path(args.output_dir) / name
        path.write_text(text)
        print(path)


if __name__ == "__main__":
    main()
