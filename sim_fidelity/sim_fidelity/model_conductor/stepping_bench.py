"""Service against clock stepping (paper 003, section 3.2): exactness against real-time factor.

A world (ground and a ball) is the main model; a deliberately slow :class:`Carrier` (it sleeps
``cost`` per step) holds the ball's pose from the start and moves it at a constant velocity, so
the main world's ball must be at ``velocity * t`` after every tick if the two are in lock step.
Setups, run one after another in one process:

* ``alone``: the world without the carrier (the reference real-time factor);
* ``service``: the carrier stepped by a blocking call: the world waits for it every tick;
* ``clock``: the carrier on the clock signal, the world running as fast as it can;
* ``clock-realtime``: the same with the conductor paced to the wall clock (live data), where a
  model whose step costs more than its period skips ticks.

For each: wall time, real-time factor, the carrier's steps and skips, its lag behind the main
clock, and the largest distance between the world's ball and the lock-step truth.
"""
from __future__ import annotations

import threading
import time as _time
from dataclasses import asdict, dataclass

import mujoco
import numpy as np

from ..simulator.engine import MujocoEngine
from ..world_generators.sdf_text import ball_model, ground_plane, world
from .conductor import Conductor
from .demo_models import Carrier
from .model import POSE, Stepping
from .simulation_model import SimulatorModel

SETUPS = ("alone", "service", "clock", "clock-realtime")
BALL = ball_model("ball", 0, 0, 1)
VELOCITY = (0.5, 0.0, 0.0)


@dataclass(frozen=True)
class SetupResult:
    setup: str
    sim_time: float
    wall: float
    real_time_factor: float
    carrier_steps: int
    skips: int
    lag: float  # main time minus the carrier's time at the end, seconds
    max_error: float  # largest |ball in the world - lock-step truth| after a tick, metres


def run_setup(setup: str, duration: float, step: float, cost: float) -> SetupResult:
    """One setup of :data:`SETUPS`."""
    engine = MujocoEngine.from_string(world("stepping", ground_plane("ground"), BALL))
    conductor = Conductor(step=step, realtime=(setup == "clock-realtime"))
    conductor.register(SimulatorModel("world", engine), main=True)
    carrier = None
    if setup != "alone":
        stepping = Stepping.SERVICE if setup == "service" else Stepping.CLOCK
        carrier = Carrier("carrier", stepping=stepping, entities=("ball",), velocity=VELOCITY,
                          cost=cost)
        conductor.register(carrier)
    conductor.initialise(responsibilities={("ball", POSE): "carrier"} if carrier else None)
    start = engine.get_states(["ball"])[0][0, :3].copy()
    errors = []
    conductor.start()
    wall0 = _time.perf_counter()
    while conductor.time + 1e-9 < duration:
        if conductor.realtime:
            ahead = conductor.time - (_time.perf_counter() - wall0)
            if ahead > 0:
                _time.sleep(ahead)
        conductor.tick()
        if carrier is not None:
            truth = start + np.asarray(VELOCITY) * conductor.time
            errors.append(np.linalg.norm(engine.get_states(["ball"])[0][0, :3] - truth))
    wall = _time.perf_counter() - wall0
    conductor.stop()
    report = {m.name: m for m in conductor.report(wall).models}.get("carrier")
    return SetupResult(setup, conductor.time, wall, conductor.time / wall,
                       report.steps if report else 0, report.skips if report else 0,
                       report.lag if report else 0.0, max(errors) if errors else 0.0)


def gil_check(seconds: float = 0.3) -> dict[str, float]:
    """Does ``mj_step`` release the GIL? Python-loop iterations in this thread while another
    thread is inside one long ``mj_step(nstep=...)`` call, against the same loop alone (zero
    while the call runs if the GIL were held)."""
    engine = MujocoEngine.from_string(world("gil", ground_plane("ground"), BALL))
    m, d = engine.model, engine.data
    t0 = _time.perf_counter()
    mujoco.mj_step(m, d, nstep=200)
    per_step = max((_time.perf_counter() - t0) / 200, 1e-7)
    nstep = int(seconds / per_step)

    def spin(until: threading.Event | float) -> int:
        n = 0
        if isinstance(until, float):
            end = _time.perf_counter() + until
            while _time.perf_counter() < end:
                n += 1
        else:
            while not until.is_set():
                n += 1
        return n

    alone = spin(seconds)
    inside, done = threading.Event(), threading.Event()

    def stepper() -> None:
        inside.set()
        mujoco.mj_step(m, d, nstep=nstep)
        done.set()

    thread = threading.Thread(target=stepper)
    thread.start()
    inside.wait()
    t1 = _time.perf_counter()
    during = spin(done)
    elapsed = _time.perf_counter() - t1
    thread.join()
    return {"loop_rate_alone": alone / seconds, "loop_rate_during_mj_step": during / elapsed,
            "mj_step_seconds": elapsed}


def run(duration: float = 2.0, step: float = 0.01, cost: float = 0.015,
        setups: tuple[str, ...] = SETUPS) -> dict:
    """Every setup, side by side; ratios of real-time factors against ``service``."""
    results = [run_setup(s, duration, step, cost) for s in setups]
    by = {r.setup: r for r in results}
    ratios = {}
    if "service" in by:
        ratios = {f"{r.setup}/service": r.real_time_factor / by["service"].real_time_factor
                  for r in results if r.setup != "service"}
    return {"duration": duration, "step": step, "cost": cost,
            "setups": [asdict(r) for r in results], "rtf_ratios": ratios, "gil": gil_check()}
