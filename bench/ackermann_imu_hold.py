"""Kernels and Redes/K with the kernel's pitch also returned by the IMU for the sampling period
(issue 15, an experiment; the pipeline does not do this).

The pipeline's kernel manager sets the vehicle's pose (x, y, yaw, pitch) to f_k(s, a). On the
flat design field a pitched pose falls flat within a few control ticks, so the mission software
reads the kernel's pitch for an instant at most, and the redesign (a pitch check) has little to
act on. Paper 001 says the manager modifies the simulation "so that it returns f_k(s, a)", a
"new sensor state - position, orientation and pitch". Variant ``hold`` keeps the IMU's reported
pitch at the kernel's for one sampling period after each correction (up to the manager's next
look, which reads the simulation's own IMU); variant ``pose`` is the pipeline's manager alone.
Both fly the pipeline's own ``fly`` with the pipeline's starts and mission parameters on a fresh
design field, with the same kernels file.

    .venv/bin/python bench/ackermann_imu_hold.py KERNELS.yaml [--missions 60]
        [--variants pose,hold] [--seed 0]
"""
from __future__ import annotations

import argparse
import dataclasses
import os

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import numpy as np  # noqa: E402

from sim_fidelity.reality_gap.kernel_file import load_kernels  # noqa: E402
from sim_fidelity.reality_gap.kernel_set import KernelRunner, KernelSet  # noqa: E402
from sim_fidelity.simulator.poses import rpy_to_quat  # noqa: E402
from sim_fidelity.ugv.fly import PERIOD, fly, starts  # noqa: E402
from sim_fidelity.ugv.mission import MissionParams  # noqa: E402
from sim_fidelity.ugv.vehicle import UgvSim  # noqa: E402


class PitchHold:
    """The design field's IMU, reporting a held pitch until ``until`` (sim time)."""

    def __init__(self, sim: UgvSim):
        self.sim, self.read = sim, sim.imu
        self.pitch, self.until = 0.0, -1.0
        sim.imu = self

    def __call__(self):
        sample = self.read()
        if sample is None or self.sim.time >= self.until:
            return sample
        roll, _, yaw = sample.rpy
        return dataclasses.replace(sample, orientation=rpy_to_quat(roll, self.pitch, yaw))


class HoldingRunner(KernelRunner):
    """The kernel manager; each correction also holds the IMU at the kernel's pitch for one
    sampling period."""

    def __init__(self, sim: UgvSim, kernels: KernelSet, hold: PitchHold):
        super().__init__(sim.engine, kernels)
        self.vehicle, self.hold = sim, hold
        self.period = 1.0 / kernels.spec.rate_hz
        self.pitch_index = kernels.spec.state_names.index("pitch")

    def apply(self, state, action):
        hit = super().apply(state, action)
        if hit is not None:
            self.hold.pitch = float(hit[1][self.pitch_index])
            # up to the manager's next look, which reads the simulation's own IMU again
            self.hold.until = self.vehicle.time + self.period - 0.5 * PERIOD
        return hit

    def release(self) -> None:
        """At a mission's end (``fly`` releases the manager): no hold into the next one, whose
        clock starts again at 0."""
        super().release()
        self.hold.until = -1.0


def run(kernels_file: str, variant: str, missions: int, seed: int = 0) -> None:
    loaded = load_kernels(kernels_file)
    kernels = KernelSet(loaded.kernels, loaded.spec)
    sim = UgvSim.from_world("design", seed=seed)
    runner = (HoldingRunner(sim, kernels, PitchHold(sim)) if variant == "hold"
              else KernelRunner(sim.engine, kernels))
    for phase, params in (("Kernels", MissionParams()), ("Redes/K", MissionParams().redesigned())):
        flights = [fly(sim, params, start, runner=runner) for start in starts(missions, seed)]
        totals = np.array([f.total for f in flights])
        arrivals = np.array([np.nan if f.arrived_at is None else f.arrived_at for f in flights])
        print(f"seed {seed} {variant:<5} {phase:<8} ATR {totals.mean():+6.2f}  on time "
              f"{int((totals > 0).sum()):>2}/{missions}  mean arrival {np.nanmean(arrivals):5.2f} s"
              f"  corrections {sum(f.kernel_hits for f in flights)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", help="a kernels file (simfid example ackermann --bags DIR)")
    parser.add_argument("--missions", type=int, default=60)
    parser.add_argument("--variants", default="pose,hold")
    parser.add_argument("--seed", type=int, default=0,
                        help="the starts' and the design field's noise seed (the pipeline's: 0)")
    args = parser.parse_args()
    for variant in args.variants.split(","):
        run(args.kernels, variant, args.missions, args.seed)


if __name__ == "__main__":
    main()
