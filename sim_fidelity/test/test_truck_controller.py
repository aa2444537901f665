"""The unloading controller on a small wall, and the benchmark's JSON on a tiny run."""
from __future__ import annotations

import json

import numpy as np

from sim_fidelity.cli import main
from sim_fidelity.sweep.functions import get
from sim_fidelity.sweep.table import flatten
from sim_fidelity.truck.controller import NOSE_TIP, UnloadingController, run
from sim_fidelity.truck.robot import load_truck
from sim_fidelity.world_generators.truck import Section, layout_sections, packets_sdf, world_sdf


def test_short_run_unloads_packets_and_announces_actions(tmp_path):
    lay = layout_sections((Section("wall", 20, 0.6),), np.random.default_rng(1))
    path = tmp_path / "small_wall.sdf"
    path.write_text(world_sdf("small_wall", packets_sdf(lay)))
    sim, robot = load_truck(path)
    announced: list[str] = []
    controller = UnloadingController(robot, announced.append, seed=0)
    run(controller, sim, 20.0)
    assert robot.unloaded >= 1
    assert robot.unloaded == (~robot.conveyor.in_truck).sum() == len(robot.conveyor.unload_times)
    assert announced[:2] == ["extend", "retract"]
    phases = {p for _, p in controller.stats.phases}
    assert {"approach", "extend", "withdraw", "release"} <= phases


def test_bench_json_schema_on_a_tiny_run(capsys):
    assert main(["bench", "truck", "--scenario", "A", "--modes", "hifi,adfi-3", "--duration",
                 "0.1", "--repeats", "1", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scenario"] == "A" and result["modes"] == ["hifi", "adfi-3"]
    assert len(result["runs"]) == 2 and result["seeds"] == [0]
    for run_ in result["runs"]:
        assert {"mode", "seed", "sim_time", "wall", "rtf", "unloaded", "rate_per_hour",
                "manager_us_per_tick", "manager_overhead_pct", "samples", "phases"} <= set(run_)
        assert run_["sim_time"] >= 0.1 - 1e-9 and run_["rtf"] > 0
        assert len(run_["unload_times"]) == run_["unloaded"]
        # a sweep's table keeps when each packet left (outcome questions without a rerun), not
        # the per-second trace
        row = flatten(run_, get("truck").table_drop)
        assert "unload_times" in row and "samples" not in row
    for mode in ("hifi", "adfi-3"):
        s = result["summary"][mode]
        assert {"rtf_mean", "rtf_std", "unloaded_mean", "unloaded_std", "rate_mean", "rate_std",
                "rate_error_pct", "speedup_vs_hifi", "manager_overhead_pct"} <= set(s)
    assert result["summary"]["hifi"]["speedup_vs_hifi"] == 1.0


def test_fallen_packet_in_front_is_swept_not_blocking(tmp_path):
    """A packet lying in the nose's lane in front of the wall: the controller sweeps it (tip short
    of the standing wall) instead of retreating for a pick, and it leaves its place on the floor."""
    from sim_fidelity.world_generators.truck import Layout

    lay = layout_sections((Section("wall", 12, 0.6),), np.random.default_rng(1))
    lay = Layout(np.vstack([lay.centres, [[-0.1, 0.0, 0.1]]]),
                 np.vstack([lay.sizes, [[0.3, 0.4, 0.2]]]),
                 np.append(lay.yaw, 0.0), np.append(lay.masses, 3.0))
    path = tmp_path / "wall_and_fallen.sdf"
    path.write_text(world_sdf("wall_and_fallen", packets_sdf(lay)))
    sim, robot = load_truck(path)
    controller = UnloadingController(robot, seed=0)
    run(controller, sim, 0.02)
    assert controller.stats.phases[0][1] == "to_sweep" and controller.stats.picks == 0
    sweep = next(m for m in [controller.move, *controller.queue] if m.phase == "sweep")
    tip_end = (controller.drive_offset + sweep.targets["drive"] + NOSE_TIP
               + sweep.targets["nose_reach"])
    assert tip_end < 0.6  # stops short of the standing wall
    fallen = robot.packets[-1]
    run(controller, sim, 12.0)
    x = sim.get_states([fallen])[0][0, 0]
    assert not robot.conveyor.in_truck[-1] or x < -0.5  # unloaded or on its way over the robot
