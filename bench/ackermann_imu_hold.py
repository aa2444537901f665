"""Kernels and Redes/K with the kernel manager writing the pose only, against the pipeline's
manager, which also holds the IMU's pitch at the kernel's for the period (issue 15).

The pipeline's spec (``config/reality_gap/ackermann_ugv.yaml``) applies f_k(s, a) to the
vehicle's pose (x, y, yaw, pitch) and to the IMU's settable pitch value. On the flat design field
a pitched pose falls flat within a few control ticks, so with the pose alone the mission reads
the kernel's pitch for an instant at most. Variant ``pose`` drops the spec's ``value`` targets;
variant ``value`` is the spec as shipped. Both fly the pipeline's own ``fly`` with the pipeline's
starts and mission parameters on a fresh design field, with the kernels of one kernels file.

    .venv/bin/python bench/ackermann_imu_hold.py KERNELS.yaml [--missions 60]
        [--variants pose,value] [--seed 0]
"""
from __future__ import annotations

import argparse
import dataclasses
import os

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

import numpy as np  # noqa: E402

from sim_fidelity.reality_gap.kernel_file import load_kernels  # noqa: E402
from sim_fidelity.reality_gap.kernel_set import KernelRunner, KernelSet  # noqa: E402
from sim_fidelity.reality_gap.spec import SENSOR_VALUE, load_spec  # noqa: E402
from sim_fidelity.ugv.fly import fly, starts  # noqa: E402
from sim_fidelity.ugv.mission import MissionParams  # noqa: E402
from sim_fidelity.ugv.pipeline import SPEC  # noqa: E402
from sim_fidelity.ugv.vehicle import UgvSim  # noqa: E402

VARIANTS = ("pose", "value")


def run(kernels_file: str, variant: str, missions: int, seed: int = 0) -> None:
    """Fly the Kernels and Redes/K phases with the kernels of ``kernels_file`` under the
    shipped spec's apply targets (``value``) or its pose targets alone (``pose``)."""
    spec = load_spec(SPEC)
    if variant == "pose":
        spec = dataclasses.replace(spec, apply=tuple(t for t in spec.apply
                                                     if t.component != SENSOR_VALUE))
    sim = UgvSim.from_world("design", seed=seed)
    runner = KernelRunner(sim.engine, KernelSet(load_kernels(kernels_file).kernels, spec),
                          sensors=sim.sensors)
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
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--seed", type=int, default=0,
                        help="the starts' and the design field's noise seed (the pipeline's: 0)")
    args = parser.parse_args()
    for variant in args.variants.split(","):
        if variant not in VARIANTS:
            parser.error(f"--variants: '{variant}' is not one of {', '.join(VARIANTS)}")
        run(args.kernels, variant, args.missions, args.seed)


if __name__ == "__main__":
    main()
