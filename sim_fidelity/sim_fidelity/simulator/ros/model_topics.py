"""``sim_server``'s topics of the world's models: joint commands and states, scripts' endpoints.

Names follow Gazebo's, so a ``ros_gz_bridge`` user sees the same ones:

* ``/model/<model>/joint/<joint>/cmd_pos`` (std_msgs/Float64) for every ``JointPositionController``
  plugin. Gazebo's own is ``.../<joint>/0/cmd_pos``, which ROS 2 rejects (a name token may not
  start with a digit; gz-sim issue 447), so the index token is left out;
* ``/world/<world>/model/<model>/joint_state`` (sensor_msgs/JointState) for every model with such a
  controller: its one-degree-of-freedom joints named inside the model, position and velocity,
  stamped with sim time;
* for every Ackermann steering plugin (``actuators.AckermannDrive``):
  ``/model/<model>/cmd_ackermann`` (ackermann_msgs/AckermannDriveStamped: speed and steering
  angle of the bicycle model), the plugin's ``<topic>`` (geometry_msgs/Twist, Gazebo's
  ``/model/<model>/cmd_vel`` by default: linear x and yaw rate) and its ``<odom_topic>``
  (nav_msgs/Odometry of the model's true state, ``<frame_id>`` to ``<child_frame_id>``, twist in
  the child frame, at the state rate);
* every ``navsat`` and ``imu`` sensor's ``<topic>`` (sensor_msgs/NavSatFix, sensor_msgs/Imu):
  each sample :class:`~..vehicle_sensors.VehicleSensors` takes at the sensor's rate in sim time,
  stamped with its own time, frame ``<gz_frame_id>`` (else the link's name), covariances from
  the SDF noise;
* the :class:`~.scripts.Subscription` and :class:`~.scripts.Publication` each script declares.

``<model>`` is the top-level model; a nested joint's ``::`` becomes ``/`` in topic names.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseWithCovariance, TwistWithCovariance
from rclpy.exceptions import InvalidTopicNameException
from rclpy.node import Node
from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus
from std_msgs.msg import Header

from .. import poses
from ..actuators import AckermannDrive, ackermann_drives
from ..engine import MujocoEngine
from ..scripts import Publication, Subscription, top_model
from ..vehicle_sensors import GpsSample, ImuSample, SensorSpec, VehicleSensors
from .convert import pose_msg, time_msg, twist_msg


@dataclass(frozen=True)
class SensorTopic:
    """A sampled sensor's topic: one message per sample :class:`VehicleSensors` took."""

    topic: str
    type: str
    sensor: str  # scoped sensor name


Endpoint = Subscription | Publication | SensorTopic


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
        self.sensors = VehicleSensors(engine)
        self.sensors.attach()
        self.sync()

    def sync(self) -> None:
        """Create the topics of new models and scripts; destroy those of deleted ones."""
        if [s.name for s in self.sensors.specs] != [
                n for n, r in self.engine.world.sensors.items() if r.type in ("navsat", "imu")]:
            self.sensors.detach()
            self.sensors = VehicleSensors(self.engine)
            self.sensors.attach()
        wanted = self._endpoints()
        for key in [k for k in self._handles if k not in wanted]:
            handle, endpoint, _ = self._handles.pop(key)
            if isinstance(endpoint, Publication | SensorTopic):
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
        sensor_topics = {e.sensor: h for h, e, _ in self._handles.values()
                         if isinstance(e, SensorTopic)}
        for spec, sample in self.sensors.take():
            if spec.name in sensor_topics and self.engine.sensor_enabled(spec.name):
                out.append((sensor_topics[spec.name], sensor_message(spec, sample)))
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
            if isinstance(endpoint, Publication | SensorTopic):
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
            if c.owner:  # a drive's actuator: commanded through its Ackermann topics
                controlled.add(c.joint.split("::", 1)[0])
            elif c.mode == "position" and "::" in c.joint:
                model, joint = c.joint.split("::", 1)
                controlled.add(model)
                topic = f"/model/{model}/joint/{joint.replace('::', '/')}/cmd_pos"
                out[(plugin, topic)] = Subscription(topic, "std_msgs/msg/Float64",
                                                    self._commander(plugin))
        for model in sorted(controlled):
            topic = f"/world/{self.engine.world.name}/model/{model}/joint_state"
            out[(model, topic)] = Publication(topic, "sensor_msgs/msg/JointState",
                                              self._joint_reader(model))
        for plugin, drive in ackermann_drives(self.engine.world).items():
            topic = f"/model/{top_model(drive.model)}/cmd_ackermann"
            out[(plugin, topic)] = Subscription(
                topic, "ackermann_msgs/msg/AckermannDriveStamped",
                lambda engine, msg, d=drive: engine.set_joint_commands(
                    *d.targets(msg.drive.speed, msg.drive.steering_angle)))
            out[(plugin, drive.twist_topic)] = Subscription(
                drive.twist_topic, "geometry_msgs/msg/Twist",
                lambda engine, msg, d=drive: engine.set_joint_commands(*d.targets(
                    msg.linear.x, d.steering_for_twist(msg.linear.x, msg.angular.z))))
            out[(plugin, drive.odom_topic)] = Publication(
                drive.odom_topic, "nav_msgs/msg/Odometry", _odometry_reader(drive))
        for spec in self.sensors.specs:
            kind = "NavSatFix" if spec.kind == "navsat" else "Imu"
            out[(spec.name, spec.topic)] = SensorTopic(spec.topic, f"sensor_msgs/msg/{kind}",
                                                       spec.name)
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


def _odometry_reader(drive: AckermannDrive):
    """Odometry fields of the drive's model: true pose, twist in the child (body) frame."""
    model = top_model(drive.model)

    def fields(engine: MujocoEngine) -> dict:
        pose, twist = engine.get_states([model])
        q_inv = poses.quat_conj(pose[:, 3:])
        body = np.concatenate([poses.quat_rotate(q_inv, twist[:, :3]),
                               poses.quat_rotate(q_inv, twist[:, 3:])], axis=1)
        return {"header": Header(frame_id=drive.odom_frame),
                "child_frame_id": drive.base_frame,
                "pose": PoseWithCovariance(pose=pose_msg(pose[0])),
                "twist": TwistWithCovariance(twist=twist_msg(body[0]))}
    return fields


def sensor_message(spec: SensorSpec, sample: GpsSample | ImuSample) -> NavSatFix | Imu:
    """The ROS message of one sample (REP 103/145: orientation in ENU, vectors in the sensor
    frame, diagonal covariances from the SDF noise)."""
    header = Header(stamp=time_msg(sample.time), frame_id=spec.frame_id)
    if isinstance(sample, GpsSample):
        variance = sample.covariance
        return NavSatFix(
            header=header,
            status=NavSatStatus(status=NavSatStatus.STATUS_FIX, service=NavSatStatus.SERVICE_GPS),
            latitude=sample.latitude, longitude=sample.longitude, altitude=sample.altitude,
            position_covariance=np.diag(variance).reshape(-1).tolist(),
            position_covariance_type=NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN)
    msg = Imu(header=header)
    x, y, z, w = (float(v) for v in sample.orientation)
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = x, y, z, w
    (msg.angular_velocity.x, msg.angular_velocity.y,
     msg.angular_velocity.z) = (float(v) for v in sample.angular_velocity)
    (msg.linear_acceleration.x, msg.linear_acceleration.y,
     msg.linear_acceleration.z) = (float(v) for v in sample.linear_acceleration)
    msg.orientation_covariance = np.zeros(9).tolist()  # no orientation noise: all zeros
    msg.angular_velocity_covariance = np.diag(sample.angular_velocity_variance).reshape(-1).tolist()
    msg.linear_acceleration_covariance = np.diag(
        sample.linear_acceleration_variance).reshape(-1).tolist()
    return msg
