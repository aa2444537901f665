"""The node executables' entry points (``console_scripts``): each catches SIGINT and SIGTERM on its
first line, then loads its node's module (rclpy, MuJoCo: about a second) and runs it, so that a
signal that arrives while the node is still loading stops it cleanly (exit 0, no stack trace)."""
from __future__ import annotations

import importlib

from .shutdown import catch_early_signals, report_exit


def _run(module: str) -> int:
    catch_early_signals()
    code = importlib.import_module(module).main()
    report_exit()
    return code


def sim_server() -> int:
    """``sim_server``: the embedded simulator (:mod:`.simulator.ros.server`)."""
    return _run("sim_fidelity.simulator.ros.server")


def fidelity_manager() -> int:
    """``fidelity_manager`` (:mod:`.fidelity_manager.node`)."""
    return _run("sim_fidelity.fidelity_manager.node")


def kernel_manager() -> int:
    """``kernel_manager`` (:mod:`.reality_gap.node`)."""
    return _run("sim_fidelity.reality_gap.node")


def unloading_controller() -> int:
    """``unloading_controller`` (:mod:`.truck.controller_node`)."""
    return _run("sim_fidelity.truck.controller_node")


def model_conductor() -> int:
    """``model_conductor``: an ensemble of models (:mod:`.model_conductor.ros.node`)."""
    return _run("sim_fidelity.model_conductor.ros.node")


def model_node() -> int:
    """``model_node``: one model of an ensemble in a node of its own
    (:mod:`.model_conductor.ros.model_node`)."""
    return _run("sim_fidelity.model_conductor.ros.model_node")
