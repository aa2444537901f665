"""``sim_server``'s topics of the world's models: joint commands and states, scripts' endpoints.

Names follow Gazebo's, so a ``ros_gz_bridge`` user sees the same ones:

* ``/model/<model>/joint/<joint>/cmd_pos`` (std_msgs/Float64) for every ``JointPositionController``
  plugin. Gazebo's own is ``.../<joint>/0/cmd_pos``, which ROS 2 rejects (a name token may not
  start with a digit; gz-sim issue 447), so the index token is left out;
* ``/world/<world>/model/<model>/joint_state`` (sensor_msgs/JointState) for every model with such a
  controller: its one-degree-of-freedom joints named inside the model, position and velocity,
  stamped with sim time;
* the :class:`~.scripts.Subscription` and :class:`~.scripts.Publication` each script declares.

``<model>`` is the top-level model; a nested joint's ``::`` becomes ``/`` in topic names.
"""
from __future__ import annotations

import importlib
from typing import Any

from rclpy.exceptions import InvalidTopicNameException
from rclpy.node import Node

from ..engine import MujocoEngine
from ..scripts import Publication, Subscription, top_model
from .convert import time_msg

Endpoint = Subscription | Publication


def message_class(name: str) -> type:
    """``"std_msgs/msg/Bool"`` -> the message class."""
    package, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), cls)


class ModelTopics:
    """Creates, serves and removes the model topics of one ``sim_server`` node.

    Subscription callbacks hold ``lock``; call :meth:`messages` and :meth:`sync` (after every
    spawn or delete) under it.
    """

    def __init__(self, node: Node, engine: MujocoEngine, lock):
        self.node, self.engine, self.lock = node, engine, lock
        self._handles: dict[tuple, tuple[Any, Endpoint, type]] = {}  # (owner, topic) -> ...
        self.sync()

    def sync(self) -> None:
        """Create the topics of new models and scripts; destroy those of deleted ones."""
        wanted = self._endpoints()
        for key in [k for k in self._handles if k not in wanted]:
            handle, endpoint, _ = self._handles.pop(key)
            if isinstance(endpoint, Publication):
                self.node.destroy_publisher(handle)
            else:
                self.node.destroy_subscription(handle)
        for key, endpoint in wanted.items():
            if key not in self._handles:
                self._create(key, endpoint)

    def messages(self) -> list[tuple[Any, Any]]:
        """(publisher, message) of every publication, stamped with sim time (under the lock)."""
        stamp = time_msg(self.engine.time)
        out = []
        for handle, endpoint, cls in self._handles.values():
            if isinstance(endpoint, Publication):
                msg = cls(**endpoint.fields(self.engine))
                if hasattr(msg, "header"):
                    msg.header.stamp = stamp
                elif hasattr(msg, "stamp"):
                    msg.stamp = stamp
                out.append((handle, msg))
        return out

    def _create(self, key: tuple, endpoint: Endpoint) -> None:
        cls = message_class(endpoint.type)
        try:
            if isinstance(endpoint, Publication):
                handle = self.node.create_publisher(cls, endpoint.topic, 10)
            else:
                handle = self.node.create_subscription(
                    cls, endpoint.topic, lambda msg, e=endpoint: self._on_message(e, msg), 10)
        except InvalidTopicNameException as e:
            self.node.get_logger().warning(f"no topic for {key[0]}: {e}")
            return
        self._handles[key] = (handle, endpoint, cls)

    def _on_message(self, endpoint: Subscription, msg) -> None:
        with self.lock:
            try:
                endpoint.callback(self.engine, msg)
            except Exception as e:  # a bad command must not take the server down
                self.node.get_logger().error(f"{endpoint.topic}: {type(e).__name__}: {e}")

    def _endpoints(self) -> dict[tuple, Endpoint]:
        out: dict[tuple, Endpoint] = {}
        controlled = set()
        for plugin, c in self.engine.controllers.items():
            if c.mode == "position" and "::" in c.joint:
                model, joint = c.joint.split("::", 1)
                controlled.add(model)
                topic = f"/model/{model}/joint/{joint.replace('::', '/')}/cmd_pos"
                out[(plugin, topic)] = Subscription(topic, "std_msgs/msg/Float64",
                                                    self._commander(plugin))
        for model in sorted(controlled):
            topic = f"/world/{self.engine.world.name}/model/{model}/joint_state"
            out[(model, topic)] = Publication(topic, "sensor_msgs/msg/JointState",
                                              self._joint_reader(model))
        for script in self.engine.scripts:
            for endpoint in getattr(script, "ros_endpoints", list)():
                out[(script, endpoint.topic)] = endpoint
        return out

    @staticmethod
    def _commander(plugin: str):
        return lambda engine, msg: engine.set_joint_commands([plugin], [msg.data])

    def _joint_reader(self, model: str):
        joints = [n for n, r in self.engine.world.joints.items()
                  if top_model(r.model) == model and r.type not in ("fixed", "ball")
                  and len(r.mj_joints) == 1]
        names = [n.split("::", 1)[1] for n in joints]

        def fields(engine: MujocoEngine) -> dict:
            position, velocity = engine.joint_states(joints)
            return {"name": names, "position": position.tolist(), "velocity": velocity.tolist()}
        return fields
