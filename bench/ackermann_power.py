"""How strong each divergence test is at the Ackermann course's data size (prints a table; not a
test). Paper 001 generated 15 kernels from 951 / 942 transitions; this asks whether a test can
find a gap of the ramp's kind in that much data, and how many false kernels it makes without
one: the *g-test* (a G-test per node, Benjamini-Hochberg at the spec's false-discovery rate) and
the *paper*'s rule at each ``--gaps`` value of ``min_probability_gap``
(``reality_gap/divergence.py``), each over the roll-out seeds ``--rollout-seeds``.

    .venv/bin/python bench/ackermann_power.py [--missions 15,30,60] [--work DIR]
        [--gaps 0.5,0.7,0.9] [--rollout-seeds 0,1,2] [--design-seeds 8,7]

Two independent sets of design missions (the original software on the design field, seeds 8
and 7 by default, the pipeline's ``fly``; bags kept in ``--work`` and reused) stand in for the
two sides,
so everything but the planted gap is noise both sides share. *Null*: the two sets as they are
(every divergent node, every kernel is a false one). *Planted*: in the second set, every
transition that starts over the ramp's footprint (|x| <= 1.5 m, 13 <= y <= 17 m, about a third
of a 2 s step beyond the ramp's 0.92 m half-length) moves a third as far and ends pitched
-0.4 rad, as on the slope: a gap larger than eps_c at every such node, the same in every mission.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from sim_fidelity.reality_gap import History, Spec, generate, load_spec, read_histories
from sim_fidelity.ugv.fly import fly, starts
from sim_fidelity.ugv.mission import MissionParams
from sim_fidelity.ugv.pipeline import SPEC
from sim_fidelity.ugv.vehicle import UgvSim

SLOW, PITCH = 1.0 / 3.0, -0.4


def over_ramp(s: np.ndarray) -> np.ndarray:
    """Rows of states ``(n, d)`` whose x, y lie over the ramp's footprint (with a margin)."""
    return (np.abs(s[:, 0]) <= 1.5) & (s[:, 1] >= 13.0) & (s[:, 1] <= 17.0)


def design_bags(n: int, seed: int, folder: Path) -> list[Path]:
    """``n`` design missions' bags in ``folder`` (flown only where missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    bags = [folder / f"mission_{i:04d}" for i in range(n)]
    if not all(b.exists() for b in bags):
        sim = UgvSim.from_world("design", seed=seed)
        for bag, start in zip(bags, starts(n, seed)):
            if not bag.exists():
                fly(sim, MissionParams(), start, bag)
    return bags


def plant(h: History) -> tuple[History, int]:
    """The history with the ramp planted; how many transitions it changed."""
    s2 = h.s2.copy()
    rows = over_ramp(h.s)
    s2[rows, :2] = h.s[rows, :2] + SLOW * (h.s2[rows, :2] - h.s[rows, :2])
    s2[rows, 3] = PITCH
    return History(h.s, h.u, h.a, h.r, s2, h.t, h.run), int(rows.sum())


def with_test(spec: Spec, gap: float | None) -> Spec:
    """``spec`` with the g-test (``gap`` None) or the paper's rule at ``gap``."""
    raw = dict(spec.raw, divergence={"test": "g-test", "fdr": 0.05} if gap is None
               else {"test": "paper", "min_probability_gap": gap})
    return Spec.from_dict(raw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missions", default="15,30,60", help="missions per side, comma-separated")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ackermann_power"))
    ap.add_argument("--gaps", default="0.5,0.7,0.9",
                    help="min_probability_gap values of the paper's rule, comma-separated")
    ap.add_argument("--rollout-seeds", default="0,1,2", help="roll-out seeds, comma-separated")
    ap.add_argument("--design-seeds", default="8,7",
                    help="seeds of the simulation side's and the deployment side's missions")
    args = ap.parse_args()
    counts = sorted(int(n) for n in args.missions.split(","))
    gaps = [None] + [float(g) for g in args.gaps.split(",") if g]
    seeds = [int(s) for s in args.rollout_seeds.split(",")]
    spec = load_spec(SPEC)
    t0 = time.perf_counter()
    sides = [int(s) for s in args.design_seeds.split(",")]
    if len(sides) != 2:
        ap.error("--design-seeds takes two seeds")
    bags = [design_bags(counts[-1], seed, args.work / f"design_seed{seed}") for seed in sides]
    print(f"design missions flown or found in {time.perf_counter() - t0:.0f} s")
    print("missions  case     test       seed  transitions  nodes  S0 nodes (states)  tested  "
          "divergent (over ramp / tested there)  divergences  kernels (centre over ramp)")
    for n in counts:
        sim, real = (read_histories(b[:n], spec) for b in bags)
        for case in ("null", "planted"):
            phy, changed = plant(real) if case == "planted" else (real, 0)
            for gap in gaps:
                test = with_test(spec, gap)
                for seed in seeds:
                    g = generate(sim, phy, test, seed=seed)
                    s = g.summary
                    ramp = over_ramp(g.nodes.centres)
                    inside = sum(bool(over_ramp(k.centre[None])[0]) for k in g.kernels)
                    name = "g-test" if gap is None else f"paper {gap:g}"
                    print(f"{n:>8}  {case:<7}  {name:<9}  {seed:>4}  {s.transitions_sim:>4} / "
                          f"{s.transitions_phy:<4}  {s.nodes:>5}  {s.common_states:>3} "
                          f"({s.common_samples_sim} / {s.common_samples_phy})  "
                          f"{s.tested_nodes:>6}  {s.divergent_nodes:>3} "
                          f"({int((g.divergent & ramp).sum())} / "
                          f"{int((g.tested & ramp).sum())})  {s.divergences:>5}  "
                          f"{s.kernels} ({inside})"
                          + (f"  [{changed} transitions planted]" if changed else ""),
                          flush=True)


if __name__ == "__main__":
    main()
