"""launch/conductor.launch.py's ensemble: the example config, and the model nodes planned from an
ensemble YAML (checked like the launch files' static Nodes: console scripts, declared
parameters)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from ros_processes import console_scripts

from sim_fidelity.model_conductor.config import load_config
from sim_fidelity.model_conductor.errors import ConductorConfigError
from sim_fidelity.model_conductor.ros.launch_plan import NodePlan, plan
from sim_fidelity.model_conductor.ros.model_node import load_model_class
from sim_fidelity.model_conductor.ros.remote_model import RemoteModel
from sim_fidelity.model_conductor.ros.simulator_model import RosSimulatorModel
from sim_fidelity.node_parameters import BY_EXECUTABLE

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "config" / "conductor" / "ros_handover.yaml"


def test_the_example_ensemble_plans_its_hand_node_with_declared_parameters():
    config = load_config(EXAMPLE)
    kinds = {spec.name: spec.cls for spec in config.models}
    assert kinds["world"] is RosSimulatorModel and kinds["hand"] is RemoteModel
    world = next(s for s in config.models if s.name == "world").parameters["world_file"]
    assert (EXAMPLE.parent / world).resolve() == REPO / "worlds" / "drop_test.sdf"
    nodes = plan(EXAMPLE)
    assert nodes == [NodePlan("model_node", "hand", "/", {"model": "carrier", "name": "hand"})]
    scripts = console_scripts()
    for node in nodes:
        assert node.executable in scripts
        table = BY_EXECUTABLE[node.executable]
        for name, value in node.parameters.items():
            table[name].check(node.executable, name, value)
        load_model_class(node.parameters["model"])


def test_remote_models_without_a_class_are_not_planned_and_bad_node_names_fail(tmp_path):
    path = tmp_path / "ensemble.yaml"
    path.write_text(textwrap.dedent("""
        models:
          main: {type: integrator, main: true}
          elsewhere: {type: remote, parameters: {node: /lab/other}}
          here: {type: remote, parameters: {node: /lab/probe, model: integrator}}
    """))
    assert plan(path) == [NodePlan("model_node", "probe", "/lab",
                                   {"model": "integrator", "name": "here"})]
    path.write_text(path.read_text().replace("/lab/probe", "/lab/"))
    with pytest.raises(ConductorConfigError, match=r"models.here.parameters.node: '/lab/' is no "
                                                   "node name"):
        plan(path)
