"""The Table 1 particle model's step under MuJoCo's solvers and contact options (issue 13, setup
4: why the 100-particle split stays near 1x).

Each variant loads ``conductor_particles_N.sdf`` as ``table1.engine`` builds the split's particle
model (CG, its own tolerance, no midphase), changes one option, lets the particles settle in the
resting cup for 1.5 s and times 2000 bare ``mj_step`` calls in thread CPU; it prints the contacts,
the deepest penetration and the solver's iterations of the last step. Not a test.

    .venv/bin/python bench/conductor_particle_solver.py [--particles 50,100]
"""
from __future__ import annotations

import argparse
import time

import mujoco

from sim_fidelity.model_conductor import table1

VARIANTS = {
    "CG (as shipped)": lambda m: None,
    "PGS": lambda m: setattr(m.opt, "solver", mujoco.mjtSolver.mjSOL_PGS),
    "Newton": lambda m: setattr(m.opt, "solver", mujoco.mjtSolver.mjSOL_NEWTON),
    "CG, pyramidal cones": lambda m: setattr(m.opt, "cone", mujoco.mjtCone.mjCONE_PYRAMIDAL),
    "CG, sparse Jacobian": lambda m: setattr(m.opt, "jacobian", mujoco.mjtJacobian.mjJAC_SPARSE),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--particles", default="50,100")
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    for n in (int(v) for v in args.particles.split(",")):
        for label, change in VARIANTS.items():
            sim = table1.engine(f"conductor_particles_{n}.sdf", None, table1.PARTICLE_TOLERANCE,
                                table1.PARTICLE_MIDPHASE)
            m, d = sim.model, sim.data
            change(m)
            for _ in range(int(1.5 / m.opt.timestep)):
                mujoco.mj_step(m, d)
            start = time.thread_time()
            for _ in range(args.steps):
                mujoco.mj_step(m, d)
            us = 1e6 * (time.thread_time() - start) / args.steps
            depth = -d.contact.dist[:d.ncon].min() if d.ncon else 0.0
            print(f"{n:>4} particles  {label:<22} {us:7.0f} us/step  contacts {d.ncon:>4}  "
                  f"deepest {1e3 * depth:4.2f} mm  iterations {d.solver_niter[0]}", flush=True)


if __name__ == "__main__":
    main()
