"""Honest dependencies: what the code imports is what setup.py and package.xml declare.

Static: the imports are read from the sources' syntax trees (those inside functions too), the
declarations from setup.py's syntax tree and package.xml.
"""
from __future__ import annotations

import ast
import re
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import packages_distributions
from pathlib import Path

from ament_index_python.packages import get_packages_with_prefixes

PKG = Path(__file__).resolve().parents[1]
# Import name -> rosdep key (rosdistro's rosdep/python.yaml) of every third-party Python module
# the package or its tests may use. A new dependency gets a row here and a line in package.xml.
ROSDEP_KEYS = {
    "numpy": "python3-numpy",
    "yaml": "python3-yaml",
    "matplotlib": "python3-matplotlib",
    "tqdm": "python3-tqdm",
    "mujoco": "python3-mujoco-pip",
    "rosbags": "python3-rosbags-pip",
    "pymap3d": "python3-pymap3d",
    "PIL": "python3-pil",
    "imageio": "python3-imageio",
    "sklearn": "python3-sklearn",
    "numba": "python3-numba",
    "pytest": "python3-pytest",
    "hypothesis": "python3-hypothesis",
    "catkin_pkg": "python3-catkin-pkg",
}
# Optional modules: imported only inside the feature that needs them (the package imports without
# them), declared in setup.py's extras_require under the extra named here; no rosdep key exists
# for them (ray: pip only; tools/bootstrap.sh installs it).
OPTIONAL = {"ray": "sweep"}
# ROS packages imported by the launch files that cannot be installed here (no Kilted wheels).
ROS_NOT_INSTALLABLE_HERE = {"launch", "launch_ros"}
# `type: pkg/msg/Name` in the shipped configuration (message classes loaded by name).
CONFIG_TYPE = re.compile(r"\btype:\s*([a-z][a-z0-9_]*)/msg/[A-Z]\w*")


def imports(files: list[Path]) -> set[str]:
    """Top-level names of the absolute imports in ``files``."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def third_party(names: set[str], local: set[str]) -> set[str]:
    return names - set(sys.stdlib_module_names) - local - {"sim_fidelity"}


def install_requires() -> set[str]:
    """Distribution names (lower case, no version) of setup.py's ``install_requires``."""
    return {re.split(r"[<>=!~ ;\[]", req)[0].lower() for req in setup_keyword("install_requires")}


def package_xml(tag: str) -> set[str]:
    root = ET.parse(PKG / "package.xml").getroot()
    return {e.text.strip() for e in root.iter(tag)}


def ros_packages() -> set[str]:
    return set(get_packages_with_prefixes()) | ROS_NOT_INSTALLABLE_HERE


def distributions_of(module: str) -> set[str]:
    """Names (lower case) of the installed distributions that provide ``module``."""
    dists = packages_distributions().get(module)
    assert dists, f"{module} is imported but no installed distribution provides it"
    return {d.lower() for d in dists}


def setup_keyword(name: str):
    """The value of setup.py's keyword argument ``name``, with module-level constants resolved."""
    tree = ast.parse((PKG / "setup.py").read_text())
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) for t in n.targets}

    class Resolve(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.Constant(constants[node.id]) if node.id in constants else node

    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == name:
            return ast.literal_eval(Resolve().visit(node.value))
    raise AssertionError(f"setup.py passes no {name}")


CODE = sorted((PKG / "sim_fidelity").rglob("*.py")) + sorted((PKG / "launch").glob("*.py"))
TESTS = sorted((PKG / "test").rglob("*.py"))
TEST_LOCAL = {p.stem for p in TESTS}


def test_every_imported_module_is_declared():
    ros = ros_packages()
    exec_depends = package_xml("exec_depend") | package_xml("depend")
    requires = install_requires()
    config_types = {m for f in (PKG / "config").rglob("*.yaml")
                    for m in CONFIG_TYPE.findall(f.read_text())}
    used = third_party(imports(CODE), set()) | config_types
    problems = []
    extras = setup_keyword("extras_require")
    for module, extra in OPTIONAL.items():
        if not distributions_of(module) & {r.lower() for r in extras.get(extra, ())}:
            problems.append(f"{module}: not in setup.py's extras_require['{extra}']")
    for module in sorted(used - set(OPTIONAL)):
        if module in ros:
            if module not in exec_depends:
                problems.append(f"ROS package {module}: no <exec_depend> in package.xml")
            continue
        key = ROSDEP_KEYS.get(module)
        if key is None:
            problems.append(f"{module}: not in ROSDEP_KEYS of {Path(__file__).name}")
        elif key not in exec_depends:
            problems.append(f"{module}: no <exec_depend>{key}</exec_depend> in package.xml")
        if not distributions_of(module) & requires:
            problems.append(f"{module}: none of {sorted(distributions_of(module))} is in "
                            "setup.py's install_requires")
    assert not problems, "\n".join(problems)


def test_every_declared_dependency_is_used():
    """A declaration nothing imports is as wrong as an import nothing declares."""
    used = third_party(imports(CODE), set()) | {
        m for f in (PKG / "config").rglob("*.yaml") for m in CONFIG_TYPE.findall(f.read_text())}
    declared_keys = {key: module for module, key in ROSDEP_KEYS.items()}
    unused = []
    for dep in sorted(package_xml("exec_depend")):
        module = declared_keys.get(dep, dep)
        if module not in used:
            unused.append(f"package.xml <exec_depend>{dep}</exec_depend>")
    provided = set().union(*(distributions_of(m) for m in used if m in ROSDEP_KEYS))
    unused += [f"setup.py install_requires {r}" for r in sorted(install_requires() - provided)]
    assert not unused, "declared but never imported: " + ", ".join(unused)


def test_every_test_import_is_a_dependency():
    ros = ros_packages()
    declared = package_xml("exec_depend") | package_xml("test_depend")
    missing = []
    for module in sorted(third_party(imports(TESTS), TEST_LOCAL) - set(OPTIONAL)):
        key = module if module in ros else ROSDEP_KEYS.get(module)
        if key is None or key not in declared:
            missing.append(module)
    assert not missing, f"tests import {missing}: declare them as <test_depend> in package.xml"


def test_shipped_package_data_exists():
    for package, patterns in setup_keyword("package_data").items():
        for pattern in patterns:
            assert list((PKG / package.replace(".", "/")).glob(pattern)), \
                f"setup.py ships {package}/{pattern}, which does not exist"
