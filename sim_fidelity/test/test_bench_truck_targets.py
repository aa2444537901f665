"""``simfid bench truck``'s issue-23 verdicts and its ``--medium`` option (no physics run: the
verdicts are a function of the summary; the option's errors come before any run)."""
from __future__ import annotations

import argparse

import pytest

from sim_fidelity.truck.bench import issue23_targets, run, summarise
from sim_fidelity.truck.errors import TruckError


def fake_run(mode: str, seed: int, rtf: float, unloaded: int, overhead: float = 1.0) -> dict:
    return {"mode": mode, "seed": seed, "rtf": rtf, "unloaded": unloaded,
            "unloaded_pct": unloaded / 10, "rate_per_hour": 120.0 * unloaded,
            "manager_us_per_tick": 100.0, "manager_overhead_pct": overhead,
            "hook_us_per_step": 0.0, "high_per_tick": 1.0, "medium_per_tick": 2.0,
            "lowered_per_s": 0.0}


def test_verdicts_follow_the_issue_targets():
    runs = [fake_run("hifi", 0, 0.1, 10), fake_run("hifi", 1, 0.1, 12),
            fake_run("hifi-sleep", 0, 1.0, 11), fake_run("hifi-sleep", 1, 1.0, 11),
            fake_run("adfi-3", 0, 0.9, 11), fake_run("adfi-3", 1, 0.9, 11),
            fake_run("adfi-3-sleep/near", 0, 4.2, 13, 1.5),
            fake_run("adfi-3-sleep/near", 1, 4.2, 13, 1.5),
            fake_run("adfi-3-sleep/all", 0, 3.0, 12, 2.5),
            fake_run("adfi-3-sleep/all", 1, 3.0, 12, 2.5)]
    modes = ["hifi", "hifi-sleep", "adfi-3", "adfi-3-sleep/near", "adfi-3-sleep/all"]
    lines = issue23_targets(summarise(runs, modes), runs)
    assert "adfi-3 >= 1x hifi-sleep: 0.90x (MISSED)" in lines
    assert "adfi-3-sleep/near >= 4x hifi-sleep: 4.20x (met)" in lines
    assert "adfi-3-sleep/all >= 4x hifi-sleep: 3.00x (MISSED)" in lines
    assert "adfi-3-sleep/near manager < 2 % of step time: 1.50 % (met)" in lines
    assert "adfi-3-sleep/all manager < 2 % of step time: 2.50 % (MISSED)" in lines
    assert "adfi-3-sleep/near unloaded 13.0 within hifi's seeds [10, 12]: MISSED" in lines
    assert "adfi-3-sleep/all unloaded 12.0 within hifi's seeds [10, 12]: met" in lines
    # without hifi-sleep and hifi there is nothing to compare against but the manager share
    only = [fake_run("adfi-3-sleep", 0, 1.0, 1, 3.0)]
    assert issue23_targets(summarise(only, ["adfi-3-sleep"]), only) == [
        "adfi-3-sleep manager < 2 % of step time: 3.00 % (MISSED)"]


def test_an_unknown_medium_rule_is_refused_before_any_run():
    args = argparse.Namespace(scenario="B", modes="adfi-3", still="", medium="all,some",
                              duration=1.0, repeats=1, first_seed=0, tick_period=0.04,
                              no_progress=True, json=False, plots=None)
    with pytest.raises(TruckError, match=r"--medium: unknown rule\(s\) some \(known: all, near\)"):
        run(args)
