"""The 1-D example (paper section IV, ``simfid example oned``) under each divergence test (prints
a table; not a test): the kernels each test makes from the same bags, and the example's outcome
(ATR of every phase, the share of the reality gap the kernels reproduce).

    .venv/bin/python bench/oned_divergence.py [--missions 1000] [--seed 0] [--gap 0.7]

The example's spec (``config/reality_gap/one_d_example.yaml``) with its ``divergence`` section
replaced: the *g-test* at FDR 0.05, and the *paper*'s rule at ``--gap``
(``min_probability_gap``). Everything else (missions, regions, seeds) is the example's, so both
runs fly the same Design and Deploy missions.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from sim_fidelity.oned import example
from sim_fidelity.reality_gap import load_spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missions", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gap", type=float, default=0.7, help="min_probability_gap of the paper's")
    args = ap.parse_args()
    base = load_spec(example.SPEC).raw
    tests = {"g-test": {"test": "g-test", "fdr": 0.05},
             f"paper {args.gap:g}": {"test": "paper", "min_probability_gap": args.gap}}
    print("test        divergent  divergences  kernels  dropped  immaterial  Design  Deploy  "
          "Kernels  Redes/K  Redeploy  gap reproduced")
    with tempfile.TemporaryDirectory() as tmp:
        for name, divergence in tests.items():
            spec = Path(tmp) / f"{name.replace(' ', '_')}.yaml"
            spec.write_text(yaml.safe_dump(dict(base, divergence=divergence)))
            example.SPEC = spec  # the example reads its spec from here
            o = example.run_example(args.missions, args.seed)
            s, a = o.summary, o.atr
            print(f"{name:<10}  {s.divergent_nodes:>9}  {s.divergences:>11}  {s.kernels:>7}  "
                  f"{s.dropped:>7}  {s.immaterial:>10}  {a['Design']:+6.2f}  {a['Deploy']:+6.2f}"
                  f"  {a['Kernels']:+7.2f}  {a['Redes/K']:+7.2f}  {a['Redeploy']:+8.2f}  "
                  f"{100 * o.reproduced:.1f} %", flush=True)


if __name__ == "__main__":
    main()
