"""``simfid conduct``, ``simfid bench stepping`` and ``simfid bench conductor`` end to end (in
process, real files)."""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sdf_snippets import GROUND, servo_pendulum, world

from sim_fidelity.cli import main
from sim_fidelity.model_conductor.data_sources import action, joint_state, write_recording
from sim_fidelity.model_conductor.log import read_log

ENSEMBLE = """
models:
  world: {type: simulator, main: true, parameters: {world: arm.sdf}}
  hand: {type: carrier, parameters: {entities: [box], velocity: [0, 0, 0.2]}}
triggers:
  pick:
    on: {action: move_hand}
    do: [{transfer: {entity: $args, to: hand}}]
"""
BOX = """
    <model name="box"><pose>0 0 0.5 0 0 0</pose>
      <link name="l"><inertial><mass>1</mass></inertial>
        <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
      </link></model>"""


def files(tmp_path):
    (tmp_path / "arm.sdf").write_text(world("arm", GROUND, servo_pendulum("arm"), BOX))
    config = tmp_path / "ensemble.yaml"
    config.write_text(textwrap.dedent(ENSEMBLE).replace("$args", "box"))
    times = np.round(np.arange(0, 0.2 + 1e-9, 0.01), 6)
    bag = write_recording(tmp_path / "rec", [joint_state(t, ["hinge"], [t]) for t in times]
                          + [action(0.05, "move_hand")])
    return config, bag


def test_conduct_plays_a_bag_writes_the_log_and_reports_json(tmp_path, capsys):
    config, bag = files(tmp_path)
    log = tmp_path / "log"
    assert main(["conduct", str(config), "--bag", str(bag), "--log", str(log), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["time"] == pytest.approx(0.21) and result["messages"] == 22
    assert [(t["entity"], t["attribute"], t["to_model"]) for t in result["transfers"]
            if t["cause"] == "pick"] == [("box", "pose", "hand"), ("box", "twist", "hand")]
    assert [a["trigger"] for a in result["triggers"] if a["fired"]] == ["pick"]
    assert result["log"]["transfers"] == len(result["transfers"])
    assert read_log(log).transfers[-1].cause == "pick"


def test_conduct_text_report_and_errors(tmp_path, capsys):
    config, _ = files(tmp_path)
    assert main(["conduct", str(config), "--duration", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "5 ticks" in out and "world (main)" in out and "0 responsibility transfers" in out
    assert main(["conduct", str(config)]) == 2
    assert "give --duration, --bag or both" in capsys.readouterr().err
    config.write_text("models: {w: {type: simulator}}")
    assert main(["conduct", str(config), "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{config}: models: exactly one model must be main: true" in err


def test_bench_stepping_shows_lock_step_exact_and_clock_skipping(capsys):
    assert main(["bench", "stepping", "--duration", "0.1", "--cost", "0.02", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    setups = {s["setup"]: s for s in result["setups"]}
    service, realtime = setups["service"], setups["clock-realtime"]
    assert service["skips"] == 0 and service["carrier_steps"] == 10
    assert service["max_error"] < 1e-12 and service["lag"] < 1e-12
    assert realtime["skips"] > 0 and realtime["max_error"] > 0.0  # 20 ms steps, 10 ms ticks
    assert realtime["skips"] + realtime["carrier_steps"] == 10
    assert set(result["rtf_ratios"]) == {"alone/service", "clock/service",
                                         "clock-realtime/service"}
    assert main(["bench", "stepping", "--setups", "sometimes"]) == 2


def test_bench_conductor_runs_every_setup_and_prints_the_ratios(capsys):
    """Table 1's bench on the first 50 ms of the recording: every setup, each split one's ratio
    to setup 2, each model's CPU per tick and the outcome check (no figure is judged)."""
    args = ["bench", "conductor", "--particles", "50", "--duration", "0.05", "--no-progress"]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    setups = {s["setup"]: s for s in result["setups"]}
    assert sorted(setups) == [1, 2, 3, 4] and result["duration"] == 0.05
    assert len(result["load_average"]) == 2  # the machine's, before and after
    assert [n for n, s in setups.items() if "ratio_to_setup_2" in s] == [3, 4]
    assert setups[3]["ratio_to_setup_2"] == pytest.approx(
        setups[3]["real_time_factor"] / setups[2]["real_time_factor"])
    assert {n: sorted(s["models"]) for n, s in setups.items() if s["split"]} == {
        3: ["main", "particles"], 4: ["main", "particles"]}
    assert setups[4]["models"]["particles"]["steps"] == 33  # 1.5 ms steps in 50 ms
    assert all(m["cpu_us_per_tick"] > 0 for s in setups.values() for m in s["models"].values())
    assert result["outcome_check"]["setups"] == [2, 3] and result["outcome_check"]["agree"]
    assert main(args) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]
            if line[:1].isdigit()}
    assert sorted(rows) == ["1", "2", "3", "4"]
    assert [n for n, line in rows.items() if re.search(r" \d+\.\d\dx ", line)] == ["3", "4"]
    assert main(["bench", "conductor", "--particles", "70"]) == 2
    assert "particle counts must be among 50, 100" in capsys.readouterr().err


def test_the_handover_example_config_runs_as_its_comment_says(tmp_path, capsys):
    config = Path(__file__).resolve().parents[1] / "config" / "conductor" / "handover.yaml"
    bag = write_recording(tmp_path / "handover", [
        action(0.0, "start"), action(0.2, "move_hand", {"object": "sphere_000"}),
        action(0.6, "release"), action(1.0, "end")])
    assert main(["conduct", str(config), "--bag", str(bag), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    moves = [(t["attribute"], t["to_model"], round(t["time"], 2)) for t in result["transfers"]
             if t["cause"] != "config"]
    assert moves == [("pose", "hand", 0.2), ("twist", "hand", 0.2), ("pose", "world", 0.6),
                     ("twist", "world", 0.6)]
    assert result["variables"] == {"carried": None}
    assert [m["skips"] + m["steps"] for m in result["models"] if m["name"] == "monitor"] == [
        result["ticks"]]
