"""Which interface a simulator speaks: sim_server's choice of services (``interfaces``) and a
client's choice of Simulator flavour (``backend``: given, or found from the services on the graph).

``backend`` values: ``gz`` (gz-sim with ``ros_gz_sim``: ``simulation_interfaces``), ``embedded``
(our ``sim_server``: ``simulation_interfaces`` and the lever services), ``classic`` (Gazebo 11
with ``gazebo_ros``: ``gazebo_msgs``), ``auto`` (whichever answers; ``simulation_interfaces``
first where both do). Imports no interface package until one is needed.
"""
from __future__ import annotations

import os
import time
from typing import Any

from ...errors import SimulatorError, SimulatorTimeoutError
from .names import SHARED_WITH_SIMULATION_INTERFACES, checked_namespace, qualified

INTERFACES = ("simulation_interfaces", "gazebo_msgs", "both")
BACKENDS = ("auto", "gz", "embedded", "classic")
SIMULATION_INTERFACES_PROBE = "/get_entities"  # served by ros_gz_sim and sim_server
CLASSIC_PROBE = "get_model_list"  # served by gazebo_ros_factory


def interface_services(interfaces: str, standard: dict[str, tuple[type, Any]],
                       gazebo_namespace: str, *classic_parts: Any) -> dict[str, tuple[type, Any]]:
    """The services of sim_server's ``interfaces`` parameter: ``simulation_interfaces``
    (``standard``), ``gazebo_msgs`` (a ``ClassicServices`` made of ``classic_parts``) or ``both``,
    which needs a ``gazebo_namespace``: five names belong to both interfaces, with other types."""
    if interfaces not in INTERFACES:
        raise SimulatorError(f"parameter 'interfaces' is '{interfaces}': use one of "
                             f"{', '.join(INTERFACES)}")
    if interfaces == "simulation_interfaces":
        return dict(standard)
    checked_namespace(gazebo_namespace)
    if interfaces == "both" and not gazebo_namespace.strip("/"):
        raise SimulatorError("interfaces:=both needs gazebo_namespace (e.g. /gazebo): "
                             f"{', '.join(SHARED_WITH_SIMULATION_INTERFACES)} are names of both "
                             "interfaces, with other types")
    from .services import ClassicServices
    served = ClassicServices(*classic_parts, namespace=gazebo_namespace).services()
    return {**standard, **served} if interfaces == "both" else served


def detect_interface(*, timeout: float = 10.0, domain_id: int | None = None,
                     gazebo_namespace: str = "") -> str:
    """``simulation_interfaces`` or ``gazebo_msgs``: which one the graph serves, looked up by a
    short-lived node; SimulatorTimeoutError when neither appears within ``timeout``.

    The node joins the process's default context (initialised here if need be, as the clients
    do), whose participant may have discovered the simulator already; only another
    ``domain_id`` gets a context of its own: a second context is a second DDS participant for
    every other process to discover, and to see leave."""
    import rclpy
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = None
    if domain_id is not None:
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain_id)
    elif not rclpy.ok():
        rclpy.init()
    classic = qualified(CLASSIC_PROBE, gazebo_namespace)
    node = rclpy.create_node(f"sim_backend_probe_{os.getpid()}", context=context,
                             use_global_arguments=False)
    try:
        end = time.monotonic() + timeout
        while True:
            names = {name for name, _ in node.get_service_names_and_types()}
            if SIMULATION_INTERFACES_PROBE in names:
                return "simulation_interfaces"
            if classic in names:
                return "gazebo_msgs"
            if time.monotonic() > end:
                raise SimulatorTimeoutError(
                    f"no simulator found after {timeout:g} s: neither {SIMULATION_INTERFACES_PROBE}"
                    f" (gz-sim, sim_server) nor {classic} (Gazebo classic) is served")
            time.sleep(0.05)
    finally:
        node.destroy_node()
        if context is not None:
            context.try_shutdown()


def connect(backend: str = "auto", *, gazebo_namespace: str = "", **options: Any):
    """A Simulator client of ``backend`` (see the module's doc); ``options`` go to its
    constructor (``timeout``, ``world_file``, ``domain_id``, ``node_name``, ...)."""
    if backend not in BACKENDS:
        raise SimulatorError(f"backend '{backend}' is none of {', '.join(BACKENDS)}")
    checked_namespace(gazebo_namespace)
    if backend == "auto":
        found = detect_interface(timeout=options.get("timeout", 10.0),
                                 domain_id=options.get("domain_id"),
                                 gazebo_namespace=gazebo_namespace)
        backend = "classic" if found == "gazebo_msgs" else "embedded"
    if backend == "classic":
        from .client import ClassicRosSimulator
        return ClassicRosSimulator(gazebo_namespace=gazebo_namespace, **options)
    from ..client import RosSimulator
    return RosSimulator(**options)
