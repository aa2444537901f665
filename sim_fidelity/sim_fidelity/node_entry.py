"""The node executables' entry points (``console_scripts``): each catches SIGINT and SIGTERM on its
first line, then loads its node's module (rclpy, MuJoCo: about a second) and runs it, so that a
signal that arrives while the node is still loading stops it cleanly (exit 0, no stack trace).
The process ends as soon as the node's clean-up is done, without the interpreter's teardown:
that waits for every thread left (one rclpy left blocked kept a manager stopped during its
start alive for more than a minute after its last line, under load), and nothing of ours runs in
it (as ``sim_server``'s own ``main``)."""
from __future__ import annotations

import importlib
import os
from typing import NoReturn

from .shutdown import catch_early_signals, report_exit


def _run(module: str) -> NoReturn:
    catch_early_signals()
    code = importlib.import_module(module).main()
    report_exit()
    os._exit(code)


def sim_server() -> NoReturn:
    """``sim_server``: the embedded simulator (:mod:`.simulator.ros.server`)."""
    return _run("sim_fidelity.simulator.ros.server")


def fidelity_manager() -> NoReturn:
    """``fidelity_manager`` (:mod:`.fidelity_manager.node`)."""
    return _run("sim_fidelity.fidelity_manager.node")


def kernel_manager() -> NoReturn:
    """``kernel_manager`` (:mod:`.reality_gap.node`)."""
    return _run("sim_fidelity.reality_gap.node")


def unloading_controller() -> NoReturn:
    """``unloading_controller`` (:mod:`.truck.controller_node`)."""
    return _run("sim_fidelity.truck.controller_node")


def model_conductor() -> NoReturn:
    """``model_conductor``: an ensemble of models (:mod:`.model_conductor.ros.node`)."""
    return _run("sim_fidelity.model_conductor.ros.node")


def model_node() -> NoReturn:
    """``model_node``: one model of an ensemble in a node of its own
    (:mod:`.model_conductor.ros.model_node`)."""
    return _run("sim_fidelity.model_conductor.ros.model_node")
