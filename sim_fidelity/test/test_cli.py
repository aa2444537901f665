"""``simfid``: every sub-command registered and documented, bad arguments and project errors end
in one line with exit code 2, other exceptions keep their traceback, and ``simfid sim`` loads
neither the bag nor the ROS libraries."""
from __future__ import annotations

import argparse
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sim_fidelity.commands
from sim_fidelity import cli

REPO = Path(__file__).resolve().parents[1]
WORLD = REPO / "worlds" / "revolute_joint_test.sdf"
HEAVY = ("rosbags", "tqdm", "rclpy", "matplotlib")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The word path of every runnable sub-command, read from the parser itself."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [path]
    return [leaf for name, child in subs[0].choices.items()
            for leaf in _leaves(child, (*path, name))]


LEAVES = _leaves(cli.build_parser())


def simfid(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim_fidelity.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


def test_every_command_module_is_registered():
    modules = {m.name for m in pkgutil.iter_modules(sim_fidelity.commands.__path__)}
    registered = set(cli.COMMANDS) | {f"{group}_{member}" for group, (_, members)
                                      in cli.GROUPS.items() for member in members}
    assert modules == registered
    assert {leaf[0] for leaf in LEAVES} == set(cli.COMMANDS) | set(cli.GROUPS)
    assert ("bench", "truck") in LEAVES and ("kernels", "generate") in LEAVES


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_help_of_every_command(path, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([*path, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: simfid {' '.join(path)}") and "--help" in out


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_bad_command_line_is_exit_2(path, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([*path, "--no-such-option"])  # or a required argument missing before it
    assert done.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]  # unknown options: the top parser reports them
    assert last.startswith("simfid") and ": error: " in last


def test_bad_value_names_the_option(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["sim", str(WORLD), "--duration", "soon"])
    assert done.value.code == 2
    assert "--duration: must be a number (>= 0), got 'soon'" in capsys.readouterr().err


def test_project_error_is_one_line_and_exit_2(tmp_path):
    out = simfid("sim", str(tmp_path / "nope.sdf"))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("simfid sim: error: ") and out.stderr.count("\n") == 1
    assert "nope.sdf" in out.stderr and "Traceback" not in out.stderr
    modes = simfid("bench", "truck", "--modes", "hifi,turbo", "--duration", "0.1")
    assert modes.returncode == 2 and "Traceback" not in modes.stderr
    assert "unknown mode(s) turbo" in modes.stderr and modes.stderr.count("\n") == 1


def test_other_exceptions_keep_their_traceback(monkeypatch):
    def boom(_args):
        raise ZeroDivisionError("a bug, not a user error")

    monkeypatch.setattr(sim_fidelity.commands.sim, "run", boom)
    with pytest.raises(ZeroDivisionError):
        cli.main(["sim", str(WORLD)])


def test_a_missing_command_module_fails_loudly(monkeypatch):
    monkeypatch.setattr(cli, "COMMANDS", (*cli.COMMANDS, "no_such_command"))
    with pytest.raises(ModuleNotFoundError, match="no_such_command"):
        cli.build_parser()


def test_sim_loads_no_bag_or_ros_library():
    code = ("import sys; from sim_fidelity.cli import build_parser, main; build_parser(); "
            f"parsed = [m for m in {HEAVY!r} if m in sys.modules]; "
            f"code = main(['sim', {str(WORLD)!r}, '--duration', '0.01']); "
            f"ran = [m for m in {HEAVY!r} if m in sys.modules]; print(code, parsed, ran)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "0 [] []"
