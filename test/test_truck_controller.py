"""The unloading controller on a small wall, and the benchmark's JSON on a tiny run."""
from __future__ import annotations

import argparse
import json

import numpy as np

from sim_fidelity.truck import bench
from sim_fidelity.truck.controller import UnloadingController, run
from sim_fidelity.truck.robot import load_truck
from sim_fidelity.worlds.truck import Section, layout_sections, packets_sdf, world_sdf


def test_short_run_unloads_packets_and_announces_actions(tmp_path):
    lay = layout_sections((Section("wall", 20, 0.6),), np.random.default_rng(1))
    path = tmp_path / "small_wall.sdf"
    path.write_text(world_sdf("small_wall", packets_sdf(lay)))
    sim, robot = load_truck(path)
    announced: list[str] = []
    controller = UnloadingController(robot, announced.append, seed=0)
    run(controller, 20.0)
    assert robot.unloaded >= 1
    assert robot.unloaded == (~robot.conveyor.in_truck).sum() == len(robot.conveyor.unload_times)
    assert announced[:2] == ["extend", "retract"]
    phases = {p for _, p in controller.stats.phases}
    assert {"approach", "extend", "withdraw", "release"} <= phases


def test_bench_json_schema_on_a_tiny_run(capsys):
    parser = argparse.ArgumentParser()
    bench.register(parser.add_subparsers())
    args = parser.parse_args(["truck", "--scenario", "A", "--modes", "hifi,adfi-3", "--duration",
                              "0.1", "--repeats", "1", "--json", "--no-progress"])
    assert args.func(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scenario"] == "A" and result["modes"] == ["hifi", "adfi-3"]
    assert len(result["runs"]) == 2 and result["seeds"] == [0]
    for run_ in result["runs"]:
        assert {"mode", "seed", "sim_time", "wall", "rtf", "unloaded", "rate_per_hour",
                "manager_us_per_tick", "manager_overhead_pct", "samples", "phases"} <= set(run_)
        assert run_["sim_time"] >= 0.1 - 1e-9 and run_["rtf"] > 0
    for mode in ("hifi", "adfi-3"):
        s = result["summary"][mode]
        assert {"rtf_mean", "rtf_std", "unloaded_mean", "unloaded_std", "rate_mean", "rate_std",
                "rate_error_pct", "speedup_vs_hifi", "manager_overhead_pct"} <= set(s)
    assert result["summary"]["hifi"]["speedup_vs_hifi"] == 1.0
