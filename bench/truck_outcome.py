"""Outcome fidelity of the truck runs in a sweep table (issue 18): per scenario and run duration,
AdFi-1's unload rate error against HiFi's (mean over the seeds where both ran, with the sweep
report's 95 % paired bootstrap interval), beside the spread of the HiFi rates between seeds
(standard deviation and coefficient of variation, min-max): the error means something only
against that spread. Not a test.

    .venv/bin/python bench/truck_outcome.py TABLE [TABLE ...] [--mode adfi-1] [--json]

``--run SCENARIO:MODE:SEED[,...] --duration S`` first runs those one after the other in this
process (a plain loop, the same ``truck.bench.run_once`` as ``simfid sweep``'s ``truck`` function)
and appends their rows, in the sweep table's format, to the first TABLE.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

from sim_fidelity.sweep.functions import get
from sim_fidelity.sweep.report import RESAMPLES, paired_ratio_ci
from sim_fidelity.sweep.runner import execute
from sim_fidelity.sweep.spec import run_key
from sim_fidelity.sweep.table import TableWriter, latest, read_rows


def group(params: dict) -> str:
    """``A 120 s``, with every other parameter that is not at its default (``medium=all``):
    runs that differ in more than mode and seed are not paired."""
    defaults = get("truck").defaults
    rest = [f"{k}={v}" for k, v in params.items()
            if k in defaults and k != "duration" and v != defaults[k]]
    return " ".join([params["scenario"], f"{params['duration']:g} s", *rest])


def outcome(rows: list[dict], mode: str, baseline: str = "hifi", metric: str = "rate_per_hour"
            ) -> dict[str, dict]:
    """Per scenario and run duration: the seeds paired, ``mode``'s error against ``baseline``
    with its interval, and the baseline's spread between seeds."""
    rates: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for row in latest(rows).values():
        if row.get("error") or row.get("function") != "truck":
            continue
        rates[group(row["params"]), row["params"]["mode"]][row["params"]["seed"]] = \
            row["result"][metric]
    rng = np.random.default_rng(0)
    out = {}
    for scenario in sorted({s for s, _ in rates}):
        base, other = rates[scenario, baseline], rates[scenario, mode]
        seeds = sorted(set(base) & set(other))
        if not seeds:
            continue
        b = np.array([base[s] for s in seeds])
        x = np.array([other[s] for s in seeds])
        lo, hi = paired_ratio_ci(x, b, rng)
        all_base = np.array(list(base.values()))
        sd = float(all_base.std(ddof=1)) if all_base.size > 1 else float("nan")
        out[scenario] = {
            "seeds": seeds, "baseline": b.tolist(), mode: x.tolist(),
            "error_pct": 100.0 * (x.mean() / b.mean() - 1.0),
            "error_ci95_pct": [100.0 * (lo - 1.0), 100.0 * (hi - 1.0)],
            "baseline_seeds": len(all_base), "baseline_mean": float(all_base.mean()),
            "baseline_sd": sd, "baseline_cv_pct": 100.0 * sd / float(all_base.mean()),
            "baseline_range": [float(all_base.min()), float(all_base.max())]}
    return {"metric": metric, "resamples": RESAMPLES, "scenarios": out}


def run(table: str, runs: list[str], duration: float) -> None:
    """Run ``SCENARIO:MODE:SEED`` one by one (the sweep runner's ``execute``, in this process);
    append each row to ``table`` as it finishes."""
    function = get("truck")
    with TableWriter(table) as writer:
        for spec in runs:
            scenario, mode, seed = spec.split(":")
            params = function.complete({"scenario": scenario, "mode": mode, "seed": int(seed),
                                        "duration": duration}, f"--run {spec}")
            row = {"run": run_key("truck", params), "function": "truck", "params": params,
                   **execute("truck", params), "error": None, "workers": 1}
            writer.append(row)
            print(f"{spec}: {row['result']['unloaded']} unloaded in {duration:g} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--mode", default="adfi-1")
    parser.add_argument("--run", help="SCENARIO:MODE:SEED,... to run first (a plain loop)")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.run:
        run(args.tables[0], args.run.split(","), args.duration)
    result = outcome([r for t in args.tables for r in read_rows(t)], args.mode)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{', '.join(args.tables)}: {result['metric']}, {args.mode} against hifi, seeds paired")
    print(f"{'group':10} {'pairs':>5} {'error':>8} {'95% CI':>18}   {'hifi seeds':>10} "
          f"{'mean':>7} {'sd':>6} {'cv':>6} {'min-max':>12}")
    for scenario, r in result["scenarios"].items():
        lo, hi = r["error_ci95_pct"]
        print(f"{scenario:10} {len(r['seeds']):5d} {r['error_pct']:+7.1f}% "
              f"[{lo:+6.1f}%, {hi:+6.1f}%]   {r['baseline_seeds']:10d} "
              f"{r['baseline_mean']:7.0f} {r['baseline_sd']:6.0f} {r['baseline_cv_pct']:5.1f}% "
              f"{r['baseline_range'][0]:5.0f}-{r['baseline_range'][1]:<5.0f}")


if __name__ == "__main__":
    main()
