"""The ``gazebo_msgs`` services and topics of Gazebo classic on ROS 2 Humble, in one table.

Checked against ``gazebo_ros`` 3.7.0 (the Humble release): each plugin creates its services on a
node whose namespace is ``/`` unless the world file gives the plugin a ``<ros><namespace>``
(``gazebo_ros_state`` and ``gazebo_ros_properties`` are world plugins, often namespaced ``/gazebo``
by users), or the ``gzserver`` command line remaps ``__ns`` (``gazebo_ros_init`` and
``gazebo_ros_factory`` are system plugins). Names here are relative; :func:`qualified` puts them
under one namespace. Humble serves no physics-properties service (ROS 1's ``gazebo_ros_api_plugin``
did, as ``/gazebo/get_physics_properties``); sim_server serves ``get_physics_properties`` as an
extension, and the client uses it only where it is there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import SimulatorError


@dataclass(frozen=True)
class Endpoint:
    name: str  # relative to the plugin's namespace
    type: str  # package/kind/Name
    plugin: str  # the gazebo_ros plugin that advertises it ("" = not advertised by Humble)


SERVICES: dict[str, Endpoint] = {e.name: e for e in (
    Endpoint("get_model_list", "gazebo_msgs/srv/GetModelList", "gazebo_ros_factory"),
    Endpoint("spawn_entity", "gazebo_msgs/srv/SpawnEntity", "gazebo_ros_factory"),
    Endpoint("delete_entity", "gazebo_msgs/srv/DeleteEntity", "gazebo_ros_factory"),
    Endpoint("get_entity_state", "gazebo_msgs/srv/GetEntityState", "gazebo_ros_state"),
    Endpoint("set_entity_state", "gazebo_msgs/srv/SetEntityState", "gazebo_ros_state"),
    Endpoint("get_model_properties", "gazebo_msgs/srv/GetModelProperties",
             "gazebo_ros_properties"),
    Endpoint("get_link_properties", "gazebo_msgs/srv/GetLinkProperties", "gazebo_ros_properties"),
    Endpoint("set_link_properties", "gazebo_msgs/srv/SetLinkProperties", "gazebo_ros_properties"),
    Endpoint("pause_physics", "std_srvs/srv/Empty", "gazebo_ros_init"),
    Endpoint("unpause_physics", "std_srvs/srv/Empty", "gazebo_ros_init"),
    Endpoint("reset_simulation", "std_srvs/srv/Empty", "gazebo_ros_init"),
    Endpoint("reset_world", "std_srvs/srv/Empty", "gazebo_ros_init"),
    Endpoint("get_physics_properties", "gazebo_msgs/srv/GetPhysicsProperties", ""),
)}

TOPICS: dict[str, Endpoint] = {e.name: e for e in (
    Endpoint("model_states", "gazebo_msgs/msg/ModelStates", "gazebo_ros_state"),
    Endpoint("link_states", "gazebo_msgs/msg/LinkStates", "gazebo_ros_state"),
)}

STATE_RATE_HZ = 100.0  # gazebo_ros_state's default <update_rate>, in sim time
# Names that simulation_interfaces (gz-sim's ros_gz_sim, sim_server) uses for other types: the two
# interfaces cannot share one namespace.
SHARED_WITH_SIMULATION_INTERFACES = ("spawn_entity", "delete_entity", "get_entity_state",
                                     "set_entity_state", "reset_simulation")


NAMESPACE = re.compile(r"/?([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?/?")


def checked_namespace(namespace: str, where: str = "gazebo_namespace") -> str:
    """``namespace`` when it is a ROS namespace (``""``, ``/``, ``/gazebo``, ``robot/gazebo``:
    tokens of letters, digits and underscores, none starting with a digit), else SimulatorError
    naming ``where`` and the value."""
    if not NAMESPACE.fullmatch(namespace):
        raise SimulatorError(f"{where} '{namespace}' is not a ROS namespace: '/'-separated "
                             "tokens of letters, digits and underscores, none starting with a "
                             "digit (e.g. /gazebo)")
    return namespace


def qualified(name: str, namespace: str = "") -> str:
    """``/<namespace>/<name>`` (``/<name>`` for the root namespace)."""
    namespace = namespace.strip("/")
    return f"/{namespace}/{name}" if namespace else f"/{name}"


def interface_type(path: str) -> type:
    """``"gazebo_msgs/srv/GetModelList"`` -> the class."""
    import importlib
    package, kind, name = path.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)
