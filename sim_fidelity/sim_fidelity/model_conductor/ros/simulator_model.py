"""A simulation of an ensemble that is a simulator in another process: ``sim_server`` (or Gazebo)
reached through :class:`~sim_fidelity.simulator.ros.client.RosSimulator`.

It is :class:`~sim_fidelity.model_conductor.simulation_model.SimulatorModel` (the same handling of
held and followed poses, levers and joint commands) with the simulator connected at
initialisation from the configuration's parameters: ``server`` (the node serving the fidelity
levers, default ``/sim_server``), ``timeout``, ``entities`` (a regex of the models it represents)
and ``world_file`` (the world's SDF, needed only by Gazebo's static-copy fallback). A simulator
over ROS takes no joint commands: the robot's joints in that process follow their own inputs.
At start the simulator is paused: from then on only the conductor's steps advance it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...simulator.protocol import SimState
from ..model import Requirement, RequirementKind
from ..simulation_model import SimulatorModel


class RosSimulatorModel(SimulatorModel):
    """A :class:`SimulatorModel` over a RosSimulator it connects to at initialisation."""

    def requires(self) -> Mapping[str, Requirement]:
        optional = {"server": RequirementKind.VALUE, "timeout": RequirementKind.VALUE,
                    "entities": RequirementKind.VALUE, "world_file": RequirementKind.PATH}
        return {key: Requirement(kind, key, optional=True) for key, kind in optional.items()}

    def initialise(self, parameters: Mapping[str, Any]) -> None:
        from ...simulator.ros.client import RosSimulator

        if self.sim is not None:  # a second initialisation: a fresh connection
            self.sim.close()
        world_file = parameters.get("world_file")
        self.sim = RosSimulator(server=parameters.get("server") or "/sim_server",
                                timeout=float(parameters.get("timeout") or 10.0),
                                world_file=str(world_file) if world_file else None,
                                node_name=f"{self.name}_sim_client")
        self.sim.wait_for_server()
        if parameters.get("entities"):
            self._pattern = str(parameters["entities"])
        self._index()

    def start(self) -> None:
        self.sim.set_sim_state(SimState.PAUSED)

    def stop(self) -> None:
        if self.sim is not None:
            self.sim.close()
