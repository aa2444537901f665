"""Issue 20, point 5: every numeric node parameter and simfid flag has a stated range checked at
start; a violation is one line naming the parameter (or flag), the value and the range, exit 2."""
from __future__ import annotations

import subprocess
import sys

import pytest
from ros_processes import REPO, next_domain, start_as_launch, start_node

from sim_fidelity import cli
from sim_fidelity.node_parameters import BY_EXECUTABLE
from sim_fidelity.ranges import Range, above, at_least, between
from sim_fidelity.ros_node import Param, ParameterError

WORLD = REPO / "worlds" / "stack_test.sdf"
CONFIG = REPO / "config" / "stack_test.yaml"


def test_range_bounds_and_words():
    assert str(above(0)) == "> 0" and str(at_least(1)) == ">= 1"
    assert str(between(0, 1)) == "in [0, 1]" and str(Range()) == "finite"
    assert above(0).contains(1e-9) and not above(0).contains(0)
    assert at_least(0).contains(0) and at_least(0).contains(3)  # an int where a float is expected
    assert not between(0, 1).contains(1.5)
    for bad in (float("nan"), float("inf"), -float("inf"), True, "1"):
        assert not Range().contains(bad)
    assert at_least(0).problem(-1) == "must be >= 0, got -1"


@pytest.mark.parametrize("name, value, words", [
    ("rate", 0.0, "parameter 'rate' must be > 0, got 0.0"),
    ("rate", -3, "parameter 'rate' must be > 0, got -3"),
    ("rate", float("nan"), "parameter 'rate' must be > 0, got nan"),
    ("timeout", float("inf"), "parameter 'timeout' must be > 0, got inf"),
])
def test_manager_parameter_out_of_range_names_it(name, value, words):
    with pytest.raises(ParameterError) as e:
        BY_EXECUTABLE["fidelity_manager"][name].check("fidelity_manager", name, value)
    assert str(e.value) == f"fidelity_manager: {words}"


def test_integer_accepted_where_a_double_is_expected():
    table = BY_EXECUTABLE["sim_server"]
    assert table["real_time_factor"].check("sim_server", "real_time_factor", 0) == 0.0
    assert isinstance(table["real_time_factor"].check("sim_server", "real_time_factor", 0), float)


def test_regex_parameter_checked():
    with pytest.raises(ParameterError, match=r"parameter 'packets' must be a regular expression"):
        BY_EXECUTABLE["unloading_controller"]["packets"].check("c", "packets", "packet_(")
    with pytest.raises(ParameterError, match=r"parameter 'odometry' must be a regular"):
        BY_EXECUTABLE["sim_server"]["odometry"].check("s", "odometry", ["ok", "["])


def test_every_numeric_parameter_states_a_range_its_default_meets():
    for executable, table in BY_EXECUTABLE.items():
        for name, param in table.items():
            if param.type in (int, float):
                assert param.range.contains(param.default), (executable, name)
            assert isinstance(param, Param)


@pytest.mark.parametrize("argv, words", [
    (["fidelity", str(WORLD), "--config", str(CONFIG), "--tick-every", "0"],
     "argument --tick-every: must be >= 1, got 0"),
    (["fidelity", str(WORLD), "--config", str(CONFIG), "--duration", "inf"],
     "argument --duration: must be > 0, got inf"),
    (["fidelity", str(WORLD), "--config", str(CONFIG), "--report-every", "nan"],
     "argument --report-every: must be > 0, got nan"),
    (["kernels", "generate", "--sim", "a", "--real", "b", "--spec", "c", "-o", str(REPO)],
     f"argument -o/--output: {REPO} is a folder; give the file to write"),
    (["kernels", "generate", "--sim", "a", "--real", "b", "--spec", "c", "-o", "k.yaml",
      "--rollouts", "0"], "argument --rollouts: must be >= 1, got 0"),
    (["bench", "truck", "--duration", "-1"], "argument --duration: must be > 0, got -1"),
    (["bench", "truck", "--repeats", "0"], "argument --repeats: must be >= 1, got 0"),
    (["bench", "conductor", "--repeats", "0"], "argument --repeats: must be >= 1, got 0"),
    (["bench", "conductor", "--particles", "50,0"], "argument --particles: must be >= 1, got 0"),
    (["example", "truck-classifier", "--test-seeds", "2,x"],
     "argument --test-seeds: must be a whole number (>= 1), got 'x'"),
    (["example", "truck-classifier", "--test-seeds", ","],
     "argument --test-seeds: needs at least one whole number, got ','"),
    (["serve", str(WORLD), "--rtf", "-1"], "argument --rtf: must be >= 0, got -1"),
    (["sim", str(WORLD), "--step-size", "0"], "argument --step-size: must be > 0, got 0"),
])
def test_bad_flag_is_one_line_exit_2(capsys, argv, words):
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_existing_folder_output_refused_before_reading_anything(tmp_path):
    """-o naming a folder fails at once: the bags named do not even exist."""
    run = subprocess.run([sys.executable, "-m", "sim_fidelity.cli", "kernels", "generate",
                          "--sim", "missing.mcap", "--real", "missing.mcap", "--spec",
                          "missing.yaml", "-o", str(tmp_path)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip().endswith("give the file to write (see simfid kernels generate "
                                       "--help)"), run.stderr


@pytest.mark.parametrize("param, words", [
    ("step_size:=-0.001", "parameter 'step_size' must be >= 0, got -0.001"),
    ("real_time_factor:=.nan", "parameter 'real_time_factor' must be >= 0, got nan"),
])
def test_sim_server_refuses_an_out_of_range_parameter(tmp_path, param, words):
    name, value = param.split(":=")
    log = tmp_path / "server.log"
    proc = start_node("sim_fidelity.simulator.ros.server",
                      {"world": WORLD, name: value}, next_domain(), log)
    assert proc.wait(60) == 2
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    assert len(lines) == 1 and words in lines[0], lines


def test_unparsable_ros_args_are_one_line_exit_2(tmp_path):
    """``-p world:=`` (no value) fails in rcl itself: our line names it, no traceback."""
    log = tmp_path / "server.log"
    proc = start_as_launch("sim_server", next_domain(), log, params={"world": ""})
    assert proc.wait(60) == 2
    text = log.read_text()
    assert "Traceback" not in text
    assert "sim_server: bad --ros-args: failed to initialize rcl: Couldn't parse parameter " \
           "override rule: '-p world:='" in text, text
