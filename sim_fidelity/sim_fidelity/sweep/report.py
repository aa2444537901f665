"""``simfid sweep report``: per group of runs (every parameter but the replicate, i.e. the seed or
trial), the mean, median and a 95 % bootstrap confidence interval of the mean over replicates;
against a baseline group (``--baseline mode=hifi``: the group that differs only in that
parameter), ratios computed per replicate pair where both ran, with their interval.

The interval is the percentile bootstrap: ``RESAMPLES`` resamples of the replicates (of the pairs,
for ratios) drawn with a fixed seed, so a report is reproducible. Timings carry the number of
concurrent workers of the sweep beside them: they compare only within one sweep and machine.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import SweepError
from .functions import get
from .table import latest

RESAMPLES = 10_000
LEVEL = 0.95


def bootstrap_ci(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the mean of ``values`` (one value: that value)."""
    v = np.asarray(values, float)
    if v.size == 1:
        return float(v[0]), float(v[0])
    means = v[rng.integers(0, v.size, size=(RESAMPLES, v.size))].mean(axis=1)
    lo, hi = np.percentile(means, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
    return float(lo), float(hi)


def paired_ratio_ci(x: np.ndarray, base: np.ndarray, rng: np.random.Generator
                    ) -> tuple[float, float]:
    """95 % bootstrap interval of mean(x) / mean(base), resampling the pairs together."""
    if x.size == 1:
        return (float(x[0] / base[0]),) * 2 if base[0] else (float("nan"),) * 2
    idx = rng.integers(0, x.size, size=(RESAMPLES, x.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = x[idx].mean(axis=1) / base[idx].mean(axis=1)
    lo, hi = np.nanpercentile(ratios, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
    return float(lo), float(hi)


@dataclass
class Stat:
    """One metric of one group: over the replicates that ran."""

    n: int
    mean: float
    median: float
    ci: tuple[float, float]
    values: dict[Any, float] = field(repr=False)  # replicate -> value

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "median": self.median, "ci95": list(self.ci)}


@dataclass
class Ratio:
    """A metric of a group against the baseline group, over replicate pairs."""

    pairs: int
    ratio_of_means: float  # mean over the pairs of the group / mean of the baseline's
    ci: tuple[float, float]
    pair_ratio_mean: float  # mean of the per-pair ratios (pairs with a zero baseline left out)

    def as_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "ratio_of_means": self.ratio_of_means,
                "ci95": list(self.ci), "pair_ratio_mean": self.pair_ratio_mean}


def numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and bool(np.isfinite(value))


@dataclass
class Group:
    params: dict[str, Any]  # the group's parameters (replicate left out)
    stats: dict[str, Stat]
    failed: int = 0
    ratios: dict[str, Ratio] = field(default_factory=dict)
    workers: list[int] = field(default_factory=list)


def _key(params: dict[str, Any]) -> str:
    return repr(sorted(params.items()))


def summarise(rows: list[dict[str, Any]], baseline: str | None = None,
              metrics: list[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """The report of a table's rows (the latest row of each run counts): groups with their
    statistics, and ratios against ``baseline`` (``param=value``)."""
    runs = list(latest(rows).values())
    if not runs:
        raise SweepError("the table has no rows")
    names = sorted({r["function"] for r in runs})
    if len(names) > 1:
        raise SweepError(f"the table mixes sweep functions {', '.join(names)}: report one at "
                         "a time")
    function = get(names[0], "table")
    rep = function.replicate
    ok = [r for r in runs if r.get("error") is None]
    varying = sorted({k for r in runs for k in r["params"]
                      if k != rep and len({repr(x["params"].get(k)) for x in runs}) > 1})
    fixed = {k: v for k, v in runs[0]["params"].items() if k != rep and k not in varying}
    present = {k for r in ok for k, v in r["result"].items() if numeric(v)}
    if metrics is None:
        metrics = [m for m in function.headline if m in present] or sorted(present)
    elif not set(metrics) <= present:
        raise SweepError(f"--metrics: no numeric result {', '.join(sorted(set(metrics) - present))}"
                         f" in the table (there: {', '.join(sorted(present)) or 'none'})")
    groups: dict[str, Group] = {}
    for r in runs:
        params = {k: r["params"].get(k) for k in varying}
        group = groups.setdefault(_key(params), Group(params, {}))
        if r.get("error") is not None:
            group.failed += 1
        if r.get("workers") is not None and r["workers"] not in group.workers:
            group.workers.append(r["workers"])
    rng = np.random.default_rng(seed)
    for group in groups.values():
        mine = [r for r in ok if all(r["params"].get(k) == v for k, v in group.params.items())]
        for m in metrics:
            values = {r["params"].get(rep): float(r["result"][m]) for r in mine
                      if numeric(r["result"].get(m))}
            if values:
                v = np.array(list(values.values()))
                group.stats[m] = Stat(v.size, float(v.mean()), float(np.median(v)),
                                      bootstrap_ci(v, rng), values)
    if baseline is not None:
        _ratios(groups, baseline, varying, metrics, rng)
    return {"function": function.name, "replicate": rep, "fixed": fixed, "varying": varying,
            "metrics": metrics, "timings": [m for m in metrics if m in function.timings],
            "baseline": baseline, "rows": len(runs), "failed": len(runs) - len(ok),
            "errors": dict(Counter(r["error"] for r in runs if r.get("error") is not None)),
            "git": sorted({(r.get("git") or {}).get("commit") or "?" for r in runs}),
            "machines": sorted({(r.get("machine") or {}).get("host") for r in ok} - {None}),
            "groups": list(groups.values())}


def parse_baseline(text: str, varying: list[str]) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or key not in varying:
        raise SweepError(f"--baseline {text!r}: expected param=value with param one of the "
                         f"parameters that vary ({', '.join(varying) or 'none'})")
    return key, value


def _ratios(groups: dict[str, Group], baseline: str, varying: list[str], metrics: list[str],
            rng: np.random.Generator) -> None:
    key, value = parse_baseline(baseline, varying)
    found = False
    for group in groups.values():
        base_params = {**group.params, key: value}
        base = next((g for g in groups.values()
                     if {k: str(v) for k, v in g.params.items()} ==
                     {k: str(v) for k, v in base_params.items()}), None)
        if base is None:
            continue
        found = True
        for m in metrics:
            mine, theirs = group.stats.get(m), base.stats.get(m)
            if mine is None or theirs is None:
                continue
            pairs = [r for r in mine.values if r in theirs.values]
            if not pairs:
                continue
            x = np.array([mine.values[r] for r in pairs])
            b = np.array([theirs.values[r] for r in pairs])
            with np.errstate(divide="ignore", invalid="ignore"):
                per_pair = x / b
                of_means = x.mean() / b.mean() if b.mean() else float("nan")
            finite = per_pair[np.isfinite(per_pair)]
            group.ratios[m] = Ratio(len(pairs), float(of_means), paired_ratio_ci(x, b, rng),
                                    float(finite.mean()) if finite.size else float("nan"))
    if not found:
        raise SweepError(f"--baseline {baseline}: no group has {key} = {value}")


def as_json(report: dict[str, Any]) -> dict[str, Any]:
    """The report as plain JSON values."""
    return {**report, "groups": [
        {"params": g.params, "failed": g.failed, "workers": g.workers,
         "stats": {m: s.as_dict() for m, s in g.stats.items()},
         "ratios": {m: r.as_dict() for m, r in g.ratios.items()}} for g in report["groups"]]}


def _num(x: float) -> str:
    return f"{x:.4g}" if np.isfinite(x) else "nan"


def as_text(report: dict[str, Any], table: str) -> str:
    """The report as text: a header, then one block per metric with a line per group."""
    head = [f"table {table}: {report['rows']} runs of '{report['function']}', "
            f"{report['failed']} failed; replicates over '{report['replicate']}'",
            f"code {', '.join(c[:12] for c in report['git'])}; machines "
            f"{', '.join(report['machines']) or '-'}",
            "fixed: " + (", ".join(f"{k}={v}" for k, v in report["fixed"].items()) or "-")]
    head += [f"error x{n}: {e}" for e, n in report["errors"].items()]
    varying = report["varying"]
    width = {k: max(len(k), *(len(str(g.params[k])) for g in report["groups"])) for k in varying}
    lines = head
    for m in report["metrics"]:
        timing = m in report["timings"]
        lines.append("")
        lines.append(m + ("  (a timing: compare only within this sweep and machine)"
                          if timing else ""))
        cols = " ".join(f"{k:<{width[k]}}" for k in varying)
        extra = f"   ratio vs {report['baseline']} [95% CI] (pairs)" if report["baseline"] else ""
        lines.append(f"  {cols} {'n':>3} {'mean':>10} {'median':>10} {'95% CI':>23}"
                     + ("  workers" if timing else "") + extra)
        for g in report["groups"]:
            s = g.stats.get(m)
            cols = " ".join(f"{str(g.params[k]):<{width[k]}}" for k in varying)
            if s is None:
                lines.append(f"  {cols} {0:>3} (no successful run; {g.failed} failed)")
                continue
            line = (f"  {cols} {s.n:>3} {_num(s.mean):>10} {_num(s.median):>10} "
                    f"{'[' + _num(s.ci[0]) + ', ' + _num(s.ci[1]) + ']':>23}")
            if timing:
                line += f"  {','.join(map(str, g.workers)):>7}"
            r = g.ratios.get(m)
            if r is not None:
                line += (f"   {_num(r.ratio_of_means)} [{_num(r.ci[0])}, {_num(r.ci[1])}]"
                         f" ({r.pairs})")
            if g.failed:
                line += f"   {g.failed} failed"
            lines.append(line)
    return "\n".join(lines)
