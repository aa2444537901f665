"""The ROS 2 user's path: this repository in a colcon workspace, built, sourced and run.

A workspace ``ws/src/<repo>`` (a copy of the repository's files as git lists them) is built with
the command the README gives, by the real colcon, with this venv as the underlay: it stands in
for a ROS 2 install that already has ``simulation_interfaces`` and ``ackermann_msgs`` (the
bootstrap built them from ``fallback_interfaces/``). Then, with the install's ``local_setup.sh``
sourced, the install is used: the ament index, ``ros2 run``'s search path, a node started from it.
The rosdep view is ``catkin_pkg``'s crawl, which ``rosdep install --from-paths`` uses.
"""
from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from catkin_pkg.packages import find_packages
from ros_processes import Probe, next_domain, stop

PKG = Path(__file__).resolve().parents[1]
REPO = PKG.parent
VENV = Path(sys.prefix)
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
OURS = {"sim_fidelity", "sim_fidelity_interfaces"}
DATA = ("launch", "config", "worlds", "models")
# What `rosdep install --from-paths src --ignore-src` must resolve for our packages: ROS 2 Kilted
# packages (rosdistro kilted/distribution.yaml) and rosdep keys (rosdep/base.yaml, python.yaml),
# each checked in those lists on 2026-11-24. A new dependency is checked there and added here.
KILTED_PACKAGES = {
    "ackermann_msgs", "ament_cmake", "ament_index_python", "builtin_interfaces",
    "diagnostic_msgs", "geometry_msgs", "launch", "launch_ros", "nav_msgs", "rcl_interfaces",
    "rclpy", "rosgraph_msgs", "rosidl_default_generators", "rosidl_default_runtime",
    "sensor_msgs", "simulation_interfaces", "std_msgs", "std_srvs", "tf2_msgs",
    "visualization_msgs",
}
ROSDEP_KEYS = {
    "python3-catkin-pkg", "python3-colcon-common-extensions", "python3-hypothesis",
    "python3-imageio", "python3-matplotlib", "python3-pil",
    "python3-mujoco-pip", "python3-numba", "python3-numpy", "python3-pymap3d", "python3-pytest",
    "python3-rosbags-pip", "python3-sklearn",
    "python3-tqdm", "python3-yaml",
}


def readme_command(program: str) -> list[str]:
    """The README's ``program ...`` line in the section "With Gazebo and ROS 2"."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## With Gazebo and ROS 2"):]
    section = section[:section.index("\n## ", 5)]
    lines = [ln.split("#")[0].strip() for ln in section.splitlines()]
    found = [ln for ln in lines if re.match(rf"{re.escape(program)}(\s|$)", ln)]
    assert found, f"README's 'With Gazebo and ROS 2' gives no '{program}' command"
    return shlex.split(found[0])


def console_scripts(pkg: Path) -> set[str]:
    """The names of the ``console_scripts`` entry points in ``pkg``'s setup.py."""
    tree = ast.parse((pkg / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    return {ast.literal_eval(e).split("=")[0].strip() for e in value.elts}
    raise AssertionError("setup.py declares no console_scripts")


def launch_defaults(pkg: Path) -> dict[str, list[str]]:
    """Per launch file of ``pkg``, the glob patterns of the share files it joins onto the share
    directory (an f-string part becomes ``*``)."""
    out = {}
    for launch in sorted((pkg / "launch").glob("*.launch.py")):
        patterns = []
        for call in ast.walk(ast.parse(launch.read_text())):
            if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "join"):
                continue
            parts = []
            for arg in call.args[1:]:
                if isinstance(arg, ast.Constant):
                    parts.append(str(arg.value))
                elif isinstance(arg, ast.JoinedStr):
                    parts.append("".join(v.value if isinstance(v, ast.Constant) else "*"
                                         for v in arg.values))
            if parts and parts[0] in DATA:
                patterns.append("/".join(parts))
        out[launch.name] = patterns
    return out


def underlay_env() -> dict[str, str]:
    """The environment of a shell that sourced the underlay (here: the venv's prefix)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("COLCON") and k not in ("PYTHONPATH", "AMENT_PREFIX_PATH",
                                                       "CMAKE_PREFIX_PATH")}
    env.update(PATH=f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               VIRTUAL_ENV=str(VENV), AMENT_PREFIX_PATH=str(VENV), CMAKE_PREFIX_PATH=str(VENV))
    return env


def sourced_env(install: Path, base: dict[str, str]) -> dict[str, str]:
    """``base`` after ``. install/local_setup.sh``."""
    out = subprocess.run(["sh", "-c", '. "$1/local_setup.sh" && env -0', "sh", str(install)],
                         env=base, capture_output=True, check=True)
    return dict(item.split("=", 1) for item in out.stdout.decode().split("\0") if "=" in item)


def copy_repository(dest: Path) -> None:
    """The repository's files as git lists them (tracked and new, not ignored), as a clone has."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the working tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> dict:
    """``ws/src/<repo>`` built with the README's colcon command; its install and environments."""
    ws = tmp_path_factory.mktemp("ws")
    copy_repository(ws / "src" / REPO.name)
    command = readme_command("colcon")
    assert command[:2] == ["colcon", "build"], command
    env = underlay_env()
    assert shutil.which("colcon", path=env["PATH"]) == str(VENV / "bin" / "colcon")
    # colcon runs make with -j<cores> -l<cores> unless MAKEFLAGS sets -j: the load limit made the
    # compile serial whenever other tests ran beside it (a load above the core count)
    env["MAKEFLAGS"] = f"-j{os.cpu_count() or 1}"
    # ~90 s on two quiet cores; a machine with a load of 40 compiled for more than 900 s
    build = subprocess.run(command, cwd=ws, env=env, capture_output=True, text=True,
                           timeout=1800, check=False)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    install = ws / "install"
    return {"ws": ws, "install": install, "env": sourced_env(install, env),
            "pkg": ws / "src" / REPO.name / "sim_fidelity"}


def run_python(code: str, env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_colcon_builds_our_two_packages_and_no_fallback(workspace):
    built = {p.name for p in workspace["install"].iterdir()
             if (p / "share" / p.name / "package.xml").is_file()}
    assert built == OURS
    assert {p.name for p in (workspace["ws"] / "build").iterdir() if p.is_dir()} == OURS
    # the interfaces the install uses are the underlay's: nothing shadows them
    origin = run_python("import simulation_interfaces.srv as s, ackermann_msgs.msg as a; "
                        "print(s.__file__); print(a.__file__)", workspace["env"])
    assert all(line.startswith(str(VENV)) for line in origin.split()), origin


def test_ament_index_finds_the_share_directory_and_the_code(workspace):
    install = workspace["install"]
    out = run_python(
        "import sim_fidelity, sim_fidelity_interfaces.srv as s\n"
        "from ament_index_python.packages import get_package_share_directory as share\n"
        "print(share('sim_fidelity')); print(share('sim_fidelity_interfaces'))\n"
        "print(sim_fidelity.__file__); print(s.__file__)", workspace["env"]).split()
    assert out == [str(install / "sim_fidelity" / "share" / "sim_fidelity"),
                   str(install / "sim_fidelity_interfaces" / "share" / "sim_fidelity_interfaces"),
                   str(install / "sim_fidelity" / SITE / "sim_fidelity" / "__init__.py"),
                   str(install / "sim_fidelity_interfaces" / SITE / "sim_fidelity_interfaces"
                       / "srv" / "__init__.py")]
    share, pkg = Path(out[0]), workspace["pkg"]
    for folder in DATA:  # every data file of the source, installed with the same content
        source = sorted(p.relative_to(pkg) for p in (pkg / folder).rglob("*")
                        if p.is_file() and p.suffix != ".pyc")
        assert source, folder
        for rel in source:
            assert (share / rel).read_bytes() == (pkg / rel).read_bytes(), rel
    for launch, patterns in launch_defaults(pkg).items():
        for pattern in patterns:
            assert list(share.glob(pattern)), f"{launch} names {pattern}: not in {share}"
    assert (share / "package.xml").read_bytes() == (pkg / "package.xml").read_bytes()


def test_every_console_script_is_where_ros2_run_looks(workspace):
    lib = workspace["install"] / "sim_fidelity" / "lib" / "sim_fidelity"
    scripts = console_scripts(workspace["pkg"])
    assert {"sim_server", "fidelity_manager", "kernel_manager", "unloading_controller"} <= scripts
    for name in scripts:
        assert os.access(lib / name, os.X_OK), f"{lib / name} missing or not executable"


def test_a_node_from_the_install_serves_and_stops_on_sigint(workspace, tmp_path):
    from simulation_interfaces.srv import GetSimulationState

    install = workspace["install"]
    world = install / "sim_fidelity" / "share" / "sim_fidelity" / "worlds" / "drop_test.sdf"
    domain = next_domain()
    log = tmp_path / "sim_server.log"
    env = dict(workspace["env"], ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([str(install / "sim_fidelity" / "lib" / "sim_fidelity" / "sim_server"),
                             "--ros-args", "-p", f"world:={world}"],
                            env=env, cwd=tmp_path, stdout=log.open("w"), stderr=subprocess.STDOUT)
    probe = Probe(domain, "workspace_probe")
    try:
        state = probe.call(GetSimulationState, "/get_simulation_state",
                           GetSimulationState.Request(), timeout=30.0)
        assert state.result.result == state.result.RESULT_OK
    finally:
        probe.close()
        code = stop(proc, signal.SIGINT)
    text = log.read_text()
    assert code == 0, text
    assert str(world) in text and "Traceback" not in text, text


def test_colcon_and_rosdep_crawl_find_only_our_packages():
    """The repository as ``src/<repo>`` after ``make``: .venv/ and build/ (if there) and the
    fallback copies hold COLCON_IGNORE, so neither crawler sees a second or shadowing package."""
    crawled = {pkg.name: pkg for pkg in find_packages(str(REPO)).values()}
    assert set(crawled) == OURS
    listed = subprocess.run([str(VENV / "bin" / "colcon"), "--log-base", os.devnull, "list",
                             "--names-only", "--base-paths", str(REPO)],
                            capture_output=True, text=True, timeout=60, env=underlay_env(),
                            check=False)
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) == OURS
    for name, pkg in crawled.items():
        pkg.evaluate_conditions({"ROS_DISTRO": "kilted", "ROS_VERSION": "2"})
        deps = {d.name for d in pkg.build_depends + pkg.buildtool_depends + pkg.exec_depends
                + pkg.test_depends + pkg.build_export_depends + pkg.buildtool_export_depends
                if d.evaluated_condition is not False}  # what rosdep installs on Kilted
        assert deps, name
        unknown = deps - KILTED_PACKAGES - ROSDEP_KEYS - OURS
        assert not unknown, (f"{name}/package.xml: {sorted(unknown)} is neither a Kilted "
                             "package nor a rosdep key")


def test_the_bootstrap_install_has_the_same_layout():
    """The venv (tools/bootstrap.sh) is a colcon install of the same package: share, index,
    nodes, and ``get_package_share_directory`` without sourcing anything."""
    index = VENV / "share" / "ament_index" / "resource_index" / "packages"
    assert (index / "sim_fidelity").exists()
    for folder in DATA:
        assert (VENV / "share" / "sim_fidelity" / folder).is_dir()
    assert (VENV / "share" / "sim_fidelity" / "package.xml").is_file()
    for name in console_scripts(PKG):
        assert os.access(VENV / "lib" / "sim_fidelity" / name, os.X_OK), name
    assert os.access(VENV / "bin" / "simfid", os.X_OK)
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "PYTHONPATH")}
    out = run_python("from ament_index_python.packages import get_package_share_directory as s\n"
                     "import sim_fidelity\nprint(s('sim_fidelity'))", env)
    assert out.strip() == str(VENV / "share" / "sim_fidelity")

