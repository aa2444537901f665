"""Generates the truck-unloading scenarios ``worlds/truck_{A,B,C}.sdf`` (paper 000, Sec. 5, Fig. 5).

A trailer interior (floor = the ground plane, two side walls, a front wall, no roof) filled with
shipping packets named ``packet_NNNN``, and the ``unloader`` robot (``model://unloader``) waiting
outside the door (the door is the plane ``x = 0``; the trailer extends along +x).

Packets come from :func:`layout` (pure numpy, deterministic per seed):

* **walls**: slabs across the trailer, each slab one depth; in a slab, layers of one height; in a
  layer, packets side by side whose widths fill the trailer width (2 mm gaps). Walls are filled
  bottom-up, so only the last layer of the last slab is partial.
* **piles**: packets in a loose grid with random yaw, two or three layers with drop gaps, which the
  settling step turns into a low messy pile.

Sizes and masses (also in ``docs/truck.md``): depth in {0.30, 0.40, 0.50} m, layer height in
{0.20, 0.25, 0.30, 0.35, 0.40} m, width in {0.30, 0.40, 0.50, 0.60} m before the row is stretched to
fill the width (so widths vary continuously, about +-15 %); pile packets have each edge uniform in
[0.15, 0.40] m (random yaw, odd layers over the gaps of the layer below). Density is log-normal
(median 150 kg/m^3, sigma 0.5), mass clipped to [0.3, 30] kg.

Scenarios: A = 491 packets in full walls from 0.6 m behind the door; B = 1007 packets in full walls
from 3 m (deep rows far from the door); C = 539 packets: a low pile of 150 near the door and walls
from 5.5 m. :func:`settle` simulates the packets alone in MuJoCo until they rest and the world
file is written with the settled poses, so the scene starts at rest (``test/test_truck_scenarios``).

    python -m sim_fidelity.world_generators.truck [--scenarios A B C] [--seed 0] [-o DIR]

(default output: the package's ``worlds/``).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data import data_dir
from ..simulator.poses import quat_to_rpy
from .errors import WorldGenerationError
from .sdf_text import world

TRAILER_LENGTH = 15.9  # m, interior of a 53 ft trailer
TRAILER_WIDTH = 2.46  # m
TRAILER_HEIGHT = 2.7  # m
WALL_THICKNESS = 0.05
STEP = 0.002  # physics step [s] of the truck worlds (see docs/truck.md)
GAP = 0.002  # m between packets placed side by side
SIDE_CLEARANCE = 0.01  # m between a wall of packets and a trailer wall
DEPTHS = np.array([0.30, 0.40, 0.50])
HEIGHTS = np.array([0.20, 0.25, 0.30, 0.35, 0.40])
WIDTHS = np.array([0.30, 0.40, 0.50, 0.60])
PILE_EDGE = (0.15, 0.40)
DENSITY_MEDIAN, DENSITY_SIGMA = 150.0, 0.5  # kg/m^3, log-normal
MASS_RANGE = (0.3, 30.0)  # kg
ROBOT_START_X = -2.4  # m, the unloader's base frame at the start (its nose tip is outside the door)


@dataclass(frozen=True)
class Section:
    """One part of a scenario: ``kind`` 'wall' or 'pile', ``count`` packets, starting at ``x0``."""

    kind: str
    count: int
    x0: float
    x1: float = 0.0  # piles: far end of the pile region
    fill_height: tuple[float, float] = (2.2, 2.5)  # walls: top of the wall, uniform range


SCENARIOS: dict[str, tuple[Section, ...]] = {
    "A": (Section("wall", 491, 0.6),),
    "B": (Section("wall", 1007, 3.0, fill_height=(2.3, 2.55)),),
    "C": (Section("pile", 150, 0.6, 5.2), Section("wall", 389, 5.5)),
}


@dataclass
class Layout:
    """Packets of one scenario: centres (n, 3), sizes (n, 3), yaw (n,), masses (n,)."""

    centres: np.ndarray
    sizes: np.ndarray
    yaw: np.ndarray
    masses: np.ndarray

    def __len__(self) -> int:
        return len(self.centres)

    def aabbs(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds (lo, hi) of every packet (yaw only)."""
        c, s = np.abs(np.cos(self.yaw)), np.abs(np.sin(self.yaw))
        hx = 0.5 * (c * self.sizes[:, 0] + s * self.sizes[:, 1])
        hy = 0.5 * (s * self.sizes[:, 0] + c * self.sizes[:, 1])
        half = np.stack([hx, hy, 0.5 * self.sizes[:, 2]], axis=1)
        return self.centres - half, self.centres + half


def _masses(rng: np.random.Generator, sizes: np.ndarray) -> np.ndarray:
    density = DENSITY_MEDIAN * np.exp(DENSITY_SIGMA * rng.standard_normal(len(sizes)))
    return np.clip(density * sizes.prod(axis=1), *MASS_RANGE)


def _row_widths(rng: np.random.Generator, span: float) -> np.ndarray:
    """Widths of packets side by side filling ``span`` exactly (with GAP between them)."""
    widths: list[float] = []
    while sum(widths) + WIDTHS.mean() <= span:
        widths.append(float(rng.choice(WIDTHS)))
    w = np.array(widths or [span])
    return w * (span - GAP * (len(w) - 1)) / w.sum()


def _walls(rng: np.random.Generator, sec: Section) -> list[tuple[np.ndarray, np.ndarray]]:
    """(centre, size) of the packets of a wall section, filled slab by slab, bottom-up."""
    out: list[tuple[np.ndarray, np.ndarray]] = []
    span = TRAILER_WIDTH - 2 * SIDE_CLEARANCE
    x = sec.x0
    while len(out) < sec.count:
        depth = float(rng.choice(DEPTHS))
        if x + depth > TRAILER_LENGTH - 0.01:
            raise WorldGenerationError(f"truck world: {sec.count} packets do not fit in the "
                                       f"trailer from x = {sec.x0} m")
        top = rng.uniform(*sec.fill_height)
        z = 0.0
        while len(out) < sec.count:
            h = float(rng.choice(HEIGHTS))
            if z + h > top:
                break
            y = -span / 2
            for w in _row_widths(rng, span):
                if len(out) == sec.count:
                    break
                out.append((np.array([x + depth / 2, y + w / 2, z + h / 2]),
                            np.array([depth, w, h])))
                y += w + GAP
            z += h + GAP / 2
        x += depth + GAP
    return out


def _pile(rng: np.random.Generator, sec: Section) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """(centre, size, yaw) of a loose pile: a jittered grid, layers separated by drop gaps."""
    cell = 0.57  # m: the largest rotated footprint (0.4 x 0.4 -> 0.57) fits in a cell
    nx = int((sec.x1 - sec.x0) // cell)
    ny = int((TRAILER_WIDTH - 2 * SIDE_CLEARANCE) // cell)
    out: list[tuple[np.ndarray, np.ndarray, float]] = []
    z, layer = 0.0, 0
    while len(out) < sec.count:
        layer_top = z
        shift = 0.5 * (layer % 2)  # odd layers sit over the gaps of the layer below, so they topple
        for i in np.arange(nx - layer % 2) + shift:
            for j in np.arange(ny - layer % 2) + shift:
                if len(out) == sec.count:
                    break
                size = rng.uniform(*PILE_EDGE, size=3)
                yaw = float(rng.uniform(-np.pi / 4, np.pi / 4))
                ext_x = abs(np.cos(yaw)) * size[0] + abs(np.sin(yaw)) * size[1]
                ext_y = abs(np.sin(yaw)) * size[0] + abs(np.cos(yaw)) * size[1]
                jx, jy = (cell - ext_x) / 2, (cell - ext_y) / 2
                cx = sec.x0 + (i + 0.5) * cell + rng.uniform(-jx, jx)
                cy = -TRAILER_WIDTH / 2 + SIDE_CLEARANCE + (j + 0.5) * cell + rng.uniform(-jy, jy)
                out.append((np.array([cx, cy, z + size[2] / 2 + 0.005]), size, yaw))
                layer_top = max(layer_top, z + size[2] + 0.005)
        z, layer = layer_top + 0.03, layer + 1
    return out


def layout(scenario: str, seed: int = 0) -> Layout:
    """The packets of ``scenario`` ('A', 'B' or 'C') before settling; deterministic per seed."""
    try:
        sections = SCENARIOS[scenario]
    except KeyError:
        raise WorldGenerationError(f"truck world: unknown scenario {scenario!r} "
                                   f"(known: {', '.join(SCENARIOS)})") from None
    return layout_sections(sections, np.random.default_rng([seed, ord(scenario)]))


def layout_sections(sections: tuple[Section, ...], rng: np.random.Generator) -> Layout:
    """The packets of any sequence of sections (walls and piles), before settling."""
    centres, sizes, yaws = [], [], []
    for sec in sections:
        if sec.kind == "wall":
            for c, s in _walls(rng, sec):
                centres.append(c), sizes.append(s), yaws.append(0.0)
        else:
            for c, s, yaw in _pile(rng, sec):
                centres.append(c), sizes.append(s), yaws.append(yaw)
    sizes_a = np.array(sizes)
    return Layout(np.array(centres), sizes_a, np.array(yaws), _masses(rng, sizes_a))


# --- SDF text -------------------------------------------------------------------------------------
def _pose_text(pose: np.ndarray) -> str:
    rpy = quat_to_rpy(pose[3:])
    return " ".join(f"{v:.6f}" for v in (*pose[:3], *rpy))


def packet_model(name: str, pose: np.ndarray, size: np.ndarray, mass: float) -> str:
    """One packet: a one-link box with a solid-cuboid inertia; ``pose`` is xyzw."""
    sx, sy, sz = size
    ixx, iyy, izz = (mass * (b * b + c * c) / 12.0 for b, c in ((sy, sz), (sx, sz), (sx, sy)))
    dims = f"{sx:.4f} {sy:.4f} {sz:.4f}"
    return f"""
    <model name="{name}">
      <pose>{_pose_text(pose)}</pose>
      <link name="link">
        <inertial><mass>{mass:.4f}</mass>
          <inertia><ixx>{ixx:.6g}</ixx><iyy>{iyy:.6g}</iyy><izz>{izz:.6g}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></inertia>
        </inertial>
        <collision name="collision"><geometry><box><size>{dims}</size></box></geometry>
          <surface><friction><ode><mu>0.5</mu></ode></friction></surface></collision>
        <visual name="visual"><geometry><box><size>{dims}</size></box></geometry></visual>
      </link>
    </model>"""


def _slab(name: str, centre: tuple[float, float, float], size: tuple[float, float, float]) -> str:
    dims = " ".join(f"{v:.4f}" for v in size)
    pos = " ".join(f"{v:.4f}" for v in centre)
    return f"""
        <collision name="{name}"><pose>{pos} 0 0 0</pose>\
<geometry><box><size>{dims}</size></box></geometry></collision>
        <visual name="{name}"><pose>{pos} 0 0 0</pose>\
<geometry><box><size>{dims}</size></box></geometry></visual>"""


def trailer_model() -> str:
    """The static trailer: side walls and the front wall (the floor is the ground plane)."""
    t, L, W, H = WALL_THICKNESS, TRAILER_LENGTH, TRAILER_WIDTH, TRAILER_HEIGHT
    walls = (_slab("left_wall", (L / 2, W / 2 + t / 2, H / 2), (L, t, H))
             + _slab("right_wall", (L / 2, -W / 2 - t / 2, H / 2), (L, t, H))
             + _slab("front_wall", (L + t / 2, 0.0, H / 2), (t, W + 2 * t, H)))
    return f"""
    <model name="trailer">
      <static>true</static>
      <link name="link">{walls}
      </link>
    </model>"""


def ground_model() -> str:
    return """
    <model name="ground_plane">
      <static>true</static>
      <link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal>\
<size>100 100</size></plane></geometry>
          <surface><friction><ode><mu>0.5</mu></ode></friction></surface></collision>
      </link>
    </model>"""


def robot_include(x: float = ROBOT_START_X) -> str:
    return f"""
    <include>
      <uri>model://unloader</uri>
      <name>unloader</name>
      <pose>{x:.4f} 0 0 0 0 0</pose>
    </include>"""


def world_sdf(name: str, packets: str, robot: bool = True, comment: str = "") -> str:
    """The truck world: ground, trailer, the robot (unless ``robot`` is False) and ``packets``."""
    return world(name, ground_model(), trailer_model(), robot_include() if robot else "", packets,
                 step=STEP, comment=comment)


def packets_sdf(lay: Layout, poses: np.ndarray | None = None) -> str:
    """SDF models of the packets at ``poses`` (n, 7 xyzw), or at the layout's centres and yaws."""
    if poses is None:
        half = 0.5 * lay.yaw
        poses = np.concatenate([lay.centres, np.zeros((len(lay), 2)), np.sin(half)[:, None],
                                np.cos(half)[:, None]], axis=1)
    return "".join(packet_model(f"packet_{i:04d}", poses[i], lay.sizes[i], lay.masses[i])
                   for i in range(len(lay)))


def packet_names(n: int) -> list[str]:
    return [f"packet_{i:04d}" for i in range(n)]


def settle(lay: Layout, seconds: float = 3.0, tolerance: float = 0.005) -> tuple[np.ndarray, float]:
    """Simulate the packets alone (no robot) until they rest; returns their poses and max speed."""
    from ..simulator.engine import MujocoEngine

    sim = MujocoEngine.from_string(world_sdf("settle", packets_sdf(lay), robot=False))
    names = packet_names(len(lay))
    speed = np.inf
    while sim.time < seconds or (speed > tolerance and sim.time < 8 * seconds):
        sim.run_for(0.5)
        speed = float(np.linalg.norm(sim.get_states(names)[1][:, :3], axis=1).max())
    # a final velocity-free rest, so the written poses are the ones packets hold under gravity
    sim.set_states(names, twists=np.zeros((len(names), 6)))
    sim.run_for(0.5)
    poses, twists = sim.get_states(names)
    return poses, float(np.linalg.norm(twists[:, :3], axis=1).max())


def scenario_sdf(scenario: str, seed: int = 0) -> tuple[str, float]:
    """The settled world of ``scenario`` and the packets' max speed at the end of settling."""
    lay = layout(scenario, seed)
    poses, speed = settle(lay)
    comment = (f"Generated by sim_fidelity/world_generators/truck.py: scenario {scenario}, "
               f"seed {seed}, {len(lay)} packets, settled (max speed {speed:.4f} m/s); "
               "do not edit.")
    return world_sdf(f"truck_{scenario}", packets_sdf(lay, poses), comment=comment), speed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output-dir", default=str(data_dir("worlds")))
    args = parser.parse_args(argv)
    for s in args.scenarios:
        text, speed = scenario_sdf(s, args.seed)
        path = Path(args.output_dir) / f"truck_{s}.sdf"
        path.write_text(text)
        print(f"{path}: {len(layout(s, args.seed))} packets, "
              f"max speed after settling {speed:.4f} m/s")


if __name__ == "__main__":
    main()
