"""Paired bag sets with a planted reality gap, and how well kernels find it (issue 17).

A robot drives between random waypoints on a 10 m track (1-D) or a 10 m x 10 m field (2-D),
commanding a saturated velocity towards the waypoint, logged at 2 Hz. The *simulation* moves it
by the command; the *deployment* does the same except in a planted region (1-D: x in [4, 6];
2-D: the disc of radius 1.5 m around (5, 5)), where the gap has one of these shapes:

- ``slow``: the robot moves at a third of the command while inside (mud);
- ``drift``: an extra 0.4 m/s along +x while inside (a slope, a current);
- ``stuck``: a step that starts inside moves nothing with probability 1/2 (a wheel that slips);
- ``none``: no gap (every kernel is a false one).

Both sides add Gaussian position noise of ``noise`` m per step. Each run is written as a bag by
``write_run`` and read back by ``read_histories``: the kernels see what they would see from
real bags.

The truth: for a state s, the gap size is the largest difference, over the spec's action
values, between the deployment's noise-free outcome (for ``stuck``: its stuck branch) and the
simulation's. Precision is the share of kernel support (the visited states where a kernel is
active) where the gap size is > 0 (the transition function differs there at all); recall is
the share of the states with a gap larger than ``eps_c / 2`` (a difference the node resolution
can show) that an active kernel covers. Both are measured on a grid (``CELL``) over the visited
states: the centres of the grid cells a state of either history fell in, so a region counts
by its size, not by how long the robot stayed there.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .bags import History, read_histories
from .errors import RealityGapError
from .kernel_set import KernelSet
from .kernels import Generation, generate
from .record import write_run
from .spec import Spec

SHAPES = ("slow", "drift", "stuck", "none")
PERIOD = 0.5  # s between samples (2 Hz)
SUBSTEPS = 10  # integration steps per period
SIZE = 10.0  # m, the track / field
V_MAX = 1.0  # m/s, the command's saturation
GAIN = 2.0  # 1/s, command = GAIN * (waypoint - position), saturated
ARRIVED = 0.1  # m: a new waypoint is drawn
SLOW = 1.0 / 3.0
DRIFT = 0.4  # m/s along +x
STUCK = 0.5  # probability
RUN = 400  # transitions per bag
CELL = {1: 0.02, 2: 0.1}  # m, the grid precision and recall are measured on


@dataclass(frozen=True)
class Case:
    """One planted-gap case: dimension, gap shape, noise (m per step), transitions per side."""

    dims: int
    shape: str
    noise: float
    transitions: int
    seed: int = 0

    def __post_init__(self):
        if self.dims not in (1, 2) or self.shape not in SHAPES or self.noise < 0 \
                or self.transitions < RUN:
            raise RealityGapError(f"planted case {self}: dims 1 or 2, shape one of {SHAPES}, "
                                  f"noise >= 0, transitions >= {RUN}")

    @property
    def name(self) -> str:
        return f"{self.dims}-D {self.shape} noise {self.noise:g} m, {self.transitions:,}/side"


def case_spec(dims: int) -> Spec:
    """The state spec of the planted cases: positions from odometry, the velocity command."""
    odom = {"topic": "/odom", "type": "nav_msgs/msg/Odometry"}
    cmd = {"topic": "/cmd_vel", "type": "geometry_msgs/msg/Twist"}
    axes = "xy"[:dims]
    # in a plane the data spreads over ~100 times more nodes than along a track: coarser
    # nodes and commands keep ~50 transitions per node and side at 20,000 per side
    eps = 0.1 if dims == 1 else 0.5
    values = [-1.0, -0.5, 0.0, 0.5, 1.0] if dims == 1 else [-1.0, 0.0, 1.0]
    return Spec.from_dict({
        "state": [{"name": a, **odom, "field": f"pose.pose.position.{a}"} for a in axes],
        "action": [{"name": f"v{a}", **cmd, "field": f"linear.{a}", "values": values}
                   for a in axes],
        "sampling": {"rate_hz": 1.0 / PERIOD, "interpolation": "hold"},
        "distance": {"eps_c": eps},
        "divergence": {"fdr": 0.05},
        "rollouts": {"count": 2000, "max_steps": 40},
        # nodes lie ~eps_c apart along a track, up to ~2 eps_c apart in a plane: the reach
        # (0.67 sigma at 0.8, 1.01 sigma at 0.6) covers a region's nodes without gaps
        "kernels": {"sigma": eps, "activation_threshold": 0.8 if dims == 1 else 0.6,
                    "ridge": 1.0, "min_samples": 2},
    })


def inside(case: Case, p: np.ndarray) -> np.ndarray:
    """Whether positions ``p`` ``(n, dims)`` lie in the planted region."""
    if case.dims == 1:
        return (p[:, 0] >= 4.0) & (p[:, 0] <= 6.0)
    return np.hypot(p[:, 0] - 5.0, p[:, 1] - 5.0) <= 1.5


def step(case: Case, p: np.ndarray, u: np.ndarray, real: bool,
         stuck: np.ndarray | None = None) -> np.ndarray:
    """Noise-free position one period after ``p`` under commands ``u`` (rows). ``stuck``:
    which rows take the stuck branch (``stuck`` shape, deployment, starting inside)."""
    if not real or case.shape == "none":
        return p + u * PERIOD
    if case.shape == "stuck":
        moved = p + u * PERIOD
        frozen = inside(case, p) & (stuck if stuck is not None else True)
        return np.where(frozen[:, None], p, moved)
    dt = PERIOD / SUBSTEPS
    p = p.copy()
    for _ in range(SUBSTEPS):
        there = inside(case, p)[:, None]
        if case.shape == "slow":
            p = p + np.where(there, SLOW, 1.0) * u * dt
        else:
            p = p + there * np.eye(case.dims)[0] * DRIFT * dt + u * dt
    return p


def drive(case: Case, real: bool, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """States ``(runs, RUN + 1, dims)`` and commands ``(runs, RUN + 1, dims)`` of one side."""
    runs = -(-case.transitions // RUN)
    p = rng.uniform(0.5, SIZE - 0.5, (runs, case.dims))
    goal = rng.uniform(0.5, SIZE - 0.5, (runs, case.dims))
    states, commands = np.zeros((runs, RUN + 1, case.dims)), np.zeros((runs, RUN + 1, case.dims))
    for t in range(RUN + 1):
        arrived = np.abs(goal - p).sum(axis=1) < ARRIVED
        goal[arrived] = rng.uniform(0.5, SIZE - 0.5, (int(arrived.sum()), case.dims))
        u = GAIN * (goal - p)
        norm = np.linalg.norm(u, axis=1, keepdims=True)
        u = u * np.minimum(1.0, V_MAX / np.maximum(norm, 1e-12))
        states[:, t], commands[:, t] = p, u
        stuck = rng.random(runs) < STUCK
        p = step(case, p, u, real, stuck) + rng.normal(0.0, case.noise, p.shape)
        p = np.clip(p, 0.0, SIZE)
    return states, commands


def write_bags(case: Case, folder: Path) -> dict[str, list[Path]]:
    """Both sides' runs as bags under ``folder/sim`` and ``folder/real``."""
    spec = case_spec(case.dims)
    rng = np.random.default_rng(case.seed)
    out: dict[str, list[Path]] = {}
    for side in ("sim", "real"):
        states, commands = drive(case, side == "real", rng)
        times = np.arange(RUN + 1) * PERIOD
        out[side] = [write_run(folder / side / f"run_{i:04d}", spec, times, states[i],
                               commands[i]) for i in range(len(states))]
    return out


def gap_size(case: Case, states: np.ndarray, spec: Spec) -> np.ndarray:
    """Largest weighted difference, over the spec's action values, between the deployment's
    noise-free outcome (its stuck branch for ``stuck``) and the simulation's, per state."""
    states = np.atleast_2d(states)
    size = np.zeros(len(states))
    for u in spec.action_values():
        rows = np.broadcast_to(u, states.shape)
        diff = step(case, states, rows, True) - step(case, states, rows, False)
        size = np.maximum(size, np.abs(diff) @ spec.weights)
    return size


@dataclass
class Score:
    """How the kernels of one case sit on its planted gap."""

    case: str
    kernels: int
    divergent_nodes: int
    tested_nodes: int
    precision: float | None  # share of kernel support where the gap is > 0 (None: no support)
    recall: float | None  # share of the gap > eps_c / 2 covered (None: no gap)
    support: float  # share of the visited grid under an active kernel
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


def score(case: Case, gen: Generation, spec: Spec, histories: tuple[History, History],
          seconds: float) -> Score:
    """Precision and recall of the kernels of ``gen`` on the visited grid."""
    states = visited_grid(np.vstack([h.s for h in histories]), CELL[case.dims])
    active = KernelSet(gen.kernels, spec).active(states) >= 0
    size = gap_size(case, states, spec)
    gap, core = size > 1e-9, size > spec.eps_c / 2
    precision = float((active & gap).sum() / active.sum()) if active.any() else None
    recall = float((active & core).sum() / core.sum()) if core.any() else None
    return Score(case.name, len(gen.kernels), gen.summary.divergent_nodes,
                 gen.summary.tested_nodes, precision, recall, float(active.mean()), seconds)


def visited_grid(states: np.ndarray, cell: float) -> np.ndarray:
    """Centres of the grid cells of size ``cell`` holding at least one of ``states``."""
    cells = np.unique(np.floor(states / cell).astype(np.int64), axis=0)
    return (cells + 0.5) * cell


def run_case(case: Case, folder: Path) -> Score:
    """Write the case's bags, read them back, generate kernels, score them."""
    import time

    started = time.perf_counter()
    spec = case_spec(case.dims)
    bags = write_bags(case, folder)
    histories = (read_histories(bags["sim"], spec), read_histories(bags["real"], spec))
    gen = generate(*histories, spec, seed=case.seed)
    return score(case, gen, spec, histories, time.perf_counter() - started)
