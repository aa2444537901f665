"""``simfid sim`` on every world, its errors, and the launch files checked statically."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WORLDS = sorted((REPO / "worlds").glob("*.sdf"))


def simfid(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim_fidelity.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("world", WORLDS, ids=[w.stem for w in WORLDS])
def test_sim_runs_every_world(world):
    out = simfid("sim", str(world), "--duration", "0.05", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["sim_time"] == pytest.approx(0.05, abs=result["step_size"])
    assert result["real_time_factor"] > 0
    entities = result["entities"]
    assert entities and all(len(e["pose"]) == 7 and len(e["twist"]) == 6 for e in entities.values())
    assert any("::" in name for name in entities)  # links are keyed by scoped name


def test_sim_plain_output():
    out = simfid("sim", str(REPO / "worlds" / "revolute_joint_test.sdf"), "--duration", "0.02")
    assert out.returncode == 0 and "real-time factor" in out.stdout


def test_sim_bad_world_names_the_problem(tmp_path):
    bad = tmp_path / "broken.sdf"
    bad.write_text("<sdf version='1.9'><world name='w'>\n<model name='m'><link name='l'>\n"
                   "<collision name='c'><geometry><box><size>1 x 1</size></box></geometry>"
                   "</collision></link></model></world></sdf>")
    out = simfid("sim", str(bad), "--duration", "0.01")
    assert out.returncode != 0
    assert "broken.sdf:3" in out.stderr and "size" in out.stderr
    missing = simfid("sim", str(tmp_path / "nope.sdf"))
    assert missing.returncode != 0 and "nope.sdf" in missing.stderr


def _console_scripts() -> set[str]:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    return {ast.literal_eval(e).split("=")[0].strip() for e in value.elts}
    return set()


@pytest.mark.parametrize("launch", sorted((REPO / "launch").glob("*.launch.py")),
                         ids=lambda p: p.name)
def test_launch_file_names_only_what_exists(launch):
    """``launch`` cannot be installed here: check every executable, package and file it names."""
    tree = ast.parse(launch.read_text())
    scripts = _console_scripts()
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "id", getattr(n.func, "attr", "")) == "Node"]
    assert nodes, "no Node() in the launch file"
    for call in nodes:
        kw = {k.arg: k.value for k in call.keywords}
        assert ast.literal_eval(kw["package"]) == "sim_fidelity"
        assert ast.literal_eval(kw["executable"]) in scripts
    for const in ast.walk(tree):  # every data file it joins onto the share directory
        if isinstance(const, ast.Call) and getattr(const.func, "attr", "") == "join":
            parts = [ast.literal_eval(a) for a in const.args[1:] if isinstance(a, ast.Constant)]
            if parts and parts[0] in ("worlds", "config", "models"):
                assert (REPO.joinpath(*parts)).exists(), f"{launch.name} names missing {parts}"
