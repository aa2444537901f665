"""``simfid bench conductor``: paper 003's Table 1 (:mod:`sim_fidelity.model_conductor.table1`)."""
from __future__ import annotations

import argparse
import json

from ..flag_types import count, integers, number
from ..ranges import above, at_least


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``conductor`` to the sub-commands of ``simfid bench``."""
    p = subparsers.add_parser("conductor", help="model conductor: splitting a simulation "
                              "(paper 003, Table 1)")
    p.add_argument("--particles", type=integers(at_least(1)), default=(50, 100),
                   help="particle counts of the split setups (default 50,100)")
    p.add_argument("--duration", type=number(above(0)), default=None,
                   help="sim seconds per setup (default: the whole recording)")
    p.add_argument("--repeats", type=count(), default=1,
                   help="rounds of all setups in turn; each RTF is the median (default 1)")
    p.add_argument("--tick", type=number(above(0)), default=None,
                   help="the conductor's tick in seconds, a multiple of the 1 ms physics step "
                   "(default: one physics step)")
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON object")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every setup; print the table (or JSON)."""
    from ..model_conductor.table1 import run as run_table

    result = run_table(args.particles, args.duration, args.repeats, args.tick,
                       progress=not args.no_progress)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"Table 1 (paper 003): {result['duration']:g} s of the recording per setup, "
          f"physics step {result['step'] * 1000:g} ms, tick {result['tick'] * 1000:g} ms, "
          f"MuJoCo {result['solver']} solver (the particle model's: tolerance "
          f"{result['particle_tolerance']:g}, midphase "
          f"{'on' if result['particle_midphase'] else 'off'}, its followed cup "
          f"{result['followed_mass_scale']:g}x heavier), "
          f"median of {result['repeats']} round(s); load average "
          f"{result['load_average'][0]:.1f} before, {result['load_average'][1]:.1f} after")
    print(f"{'setup':<6}{'':<50}{'RTF':>8}{'vs 2':>8}{'cpu/wall':>10}{'spilled':>9}  "
          "CPU us per tick: models, rest")
    for r in result["setups"]:
        ratio = f"{r['ratio_to_setup_2']:.2f}x" if "ratio_to_setup_2" in r else ""
        spilled = (f"{r['outcome']['spilled']}/{r['particles']}" if r["outcome"] else "")
        cost = " + ".join(f"{name} {m['cpu_us_per_tick']:.0f}" for name, m in r["models"].items())
        print(f"{r['setup']:<6}{r['label']:<50}{r['real_time_factor']:>8.3f}{ratio:>8}"
              f"{r['cpu_per_wall']:>10.2f}{spilled:>9}  {cost}, {r['rest_cpu_us_per_tick']:.0f}")
    check = result["outcome_check"]
    if check:
        verdict = "agree" if check["agree"] else "DIFFER"
        shift, limit = check["centroid_shift"] * 1000, check["centroid_tolerance"] * 1000
        print(f"outcome, setups {check['setups'][0]} and {check['setups'][1]}: spilled "
              f"{check['spilled'][0]} vs {check['spilled'][1]} (tolerance "
              f"{check['spill_tolerance']:g}), centroid in the cup {shift:.1f} mm apart "
              f"(tolerance {limit:g} mm): {verdict}")
    return 0
