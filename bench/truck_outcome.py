"""Outcome fidelity of the truck runs in a sweep table (issue 18): per scenario, AdFi-1's unload
rate error against HiFi's (mean over the seeds where both ran, with the sweep report's 95 % paired
bootstrap interval), beside the spread of the HiFi rates between seeds (standard deviation and
coefficient of variation, min-max): the error means something only against that spread. Not a test.

    .venv/bin/python bench/truck_outcome.py docs/data/truck_outcome.jsonl [--mode adfi-1] [--json]
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

from sim_fidelity.sweep.report import RESAMPLES, paired_ratio_ci
from sim_fidelity.sweep.table import read_rows


def outcome(rows: list[dict], mode: str, baseline: str = "hifi", metric: str = "rate_per_hour"
            ) -> dict[str, dict]:
    """Per scenario: the seeds paired, ``mode``'s error against ``baseline`` with its interval,
    and the baseline's spread between seeds."""
    rates: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    durations = set()
    for row in rows:
        if row.get("error") or row.get("function") != "truck":
            continue
        p = row["params"]
        rates[p["scenario"], p["mode"]][p["seed"]] = row["result"][metric]
        durations.add(p["duration"])
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
    return {"durations": sorted(durations), "metric": metric, "resamples": RESAMPLES,
            "scenarios": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("--mode", default="adfi-1")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = outcome(read_rows(args.table), args.mode)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.table}: {result['metric']}, runs of {result['durations']} s; {args.mode} "
          "against hifi, seeds paired")
    print(f"{'scenario':8} {'pairs':>5} {'error':>8} {'95% CI':>18}   {'hifi seeds':>10} "
          f"{'mean':>7} {'sd':>6} {'cv':>6} {'min-max':>12}")
    for scenario, r in result["scenarios"].items():
        lo, hi = r["error_ci95_pct"]
        print(f"{scenario:8} {len(r['seeds']):5d} {r['error_pct']:+7.1f}% "
              f"[{lo:+6.1f}%, {hi:+6.1f}%]   {r['baseline_seeds']:10d} "
              f"{r['baseline_mean']:7.0f} {r['baseline_sd']:6.0f} {r['baseline_cv_pct']:5.1f}% "
              f"{r['baseline_range'][0]:5.0f}-{r['baseline_range'][1]:<5.0f}")


if __name__ == "__main__":
    main()
