"""The simulator package's import structure: no module cycle, every module imports on its own,
and the core (everything outside ``simulator/ros/``) loads no rclpy and no message package."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import sim_fidelity.simulator as simulator_package

ROOT = Path(simulator_package.__file__).parent
PACKAGE = "sim_fidelity.simulator"
ROS_PACKAGES = ("rclpy", "rosidl_runtime_py", "simulation_interfaces", "sim_fidelity_interfaces")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """Modules of this package that ``name`` imports (any import statement, TYPE_CHECKING too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{base}.{node.module}" if node.level and node.module else (
                base if node.level else node.module)
            for alias in node.names:  # "from . import poses" names a module
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as a list of modules, or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for start in graph:
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_the_graph_parser_sees_imports():
    assert f"{PACKAGE}.hooks" in imported(f"{PACKAGE}.engine", MODULES[f"{PACKAGE}.engine"])
    assert f"{PACKAGE}.poses" in imported(f"{PACKAGE}.engine", MODULES[f"{PACKAGE}.engine"])
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_simulator_modules_form_no_import_cycle():
    graph = {name: imported(name, path) for name, path in MODULES.items()}
    assert find_cycle(graph) == []


def test_each_module_imports_alone_and_the_core_without_ros():
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    procs = {}
    for name in MODULES:
        core = ".ros" not in name
        check = ("; ros = sorted(m for m in sys.modules if m.split('.')[0] in "
                 f"{ROS_PACKAGES!r}); assert not ros, ros") if core else ""
        procs[name] = subprocess.Popen([sys.executable, "-c", f"import sys, {name}{check}"],
                                       env=env, stderr=subprocess.PIPE, text=True)
    failed = {n: p.communicate(timeout=120)[1].strip().splitlines()[-1:] for n, p in procs.items()}
    assert {n: e for n, e in failed.items() if procs[n].returncode} == {}
