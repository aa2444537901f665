"""The ``model_node`` processes an ensemble needs, read from its YAML (for
``launch/conductor.launch.py``).

Every model of type ``remote`` whose parameters name ``model`` (the class its node hosts, as the
config names model types) gets a ``model_node`` named after its ``node`` parameter (default: the
model's name). A remote model without ``model`` is one somebody else starts; it is not planned.
:func:`plan` needs neither ``launch`` nor rclpy; :func:`model_node_actions` turns the plan into
``launch_ros`` Nodes at launch time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import load_config
from ..errors import ConductorConfigError
from .remote_model import RemoteModel


@dataclass(frozen=True)
class NodePlan:
    """One node to start: the console script, the node's name and namespace, its parameters."""

    executable: str
    name: str
    namespace: str
    parameters: dict


def plan(config: str | Path) -> list[NodePlan]:
    """The model nodes of the ensemble ``config``."""
    loaded = load_config(config)
    nodes = []
    for spec in loaded.models:
        if not issubclass(spec.cls, RemoteModel) or "model" not in spec.parameters:
            continue
        path = str(spec.parameters.get("node") or f"/{spec.name}")
        namespace, _, name = path.rpartition("/")
        if not name:
            raise ConductorConfigError(loaded.file, f"models.{spec.name}.parameters.node",
                                       f"'{path}' is no node name")
        nodes.append(NodePlan("model_node", name, namespace or "/",
                              {"model": str(spec.parameters["model"]), "name": spec.name}))
    return nodes


def model_node_actions(context) -> list:
    """launch ``OpaqueFunction``: a ``launch_ros`` Node per planned model node of the launch
    argument ``config``."""
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    config = LaunchConfiguration("config").perform(context)
    return [Node(package="sim_fidelity", executable=p.executable, name=p.name,
                 namespace=p.namespace, output="screen", parameters=[p.parameters])
            for p in plan(config)]
