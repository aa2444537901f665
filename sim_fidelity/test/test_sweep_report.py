"""Sweeps without Ray: the spec and its errors, the table's rows, and the report's statistics on
known tables (exact means, medians, paired ratios; intervals that hold what they must)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from sim_fidelity import cli
from sim_fidelity.sweep.errors import SweepError
from sim_fidelity.sweep.functions import get
from sim_fidelity.sweep.report import as_json, as_text, bootstrap_ci, summarise
from sim_fidelity.sweep.spec import load_spec, parse_grid_flag, run_key
from sim_fidelity.sweep.table import TableWriter, finished, flatten, latest, read_rows


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------- spec
def test_spec_grid_defaults_and_flags(tmp_path):
    spec = load_spec(write(tmp_path / "s.yaml", "function: probe\ngrid: {x: [1, 2], seed: 0}\n"
                                                 "params: {seconds: 0.5}\n"))
    assert spec.out == tmp_path / "s.jsonl" and spec.workers is None and spec.address is None
    runs = spec.runs()
    assert [(r["x"], r["seed"]) for r in runs] == [(1, 0), (2, 0)]
    assert runs[0] == {"x": 1, "seed": 0, "seconds": 0.5, "fail": "never", "marker": ""}
    flagged = load_spec(tmp_path / "s.yaml", ["seed=0,1", "seconds=0.1,0.2"])
    assert flagged.params == {} and flagged.grid["seconds"] == [0.1, 0.2]
    assert len(flagged.runs()) == 2 * 2 * 2
    assert parse_grid_flag("mode=hifi,adfi-1") == ("mode", ["hifi", "adfi-1"])
    assert run_key("probe", {"x": 1.0}) == run_key("probe", {"x": 1})


@pytest.mark.parametrize("text, message", [
    ("function: probe\ngrid: {x: [1]}\nseeds: 3\n", "unknown key seeds"),
    ("function: nope\n", "unknown sweep function 'nope' (known: truck, physics"),
    ("grid: {x: [1]}\n", "no 'function'"),
    ("function: probe\ngrid: {x: [1], speed: [2]}\n", "function 'probe' has no parameter speed"),
    ("function: probe\ngrid: {seed: [1]}\n", "function 'probe' needs x"),
    ("function: probe\ngrid: {x: []}\n", "grid.x: the list of values is empty"),
    ("function: probe\ngrid: {x: {a: 1}}\n", "grid.x: expected a list of values"),
    ("function: probe\ngrid: {x: [1], fail: [sometimes]}\n",
     "fail = 'sometimes' is not one of never, once, always"),
    ("function: probe\ngrid: {x: [1]}\nparams: {x: 2}\n", "x in both grid and params"),
    ("function: probe\ngrid: {x: [1]}\nworkers: 0\n", "workers must be a whole number >= 1"),
    ("function: probe\ngrid: [x]\n", "'grid' must be a mapping"),
    ("function: probe\ngrid: {x: [1\n", "not YAML"),
    ("- function\n", "expected a mapping"),
    ("function: truck\ngrid: {scenario: [A], mode: [turbo], seed: [0]}\n",
     "mode = 'turbo' is not one of hifi"),
])
def test_bad_spec_names_file_and_key(tmp_path, text, message):
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(SweepError, match="bad.yaml") as err:
        load_spec(path)
    assert message in str(err.value)


def test_bad_grid_flag_and_missing_file(tmp_path):
    path = write(tmp_path / "s.yaml", "function: probe\ngrid: {x: [1]}\n")
    for flag in ("x", "x=", "x=1,,2", "=1"):
        with pytest.raises(SweepError, match=f"--grid '{flag}'"):
            load_spec(path, [flag])
    with pytest.raises(SweepError, match="nope.yaml: cannot read"):
        load_spec(tmp_path / "nope.yaml")


# ---------------------------------------------------------------------------- table
def test_table_rows_cut_line_and_flatten(tmp_path):
    table = tmp_path / "t.jsonl"
    with TableWriter(table) as w:
        w.append({"run": "a", "params": {}, "error": "E: boom"})
        w.append({"run": "a", "params": {}, "error": None})
    with open(table, "a") as f:
        f.write('{"run": "b", "par')  # a writer killed mid-line
    assert [r["error"] for r in read_rows(table)] == ["E: boom", None]
    assert [r["error"] for r in latest(read_rows(table)).values()] == [None]
    with TableWriter(table) as w:  # the cut line stays apart
        w.append({"run": "c", "params": {}, "error": None})
    with pytest.raises(SweepError, match=r"t.jsonl:3"):
        read_rows(table)
    assert flatten({"a": 1, "b": {"c": 2, "d": {"e": 3}}, "skip": [1]}, ("skip",)) == \
        {"a": 1, "b.c": 2, "b.d.e": 3}


# ---------------------------------------------------------------------------- report
def probe_rows(values: dict[int, list[float | None]]) -> list[dict]:
    """Rows of the probe function: x -> y per seed 0, 1, ... (None: a failed run)."""
    rows = []
    for x, ys in values.items():
        for seed, y in enumerate(ys):
            params = {"x": x, "seed": seed, "seconds": 0.0, "fail": "never", "marker": ""}
            rows.append({"run": run_key("probe", params), "function": "probe",
                         "params": params, "result": None if y is None else {"y": y},
                         "error": "ProbeFailure: no" if y is None else None,
                         "git": {"commit": "abc"}, "machine": {"host": "m"}, "workers": 2})
    return rows


def test_report_statistics_on_a_known_table():
    rows = probe_rows({1: [1.0, 2.0, 6.0], 2: [2.0, 4.0, 12.0], 3: [1.0, 6.0, 12.0],
                       4: [5.0, None, None]})
    report = summarise(rows, baseline="x=1")
    g = {grp.params["x"]: grp for grp in report["groups"]}
    a = g[1].stats["y"]
    assert (a.n, a.mean, a.median) == (3, 3.0, 2.0)
    assert 1.0 <= a.ci[0] < a.mean < a.ci[1] <= 6.0
    assert (g[2].stats["y"].mean, g[2].stats["y"].median) == (6.0, 4.0)
    doubled = g[2].ratios["y"]  # every pair exactly twice the baseline
    assert (doubled.pairs, doubled.ratio_of_means, doubled.ci, doubled.pair_ratio_mean) == \
        (3, 2.0, (2.0, 2.0), 2.0)
    mixed = g[3].ratios["y"]  # per-pair ratios 1, 3, 2
    assert mixed.pair_ratio_mean == 2.0 and mixed.ratio_of_means == pytest.approx(19 / 9)
    assert 1.0 <= mixed.ci[0] < 19 / 9 < mixed.ci[1] <= 3.0
    one = g[4]  # one run of three succeeded: paired with seed 0 only
    assert (one.failed, one.stats["y"].n, one.stats["y"].ci) == (2, 1, (5.0, 5.0))
    assert (one.ratios["y"].pairs, one.ratios["y"].ratio_of_means) == (1, 5.0)
    assert report["failed"] == 2 and report["varying"] == ["x"]
    assert report["errors"] == {"ProbeFailure: no": 2}
    assert "error x2: ProbeFailure: no" in as_text(report, "t.jsonl")
    assert summarise(rows, baseline="x=1")["groups"][0].stats["y"].ci == a.ci  # seeded
    assert json.loads(json.dumps(as_json(report)))["groups"][1]["ratios"]["y"]["ci95"] == [2, 2]


def test_bootstrap_interval_narrows_with_more_seeds():
    rng = np.random.default_rng(1)
    values = rng.normal(10.0, 1.0, 200)
    few, many = bootstrap_ci(values[:5], rng), bootstrap_ci(values, rng)
    assert many[1] - many[0] < few[1] - few[0]
    assert many[0] < values.mean() < many[1] and many[1] - many[0] < 0.5


def test_rows_from_before_a_new_parameter_keep_matching_their_runs(tmp_path):
    """A truck row written before ``medium`` existed (its key and params without it) is the run
    at ``medium``'s default; a run at another value is not in the table."""
    old = {"scenario": "A", "mode": "hifi", "seed": 0, "duration": 120, "tick_period": 0.04,
           "still": None}
    table = tmp_path / "t.jsonl"
    with TableWriter(table) as w:
        w.append({"run": json.dumps({"function": "truck", **old}, sort_keys=True),
                  "function": "truck", "params": old, "result": {"unloaded": 3}, "error": None})
    now = get("truck").complete({"scenario": "A", "mode": "hifi", "seed": 0, "duration": 120.0},
                                "test")
    assert now["medium"] is None and run_key("truck", now) in finished(table)
    assert run_key("truck", {**now, "medium": "all"}) not in finished(table)
    redo = {"run": run_key("truck", now), "function": "truck", "params": now,
            "result": {"unloaded": 4}, "error": None}
    assert [r["result"]["unloaded"] for r in latest(read_rows(table) + [redo]).values()] == [4]


def test_report_latest_row_counts_and_errors():
    rows = probe_rows({1: [None, 2.0], 2: [3.0, 4.0]})
    rows.append({**rows[0], "result": {"y": 7.0}, "error": None})  # seed 0 of x=1 rerun
    report = summarise(rows)
    assert report["failed"] == 0 and report["groups"][0].stats["y"].values == {0: 7.0, 1: 2.0}
    with pytest.raises(SweepError, match="--baseline 'seed=0'.*parameters that vary \\(x\\)"):
        summarise(rows, baseline="seed=0")
    with pytest.raises(SweepError, match="no group has x = 9"):
        summarise(rows, baseline="x=9")
    with pytest.raises(SweepError, match="mixes sweep functions"):
        summarise(rows + [{**rows[0], "run": "other", "function": "truck"}])
    with pytest.raises(SweepError, match="no rows"):
        summarise([])
    with pytest.raises(SweepError, match=r"--metrics: no numeric result z in the table \(there"):
        summarise(rows, metrics=["y", "z"])


def truck_rows() -> list[dict]:
    rows = []
    for scenario in ("A", "C"):
        for mode, speed in (("hifi", 0.1), ("adfi-1", 0.3), ("adfi-3-sleep", 1.0)):
            for seed in range(3):
                params = {"scenario": scenario, "mode": mode, "seed": seed, "duration": 30,
                          "tick_period": 0.04, "still": None}
                unloaded = 10 + seed + (mode == "adfi-3-sleep")
                rows.append({"run": run_key("truck", params), "function": "truck",
                             "params": params, "error": None, "workers": 2,
                             "result": {"unloaded": unloaded, "rate_per_hour": 120.0 * unloaded,
                                        "rtf": speed * (1 + 0.1 * seed),
                                        "manager_overhead_pct": 1.0},
                             "git": {"commit": "abc"}, "machine": {"host": "m"}})
    return rows


def test_truck_report_text_plots_and_cli(tmp_path, capsys):
    table = tmp_path / "truck.jsonl"
    with TableWriter(table) as w:
        for row in truck_rows():
            w.append(row)
    report = summarise(read_rows(table), baseline="mode=hifi")
    text = as_text(report, str(table))
    assert "rtf  (a timing: compare only within this sweep and machine)" in text
    assert "fixed: duration=30, tick_period=0.04, still=None" in text
    sleep_a = next(g for g in report["groups"]
                   if g.params == {"mode": "adfi-3-sleep", "scenario": "A"})
    assert sleep_a.ratios["unloaded"].ratio_of_means == pytest.approx(12 / 11)
    plots = tmp_path / "plots"
    assert cli.main(["sweep", "report", str(table), "--baseline", "mode=hifi",
                     "--plots", str(plots), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [Path(p).name for p in doc["plots"]] == ["sweep_truck_unloaded.png",
                                                     "sweep_truck_error.png"]
    assert all(Path(p).stat().st_size > 10_000 for p in doc["plots"])
    assert doc["timings"] == ["rtf", "manager_overhead_pct"] and doc["groups"][0]["workers"] == [2]


def test_cli_report_errors(tmp_path, capsys):
    assert cli.main(["sweep", "report"]) == 2
    assert "give the TABLE" in capsys.readouterr().err
    assert cli.main(["sweep", "report", str(tmp_path / "none.jsonl")]) == 2
    assert "no table" in capsys.readouterr().err
    spec = write(tmp_path / "s.yaml", "function: probe\ngrid: {x: [1]}\n")
    assert cli.main(["sweep", str(spec), "--baseline", "x=1"]) == 2
    assert "takes no --baseline" in capsys.readouterr().err


def test_without_ray_the_error_names_the_package(monkeypatch):
    from sim_fidelity.sweep import runner

    assert "ray" not in vars(runner)  # imported inside the runner's functions only
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(SweepError, match="the Python package 'ray' is missing"):
        runner.import_ray()


def test_truck_outcome_pairs_seeds_beside_the_hifi_spread():
    """bench/truck_outcome.py on a known table: AdFi-1's error over the seeds both modes ran
    (latest row of a run; failed rows and runs at another ``medium`` apart), HiFi's spread over
    all its seeds."""
    path = Path(__file__).resolve().parents[2] / "bench" / "truck_outcome.py"
    spec = importlib.util.spec_from_file_location("truck_outcome", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    truck = get("truck")

    def row(mode, seed, rate, error=None, **more):
        params = truck.complete({"scenario": "A", "mode": mode, "seed": seed, "duration": 120,
                                 **more}, "test")
        return {"run": run_key("truck", params), "function": "truck", "params": params,
                "result": None if error else {"rate_per_hour": rate}, "error": error}

    rows = [row("hifi", 0, 100.0), row("hifi", 1, 110.0), row("hifi", 2, 90.0),
            row("adfi-1", 0, 50.0), row("adfi-1", 0, 110.0), row("adfi-1", 1, 110.0),
            row("adfi-1", 2, None, error="E: boom"), row("adfi-1", 2, 500.0, medium="all")]
    result = bench.outcome(rows, "adfi-1")["scenarios"]
    assert list(result) == ["A 120 s"]
    a = result["A 120 s"]
    assert a["seeds"] == [0, 1] and a["adfi-1"] == [110.0, 110.0]
    assert a["error_pct"] == pytest.approx(100 * (220 / 210 - 1))
    lo, hi = a["error_ci95_pct"]
    assert 0 <= lo <= a["error_pct"] <= hi <= 10.0 + 1e-9  # the pairs' ratios are 1.1 and 1.0
    assert (a["baseline_seeds"], a["baseline_mean"], a["baseline_range"]) == (3, 100.0, [90, 110])
    assert a["baseline_sd"] == pytest.approx(10.0) and a["baseline_cv_pct"] == pytest.approx(10.0)
    assert bench.group(rows[-1]["params"]) == "A 120 s medium=all"
