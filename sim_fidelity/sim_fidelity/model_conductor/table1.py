"""Paper 003's Table 1 on the embedded engine: splitting a simulation raises the real-time factor.

The scene (``worlds/conductor_*.sdf``, :mod:`~sim_fidelity.world_generators.conductor_scene`): the
``ur5e_hand3`` arm replays a recorded motion (:mod:`~sim_fidelity.world_generators.
conductor_motion`) that grasps a cup of spherical particles, lifts, carries and tilts it so part of
the "fluid" pours out. Every setup runs through the :class:`Conductor` with the recording as its
data source, the conductor's tick by default equal to the main world's physics step (exact lock
step; a longer tick steps every model several physics steps between exchanges):

1. the scene without particles (one model);
2. the robot with 50 particles in one simulation (one model);
3. the main simulation (setup 1's world) plus a separate particle model of 50 particles whose cup
   follows the main model's cup (it holds the cup's pose), both SERVICE-stepped and so stepped
   concurrently every tick;
4. the same with 100 particles;
5. as 4 with a 1.5x larger particle step (the particle model steps on 2 of 3 ticks).

Every engine uses MuJoCo's CG solver (:data:`SOLVER`): the worlds' ODE ``quick`` solver is
iterative, and MuJoCo's default Newton solver factorises a dense Hessian over all particles
coupled by contacts (about 5x slower per step on 50 particles here). The separate particle model
of setups 3-5 stops its solver at :data:`PARTICLE_TOLERANCE` instead of MuJoCo's 1e-8 and skips
the collision midphase (:data:`PARTICLE_MIDPHASE`): what a model of its own may choose for what it
simulates (the robot's grasp shares the solver of the single simulation); its followed cup is
immovable by the particles (:data:`~sim_fidelity.model_conductor.particles.FOLLOWED_MASS_SCALE`).
The outcome check compares (2) with (3): particle positions in the cup frame and the number
spilled.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from ..data import data_dir
from ..simulator.engine import MujocoEngine
from ..world_generators import conductor_motion as motion
from ..world_generators import conductor_scene as scene
from .conductor import Conductor
from .data_sources import RecordedSource
from .errors import ConductorError
from .particles import FOLLOWED_MASS_SCALE, ParticleSimulation, in_frame, inside_cup
from .simulation_model import SimulatorModel

SOLVER = mujoco.mjtSolver.mjSOL_CG
# the particle model's solver tolerance (MuJoCo's relative-improvement stop; its default 1e-8
# stays in every other engine): docs/conductor.md, "The particle model's own settings"
PARTICLE_TOLERANCE = 1e-5
# the particle model's collision midphase: off (its bodies are single spheres, the cup's 17
# primitives; walking the cup's and the world's geom trees cost more than testing their bounding
# spheres; the same contacts, bit-identical runs). Setup 2 keeps it: off did not make it cheaper
PARTICLE_MIDPHASE = False
STEP_FACTOR = 1.5  # the last setup's particle step over the main step
BASELINE = 2  # the single simulation the split setups are compared with
# the outcome check between setup 2 and the split setup of the same particles: the number
# spilled within SPILL_TOLERANCE of the particles, the centroid of those left in the cup (cup
# frame) within CENTROID_TOLERANCE metres
SPILL_TOLERANCE = 0.1
CENTROID_TOLERANCE = 0.01
SHARED = "^cup$"  # what the models represent: the one entity they share (outcomes are read from
# the engines after the run)
PAPER = {1: 0.98, 2: 0.55, 3: 0.97, 4: 0.75, 5: 1.09}  # paper 003, Table 1 (Gazebo/ODE)


@dataclass(frozen=True)
class Setup:
    number: int
    label: str
    main_world: str  # file in worlds/
    particles: int = 0
    particle_world: str | None = None  # the separate particle model's world
    step_factor: float = 1.0  # the particle model's step over the main model's

    @property
    def split(self) -> bool:
        return self.particle_world is not None


def setups(counts: tuple[int, ...] = scene.PARTICLE_COUNTS) -> list[Setup]:
    """The setups of Table 1 for the particle counts of the split setups (the paper's: 50, 100)."""
    bad = [n for n in counts if n not in scene.PARTICLE_COUNTS]
    if not counts or bad:
        raise ConductorError(f"Table 1: particle counts must be among "
                             f"{', '.join(map(str, scene.PARTICLE_COUNTS))} (the generated "
                             f"worlds); got {', '.join(map(str, counts)) or 'none'}")
    baseline = scene.PARTICLE_COUNTS[0]
    out = [Setup(1, "bare simulation w/o particles", "conductor_arm.sdf"),
           Setup(BASELINE, f"robot with {baseline} particles",
                 f"conductor_arm_particles_{baseline}.sdf", baseline)]
    for n in counts:
        out.append(Setup(len(out) + 1, f"robot + {n} particles, split", "conductor_arm.sdf", n,
                         f"conductor_particles_{n}.sdf"))
    n = counts[-1]
    out.append(Setup(len(out) + 1, f"robot + {n} particles, split, {STEP_FACTOR:g}x particle "
                     "step", "conductor_arm.sdf", n, f"conductor_particles_{n}.sdf",
                     STEP_FACTOR))
    return out


def engine(world: str, step: float | None = None, tolerance: float | None = None,
           midphase: bool = True) -> MujocoEngine:
    """A Table 1 world from the package's worlds/ with the CG solver (stopping at
    ``tolerance``, default MuJoCo's), with or without the collision midphase."""
    sim = MujocoEngine.from_file(data_dir("worlds") / world, step_size=step)
    sim.model.opt.solver = SOLVER
    if tolerance is not None:
        sim.model.opt.tolerance = tolerance
    if not midphase:
        sim.model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)
    return sim


def ensemble(setup: Setup, tick: float | None = None) -> tuple[Conductor, MujocoEngine]:
    """The initialised conductor of a setup (its tick: ``tick`` seconds, default the physics
    step) and the engine that simulates its particles (the main engine when there is no
    particle model)."""
    main = engine(setup.main_world)
    tick = main.step_size if tick is None else tick
    steps = tick / main.step_size
    if not (steps >= 1 and abs(steps - round(steps)) < 1e-9):
        raise ConductorError(f"Table 1: the tick must be a whole number of physics steps "
                             f"({main.step_size:g} s); got {tick:g} s")
    conductor = Conductor(step=tick)
    conductor.register(SimulatorModel("main", main, entities=SHARED), main=True)
    holder = main
    if setup.split:
        step = main.step_size * setup.step_factor
        holder = engine(setup.particle_world, step, PARTICLE_TOLERANCE, PARTICLE_MIDPHASE)
        conductor.register(ParticleSimulation(
            "particles", holder, period=step if setup.step_factor != 1.0 else None,
            entities=SHARED))
    conductor.initialise()
    return conductor, holder


def outcome(sim: MujocoEngine, particles: int) -> dict[str, Any]:
    """Particles in the cup frame: how many are in the cup, spilled, and the centroid of those
    in it."""
    if not particles:
        return {}
    rel = in_frame(sim, "cup", scene.particle_names(particles))
    inside = inside_cup(rel, scene.cup_inner_radius(), scene.CUP_HEIGHT)
    centroid = rel[inside].mean(axis=0) if inside.any() else np.full(3, np.nan)
    return {"inside": int(inside.sum()), "spilled": int((~inside).sum()),
            "centroid": centroid.round(5).tolist()}


def run_setup(setup: Setup, bag: Path, duration: float,
              tick: float | None = None) -> dict[str, Any]:
    """Run one setup on the recording; its real-time factor, the CPU seconds of the process per
    wall second (above 1: models ran in parallel), each model's steps and CPU microseconds per
    tick, the rest of the process's CPU per tick (the conductor: data, exchange, hand-offs), and
    the outcome."""
    conductor, holder = ensemble(setup, tick)
    source = RecordedSource(bag)
    cpu = time.process_time()
    report = conductor.run(duration=duration, source=source)
    cpu = time.process_time() - cpu
    ticks = max(report.ticks, 1)
    return {"setup": setup.number, "label": setup.label, "split": setup.split,
            "particles": setup.particles, "step_factor": setup.step_factor,
            "time": report.time, "wall": report.wall,
            "real_time_factor": report.real_time_factor, "cpu_per_wall": cpu / report.wall,
            "models": {m.name: {"steps": m.steps, "time": m.time,
                                "cpu_us_per_tick": m.cpu / ticks * 1e6} for m in report.models},
            "rest_cpu_us_per_tick": (cpu - sum(m.cpu for m in report.models)) / ticks * 1e6,
            "outcome": outcome(holder, setup.particles)}


def compare(single: dict[str, Any], split: dict[str, Any]) -> dict[str, Any]:
    """The outcome check between the single simulation and the split one of the same
    particles."""
    n = single["particles"]
    a, b = single["outcome"], split["outcome"]
    spill = abs(a["spilled"] - b["spilled"])
    shift = float(np.linalg.norm(np.subtract(a["centroid"], b["centroid"])))
    return {"setups": [single["setup"], split["setup"]], "spilled": [a["spilled"], b["spilled"]],
            "spill_difference": spill, "spill_tolerance": SPILL_TOLERANCE * n,
            "centroid_shift": shift, "centroid_tolerance": CENTROID_TOLERANCE,
            "agree": bool(spill <= SPILL_TOLERANCE * n and shift <= CENTROID_TOLERANCE)}


def run(counts: tuple[int, ...] = scene.PARTICLE_COUNTS, duration: float | None = None,
        repeats: int = 1, tick: float | None = None, progress: bool = True) -> dict[str, Any]:
    """Every setup side by side in one run, ``repeats`` rounds of all setups in turn (each
    setup's real-time factor is the median over the rounds, so a busy spell of the machine does
    not fall on one setup only); ratios of the split setups to setup 2 and the outcome check (the
    runs are deterministic: the first round's outcome)."""
    chosen = setups(counts)
    total = motion.duration()
    duration = total if duration is None else duration
    if not 0 < duration <= total:
        raise ConductorError(f"Table 1: duration must be in (0, {total:g}] s (the recording); "
                             f"got {duration:g}")
    if repeats < 1:
        raise ConductorError(f"Table 1: repeats must be at least 1; got {repeats}")
    rounds: list[list[dict[str, Any]]] = []
    load = [os.getloadavg()[0]]  # the machine's 1-minute load average, before and after
    with tempfile.TemporaryDirectory(prefix="table1_") as tmp:
        bag = motion.write_bag(Path(tmp) / "motion", *motion.trajectory())
        for k in range(repeats):
            rounds.append([])
            for setup in chosen:
                result = run_setup(setup, bag, duration, tick)
                rounds[-1].append(result)
                if progress:
                    print(f"round {k + 1}/{repeats}, setup {setup.number}: RTF "
                          f"{result['real_time_factor']:.3f} ({result['wall']:.1f} s wall)",
                          file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    results = rounds[0]
    for i, r in enumerate(results):
        r["rounds"] = [rnd[i]["real_time_factor"] for rnd in rounds]
        r["real_time_factor"] = float(np.median(r["rounds"]))
        r["cpu_per_wall"] = float(np.median([rnd[i]["cpu_per_wall"] for rnd in rounds]))
    base = next(r for r in results if r["setup"] == BASELINE)
    for r in results:
        if r["split"]:
            r["ratio_to_setup_2"] = r["real_time_factor"] / base["real_time_factor"]
    twin = next((r for r in results if r["split"] and r["particles"] == base["particles"]
                 and r["step_factor"] == 1.0), None)
    return {"duration": duration, "repeats": repeats, "step": scene.STEP, "load_average": load,
            "tick": scene.STEP if tick is None else tick, "solver": "CG",
            "particle_tolerance": PARTICLE_TOLERANCE, "particle_midphase": PARTICLE_MIDPHASE,
            "followed_mass_scale": FOLLOWED_MASS_SCALE,
            "setups": results, "outcome_check": compare(base, twin) if twin else None,
            "paper": PAPER}
