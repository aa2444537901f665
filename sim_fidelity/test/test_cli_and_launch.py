"""``simfid sim`` on every world, its errors, and the launch files checked statically."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ros_processes import console_scripts

from sim_fidelity.node_parameters import BY_EXECUTABLE
from sim_fidelity.ros_node import Param, ParameterError

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


LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
SHARE_FOLDERS = ("launch", "config", "worlds", "models")  # installed as share/sim_fidelity/<folder>
NODE_DECLARED = {"use_sim_time": Param(False, "declared by every rclpy node")}


class LaunchFile:
    """What a launch file names, read from its syntax tree (``launch`` is not installed here):
    its launch arguments, its assignments, and the values an expression can take at launch."""

    def __init__(self, path: Path):
        self.path, self.tree = path, ast.parse(path.read_text())
        calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)]
        self.nodes = [c for c in calls if _called(c) == "Node"]
        self.arguments = {ast.literal_eval(c.args[0]): _keywords(c)
                          for c in calls if _called(c) == "DeclareLaunchArgument"}
        self.names = {t.id: n.value for n in ast.walk(self.tree) if isinstance(n, ast.Assign)
                      for t in n.targets if isinstance(t, ast.Name)}

    def choices(self, argument: str) -> list[str]:
        """The strings a launch argument can be: its choices, else its default."""
        kw = self.arguments[argument]
        if "choices" in kw:
            return ast.literal_eval(self.names.get(getattr(kw["choices"], "id", ""), kw["choices"]))
        return [str(v) for v in self.values(kw["default_value"], typed=False)]

    def values(self, expr: ast.expr, typed: bool = True) -> list:
        """Every value ``expr`` can take; launch arguments typed as launch_ros types them (YAML)
        when ``typed``. Share paths come back relative to the source tree."""
        if isinstance(expr, ast.Constant):
            return [expr.value]
        if isinstance(expr, ast.Name):
            assert expr.id in self.names, f"{self.path.name}: cannot follow '{expr.id}'"
            return self.values(self.names[expr.id], typed)
        if isinstance(expr, ast.JoinedStr):  # f"truck_{scenario}": every combination
            texts = [""]
            for part in expr.values:
                options = ([part.value] if isinstance(part, ast.Constant)
                           else [str(v) for v in self.values(part.value, typed=False)])
                texts = [t + o for t in texts for o in options]
            return texts
        if isinstance(expr, ast.Call) and _called(expr) == "LaunchConfiguration":
            options = self.choices(ast.literal_eval(expr.args[0]))
            return [yaml.safe_load(o) for o in options] if typed else options
        if isinstance(expr, ast.Call) and _called(expr) == "perform":  # LaunchConfiguration(x)
            return self.values(expr.func.value, typed=False)
        if isinstance(expr, ast.Call) and _called(expr) == "join":  # os.path.join(share, ...)
            assert getattr(expr.args[0], "id", "") == "share", \
                f"{self.path.name}: join of a non-share path"
            paths = [""]
            for arg in expr.args[1:]:
                paths = [str(Path(p, v)) for p in paths for v in self.values(arg, typed=False)]
            return [REPO / p for p in paths]
        raise AssertionError(f"{self.path.name}:{expr.lineno}: cannot tell what "
                             f"{ast.unparse(expr)} is at launch")


def _called(call: ast.Call) -> str:
    return getattr(call.func, "id", getattr(call.func, "attr", ""))


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords}


def _yaml_parameters(path: Path, node: str) -> dict:
    """The ros__parameters a parameter file gives ``node`` (its own section and ``/**``)."""
    data = yaml.safe_load(path.read_text()) or {}
    found = {}
    for key in ("/**", node, "/" + node):
        found.update((data.get(key) or {}).get("ros__parameters", {}))
    return found


def test_share_layout_mirrors_the_source_tree():
    """setup.py installs each share folder from the folder of the same name."""
    text = (REPO / "setup.py").read_text()
    for folder in SHARE_FOLDERS:
        assert (REPO / folder).is_dir() and f'tree("{folder}")' in text, folder


@pytest.mark.parametrize("launch", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_names_only_what_exists(launch):
    """Every Node is an installed console script of this package; every parameter it passes is
    declared by that node with a compatible type (for every choice of the launch arguments);
    every path it names exists in the share layout."""
    lf = LaunchFile(launch)
    scripts = console_scripts()
    assert lf.nodes, "no Node() in the launch file"
    for call in lf.nodes:
        kw = _keywords(call)
        executable = ast.literal_eval(kw["executable"])
        assert ast.literal_eval(kw["package"]) == "sim_fidelity"
        assert executable in scripts, f"{launch.name}: {executable} is no console script"
        assert ast.literal_eval(kw["name"]) == executable  # the node's name is the table's key
        table = {**BY_EXECUTABLE[executable], **NODE_DECLARED}
        passed: list[tuple[str, object]] = []
        for entry in kw["parameters"].elts:
            if isinstance(entry, ast.Dict):
                passed += [(ast.literal_eval(k), v) for k, e in zip(entry.keys, entry.values)
                           for v in lf.values(e)]
            else:
                for path in lf.values(entry):
                    assert path.exists(), f"{launch.name}: no parameter file {path}"
                    passed += list(_yaml_parameters(path, executable).items())
        assert passed, f"{launch.name}: {executable} gets no parameters"
        for name, value in passed:
            assert name in table, f"{launch.name}: {executable} declares no parameter '{name}'"
            if isinstance(value, Path):  # a share path: a string at launch
                assert value.exists(), f"{launch.name}: {executable}.{name}: no {value}"
                value = str(value)
            table[name].check(executable, name, value)  # ParameterError if incompatible
    for argument, kw in lf.arguments.items():  # default paths and choices of every argument
        for value in lf.values(kw.get("default_value", ast.Constant("")), typed=False):
            if isinstance(value, Path):
                assert value.exists(), f"{launch.name}: argument {argument}: no {value}"
        if kw.get("choices") is not None:
            assert lf.choices(argument), argument


def test_truck_launch_offers_the_configs_presets():
    from sim_fidelity.fidelity_manager.config import FidelityConfig
    lf = LaunchFile(REPO / "launch" / "truck.launch.py")
    presets = FidelityConfig.load(REPO / "config" / "truck.yaml").presets
    assert set(lf.choices("preset")) == set(presets)
    assert lf.choices("scenario") and all(
        (REPO / "worlds" / f"truck_{s}.sdf").exists() for s in lf.choices("scenario"))


def test_node_parameters_accept_what_launch_passes():
    """Launch and ``-p x:=0`` type whole numbers as INTEGER: doubles take them; enumerations
    and types are checked with a message that names the node, the parameter and what is allowed."""
    rate = BY_EXECUTABLE["fidelity_manager"]["rate"]
    assert rate.check("fidelity_manager", "rate", 50) == 50.0
    assert isinstance(rate.check("fidelity_manager", "rate", 50), float)
    with pytest.raises(ParameterError, match="fidelity_manager: parameter 'rate' must be a number"):
        rate.check("fidelity_manager", "rate", "fast")
    with pytest.raises(ParameterError, match="must be an integer, got 1.5"):
        BY_EXECUTABLE["unloading_controller"]["seed"].check("unloading_controller", "seed", 1.5)
    with pytest.raises(ParameterError, match="must be a boolean"):
        BY_EXECUTABLE["sim_server"]["paused"].check("sim_server", "paused", 1)
    mode = Param("a", "an enumeration", choices=("a", "b"))
    with pytest.raises(ParameterError, match="must be one of a, b; got 'c'"):
        mode.check("n", "mode", "c")
